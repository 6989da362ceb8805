"""``input_fn()`` from files: CSV, or TFRecord files of ``tf.Example`` records.

Data bigger than memory is never read whole. ``input_fn()`` reads what it
needs to check the input before any graph is built: every file's header
(CSV: the same columns in every file) and, from the first file, its first
``guess_rows`` rows (the *sample*). The sample is an in-memory
:class:`~pyhooks.estimators.inputs.InputFn`'s columns: the estimators check it
against the model's data contract (``pyhooks_schema.json``) and their feature
columns as they check data in memory. The files themselves are streamed
through ``tf.data`` at every call (:mod:`pyhooks.estimators.file_pipeline`),
which checks every value on the way and names the column, the file and the
row of the first bad one.

Column types of a CSV file, the documented rule: ``column_types`` where given;
else from the sample: a column whose values are all whole numbers is
``integer`` (int64), all numbers ``numeric`` (float64), else ``string``. A
later value that is not of its column's type stops the call with an error
naming the column, the file, the row and ``column_types``. The rule is the
input's, so a model's contract holds its files like its data frames: a
column read as text at training is an error at evaluation if it reads as
numbers, whole numbers where fractions were recorded are read as recorded.

Missing values: a field that is empty or one of ``na`` (default ``""`` and
``"NA"``, what R's ``write.csv()`` and pandas' ``to_csv()`` write) is refused in
every column, as NaN and +-Inf are in numeric ones.
"""

from __future__ import annotations

import csv
import glob
import math
import os
import re

import numpy as np

from pyhooks.estimators import inputs
from pyhooks.estimators.inputs import InputFn
from pyhooks.timer import check_positive

__all__ = ["FileInput", "file_input", "input_fn", "locate_csv_problem"]

KINDS = {"numeric": "numeric", "double": "numeric", "float": "numeric", "integer": "integer",
         "int": "integer", "string": "string", "character": "string", "str": "string"}
_DTYPES = {"numeric": np.float64, "integer": np.int64, "string": str}
_WHOLE = re.compile(r"^\s*[+-]?\d+\s*$")
FILE_SHUFFLE_BUFFER = 10_000  # rows: files are never permuted whole


class FileInput(InputFn):
    """An input read from files (see :func:`file_input`).

    Attributes (besides :class:`InputFn`'s, whose ``columns`` hold the sample and
    whose ``n`` is None: the rows are not counted in advance):
        files: the paths, in order.
        file_format: ``"csv"`` or ``"tfrecord"``.
        header: a CSV file's column names, in order.
        types: ``{column: "numeric" | "integer" | "string"}`` of the columns read.
        na: the fields that mean a missing value (CSV).
        example_spec: ``{feature: FixedLenFeature | VarLenFeature}`` (TFRecord).
        sample_rows: the rows of the sample.
    """

    __slots__ = ("files", "file_format", "header", "types", "na", "example_spec",
                 "sample_rows", "delimiter")

    def __init__(self, sample, options, files, file_format, header, types, na, example_spec,
                 delimiter=","):
        super().__init__(sample, *options)
        self.sample_rows = self.n
        self.n = None
        self.files = files
        self.file_format = file_format
        self.header = header
        self.types = types
        self.na = na
        self.example_spec = example_spec
        self.delimiter = delimiter

    def steps_per_run(self):
        return None  # the rows are counted only by reading them

    def shuffle_buffer(self):
        """The shuffle buffer's rows (``queue_capacity``; None: ``FILE_SHUFFLE_BUFFER``)."""
        return FILE_SHUFFLE_BUFFER if self.queue_capacity is None else self.queue_capacity

    def __call__(self):
        raise TypeError("An input_fn() of files has no arrays: it is read by train(), "
                        "evaluate() and predict() as a stream.")

    def __repr__(self):
        response = self.response[0] if len(self.response) == 1 else (self.response or None)
        shown = self.files[0] + (f" and {len(self.files) - 1} more" if len(self.files) > 1
                                 else "")
        return (f"<input_fn: {self.file_format} file(s) {shown}, features={self.features}, "
                f"response={response!r}, batch_size={self.batch_size}, "
                f"shuffle={self.shuffle!r}, num_epochs={self.num_epochs}>")


