"""Built-in hooks driven the way TensorFlow's tests and some frameworks drive them.

``begin()``, then ``before_run``/``after_run`` around a plain ``tf.compat.v1.Session``
(``hooktest_util.drive``): nobody calls ``after_create_session``. TensorFlow's
hooks work that way, so pyhooks' must too; where TensorFlow has the same hook,
the test runs it beside pyhooks' under the same driver and compares what they did.
"""

import io
import os

import pytest

from hooktest_util import counter_graph, drive, read_events, scalars

tf = pytest.importorskip("tensorflow")
v1 = tf.compat.v1

import pyhooks  # noqa: E402


def driven(make_hook, steps, init=True):
    """(hook, results of ``steps`` driven steps) on a fresh counter graph."""
    g = counter_graph()
    with g.graph.as_default():
        hook = make_hook(g)
        hook.begin()
        with v1.Session() as sess:
            if init:
                sess.run(v1.global_variables_initializer())
            results = drive([hook], sess, g.train_op, steps)
            hook.end(sess)
    return hook, results


def test_step_counter_writes_the_same_steps_as_tensorflows(tmp_path):
    written = {}
    for name, cls in (("pyhooks", pyhooks.StepCounterHook), ("tf", v1.train.StepCounterHook)):
        out = tmp_path / name
        driven(lambda g, cls=cls, out=out: cls(every_n_steps=3, output_dir=str(out)), 10)
        v1.summary.FileWriterCache.clear()  # closes (flushes) TensorFlow's cached writer
        written[name] = [step for step, rate in scalars(out, "global_step/sec") if rate > 0]
    assert written["pyhooks"] == written["tf"] == [4, 7, 10]


def test_history_saver_rows_without_after_create_session():
    hook, _ = driven(lambda g: pyhooks.HistorySaverHook(every_n_step=2, loss=g.loss), 6)
    assert hook.history.to_dict()["steps"] == [2, 4, 6]


def test_history_saver_rows_equal_those_under_monitored_session():
    g = counter_graph()
    with g.graph.as_default():
        hook = pyhooks.HistorySaverHook(every_n_step=2, loss=g.loss)
        with pyhooks.MonitoredSession(hooks=[hook]) as sess:
            for _ in range(6):
                sess.run(g.train_op)
    driven_hook, _ = driven(lambda g: pyhooks.HistorySaverHook(every_n_step=2, loss=g.loss), 6)
    assert driven_hook.history.to_dict() == hook.history.to_dict()


@pytest.mark.parametrize("cls", [pyhooks.StopAtStepHook, v1.train.StopAtStepHook])
def test_stop_at_last_step_as_tensorflow(cls):
    _, results = driven(lambda g: cls(last_step=3), 10)
    assert len(results) == 3


def test_stop_after_num_steps_counts_from_the_first_driven_run():
    # TensorFlow's hook needs after_create_session for num_steps (it compares with None);
    # pyhooks' counts from the first run it sees.
    _, results = driven(lambda g: pyhooks.StopAtStepHook(num_steps=4), 10)
    assert len(results) == 4


def test_checkpoint_saver_saves_as_tensorflows(tmp_path):
    saved = {}
    for name, cls in (("pyhooks", pyhooks.CheckpointSaverHook),
                      ("tf", v1.train.CheckpointSaverHook)):
        out = str(tmp_path / name)
        driven(lambda g, cls=cls, out=out: cls(out, save_steps=2, saver=v1.train.Saver()), 5)
        saved[name] = sorted(int(p.split("-")[-1].split(".")[0]) for p in os.listdir(out)
                             if p.endswith(".index"))
    assert saved["pyhooks"] == saved["tf"]


def test_summary_saver_writes_the_same_steps_as_tensorflows(tmp_path):
    written = {}
    for name, cls in (("pyhooks", pyhooks.SummarySaverHook), ("tf", v1.train.SummarySaverHook)):
        out = str(tmp_path / name)

        def make(g, cls=cls, out=out):
            return cls(save_steps=3, output_dir=out, summary_op=v1.summary.scalar("x", g.x))
        driven(make, 7)
        v1.summary.FileWriterCache.clear()
        written[name] = [e.step for e in read_events(out)
                         if any(v.tag == "x" for v in e.summary.value)]
    assert written["pyhooks"] == written["tf"]


def test_logging_tensor_logs_every_n_as_tensorflows(monkeypatch):
    from tensorflow.python.platform import tf_logging

    seen = []
    monkeypatch.setattr(tf_logging, "info", lambda msg, *args, **kw: seen.append(msg % args))
    for cls in (pyhooks.LoggingTensorHook, v1.train.LoggingTensorHook):
        driven(lambda g, cls=cls: cls({"x": g.loss.name}, every_n_iter=2), 5)
    ours, theirs = seen[:len(seen) // 2], seen[len(seen) // 2:]
    assert len(ours) == len(theirs) == 3
    assert [m.split(" (")[0] for m in ours] == [m.split(" (")[0] for m in theirs]


def test_nan_tensor_stops_without_after_create_session():
    def make(g):
        return pyhooks.NanTensorHook(g.loss * float("nan"), fail_on_nan_loss=False)
    with pytest.warns(pyhooks.NanLossWarning):
        _, results = driven(make, 5)
    assert len(results) == 1


@pytest.mark.parametrize("make", [
    lambda g: pyhooks.ProgressBarHook(total=4, loss=g.loss, writer=io.StringIO(), mode="plain"),
    lambda g: pyhooks.GlobalStepWaiterHook(wait_until_step=0),
    lambda g: pyhooks.FinalOpsHook(g.x),
    lambda g: pyhooks.FeedFnHook(lambda: {g.delta: 2.0}),
    lambda g: pyhooks.LambdaHook(after_run=lambda context, values: None),
], ids=["ProgressBarHook", "GlobalStepWaiterHook", "FinalOpsHook", "FeedFnHook", "LambdaHook"])
def test_other_hooks_run_without_after_create_session(make):
    hook, results = driven(make, 4)
    assert len(results) == 4


def test_profiler_traces_without_after_create_session(tmp_path):
    def make(g):
        return pyhooks.ProfilerHook(save_steps=2, output_dir=str(tmp_path))
    driven(make, 5)
    timelines = sorted(p for p in os.listdir(tmp_path) if p.startswith("timeline-"))
    assert timelines == ["timeline-2.json", "timeline-4.json"]  # as under MonitoredSession
