"""``input_fn()``: column-oriented data checked once, then fed to an estimator.

Data is validated when ``input_fn()`` is called, so a bad column fails before
any graph is built or any step runs. The returned :class:`InputFn` keeps the
selected columns as numpy arrays; estimators convert them to what their
feature columns need (once per input and estimator, then cached) and feed
them to an input pipeline that lives as long as the estimator.
"""

from __future__ import annotations

import datetime
import numbers
from typing import NamedTuple

import numpy as np

from pyhooks.hooks._common import one_of
from pyhooks.timer import check_positive

__all__ = ["Factor", "InputFn", "RColumn", "as_column", "check_input_fn", "column_from_r",
           "column_names", "input_fn", "one_column", "row_label"]


class Factor(NamedTuple):
    """A categorical column's ``levels`` (in their order) and ``codes`` (int32, 0-based) into them.

    The column itself holds the labels (``levels[codes]``); the levels are kept so
    that a model can record them and match later data by label, never by code.
    """

    levels: tuple
    codes: np.ndarray


class RColumn(NamedTuple):
    """A column sent by R (see :func:`column_from_r`): its values, and its levels if a factor."""

    values: np.ndarray
    factor: Factor | None = None


def column_names(data, argument="data"):
    """``(kind, names, getter)`` for the supported data containers (``argument``: the
    argument's name in errors)."""
    if isinstance(data, dict):
        for name in data:
            if not isinstance(name, str):
                raise TypeError(f"`data` column names must be strings, got {name!r}.")
        return "dict", list(data), data.__getitem__
    if isinstance(data, np.ndarray) and data.dtype.names:
        return "structured array", list(data.dtype.names), data.__getitem__
    module = type(data).__module__ or ""
    if module.startswith("pandas") and hasattr(data, "columns"):
        names = [str(c) for c in data.columns]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"`{argument}` has more than one column named "
                             f"{', '.join(map(repr, twice))}: which one to read would be a "
                             "guess. Rename or drop the copies.")
        by_name = dict(zip(names, data.columns))
        return "DataFrame", names, lambda name: data[by_name[name]]
    if isinstance(data, np.ndarray):
        raise TypeError("`data` must be column-oriented (a dict of columns, a numpy structured "
                        f"array or a pandas DataFrame), got a plain numpy array of shape "
                        f"{data.shape}: name its columns, e.g. dict(x=a[:, 0], y=a[:, 1]).")
    raise TypeError("`data` must be a dict of columns, a numpy structured array or a pandas "
                    f"DataFrame, got {type(data).__name__}.")


def _names(argument, value, allow_none):
    if value is None:
        if allow_none:
            return []
        raise ValueError(f"`{argument}` is required: give one or more column names.")
    if isinstance(value, str):
        return [value]
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"`{argument}` must be a column name or a list of column names, "
                        f"got {value!r} ({type(value).__name__}).")
    for item in value:
        if not isinstance(item, str) or not item:
            raise TypeError(f"`{argument}` must hold column names (strings), got {item!r} "
                            f"in {value!r}.")
    if not value and not allow_none:
        raise ValueError(f"`{argument}` must name at least one column, got {value!r}.")
    dupes = sorted({v for v in value if value.count(v) > 1})
    if dupes:
        raise ValueError(f"`{argument}` names a column more than once: {dupes}.")
    return list(value)


def row_label(index, first_row):
    """Row ``index`` (0-based) as the user counts: ``row 3`` from R (1-based), ``index 2`` in Python."""
    return f"row {index + 1}" if first_row == 1 else f"index {index}"


def _bad_values_error(name, mask, what, fix, first_row):
    rows = np.flatnonzero(mask.reshape(len(mask), -1).any(axis=1))
    return ValueError(f"Column {name!r} has {rows.size} {what}, first at "
                      f"{row_label(int(rows[0]), first_row)}: {fix}.")


