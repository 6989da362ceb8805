"""The :class:`History` that ``HistorySaverHook`` records: columns, rows, an R-style print."""

from __future__ import annotations

import math

__all__ = ["BASE_COLUMNS", "History"]

BASE_COLUMNS = ("mean_losses", "total_losses", "steps")


def _r_format(values):
    """Formats a numeric column as R prints a data.frame: 7 significant digits, aligned."""
    if all(isinstance(v, int) for v in values):
        return [str(v) for v in values]
    finite = [v for v in values if math.isfinite(v)]
    texts = [f"{v:.7g}" for v in finite]
    if any("e" in t for t in texts):
        digits = None
    else:
        digits = max((len(t.partition(".")[2]) for t in texts), default=0)
    special = {math.inf: "Inf", -math.inf: "-Inf"}
    return [("NaN" if v != v else special[v]) if not math.isfinite(v)
            else (f"{v:.7g}" if digits is None else f"{v:.{digits}f}") for v in values]


class History:
    """Recorded rows, column by column: ``mean_losses``, ``total_losses``, ``steps``, then metrics.

    Example:
        >>> history = hook.history
        >>> history.to_dict()["steps"]
        [2, 4]
    """

    def __init__(self, metrics=()):
        self._names = (*BASE_COLUMNS, *metrics)
        self._rows = []  # tuples in column order: a row is one append (read as columns)

    @property
    def columns(self):
        return list(self._names)

    def append(self, row):
        """Adds one row given as ``{column: value}`` (every column required)."""
        self._rows.append(tuple(row[name] for name in self._names))

    def append_values(self, values):
        """Adds one row given as a tuple of its values in column order."""
        if len(values) != len(self._names):
            raise ValueError(f"a row has {len(self._names)} values ({', '.join(self._names)}), "
                             f"got {len(values)}")
        self._rows.append(values)

    def to_dict(self):
        """``{column: [values]}`` as Python floats and ints."""
        return {name: [row[i] for row in self._rows] for i, name in enumerate(self._names)}

    def rows(self):
        """The rows as ``{column: value}`` dicts, in recording order."""
        return [dict(zip(self._names, row)) for row in self._rows]

    def to_pandas(self):
        """A ``pandas.DataFrame`` of the history (needs pandas: ``pip install pandas``)."""
        try:
            import pandas
        except ImportError as error:
            raise ImportError("History.to_pandas() needs pandas: pip install pandas") from error
        return pandas.DataFrame(self.to_dict())

    def __len__(self):
        return len(self._rows)

    def __repr__(self):
        if not len(self):
            return f"<History: 0 rows> columns: {', '.join(self._names)}"
        cells = [["", *map(str, range(1, len(self) + 1))]]
        cells += [[name, *_r_format(column)] for name, column in self.to_dict().items()]
        widths = [max(map(len, column)) for column in cells]
        lines = []
        for i in range(len(self) + 1):
            parts = [cells[0][i].ljust(widths[0])]
            parts += [column[i].rjust(width) for column, width in zip(cells[1:], widths[1:])]
            lines.append(" ".join(parts))
        return "\n".join(lines)
