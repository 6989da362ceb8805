"""Feature columns: how raw input columns become the model's input tensors.

A small, self-contained re-implementation of TensorFlow's feature columns for
column-oriented data (one value per example and column), built from plain
TensorFlow ops in the estimator's graph. Constructing columns imports no
TensorFlow; the graph parts run when an estimator builds its graph.

Two families, as in TensorFlow:

* dense columns give a ``float32 [batch, d]`` tensor: :func:`column_numeric`,
  :func:`column_indicator`, :func:`column_embedding`, :func:`column_bucketized`;
* categorical columns give one integer id per example in ``[0, num_buckets)``
  (``-1``: no id, which contributes nothing): :func:`column_categorical_with_vocabulary_list`,
  :func:`column_categorical_with_identity`, :func:`column_categorical_with_hash_bucket`,
  :func:`column_crossed`, :func:`column_bucketized`.

Linear models take both families (a categorical column gets one weight per
bucket); DNN models take dense columns only (wrap a categorical column in
:func:`column_indicator` or :func:`column_embedding`).

Example:
    >>> fcs = feature_columns(column_numeric("drat"),
    ...                       column_indicator(column_categorical_with_identity("cyl", 9)))
"""

from __future__ import annotations

import io
import math
import numbers

from pyhooks.estimators._sizes import check_fits_memory
from pyhooks.hooks._common import one_of
from pyhooks.timer import check_positive

__all__ = [
    "FeatureColumn",
    "column_bucketized",
    "column_categorical_with_hash_bucket",
    "column_categorical_with_identity",
    "column_categorical_weighted",
    "column_categorical_with_vocabulary_file",
    "column_categorical_with_vocabulary_list",
    "column_crossed",
    "column_embedding",
    "column_indicator",
    "column_numeric",
    "feature_columns",
]

# Kinds of raw input a column needs: the input column is converted to this.
FLOAT, INT, STR, STR_OR_INT = "float", "int", "str", "str_or_int"


def _check_key(name, key):
    if not isinstance(key, str) or not key:
        raise TypeError(f"`{name}` must be a non-empty string (a column name), got {key!r}.")
    return key


class FeatureColumn:
    """Base of all feature columns (immutable once built).

    Attributes:
        name: the column's name, used in variable names and error messages.
    """

    is_dense = False
    is_categorical = False
    name = ""

    def raw_inputs(self):
        """``[(key, kind)]`` of the raw input columns this column reads."""
        raise NotImplementedError

    def input_dimension(self, key):
        """How many values per example this column reads from input column ``key`` (1)."""
        return 1

    def check_data(self, key, values):
        """Extra validation of a converted input column (raises ValueError)."""

    def __repr__(self):
        fields = ", ".join(f"{k}={v!r}" for k, v in self._repr_fields())
        return f"{type(self).__name__}({fields})"

    def _repr_fields(self):
        return [("name", self.name)]


class _Categorical(FeatureColumn):
    is_categorical = True
    num_buckets = 0
    can_miss = False  # True if ids() may give -1 (no bucket)

    def ids(self, ctx):  # pragma: no cover - abstract
        raise NotImplementedError


class NumericColumn(FeatureColumn):
    is_dense = True

    def __init__(self, key, shape=(1,), default_value=None, dtype="float32", normalizer_fn=None):
        self.key = self.name = _check_key("key", key)
        if hasattr(shape, "as_list"):  # a tf.TensorShape (R: shape(784L))
            shape = list(shape)
        dims = tuple(shape) if isinstance(shape, (list, tuple)) else (shape,)
        if not dims:
            raise ValueError(f"`shape` must be one or more positive whole numbers, got {shape!r}.")
        self.shape = tuple(check_positive("shape", d, integer=True, allow_none=False)
                           for d in dims)
        # a tf.DType's flags are booleans (a float's is_integer is a method: not a dtype)
        numeric_type = (getattr(dtype, "is_floating", False) is True
                        or getattr(dtype, "is_integer", False) is True)
        if not one_of(dtype, ("float32", "float64", "float", "double", "int32", "int64", None)) and \
                not numeric_type:
            raise ValueError(f"`dtype` must be a numeric type, got {dtype!r}.")
        if default_value is not None and (isinstance(default_value, bool) or not isinstance(
                default_value, numbers.Real)):
            raise TypeError(f"`default_value` must be a number or None, got {default_value!r}.")
        if normalizer_fn is not None and not callable(normalizer_fn):
            raise TypeError(f"`normalizer_fn` must be a function or None, got {normalizer_fn!r}.")
        self.default_value = default_value
        self.normalizer_fn = normalizer_fn
        self.dtype = str(getattr(dtype, "name", dtype) or "float32")
        self.dimension = math.prod(self.shape)

    def raw_inputs(self):
        return [(self.key, FLOAT)]

    def input_dimension(self, key):
        return self.dimension

    def dense(self, ctx):
        tf = ctx.tf
        x = ctx.raw(self.key, FLOAT)
        if self.normalizer_fn is not None:
            x = tf.cast(self.normalizer_fn(x), tf.float32)
        return tf.reshape(x, [-1, self.dimension])

    def _repr_fields(self):
        if self.dimension == 1:
            return [("key", self.key)]
        return [("key", self.key), ("shape", self.shape)]


