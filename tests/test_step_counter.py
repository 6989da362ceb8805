import logging

import pytest
import tensorflow as tf

import pyhooks
from hooktest_util import FakeClock, counter_graph, make_session, run_loop, scalars
from pyhooks.hooks.step_counter import StepCounterHook


class CountingCreator:
    """Creates a real session whose ``run`` calls are counted."""

    def __init__(self):
        self.calls = 0

    def create_session(self):
        creator = tf.compat.v1.train.ChiefSessionCreator()
        real = creator.create_session()
        outer = self

        class Counting:
            graph = real.graph

            def run(self, *args, **kwargs):
                outer.calls += 1
                return real.run(*args, **kwargs)

            def close(self):
                real.close()

        return Counting()


@pytest.mark.parametrize("kwargs, message", [
    ({"every_n_steps": None}, "exactly one of every_n_steps and every_n_secs should be provided."),
    ({"every_n_secs": 5}, "exactly one of every_n_steps and every_n_secs should be provided."),
    ({"every_n_steps": 0}, "`every_n_steps` must be positive, got 0."),
    ({"every_n_steps": 2.5}, "`every_n_steps` must be a whole number, got 2.5."),
    ({"every_n_steps": None, "every_n_secs": -1}, "`every_n_secs` must be positive, got -1."),
])
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError) as info:
        StepCounterHook(**kwargs)
    assert str(info.value) == message


def test_string_period_is_type_error():
    with pytest.raises(TypeError, match="every_n_steps"):
        StepCounterHook(every_n_steps="10")


def test_whole_float_accepted_and_no_io_at_construction(tmp_path):
    StepCounterHook(every_n_steps=2.0, output_dir=tmp_path / "events")
    assert not (tmp_path / "events").exists()


def test_steps_per_sec_written_and_logged(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="pyhooks")
    g = counter_graph()
    with g.graph.as_default():
        hook = StepCounterHook(every_n_steps=2, output_dir=str(tmp_path))
        hook._timer.clock = FakeClock(tick=0.5)
        run_loop([hook, pyhooks.StopAtStepHook(last_step=6)], g.train_op)
    # Triggers at steps 1 (start), 3, 5; 2 steps per 0.5 s.
    assert scalars(tmp_path, "global_step/sec") == [(3, 4.0), (5, 4.0)]
    logged = [r.getMessage() for r in caplog.records if r.name == "pyhooks"]
    assert logged.count("global_step/sec: 4") == 2


def test_one_session_run_per_step_and_one_step_read_per_count():
    """The hook's fetch rides with the step; a count confirms its step with one read of the
    global step (as TensorFlow's hook), at the first step and then every 5 steps."""
    g = counter_graph()
    with g.graph.as_default():
        hook = StepCounterHook(every_n_steps=5)
        creator = CountingCreator()
        with pyhooks.MonitoredSession(session_creator=creator, hooks=[hook]) as sess:
            for _ in range(11):
                sess.run(g.train_op)
    assert creator.calls == 11 + 3  # reads at steps 1, 6 and 11


def test_under_tensorflow_monitored_session(tmp_path):
    g = counter_graph()
    with g.graph.as_default():
        writer = tf.compat.v1.summary.FileWriter(str(tmp_path))
        hook = StepCounterHook(every_n_steps=1, summary_writer=writer)
        hook._timer.clock = FakeClock(tick=0.25)
        run_loop([hook], g.train_op, max_steps=3, runner="tf")
        writer.close()
    assert scalars(tmp_path, "global_step/sec") == [(2, 4.0), (3, 4.0)]


def test_flushed_after_error(tmp_path):
    g = counter_graph()
    with g.graph.as_default():
        hook = StepCounterHook(every_n_steps=1, output_dir=str(tmp_path / "err"))
        hook._timer.clock = FakeClock(tick=1.0)
        with pytest.raises(ZeroDivisionError):
            with make_session([hook]) as sess:
                for _ in range(3):
                    sess.run(g.train_op)
                1 / 0  # noqa: B018
    assert scalars(tmp_path / "err", "global_step/sec") == [(2, 1.0), (3, 1.0)]


def test_needs_global_step():
    g = counter_graph(with_global_step=False)
    with g.graph.as_default():
        with pytest.raises(RuntimeError, match="Global step should be created to use StepCounterHook."):
            make_session([StepCounterHook()])


def test_warns_when_global_step_does_not_move(caplog):
    caplog.set_level(logging.INFO, logger="pyhooks")
    g = counter_graph()
    with g.graph.as_default():
        with make_session([StepCounterHook(every_n_steps=1)]) as sess:
            for _ in range(3):
                sess.run(g.loss)
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 2
    assert "global step has not been increased" in warnings[0].getMessage()
