import csv
import sys

import pytest
import tensorflow as tf

import pyhooks
from loss_graph import expected_losses, regression_graph, session, train
from pyhooks.hooks.history_saver import History, HistorySaverHook


def rows_for(*steps):
    return [{"mean_losses": expected_losses(s)[0], "total_losses": expected_losses(s)[1],
             "steps": s} for s in steps]


@pytest.mark.parametrize("runner", ["pyhooks", "tf"])
def test_every_second_step_over_four_steps(runner):
    hook = HistorySaverHook(every_n_step=2)
    train(regression_graph(), [hook], steps=4, runner=runner)
    assert hook.history.rows() == rows_for(2, 4)
    assert hook.history.to_dict() == {
        "mean_losses": [43.5, 211.5], "total_losses": [174.0, 846.0], "steps": [2, 4]}


def test_last_step_is_always_recorded():
    hook = HistorySaverHook(every_n_step=2)
    train(regression_graph(), [hook], steps=3)
    assert [row["steps"] for row in hook.history.rows()] == [2, 3]


def test_short_run_is_never_empty():
    hook = HistorySaverHook()  # every 10 steps
    train(regression_graph(), [hook], steps=1)
    assert hook.history.rows() == rows_for(1)


def test_last_step_recorded_when_input_runs_out():
    hook = HistorySaverHook(every_n_step=2)
    assert train(regression_graph(batches=3), [hook], steps=10) == 3
    assert hook.history.to_dict()["steps"] == [2, 3]


def test_whole_double_is_accepted():
    hook = HistorySaverHook(every_n_step=2.0)
    train(regression_graph(), [hook], steps=4)
    assert hook.history.to_dict()["steps"] == [2, 4]


def test_counts_from_the_global_step_at_session_creation():
    ns = regression_graph()
    first, second = HistorySaverHook(every_n_step=2), HistorySaverHook(every_n_step=2)
    with ns.graph.as_default(), session([first, second]) as sess:
        for _ in range(3):
            sess.run(ns.train_op)
    assert first.history.to_dict()["steps"] == [2, 3]
    assert first.history is not second.history


def test_two_hooks_do_not_share_history():
    a, b = HistorySaverHook(every_n_step=1), HistorySaverHook(every_n_step=2)
    train(regression_graph(), [a], steps=2)
    train(regression_graph(), [b], steps=1)
    assert a.history.to_dict()["steps"] == [1, 2]
    assert b.history.to_dict()["steps"] == [1]


def test_each_run_gets_a_fresh_history():
    hook = HistorySaverHook(every_n_step=1)
    train(regression_graph(), [hook], steps=2)
    first = hook.history
    train(regression_graph(), [hook], steps=1)
    assert first.to_dict()["steps"] == [1, 2]
    assert hook.history.to_dict()["steps"] == [1]


def test_explicit_loss_and_metrics():
    ns = regression_graph(collect=False)
    with ns.graph.as_default():
        tf.multiply(ns.loss, 2.0, name="double")  # fetched by its name
    hook = HistorySaverHook(every_n_step=1, loss=ns.per_example,
                            metrics={"loss": ns.loss, "double": "double:0"})
    train(ns, [hook], steps=2)
    assert hook.history.columns == ["mean_losses", "total_losses", "steps", "loss", "double"]
    assert hook.history.to_dict()["loss"] == [30.0, 174.0]
    assert hook.history.to_dict()["double"] == [60.0, 348.0]
    assert repr(hook.history).splitlines()[0] == "  mean_losses total_losses steps loss double"


