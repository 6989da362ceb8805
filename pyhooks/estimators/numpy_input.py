"""``numpy_input_fn()`` and ``pandas_input_fn()``: TensorFlow 1's ``tf.estimator.inputs`` on
pyhooks' input.

``x`` (a dict of arrays, or a DataFrame) and ``y`` become the columns of an
:func:`input_fn`, which the estimators read through their usual input
pipeline. The defaults are TensorFlow's: batches of 128, one epoch, a shuffle
buffer of 1000 rows (``queue_capacity``), and ``shuffle`` given explicitly.
"""

from __future__ import annotations

import numpy as np

from pyhooks.estimators.inputs import column_names, input_fn

__all__ = ["numpy_input_fn", "pandas_input_fn"]


def _rows(value):
    return len(value) if hasattr(value, "__len__") else None


def label_name(taken):
    """The response name of labels given as one array or tensor: ``"y"``, unless a feature
    has that name."""
    return next(n for n in ("y", "__y__", "__label__") if n not in taken)


def _label_columns(y, taken):
    """``{name: column}`` for ``y``: one column named ``"y"`` (or a dict's, or a matrix's)."""
    if y is None:
        return {}
    if isinstance(y, dict):
        clash = sorted(set(y) & set(taken))
        if clash:
            raise ValueError(f"`y` and `x` both have the key(s) {clash}: give them other names.")
        return dict(y)
    name = label_name(taken)
    array = np.asarray(y)
    if array.ndim == 2 and array.shape[1] > 1:  # several outputs: one column each
        return {f"{name}_{i}": array[:, i] for i in range(array.shape[1])}
    return {name: array}


def numpy_input_fn(x, y=None, batch_size=128, num_epochs=1, shuffle=None, queue_capacity=1000,
                   num_threads=1):
    """An input of numpy arrays, as TensorFlow 1's ``numpy_input_fn`` made one.

    Args:
        x: a dict ``{feature name: array}``; each array holds one row per example
            (a 2-D array of numbers gives every example a vector, for
            ``column_numeric(name, shape=...)``).
        y: the labels: an array (a 2-D array with several columns: one response
            per column, for a multi-dimensional regression), a dict of arrays (a
            ``model_fn`` gets ``labels`` as a dict of tensors by the same keys, as in
            TensorFlow), or None (prediction only).
        batch_size: rows per batch.
        num_epochs: passes over the data; None repeats forever (then give
            ``steps`` to ``train()``).
        shuffle: True or False (required, as in TensorFlow: do not shuffle for
            prediction or evaluation).
        queue_capacity: the shuffle buffer: each row is drawn from the next
            ``queue_capacity`` rows not yet used (None: a new permutation of all
            rows every epoch).
        num_threads: accepted for compatibility (the pipeline uses its own threads).

    Returns:
        an :class:`pyhooks.estimators.inputs.InputFn`, for ``train()``,
        ``evaluate()`` and ``predict()``.

    Raises:
        TypeError: ``x`` is not a dict of arrays, ``shuffle`` is not a bool.
        ValueError: ``x`` and ``y`` of different lengths, or what ``input_fn()`` refuses.

    Example:
        >>> train_input = numpy_input_fn({"drat": drat, "wt": wt}, mpg, batch_size=8,
        ...                              num_epochs=None, shuffle=True)
    """
    if not isinstance(x, dict) or not x:
        what = (f"an array of shape {np.shape(x)}" if isinstance(x, np.ndarray)
                else f"{type(x).__name__}")
        raise TypeError(f"`x` must be a dict of arrays, {{feature name: array}}, got {what}"
                        + (": name its columns, e.g. {'x': x}." if isinstance(x, np.ndarray)
                           else "."))
    shuffle = _check_shuffle(shuffle)
    labels = _label_columns(y, x)
    lengths = {f"x[{k!r}]": _rows(v) for k, v in x.items()}
    lengths.update({"y" if not isinstance(y, dict) else f"y[{k!r}]": _rows(v)
                    for k, v in (labels.items() if isinstance(y, dict) else
                                 (("y", y),) if y is not None else ())})
    if len(set(lengths.values())) > 1:
        raise ValueError(f"`x` and `y` must hold the same number of rows, got {lengths}.")
    data = {**x, **labels}
    made = input_fn(data, features=list(x), response=list(labels) or None,
                    batch_size=batch_size, shuffle=shuffle, num_epochs=num_epochs,
                    queue_capacity=queue_capacity, num_threads=num_threads)
    made.labels_as_dict = isinstance(y, dict)  # a model_fn's labels: a dict, as TensorFlow's
    return made