class VocabularyListColumn(_Categorical):
    def __init__(self, key, vocabulary_list, dtype=None, default_value=-1, num_oov_buckets=0):
        self.key = self.name = _check_key("key", key)
        # a dict, a data frame (its column names) or a file (its lines) are not a vocabulary
        if isinstance(vocabulary_list, (dict, io.IOBase)) or hasattr(vocabulary_list, "columns"):
            raise TypeError(f"`vocabulary_list` of column {key!r} must be a list of strings or "
                            f"whole numbers, got {vocabulary_list!r}.")
        if isinstance(vocabulary_list, (str, bytes)) or not hasattr(vocabulary_list, "__iter__"):
            vocabulary_list = [vocabulary_list]
        vocab = [v.item() if hasattr(v, "item") else v for v in vocabulary_list]
        if not vocab:
            raise ValueError(f"`vocabulary_list` of column {key!r} must not be empty.")
        if all(isinstance(v, str) for v in vocab):
            self.kind = STR
        elif any(isinstance(v, bool) for v in vocab):
            raise TypeError(f"`vocabulary_list` of column {key!r} must be all strings or all "
                            f"whole numbers, got {vocabulary_list!r}.")
        elif all(isinstance(v, numbers.Integral) for v in vocab):
            self.kind = INT
        elif all(isinstance(v, numbers.Real) and float(v).is_integer() for v in vocab):
            vocab = [int(v) for v in vocab]  # R's c(4, 6, 8)
            self.kind = INT
        else:
            raise TypeError(f"`vocabulary_list` of column {key!r} must be all strings or all "
                            f"whole numbers, got {vocabulary_list!r}.")
        if len(set(vocab)) != len(vocab):
            dupes = sorted({v for v in vocab if vocab.count(v) > 1}, key=str)
            raise ValueError(f"`vocabulary_list` of column {key!r} has duplicates: {dupes}.")
        if dtype is not None:
            want = getattr(dtype, "name", dtype)  # a tf.DType or its name
            if not isinstance(want, str):
                raise TypeError(f"`dtype` must be a type name such as 'string' or 'int64', or "
                                f"None, got {dtype!r}.")
            if (want == "string") != (self.kind == STR):
                raise ValueError(f"`dtype` {want!r} does not match `vocabulary_list` {vocab!r}.")
        self.vocabulary = vocab
        self.num_oov_buckets = check_positive("num_oov_buckets", num_oov_buckets, integer=True,
                                              allow_zero=True, allow_none=False)
        check_fits_memory("num_oov_buckets", self.num_oov_buckets)
        if default_value is None:
            default_value = -1
        if (isinstance(default_value, bool) or not isinstance(default_value, numbers.Real)
                or not float(default_value).is_integer()):
            raise ValueError(f"`default_value` must be a whole number, got {default_value!r}.")
        self.default_value = int(default_value)
        if self.num_oov_buckets and self.default_value != -1:
            raise ValueError("Can't specify both `default_value` and `num_oov_buckets`.")
        self.num_buckets = len(vocab) + self.num_oov_buckets
        self.can_miss = self.num_oov_buckets == 0 and self.default_value == -1

    def raw_inputs(self):
        return [(self.key, self.kind)]

    def ids(self, ctx):
        from tensorflow.python.ops import lookup_ops

        tf = ctx.tf
        with tf.init_scope():  # in the graph itself, also from a steps loop's body
            table = lookup_ops.index_table_from_tensor(
                vocabulary_list=tf.constant(self.vocabulary,
                                            dtype=tf.string if self.kind == STR else tf.int64),
                num_oov_buckets=self.num_oov_buckets, default_value=self.default_value,
                dtype=tf.string if self.kind == STR else tf.int64,
                name=f"{scope_name(self.name)}_lookup")
        return table.lookup(ctx.raw(self.key, self.kind))

    def _repr_fields(self):
        return [("key", self.key), ("vocabulary_list", self.vocabulary)]