_TIME_FIXES = {
    "dates and times": "e.g. to days since 1970-01-01 (`values.astype('datetime64[D]').astype("
                       "'int64')`) or to a category such as its month",
    "durations": "e.g. to days (`values / np.timedelta64(1, 'D')`)",
    "periods": "e.g. to their ordinal (`series.map(lambda p: p.ordinal)`: for monthly periods, "
               "months since 1970-01) or to a category (`series.astype(str)`)",
}


def _fix(what):
    return (f"pyhooks does not turn {what} into numbers on its own. Convert the column first, "
            + _TIME_FIXES[what])


def _check_numbers(name, array, first_row):
    """NaN and ±Inf refused, naming the column and the first row."""
    finite = np.isfinite(array)
    if finite.all():
        return
    missing = np.isnan(array)
    if missing.any():
        raise _bad_values_error(name, missing, "missing value(s) (NaN/None)",
                                "remove or impute them before input_fn()", first_row)
    raise _bad_values_error(name, ~finite, "infinite value(s) (Inf/-Inf)",
                            "remove them or replace them by finite values before input_fn()",
                            first_row)


def _categorical(values):
    """A pandas categorical Series as ``(labels, Factor)``, else None."""
    categories = getattr(getattr(values, "cat", None), "categories", None)
    if categories is None:
        return None
    codes = np.asarray(values.cat.codes, dtype=np.int32)
    if (codes < 0).any():  # missing values (code -1), refused below with their rows
        labels = np.asarray(categories, dtype=object)[np.maximum(codes, 0)]
        labels[codes < 0] = None
        return labels, None
    levels = tuple(categories.tolist())
    labels = np.asarray(categories)[codes]
    return labels, Factor(levels, codes)


def as_column(name, values, first_row=0):
    """One column as a numpy array, checked; returns ``(array, Factor or None)``.

    Numbers keep their dtype (``float32`` stays ``float32``, as TensorFlow 1's
    ``numpy_input_fn`` kept it); lists of Python numbers become ``float64`` or
    ``int64``; booleans ``bool``; text ``str``; bytes the ``str`` they encode in UTF-8 (as
    TensorFlow reads them). A pandas categorical (or an R
    factor) holds its labels and keeps its levels (:class:`Factor`). Missing
    values, ±Inf, dates, durations and complex numbers are refused, naming the
    column (and the first row).
    """
    factor = None
    if isinstance(values, RColumn):
        values, factor = values
    else:
        found = _categorical(values)
        if found is not None:
            values, factor = found
        elif hasattr(values, "to_numpy") and not isinstance(values, np.ndarray):
            values = values.to_numpy()
    try:
        array = np.asarray(values)
        if isinstance(values, (list, tuple)) and array.ndim == 1 and (
                array.dtype.kind == "U" or array.dtype.kind in "iuf" and _any_bool(values)):
            # numpy silently turns [1, "a"] into strings, [True, 2] into 1, 2: look at every value
            array = np.empty(len(values), dtype=object)
            array[:] = values
    except (TypeError, ValueError) as error:
        _check_row_lengths(name, values, first_row)
        raise TypeError(f"Column {name!r} cannot be read as an array: {error}") from error
    if array.ndim == 2 and array.shape[1] == 1 and array.dtype.kind not in "biuf":
        array = array[:, 0]  # text: one value per row (numbers keep their shape [n, 1])
    if array.ndim >= 2 and array.dtype.kind in "biuf":
        pass  # numbers per example: a matrix's row, or nested lists (column_numeric(shape = ))
    elif array.ndim != 1:
        raise ValueError(f"Column {name!r} must be one-dimensional (one value per row) or hold "
                         f"numbers only (a matrix of numbers, one row per example), got shape "
                         f"{array.shape}.")
    kind = array.dtype.kind
    if kind in "Mm":
        what = "dates and times" if kind == "M" else "durations"
        raise TypeError(f"Column {name!r} holds {what} ({array.dtype}): " + _fix(what) + ".")
    if kind == "c":
        raise TypeError(f"Column {name!r} holds complex numbers: give their real and imaginary "
                        "parts as two numeric columns (`values.real`, `values.imag`).")
    if kind == "f":
        _check_numbers(name, array, first_row)
        return array, factor
    if kind in "iub":
        return array, factor
    if kind == "U":
        return array, factor
    if kind == "S":
        return _utf8(name, array, first_row), factor
    if kind == "O":
        return _object_column(name, array, first_row), factor
    raise TypeError(f"Column {name!r} has unsupported type {array.dtype} (numbers, booleans or "
                    "strings are supported).")


