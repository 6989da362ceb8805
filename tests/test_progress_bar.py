import io
import sys

import numpy as np
import pytest
import tensorflow as tf

from loss_graph import regression_graph, session, train
from pyhooks import SessionRunArgs, SessionRunContext, SessionRunValues
from pyhooks.hooks.progress_bar import ProgressBarHook

FULL = "=" * 38


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def drive(hook, steps, clock=None, loss=None, dt=0.0, stop_at=None, exhausted=False):
    """Drives ``hook`` through ``steps`` steps by hand (no TensorFlow session)."""
    with tf.Graph().as_default():
        if loss is not None:
            tf.compat.v1.add_to_collection("losses", tf.constant(loss))
        if clock is not None:
            hook.clock = clock
        hook.begin()
    hook.after_create_session(None, None)
    for i in range(steps):
        context = SessionRunContext(SessionRunArgs(None), None)
        hook.before_run(context)
        if dt:
            clock.now += dt
        hook.after_run(context, SessionRunValues(None if loss is None else np.array(loss), None,
                                                 None))
        if stop_at == i + 1:
            context.request_stop()
            break
    if exhausted:
        hook.before_run(SessionRunContext(SessionRunArgs(None), None))
    hook.end(None)


@pytest.mark.parametrize("runner", ["pyhooks", "tf"])
def test_final_line_matches_the_r_example(runner):
    out = io.StringIO()
    hook = ProgressBarHook(total=2, writer=out, mode="plain")
    train(regression_graph(), [hook], steps=2, runner=runner)
    # per-example losses of step 2 are 5**2..8**2: the step's mean loss is 174 / 4
    assert out.getvalue().splitlines()[-1] == f"Training 2/2 [{FULL}] - ETA: 0s - loss: 43.50"


def test_second_run_counts_from_zero_again():
    out = io.StringIO()
    hook = ProgressBarHook(total=2, writer=out, mode="plain")
    ns = regression_graph()
    train(ns, [hook], steps=2)
    out.truncate(0), out.seek(0)
    train(ns, [hook], steps=2)
    assert out.getvalue().splitlines()[-1].startswith(f"Training 2/2 [{FULL}]")


def test_dynamic_mode_redraws_in_place_and_ends_the_line():
    out, clock = io.StringIO(), Clock()
    hook = ProgressBarHook(total=4, writer=out, mode="dynamic", min_interval=0.1)
    drive(hook, 4, clock=clock, loss=[1.0, 2.0], dt=1.0)
    text = out.getvalue()
    frames = text.split("\r")[1:]
    # the first step's time includes setup: no ETA from it alone
    assert frames[0] == "Training 1/4 [========>" + " " * 29 + "] - ETA: ? - loss: 1.50"
    assert frames[1] == "Training 2/4 [" + "=" * 18 + ">" + " " * 19 + "] - ETA: 2s - loss: 1.50"
    assert frames[-1] == f"Training 4/4 [{FULL}] - ETA: 0s - loss: 1.50\n"
    assert text.count("\n") == 1


def test_dynamic_mode_pads_shorter_lines():
    out, clock = io.StringIO(), Clock()
    hook = ProgressBarHook(total=3, writer=out, mode="dynamic")
    drive(hook, 3, clock=clock, dt=100.0)
    first, second, third, final = out.getvalue().split("\r")[1:]
    assert first.endswith("ETA: ?")
    assert second.endswith("ETA: 1:40")
    assert third == f"Training 3/3 [{FULL}] - ETA: 0s  "  # erases the longer ETA
    assert final == f"Training 3/3 [{FULL}] - ETA: 0s\n"


def test_redraws_at_most_every_min_interval():
    out, clock = io.StringIO(), Clock()
    hook = ProgressBarHook(total=1000, writer=out, mode="dynamic", min_interval=1.0)
    drive(hook, 1000, clock=clock, dt=0.01)  # 10 s in all
    frames = out.getvalue().split("\r")[1:]
    assert 5 <= len(frames) <= 12  # at most one per second, plus the final line


def test_clock_is_not_read_every_step():
    class CountingClock(Clock):
        reads = 0

        def __call__(self):
            self.reads += 1
            return self.now

    clock = CountingClock()
    hook = ProgressBarHook(total=10000, writer=io.StringIO(), mode="dynamic", min_interval=1.0)
    drive(hook, 10000, clock=clock, dt=0.001)  # 10 s
    assert clock.reads < 1100  # < 1 read per step once the rate is known


