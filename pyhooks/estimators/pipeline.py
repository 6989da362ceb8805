"""The input pipeline: an input's numpy columns -> placeholders -> batches.

Each graph reads its input one way, chosen from the input when the graph is
made (:func:`reads_held`: an estimator keeps a graph per way), and loads the
input's arrays (converted for the estimator once per input, then cached) at
each call of ``train()``, ``evaluate()`` or ``predict()``, so every call
starts from the beginning of the data, as ``tf.estimator`` does. Text is held
as int32 codes into its distinct values (:class:`Coded`).

* **Held in the session** (:class:`pyhooks.estimators.held_input.HeldInput`:
  data above ``SMALL_VALUES`` values, in input order or a new permutation each
  epoch, batches no larger than the data): the columns side by side in one
  row-major matrix, each batch one gather inside the session step itself.
* **tf.data** (:class:`StreamedInput`: a bounded shuffle buffer smaller than
  the data, small data, and batches larger than the data): a re-initializable
  iterator. On real data row numbers gather ~16 MiB of rows from every column
  at once, which are cut into batches, prefetched and autotuned; small data is
  sliced row by row with none of these, whose set-up would cost more per call
  than the data (see :func:`batches`).

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

__all__ = ["Coded", "IteratorInput", "StreamedInput", "aligned", "coded", "convert", "reads_held", "row_bytes",
           "signature_of"]
SMALL_VALUES = 4096  # rows x columns of data read by the small-data datasets
GATHER_BYTES = 16 * 2**20  # rows gathered from the columns at once, then cut into batches
_ALIGN = 64  # bytes: a fed numpy array aligned so becomes a tensor without a copy
TSTRING_BYTES = 32  # what TensorFlow holds per string of a batch (a short one)
_HELD = True  # False: every input through tf.data (tests compare the two)
_SEEDS = np.random.default_rng()  # shuffling seeds; the user's global numpy RNG is left alone


def signature_of(feeds):
    """``((name, dtype, per-example shape), ...)`` of the feeds: what the pipeline's graph takes."""
    return tuple((name, "string" if isinstance(value, Coded) else value.dtype.name,
                  tuple(value.codes.shape[1:] if isinstance(value, Coded) else value.shape[1:]))
                 for name, value in feeds.items())


def placeholder_name(name):
    """A TensorFlow op name for a column (ASCII letters, digits and ``_`` only)."""
    return re.sub(r"[^A-Za-z0-9_]", "_", name) or "column"


def placeholders(tf, signature):
    """``({name: placeholder}, {name: its levels' placeholder})`` of a signature's columns."""
    v1 = tf.compat.v1
    columns, levels = {}, {}
    for name, dtype, shape in signature:
        if dtype == "string":  # codes into the column's distinct values
            columns[name] = v1.placeholder(tf.int32, [None, *shape],
                                           name=placeholder_name(name) + "_codes")
            levels[name] = v1.placeholder(tf.string, [None], name=placeholder_name(name) + "_levels")
        else:
            columns[name] = v1.placeholder(tf.as_dtype(dtype), [None, *shape],
                                           name=placeholder_name(name))
    return columns, levels


def data_feed(columns, levels, feeds):
    """The feed of ``feeds``' arrays to :func:`placeholders`' ``columns`` and ``levels``."""
    feed = {}
    for name, value in feeds.items():
        if isinstance(value, Coded):
            feed[levels[name]] = value.levels
            value = value.codes
        feed[columns[name]] = value
    return feed


def order_of(feeds, input_fn, training):
    """How a call reads ``input_fn``: ``plain`` (input order), ``permuted`` (a new permutation
    of all rows each epoch), ``buffered`` (a bounded shuffle buffer), or for small data
    ``small_plain`` / ``small_shuffled`` (see :func:`batches`)."""
    small = input_fn.n * len(feeds) <= SMALL_VALUES
    if not input_fn.shuffles(training):
        return "small_plain" if small else "plain"
    if small:
        return "small_shuffled"
    buffer = input_fn.queue_capacity
    return "permuted" if buffer is None or buffer >= input_fn.n else "buffered"


def epochs_of(input_fn, epochs):
    """A call's passes over the data (None: forever): ``epochs`` if given, else the input's."""
    return input_fn.num_epochs if epochs is None else epochs


def reads_held(feeds, input_fn, training, epochs=None):
    """Whether a call reads ``feeds`` held in the session (else through tf.data).

    Held: data above ``SMALL_VALUES`` values (and under 2**31 rows), in input
    order or permuted each epoch, in batches no larger than the data.
    """
    return (_HELD and order_of(feeds, input_fn, training) in ("plain", "permuted")
            and batch_rows(feeds, input_fn, epochs_of(input_fn, epochs)) <= input_fn.n < 2**31)


def shuffle_seed(input_fn):
    """A shuffled call's seed: the input's (the same order in every call), else a new one."""
    return input_fn.seed if input_fn.seed is not None else int(_SEEDS.integers(1, 2**31 - 1))


class IteratorInput:
    """A pipeline read through ``self.iterator``: each batch its ``get_next()``."""

    def steps(self, count):
        """``(count, None)``: a steps loop's ``count`` batches need nothing readied (the
        iterator raises ``OutOfRangeError`` at the end)."""
        return count, None

    def next_batch(self, ready=True):
        """A new op taking the next batch (a steps loop's body builds its own, see
        ``graph.build_steps_loop``)."""
        return self.iterator.get_next()