def _check_row_lengths(name, values, first_row):
    """Rows of several values (a list column) of different lengths: an error naming two."""
    lengths = [len(v) if hasattr(v, "__len__") and not isinstance(v, (str, bytes)) else 1
               for v in values]
    if len(set(lengths)) > 1:
        at = next(i for i, n in enumerate(lengths) if n != lengths[0])
        raise ValueError(f"Column {name!r} holds rows of different lengths: {lengths[0]} "
                         f"value(s) at {row_label(0, first_row)}, {lengths[at]} at "
                         f"{row_label(at, first_row)}. Each row must hold the same number "
                         "(the `shape` of its column_numeric()).")


def one_column(values):
    """A column of one number per row given as a one-column matrix (``[n, 1]``, kept so by
    :func:`as_column` for a ``model_fn``, as TensorFlow kept it) as ``[n]``; others as they are."""
    return values[:, 0] if values.ndim == 2 and values.shape[1] == 1 else values


def _object_column(name, array, first_row):
    """An object array (Python values) as numbers, booleans or strings of one kind."""
    missing = np.array([v is None or (isinstance(v, float) and v != v)
                        or type(v).__name__ == "NAType" for v in array], dtype=bool)  # pandas.NA
    if missing.any():
        raise _bad_values_error(name, missing, "missing value(s) (NaN/None)",
                                "remove or impute them before input_fn()", first_row)
    if any(isinstance(v, (datetime.date, datetime.timedelta, np.datetime64, np.timedelta64))
           for v in array):
        what = "dates and times" if not any(
            isinstance(v, (datetime.timedelta, np.timedelta64)) for v in array) else "durations"
        raise TypeError(f"Column {name!r} holds {what}: " + _fix(what) + ".")
    if any(type(v).__name__ == "Period" for v in array):  # pandas' periods (pandas not imported)
        raise TypeError(f"Column {name!r} holds periods (pandas Period): " + _fix("periods") + ".")
    if all(isinstance(v, str) for v in array):
        return array.astype(str)
    if all(isinstance(v, (bytes, np.bytes_)) for v in array):
        return _utf8(name, array.astype(bytes), first_row)
    if all(isinstance(v, (bool, np.bool_)) for v in array):
        return array.astype(bool)
    numbers_only = not _any_bool(array)  # booleans among numbers are a mix, not 0 and 1
    if numbers_only and all(isinstance(v, numbers.Integral) for v in array):
        return array.astype(np.int64)
    if numbers_only and all(isinstance(v, numbers.Real) for v in array):
        values = array.astype(np.float64)
        _check_numbers(name, values, first_row)
        return values
    types = sorted({type(v).__name__ for v in array})
    if len(types) == 1:
        raise TypeError(f"Column {name!r} holds {types[0]} values, which pyhooks does not read "
                        "as numbers, booleans or strings: convert the column first (e.g. with "
                        "float() or str() of each value).")
    raise TypeError(f"Column {name!r} must hold values of one kind (numbers, booleans or "
                    f"strings), got a mix of {', '.join(types)}.")


def _any_bool(values):
    return any(isinstance(v, (bool, np.bool_)) for v in values)


def _utf8(name, array, first_row):
    """Bytes as the text they encode in UTF-8 (TensorFlow's string tensors hold UTF-8 bytes, so
    ``b"red"`` is ``"red"`` to a vocabulary), or an error naming the column and the first row."""
    try:
        return np.char.decode(array, "utf-8")
    except UnicodeDecodeError:
        bad = np.array([not _decodes(v) for v in array], dtype=bool)
        raise _bad_values_error(name, bad, "value(s) of bytes that are not UTF-8 text",
                                "decode them to str first, with their encoding", first_row)


