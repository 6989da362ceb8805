"""The input pipeline of files: paths -> chunks of rows, checked and converted -> batches.

One :class:`FilePipeline` per graph and :class:`FilePlan` (what is read from
the files, and how it becomes what the model reads). Every call of
``train()``, ``evaluate()`` or ``predict()`` initializes its iterator with the
input's paths, batch size, epochs, shuffle buffer and seed, so every call
starts from the beginning of its files. Per file::

    TextLineDataset (CSV, header skipped) | TFRecordDataset
      -> chunks of CHUNK_ROWS records, numbered      (the row of a bad value)
      -> decode_csv | parse_example; every value checked, converted  (parallel map)

then over the files (in a new order each epoch when shuffling) the chunks are
cut into batches (``rebatch``), or their rows go through a shuffle buffer of
``queue_capacity`` rows; prefetched. A value that breaks the checks stops the
call with a ValueError naming the column, the file and the row
(:meth:`FilePipeline.errors`); memory holds a few chunks and the buffer,
whatever the files' size.
"""

from __future__ import annotations

import contextlib
import re
from typing import NamedTuple

import numpy as np

from pyhooks.estimators.modes import LABEL, WEIGHT
from pyhooks.estimators.pipeline import Coded, IteratorInput

__all__ = ["CHUNK_ROWS", "FilePipeline", "FilePlan", "file_plan", "label_plan"]

CHUNK_ROWS = 1024  # records decoded, checked and converted at once
_MARK = "PYHOOKS_INPUT_ERROR"
_FOUND = re.compile(_MARK + r"\|(.*?)\|(.*?)\|(\d+)\|(.*?)\|(.*)", re.S)


class FilePlan(NamedTuple):
    """What a file pipeline reads and makes (hashable: graphs are kept under it).

    Attributes:
        file_format: ``"csv"`` or ``"tfrecord"``.
        reads: CSV: ``((name, position, kind), ...)`` in file order; TFRecord:
            ``((name, ("fixed", dtype, shape, default) | ("var", dtype)), ...)``.
        width: the CSV files' number of columns.
        delimiter: the CSV field delimiter.
        na: the CSV fields that mean a missing value.
        outputs: ``((batch key, op, source columns, dtype, argument), ...)``; ops:
            ``as`` (a column as ``dtype``), ``stack`` (columns side by side),
            ``lookup`` (the position of a label in ``argument``), ``ids`` (class
            ids below ``argument``), ``weight`` (non-negative weights).
    """

    file_format: str
    reads: tuple
    width: int
    delimiter: str
    na: tuple
    outputs: tuple


def _dtype_of(value):
    return "string" if isinstance(value, Coded) else value.dtype.name


def file_plan(input_fn, feeds, label=None, weight=None):
    """The :class:`FilePlan` of ``input_fn`` whose sample's feeds are ``feeds``.

    A batch key is an input column's name, or ``"<column>:<kind>"`` (a canned
    model's); ``label`` is the ``(op, sources, dtype, argument)`` of the labels,
    ``weight`` the weight column's name.
    """
    outputs = []
    for key, value in feeds.items():
        if key == LABEL:
            outputs.append((key, *label))
        elif key == WEIGHT:
            outputs.append((key, "weight", (weight,), "float32", None))
        else:
            source = key if key in input_fn.types else key.rsplit(":", 1)[0]
            outputs.append((key, "as", (source,), _dtype_of(value), None))
    used = {name for _, _, sources, _, _ in outputs for name in sources}
    if input_fn.file_format == "csv":
        reads = tuple((name, input_fn.header.index(name), input_fn.types[name])
                      for name in input_fn.header if name in used)
        width = len(input_fn.header)
    else:
        from pyhooks.estimators.tfrecord import feature_tuple

        reads = tuple((name, feature_tuple(input_fn.example_spec[name]))
                      for name in sorted(used))
        width = 0
    return FilePlan(input_fn.file_format, reads, width, input_fn.delimiter or ",",
                    tuple(input_fn.na or ()), tuple(outputs))


def label_plan(input_fn, feed, labels=None, n_classes=None, stack=False):
    """The labels' ``(op, sources, dtype, argument)`` (see :func:`file_plan`): ``labels``, the
    classes' names a text response is matched to; ``n_classes``, class ids below it; else
    the response as ``feed``'s dtype (several columns, or ``stack``: side by side)."""
    response = tuple(input_fn.response)
    if labels is not None:
        return ("lookup", response, "int64", tuple(str(label) for label in labels))
    if n_classes is not None:
        return ("ids", response, "int64", int(n_classes))
    if stack or len(response) > 1:
        return ("stack", response, feed.dtype.name, None)
    return ("as", response, _dtype_of(feed), None)


