"""History.plot(): matplotlib, one panel per metric, written to a real file and read back."""

import sys

import pytest

from pyhooks.hooks.history_saver import History


def history(rows, metrics=()):
    h = History(metrics)
    for row in rows:
        h.append_values(row)
    return h


def test_one_panel_per_metric_with_evaluation_series(tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    h = history([(4.0, 32.0, 1, 5.0), (3.0, 24.0, 2, float("nan")), (2.0, 16.0, 3, 2.5)],
                metrics=("val_mean_losses",))
    figure = h.plot()
    axes = figure.get_axes()
    assert [a.get_ylabel() for a in axes] == ["mean_losses", "total_losses"]
    lines = axes[0].get_lines()
    assert [l.get_label() for l in lines] == ["training", "evaluation"]
    assert list(lines[1].get_xdata()) == [1, 3]  # the missing value is left out
    assert lines[0].get_marker() == "o"  # a short run shows its points
    path = tmp_path / "history.png"
    figure.savefig(path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_long_runs_draw_lines_only_and_metrics_select_panels():
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    h = history([(1.0 / i, 8.0 / i, i) for i in range(1, 31)])
    figure = h.plot(metrics="total_losses")
    (axis,) = figure.get_axes()
    assert axis.get_ylabel() == "total_losses"
    assert axis.get_lines()[0].get_marker() in ("None", None, "")
    with pytest.raises(ValueError, match=r"`metrics` must be None or some of \['mean_losses', "
                                         r"'total_losses'\], got \['nope'\]"):
        h.plot(metrics=["nope"])
    with pytest.raises(ValueError, match="`ax` must give one Axes per metric \\(2\\), got 1"):
        h.plot(ax=[axis])


def test_without_matplotlib_the_error_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match="History.plot\\(\\) needs matplotlib: pip install "
                                          "matplotlib"):
        history([(1.0, 2.0, 1)]).plot()
