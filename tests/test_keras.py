"""``pyhooks.keras_callback``: pyhooks hooks inside Keras 3 ``model.fit`` (TensorFlow backend)."""

from __future__ import annotations

import io
import logging
import os
import re

import keras
import numpy as np
import pytest
import tensorflow as tf

import pyhooks
from hooktest_util import InterruptAt, Recorder, read_events
from pyhooks.eager import StepOutputError
from pyhooks.hooks._lookup import HookSetupError
from tests.fakes import new_name

X = (np.arange(32, dtype=np.float32).reshape(-1, 1) / 32.0)
Y = 2.0 * X
BATCHES = 4  # per epoch, batch_size=8


def make_model(layer=None):
    keras.utils.set_random_seed(1)
    layers = [keras.Input((1,))] + ([layer] if layer is not None else []) + [keras.layers.Dense(1)]
    model = keras.Sequential(layers)
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse", metrics=["mae"])
    return model


class LogsRecorder(keras.callbacks.Callback):
    """Keras' own view of each batch: the logs and the optimizer's step after it."""

    def __init__(self):
        super().__init__()
        self.logs = []

    def on_train_batch_end(self, batch, logs=None):
        self.logs.append(dict(logs, step=int(self.model.optimizer.iterations.numpy())))


def fit(hooks, epochs=2, model=None, extra=(), **kwargs):
    model = model or make_model()
    keras_logs = LogsRecorder()
    callback = pyhooks.keras_callback(hooks)
    model.fit(X, Y, batch_size=8, epochs=epochs, verbose=0, shuffle=False,
              callbacks=[callback, keras_logs, *extra], **kwargs)
    return model, keras_logs.logs


def tf2_scalars(directory, tag):
    return [(event.step, float(tf.make_ndarray(value.tensor)))
            for event in read_events(directory) for value in event.summary.value
            if value.tag == tag]


def test_is_a_keras_callback_and_public():
    callback = pyhooks.keras_callback([])
    assert isinstance(callback, keras.callbacks.Callback)
    assert "keras_callback" in pyhooks.__all__ and "EagerSessionCreator" in pyhooks.__all__


def test_hooks_are_checked_and_one_hook_alone_is_a_list_of_it():
    with pytest.raises(TypeError, match=r"^`hooks` must be a list of SessionRunHook, got 3 \(int\)"):
        pyhooks.keras_callback(3)
    with pytest.raises(TypeError, match=r"^`hooks\[0\]` must be a SessionRunHook, got 3 \(int\)"):
        pyhooks.keras_callback([3])
    stop = pyhooks.StopAtStepHook(last_step=3)
    assert pyhooks.keras_callback(stop).hooks == [stop]


def test_lifecycle_and_fetches_from_the_logs():
    seen = []

    class Hook(Recorder):
        def before_run(self, context):
            return pyhooks.SessionRunArgs({"loss": "loss", "mae": "mae",
                                           "step": context.session.graph.global_step_read()})

        def after_run(self, context, values):
            seen.append(values.results)

    hook = Hook()
    model, logs = fit([hook])
    assert hook.calls == ["begin", "end"]
    assert [int(v["step"]) for v in seen] == list(range(2 * BATCHES))  # the step before the batch
    assert [float(v["loss"]) for v in seen] == pytest.approx([entry["loss"] for entry in logs])
    assert [float(v["mae"]) for v in seen] == pytest.approx([entry["mae"] for entry in logs])


def test_fetches_that_change_between_batches_get_their_own_results():
    """One dict edited in place, a structure swapped for another, nothing on some batches."""
    seen = []

    class Hook(pyhooks.SessionRunHook):
        def __init__(self):
            self.fetches = {"loss": "loss"}
            self.args = pyhooks.SessionRunArgs(self.fetches)
            self.batch = 0

        def before_run(self, context):
            self.batch += 1
            if self.batch % 4 == 0:
                return None
            if self.batch % 4 == 2:
                return pyhooks.SessionRunArgs(("mae", "loss"))
            self.fetches.clear()  # the same dict, other keys: the same SessionRunArgs object
            self.fetches.update({"mae": "mae"} if self.batch % 4 == 3 else {"loss": "loss"})
            return self.args

        def after_run(self, context, values):
            seen.append(values.results)

    _, logs = fit([Hook()])
    assert len(seen) == len(logs) == 2 * BATCHES
    for batch, (results, entry) in enumerate(zip(seen, logs), start=1):
        if batch % 4 == 0:
            assert results is None
        elif batch % 4 == 2:
            assert results == pytest.approx((entry["mae"], entry["loss"]))
        elif batch % 4 == 3:
            assert results == {"mae": pytest.approx(entry["mae"])}
        else:
            assert results == {"loss": pytest.approx(entry["loss"])}


