"""The input pipeline: an input's numpy columns -> placeholders -> batches.

Built once per graph: placeholders for the raw columns a model reads, the
labels and the weights (batch size, epochs, shuffle buffer and seed), and two
sources of batches, one chosen at each call of ``train()``, ``evaluate()`` or
``predict()``, which loads its input's arrays (converted for the estimator once
per input, then cached), so every call starts from the beginning of the data,
as ``tf.estimator`` does. Text is held as int32 codes into its distinct values
(:class:`Coded`).

* **Held in the session** (data above ``SMALL_VALUES`` values, in input order
  or a new permutation each epoch, batches no larger than the data): the
  columns of each dtype are copied side by side into one row-major matrix
  variable (so numeric data is held twice while the input is in use: its
  arrays and the matrix). Each batch is a counter, the batch's row numbers
  and one gather per dtype, inside the session step itself (and inside a
  steps loop's ``tf.while_loop``): no ``tf.data`` iterator, no thread hand-off.
  The end of the input is an ``OutOfRangeError`` as from an iterator.
* **tf.data** (a bounded shuffle buffer smaller than the data, small data,
  and batches larger than the data): a re-initializable iterator. On real data
  row numbers gather ~16 MiB of rows from every column at once, which are cut
  into batches, prefetched and autotuned; small data is sliced row by row with
  none of these, whose set-up would cost more per call than the data (see
  :func:`batches`).

Both give the same batches: the same rows in the same order for a seed, every
epoch every row once, batches running on across epochs (only the last one
smaller).
"""

from __future__ import annotations

import os
import re
from typing import NamedTuple

import numpy as np

from pyhooks.estimators.feature_columns import FLOAT, INT, STR

__all__ = ["Coded", "InputPipeline", "aligned", "coded", "convert", "row_bytes", "signature_of"]

SMALL_VALUES = 4096  # rows x columns of data read by the small-data datasets
GATHER_BYTES = 16 * 2**20  # rows gathered from the columns at once, then cut into batches
_ALIGN = 64  # bytes: a fed numpy array aligned so becomes a tensor without a copy
TSTRING_BYTES = 32  # what TensorFlow holds per string of a batch (a short one)
_HELD = os.environ.get("PYHOOKS_BENCH_HELD", "1") == "1"  # bench/bench_floor.py only
_SEEDS = np.random.default_rng()  # shuffling seeds; the user's global numpy RNG is left alone


def signature_of(feeds):
    """``((name, dtype, per-example shape), ...)`` of the feeds: what the pipeline's graph takes."""
    return tuple((name, "string" if isinstance(value, Coded) else value.dtype.name,
                  tuple(value.codes.shape[1:] if isinstance(value, Coded) else value.shape[1:]))
                 for name, value in feeds.items())


def placeholder_name(name):
    """A TensorFlow op name for a column (ASCII letters, digits and ``_`` only)."""
    return re.sub(r"[^A-Za-z0-9_]", "_", name) or "column"