class IdentityColumn(_Categorical):
    def __init__(self, key, num_buckets, default_value=None):
        self.key = self.name = _check_key("key", key)
        self.num_buckets = check_positive("num_buckets", num_buckets, integer=True,
                                          allow_none=False)
        check_fits_memory("num_buckets", self.num_buckets)
        if default_value is not None:
            default_value = check_positive("default_value", default_value, integer=True,
                                           allow_zero=True)
            if default_value >= self.num_buckets:
                raise ValueError(f"`default_value` {default_value} not in [0, "
                                 f"{self.num_buckets}).")
        self.default_value = default_value

    def raw_inputs(self):
        return [(self.key, INT)]

    def check_data(self, key, values):
        if self.default_value is None and values.size:
            bad = (values < 0) | (values >= self.num_buckets)
            if bad.any():
                first = values[bad][0]
                raise ValueError(
                    f"Column {key!r}: column_categorical_with_identity(num_buckets="
                    f"{self.num_buckets}) needs values in [0, {self.num_buckets}), got {first.item()!r} "
                    f"({int(bad.sum())} value(s) out of range). Give `default_value` to map "
                    "them to a bucket.")

    def ids(self, ctx):
        tf = ctx.tf
        x = ctx.raw(self.key, INT)
        if self.default_value is None:
            return x
        inside = tf.logical_and(x >= 0, x < self.num_buckets)
        return tf.where(inside, x, tf.fill(tf.shape(x), tf.constant(self.default_value, tf.int64)))

    def _repr_fields(self):
        return [("key", self.key), ("num_buckets", self.num_buckets)]


class HashBucketColumn(_Categorical):
    def __init__(self, key, hash_bucket_size, dtype="string"):
        self.key = self.name = _check_key("key", key)
        name = getattr(dtype, "name", dtype)  # a tf.DType or its name
        if not isinstance(name, str) or name not in ("string", "int32", "int64"):
            raise TypeError(f"`dtype` must be 'string', 'int32' or 'int64', got {dtype!r}.")
        self.dtype = name
        self.num_buckets = check_positive("hash_bucket_size", hash_bucket_size, integer=True,
                                          allow_none=False)
        check_fits_memory("hash_bucket_size", self.num_buckets)
        if self.num_buckets < 2:
            raise ValueError(f"`hash_bucket_size` must be at least 2, got {hash_bucket_size!r}.")
        self.hash_bucket_size = self.num_buckets

    def raw_inputs(self):
        return [(self.key, STR_OR_INT)]

    def ids(self, ctx):
        tf = ctx.tf
        return tf.strings.to_hash_bucket_fast(ctx.raw_as_string(self.key), self.num_buckets)

    def _repr_fields(self):
        return [("key", self.key), ("hash_bucket_size", self.num_buckets)]


class BucketizedColumn(_Categorical):
    is_dense = True

    def __init__(self, source_column, boundaries):
        if not isinstance(source_column, NumericColumn):
            raise TypeError("`source_column` must be a column_numeric(), got "
                            f"{source_column!r}.")
        if source_column.dimension != 1:
            raise ValueError("`source_column` must hold one value per example, got shape "
                             f"{source_column.shape} ({source_column.name!r}).")
        if isinstance(boundaries, numbers.Real):
            boundaries = [boundaries]
        try:
            if isinstance(boundaries, (str, bytes, dict)) or any(
                    isinstance(b, (bool, str, bytes)) for b in boundaries):
                raise TypeError
            bounds = [float(b) for b in boundaries]
        except (TypeError, ValueError):
            raise TypeError(f"`boundaries` must be numbers, got {boundaries!r}.") from None
        if not bounds or any(math.isnan(b) for b in bounds) or any(
                a >= b for a, b in zip(bounds, bounds[1:])):
            raise ValueError(f"`boundaries` must be a non-empty, strictly increasing list of "
                             f"numbers, got {boundaries!r}.")
        self.source_column = source_column
        self.boundaries = bounds
        self.name = f"{source_column.name}_bucketized"
        self.num_buckets = self.dimension = len(bounds) + 1

    def raw_inputs(self):
        return self.source_column.raw_inputs()

    def ids(self, ctx):
        tf = ctx.tf
        x = tf.reshape(ctx.transform(self.source_column), [-1])
        return tf.cast(tf.raw_ops.Bucketize(input=x, boundaries=self.boundaries), tf.int64)

    def dense(self, ctx):
        return ctx.tf.one_hot(ctx.ids(self), self.num_buckets, dtype=ctx.tf.float32)

    def _repr_fields(self):
        return [("source_column", self.source_column), ("boundaries", self.boundaries)]