def test_builtin_hooks_in_fit(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="pyhooks")
    out = io.StringIO()
    history = pyhooks.HistorySaverHook(every_n_step=3, metrics={"mae": "mae"})
    hooks = [pyhooks.ProgressBarHook(total=8, writer=out, mode="plain"), history,
             pyhooks.StepCounterHook(every_n_steps=2, output_dir=tmp_path / "steps"),
             pyhooks.NanTensorHook("loss"),
             pyhooks.LoggingTensorHook(["loss"], every_n_iter=4,
                                       formatter=lambda v: f"logged loss={v['loss']:.5f}")]
    _, logs = fit(hooks)
    losses = [entry["loss"] for entry in logs]
    lines = out.getvalue().splitlines()
    assert lines[-1] == f"Training 8/8 [{'=' * 38}] - ETA: 0s - loss: {losses[-1]:.2f}"
    rows = history.history.to_dict()
    assert rows["steps"] == [3, 6, 8]
    assert rows["mean_losses"] == pytest.approx([losses[2], losses[5], losses[7]])
    assert rows["total_losses"] == rows["mean_losses"]  # Keras reports no per-example loss
    assert rows["mae"] == pytest.approx([logs[i]["mae"] for i in (2, 5, 7)])
    assert [step for step, _ in tf2_scalars(tmp_path / "steps", "global_step/sec")] == [3, 5, 7]
    logged = [r.getMessage() for r in caplog.records if r.getMessage().startswith("logged")]
    assert logged == [f"logged loss={losses[i]:.5f}" for i in (0, 4)]


def test_progress_bar_without_total_gets_the_batches_of_this_fit():
    def bar_lines(**kwargs):
        out = io.StringIO()
        bar = pyhooks.ProgressBarHook(writer=out, mode="plain")
        stop = kwargs.pop("stop", [])
        model = kwargs.pop("model", None) or make_model()
        fit([bar, *stop], model=model, **kwargs)
        assert bar.total is None  # given for that fit only
        return out.getvalue().splitlines()

    assert bar_lines(epochs=3, initial_epoch=1)[-1].startswith(f"Training 8/8 [{'=' * 38}]")
    lines = bar_lines(epochs=2, stop=[pyhooks.StopAtStepHook(last_step=3)])
    assert lines[-2].startswith("Training 3/8 [") and lines[-1] == (
        "Training stopped by a hook after 3 of 8 steps.")
    model = make_model()
    model.compile(optimizer="sgd", loss="mse", steps_per_execution=3)  # 2 calls an epoch
    assert bar_lines(epochs=2, model=model)[-1].startswith("Training 8/8 [")  # steps, not calls

    def after_run(context, values):
        raise ValueError("bad hook")

    bar = pyhooks.ProgressBarHook(writer=io.StringIO(), mode="plain")
    with pytest.raises(ValueError, match="bad hook"):
        fit([bar, pyhooks.LambdaHook(after_run=after_run)])
    assert bar.total is None


def test_stop_at_step_stops_fit():
    model, logs = fit([pyhooks.StopAtStepHook(last_step=3)], epochs=5)
    assert len(logs) == 3 and int(model.optimizer.iterations.numpy()) == 3
    model, logs = fit([pyhooks.StopAtStepHook(num_steps=2)], epochs=5, model=model)
    assert int(model.optimizer.iterations.numpy()) == 5


def test_request_stop_sets_model_stop_training():
    count = []

    def after_run(context, values):
        count.append(1)
        if len(count) == 2:
            context.request_stop()

    model, logs = fit([pyhooks.LambdaHook(after_run=after_run)], epochs=3)
    assert len(logs) == 2 and model.stop_training


def test_nan_loss_fails_fit_and_calls_after_error():
    recorder = Recorder()
    x = X.copy()
    x[20] = np.nan  # third batch
    model = make_model()
    with pytest.raises(pyhooks.NanLossDuringTrainingError) as info:
        model.fit(x, Y, batch_size=8, epochs=1, verbose=0, shuffle=False,
                  callbacks=[pyhooks.keras_callback([recorder, pyhooks.NanTensorHook("loss")])])
    assert info.value.step == 3
    assert recorder.calls == ["begin", ("after_error", "NanLossDuringTrainingError")]