class _Checks:
    """The checks of one chunk: each an Assert whose message names the column, file and row."""

    def __init__(self, tf, path, first_row):
        self.tf, self.path, self.first_row = tf, path, first_row
        self.asserts = []

    def require(self, ok, name, problem, values):
        tf = self.tf
        if ok.shape.rank and ok.shape.rank > 1:
            ok = tf.reduce_all(tf.reshape(ok, [tf.shape(ok)[0], -1]), axis=1)
        at = tf.argmin(tf.cast(ok, tf.int32), output_type=tf.int64)
        value = tf.reshape(tf.gather(values, at), [-1])[0]
        shown = value if value.dtype == tf.string else tf.strings.as_string(value)
        message = tf.strings.join([_MARK, name, self.path, tf.strings.as_string(
            self.first_row + at), problem, shown], separator="|")
        self.asserts.append(tf.debugging.Assert(tf.reduce_all(ok), [message]))

    def whole(self, x, name, what):
        tf = self.tf
        if x.dtype.is_floating:
            self.require(tf.equal(x, tf.round(x)), name, f"not a whole number, but {what} "
                         "needs whole numbers", x)
        return tf.cast(x, tf.int64)


def _as(tf, checks, x, name, dtype):
    if dtype == "string":
        if x.dtype == tf.string:
            return x
        return tf.strings.as_string(checks.whole(x, name, "a text (hashed) column"))
    if dtype in ("int64", "int32") and x.dtype.is_floating:
        return tf.cast(checks.whole(x, name, "an integer column"), dtype)
    return tf.cast(x, dtype)


def _output(tf, checks, columns, op, sources, dtype, argument):
    x = columns[sources[0]]
    name = sources[0]
    if op == "as":
        return _as(tf, checks, x, name, dtype)
    if op == "stack":
        return tf.stack([tf.cast(columns[s], dtype) for s in sources], axis=1)
    if op == "lookup":
        labels = tf.constant(list(argument), tf.string)
        text = _as(tf, checks, x, name, "string")
        equal = tf.equal(tf.expand_dims(text, 1), tf.expand_dims(labels, 0))
        shown = ", ".join(map(repr, argument[:10])) + (", ..." if len(argument) > 10 else "")
        checks.require(tf.reduce_any(equal, axis=1), name,
                       f"not one of the classes the model knows ({shown})", text)
        return tf.argmax(tf.cast(equal, tf.int32), axis=1, output_type=tf.int64)
    if op == "ids":
        ids = checks.whole(x, name, "a class id")
        checks.require((ids >= 0) & (ids < argument), name,
                       f"not a class id in [0, {argument}) (n_classes = {argument})", ids)
        return ids
    weights = tf.cast(x, tf.float32)  # "weight"
    checks.require(weights >= 0, name, "a negative weight", weights)
    return weights


def _csv_columns(tf, plan, lines, checks):
    defaults = [tf.constant([], {"numeric": tf.float64, "integer": tf.int64,
                                 "string": tf.string}[kind]) for _, _, kind in plan.reads]
    values = tf.io.decode_csv(lines, defaults, field_delim=plan.delimiter,
                              select_cols=[position for _, position, _ in plan.reads])
    columns = {}
    for (name, _, kind), column in zip(plan.reads, values):
        if kind == "numeric":
            checks.require(tf.math.is_finite(column), name, "not a finite number", column)
        elif kind == "string" and plan.na:
            missing = tf.reduce_any(tf.stack([tf.equal(column, na) for na in plan.na]), axis=0)
            checks.require(~missing, name, "a missing value (one of `na`)", column)
        columns[name] = column
    return columns


def _chunk(tf, plan, path, index, records):
    """One chunk of a file's records as the batch's outputs, every value checked."""
    checks = _Checks(tf, path, index * CHUNK_ROWS + 1)
    if plan.file_format == "csv":
        columns = _csv_columns(tf, plan, records, checks)
    else:
        from pyhooks.estimators.tfrecord import parse_chunk

        columns = parse_chunk(tf, plan.reads, records, checks)
    outputs = {key: _output(tf, checks, columns, op, sources, dtype, argument)
               for key, op, sources, dtype, argument in plan.outputs}
    with tf.control_dependencies(checks.asserts):
        return {key: tf.identity(value) for key, value in outputs.items()}


def _widths(spec):
    return {key: int(np.prod(value.shape[1:])) for key, value in spec.items()}


def _pack(tf, outputs):
    """A chunk's outputs as one ``[rows, width]`` matrix per dtype (see :func:`_unpack`)."""
    by_dtype = {}
    for key in sorted(outputs):
        value = outputs[key]
        by_dtype.setdefault(value.dtype.name, []).append(
            tf.reshape(value, [tf.shape(value)[0], -1]))
    return {dtype: tf.concat(parts, axis=1) for dtype, parts in by_dtype.items()}


