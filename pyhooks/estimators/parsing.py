"""Parsing specs for ``tf.io.parse_example``, as ``tf.estimator``'s parsing utilities made them.

Data kept as ``tf.Example`` records is read with ``tf.io.parse_example(records,
spec)``; the spec names, for each feature the model's columns read, and for
the label and the example weight, how to parse it. These functions build it
from feature columns as ``tf.estimator.classifier_parse_example_spec`` and
``regressor_parse_example_spec`` did: numbers as ``FixedLenFeature`` of the
column's shape, categorical values as ``VarLenFeature``, the label as a
``FixedLenFeature`` of ``label_dtype``, a weight column as one float.

pyhooks trains from data in memory (:func:`~pyhooks.estimators.input_fn`):
parse the records with the spec (eagerly, e.g. over a
``tf.data.TFRecordDataset``), turn the parsed tensors into arrays, and give
those to ``input_fn()``.

Example:
    >>> spec = classifier_parse_example_spec(column_numeric("a"), "b", weight_column="c")
    >>> features = tf.io.parse_example(records, spec)   # {"a": ..., "b": ..., "c": ...}
"""

from __future__ import annotations

import math
import numbers

from pyhooks.estimators._quiet import import_tensorflow
from pyhooks.estimators._sizes import check_fits_memory
from pyhooks.timer import check_positive
from pyhooks.estimators.feature_columns import (
    INT,
    BucketizedColumn,
    CrossedColumn,
    EmbeddingColumn,
    FeatureColumn,
    HashBucketColumn,
    IndicatorColumn,
    NumericColumn,
    WeightedCategoricalColumn,
    _check_key,
)

__all__ = ["classifier_parse_example_spec", "parse_example_spec",
           "regressor_parse_example_spec"]


def _column_spec(tf, column):
    """``{key: feature}`` for the raw inputs one column reads."""
    if isinstance(column, NumericColumn):
        dtype = tf.int64 if "int" in column.dtype else tf.float32
        default = column.default_value
        if default is not None:  # the value for every element of the shape, as TensorFlow's
            default = int(default) if dtype == tf.int64 else float(default)
            for size in reversed(column.shape):
                default = (default,) * size
        return {column.key: tf.io.FixedLenFeature(column.shape, dtype, default)}
    if isinstance(column, BucketizedColumn):
        return _column_spec(tf, column.source_column)
    if isinstance(column, (IndicatorColumn, EmbeddingColumn)):
        return _column_spec(tf, column.categorical_column)
    if isinstance(column, WeightedCategoricalColumn):
        return _merge(_column_spec(tf, column.categorical_column),
                      {column.weight_feature_key: tf.io.VarLenFeature(tf.float32)})
    if isinstance(column, CrossedColumn):
        spec = {}
        for key in column.keys:
            spec = _merge(spec, {key: tf.io.VarLenFeature(tf.string)} if isinstance(key, str)
                          else _column_spec(tf, key))
        return spec
    if isinstance(column, HashBucketColumn):
        dtype = tf.string if column.dtype == "string" else tf.int64
        return {column.key: tf.io.VarLenFeature(dtype)}
    # a vocabulary (list or file) or identity column: one categorical input
    (key, kind), = column.raw_inputs()
    return {key: tf.io.VarLenFeature(tf.int64 if kind == INT else tf.string)}


def _merge(spec, more):
    for key, feature in more.items():
        if key in spec and spec[key] != feature:
            raise ValueError(f"Feature {key!r} is parsed two ways by the feature columns: "
                             f"{spec[key]} and {feature}.")
        spec[key] = feature
    return spec


def _columns(feature_columns):
    if isinstance(feature_columns, FeatureColumn):
        feature_columns = [feature_columns]
    if isinstance(feature_columns, (str, bytes)) or not hasattr(feature_columns, "__iter__"):
        raise TypeError(f"`feature_columns` must be feature columns, got {feature_columns!r}.")
    columns = list(feature_columns)
    for column in columns:
        if not isinstance(column, FeatureColumn):
            raise TypeError(f"`feature_columns` must be feature columns (column_*()), got "
                            f"{column!r}.")
    if not columns:
        raise ValueError("`feature_columns` must hold at least one feature column.")
    return columns