class CrossedColumn(_Categorical):
    def __init__(self, keys, hash_bucket_size, hash_key=None):
        if isinstance(keys, (str, FeatureColumn)):
            keys = [keys]
        if not isinstance(keys, (list, tuple)):
            raise TypeError(f"`keys` must be column names or categorical columns, got {keys!r} "
                            f"({type(keys).__name__}).")
        keys = list(keys)
        if len(keys) < 2:
            raise ValueError(f"`keys` must name at least two columns to cross, got {keys!r}.")
        for key in keys:
            if isinstance(key, str):
                _check_key("keys", key)
            elif not isinstance(key, _Categorical) or isinstance(key, HashBucketColumn):
                raise TypeError("`keys` must be column names or categorical columns (not hashed "
                                f"ones), got {key!r}.")
        self.keys = keys
        self.num_buckets = check_positive("hash_bucket_size", hash_bucket_size, integer=True,
                                          allow_none=False)
        check_fits_memory("hash_bucket_size", self.num_buckets)
        self.hash_bucket_size = self.num_buckets
        if hash_key is not None:
            hash_key = check_positive("hash_key", hash_key, integer=True, allow_zero=True)
        self.hash_key = hash_key
        self.name = "_X_".join(sorted(k if isinstance(k, str) else k.name for k in keys))

    def raw_inputs(self):
        found = []
        for key in self.keys:
            found.extend([(key, STR_OR_INT)] if isinstance(key, str) else key.raw_inputs())
        return found

    def check_data(self, key, values):
        for column in self.keys:
            if not isinstance(column, str) and key in (k for k, _ in column.raw_inputs()):
                column.check_data(key, values)

    def ids(self, ctx):
        tf = ctx.tf
        parts = []
        for key in self.keys:
            if isinstance(key, str):
                parts.append(ctx.raw_as_string(key))
            else:
                parts.append(tf.strings.as_string(ctx.ids(key)))
        joined = tf.strings.join(parts, separator="\x1f")
        return tf.strings.to_hash_bucket_fast(joined, self.num_buckets)

    def _repr_fields(self):
        return [("keys", self.keys), ("hash_bucket_size", self.num_buckets)]


class VocabularyFileColumn(VocabularyListColumn):
    """A vocabulary list read from a file, one value per line (read when the column is made)."""

    def __init__(self, key, vocabulary_file, vocabulary_size=None, num_oov_buckets=0,
                 default_value=None, dtype="string"):
        _check_key("key", key)
        if not isinstance(vocabulary_file, str) or not vocabulary_file:
            raise TypeError(f"`vocabulary_file` must be a file path, got {vocabulary_file!r}.")
        try:
            with open(vocabulary_file, encoding="utf-8") as handle:
                values = [line.rstrip("\r\n") for line in handle]
        except OSError as error:
            raise ValueError(f"`vocabulary_file` {vocabulary_file!r} cannot be read: "
                             f"{error.strerror}.") from error
        while values and values[-1] == "":
            values.pop()
        if vocabulary_size is not None:
            vocabulary_size = check_positive("vocabulary_size", vocabulary_size, integer=True)
            check_fits_memory("vocabulary_size", vocabulary_size)
            if vocabulary_size > len(values):
                raise ValueError(f"`vocabulary_size` {vocabulary_size} is more than the "
                                 f"{len(values)} values of {vocabulary_file!r}.")
            values = values[:vocabulary_size]
        want = str(getattr(dtype, "name", dtype))
        if want not in ("string", "int32", "int64"):
            raise ValueError(f"`dtype` must be 'string', 'int32' or 'int64', got {dtype!r}.")
        if want != "string":
            try:
                values = [int(v) for v in values]
            except ValueError:
                raise ValueError(f"`vocabulary_file` {vocabulary_file!r} must hold whole numbers "
                                 f"for dtype {want!r}.") from None
        super().__init__(key, values, None, -1 if default_value is None else default_value,
                         num_oov_buckets)
        self.vocabulary_file = vocabulary_file

    def _repr_fields(self):
        return [("key", self.key), ("vocabulary_file", self.vocabulary_file)]


