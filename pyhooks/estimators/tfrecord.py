"""TFRecord files of ``tf.Example`` records as an ``input_fn()`` (see :mod:`pyhooks.estimators.files`).

The records are parsed with a parsing spec (``parse_example_spec`` & co. of
:mod:`pyhooks.estimators.parsing`, or TensorFlow's ``FixedLenFeature`` /
``VarLenFeature``). pyhooks' models read a fixed number of values per example:
a ``FixedLenFeature`` of shape ``[]`` or ``[1]`` is one value, of shape ``[k]``
a row of ``k`` numbers; a ``VarLenFeature`` (what the specs give categorical
columns) must hold exactly one value in every record, else the call stops
with an error naming the feature, the file and the record. A record without a
``FixedLenFeature`` that has no default is refused by TensorFlow's parser.
Numbers must be finite. Records are counted from 1 in messages.
"""

from __future__ import annotations

import os

import numpy as np

from pyhooks.estimators._quiet import import_tensorflow

__all__ = ["feature_tuple", "parse_chunk", "tfrecord_input"]

_KINDS = {"float32": "numeric", "float64": "numeric", "int64": "integer", "string": "string"}


def feature_tuple(feature):
    """A parsing spec's feature as a hashable tuple: ``("fixed", dtype, shape, default)`` or
    ``("var", dtype)``."""
    tf = import_tensorflow()
    if isinstance(feature, tf.io.FixedLenFeature):
        default = feature.default_value
        if default is not None:
            default = np.asarray(default).tolist()
            default = tuple(default) if isinstance(default, list) else default
        return ("fixed", feature.dtype.name, tuple(int(d) for d in feature.shape), default)
    if isinstance(feature, tf.io.VarLenFeature):
        return ("var", feature.dtype.name)
    raise TypeError(f"`example_spec` must hold tf.io.FixedLenFeature or VarLenFeature values, "
                    f"got {feature!r}.")


def _spec(tf, reads):
    spec = {}
    for name, (kind, dtype, *rest) in reads:
        if kind == "var":
            spec[name] = tf.io.VarLenFeature(tf.as_dtype(dtype))
        else:
            shape, default = rest
            spec[name] = tf.io.FixedLenFeature(list(shape), tf.as_dtype(dtype), default)
    return spec


def parse_chunk(tf, reads, records, checks):
    """``{name: tensor [n] or [n, k]}`` of a chunk of serialized records, checked."""
    parsed = tf.io.parse_example(records, _spec(tf, reads))
    columns = {}
    for name, (kind, *_) in reads:
        value = parsed[name]
        if kind == "var":
            rows = tf.shape(records, out_type=tf.int64)[0]
            counts = tf.math.bincount(tf.cast(value.indices[:, 0], tf.int32),
                                      minlength=tf.cast(rows, tf.int32),
                                      maxlength=tf.cast(rows, tf.int32), dtype=tf.int64)
            checks.require(tf.equal(counts, 1), name, "the number of values in this record; "
                           "the model reads exactly one per example", counts)
            with tf.control_dependencies(checks.asserts[-1:]):
                value = tf.reshape(tf.sparse.to_dense(value), [-1])
        elif value.shape.rank == 2 and value.shape[1] == 1:
            value = tf.reshape(value, [-1])
        if value.dtype.is_floating:
            checks.require(tf.math.is_finite(value), name, "not a finite number", value)
        columns[name] = value
    return columns


def _sample(tf, path, reads, guess_rows):
    """The first ``guess_rows`` records of ``path`` as numpy columns, checked as the stream is."""
    class Eager:  # the stream's checks, raised at once
        asserts = []

        def require(self, ok, name, problem, values):
            ok = np.asarray(ok).reshape(len(ok), -1).all(axis=1)
            if not ok.all():
                at = int(np.flatnonzero(~ok)[0])
                value = np.asarray(values).reshape(len(values), -1)[at][0]
                value = value.decode() if isinstance(value, bytes) else value.item()
                raise ValueError(f"Column {name!r} of file {path!r} holds {value!r} at record "
                                 f"{at + 1}: {problem}.")

    records = list(tf.data.TFRecordDataset(path).take(guess_rows).as_numpy_iterator())
    if not records:
        raise ValueError(f"TFRecord file {path!r} holds no records.")
    try:
        columns = parse_chunk(tf, reads, tf.constant(records), Eager())
    except tf.errors.InvalidArgumentError as error:
        detail = str(error).strip().splitlines()[0]
        raise ValueError(f"TFRecord file {path!r}: its first records do not parse with "
                         f"`example_spec`: {detail}") from None
    sample = {}
    for name, value in columns.items():
        array = value.numpy()
        sample[name] = array.astype(str) if array.dtype == object else array
    return sample


def tfrecord_input(files, wanted, example_spec, guess_rows):
    """``(sample, {column: kind})`` of TFRecord ``files`` (the first file's first records)."""
    if not isinstance(example_spec, dict):
        raise TypeError(f"`example_spec` must be a parsing spec (a dict of feature -> "
                        f"FixedLenFeature/VarLenFeature, e.g. regressor_parse_example_spec()), "
                        f"got {example_spec!r}.")
    missing = [name for name in wanted if name not in example_spec]
    if missing:
        raise ValueError(f"`features`/`response`: no feature {', '.join(map(repr, missing))} in "
                         f"`example_spec`; it has: {', '.join(map(str, example_spec))}.")
    for path in files:
        if os.path.getsize(path) == 0:
            raise ValueError(f"TFRecord file {path!r} is empty.")
    tf = import_tensorflow()
    reads = tuple((name, feature_tuple(example_spec[name])) for name in wanted)
    types = {}
    for name, feature in reads:
        if feature[1] not in _KINDS:
            raise TypeError(f"`example_spec` of {name!r} has type {feature[1]}; pyhooks reads "
                            "float32, int64 or string features.")
        types[name] = _KINDS[feature[1]]
    return _sample(tf, files[0], reads, guess_rows), types
