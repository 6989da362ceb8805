"""The :class:`History` that ``HistorySaverHook`` records: columns, rows, an R-style print."""

from __future__ import annotations

import csv
import math
import os

__all__ = ["BASE_COLUMNS", "RUN_COLUMN", "History", "open_csv"]

BASE_COLUMNS = ("mean_losses", "total_losses", "steps")
RUN_COLUMN = "run"  # CSV files only: which run appended the row (1, 2, ...)


def open_csv(path, columns):
    """``(file, run)``: ``path`` opened to append rows of ``columns`` and the run's number.

    A new or empty file gets the header ``columns + ["run"]`` and run 1; an
    existing one must have that header, and the run is one more than that of
    its last row (only the header and the end of the file are read). A last
    line cut short (a full disk, a killed process) is dropped.

    Raises:
        ValueError: the file has another header (written by other code, or
            with other metrics).
    """
    header = [*columns, RUN_COLUMN]
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "ab+") as raw:
        size = raw.seek(0, os.SEEK_END)
        tail = b""
        if size:
            raw.seek(max(0, size - 65536))
            tail = raw.read()
            if not tail.endswith(b"\n"):  # a row cut short: dropped, not continued
                cut = tail.rfind(b"\n") + 1
                size = size - len(tail) + cut
                raw.truncate(size)
                tail = tail[:cut]
        raw.seek(0)
        first = raw.readline() if size else b""
    found = next(csv.reader([first.decode("utf-8", "replace")]), None) if first else None
    if found is not None and found != header:
        raise ValueError(f"History file {path!r} has the columns {found}, not {header}: "
                         "give another `path` (or move that file away).")
    run = 1
    lines = tail.splitlines()
    if found is not None and lines:  # the header's last field, "run", is no number
        last = next(csv.reader([lines[-1].decode("utf-8", "replace")]), [])
        if last and last[-1].isdigit():
            run = int(last[-1]) + 1
    stream = open(path, "a", newline="", encoding="utf-8")  # noqa: SIM115
    if found is None:
        csv.writer(stream).writerow(header)
    return stream, run


def _r_format(values):
    """Formats a numeric column as R prints a data.frame: 7 significant digits, aligned.

    None (no value: a step that was not evaluated) prints as R's ``NA``.
    """
    if all(isinstance(v, int) or v is None for v in values):
        return ["NA" if v is None else str(v) for v in values]
    finite = [v for v in values if v is not None and math.isfinite(v)]
    texts = [f"{v:.7g}" for v in finite]
    if any("e" in t for t in texts):
        digits = None
    else:
        digits = max((len(t.partition(".")[2]) for t in texts), default=0)
    special = {math.inf: "Inf", -math.inf: "-Inf"}
    return ["NA" if v is None else ("NaN" if v != v else special[v]) if not math.isfinite(v)
            else (f"{v:.7g}" if digits is None else f"{v:.{digits}f}") for v in values]


