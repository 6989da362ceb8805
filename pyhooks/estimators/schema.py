"""The data contract: what a model was trained on, recorded in model_dir and checked at every call.

At the first ``train()`` into a model_dir the estimator records, for each column
the model reads and for the response: its name, kind (``numeric``, ``integer``,
``boolean``, ``string`` or ``factor``), dtype, per-example shape and, for a
factor (an R factor, a pandas categorical), its levels in order. The record is
``model_dir/pyhooks_schema.json``; a new estimator object, another process or R
reads the same file. Every later ``train()``, ``evaluate()`` and ``predict()``
checks its input against it before any step runs:

* a factor's values are matched by label, never by code: a factor whose levels
  are listed in another order means the same data, and a classifier's class ids
  are the recorded levels' positions; a value that was not a level at training
  is an error naming the column, the value and the first row;
* a missing column, or a column whose kind changed (numbers where there were
  strings, a per-example shape that changed): an error naming the column;
* numbers where numbers were recorded are read as the recorded dtype when no
  value changes (``2L`` where ``2.0`` was recorded, whole doubles where integers
  were); a fraction where integers were recorded is an error;
* text and factors are both labels: either may follow the other (a factor's
  values are checked against its recorded levels either way);
* columns the model does not read, and the response of a ``predict()``, are
  ignored.

Dates, missing and infinite values are refused earlier, by ``input_fn()``.
"""

from __future__ import annotations

import json
import os
from typing import NamedTuple

import numpy as np

from pyhooks.estimators.inputs import row_label
from pyhooks.hooks._checkpointing import atomic_write_text
from pyhooks.hooks._model_dir import disk_error

__all__ = ["KIND_WORDS", "SCHEMA_FILE", "ColumnSchema", "Schema", "kind_of", "label_ids"]

SCHEMA_FILE = "pyhooks_schema.json"
_FORMAT = 1
# a kind as the user's language names it (data from R counts rows from 1)
KIND_WORDS = {1: {"numeric": "numeric", "integer": "integer", "boolean": "logical",
                   "string": "character", "factor": "factor"},
               0: {"numeric": "float", "integer": "integer", "boolean": "bool", "string": "str",
                   "factor": "categorical"}}
_COMPATIBLE = {"numeric": {"numeric", "integer"}, "integer": {"integer", "numeric"},
               "boolean": {"boolean"}, "string": {"string", "factor"},
               "factor": {"factor", "string"}}


def kind_of(array, factor):
    """The schema kind of a column: ``numeric``, ``integer``, ``boolean``, ``string``, ``factor``."""
    if factor is not None:
        return "factor"
    return {"f": "numeric", "i": "integer", "u": "integer", "b": "boolean"}.get(
        array.dtype.kind, "string")


class ColumnSchema(NamedTuple):
    """One recorded column."""

    name: str
    kind: str
    dtype: str
    shape: tuple
    levels: tuple | None = None

    @classmethod
    def of(cls, name, array, factor):
        kind = kind_of(array, factor)
        levels = None if factor is None else tuple(_plain(v) for v in factor.levels)
        dtype = "str" if kind in ("string", "factor") else array.dtype.name
        return cls(name, kind, dtype, tuple(int(d) for d in array.shape[1:]), levels)

    def as_json(self):
        data = {"name": self.name, "kind": self.kind, "dtype": self.dtype,
                "shape": list(self.shape)}
        if self.levels is not None:
            data["levels"] = list(self.levels)
        return data

    @classmethod
    def from_json(cls, data):
        levels = data.get("levels")
        return cls(data["name"], data["kind"], data["dtype"], tuple(data["shape"]),
                   None if levels is None else tuple(levels))


def _plain(value):
    """A level as JSON holds it (numpy scalars as Python ones)."""
    return value.item() if isinstance(value, np.generic) else value