def _unpack(tf, packed, spec):
    widths, start, outputs = _widths(spec), {}, {}
    for key in sorted(spec):
        dtype = spec[key].dtype.name
        at = start.get(dtype, 0)
        part = packed[dtype][:, at:at + widths[key]]
        start[dtype] = at + widths[key]
        outputs[key] = tf.reshape(part, [-1, *spec[key].shape[1:]])
    return outputs


class FilePipeline(IteratorInput):
    """One graph's iterator over files (see the module docstring).

    Attributes:
        batch: ``{key: tensor}``, the next batch.
    """

    def __init__(self, tf, plan):
        v1 = tf.compat.v1
        self._plan = plan
        self._input = None
        self._files = v1.placeholder(tf.string, [None], name="files")
        self._batch_size = v1.placeholder(tf.int64, [], name="batch_size")
        self._epochs = v1.placeholder(tf.int64, [], name="num_epochs")
        self._buffer = v1.placeholder(tf.int64, [], name="shuffle_buffer")
        self._seed = v1.placeholder_with_default(tf.constant(0, tf.int64), [], name="seed")
        self._shuffle = v1.placeholder(tf.bool, [], name="shuffle")

        def records(path):
            lines = (tf.data.TextLineDataset(path).skip(1) if plan.file_format == "csv"
                     else tf.data.TFRecordDataset(path))
            return (lines.batch(CHUNK_ROWS).enumerate()
                    .map(lambda i, chunk: _chunk(tf, plan, path, i, chunk),
                         num_parallel_calls=tf.data.AUTOTUNE, deterministic=True))

        files = tf.data.Dataset.from_tensor_slices(self._files)
        count = tf.shape(self._files, out_type=tf.int64)[0]
        ordered = files.repeat(self._epochs).flat_map(records).rebatch(self._batch_size)
        spec = ordered.element_spec
        # the shuffle buffer holds rows: each row one tensor per dtype (a 21-tensor row cost
        # 2.7x the time per step of bench/bench_files.py's shuffled DNN)
        shuffled = (files.shuffle(count, seed=self._seed, reshuffle_each_iteration=True)
                    .repeat(self._epochs).flat_map(records).map(lambda c: _pack(tf, c))
                    .unbatch()
                    .shuffle(self._buffer, seed=self._seed, reshuffle_each_iteration=True)
                    .batch(self._batch_size).map(lambda p: _unpack(tf, p, spec)))
        iterator = v1.data.Iterator.from_structure(v1.data.get_output_types(ordered),
                                                   v1.data.get_output_shapes(ordered))
        self._initializers = {False: iterator.make_initializer(ordered.prefetch(1)),
                              True: iterator.make_initializer(shuffled.prefetch(1))}
        self.iterator = iterator
        self.batch = iterator.get_next()

    def start(self, session, plan, input_fn, training, epochs=None):
        """Initializes the iterator on ``input_fn``'s files for one call."""
        from pyhooks.estimators.pipeline import _SEEDS

        self._input = input_fn
        num_epochs = input_fn.num_epochs if epochs is None else epochs
        shuffle = bool(input_fn.shuffles(training))
        feed = {self._files: list(input_fn.files), self._batch_size: input_fn.batch_size,
                self._epochs: -1 if num_epochs is None else num_epochs,
                self._buffer: input_fn.shuffle_buffer()}
        if shuffle:
            feed[self._seed] = (input_fn.seed if input_fn.seed is not None
                                else int(_SEEDS.integers(1, 2**31 - 1)))
        session.run(self._initializers[shuffle], feed)

    @contextlib.contextmanager
    def errors(self):
        """A refused value as a ValueError naming the column, the file and the row."""
        from pyhooks.estimators._quiet import import_tensorflow

        tf = import_tensorflow()
        try:
            yield
        except tf.errors.InvalidArgumentError as error:
            found = self._explain(str(error))
            if found is None:
                raise
            raise found from error

    def _explain(self, message):
        match = _FOUND.search(message)
        if match is not None:
            name, path, row, problem, value = match.groups()
            value = value.split("]")[0].strip().strip("\"'")
            line = f" (line {int(row) + 1})" if self._plan.file_format == "csv" else ""
            what = "row" if self._plan.file_format == "csv" else "record"
            return ValueError(f"Column {name!r} of file {path!r} holds {value!r} at {what} "
                              f"{row}{line}: {problem}.")
        if self._plan.file_format == "csv" and self._input is not None and (
                "Field" in message or "fields" in message or "Quote" in message):
            from pyhooks.estimators.files import locate_csv_problem

            return locate_csv_problem(self._input)
        return None