def _decodes(value):
    try:
        value.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


_R_TYPES = {"double": "<f8", "integer": "<i4", "logical": "<i4"}


def column_from_r(kind, data, levels=None, one_column=False):
    """A column sent by R's ``input_fn()`` as whole arrays (an :class:`RColumn`).

    R sends each column as its values' bytes (``writeBin()``), so no value is
    converted on its own. Character columns and factors come as 1-based codes
    (``integer`` bytes) and their distinct values or levels (``levels``).

    Args:
        kind: R's type of the values: ``"double"``, ``"integer"``, ``"logical"``,
            ``"character"`` (codes into its distinct values ``levels``) or
            ``"factor"`` (codes into the factor's ``levels``, kept as its levels).
        data: the little-endian bytes of the values or codes.
        levels: for ``"character"`` and ``"factor"``, the strings the codes point at.
        one_column: numbers from a one-column matrix: an ``[n, 1]`` array, as a
            NumPy ``(n, 1)`` array is kept (text is one value per example either way).
    """
    if kind in ("character", "factor"):
        codes = np.frombuffer(data, dtype="<i4").astype(np.int32) - 1
        strings = np.asarray(list(levels) if levels is not None else [], dtype=str)
        factor = Factor(tuple(strings.tolist()), codes) if kind == "factor" else None
        return RColumn(strings[codes], factor)
    if kind not in _R_TYPES:
        raise TypeError(f"R column type {kind!r} is not one of {', '.join(_R_TYPES)}, character "
                        "or factor.")
    values = np.frombuffer(data, dtype=_R_TYPES[kind])
    if one_column:
        values = values.reshape(-1, 1)
    if kind == "logical":
        return RColumn(values != 0)
    return RColumn(values.astype(np.int64) if kind == "integer" else values)