class Schema:
    """The recorded columns of a model: ``features`` and ``response`` (lists of ColumnSchema)."""

    def __init__(self, features, response):
        self.features = list(features)
        self.response = list(response)

    def __repr__(self):
        return f"Schema(features={self.features}, response={self.response})"

    @property
    def response_levels(self):
        """The levels of a one-column factor response (a classifier's classes), or None."""
        if len(self.response) == 1 and self.response[0].kind == "factor":
            return self.response[0].levels
        return None

    @classmethod
    def record(cls, input_fn, features):
        """The schema of ``input_fn``'s columns ``features`` and of its response."""
        def column(name):
            return ColumnSchema.of(name, input_fn.columns[name], input_fn.factors.get(name))

        return cls([column(n) for n in features], [column(n) for n in input_fn.response])

    # -- model_dir
    @classmethod
    def load(cls, model_dir):
        """The schema recorded in ``model_dir``, or None if there is none yet."""
        path = os.path.join(model_dir, SCHEMA_FILE)
        try:
            with open(path, encoding="utf-8") as file:
                data = json.load(file)
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as error:
            raise ValueError(f"{path} is not a schema pyhooks can read ({error}): it records what "
                             "the model was trained on. Restore it, or remove it together with "
                             "the model's checkpoints to train a new model.") from error
        if data.get("format") != _FORMAT:
            raise ValueError(f"{path} has format {data.get('format')!r}; this pyhooks reads "
                             f"format {_FORMAT}.")
        return cls([ColumnSchema.from_json(c) for c in data["features"]],
                   [ColumnSchema.from_json(c) for c in data["response"]])

    def save(self, model_dir):
        """Writes the schema to ``model_dir`` (atomically: a crash leaves no half file)."""
        path = os.path.join(model_dir, SCHEMA_FILE)
        data = {"format": _FORMAT, "features": [c.as_json() for c in self.features],
                "response": [c.as_json() for c in self.response]}
        try:
            atomic_write_text(path, json.dumps(data, indent=1, ensure_ascii=False))
        except OSError as error:
            found = disk_error("the model's schema", model_dir, error)
            if found is None:
                raise
            raise found from None

    # -- checks
    def check(self, input_fn, labelled):
        """Raises a ValueError/TypeError naming the column if ``input_fn`` breaks the contract.

        ``labelled``: whether the call reads the response (train, evaluate).
        """
        for recorded in self.features:
            if recorded.name in input_fn.response:
                raise ValueError(f"Column {recorded.name!r} is the input's response; the model "
                                 "was trained on it as a feature.")
            if recorded.name not in input_fn.columns or recorded.name not in input_fn.features:
                given = ", ".join(input_fn.features)
                raise ValueError(f"The input has no feature column {recorded.name!r}, which the "
                                 f"model was trained on; its features are: {given}.")
            _check_column(recorded, input_fn, "Column")
        if not labelled:
            return
        names = [c.name for c in self.response]
        if input_fn.response != names:
            raise ValueError(f"The input's response is {input_fn.response}; the model was "
                             f"trained with {names}.")
        for recorded in self.response:
            _check_column(recorded, input_fn, "Response column")

    def as_recorded(self, name, array):
        """A numeric column as the dtype recorded for it (other kinds as they are)."""
        recorded = next((c for c in self.features + self.response if c.name == name), None)
        if recorded is None or recorded.kind not in ("numeric", "integer"):
            return array
        return array.astype(recorded.dtype, copy=False)


def _check_column(recorded, input_fn, what):
    name = recorded.name
    array = input_fn.columns[name]
    factor = input_fn.factors.get(name)
    kind = kind_of(array, factor)
    if kind not in _COMPATIBLE[recorded.kind]:
        words = KIND_WORDS[input_fn.first_row]
        raise TypeError(f"{what} {name!r} holds {words[kind]} values; the model was trained on "
                        f"{words[recorded.kind]} values in it. Give it data of that kind, or "
                        "train a new model (in another model_dir).")
    shape = tuple(array.shape[1:])
    if (shape or (1,)) != (recorded.shape or (1,)):  # [n] and [n, 1]: one value per example
        raise ValueError(f"{what} {name!r} holds {_per_example(shape)} per example; the model was "
                         f"trained on {_per_example(recorded.shape)}.")
    if recorded.kind == "integer" and kind == "numeric":
        fractions = np.mod(array, 1) != 0
        if fractions.any():
            first = int(np.flatnonzero(fractions.reshape(len(array), -1).any(axis=1))[0])
            value = _plain(array.reshape(len(array), -1)[first][0])
            raise TypeError(f"{what} {name!r} holds {value!r} "
                            f"at {row_label(first, input_fn.first_row)}; the model was trained "
                            "on whole numbers in it.")
    if recorded.kind == "factor":
        _check_levels(recorded, array, factor, input_fn.first_row, what)


def _check_levels(recorded, array, factor, first_row, what):
    """Every value is one of the recorded levels (by label); else an error naming the first one."""
    known = set(recorded.levels)
    if factor is not None:  # the factor's own levels first: most data has no new one
        new = [i for i, level in enumerate(factor.levels) if _plain(level) not in known]
        if not new:
            return
        used = np.isin(factor.codes, new)
        if not used.any():
            return  # unused levels of the factor: no value needs them
        first = int(np.flatnonzero(used)[0])
    else:
        unknown = ~np.isin(array, np.asarray(recorded.levels, dtype=array.dtype))
        if not unknown.any():
            return
        first = int(np.flatnonzero(unknown)[0])
    levels = ", ".join(map(repr, recorded.levels))
    raise ValueError(f"{what} {recorded.name!r} holds {_plain(array[first])!r} at "
                     f"{row_label(first, first_row)}, which was not one of its levels when the "
                     f"model was trained ({levels}).")


def label_ids(input_fn, name, labels, what):
    """``int64`` positions in ``labels`` of column ``name``'s values, matched by label.

    A factor is mapped through its own levels (one look-up per level, not per
    row). A value that is not in ``labels`` is a ValueError naming the column,
    the value, its first row and ``what`` the labels are (``"label_vocabulary"``,
    ``"the levels the model was trained on"``).
    """
    index = {_plain(label): i for i, label in enumerate(labels)}
    factor = input_fn.factors.get(name)
    if factor is not None:
        lookup = np.array([index.get(_plain(level), -1) for level in factor.levels], np.int64)
        ids = lookup[factor.codes] if len(lookup) else np.full(len(factor.codes), -1, np.int64)
    else:
        distinct, inverse = np.unique(input_fn.columns[name], return_inverse=True)
        ids = np.array([index.get(_plain(v), -1) for v in distinct], np.int64)[inverse]
    unknown = ids < 0
    if unknown.any():
        first = int(np.flatnonzero(unknown)[0])
        value = _plain(input_fn.columns[name][first])
        shown = ", ".join(map(repr, labels))
        raise ValueError(f"Response column {name!r} holds {value!r} at "
                         f"{row_label(first, input_fn.first_row)}, which is not in {what} "
                         f"({shown}).")
    return ids


def _per_example(shape):
    return "one value" if not shape else f"shape {list(shape)}"