class WeightedCategoricalColumn(_Categorical):
    """A categorical column whose id of each example counts ``weight_feature_key``'s value times."""

    def __init__(self, categorical_column, weight_feature_key, dtype="float32"):
        if not isinstance(categorical_column, _Categorical) or isinstance(
                categorical_column, WeightedCategoricalColumn):
            raise TypeError("`categorical_column` must be a categorical column (column_categorical_"
                            f"*), got {categorical_column!r}.")
        self.categorical_column = categorical_column
        self.weight_feature_key = _check_key("weight_feature_key", weight_feature_key)
        if str(getattr(dtype, "name", dtype)) not in ("float32", "float64", "float", "double"):
            raise ValueError(f"`dtype` must be a float type, got {dtype!r}.")
        self.num_buckets = categorical_column.num_buckets
        self.can_miss = getattr(categorical_column, "can_miss", True)
        self.name = f"{categorical_column.name}_weighted_by_{weight_feature_key}"

    def raw_inputs(self):
        return [*self.categorical_column.raw_inputs(), (self.weight_feature_key, FLOAT)]

    def ids(self, ctx):
        return ctx.ids(self.categorical_column)

    def id_weights(self, ctx):
        """``float32 [batch]``: each example's weight."""
        return ctx.raw(self.weight_feature_key, FLOAT)

    def _repr_fields(self):
        return [("categorical_column", self.categorical_column),
                ("weight_feature_key", self.weight_feature_key)]


def _weighted(tf, ctx, column, dense):
    """``dense`` times the example weights of a weighted categorical column (else as it is)."""
    if isinstance(column, WeightedCategoricalColumn):
        return dense * tf.expand_dims(column.id_weights(ctx), 1)
    return dense


class IndicatorColumn(FeatureColumn):
    is_dense = True

    def __init__(self, categorical_column):
        if not isinstance(categorical_column, _Categorical):
            raise TypeError("`categorical_column` must be a categorical column (column_categorical_"
                            f"*, column_bucketized or column_crossed), got {categorical_column!r}.")
        self.categorical_column = categorical_column
        self.name = f"{categorical_column.name}_indicator"
        self.dimension = categorical_column.num_buckets

    def raw_inputs(self):
        return self.categorical_column.raw_inputs()

    def check_data(self, key, values):
        self.categorical_column.check_data(key, values)

    def dense(self, ctx):
        tf = ctx.tf
        found = tf.one_hot(ctx.ids(self.categorical_column), self.dimension, dtype=tf.float32)
        return _weighted(tf, ctx, self.categorical_column, found)

    def _repr_fields(self):
        return [("categorical_column", self.categorical_column)]