def test_plain_mode_writes_sparse_whole_lines():
    out = io.StringIO()
    hook = ProgressBarHook(total=100, writer=out, mode="plain")
    drive(hook, 100, clock=Clock())
    text = out.getvalue()
    assert "\r" not in text and "\b" not in text
    counts = [line.split()[1] for line in text.splitlines()]
    assert counts == ["1/100", "10/100", "20/100", "30/100", "40/100", "50/100",
                      "60/100", "70/100", "80/100", "90/100", "100/100"]


def test_a_run_stopped_early_ends_on_its_true_last_loss():
    """The loss is fetched every step, so the final line is never stale."""
    with tf.Graph().as_default():
        tf.compat.v1.add_to_collection("losses", tf.constant([1.0]))
        out = io.StringIO()
        hook = ProgressBarHook(total=30, writer=out, mode="plain")
        hook.begin()
    hook.after_create_session(None, None)
    for step in range(1, 9):  # a hook stops the run at step 8 of 30
        context = SessionRunContext(SessionRunArgs(None), None)
        assert hook.before_run(context) is not None
        if step == 8:
            context.request_stop()
        hook.after_run(context, SessionRunValues([float(step)], None, None))
    hook.end(None)
    lines = out.getvalue().splitlines()
    assert lines[-2].startswith("Training  8/30 [") and lines[-2].endswith("loss: 8.00")
    assert lines[-1] == "Training stopped by a hook after 8 of 30 steps."


def test_unknown_total_shows_count_and_rate():
    out, clock = io.StringIO(), Clock()
    hook = ProgressBarHook(writer=out, mode="plain")
    drive(hook, 20, clock=clock, dt=0.5, loss=[2.0])
    assert out.getvalue().splitlines() == [
        "Training 1 steps - 2.00 steps/s - loss: 2.00",
        "Training 11 steps - 2.00 steps/s - loss: 2.00",
        "Training 20 steps - 2.00 steps/s - loss: 2.00",
    ]


def test_no_loss_part_without_a_loss_tensor():
    out = io.StringIO()
    hook = ProgressBarHook(total=1, writer=out, mode="plain")
    drive(hook, 1, clock=Clock())
    assert out.getvalue() == f"Training 1/1 [{FULL}] - ETA: 0s\n"


def test_input_exhausted_message():
    out = io.StringIO()
    hook = ProgressBarHook(total=5, writer=out, mode="plain")
    assert train(regression_graph(batches=3), [hook], steps=5) == 3
    last = out.getvalue().splitlines()[-1]
    assert last == "Training stopped after 3 of 5 steps: input exhausted."


def test_no_false_message_when_a_hook_stops_early():
    out = io.StringIO()
    hook = ProgressBarHook(total=5, writer=out, mode="plain")
    drive(hook, 5, clock=Clock(), stop_at=2)
    assert out.getvalue().splitlines()[-1] == "Training stopped by a hook after 2 of 5 steps."
    assert "exhausted" not in out.getvalue()


def test_caller_stopping_early_is_not_called_exhaustion():
    out = io.StringIO()
    drive(ProgressBarHook(total=5, writer=out, mode="plain"), 2, clock=Clock())
    assert out.getvalue().splitlines()[-1] == "Training stopped after 2 of 5 steps."
    out = io.StringIO()
    drive(ProgressBarHook(total=5, writer=out, mode="plain"), 2, clock=Clock(), exhausted=True)
    assert out.getvalue().splitlines()[-1].endswith("input exhausted.")


def test_no_message_when_complete():
    out = io.StringIO()
    drive(ProgressBarHook(total=3, writer=out, mode="plain"), 3, clock=Clock())
    assert "stopped" not in out.getvalue()


def test_after_error_finishes_the_line():
    out = io.StringIO()
    ns = regression_graph()
    hook = ProgressBarHook(total=5, writer=out, mode="dynamic")
    with pytest.raises(ZeroDivisionError), ns.graph.as_default(), session([hook]) as sess:
        sess.run(ns.train_op)
        1 / 0
    assert out.getvalue().startswith("\rTraining 1/5 [")
    assert out.getvalue().endswith("\n") and out.getvalue().count("\n") == 1


def test_writer_may_be_a_function():
    chunks = []
    drive(ProgressBarHook(total=1, writer=chunks.append, mode="plain"), 1, clock=Clock())
    assert chunks == [f"Training 1/1 [{FULL}] - ETA: 0s\n"]


def test_default_writer_is_looked_up_at_write_time(monkeypatch):
    out = io.StringIO()
    hook = ProgressBarHook(total=1, mode="plain")
    monkeypatch.setattr(sys, "stdout", out)
    drive(hook, 1, clock=Clock())
    assert out.getvalue().startswith("Training 1/1")