def is_files(data):
    """Whether ``data`` names files (a path, or a list of paths or globs)."""
    if isinstance(data, (str, os.PathLike)):
        return True
    return (isinstance(data, (list, tuple)) and bool(data)
            and all(isinstance(d, (str, os.PathLike)) for d in data))


def expand(data):
    """The files ``data`` names: paths kept as given, globs sorted; none found is an error."""
    paths = [data] if isinstance(data, (str, os.PathLike)) else list(data)
    files = []
    for path in map(os.fspath, paths):
        if glob.has_magic(path):
            found = sorted(p for p in glob.glob(path) if os.path.isfile(p))
            if not found:
                raise ValueError(f"`data`: no file matches {path!r}.")
            files.extend(found)
        elif not os.path.isfile(path):
            raise ValueError(f"`data`: no file {path!r}"
                             + (" (it is a directory: give a glob such as "
                                f"{os.path.join(path, '*.csv')!r})" if os.path.isdir(path)
                                else "") + ".")
        else:
            files.append(path)
    twice = sorted({f for f in files if files.count(f) > 1})
    if twice:
        raise ValueError(f"`data` names file(s) {twice} more than once: each would be read "
                         "twice per epoch.")
    return files


def _column_types(column_types, names):
    """``{name: kind}`` of ``column_types`` (R and Python names of the kinds)."""
    if column_types is None:
        return {}
    if not isinstance(column_types, dict):
        raise TypeError(f"`column_types` must be a dict of column name -> type (R: a named "
                        f"list or character vector), got {column_types!r}.")
    kinds = {}
    for name, kind in column_types.items():
        if name not in names:
            raise ValueError(f"`column_types`: no column {name!r} in the files; they have: "
                             f"{', '.join(names)}.")
        if not isinstance(kind, str) or kind.lower() not in KINDS:
            raise ValueError(f"`column_types` of {name!r} must be \"numeric\", \"integer\" or "
                             f"\"string\" (R: \"double\", \"integer\", \"character\"), got "
                             f"{kind!r}.")
        kinds[name] = KINDS[kind.lower()]
    return kinds


def _na(na):
    if na is None:
        return ()
    values = [na] if isinstance(na, str) else list(na) if isinstance(na, (list, tuple)) else None
    if values is None or not all(isinstance(v, str) for v in values):
        raise TypeError(f"`na` must be strings (the fields that mean a missing value), got "
                        f"{na!r}.")
    return tuple(dict.fromkeys(values))


def read_header(path, delimiter):
    """A CSV file's column names; an empty file, or one without data rows, is an error."""
    with open(path, newline="", encoding="utf-8") as file:
        reader = csv.reader(file, delimiter=delimiter)
        header = next(reader, None)
        if not header:
            raise ValueError(f"CSV file {path!r} is empty: it needs a header row of column "
                             "names and at least one row of data.")
        if next(reader, None) is None:
            raise ValueError(f"CSV file {path!r} has a header but no rows of data.")
    twice = sorted({n for n in header if header.count(n) > 1})
    if twice:
        raise ValueError(f"CSV file {path!r} has more than one column named "
                         f"{', '.join(map(repr, twice))}: which one to read would be a guess.")
    return header


def _problem(name, path, row, value, what):
    return ValueError(f"Column {name!r} of file {path!r} holds {value!r} at row {row} (line "
                      f"{row + 1}): {what}.")


def _missing(name, path, row, value):
    return _problem(name, path, row, value, "a missing value; remove or impute such rows "
                    "before reading the file (the fields read as missing are `na`)")


