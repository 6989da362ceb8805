import json

import pytest

from loss_graph import regression_graph, session, train
from pyhooks import SessionRunHook
from pyhooks.hooks.history_saver import HistorySaverHook
from pyhooks.hooks.profiler import ProfilerHook


def check_trace_event_format(trace):
    """The parts of the Trace Event format that viewers rely on."""
    assert isinstance(trace["traceEvents"], list) and trace["traceEvents"]
    for event in trace["traceEvents"]:
        assert isinstance(event["name"], str)
        assert event["ph"] in "XMsftNDOC"
        assert isinstance(event["pid"], int) and isinstance(event["tid"], int)
        if event["ph"] == "X":
            assert event["ts"] >= 0 and event["dur"] >= 0


def load(path):
    with open(path) as f:
        trace = json.load(f)
    check_trace_event_format(trace)
    return trace


def timelines(directory):
    return sorted(p.name for p in directory.iterdir() if p.name.startswith("timeline-"))


def spans(trace):
    return [e for e in trace["traceEvents"] if e.get("cat") == "pyhooks"]


class Slow(SessionRunHook):
    def after_run(self, run_context, run_values):
        sum(range(1000))


class SeesTimelines(SessionRunHook):
    """Runs after the ProfilerHook: lists the timelines there are at each step's after_run."""

    def __init__(self, directory):
        self.directory, self.seen = directory, []

    def after_run(self, run_context, run_values):
        there = self.directory.exists()
        self.seen.append(timelines(self.directory) if there else [])


def test_timelines_with_tf_ops_and_hook_spans(tmp_path):
    hook = ProfilerHook(save_steps=2, output_dir=tmp_path / "prof")
    assert not (tmp_path / "prof").exists()  # created when the first file is written
    sees = SeesTimelines(tmp_path / "prof")
    train(regression_graph(), [HistorySaverHook(every_n_step=1), hook, Slow(), sees], steps=5)
    # as TensorFlow: written in the traced step's after_run (step 2 is the second run)
    assert sees.seen[1] == ["timeline-2.json"] and sees.seen[3][-1] == "timeline-4.json"
    from tensorflow.core.util import event_pb2
    import tensorflow as tf

    tags = [event.tagged_run_metadata.tag
            for path in (tmp_path / "prof").glob("events.out.tfevents.*")
            for event in map(event_pb2.Event.FromString,
                             tf.compat.v1.io.tf_record_iterator(str(path)))
            if event.HasField("tagged_run_metadata")]
    assert tags == ["step_2", "step_4"]  # TensorBoard's run metadata of the traced steps
    assert timelines(tmp_path / "prof") == [
        "timeline-2.json", "timeline-4.json"]  # as TensorFlow: the first step starts the timer
    trace = load(tmp_path / "prof" / "timeline-2.json")
    ops = [e["name"] for e in trace["traceEvents"] if e["ph"] == "X" and e.get("cat") == "Op"]
    assert "AssignAddVariableOp" in ops or any("AssignAdd" in name for name in ops)
    assert sorted(e["name"] for e in spans(trace)) == sorted([
        "HistorySaverHook.before_run", "ProfilerHook.before_run",
        "HistorySaverHook.after_run", "ProfilerHook.after_run", "Slow.after_run",
        "SeesTimelines.after_run", "MonitoredSession.run"])
    pid = spans(trace)[0]["pid"]
    assert all(e["pid"] == pid and e["ph"] == "X" and e["args"] == {"step": 2}
               for e in spans(trace))
    assert {"name": "process_name", "ph": "M", "pid": pid, "tid": 0,
            "args": {"name": "pyhooks hook calls (step 2)"}} in trace["traceEvents"]
    tf_pids = {e["pid"] for e in trace["traceEvents"] if e.get("cat") == "Op"}
    assert pid not in tf_pids
    run = next(e for e in spans(trace) if e["name"] == "MonitoredSession.run")
    for event in spans(trace):  # every hook call lies inside the step
        assert run["ts"] <= event["ts"] and event["ts"] + event["dur"] <= run["ts"] + run["dur"]


