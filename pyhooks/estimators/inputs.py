"""``input_fn()``: column-oriented data checked once, then fed to an estimator.

Data is validated when ``input_fn()`` is called, so a bad column fails before
any graph is built or any step runs. The returned :class:`InputFn` keeps the
selected columns as numpy arrays; estimators convert them to what their
feature columns need (once per input and estimator, then cached) and feed
them to an input pipeline that lives as long as the estimator.
"""

from __future__ import annotations

import numbers

import numpy as np

from pyhooks.timer import check_positive

__all__ = ["InputFn", "column_from_r", "input_fn"]


def _column_names(data):
    """``(kind, names, getter)`` for the supported data containers."""
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
        by_name = dict(zip(names, data.columns))
        return "DataFrame", names, lambda name: data[by_name[name]].to_numpy()
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


def _missing_error(name, mask):
    rows = np.flatnonzero(mask)
    return ValueError(f"Column {name!r} has {rows.size} missing value(s) (NaN/None), first at "
                      f"row {int(rows[0])}: remove or impute them before input_fn().")


def as_column(name, values):
    """One column as a 1-D numpy array of float64, int64, bool or str; raises on bad data."""
    if hasattr(values, "to_numpy") and not isinstance(values, np.ndarray):
        values = values.to_numpy()
    try:
        array = np.asarray(values)
        if isinstance(values, (list, tuple)) and array.ndim == 1 and array.dtype.kind == "U":
            # numpy silently turns [1, "a"] into strings: look at every value
            array = np.empty(len(values), dtype=object)
            array[:] = values
    except (TypeError, ValueError) as error:
        raise TypeError(f"Column {name!r} cannot be read as an array: {error}") from error
    if array.ndim == 2 and array.shape[1] == 1:
        array = array[:, 0]
    if array.ndim >= 2 and array.dtype.kind in "biuf":
        pass  # numbers per example: a matrix's row, or nested lists (column_numeric(shape = ))
    elif array.ndim != 1:
        raise ValueError(f"Column {name!r} must be one-dimensional (one value per row) or hold "
                         f"numbers only (a matrix of numbers, one row per example), got shape "
                         f"{array.shape}.")
    kind = array.dtype.kind
    if kind == "f":
        missing = np.isnan(array)
        if missing.any():
            raise _missing_error(name, missing)
        return array.astype(np.float64, copy=False)
    if kind in "iu":
        return array.astype(np.int64, copy=False)
    if kind == "b":
        return array
    if kind in "US":
        return array.astype(str, copy=False)
    if kind == "O":
        missing = np.array([v is None or (isinstance(v, float) and v != v) for v in array],
                           dtype=bool)
        if missing.any():
            raise _missing_error(name, missing)
        if all(isinstance(v, str) for v in array):
            return array.astype(str)
        if all(isinstance(v, (bool, np.bool_)) for v in array):
            return array.astype(bool)
        if all(isinstance(v, numbers.Integral) for v in array):
            return array.astype(np.int64)
        if all(isinstance(v, numbers.Real) for v in array):
            return array.astype(np.float64)
        types = sorted({type(v).__name__ for v in array})
        raise TypeError(f"Column {name!r} must hold numbers or strings of one kind, got a mix "
                        f"of {', '.join(types)}.")
    raise TypeError(f"Column {name!r} has unsupported type {array.dtype} (numbers, booleans or "
                    "strings are supported).")


_R_TYPES = {"double": "<f8", "integer": "<i4", "logical": "<i4"}


def column_from_r(kind, data, levels=None):
    """A column sent by R's ``input_fn()`` as whole arrays, as a 1-D numpy array.

    R sends each column as its values' bytes (``writeBin()``), so no value is
    converted on its own. Character columns and factors come as 1-based codes
    (``integer`` bytes) and their distinct values (``levels``).

    Args:
        kind: R's type of the values: ``"double"``, ``"integer"``, ``"logical"``,
            or ``"character"`` (codes into ``levels``).
        data: the little-endian bytes of the values or codes.
        levels: for ``"character"``, the distinct strings.
    """
    if kind == "character":
        codes = np.frombuffer(data, dtype="<i4")
        return np.asarray(list(levels) if levels is not None else [], dtype=str)[codes - 1]
    if kind not in _R_TYPES:
        raise TypeError(f"R column type {kind!r} is not one of {', '.join(_R_TYPES)} or "
                        "character.")
    values = np.frombuffer(data, dtype=_R_TYPES[kind])
    if kind == "logical":
        return values != 0
    return values.astype(np.int64) if kind == "integer" else values