def test_metrics_by_op_or_tensor_name_record_their_values():
    ns = regression_graph(collect=False)
    with ns.graph.as_default():
        tf.multiply(ns.loss, 2.0, name="double")
    hook = HistorySaverHook(every_n_step=1, loss=ns.per_example,
                            metrics={"gs": "global_step", "gs0": "global_step:0",
                                     "double": "double"})
    train(ns, [hook], steps=2)
    rows = hook.history.to_dict()
    assert rows["steps"] == [1, 2]
    # the variable as the step fetched it. The step's train_op increments it in the same
    # session call, and TensorFlow does not order a variable's fetch against an assign to it:
    # the value is the one before the increment or after it (after it in ~1% of runs here)
    assert rows["gs"] == rows["gs0"]
    assert all(value in (step - 1, step) for value, step in zip(rows["gs"], rows["steps"]))
    assert rows["double"] == [60.0, 348.0]


def test_a_metric_name_without_a_value_names_the_metric_and_the_name():
    ns = regression_graph(collect=False)
    with ns.graph.as_default(), pytest.raises(pyhooks.HookSetupError) as info:
        tf.no_op(name="nothing")
        session([HistorySaverHook(loss=ns.per_example, metrics={"n": "nothing"})])
    assert str(info.value).startswith("HistorySaverHook: `metrics` 'n' 'nothing' is not a tensor")
    assert "'nothing', exists but only has 0 outputs" in str(info.value)


def test_missing_loss_names_the_hook():
    ns = regression_graph(collect=False)
    with ns.graph.as_default(), pytest.raises(RuntimeError, match="HistorySaverHook found no loss"):
        session([HistorySaverHook()])


def test_missing_global_step_names_the_hook():
    with tf.Graph().as_default():
        tf.compat.v1.add_to_collection("losses", tf.constant([1.0]))
        with pytest.raises(RuntimeError, match="HistorySaverHook"):
            session([HistorySaverHook()])


def test_csv_rows_written_as_recorded_and_kept_after_a_crash(tmp_path):
    path = tmp_path / "history.csv"
    hook = HistorySaverHook(every_n_step=2, path=path)
    assert not path.exists()  # no I/O at construction
    ns = regression_graph()
    with pytest.raises(ZeroDivisionError):
        with ns.graph.as_default(), session([hook]) as sess:
            for i in range(3):
                sess.run(ns.train_op)
                if i == 1:
                    with path.open() as f:  # flushed as recorded
                        assert list(csv.reader(f))[1][2] == "2"
            1 / 0
    with path.open() as f:
        rows = list(csv.DictReader(f))
    assert [(float(r["mean_losses"]), float(r["total_losses"]), int(r["steps"])) for r in rows] == [
        (*expected_losses(2), 2), (*expected_losses(3), 3)]
    assert hook._file is None  # closed in after_error


def test_csv_header_written_once_across_runs_and_each_run_numbered(tmp_path):
    path = tmp_path / "new" / "h.csv"  # the directory is created with the file
    hook = HistorySaverHook(every_n_step=1, path=str(path))
    train(regression_graph(), [hook], steps=1)
    train(regression_graph(), [hook], steps=1)  # as resumed: step 1 again, run 2
    train(regression_graph(), [HistorySaverHook(every_n_step=1, path=str(path))], steps=1)
    assert path.read_text().splitlines() == [
        "mean_losses,total_losses,steps,run", "7.5,30.0,1,1", "7.5,30.0,1,2", "7.5,30.0,1,3"]


def test_a_row_cut_short_is_dropped_before_the_next_run_appends(tmp_path):
    path = tmp_path / "h.csv"
    path.write_text("mean_losses,total_losses,steps,run\r\n7.5,30.0,1,4\r\n7.5,30")  # a full disk
    train(regression_graph(), [HistorySaverHook(every_n_step=1, path=path)], steps=1)
    assert path.read_text().splitlines() == [
        "mean_losses,total_losses,steps,run", "7.5,30.0,1,4", "7.5,30.0,1,5"]
    path.write_text("mean_l")  # even the header
    train(regression_graph(), [HistorySaverHook(every_n_step=1, path=path)], steps=1)
    assert path.read_text().splitlines() == ["mean_losses,total_losses,steps,run", "7.5,30.0,1,1"]