class EmbeddingColumn(FeatureColumn):
    is_dense = True

    def __init__(self, categorical_column, dimension, combiner="mean", initializer=None,
                 max_norm=None, trainable=True):
        if not isinstance(categorical_column, _Categorical):
            raise TypeError("`categorical_column` must be a categorical column (column_categorical_"
                            f"*, column_bucketized or column_crossed), got {categorical_column!r}.")
        if not one_of(combiner, ("mean", "sqrtn", "sum")):
            raise ValueError(f"`combiner` must be 'mean', 'sqrtn' or 'sum', got {combiner!r}.")
        if initializer is not None and not callable(initializer):
            raise TypeError(f"`initializer` must be an initializer or None, got {initializer!r}.")
        if not isinstance(trainable, bool):
            raise TypeError(f"`trainable` must be True or False, got {trainable!r}.")
        self.categorical_column = categorical_column
        self.dimension = check_positive("dimension", dimension, integer=True, allow_none=False)
        check_fits_memory("dimension", self.dimension)
        self.combiner = combiner  # one id per example: every combiner gives the same result
        self.initializer = initializer
        self.max_norm = check_positive("max_norm", max_norm, integer=False)
        self.trainable = trainable
        self.name = f"{categorical_column.name}_embedding"

    def raw_inputs(self):
        return self.categorical_column.raw_inputs()

    def check_data(self, key, values):
        self.categorical_column.check_data(key, values)

    def dense(self, ctx):
        tf = ctx.tf
        initializer = self.initializer or tf.compat.v1.truncated_normal_initializer(
            mean=0.0, stddev=1.0 / math.sqrt(self.dimension))
        table = ctx.variable(f"{scope_name(self.name)}/embedding_weights",
                             [self.categorical_column.num_buckets, self.dimension],
                             initializer, trainable=self.trainable)
        ids = ctx.ids(self.categorical_column)
        found = tf.nn.embedding_lookup(table, tf.maximum(ids, 0), max_norm=self.max_norm)
        found *= tf.cast(tf.expand_dims(ids >= 0, 1), tf.float32)
        if self.combiner == "sum":  # one id: 'mean' and 'sqrtn' divide its weight out again
            found = _weighted(tf, ctx, self.categorical_column, found)
        return found

    def _repr_fields(self):
        return [("categorical_column", self.categorical_column), ("dimension", self.dimension)]


def scope_name(name):
    """A column name as a valid TensorFlow scope name (of its variables in checkpoints).

    Characters TensorFlow refuses become ``_``; a name with others than ASCII
    (``größe``) also gets a short hash of itself, so that two such names stay apart.
    """
    import re
    import zlib

    cleaned = re.sub(r"[^A-Za-z0-9_.\-/]", "_", name)
    if not name.isascii():
        cleaned += f"_{zlib.crc32(name.encode()):08x}"
    return cleaned if cleaned[:1].isalnum() or cleaned[:1] == "." else f"c{cleaned}"


def _identity(value):
    """What makes two feature columns the same column: their type and fields, recursively."""
    if isinstance(value, FeatureColumn):
        return (type(value).__name__,
                tuple((k, _identity(v)) for k, v in sorted(vars(value).items())))
    if isinstance(value, (list, tuple)):
        return tuple(_identity(v) for v in value)
    if callable(value):
        return ("function", id(value))
    return repr(value)


# --------------------------------------------------------------------------- constructors
def column_numeric(key, shape=(1,), default_value=None, dtype="float32", normalizer_fn=None):
    """A real-valued column: the input column's numbers, as ``float32``.

    Args:
        key: the input column's name.
        shape: values per example: 1, or e.g. 784 (or ``(28, 28)``) for an input
            column holding a row of 784 numbers per example (a matrix column).
        default_value: accepted for compatibility; input_fn() rejects missing values.
        dtype: a numeric type name.
        normalizer_fn: a function applied to the tensor in the graph, e.g.
            ``lambda x: (x - 3.6) / 0.5``.

    Example:
        >>> column_numeric("drat")
        NumericColumn(key='drat')
    """
    return NumericColumn(key, shape, default_value, dtype, normalizer_fn)


def column_categorical_with_vocabulary_list(key, vocabulary_list, dtype=None, default_value=-1,
                                            num_oov_buckets=0):
    """A categorical column whose ids are the positions of values in ``vocabulary_list``.

    Values not in the list get ``default_value`` (``-1``: no contribution), or
    one of ``num_oov_buckets`` extra buckets chosen by hashing.

    Args:
        key: the input column's name (strings, or whole numbers for a numeric vocabulary).
        vocabulary_list: the known values, all strings or all whole numbers.
    """
    return VocabularyListColumn(key, vocabulary_list, dtype, default_value, num_oov_buckets)


def column_categorical_with_identity(key, num_buckets, default_value=None):
    """A categorical column whose ids are the input's whole numbers, in ``[0, num_buckets)``.

    Values out of range are an error before training unless ``default_value`` is given.
    """
    return IdentityColumn(key, num_buckets, default_value)


def column_categorical_with_hash_bucket(key, hash_bucket_size, dtype="string"):
    """A categorical column whose ids are hashes of the values: strings, or whole numbers (hashed
    as their digits, ``4.0`` as ``"4"``); a number with a fraction is refused, never rounded."""
    return HashBucketColumn(key, hash_bucket_size, dtype)