class InputFn:
    """Validated, column-oriented training or prediction data (see :func:`input_fn`).

    Attributes:
        columns: ``{name: 1-D numpy array}`` of the features and the response.
        features: the feature column names.
        response: the response column names (empty when there is none).
        n: the number of rows.
    """

    __slots__ = ("columns", "features", "response", "n", "batch_size", "shuffle", "num_epochs",
                 "queue_capacity", "num_threads", "seed", "__weakref__")

    def __init__(self, columns, features, response, batch_size, shuffle, num_epochs,
                 queue_capacity, num_threads, seed):
        self.columns = columns
        self.features = features
        self.response = response
        self.n = len(next(iter(columns.values())))
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.num_epochs = num_epochs
        self.queue_capacity = queue_capacity
        self.num_threads = num_threads
        self.seed = seed

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


def input_fn(data, features, response=None, batch_size=128, shuffle="auto", num_epochs=1,
             queue_capacity=None, num_threads=1, seed=None):
    """Describes how an estimator reads ``data``: which columns, in which batches.

    Args:
        data: column-oriented data: a dict of equal-length lists or 1-D arrays, a
            numpy structured array, or a pandas DataFrame (pandas is optional).
        features: the name(s) of the feature columns.
        response: the name of the label column (a list of names for a
            multi-dimensional regression), or None (prediction only).
        batch_size: rows per step (the last batch of a pass may be smaller).
        shuffle: True, False, or 'auto' (shuffle when training, not when
            evaluating or predicting).
        num_epochs: passes over the data before the input is exhausted; None
            repeats forever (then give ``steps`` to ``train()``).
        queue_capacity: size of the shuffle buffer (rows). None (default): every
            epoch is a new random permutation of all rows, as with a buffer holding
            the whole data (only the row numbers are permuted; the columns are
            held once). A smaller buffer shuffles only locally: each row is drawn
            from the next ``queue_capacity`` rows not yet used.
        num_threads: accepted for compatibility with R's ``input_fn()``.
        seed: the shuffling seed (None: different each time).

    Returns:
        an :class:`InputFn`, to pass to ``train()``, ``evaluate()`` or ``predict()``.

    Raises:
        ValueError / TypeError naming the argument or column: unknown column,
        wrong type, missing values (NaN/None), no rows, bad batch_size...

    Example:
        >>> data = load_mtcars()
        >>> input = input_fn(data, features=["drat", "cyl"], response="mpg", batch_size=8)
    """
    kind, names, getter = _column_names(data)
    feature_names = _names("features", features, allow_none=False)
    response_names = _names("response", response, allow_none=True)
    for argument, wanted in (("features", feature_names), ("response", response_names)):
        unknown = [name for name in wanted if name not in names]
        if unknown:
            raise ValueError(f"`{argument}`: no column {', '.join(map(repr, unknown))} in `data`; "
                             f"the {kind} has: {', '.join(names) if names else 'no columns'}.")
    batch_size = check_positive("batch_size", batch_size, integer=True, allow_none=False)
    num_epochs = check_positive("num_epochs", num_epochs, integer=True)
    queue_capacity = check_positive("queue_capacity", queue_capacity, integer=True)
    num_threads = check_positive("num_threads", num_threads, integer=True, allow_none=False)
    if isinstance(shuffle, np.bool_):
        shuffle = bool(shuffle)
    if not (shuffle is True or shuffle is False or shuffle == "auto"):
        raise ValueError(f"`shuffle` must be True, False or 'auto', got {shuffle!r}.")
    if seed is not None:
        seed = check_positive("seed", seed, integer=True, allow_zero=True)

    columns = {}
    for name in dict.fromkeys(feature_names + response_names):
        columns[name] = as_column(name, getter(name))
    lengths = {name: len(values) for name, values in columns.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"`data` columns must have the same length, got {lengths}.")
    if not next(iter(lengths.values())):
        raise ValueError("`data` has no rows: input_fn() needs at least one example.")
    return InputFn(columns, feature_names, response_names, batch_size, shuffle, num_epochs,
                   queue_capacity, num_threads, seed)