class StreamedInput(IteratorInput):
    """One graph's ``tf.data`` iterator over fed columns (see the module docstring).

    Attributes:
        batch: ``{name: tensor}``, the next batch (``get_next()`` of the iterator).
    """

    def __init__(self, tf, signature):
        v1 = tf.compat.v1
        self._placeholders, self._levels = placeholders(tf, signature)
        self._batch_size = v1.placeholder(tf.int64, [], name="batch_size")
        self._chunk = v1.placeholder(tf.int64, [], name="gather_rows")
        self._epochs = v1.placeholder(tf.int64, [], name="num_epochs")
        self._buffer = v1.placeholder(tf.int64, [], name="shuffle_buffer")
        self._seed = v1.placeholder_with_default(tf.constant(0, tf.int64), [], name="seed")
        datasets = batches(tf, self._placeholders, self._levels, self._batch_size, self._chunk,
                           self._epochs, self._buffer, self._seed)
        self.iterator = v1.data.Iterator.from_structure(
            v1.data.get_output_types(datasets["plain"]),
            v1.data.get_output_shapes(datasets["plain"]))
        self._initializers = {name: self.iterator.make_initializer(dataset)
                              for name, dataset in datasets.items()}
        self.batch = self.iterator.get_next()

    def start(self, session, feeds, input_fn, training, epochs=None):
        """Initializes the iterator on ``feeds`` (the arrays of ``input_fn``) for one call."""
        feed = data_feed(self._placeholders, self._levels, feeds)
        num_epochs = epochs_of(input_fn, epochs)
        feed[self._batch_size] = rows = batch_rows(feeds, input_fn, num_epochs)
        feed[self._chunk] = max(rows, GATHER_BYTES // row_bytes(feeds))
        feed[self._epochs] = -1 if num_epochs is None else num_epochs
        order = order_of(feeds, input_fn, training)
        if input_fn.shuffles(training):
            # TensorFlow allocates the whole buffer at once (std::bad_alloc for 1e9); one
            # larger than the data shuffles the same way as one of the data's size
            buffer = input_fn.queue_capacity
            feed[self._buffer] = input_fn.n if buffer is None else min(buffer, input_fn.n)
            # a fixed seed repeats the same order in every call; None: a new order each call
            feed[self._seed] = shuffle_seed(input_fn)
        session.run(self._initializers[order], feed)


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


def permutation32(tf, rows, seed, epoch):
    """Epoch ``epoch``'s order of ``rows`` (fewer than 2**31) rows for ``seed``, as int32 (both
    sources' shuffled order; a 32-bit shuffle takes half the time of a 64-bit one:
    1,000,000 rows ~22 ms against ~46 ms, once an epoch)."""
    return tf.random.experimental.stateless_shuffle(tf.range(tf.cast(rows, tf.int32)),
                                                    seed=tf.stack([seed, epoch]))


def permutation(tf, rows, seed, epoch):
    """:func:`permutation32` as int64, or for 2**31 rows or more a 64-bit shuffle."""

    def wide():
        return tf.random.experimental.stateless_shuffle(tf.range(rows),
                                                        seed=tf.stack([seed, epoch]))

    return tf.cond(rows < 2**31, lambda: tf.cast(permutation32(tf, rows, seed, epoch), tf.int64),
                   wide)


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
        lambda epoch: permutation(tf, rows, seed, epoch))
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


def as_float32(what, values, who):
    """``values`` as the aligned float32 array a canned model computes in; numbers beyond
    float32's range are refused (as float32 they would be infinite, and the loss NaN, with no
    word of which column)."""
    if values.dtype.kind == "f" and values.dtype.itemsize > 4:
        beyond = np.abs(values) > np.finfo(np.float32).max
        if beyond.any():
            raise ValueError(f"{what} holds {values[beyond][0]!r}, beyond the range of the "
                             f"float32 numbers {who} computes in (about ±3.4e38): rescale it "
                             "first.")
    return aligned(values, np.float32)


def first_fraction(values):
    """The first value of ``values`` that is not a whole number, or None (and None for arrays
    that are not floats)."""
    if values.dtype.kind != "f":
        return None
    fractions = np.mod(values, 1) != 0
    return values[fractions][0] if fractions.any() else None


def convert(key, values, kind, column):
    """An input column as the dtype a feature column needs; TypeError naming both."""
    dtype = values.dtype.kind
    who = f"{type(column).__name__} {column.name!r}"
    if kind == FLOAT:
        if dtype not in "biuf":
            raise TypeError(f"Column {key!r} must be numeric for {who}, got strings such as "
                            f"{values[0]!r}.")
        return as_float32(f"Column {key!r}", values, who)
    if kind == INT:
        fraction = first_fraction(values)
        if dtype in "biu" or (dtype == "f" and fraction is None):
            return aligned(values, np.int64)
        example = values[0] if fraction is None else fraction
        hint = (" For text (or a factor), use column_categorical_with_vocabulary_list() with "
                "its values as strings." if dtype == "U" else "")
        raise TypeError(f"Column {key!r} must hold whole numbers for {who}, got {example!r}."
                        + hint)
    if kind == STR:
        if dtype != "U":
            raise TypeError(f"Column {key!r} must hold strings for {who} (its vocabulary is "
                            f"strings), got {values.dtype} values such as {values[0]!r}. Give "
                            "the vocabulary as numbers, or make the column text.")
        return values
    # STR_OR_INT: hashed as strings; whole numbers as their decimal text (made by coded).
    # A fraction is refused (TensorFlow refuses floats here): no rounding it silently.
    fraction = first_fraction(values)
    if fraction is not None:
        raise TypeError(f"Column {key!r} must hold strings or whole numbers for {who}, got "
                        f"{fraction!r}.")
    if dtype in "bf":
        return values.astype(np.int64)
    return values