def column_categorical_with_vocabulary_file(key, vocabulary_file, vocabulary_size=None,
                                            num_oov_buckets=0, default_value=None,
                                            dtype="string"):
    """A categorical column whose vocabulary is the lines of ``vocabulary_file``.

    Args:
        key: the input column's name.
        vocabulary_file: a text file, one value per line (read now).
        vocabulary_size: use only the first this many lines (None: all).
        num_oov_buckets, default_value: as :func:`column_categorical_with_vocabulary_list`.
        dtype: 'string', or 'int64' for whole numbers.
    """
    return VocabularyFileColumn(key, vocabulary_file, vocabulary_size, num_oov_buckets,
                                default_value, dtype)


def column_categorical_weighted(categorical_column, weight_feature_key, dtype="float32"):
    """A categorical column whose id of each example has the weight in column ``weight_feature_key``.

    Linear models multiply the id's weight by it; indicator columns give it
    instead of 1; embeddings with ``combiner='sum'`` scale by it.
    """
    return WeightedCategoricalColumn(categorical_column, weight_feature_key, dtype)


def column_indicator(categorical_column):
    """The one-hot (dense) form of a categorical column, for DNN models."""
    return IndicatorColumn(categorical_column)


def column_embedding(categorical_column, dimension, combiner="mean", initializer=None,
                     max_norm=None, trainable=True):
    """A trainable ``dimension``-wide embedding of a categorical column (dense)."""
    return EmbeddingColumn(categorical_column, dimension, combiner, initializer, max_norm,
                           trainable)


def column_bucketized(source_column, boundaries):
    """Buckets of a numeric column: ``boundaries=[0, 10]`` gives (-inf, 0), [0, 10), [10, inf)."""
    return BucketizedColumn(source_column, boundaries)


def column_crossed(keys, hash_bucket_size, hash_key=None):
    """Hashed crosses of several column names (read as by
    :func:`column_categorical_with_hash_bucket`) or categorical columns."""
    return CrossedColumn(keys, hash_bucket_size, hash_key)


# tf.feature_column's column classes: pyhooks' function making the column they stood for
_OURS_OF_TF = {
    "NumericColumn": "column_numeric", "BucketizedColumn": "column_bucketized",
    "VocabularyListCategoricalColumn": "column_categorical_with_vocabulary_list",
    "VocabularyFileCategoricalColumn": "column_categorical_with_vocabulary_file",
    "IdentityCategoricalColumn": "column_categorical_with_identity",
    "HashedCategoricalColumn": "column_categorical_with_hash_bucket",
    "WeightedCategoricalColumn": "column_categorical_weighted",
    "IndicatorColumn": "column_indicator", "EmbeddingColumn": "column_embedding",
    "CrossedColumn": "column_crossed",
}


def tensorflow_column_hint(item):
    """For one of TensorFlow's feature columns, a sentence naming pyhooks' function in its
    place (to end an error message with); else ``""``."""
    kind = type(item).__name__
    if not type(item).__module__.startswith("tensorflow.") or kind not in _OURS_OF_TF:
        return ""
    return (f" TensorFlow's feature columns are not pyhooks': use {_OURS_OF_TF[kind]}() in "
            f"place of tf.feature_column's {kind}.")


def feature_columns(*columns):
    """Groups feature columns into a list (lists are flattened), as R's ``feature_columns()``.

    Raises:
        TypeError: naming an item that is not a feature column.
        ValueError: if no column is given or two columns have the same name.
    """
    flat = []

    def add(item):
        if isinstance(item, FeatureColumn):
            flat.append(item)
        elif isinstance(item, (list, tuple)) and not tensorflow_column_hint(item):
            for sub in item:  # (TensorFlow's columns are named tuples: not a list of columns)
                add(sub)
        else:
            raise TypeError(f"feature_columns() takes feature columns (column_*()), got {item!r} "
                            f"({type(item).__name__}).{tensorflow_column_hint(item)}")

    add(columns)
    if not flat:
        raise ValueError("feature_columns() needs at least one column.")
    # the same column given twice is kept once (the last), as tfestimators did
    keys = [_identity(c) for c in flat]
    flat = [c for i, c in enumerate(flat) if keys[i] not in keys[i + 1:]]
    names = [c.name for c in flat]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"Duplicate feature column name(s): {dupes}.")
    return flat