def test_nan_loss_can_stop_fit_instead_and_a_bad_loss_name_is_refused_at_begin():
    x = X.copy()
    x[28] = np.nan  # fourth batch (of the first epoch)
    model = make_model()
    keras_logs = LogsRecorder()
    from pyhooks.hooks.nan_tensor import NanLossWarning

    with pytest.warns(NanLossWarning, match="Model diverged with loss = nan at step 4"):
        model.fit(x, Y, batch_size=8, epochs=3, verbose=0, shuffle=False, callbacks=[
            pyhooks.keras_callback([pyhooks.NanTensorHook("loss", fail_on_nan_loss=False)]),
            keras_logs])
    assert len(keras_logs.logs) == 4 and model.stop_training
    with pytest.raises(HookSetupError, match="NanTensorHook: `loss_tensor` 3 is neither"):
        fit([pyhooks.NanTensorHook(3)])


def test_missing_output_lists_the_logs():
    recorder = Recorder()
    with pytest.raises(StepOutputError) as info:
        fit([recorder, pyhooks.LoggingTensorHook({"acc": "accuracy"}, every_n_iter=1)])
    assert str(info.value) == ("model.fit's batch has no output 'accuracy'; its outputs are: "
                               "loss, mae.")
    assert recorder.calls == ["begin", ("after_error", "StepOutputError")]
    assert info.value.__notes__ == [
        "pyhooks: `hooks[1]` (LoggingTensorHook) asked for this fetch in before_run()"]


def test_hook_error_calls_after_error_and_propagates_with_a_note():
    recorder = Recorder()

    def after_run(context, values):
        raise ValueError("bad hook")

    model = make_model()
    with pytest.raises(ValueError, match="bad hook") as info:
        fit([recorder, pyhooks.LambdaHook(after_run=after_run, name="bad")], model=model)
    assert "pyhooks: raised in bad.after_run()" in info.value.__notes__
    assert recorder.calls == ["begin", ("after_error", "ValueError")]
    assert type(model.train_function).__name__ != "_TrainFunctionGuard"  # put back


def test_train_step_error_calls_after_error():
    recorder = Recorder()
    x = X.copy()
    x[17] = 1000.0  # third batch
    class Check(keras.layers.Layer):
        def call(self, inputs):
            tf.debugging.assert_less(inputs, 100.0, message="input too large")
            return inputs

    model = make_model(Check())
    with pytest.raises(tf.errors.InvalidArgumentError, match="input too large"):
        model.fit(x, Y, batch_size=8, epochs=1, verbose=0, shuffle=False,
                  callbacks=[pyhooks.keras_callback([recorder])])
    assert recorder.calls == ["begin", ("after_error", "InvalidArgumentError")]
    assert type(model.train_function).__name__ != "_TrainFunctionGuard"