def test_every_step_and_the_last_traced_step_is_written_by_end(tmp_path):
    train(regression_graph(), [ProfilerHook(save_steps=1, output_dir=tmp_path)], steps=3)
    assert timelines(tmp_path) == ["timeline-2.json", "timeline-3.json"]
    assert len(spans(load(tmp_path / "timeline-3.json"))) == 3


def test_under_tensorflows_runner_only_tf_ops(tmp_path):
    train(regression_graph(), [ProfilerHook(save_steps=2, output_dir=tmp_path)], steps=3,
          runner="tf")
    trace = load(tmp_path / "timeline-2.json")
    assert spans(trace) == []
    assert any(e.get("cat") == "Op" for e in trace["traceEvents"])


def test_file_written_after_an_error(tmp_path):
    ns = regression_graph()
    with pytest.raises(ZeroDivisionError), ns.graph.as_default():
        with session([ProfilerHook(save_steps=1, output_dir=tmp_path)]) as sess:
            sess.run(ns.train_op)
            sess.run(ns.train_op)
            1 / 0
    assert timelines(tmp_path) == ["timeline-2.json"]


def test_untraced_steps_are_not_timed():
    hook = ProfilerHook(save_steps=100)
    ns = regression_graph()
    with ns.graph.as_default(), session([hook]) as sess:
        sess.run(ns.train_op)
        assert hook.pyhooks_span_sink is None
        sess.run(ns.train_op)
    assert hook._pending is None


def test_missing_global_step_names_the_hook():
    import tensorflow as tf

    with tf.Graph().as_default(), pytest.raises(RuntimeError, match="ProfilerHook"):
        session([ProfilerHook(save_steps=1)])


@pytest.mark.parametrize("kwargs, error, message", [
    ({}, ValueError, "Exactly one of `save_steps` and `save_secs` must be set, "
                     "got save_steps=None, save_secs=None."),
    ({"save_steps": 1, "save_secs": 1}, ValueError, "Exactly one of `save_steps` and `save_secs` "
                                                    "must be set, got save_steps=1, save_secs=1."),
    ({"save_steps": 2.5}, ValueError, "`save_steps` must be a whole number, got 2.5."),
    ({"save_secs": -1}, ValueError, "`save_secs` must be positive, got -1."),
    ({"save_steps": 1, "output_dir": 3}, TypeError,
     "`output_dir` must be a directory path, got 3."),
    ({"save_steps": 1, "show_memory": "yes"}, TypeError,
     "`show_memory` must be True or False, got 'yes' (str)."),
])
def test_bad_arguments(kwargs, error, message):
    with pytest.raises(error) as info:
        ProfilerHook(**kwargs)
    assert str(info.value) == message


def test_whole_double_save_steps(tmp_path):
    train(regression_graph(), [ProfilerHook(save_steps=2.0, output_dir=tmp_path)], steps=3)
    assert timelines(tmp_path) == ["timeline-2.json"]


# -- the runner's hook timings (pyhooks/session.py), driven with the in-memory fake session
class Sink(SessionRunHook):
    def __init__(self, every=1):
        self.pyhooks_span_sink = None
        self.sinks = []
        self.every, self.steps = every, 0
        self._arm()

    def _arm(self):
        self.pyhooks_span_sink = [] if self.steps % self.every == 0 else None
        self.sinks.append(self.pyhooks_span_sink)

    def after_run(self, run_context, run_values):
        self.steps += 1
        self._arm()


class Fetching(SessionRunHook):
    def __init__(self, tensor, fail=False):
        self.tensor, self.fail, self.results = tensor, fail, []

    def before_run(self, run_context):
        from pyhooks import SessionRunArgs

        return SessionRunArgs({"x": self.tensor})

    def after_run(self, run_context, run_values):
        if self.fail:
            raise KeyError("boom")
        self.results.append(run_values.results)