class History:
    """Recorded rows, column by column: ``mean_losses``, ``total_losses``, ``steps``, then metrics.

    Attributes:
        runs: per row, the run that recorded it: 1, then 2 for the rows of a
            ``train()`` that resumed an interrupted one (the hook state of
            :mod:`pyhooks.hooks._hook_state`), and so on.
        run: the run whose rows are being recorded.
        stop: why the ``train()`` that returned it stopped (a
            :class:`pyhooks.estimators.stopping.StopReason`), or None.

    Example:
        >>> history = hook.history
        >>> history.to_dict()["steps"]
        [2, 4]
    """

    def __init__(self, metrics=()):
        self._names = (*BASE_COLUMNS, *metrics)
        self._rows = []  # tuples in column order: a row is one append (read as columns)
        self._runs = []
        self.run = 1
        self.stop = None

    @property
    def columns(self):
        return list(self._names)

    def append(self, row):
        """Adds one row given as ``{column: value}`` (every column required)."""
        self._rows.append(tuple(row[name] for name in self._names))
        self._runs.append(self.run)

    def append_values(self, values):
        """Adds one row given as a tuple of its values in column order."""
        if len(values) != len(self._names):
            raise ValueError(f"a row has {len(self._names)} values ({', '.join(self._names)}), "
                             f"got {len(values)}")
        self._rows.append(values)
        self._runs.append(self.run)

    @property
    def runs(self):
        return list(self._runs)

    def state(self):
        """The rows and their runs, as JSON data (see :meth:`resumed`)."""
        return {"columns": list(self._names), "rows": [list(row) for row in self._rows],
                "runs": list(self._runs)}

    def resumed(self, state):
        """The rows of ``state`` (from :meth:`state`) kept, then those of a new run.

        Raises:
            ValueError: ``state`` has other columns than this history.
        """
        if list(state["columns"]) != list(self._names):
            raise ValueError(f"the saved history has the columns {state['columns']}, this one "
                             f"{list(self._names)}: a hook with other metrics")
        self._rows = [tuple(row) for row in state["rows"]]
        self._runs = [int(run) for run in state["runs"]]
        self.run = max(self._runs, default=0) + 1

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

    def plot(self, metrics=None, ax=None):
        """Draws the history with matplotlib: one panel per metric against ``steps``.

        Columns named ``val_<metric>`` or ``eval_<metric>`` are drawn in the panel of
        ``<metric>`` as its evaluation series. Lines where a series has two points or
        more, points for short runs (as R's ``plot(history)``).

        Args:
            metrics: the metrics to draw (e.g. ``["mean_losses"]``), or None for all.
            ax: a matplotlib ``Axes`` (one metric) or a sequence of them (one per
                metric), or None for a new figure.

        Returns:
            the matplotlib ``Figure``.

        Raises:
            ImportError: matplotlib is not installed (says how to install it).
            ValueError: an unknown metric, or ``ax`` not matching the metrics.

        Example:
            >>> figure = hook.history.plot()
            >>> figure.savefig("history.png")
        """
        try:
            import matplotlib.pyplot as plt
        except ImportError as error:
            raise ImportError("History.plot() needs matplotlib: pip install matplotlib") from error
        columns = [name for name in self._names if name != "steps"]
        metric_of = {name: name.split("_", 1)[1] if name.startswith(("val_", "eval_")) else name
                     for name in columns}
        known = list(dict.fromkeys(metric_of.values()))
        if metrics is None:
            metrics = known
        else:
            metrics = [metrics] if isinstance(metrics, str) else list(metrics)
            unknown = [m for m in metrics if m not in known]
            if unknown or not metrics:
                raise ValueError(f"`metrics` must be None or some of {known}, got {metrics!r}.")
        if ax is None:
            figure, axes = plt.subplots(len(metrics), 1, sharex=True, squeeze=False,
                                        figsize=(6, 2.2 * len(metrics)))
            axes = list(axes[:, 0])
        else:
            axes = [ax] if hasattr(ax, "plot") else list(ax)
            if len(axes) != len(metrics):
                raise ValueError(f"`ax` must give one Axes per metric ({len(metrics)}), "
                                 f"got {len(axes)}.")
            figure = axes[0].figure
        data = self.to_dict()
        steps = data["steps"]
        for axis, metric in zip(axes, metrics):
            for name in (n for n in columns if metric_of[n] == metric):
                points = [(s, v) for s, v in zip(steps, data[name]) if v is not None and v == v]
                label = "evaluation" if name != metric else "training"
                style = "o-" if len(points) < 20 else "-"
                axis.plot([s for s, _ in points], [v for _, v in points], style, label=label,
                          markersize=4)
            axis.set_ylabel(metric)
            if len([n for n in columns if metric_of[n] == metric]) > 1:
                axis.legend()
        axes[-1].set_xlabel("steps")
        return figure

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
