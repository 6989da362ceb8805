"""Small data sets shipped with pyhooks (for examples and tests)."""

from __future__ import annotations

import csv
from importlib import resources

import numpy as np

__all__ = ["load_mtcars"]

_MTCARS_COLUMNS = ("mpg", "cyl", "disp", "hp", "drat", "wt", "qsec", "vs", "am", "gear", "carb")


def load_mtcars(row_names=False):
    """R's ``mtcars`` (Motor Trend, 1974): 32 cars, 11 numeric columns, as R has them.

    Args:
        row_names: also return the car names under the key ``"model"``.

    Returns:
        ``{column: numpy float64 array of 32 values}`` for ``mpg cyl disp hp drat
        wt qsec vs am gear carb`` (all doubles, as in R).

    Example:
        >>> round(float(load_mtcars()["mpg"].mean()), 5)
        20.09062
    """
    text = resources.files("pyhooks").joinpath("data/mtcars.csv").read_text(encoding="utf-8")
    rows = list(csv.DictReader(text.splitlines()))
    data = {name: np.array([float(row[name]) for row in rows]) for name in _MTCARS_COLUMNS}
    if row_names:
        data["model"] = np.array([row["model"] for row in rows])
    return data
