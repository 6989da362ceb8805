"""In-memory data held in the session: each batch one gather inside the step.

For a graph whose calls read data above ``SMALL_VALUES`` values in input order
or a new permutation each epoch (:func:`pyhooks.estimators.pipeline.reads_held`).
The columns are copied side by side into one row-major matrix variable, each
row's values together, so that a batch of random rows is one gather (a gather
from each column would read each row from as many places in memory). Columns of
4- and 8-byte numbers (``float32``, ``int64``, a text column's ``int32`` codes
...) are held as 32-bit words (``tf.bitcast``): the features and the labels of
a row come in one gather. Other types (``bool``, ``uint8`` ...) get a matrix of
their own type. Numeric data is thus held twice while the input is in use: its
arrays and the matrix.

Each batch is a position in the stream of epochs, the batch's row numbers (a
slice of a window of them: the orders of the epochs a session call reads, side
by side, made once per call by :meth:`HeldInput.steps`) and the gather,
inside the session step itself (and inside a steps loop's ``tf.while_loop``):
no ``tf.data`` iterator, no thread hand-off, no branch per step. The end of
the input is an ``OutOfRangeError`` as from an iterator. The batches are those
of the ``plain`` and ``permuted`` datasets of
:func:`pyhooks.estimators.pipeline.batches`. A call on the arrays the session
already holds does not load them again (:meth:`HeldInput.start`).

A model reading plain numeric columns can take them side by side straight from
the gathered matrix (:meth:`HeldBatch.side_by_side`) instead of one tensor per
column joined again.
"""

from __future__ import annotations

import weakref
from typing import NamedTuple

import numpy as np

from pyhooks.estimators.pipeline import (Coded, batch_rows, data_feed, epochs_of, order_of,
                                         permutation32, placeholder_name, placeholders,
                                         shuffle_seed)

__all__ = ["HeldBatch", "HeldInput"]

_WORD_TYPES = ("float32", "float64", "int32", "int64", "uint32", "uint64")  # held as words


class _Column(NamedTuple):
    """Where a column is held: ``width`` values from ``start`` of the matrix of type ``kept``."""

    name: str
    dtype: object  # the column's tf.DType
    shape: object  # its TensorShape per example
    start: int
    width: int
    kept: object  # the matrix's tf.DType: int32 for words, else the column's own


class HeldBatch(dict):
    """A held batch: ``{name: tensor}`` (a dict to everyone), and the gathered matrices it was
    cut from (:meth:`cut_from`)."""

    _gathered = _layout = _tf = None  # a copy made as a plain dict (session.run's) has none

    @classmethod
    def cut_from(cls, columns, gathered, layout, tf):
        batch = cls(columns)
        batch._gathered, batch._layout, batch._tf = gathered, layout, tf
        return batch

    def side_by_side(self, names):
        """The float32 columns ``names`` side by side, ``[batch, their widths]``, cut from the
        gathered words at once; None if one of them is not a float32 column of the matrix."""
        tf = self._tf
        if tf is None:
            return None
        found = [self._layout.get(name) for name in names]
        if not names or any(c is None or c.dtype != tf.float32 for c in found):
            return None
        words = [w for c in found for w in range(c.start, c.start + c.width)]
        gathered = self._gathered[tf.int32]  # every float32 column is held as words
        if words == list(range(words[0], words[0] + len(words))):
            block = gathered[:, words[0]:words[0] + len(words)]
        else:
            block = tf.gather(gathered, words, axis=1)
        return tf.bitcast(block, tf.float32)