class Tty(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.parametrize("env, writer, expected", [
    ({"PYHOOKS_PROGRESS": "plain"}, Tty, "plain"),
    ({"PYHOOKS_PROGRESS": "dynamic", "CI": "true"}, io.StringIO, "dynamic"),
    ({"CI": "true"}, Tty, "plain"),
    ({}, Tty, "dynamic"),
    ({}, io.StringIO, "plain"),
])
def test_mode_decision(monkeypatch, env, writer, expected):
    for name in ("PYHOOKS_PROGRESS", "CI"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    hook = ProgressBarHook(total=1, writer=writer())
    with tf.Graph().as_default():
        hook.begin()
    assert hook._active_mode == expected


def test_total_is_a_settable_attribute():
    hook = ProgressBarHook()
    hook.total = 2.0  # what R sends
    assert hook.total == 2 and isinstance(hook.total, int)
    with pytest.raises(ValueError, match="`total` must be a whole number, got 2.5."):
        hook.total = 2.5


@pytest.mark.parametrize("kwargs, error, message", [
    ({"total": 0}, ValueError, "`total` must be positive, got 0."),
    ({"total": 1.5}, ValueError, "`total` must be a whole number, got 1.5."),
    ({"label": 3}, TypeError, "`label` must be a string, got 3 (int)."),
    ({"mode": "fancy"}, ValueError, "`mode` must be 'dynamic', 'plain' or None, got 'fancy'."),
    ({"writer": 42}, TypeError, "`writer` must be a file-like object or a function, got 42."),
    ({"min_interval": -1}, ValueError, "`min_interval` must be zero or more, got -1."),
])
def test_bad_arguments(kwargs, error, message):
    with pytest.raises(error) as info:
        ProgressBarHook(**kwargs)
    assert str(info.value) == message


def test_eta_comes_from_recent_steps_not_the_first():
    """A slow first step (tracing, graph building) and a change of pace do not skew the ETA."""
    out, clock = io.StringIO(), Clock()
    hook = ProgressBarHook(total=1000, writer=out, mode="plain")
    with tf.Graph().as_default():
        hook.clock = clock
        hook.begin()
    hook.after_create_session(None, None)
    for step in range(1, 501):
        clock.now += 60.0 if step == 1 else (1.0 if step <= 100 else 0.1)
        context = SessionRunContext(SessionRunArgs(None), None)
        hook.before_run(context)
        hook.after_run(context, SessionRunValues(None, None, None))
    lines = out.getvalue().splitlines()
    assert lines[0].endswith("ETA: ?")
    assert lines[1].startswith("Training  100/1000") and lines[1].endswith("ETA: 15:00")
    # at step 500 the window holds the last ~30 s: 0.1 s per step, 500 steps left
    assert lines[-1].startswith("Training  500/1000") and lines[-1].endswith("ETA: 50s")


def test_scalar_loss_is_shown_as_it_is():
    out = io.StringIO()
    drive(ProgressBarHook(total=1, writer=out, mode="plain"), 1, clock=Clock(), loss=7.54)
    assert out.getvalue() == f"Training 1/1 [{FULL}] - ETA: 0s - loss: 7.54\n"


def test_eager_loop_shows_the_step_mean_loss():
    """An eager step returning per-example ``losses`` and its mean ``loss``: the bar shows the mean."""
    import pyhooks

    x = tf.constant([[1.0], [2.0], [3.0], [4.0]])
    y = tf.constant([2.0, 4.0, 6.0, 8.0])
    w = tf.Variable([[0.5]])
    reported = []

    @tf.function
    def step():
        losses = tf.square(tf.reshape(tf.matmul(x, w), [-1]) - y)
        w.assign_sub(0.01 * tf.reduce_mean(losses) * tf.ones_like(w))
        return {"loss": tf.reduce_mean(losses), "losses": losses}

    out = io.StringIO()
    hooks = [ProgressBarHook(total=3, writer=out, mode="plain"), pyhooks.StopAtStepHook(3)]
    with pyhooks.MonitoredSession(pyhooks.EagerSessionCreator(step), hooks=hooks) as sess:
        while not sess.should_stop():
            reported.append(float(sess.run("loss")))
    assert out.getvalue().splitlines()[-1].endswith(f"loss: {reported[-1]:.2f}")


def test_keras_fit_shows_what_keras_reports():
    import keras

    import pyhooks

    model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    x = np.arange(16, dtype="float32").reshape(-1, 1)
    out = io.StringIO()
    callback = pyhooks.keras_callback([ProgressBarHook(writer=out, mode="plain")])
    history = model.fit(x, 2 * x, batch_size=4, epochs=1, verbose=0, callbacks=[callback])
    # the last batch's logs["loss"] is the epoch's mean loss, as Keras' own bar shows it
    assert out.getvalue().splitlines()[-1].endswith(f"loss: {history.history['loss'][-1]:.2f}")