class InputPipeline:
    """One graph's iterator over fed columns (see the module docstring).

    Attributes:
        batch: ``{name: tensor}``, the next batch (``get_next()`` of the iterator).
    """

    def __init__(self, tf, signature):
        v1 = tf.compat.v1
        self._tf = tf
        self._placeholders, self._levels = {}, {}
        for name, dtype, shape in signature:
            if dtype == "string":  # codes into the column's distinct values
                self._placeholders[name] = v1.placeholder(
                    tf.int32, [None, *shape], name=placeholder_name(name) + "_codes")
                self._levels[name] = v1.placeholder(
                    tf.string, [None], name=placeholder_name(name) + "_levels")
            else:
                self._placeholders[name] = v1.placeholder(
                    tf.as_dtype(dtype), [None, *shape], name=placeholder_name(name))
        self._batch_size = v1.placeholder(tf.int64, [], name="batch_size")
        self._chunk = v1.placeholder(tf.int64, [], name="gather_rows")
        self._epochs = v1.placeholder(tf.int64, [], name="num_epochs")
        self._buffer = v1.placeholder(tf.int64, [], name="shuffle_buffer")
        self._seed = v1.placeholder_with_default(tf.constant(0, tf.int64), [], name="seed")
        datasets = batches(tf, self._placeholders, self._levels, self._batch_size, self._chunk,
                           self._epochs, self._buffer, self._seed)
        iterator = v1.data.Iterator.from_structure(
            v1.data.get_output_types(datasets["plain"]),
            v1.data.get_output_shapes(datasets["plain"]))
        self._initializers = {name: iterator.make_initializer(dataset)
                              for name, dataset in datasets.items()}
        self.iterator = iterator
        # the columns held in the session (see ``_held_batch``); which source a call reads
        # set by ``start`` alone; resource variables whatever the TF 1 switches say
        local = dict(trainable=False, collections=[], use_resource=True)

        def held(name, dtype, shape):
            return v1.Variable(tf.zeros([0, *shape], dtype), shape=tf.TensorShape([None, *shape]),
                               name=name, **local)

        # row-major: the columns of a dtype side by side in one matrix, each row's values
        # together, so that a batch of random rows is one gather per dtype (a gather from
        # each column reads each row's values from as many places in memory)
        self._groups = {}  # dtype: [(name, per-example shape, width)]
        for name, holder in self._placeholders.items():
            shape = holder.shape[1:]
            self._groups.setdefault(holder.dtype, []).append(
                (name, shape, int(np.prod(shape.as_list(), dtype=np.int64))))
        self._matrices = {dtype: held(f"held_{dtype.name}", dtype, [sum(w for *_, w in group)])
                          for dtype, group in self._groups.items()}
        self._held_levels = {name: held(placeholder_name(name) + "_levels_held", tf.string, [])
                             for name in self._levels}
        # rows, batch size, epochs (-1: forever), seed, shuffled (0/1), batches (-1: no end)
        self._settings_value = v1.placeholder(tf.int64, [6], name="held_settings")
        self._settings = v1.Variable(tf.zeros([6], tf.int64), name="held_settings", **local)
        self._number = v1.Variable(tf.constant(0, tf.int64), name="held_batch_number", **local)
        self._permutation = v1.Variable(tf.zeros([0], tf.int64), shape=tf.TensorShape([None]),
                                        name="held_permutation", **local)
        self._permuted_epoch = v1.Variable(tf.constant(-1, tf.int64), name="held_epoch", **local)
        self._select = v1.placeholder(tf.bool, [], name="held_select")
        self._use_held = v1.Variable(False, name="held_in_use", **local)
        # the end of the input: a dequeue of this closed, empty queue raises OutOfRangeError
        self._end = tf.queue.FIFOQueue(1, tf.int64, shapes=[[]], name="held_end")
        close = tf.cond(self._end.is_closed(), tf.no_op, self._end.close)
        assign = dict(read_value=False)
        self._reset = tf.group(
            close, self._use_held.assign(self._select, **assign),
            self._number.assign(0, **assign),
            self._settings.assign(self._settings_value, **assign))
        # a held call's first epoch: its permutation (input order: the row numbers)
        rows, seed, shuffled = (self._settings_value[i] for i in (0, 3, 4))
        first = tf.cond(tf.equal(shuffled, 1), lambda: _permutation(tf, rows, seed, 0),
                        lambda: tf.range(rows))
        self._prepare = tf.group(self._permutation.assign(first, **assign),
                                 self._permuted_epoch.assign(0, **assign))

        def matrix(group):
            holders = [self._placeholders[name] for name, *_ in group]
            rows = tf.shape(holders[0])[0]
            return tf.concat([tf.reshape(holder, [rows, width])
                              for holder, (*_, width) in zip(holders, group)], 1)

        self._load = tf.group(
            *[self._matrices[dtype].assign(matrix(group), **assign)
              for dtype, group in self._groups.items()],
            *[self._held_levels[name].assign(holder, **assign)
              for name, holder in self._levels.items()])
        # a call read through tf.data lets the last held input's matrices go
        self._release = tf.group(
            *[held.assign(tf.zeros([0, *held.shape[1:]], held.dtype), **assign)
              for held in [*self._matrices.values(), *self._held_levels.values(),
                           self._permutation]])
        self.batch = self.next_batch()

    def next_batch(self):
        """A new ``{name: tensor}`` op taking the next batch (a steps loop's body builds its own,
        see ``graph.build_steps_loop``)."""
        tf = self._tf
        return tf.cond(self._use_held.read_value(), self._held_batch, self.iterator.get_next,
                       name="next_batch")

    def _held_batch(self):
        """The next batch of the held columns: this batch's row numbers, then a gather of each.

        Batch ``k`` holds the positions ``k * batch_size`` up to the next batch's
        (the last one stops at the end of the last epoch) of the stream of
        epochs; position ``p`` is row ``p % rows`` of epoch ``p // rows``, in
        input order or through that epoch's permutation, the same one as the
        ``permuted`` dataset's (see :func:`batches`), kept in a variable while
        the epoch is read.
        """
        tf = self._tf
        rows, size, epochs, seed, shuffled, batches = tf.unstack(self._settings.read_value())
        number = self._number.assign_add(1) - 1
        number = tf.cond(tf.logical_and(batches >= 0, number >= batches),
                         self._end.dequeue, lambda: number)
        start = number * size
        stop = tf.where(epochs < 0, start + size, tf.minimum(start + size, rows * epochs))
        positions = tf.range(start, stop)
        offsets = positions % rows
        last = (stop - 1) // rows  # a batch spans at most two epochs (it is at most the rows)
        # the permutation kept is that of the epoch of the batch before's last row: it orders
        # this batch's rows of that epoch; a batch reaching a new one makes and keeps its own
        # (read and replaced inside one branch, so that the read comes first)

        def kept():
            return tf.gather(self._permutation, offsets)

        def new_epoch():
            permutation = _permutation(tf, rows, seed, last)
            before = kept()
            with tf.control_dependencies([before]):
                done = tf.group(self._permutation.assign(permutation, read_value=False),
                                self._permuted_epoch.assign(last, read_value=False))
            with tf.control_dependencies([done]):
                return tf.where(tf.equal(positions // rows, last),
                                tf.gather(permutation, offsets), before)

        fresh = tf.logical_and(tf.equal(shuffled, 1),
                               tf.not_equal(self._permuted_epoch.read_value(), last))
        order = tf.cond(fresh, new_epoch, kept)
        batch = {}
        for dtype, group in self._groups.items():
            gathered = tf.gather(self._matrices[dtype], order)
            if all(shape.rank == 0 for _, shape, _ in group):  # one op for one value a row
                parts = tf.unstack(gathered, len(group), axis=1)
            else:
                parts = [tf.reshape(part, tf.concat([tf.shape(part)[:1], shape.as_list()], 0))
                         for part, (_, shape, _) in zip(
                             tf.split(gathered, [width for *_, width in group], axis=1), group)]
            for (name, _, _), values in zip(group, parts):
                batch[name] = (tf.gather(self._held_levels[name], values)
                               if name in self._levels else values)
        return {name: batch[name] for name in self._placeholders}

    def start(self, session, feeds, input_fn, training, epochs=None):
        """Initializes the iterator on ``feeds`` (the arrays of ``input_fn``) for one call."""
        feed = {}
        for name, value in feeds.items():
            if isinstance(value, Coded):
                feed[self._levels[name]] = value.levels
                value = value.codes
            feed[self._placeholders[name]] = value
        num_epochs = input_fn.num_epochs if epochs is None else epochs
        feed[self._batch_size] = rows = batch_rows(feeds, input_fn, num_epochs)
        feed[self._chunk] = max(rows, GATHER_BYTES // row_bytes(feeds))
        feed[self._epochs] = -1 if num_epochs is None else num_epochs
        shuffle = input_fn.shuffles(training)
        small = input_fn.n * len(feeds) <= SMALL_VALUES
        order = "small_plain" if small else "plain"
        if shuffle:
            buffer = input_fn.queue_capacity
            if small:
                order = "small_shuffled"
            elif buffer is None or buffer >= input_fn.n:
                order = "permuted"
            else:
                order = "buffered"
            # TensorFlow allocates the whole buffer at once (std::bad_alloc for 1e9); one
            # larger than the data shuffles the same way as one of the data's size
            feed[self._buffer] = input_fn.n if buffer is None else min(buffer, input_fn.n)
            # a fixed seed repeats the same order in every call; None: a new order each call
            feed[self._seed] = (input_fn.seed if input_fn.seed is not None
                                else int(_SEEDS.integers(1, 2**31 - 1)))
        held = order in ("plain", "permuted") and rows <= input_fn.n and _HELD
        feed[self._select] = held
        settings = [input_fn.n, rows, feed[self._epochs], feed.get(self._seed, 0),
                    order == "permuted", -1]
        if held:
            if num_epochs is not None:
                settings[-1] = -(-input_fn.n * num_epochs // rows)
            ops = [self._load, self._reset, self._prepare]
        else:
            ops = [self._initializers[order], self._reset, self._release]
        feed[self._settings_value] = settings
        session.run(ops, feed)


def _memory_bytes():
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 2**40


def batch_rows(feeds, input_fn, num_epochs):
    """The batch size to feed: at most the rows there are; a batch that cannot fit refused.

    A batch spans epochs (``repeat`` comes before ``batch``), so with a finite
    number of epochs no batch is larger than all their rows: feeding that
    instead of a larger ``batch_size`` changes nothing.
    """
    rows = input_fn.batch_size
    if num_epochs is not None:
        rows = min(rows, input_fn.n * num_epochs)
    need, have = rows * row_bytes(feeds), _memory_bytes()
    if need > have // 2:
        raise ValueError(
            f"`batch_size` = {input_fn.batch_size}: batches of {rows} rows of this input need "
            f"about {need / 2**30:.3g} GB each, more than half of this machine's "
            f"{have / 2**30:.3g} GB of memory. Use a smaller batch_size.")
    return rows


def row_bytes(feeds):
    """What a row of a batch takes in memory (a string: its ``tstring``)."""
    row_bytes = sum(TSTRING_BYTES if isinstance(value, Coded) else
                    value.nbytes // max(len(value), 1) for value in feeds.values())
    return max(row_bytes, 1)


class Coded(NamedTuple):
    """A string column as ``codes`` (int32) into its distinct values ``levels``."""

    codes: np.ndarray
    levels: np.ndarray


def aligned_empty(shape, dtype):
    """An uninitialized array at a 64-byte aligned address (see ``aligned``)."""
    dtype = np.dtype(dtype)
    size = int(np.prod(shape)) * dtype.itemsize
    raw = np.empty(size + _ALIGN, dtype=np.uint8)
    start = -raw.ctypes.data % _ALIGN
    return raw[start:start + size].view(dtype).reshape(shape)


def aligned(values, dtype=None):
    """A private copy of ``values`` (as ``dtype``) at a 64-byte aligned address.

    TensorFlow makes a fed numpy array aligned so the memory of its tensor, where
    it copies any other: each fed column is then held once, by this array.
    """
    out = aligned_empty(values.shape, dtype or values.dtype)
    out[...] = values
    return out


def coded(values, chunk=1 << 16):
    """``(codes, levels)`` with ``levels[codes] == values``, each distinct value once, as text.

    One ``argsort``, then the sorted values are read a chunk at a time, so that
    besides the codes (4 bytes a row) and the order (8) no more than a chunk of
    the values is copied: for 1,000,000 strings ~0.4 s. Numbers (a hashed column
    of whole numbers) get their decimal text in ``levels``.
    """
    order = np.argsort(values, kind="stable")
    codes = aligned_empty(len(values), np.int32)
    levels, last, count = [values[:0]], None, -1
    for start in range(0, len(values), chunk):
        rows = order[start:start + chunk]
        ordered = values[rows]
        new = np.empty(len(rows), dtype=bool)
        new[0] = last is None or ordered[0] != last
        np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
        codes[rows] = count + np.cumsum(new)
        count += int(np.count_nonzero(new))
        levels.append(ordered[new])
        last = ordered[-1]
    levels = np.concatenate(levels)
    return codes, (levels if levels.dtype.kind == "U" else levels.astype(str))


def _permutation(tf, rows, seed, epoch):
    """Epoch ``epoch``'s order of ``rows`` rows for ``seed`` (both sources' shuffled order)."""
    return tf.random.experimental.stateless_shuffle(tf.range(rows), seed=tf.stack([seed, epoch]))


def batches(tf, columns, levels, batch_size, chunk, epochs, buffer, seed):
    """The datasets of batches (dicts of whole tensors) an input can be read with.

    Batches run on across epochs (only the last batch of the last epoch may be
    smaller) and every epoch holds every row once. The columns are held once,
    as fed (a string column as int32 codes into ``levels``, its distinct
    values). In the datasets for real data, rows are never handled one by one:
    ``chunk`` row numbers at a time gather rows from every column (and a string
    column's strings from its levels), which are cut into batches (``rebatch``)
    and prefetched, autotuned; in input order, the columns themselves are cut.
    Chunks of ~16 MiB (``GATHER_BYTES``) keep the copies small; each chunk has
    a fixed cost, so that a gather per batch or chunks of 16,384 rows took up to
    twice the time per step on (a) of bench/bench_estimators_data.py. The row
    numbers:

    * ``plain``: in input order;
    * ``permuted``: each epoch a new random permutation of all rows (seeded by
      ``seed`` and the epoch, so a fixed seed repeats the order): what a
      shuffle buffer holding all rows gives;
    * ``buffered``: through a shuffle buffer of ``buffer`` rows, as
      ``Dataset.shuffle`` does.

    ``small_plain`` and ``small_shuffled`` (shuffle buffer ``buffer``) are for
    data of at most ``SMALL_VALUES`` values: rows are sliced one by one, with no
    function to instantiate, no prefetch thread and no graph rewrites, which
    would cost more at each call's initialization (~20-50 ms) than such data
    costs to slice (see bench/README.md).
    """
    rows = tf.shape(next(iter(columns.values())), out_type=tf.int64)[0]

    def decoded(batch):  # a string column's strings from its codes
        return {name: tf.gather(levels[name], values) if name in levels else values
                for name, values in batch.items()}

    def gather(order):
        return decoded({name: tf.gather(column, order) for name, column in columns.items()})

    # epochs = -1: forever
    permuted = tf.data.Dataset.counter().take(epochs).map(
        lambda epoch: _permutation(tf, rows, seed, epoch))
    buffered = (tf.data.Dataset.range(rows)
                .shuffle(buffer, seed=seed, reshuffle_each_iteration=True).repeat(epochs))
    # tf.data's graph rewrites would hold a second copy of the columns (a rewritten
    # graph keeps what it captured as constants): the pipeline is written as they
    # would leave it, prefetched and autotuned
    def options(autotune):  # no graph rewrites (prefetch where wanted is in the pipeline)
        chosen = tf.data.Options()
        chosen.experimental_optimization.apply_default_optimizations = False
        chosen.experimental_optimization.inject_prefetch = False
        chosen.autotune.enabled = autotune
        return chosen

    real = options(autotune=True)
    datasets = {name: order.map(gather).rebatch(batch_size)
                for name, order in (("permuted", permuted.rebatch(chunk)),
                                    ("buffered", buffered.batch(chunk)))}
    # in input order, the columns are cut as they are (a gather would only copy them)
    plain = tf.data.Dataset.from_tensors(columns).repeat(epochs).rebatch(batch_size)
    datasets["plain"] = plain.map(decoded) if levels else plain
    datasets = {name: dataset.prefetch(tf.data.AUTOTUNE).with_options(real)
                for name, dataset in datasets.items()}
    small = options(autotune=False)
    slices = tf.data.Dataset.from_tensor_slices(decoded(columns))
    datasets["small_plain"] = slices.repeat(epochs).batch(batch_size).with_options(small)
    datasets["small_shuffled"] = (slices.shuffle(buffer, seed=seed, reshuffle_each_iteration=True)
                                  .repeat(epochs).batch(batch_size).with_options(small))
    return datasets


def convert(key, values, kind, column):
    """An input column as the dtype a feature column needs; TypeError naming both."""
    dtype = values.dtype.kind
    who = f"{type(column).__name__} {column.name!r}"
    if kind == FLOAT:
        if dtype not in "biuf":
            raise TypeError(f"Column {key!r} must be numeric for {who}, got strings such as "
                            f"{values[0]!r}.")
        return aligned(values, np.float32)
    if kind == INT:
        if dtype in "biu":
            return aligned(values, np.int64)
        if dtype == "f" and np.all(np.mod(values, 1) == 0):
            return aligned(values, np.int64)
        example = values[0] if dtype != "f" else values[np.mod(values, 1) != 0][0]
        raise TypeError(f"Column {key!r} must hold whole numbers for {who}, got {example!r}.")
    if kind == STR:
        if dtype != "U":
            raise TypeError(f"Column {key!r} must hold strings for {who} (its vocabulary is "
                            f"strings), got {values.dtype} values such as {values[0]!r}.")
        return values
    # STR_OR_INT: hashed as strings; whole numbers as their decimal text (made by coded)
    if dtype == "b" or (dtype == "f" and np.all(np.mod(values, 1) == 0)):
        return values.astype(np.int64)
    return values