def _check_shuffle(shuffle):
    if isinstance(shuffle, np.bool_):
        shuffle = bool(shuffle)
    if shuffle is not True and shuffle is not False:
        raise TypeError(f"`shuffle` must be True or False, got {shuffle!r}: shuffle when "
                        "training, not when evaluating or predicting.")
    return shuffle


def pandas_input_fn(x, y=None, batch_size=128, num_epochs=1, shuffle=None, queue_capacity=1000,
                    num_threads=1, target_column="target"):
    """An input of a pandas DataFrame, as TensorFlow 1's ``pandas_input_fn`` made one.

    Args:
        x: a DataFrame: its columns are the features (categoricals keep their
            levels, as :func:`input_fn` reads them).
        y: the labels: a Series (a ``model_fn`` gets one tensor), a DataFrame (a
            ``model_fn`` gets a dict of tensors by its column names, as in
            TensorFlow), or None (prediction only). Its index must equal ``x``'s:
            rows are matched by position, so a different index is refused, never
            realigned.
        batch_size, num_epochs, shuffle, queue_capacity, num_threads: as for
            :func:`numpy_input_fn` (``shuffle`` is required).
        target_column: the name of a Series ``y``'s column; it must not be a
            column of ``x``.

    Returns:
        an :class:`pyhooks.estimators.inputs.InputFn`.

    Raises:
        TypeError: ``x`` is not a DataFrame, ``y`` not a Series or DataFrame,
            ``shuffle`` not a bool, ``target_column`` not a string.
        ValueError: the indexes of ``x`` and ``y`` differ, ``target_column`` (or a
            column of a DataFrame ``y``) is a column of ``x``, a column name is
            given twice, or what :func:`input_fn` refuses.
    """
    if type(x).__name__ != "DataFrame":
        raise TypeError(f"`x` must be a pandas DataFrame, got {type(x).__name__}.")
    shuffle = _check_shuffle(shuffle)
    if not isinstance(target_column, str) or not target_column:
        raise TypeError(f"`target_column` must be a non-empty string, got {target_column!r}.")
    columns = _frame_columns("x", x)
    features, response = list(columns), None
    if y is not None:
        if type(y).__name__ not in ("Series", "DataFrame"):
            raise TypeError(f"`y` must be a pandas Series or DataFrame, got {type(y).__name__}.")
        if not np.array_equal(x.index, y.index):
            raise ValueError(f"Index for x and y are mismatched: x's rows are "
                             f"{list(x.index[:5])}..., y's {list(y.index[:5])}... (rows are "
                             "matched by position: give both the same index, e.g. "
                             "reset_index(drop=True)).")
        labels = (_frame_columns("y", y) if type(y).__name__ == "DataFrame"
                  else {target_column: y})
        clash = [name for name in labels if name in columns]
        if clash:
            fix = ("give y's columns other names" if type(y).__name__ == "DataFrame" else
                   "give another `target_column`")
            raise ValueError(f"`x` already has the column(s) {clash} of `y`: {fix}.")
        columns.update(labels)
        response = list(labels)
    made = input_fn(columns, features=features, response=response,
                    batch_size=batch_size, shuffle=shuffle, num_epochs=num_epochs,
                    queue_capacity=queue_capacity, num_threads=num_threads)
    made.labels_as_dict = type(y).__name__ == "DataFrame"  # a dict, as TensorFlow's
    return made


def _frame_columns(argument, frame):
    """``{name: column}`` of a DataFrame (a name given twice is refused, naming ``argument``)."""
    _, names, column = column_names(frame, argument)
    return {name: column(name) for name in names}