def test_context_manager_reports_errors_outside_the_step():
    recorder = Recorder()

    class Failing(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            raise RuntimeError("another callback failed")

    with pytest.raises(RuntimeError, match="another callback failed"):
        with pyhooks.keras_callback([recorder]) as callback:
            make_model().fit(X, Y, batch_size=8, epochs=1, verbose=0,
                             callbacks=[callback, Failing()])
    assert recorder.calls == ["begin", ("after_error", "RuntimeError")]


def test_exhausted_dataset_ends_fit_and_calls_end():
    recorder = Recorder()
    out = io.StringIO()
    # 4 batches, no repeat, of unknown length to Keras: the fifth train step hits the end
    dataset = tf.data.Dataset.from_tensor_slices((X, Y)).batch(8).filter(lambda x, y: True)
    bar = pyhooks.ProgressBarHook(total=6, writer=out, mode="plain")
    model = make_model()
    with pytest.warns(UserWarning, match="ran out of data"):
        model.fit(dataset, epochs=1, steps_per_epoch=6, verbose=0, shuffle=False,
                  callbacks=[pyhooks.keras_callback([recorder, bar])])
    assert recorder.calls == ["begin", "end"]
    assert out.getvalue().endswith("Training stopped after 4 of 6 steps: input exhausted.\n")


@pytest.mark.parametrize("given", [True, False])
def test_checkpoint_saver_with_tf_train_checkpoint(tmp_path, given):
    """A tf.train.Checkpoint given as saver, or none: the model and its optimizer."""
    model = make_model()
    checkpoint = tf.train.Checkpoint(model=model, optimizer=model.optimizer) if given else None
    hook = pyhooks.CheckpointSaverHook(tmp_path, save_steps=3, saver=checkpoint)
    fit([hook], model=model)
    assert tf.train.latest_checkpoint(str(tmp_path)) == str(tmp_path / "model.ckpt-8")
    assert sorted(int(p[len("model.ckpt-"):-len(".index")]) for p in os.listdir(tmp_path)
                  if p.endswith(".index")) == [0, 3, 6, 8]
    fresh = make_model()
    fresh.optimizer.build(fresh.trainable_variables)
    tf.train.Checkpoint(model=fresh, optimizer=fresh.optimizer).restore(
        str(tmp_path / "model.ckpt-8")).expect_partial()
    assert int(fresh.optimizer.iterations.numpy()) == 8
    for a, b in zip(fresh.get_weights(), model.get_weights()):
        np.testing.assert_allclose(a, b)


def test_the_hooks_state_resumes_with_a_checkpoint_saver_after_an_interrupt(tmp_path):
    def run(epochs, extra=()):
        model = make_model()
        model.optimizer.build(model.trainable_variables)
        checkpoint = tf.train.Checkpoint(model=model, optimizer=model.optimizer)
        if tf.train.latest_checkpoint(str(tmp_path)):  # what a user's script does
            checkpoint.restore(tf.train.latest_checkpoint(str(tmp_path)))
        history = pyhooks.HistorySaverHook(every_n_step=1)
        saver = pyhooks.CheckpointSaverHook(tmp_path, save_steps=4, saver=checkpoint)
        fit([saver, history, *extra], epochs=epochs, model=model)
        return history.history

    with pytest.raises(KeyboardInterrupt):
        run(3, [InterruptAt(6)])
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-6")  # at the error
    assert sorted(p.name for p in tmp_path.glob("hooks-*.json")) == [
        "hooks-0.json", "hooks-4.json", "hooks-6.json"]
    bar = pyhooks.ProgressBarHook(writer=io.StringIO())
    resumed = run(1, [bar])
    assert bar._expected() == 4  # the fit's batches, set in the RunInfo after begin()
    assert resumed.to_dict()["steps"] == list(range(1, 11))
    assert resumed.runs == [1] * 6 + [2] * 4
    assert not list(tmp_path.glob("hooks-*.json"))  # it ended normally: the next starts afresh


def test_summary_saver_writes_logs_with_tf_summary(tmp_path):
    hook = pyhooks.SummarySaverHook(save_steps=4, output_dir=tmp_path, summary_op=["loss", "mae"])
    _, logs = fit([hook])
    assert tf2_scalars(tmp_path, "loss") == [
        (s, pytest.approx(logs[s - 1]["loss"])) for s in (1, 5)]
    assert [step for step, _ in tf2_scalars(tmp_path, "mae")] == [1, 5]


@pytest.mark.parametrize("make_hook, message", [
    (lambda d: pyhooks.ProfilerHook(save_steps=1, output_dir=d),
     "ProfilerHook needs a TensorFlow graph session and cannot run on the keras backend"),
    (lambda d: pyhooks.CheckpointSaverHook(d, save_steps=1,
                                           scaffold=tf.compat.v1.train.Scaffold()),
     "CheckpointSaverHook on the keras backend needs saver=tf.train.Checkpoint(...) (or a "
     "tf.train.CheckpointManager), got a Scaffold"),
    (lambda d: pyhooks.FeedFnHook(lambda: None),
     "FeedFnHook needs a TensorFlow graph session"),
])
def test_graph_only_hooks_refuse_in_begin(tmp_path, caplog, make_hook, message):
    recorder, sessions = Recorder(), []
    watcher = pyhooks.LambdaHook(after_error=lambda session, error: sessions.append(session))
    with caplog.at_level(logging.INFO, logger="pyhooks"):
        with pytest.raises(HookSetupError, match=re.escape(message)):
            fit([recorder, make_hook(str(tmp_path)), watcher])
    assert recorder.calls == ["begin", ("after_error", "HookSetupError")]
    # as in a graph: no session yet, so nothing is saved or written after the failed begin()
    assert sessions == [None]
    assert not [r for r in caplog.records if "Saving" in r.getMessage()]
    assert os.listdir(tmp_path) == []


def test_raw_session_run_of_an_output_is_refused():
    def after_run(context, values):
        context.session.run("loss")

    with pytest.raises(RuntimeError, match="Inside model.fit Keras runs the batches"):
        fit([pyhooks.LambdaHook(after_run=after_run)])


def test_steps_per_execution_advances_the_global_step_by_the_batch_steps():
    steps = []
    hook = pyhooks.LambdaHook(
        before_run=lambda ctx: pyhooks.SessionRunArgs(ctx.session.graph.global_step_read()),
        after_run=lambda ctx, values: steps.append(int(values.results)))
    model = make_model()
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse", steps_per_execution=2)
    model, logs = fit([hook, pyhooks.StopAtStepHook(last_step=6)], epochs=3, model=model)
    assert steps == [0, 2, 4] and int(model.optimizer.iterations.numpy()) == 6  # before a call


def test_empty_feeds_and_options_are_ignored_and_the_batch_plan_is_kept():
    """A hook returning new args with an empty feed_dict and RunOptions at every batch."""

    class Empty(pyhooks.SessionRunHook):
        def __init__(self):
            self.fetches, self.losses, self.plans = ("loss", "mae"), [], set()

        def before_run(self, context):  # new args, the same fetches, as TensorFlow's hooks do
            return pyhooks.SessionRunArgs(self.fetches, feed_dict={},
                                          options=tf.compat.v1.RunOptions())

        def after_run(self, context, values):
            self.losses.append(values.results)
            self.plans.add(id(callback._request.plan))  # noqa: SLF001

    hook = Empty()
    callback = pyhooks.keras_callback([hook])
    model = make_model()
    keras_logs = LogsRecorder()
    model.fit(X, Y, batch_size=8, epochs=2, verbose=0, shuffle=False,
              callbacks=[callback, keras_logs])
    assert [float(v) for pair in hook.losses for v in pair] == pytest.approx(
        [logs[name] for logs in keras_logs.logs for name in ("loss", "mae")])
    assert len(hook.plans) == 1  # found again by its fetches: analysed (and compiled) once


# --------------------------------------------------------------------------- steady batches
class Steady(pyhooks.SessionRunHook):
    """The same args object every batch (as pyhooks' own hooks)."""

    hook_name = "Steady"

    def __init__(self, fetches=("loss", "mae"), stop_at=None, fail_in=None, fail_at=None):
        self.args = pyhooks.SessionRunArgs(fetches)
        self.stop_at, self.fail_in, self.fail_at = stop_at, fail_in, fail_at
        self.results = []

    def before_run(self, context):
        if self.fail_in == "before_run" and len(self.results) + 1 == self.fail_at:
            raise ValueError("bad before_run")
        return self.args

    def after_run(self, context, values):
        self.results.append(values.results)
        if self.fail_in == "after_run" and len(self.results) == self.fail_at:
            raise ValueError("bad after_run")
        if len(self.results) == self.stop_at:
            context.request_stop()


def names_anew(fetches):
    """``fetches`` with new tuples and new string objects for the names (as R gives them)."""
    if isinstance(fetches, tuple):
        return tuple(names_anew(f) for f in fetches)
    return new_name(fetches)


@pytest.mark.parametrize("method", ["before_run", "after_run"])
def test_an_error_in_a_steady_batch_names_its_hook_and_calls_after_error(method):
    recorder = Recorder()
    bad = Steady(fail_in=method, fail_at=6)
    with pytest.raises(ValueError, match=f"bad {method}") as info:
        fit([recorder, bad], epochs=3)
    assert info.value.__notes__ == [f"pyhooks: raised in Steady.{method}()"]
    assert recorder.calls == ["begin", ("after_error", "ValueError")]
    assert len(bad.results) == (5 if method == "before_run" else 6)


def test_a_stop_requested_in_a_steady_batch_ends_fit_after_it():
    hook = Steady(stop_at=6)
    model, logs = fit([hook], epochs=5)
    assert len(logs) == len(hook.results) == 6 and model.stop_training
    assert int(model.optimizer.iterations.numpy()) == 6


def test_a_callback_used_in_one_fit_starts_the_next_fit_afresh():
    hook = Steady()
    callback = pyhooks.keras_callback([hook])
    model = make_model()
    keras_logs = LogsRecorder()
    for epochs in (2, 1):
        model.fit(X, Y, batch_size=8, epochs=epochs, verbose=0, shuffle=False,
                  callbacks=[callback, keras_logs])
        assert "on_train_batch_begin" not in vars(callback)  # the class's methods again
    assert len(hook.results) == len(keras_logs.logs) == 3 * BATCHES
    for results, entry in zip(hook.results, keras_logs.logs):
        assert results == pytest.approx((entry["loss"], entry["mae"]))


class _Ends(pyhooks.SessionRunHook):
    def __init__(self, name, ended, fail):
        self.name, self.ended, self.fail = name, ended, fail

    def end(self, session):
        self.ended.append(self.name)
        if self.fail:
            raise ValueError(f"boom in {self.name}")


def test_every_hook_gets_end_even_after_one_raised_and_the_first_error_wins():
    ended = []
    with pytest.raises(ValueError, match="boom in a") as info:
        fit([_Ends("a", ended, True), _Ends("b", ended, False), _Ends("c", ended, True)],
            epochs=1)
    assert ended == ["a", "b", "c"]
    assert [str(e) for e in info.value.pyhooks_end_errors] == ["boom in c"]