def test_runner_times_hooks_only_when_a_sink_is_set():
    from fakes import FakeCreator, FakeTensor
    from pyhooks import MonitoredSession

    fetching, sink = Fetching(FakeTensor("t")), Sink(every=2)
    with MonitoredSession(FakeCreator(), [fetching, sink]) as sess:
        for _ in range(3):
            sess.run(FakeTensor("y"))
    assert fetching.results == [{"x": "t@0"}, {"x": "t@1"}, {"x": "t@2"}]
    timed, untimed, timed_again = sink.sinks[:3]
    assert untimed is None and sink.sinks[3] is None
    assert [(name, method) for name, method, _, _ in timed] == [
        ("Fetching", "before_run"), ("Fetching", "after_run"), ("Sink", "after_run"),
        ("MonitoredSession", "run")]
    assert len(timed_again) == 4
    assert all(start <= end for _, _, start, end in timed)


def test_timed_step_keeps_hook_errors_and_notes():
    from fakes import FakeCreator, FakeTensor
    from pyhooks import MonitoredSession

    sink = Sink()
    with pytest.raises(KeyError) as info:
        with MonitoredSession(FakeCreator(), [Fetching(FakeTensor("t"), fail=True), sink]) as sess:
            sess.run(FakeTensor("y"))
    assert "pyhooks: raised in Fetching.after_run()" in info.value.__notes__
    assert [m for _, m, _, _ in sink.sinks[0]] == ["before_run", "after_run", "run"]


def test_runner_without_span_hooks_keeps_its_plain_step():
    from fakes import FakeCreator
    from pyhooks import MonitoredSession

    sess = MonitoredSession(FakeCreator(), [Fetching(None)])
    assert "_hooked_run" not in vars(sess)
    sess.close()


def test_save_secs_uses_the_timer_clock(tmp_path):
    hook = ProfilerHook(save_secs=10, output_dir=tmp_path)
    now = [0.0]
    hook._timer.clock = lambda: now[0]

    class Tick(SessionRunHook):
        def after_run(self, run_context, run_values):
            now[0] += 6.0

    train(regression_graph(), [Tick(), hook], steps=6)
    # primed after step 1 (t=6); due at t>=16, seen after step 3 (t=18): step 4 is traced
    # (t=24); due again at t>=34, seen after step 6: the next traced step would be 7
    assert timelines(tmp_path) == ["timeline-4.json"]


def test_save_secs_traces_when_the_period_has_passed_at_the_step_start(tmp_path):
    """The clock is read as a step starts (TensorFlow decides in before_run): a pause
    between two runs makes the next one traced. Same schedule for TensorFlow's hook."""
    import time
    from unittest import mock

    import tensorflow as tf

    counts = {}
    for name, make in (("pyhooks", ProfilerHook), ("tf", tf.compat.v1.train.ProfilerHook)):
        out = tmp_path / name
        ns = regression_graph()
        with mock.patch.object(time, "time") as clock, ns.graph.as_default():
            clock.return_value = 1000.0
            hook = make(save_secs=2, output_dir=str(out))
            counts[name] = []
            with session([hook], runner=name) as sess:
                for now in (1000.0, 1002.5, 1002.6, 1004.4, 1004.5):
                    clock.return_value = now
                    sess.run(ns.train_op)
                    counts[name].append(len(timelines(out)) if out.exists() else 0)
    assert counts["pyhooks"] == counts["tf"] == [0, 1, 1, 1, 2]


def test_save_secs_steps_traced_hold_the_hook_spans(tmp_path):
    from hooktest_util import FakeClock

    ns = regression_graph()
    hook = ProfilerHook(save_secs=2, output_dir=tmp_path)
    clock = hook._timer.clock = FakeClock()
    with ns.graph.as_default(), session([hook, Slow()]) as sess:
        sess.run(ns.train_op)
        clock.advance(3)
        sess.run(ns.train_op)
        sess.run(ns.train_op)
    [name] = timelines(tmp_path)
    assert {e["name"] for e in spans(load(tmp_path / name))} >= {"Slow.after_run"}