def parse_example_spec(feature_columns):
    """``{feature key: tf.io.FixedLenFeature or VarLenFeature}`` for ``feature_columns``.

    As ``tf.feature_column.make_parse_example_spec``. Raises ValueError when
    two columns read one feature with different specs.
    """
    tf = import_tensorflow()
    spec = {}
    for column in _columns(feature_columns):
        spec = _merge(spec, _column_spec(tf, column))
    return spec


def _dtype(tf, name, value):
    try:  # a number would be read as a type's code (1 is float32): names and types only
        if isinstance(value, (str, tf.DType)):
            return tf.as_dtype(value)
    except TypeError:
        pass
    raise TypeError(f"`{name}` must be a TensorFlow type or its name (e.g. 'int64', "
                    f"'string'), got {value!r}.")


def _label_default(tf, value, dtype, dimension):
    """``label_default`` checked against the label's type and size (one value per dimension)."""
    if value is None:
        return None
    values = list(value) if isinstance(value, (list, tuple)) else [value]

    def fits(v):
        if dtype == tf.string:
            return isinstance(v, (str, bytes))
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or math.isnan(v):
            return False
        return not dtype.is_integer or float(v).is_integer()
    if len(values) != dimension or not all(fits(v) for v in values):
        kind = "string" if dtype == tf.string else "whole number" if dtype.is_integer else "number"
        raise TypeError(f"`label_default` must be {dimension} {kind}{'s' if dimension > 1 else ''}"
                        f" (a label of type {dtype.name}), or None, got {value!r}.")
    if dtype.is_integer:
        values = [int(v) for v in values]
    return values[0] if dimension == 1 else tuple(values)


def _with_label_and_weight(feature_columns, label_key, label_feature, weight_column):
    tf = import_tensorflow()
    spec = parse_example_spec(feature_columns)
    label_key = _check_key("label_key", label_key)
    if label_key in spec:
        raise ValueError(f"`label_key` {label_key!r} is also a feature of `feature_columns`: the "
                         f"label must not be used as a feature.")
    spec[label_key] = label_feature(tf)
    if weight_column is not None:
        if isinstance(weight_column, str):
            weight_column = NumericColumn(_check_key("weight_column", weight_column))
        if not isinstance(weight_column, NumericColumn):
            raise TypeError(f"`weight_column` must be a column name or a column_numeric(), got "
                            f"{weight_column!r}.")
        if weight_column.key in spec:
            raise ValueError(f"`weight_column` {weight_column.key!r} is also the label or a "
                             f"feature: the weight must be a column of its own.")
        spec.update(_column_spec(tf, weight_column))
    return spec


def classifier_parse_example_spec(feature_columns, label_key, label_dtype="int64",
                                  label_default=None, weight_column=None):
    """The parsing spec of ``feature_columns``, a classifier's label and its weight column.

    Args:
        feature_columns: feature columns (or one).
        label_key: the label's name in the records.
        label_dtype: the label's type: ``"int64"`` (class ids) or ``"string"``
            (class names, with the classifier's ``label_vocabulary``).
        label_default: the label's value where a record has none (None: required).
        weight_column: the name (or ``column_numeric()``) of the example weights, or None.

    Returns:
        a dict for ``tf.io.parse_example``: the features', the label's
        (``FixedLenFeature([1], label_dtype)``) and the weight's specs.
    """
    def label(tf):
        dtype = _dtype(tf, "label_dtype", label_dtype)
        return tf.io.FixedLenFeature((1,), dtype, _label_default(tf, label_default, dtype, 1))
    return _with_label_and_weight(feature_columns, label_key, label, weight_column)


def regressor_parse_example_spec(feature_columns, label_key, label_dtype="float32",
                                 label_default=None, label_dimension=1, weight_column=None):
    """The parsing spec of ``feature_columns``, a regressor's label and its weight column.

    As :func:`classifier_parse_example_spec`, with a label of ``label_dimension``
    numbers (``FixedLenFeature([label_dimension], label_dtype)``).
    """
    dimension = check_positive("label_dimension", label_dimension, integer=True,
                               allow_none=False)
    check_fits_memory("label_dimension", dimension)

    def label(tf):
        dtype = _dtype(tf, "label_dtype", label_dtype)
        return tf.io.FixedLenFeature((dimension,), dtype,
                                     _label_default(tf, label_default, dtype, dimension))
    return _with_label_and_weight(feature_columns, label_key, label, weight_column)