def _parse(name, kind, values, path, na, explicit):
    """A sample column's strings as ``kind``; a bad value is an error naming the file and row."""
    for row, value in enumerate(values, start=1):
        if value == "" or value in na:
            raise _missing(name, path, row, value)
    if kind == "string":
        return np.asarray(values, dtype=str)
    how = ("as `column_types` says" if explicit else
           "as the first rows say; give `column_types` to read the column otherwise")
    out = np.empty(len(values), dtype=_DTYPES[kind])
    for row, value in enumerate(values, start=1):
        try:
            out[row - 1] = int(value) if kind == "integer" else float(value)
        except ValueError:
            raise _problem(name, path, row, value, f"not a {'whole ' if kind == 'integer' else ''}"
                           f"number, but the column is {kind} ({how})") from None
        if kind == "numeric" and not math.isfinite(out[row - 1]):
            raise _problem(name, path, row, value, "not a finite number; remove such rows or "
                           "replace them by finite values")
    return out


def _infer(values, na):
    present = [v for v in values if v != "" and v not in na]
    if present and all(_WHOLE.match(v) for v in present):
        return "integer"
    try:
        for value in present:
            float(value)
    except ValueError:
        return "string"
    return "numeric" if present else "string"


def csv_sample(path, header, names, kinds, na, guess_rows, delimiter):
    """``({name: array}, {name: kind})`` of the first ``guess_rows`` rows of ``path``."""
    positions = [header.index(name) for name in names]
    values = [[] for _ in names]
    with open(path, newline="", encoding="utf-8") as file:
        reader = csv.reader(file, delimiter=delimiter)
        next(reader)
        for row, fields in enumerate(reader, start=1):
            if row > guess_rows:
                break
            if len(fields) != len(header):
                raise ValueError(f"Row {row} (line {row + 1}) of file {path!r} has "
                                 f"{len(fields)} field(s); its header has {len(header)}.")
            for i, position in enumerate(positions):
                values[i].append(fields[position])
    types = {name: kinds.get(name) or _infer(column, na) for name, column in zip(names, values)}
    sample = {name: _parse(name, types[name], column, path, na, name in kinds)
              for name, column in zip(names, values)}
    return sample, types


def locate_csv_problem(input_fn):
    """The first value of ``input_fn``'s files that its pipeline refused, as a ValueError.

    TensorFlow's CSV reader names neither the file nor the row of a field it
    cannot parse; this reads the files again, in Python, up to the first bad
    field (the error path only). None if every field parses.
    """
    names = list(input_fn.types)
    for path in input_fn.files:
        with open(path, newline="", encoding="utf-8") as file:
            reader = csv.reader(file, delimiter=input_fn.delimiter)
            header = next(reader, None)
            positions = [header.index(name) for name in names]
            for row, fields in enumerate(reader, start=1):
                if len(fields) != len(header):
                    return ValueError(f"Row {row} (line {row + 1}) of file {path!r} has "
                                      f"{len(fields)} field(s); its header has {len(header)}.")
                for name, position in zip(names, positions):
                    try:
                        _parse(name, input_fn.types[name], [fields[position]], path,
                               input_fn.na, False)
                    except ValueError as error:
                        return ValueError(str(error).replace("at row 1 (line 2)",
                                                             f"at row {row} (line {row + 1})"))
    return None


def file_input(data, feature_names, response_names, options, column_types=None, na=("", "NA"),
               example_spec=None, guess_rows=1000, delimiter=","):
    """The :class:`FileInput` of ``data`` (see :func:`pyhooks.estimators.input_fn`).

    ``options``: ``(features, response, batch_size, shuffle, num_epochs,
    queue_capacity, num_threads, seed)`` as ``input_fn()`` checked them.
    """
    files = expand(data)
    guess_rows = check_positive("guess_rows", guess_rows, integer=True, allow_none=False)
    na = _na(na)
    wanted = list(dict.fromkeys(feature_names + response_names))
    if example_spec is not None:
        from pyhooks.estimators.tfrecord import tfrecord_input

        sample, types = tfrecord_input(files, wanted, example_spec, guess_rows)
        return FileInput(sample, options, files, "tfrecord", None, types, (),
                         dict(example_spec))
    if not isinstance(delimiter, str) or len(delimiter) != 1:
        raise ValueError(f"`delimiter` must be one character, got {delimiter!r}.")
    header = read_header(files[0], delimiter)
    for path in files[1:]:
        other = read_header(path, delimiter)
        if other != header:
            raise ValueError(f"CSV file {path!r} has columns {other}; the first file "
                             f"{files[0]!r} has {header}: every file must have the same "
                             "columns, in the same order.")
    for argument, names in (("features", feature_names), ("response", response_names)):
        unknown = [name for name in names if name not in header]
        if unknown:
            raise ValueError(f"`{argument}`: no column {', '.join(map(repr, unknown))} in "
                             f"{files[0]!r}; its columns are: {', '.join(header)}.")
    kinds = _column_types(column_types, header)
    sample, types = csv_sample(files[0], header, wanted, kinds, na, guess_rows, delimiter)
    return FileInput(sample, options, files, "csv", header, types, na, None, delimiter)