def test_csv_of_other_columns_is_refused_and_left_alone(tmp_path):
    path = tmp_path / "h.csv"
    path.write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match=r"History file .*h.csv' has the columns \['a', 'b'\]"):
        train(regression_graph(), [HistorySaverHook(every_n_step=1, path=path)], steps=1)
    assert path.read_text() == "a,b\n1,2\n"


def test_repr_is_an_r_style_table():
    history = History()
    history.append({"mean_losses": 343.969, "total_losses": 2751.752, "steps": 2})
    history.append({"mean_losses": 419.7618, "total_losses": 3358.094, "steps": 4})
    assert repr(history) == (
        "  mean_losses total_losses steps\n"
        "1    343.9690     2751.752     2\n"
        "2    419.7618     3358.094     4")
    assert len(history) == 2


def test_rows_added_as_dicts_or_as_values_read_back_as_columns_and_rows():
    history = History(metrics={"acc": None})
    history.append({"steps": 2, "acc": 0.5, "total_losses": 4.0, "mean_losses": 1.0})
    history.append_values((2.0, 8.0, 4, 0.75))
    assert history.columns == ["mean_losses", "total_losses", "steps", "acc"]
    assert history.to_dict() == {"mean_losses": [1.0, 2.0], "total_losses": [4.0, 8.0],
                                 "steps": [2, 4], "acc": [0.5, 0.75]}
    assert history.rows()[1] == {"mean_losses": 2.0, "total_losses": 8.0, "steps": 4, "acc": 0.75}
    with pytest.raises(ValueError, match=r"a row has 4 values \(mean_losses, total_losses, "
                                         r"steps, acc\), got 3"):
        history.append_values((1.0, 2.0, 3))
    with pytest.raises(KeyError, match="acc"):
        history.append({"mean_losses": 1.0, "total_losses": 2.0, "steps": 3})
    assert len(history) == 2


def test_repr_of_empty_and_special_values():
    assert repr(History()) == "<History: 0 rows> columns: mean_losses, total_losses, steps"
    history = History()
    history.append({"mean_losses": float("nan"), "total_losses": float("inf"), "steps": 1})
    assert repr(history).splitlines()[1] == "1         NaN          Inf     1"


def test_to_pandas(monkeypatch):
    import types

    fake = types.ModuleType("pandas")
    fake.DataFrame = lambda data: ("DataFrame", data)
    monkeypatch.setitem(sys.modules, "pandas", fake)
    history = History()
    history.append({"mean_losses": 1.0, "total_losses": 2.0, "steps": 3})
    assert history.to_pandas() == (
        "DataFrame", {"mean_losses": [1.0], "total_losses": [2.0], "steps": [3]})


def test_to_pandas_without_pandas_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match="pip install pandas"):
        History().to_pandas()


@pytest.mark.parametrize("kwargs, error, message", [
    ({"every_n_step": 2.5}, ValueError, "`every_n_step` must be a whole number, got 2.5."),
    ({"every_n_step": 0}, ValueError, "`every_n_step` must be positive, got 0."),
    ({"every_n_step": -3}, ValueError, "`every_n_step` must be positive, got -3."),
    ({"every_n_step": None}, ValueError, "`every_n_step` is required, got None."),
    ({"every_n_step": "2"}, TypeError, "`every_n_step` must be a whole number, got '2' (str)."),
    ({"path": 3}, TypeError, "`path` must be a file path or None, got 3 (int)."),
    ({"path": ""}, ValueError, "`path` must be a file path or None, got ''."),
    ({"path": "/"}, ValueError, "`path` must be a file path or None, got '/' (a directory)."),
    ({"metrics": [1]}, TypeError, "`metrics` must be a dict of name -> tensor, got [1]."),
    ({"metrics": {"steps": "x"}}, ValueError, "`metrics` names must be strings other than "
                                               "('mean_losses', 'total_losses', 'steps'), "
                                               "got 'steps'."),
])
def test_bad_arguments(kwargs, error, message):
    with pytest.raises(error) as info:
        HistorySaverHook(**kwargs)
    assert str(info.value) == message