class HeldInput:
    """One graph's held columns and their batches (see the module docstring).

    Attributes:
        batch: the next batch, a :class:`HeldBatch`.
    """

    def __init__(self, tf, signature):
        v1 = tf.compat.v1
        self._tf = tf
        self._placeholders, self._levels = placeholders(tf, signature)
        # resource variables whatever the TF 1 switches say; in no collection (never saved)
        local = dict(trainable=False, collections=[], use_resource=True)

        def held(name, dtype, shape):
            return v1.Variable(tf.zeros([0, *shape], dtype), shape=tf.TensorShape([None, *shape]),
                               name=name, **local)

        # the columns' places: a matrix per held type (int32 for the words), each column a
        # run of `width` values in it
        self._layout, widths = {}, {}
        for name, holder in self._placeholders.items():
            dtype, shape = holder.dtype, holder.shape[1:]
            words = dtype.name in _WORD_TYPES
            kept = tf.int32 if words else dtype
            width = int(np.prod(shape.as_list(), dtype=np.int64)) * (dtype.size // 4 if words
                                                                     else 1)
            self._layout[name] = _Column(name, dtype, shape, widths.get(kept, 0), width, kept)
            widths[kept] = widths.get(kept, 0) + width
        self._matrices = {kept: held(f"held_{kept.name}", kept, [width])
                          for kept, width in widths.items()}
        self._held_levels = {name: held(placeholder_name(name) + "_levels_held", tf.string, [])
                             for name in self._levels}
        # a call's settings (fed: rows, batch size, the rows of all its epochs (2**62:
        # forever), seed, shuffled (0/1)), kept as `_settings` (rows, seed, shuffled: read once
        # a call) and the two a step reads; the position in the stream of epochs (the next
        # batch's first row); the window: the row numbers of the positions from `base` on,
        # the orders of whole epochs side by side (32-bit: held data has fewer than 2**31 rows)
        self._settings_value = v1.placeholder(tf.int64, [5], name="held_settings")
        self._settings = v1.Variable(tf.zeros([3], tf.int64), name="held_settings", **local)
        self._size = v1.Variable(tf.constant(0, tf.int64), name="held_batch_size", **local)
        self._total = v1.Variable(tf.constant(0, tf.int64), name="held_total", **local)
        self._position = v1.Variable(tf.constant(0, tf.int64), name="held_position", **local)
        self._window = v1.Variable(tf.zeros([0], tf.int32), shape=tf.TensorShape([None]),
                                   name="held_window", **local)
        self._base = v1.Variable(tf.constant(0, tf.int64), name="held_window_start", **local)
        # the end of the input: a dequeue of this closed, empty queue raises OutOfRangeError
        self._end = tf.queue.FIFOQueue(1, tf.int64, shapes=[[]], name="held_end")
        close = tf.cond(self._end.is_closed(), tf.no_op, self._end.close)
        assign = dict(read_value=False)
        rows, size, total, seed, shuffled = tf.unstack(self._settings_value)
        self._start = tf.group(
            close, self._settings.assign(tf.stack([rows, seed, shuffled]), **assign),
            self._size.assign(size, **assign), self._total.assign(total, **assign),
            self._position.assign(0, **assign), self._base.assign(0, **assign),
            self._window.assign(tf.zeros([0], tf.int32), **assign))

        def matrix(kept):
            parts = []
            for column in self._layout.values():
                if column.kept == kept:
                    values = self._placeholders[column.name]
                    if values.dtype != kept:  # 4- or 8-byte numbers as 32-bit words
                        values = tf.bitcast(values, tf.int32)
                    parts.append(tf.reshape(values, [tf.shape(values)[0], column.width]))
            return parts[0] if len(parts) == 1 else tf.concat(parts, 1)

        self._load = tf.group(
            *[held.assign(matrix(kept), **assign) for kept, held in self._matrices.items()],
            *[self._held_levels[name].assign(holder, **assign)
              for name, holder in self._levels.items()])
        self._loaded = None  # what the matrices hold: see ``_holds``
        self.batch = self.next_batch(ready=False)

    def steps(self, count):
        """Readies the next ``count`` batches (a tensor) for one session call: ``(the batches
        the call may read, an op to run first)``.

        The window of row numbers is made to cover them, once per call (a step
        then only slices it: see :meth:`next_batch`). At the end of the input
        the op raises ``OutOfRangeError``; near it, the call reads the batches
        left.
        """
        tf = self._tf
        rows, seed, shuffled = tf.unstack(self._settings.read_value())
        size, total = self._size.read_value(), self._total.read_value()
        position = self._position.read_value()
        position = tf.cond(position >= total, self._end.dequeue, lambda: position)
        count = tf.minimum(tf.cast(count, tf.int64), (total - position + size - 1) // size)
        need = tf.minimum(position + count * size, total)
        window, base = self._window.read_value(), self._base.read_value()
        covered = base + tf.size(window, out_type=tf.int64)

        def extend():
            # the epochs of positions `position` to `need`: those the window has already
            # made kept (from the epoch of `position` on), the others made
            first, last = position // rows, (need - 1) // rows
            made = tf.map_fn(lambda epoch: _epoch_order(tf, rows, seed, shuffled, epoch),
                             tf.range(tf.maximum(first, covered // rows), last + 1),
                             fn_output_signature=tf.TensorSpec([None], tf.int32))
            kept = window[first * rows - base:]
            with tf.control_dependencies([kept]):  # read before it is replaced
                return tf.group(
                    self._window.assign(tf.concat([kept, tf.reshape(made, [-1])], 0),
                                        read_value=False),
                    self._base.assign(first * rows, read_value=False))

        ready = tf.cond(need > covered, extend, tf.no_op)
        return count, ready

    def next_batch(self, ready=True):
        """The next batch: its row numbers, a slice of the window, then a gather of each matrix.

        Batch ``k`` holds the positions ``k * batch_size`` up to the next batch's
        (the last one stops at the end of the last epoch) of the stream of
        epochs; position ``p`` is row ``p % rows`` of epoch ``p // rows``, in
        input order or through that epoch's permutation, the same one as the
        ``permuted`` dataset's (see :func:`pyhooks.estimators.pipeline.batches`).
        ``ready``: whether :meth:`steps` readied the batch (a steps loop's body,
        see ``graph.build_steps_loop``); else this step readies itself.
        """
        tf = self._tf
        dependencies = [] if ready is True else [self.steps(1)[1]]
        with tf.control_dependencies(dependencies):  # every read after the window is ready
            size = self._size.read_value()
            start = self._position.assign_add(size) - size
            stop = tf.minimum(start + size, self._total.read_value())
            base = self._base.read_value()
            order = self._window.read_value()[start - base:stop - base]
        gathered = {kept: tf.gather(held, order) for kept, held in self._matrices.items()}
        columns = {}
        for name in self._placeholders:
            column = self._layout[name]
            values = self._column(column, gathered[column.kept])
            columns[name] = (tf.gather(self._held_levels[name], values)
                             if name in self._levels else values)
        return HeldBatch.cut_from(columns, gathered, self._layout, tf)

    def _column(self, column, matrix):
        """A column's values ``[batch, *shape]``, cut from the gathered ``matrix`` (a slice for
        each column a model reads: the others are never computed)."""
        tf = self._tf
        if column.shape.rank == 0 and column.width == 1:  # one value a row: [batch]
            part = matrix[:, column.start]
        else:  # [batch, *shape], an 8-byte number's two words last
            per_word = column.dtype.size // 4 if column.kept != column.dtype else 1
            shape = column.shape.as_list() + ([per_word] if per_word > 1 else [])
            part = tf.reshape(matrix[:, column.start:column.start + column.width], [-1, *shape])
        return part if column.dtype == column.kept else tf.bitcast(part, column.dtype)

    def start(self, session, feeds, input_fn, training, epochs=None):
        """Sets up one call's batches of ``feeds`` (the arrays of ``input_fn``); loads them into
        the matrices unless they hold them already."""
        order = order_of(feeds, input_fn, training)
        if order not in ("plain", "permuted"):
            raise AssertionError(f"held input read in {order!r} order")
        num_epochs = epochs_of(input_fn, epochs)
        rows = batch_rows(feeds, input_fn, num_epochs)
        total = 2**62 if num_epochs is None else input_fn.n * num_epochs
        seed = shuffle_seed(input_fn) if order == "permuted" else 0
        feed = {self._settings_value: [input_fn.n, rows, total, seed, order == "permuted"]}
        ops = [self._start]
        if not self._holds(session, feeds):
            ops.append(self._load)
            feed.update(data_feed(self._placeholders, self._levels, feeds))
        self._loaded = None
        session.run(ops, feed)
        self._loaded = (weakref.ref(session), [weakref.ref(a) for a in _arrays(feeds)])

    def _holds(self, session, feeds):
        """Whether the matrices of ``session`` already hold ``feeds``' arrays.

        Loading them copies the whole data (1,000,000 x 10 values: ~10 ms), so a
        call on the input the call before read in this session (the estimator
        converts an input once, so its arrays are the same objects) keeps them.
        The arrays are known by weak references: a dropped input is not kept
        alive, and a new array can never pass for one that is gone.
        """
        if self._loaded is None:
            return False
        loaded_session, loaded = self._loaded
        arrays = _arrays(feeds)
        return (loaded_session() is session and len(loaded) == len(arrays)
                and all(ref() is array for ref, array in zip(loaded, arrays)))


def _arrays(feeds):
    """The numpy arrays of ``feeds``, in order (a text column's codes and levels)."""
    arrays = []
    for value in feeds.values():
        arrays.extend((value.codes, value.levels) if isinstance(value, Coded) else (value,))
    return arrays


def _epoch_order(tf, rows, seed, shuffled, epoch):
    """The order of epoch ``epoch``'s rows (int32): its permutation if ``shuffled`` (1), else
    input order."""
    return tf.cond(tf.equal(shuffled, 1), lambda: permutation32(tf, rows, seed, epoch),
                   lambda: tf.range(tf.cast(rows, tf.int32)))