class InputFn:
    """Validated, column-oriented training or prediction data (see :func:`input_fn`).

    Attributes:
        columns: ``{name: numpy array}`` of the features and the response (one row
            per example; a factor's labels).
        factors: ``{name: Factor}`` of the categorical columns (pandas categoricals,
            R factors): their levels, in order.
        features: the feature column names.
        response: the response column names (empty when there is none).
        n: the number of rows.
        first_row: how the user counts rows in messages: 1 for data from R, 0 in Python.
        labels_as_dict: whether a ``model_fn`` gets the labels as ``{response name:
            tensor}`` (``numpy_input_fn()`` of a dict ``y``, as in TensorFlow), else
            one tensor (several response columns side by side).
    """

    __slots__ = ("columns", "factors", "features", "response", "n", "batch_size", "shuffle",
                 "num_epochs", "queue_capacity", "num_threads", "seed", "first_row",
                 "labels_as_dict", "__weakref__")
    repeats_forever = "num_epochs=None"  # what makes the input endless, for messages

    def __init__(self, columns, features, response, batch_size, shuffle, num_epochs,
                 queue_capacity, num_threads, seed, factors=None, first_row=0):
        self.columns = columns
        self.factors = dict(factors or {})
        self.first_row = first_row
        self.features = features
        self.response = response
        self.n = len(next(iter(columns.values())))
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.num_epochs = num_epochs
        self.queue_capacity = queue_capacity
        self.num_threads = num_threads
        self.seed = seed
        self.labels_as_dict = False

    def shuffles(self, training):
        """Whether batches are shuffled: ``'auto'`` means when training."""
        return training if self.shuffle == "auto" else self.shuffle

    def steps_per_run(self):
        """Batches in one pass over ``num_epochs`` epochs (None if it repeats forever)."""
        if self.num_epochs is None:
            return None
        return -(-self.n * self.num_epochs // self.batch_size)

    def __call__(self):
        """``(features, labels)`` as dicts of numpy arrays, TensorFlow's input_fn shape."""
        features = {name: self.columns[name] for name in self.features}
        labels = {name: self.columns[name] for name in self.response}
        if not labels:
            return features, None
        if len(self.response) == 1:
            return features, labels[self.response[0]]
        return features, labels

    def __repr__(self):
        response = self.response[0] if len(self.response) == 1 else (self.response or None)
        return (f"<input_fn: {self.n} rows, features={self.features}, response={response!r}, "
                f"batch_size={self.batch_size}, shuffle={self.shuffle!r}, "
                f"num_epochs={self.num_epochs}>")


def check_input_fn(input_fn, functions=False):
    """``input_fn``, or a TypeError unless :func:`input_fn` made it (``functions``: or it is a
    function, which a custom estimator takes: see :mod:`pyhooks.estimators.dataset_input`)."""
    if isinstance(input_fn, InputFn) or (functions and callable(input_fn)):
        return input_fn
    hint = ""
    if callable(input_fn):  # tf.estimator's kind: a function making tensors or a Dataset
        hint = (" A function that returns a tf.data.Dataset, as tf.estimator took, is the "
                "input of a custom estimator (estimator(model_fn)) only: give its data to "
                "input_fn(data, features, response) or numpy_input_fn(x, y, batch_size, "
                "num_epochs, shuffle).")
    raise TypeError(f"`input_fn` must be made by input_fn(), got {input_fn!r} "
                    f"({type(input_fn).__name__}).{hint}")


def input_fn(data, features, response=None, batch_size=128, shuffle="auto", num_epochs=1,
             queue_capacity=None, num_threads=1, seed=None):
    """``input_fn()`` of data in memory (see :func:`pyhooks.estimators.input_fn`, which also
    takes files): an :class:`InputFn` of ``data``'s columns ``features`` and ``response``."""
    feature_names = _names("features", features, allow_none=False)
    response_names = _names("response", response, allow_none=True)
    options = _options(feature_names, response_names, batch_size, shuffle, num_epochs,
                       queue_capacity, num_threads, seed)
    kind, names, getter = column_names(data)
    for argument, wanted in (("features", feature_names), ("response", response_names)):
        unknown = [name for name in wanted if name not in names]
        if unknown:
            raise ValueError(f"`{argument}`: no column {', '.join(map(repr, unknown))} in `data`; "
                             f"the {kind} has: {', '.join(names) if names else 'no columns'}.")
    raw = {name: getter(name) for name in dict.fromkeys(feature_names + response_names)}
    first_row = 1 if any(isinstance(v, RColumn) for v in raw.values()) else 0
    columns, factors = {}, {}
    for name, values in raw.items():
        columns[name], factor = as_column(name, values, first_row)
        if factor is not None:
            factors[name] = factor
    lengths = {name: len(values) for name, values in columns.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"`data` columns must have the same length, got {lengths}.")
    if not next(iter(lengths.values())):
        raise ValueError("`data` has no rows: input_fn() needs at least one example.")
    return InputFn(columns, *options, factors, first_row)


def _options(feature_names, response_names, batch_size, shuffle, num_epochs, queue_capacity,
             num_threads, seed):
    """input_fn()'s options checked, in ``InputFn``'s order."""
    batch_size = check_positive("batch_size", batch_size, integer=True, allow_none=False)
    num_epochs = check_positive("num_epochs", num_epochs, integer=True)
    queue_capacity = check_positive("queue_capacity", queue_capacity, integer=True)
    num_threads = check_positive("num_threads", num_threads, integer=True, allow_none=False)
    if isinstance(shuffle, np.bool_):
        shuffle = bool(shuffle)
    if not (shuffle is True or shuffle is False or one_of(shuffle, ("auto",))):
        raise ValueError(f"`shuffle` must be True, False or 'auto', got {shuffle!r}.")
    if seed is not None:
        seed = check_positive("seed", seed, integer=True, allow_zero=True)
    return (feature_names, response_names, batch_size, shuffle, num_epochs, queue_capacity,
            num_threads, seed)