def input_fn(data, features, response=None, batch_size=128, shuffle="auto", num_epochs=1,
             queue_capacity=None, num_threads=1, seed=None, column_types=None, na=("", "NA"),
             example_spec=None, guess_rows=1000):
    """Describes how an estimator reads ``data``: which columns, in which batches.

    Args:
        data: column-oriented data: a dict of equal-length lists or 1-D arrays, a
            numpy structured array, or a pandas DataFrame (pandas is optional).
            Numbers keep their dtype; a pandas categorical keeps its categories as
            levels, which a model records and matches by label later. Dates, times,
            durations and complex numbers are refused (convert them first), as are
            missing and infinite values and two columns of one name.
            Or files, streamed at every call and never held in memory: a path, a
            glob (``"data/part-*.csv"``) or a list of them. CSV files (a header
            row of column names, the same in every file) unless ``example_spec``
            is given; then TFRecord files of ``tf.Example`` records. See
            :mod:`pyhooks.estimators.files` for the column types' rule; a bad
            value stops the call with an error naming the column, the file and
            the row.
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
        column_types: CSV files: ``{column: "numeric" | "integer" | "string"}`` for
            columns whose type is not to be taken from the first ``guess_rows`` rows
            (whole numbers: integer; numbers: numeric; else string).
        na: CSV files: the fields that mean a missing value, refused in every
            column (default ``""`` and ``"NA"``).
        example_spec: TFRecord files: the parsing spec of the records, e.g.
            :func:`~pyhooks.estimators.regressor_parse_example_spec` (one value, or
            a fixed shape, per example; a ``VarLenFeature`` must hold exactly one
            value in every record).
        guess_rows: files: the rows of the first file read by ``input_fn()`` to
            check the input (and to infer a CSV file's column types).

    With files, ``queue_capacity`` None means a shuffle buffer of 10,000 rows,
    and the files are read in a new random order every epoch when shuffling.

    Returns:
        an :class:`InputFn`, to pass to ``train()``, ``evaluate()`` or ``predict()``.

    Raises:
        ValueError / TypeError naming the argument or column: unknown column,
        wrong type, missing values (NaN/None), no rows, bad batch_size...

    Example:
        >>> data = load_mtcars()
        >>> input = input_fn(data, features=["drat", "cyl"], response="mpg", batch_size=8)
        >>> big = input_fn("data/*.csv", features=["drat", "cyl"], response="mpg")
    """
    na = _na(na)
    guess_rows = check_positive("guess_rows", guess_rows, integer=True, allow_none=False)
    if not is_files(data):
        for argument, given in (("column_types", column_types is not None),
                                ("example_spec", example_spec is not None),
                                ("na", na != ("", "NA")), ("guess_rows", guess_rows != 1000)):
            if given:
                raise ValueError(f"`{argument}` is for files; `data` is {type(data).__name__}.")
        return inputs.input_fn(data, features, response, batch_size, shuffle, num_epochs,
                               queue_capacity, num_threads, seed)
    feature_names = inputs._names("features", features, allow_none=False)
    response_names = inputs._names("response", response, allow_none=True)
    options = inputs._options(feature_names, response_names, batch_size, shuffle, num_epochs,
                              queue_capacity, num_threads, seed)
    return file_input(data, feature_names, response_names, options, column_types, na,
                      example_spec, guess_rows)
