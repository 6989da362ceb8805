"""The eager backend: pyhooks' MonitoredSession and built-in hooks around a TF2 train step."""

from __future__ import annotations

import csv
import io
import json
import logging
import os
import re

import numpy as np
import pytest
import tensorflow as tf

import pyhooks
from hooktest_util import Recorder, read_events
from pyhooks.eager import StepOutputError
from pyhooks.errors import HookSetupError
from tests.fakes import new_name

X = np.array([[1.0], [2.0], [3.0], [4.0]], dtype=np.float32)


class Model:
    """y = 2x fitted by w, one batch per step; ``losses`` per example, ``loss`` their mean."""

    def __init__(self, batches=None, nan_at=None, compiled=True):
        data = np.stack([X] * (batches or 8))
        if nan_at is not None:
            data[nan_at - 1] = np.nan
        dataset = tf.data.Dataset.from_tensor_slices(data)
        self.iterator = iter(dataset if batches else dataset.repeat())
        self.w = tf.Variable([[0.0]], name="w")
        self.step = tf.function(self._step) if compiled else self._step

    def _step(self):
        x = next(self.iterator)
        with tf.GradientTape() as tape:
            losses = tf.reshape(tf.square(tf.matmul(x, self.w) - 2.0 * x), [-1])
            loss = tf.reduce_mean(losses)
        self.w.assign_sub(0.01 * tape.gradient(loss, self.w))
        return {"loss": loss, "losses": losses}


def reference(steps):
    """The outputs of ``steps`` plain calls of a fresh model's step (no pyhooks)."""
    model = Model()
    return [{k: v.numpy() for k, v in model.step().items()} for _ in range(steps)]


def session(model, hooks=(), **kwargs):
    return pyhooks.MonitoredSession(pyhooks.EagerSessionCreator(model.step, **kwargs), list(hooks))


def loop(sess, max_steps=50):
    """Runs one step per ``run()`` until a stop or ``max_steps``; returns the run count."""
    runs = 0
    with sess:
        while not sess.should_stop() and runs < max_steps:
            sess.run()
            runs += 1
    return runs


def tf2_scalars(directory, tag):
    """``[(step, value)]`` of a tag written with ``tf.summary`` in ``directory``."""
    return [(event.step, float(tf.make_ndarray(value.tensor)))
            for event in read_events(directory) for value in event.summary.value
            if value.tag == tag]


# --------------------------------------------------------------------------- the session
def test_run_executes_one_step_and_returns_numpy_outputs():
    model = Model()
    creator = pyhooks.EagerSessionCreator(model.step)
    expected = reference(3)
    with pyhooks.MonitoredSession(creator) as sess:
        assert sess.run() is None
        loss = sess.run("loss")
        values = sess.run({"losses": "losses", "w": model.w, "nested": ["loss", ("loss",)]})
    assert isinstance(loss, np.float32) and loss == pytest.approx(expected[1]["loss"])
    np.testing.assert_allclose(values["losses"], expected[2]["losses"], rtol=1e-6)
    assert values["nested"][1][0] == values["nested"][0] == pytest.approx(expected[2]["loss"])
    np.testing.assert_allclose(values["w"], model.w.numpy())  # a variable: after the step
    assert int(creator.global_step.numpy()) == 3


def test_an_output_that_is_a_structure_comes_back_as_that_structure_of_numpy_values():
    """A step function may return nested dicts, lists and tuples of tensors under a name:
    fetching the name gives that structure with numpy leaves, as plain TensorFlow's
    ``numpy()`` of each leaf (and as a graph session returns a structure of fetches)."""
    w = tf.Variable([[1.0, 2.0]])

    @tf.function
    def step():
        w.assign_add([[1.0, 1.0]])
        value = w.read_value()
        return {"loss": tf.reduce_sum(value),
                "parts": {"w": value, "sums": [tf.reduce_sum(value, 1), (value[0, 0],)]}}

    expected = tf.nest.map_structure(lambda t: t.numpy(), step())  # plain TensorFlow
    w.assign([[1.0, 2.0]])
    seen = []
    hook = pyhooks.LambdaHook(before_run=lambda c: pyhooks.SessionRunArgs({"p": "parts"}),
                              after_run=lambda c, v: seen.append(v.results["p"]))
    with pyhooks.MonitoredSession(pyhooks.EagerSessionCreator(step), [hook]) as sess:
        fetched = sess.run(["parts", "loss"])
    for got in (fetched[0], seen[0]):
        assert set(got) == {"w", "sums"} and type(got["sums"]) is list
        assert type(got["sums"][1]) is tuple
        for leaf, want in zip(tf.nest.flatten(got), tf.nest.flatten(expected["parts"])):
            assert type(leaf) is type(want)
            np.testing.assert_array_equal(leaf, want)
    assert fetched[1] == expected["loss"]


def test_fetching_only_variables_reads_without_a_step():
    model = Model()
    creator = pyhooks.EagerSessionCreator(model.step)
    with pyhooks.MonitoredSession(creator) as sess:
        sess.run()
        w = sess.run(model.w)
        assert sess.run([creator.global_step, model.w])[0] == 1
        np.testing.assert_array_equal(sess.run(model.w), w)
    assert int(creator.global_step.numpy()) == 1


def test_missing_output_lists_the_outputs():
    with pyhooks.MonitoredSession(pyhooks.EagerSessionCreator(Model().step)) as sess:
        with pytest.raises(StepOutputError) as info:
            sess.run(["loss", "accuracy"])
    assert str(info.value) == ("the step function has no output 'accuracy'; its outputs are: "
                               "loss, losses.")
    assert isinstance(info.value, LookupError) and isinstance(info.value, pyhooks.PyhooksError)


def test_missing_output_asked_by_a_hook_fails_the_loop():
    recorder = Recorder()
    hook = pyhooks.LoggingTensorHook({"acc": "accuracy"}, every_n_iter=1)
    with pytest.raises(StepOutputError,
                       match=r"no output 'accuracy'; its outputs are: loss, ") as info:
        loop(session(Model(), [recorder, hook]))
    assert recorder.calls == ["begin", ("after_error", "StepOutputError")]
    assert info.value.__notes__ == [
        "pyhooks: `hooks[1]` (LoggingTensorHook) asked for this fetch in before_run()"]


def test_a_fetch_of_the_wrong_type_names_the_hook_that_asked_for_it():
    asks = pyhooks.LambdaHook(before_run=lambda context: pyhooks.SessionRunArgs(["loss", 1.5]))
    with pytest.raises(TypeError, match=r"EagerSession cannot fetch 1.5 \(float\)") as info:
        loop(session(Model(), [pyhooks.HistorySaverHook(), asks]))
    assert info.value.__notes__ == [
        "pyhooks: `hooks[1]` (LambdaHook) asked for this fetch in before_run()"]


def test_missing_output_asked_unconverted_by_a_hook_fails_the_loop():
    recorder = Recorder()
    hook = pyhooks.HistorySaverHook(metrics={"acc": "accuracy"})
    with pytest.raises(StepOutputError,
                       match=r"no output 'accuracy'; its outputs are: loss, ") as info:
        loop(session(Model(), [recorder, hook]))
    assert recorder.calls == ["begin", ("after_error", "StepOutputError")]
    assert info.value.__notes__ == [
        "pyhooks: `hooks[1]` (HistorySaverHook) asked for this fetch in before_run()"]


def test_feeds_and_tracing_options_are_refused():
    with pyhooks.MonitoredSession(pyhooks.EagerSessionCreator(Model().step)) as sess:
        with pytest.raises(ValueError, match="feed_dict has no meaning for an eager step"):
            sess.run("loss", feed_dict={"x": 1.0})
        trace = tf.compat.v1.RunOptions(trace_level=tf.compat.v1.RunOptions.FULL_TRACE)
        with pytest.raises(ValueError, match="tf.profiler.experimental"):
            sess.run("loss", options=trace)


@pytest.mark.parametrize("compiled", [True, False], ids=["tf.function", "python"])
def test_exhausted_input_ends_the_loop_and_calls_end(compiled):
    recorder = Recorder()
    out = io.StringIO()
    bar = pyhooks.ProgressBarHook(total=5, writer=out, mode="plain")
    creator = pyhooks.EagerSessionCreator(Model(batches=3, compiled=compiled).step)
    sess = pyhooks.MonitoredSession(creator, [recorder, bar])
    assert loop(sess) == 3  # the fourth run finds no input
    assert recorder.calls == ["begin", "end"]
    assert out.getvalue().endswith("Training stopped after 3 of 5 steps: input exhausted.\n")
    assert int(creator.global_step.numpy()) == 3  # the failed step did not count


def test_global_step_moved_by_the_step_is_followed_not_incremented_again():
    model = Model()
    counter = tf.Variable(0, dtype=tf.int64)
    inner = model.step

    @tf.function
    def step():
        outputs = inner()
        counter.assign_add(1)
        return outputs

    steps = []
    hook = pyhooks.LambdaHook(
        before_run=lambda ctx: pyhooks.SessionRunArgs(ctx.session.graph.global_step_read()),
        after_run=lambda ctx, values: steps.append(int(values.results)))
    creator = pyhooks.EagerSessionCreator(step, global_step=counter)
    loop(pyhooks.MonitoredSession(creator, [hook, pyhooks.StopAtStepHook(last_step=4)]))
    assert steps == [0, 1, 2, 3] and int(counter.numpy()) == 4


@pytest.mark.parametrize("compiled", [True, False], ids=["tf.function", "python"])
def test_a_global_step_nobody_was_given_is_written_when_given_out(compiled):
    creator = pyhooks.EagerSessionCreator(Model(compiled=compiled).step)
    raw = creator._stepper.global_step  # noqa: SLF001 - the variable, without exposing it
    steps = []
    hook = pyhooks.LambdaHook(  # reads the step as pyhooks' hooks do: not the variable
        before_run=lambda ctx: pyhooks.SessionRunArgs(ctx.session.graph.global_step_read()),
        after_run=lambda ctx, values: steps.append(int(values.results)))
    loop(pyhooks.MonitoredSession(creator, [hook]), max_steps=3)
    assert int(raw.numpy()) == 0  # not written at every step
    loop(pyhooks.MonitoredSession(creator, [hook]), max_steps=2)  # a new session goes on
    assert steps == [0, 1, 2, 3, 4] and int(raw.numpy()) == 0
    variable = creator.global_step
    assert variable is raw and int(variable.numpy()) == 5
    loop(pyhooks.MonitoredSession(creator, [hook]), max_steps=2)  # from now on: every step
    assert steps[5:] == [5, 6] and int(raw.numpy()) == 7


@pytest.mark.parametrize("at_step", [1, 3])
def test_a_step_that_reads_the_global_step_sees_it_up_to_date(at_step):
    model = Model(compiled=False)
    seen = []

    def step():  # a plain callable: reads the variable from its step `at_step` on
        calls.append(None)
        if len(calls) >= at_step:
            seen.append(int(creator.global_step.numpy()))
        return model.step()

    calls = []
    creator = pyhooks.EagerSessionCreator(step)
    loop(pyhooks.MonitoredSession(creator, [pyhooks.StopAtStepHook(last_step=5)]))
    assert seen == list(range(at_step - 1, 5))  # the step before: as a graph's read
    assert int(creator.global_step.numpy()) == 5


def test_a_compiled_step_closing_over_the_global_step_reads_it_in_the_graph():
    model = Model()

    @tf.function
    def step():
        return dict(model.step(), step=creator.global_step.read_value())

    creator = pyhooks.EagerSessionCreator(step)
    with pyhooks.MonitoredSession(creator) as sess:
        assert [int(sess.run("step")) for _ in range(4)] == [0, 1, 2, 3]
    assert int(creator._stepper.global_step.numpy()) == 4  # noqa: SLF001


def test_a_hook_given_the_global_step_collection_reads_it_up_to_date():
    class Collect(pyhooks.SessionRunHook):
        def after_create_session(self, session, coord):
            (self.variable,) = session.graph.get_collection("global_step")

        def after_run(self, run_context, run_values):
            self.values.append(int(self.variable.numpy()))

    hook = Collect()
    hook.values = []
    creator = pyhooks.EagerSessionCreator(Model().step)
    loop(pyhooks.MonitoredSession(creator, [hook]), max_steps=3)
    assert hook.values == [1, 2, 3]


def test_a_step_returning_one_tensor_returns_the_loss():
    model = Model()
    step = tf.function(lambda: model.step()["loss"])
    with pyhooks.MonitoredSession(pyhooks.EagerSessionCreator(step)) as sess:
        assert sess.run("loss") == pytest.approx(float(reference(1)[0]["loss"]))


def test_creator_needs_eager_execution_and_an_integer_variable():
    with pytest.raises(TypeError, match="`step_fn` must be callable"):
        pyhooks.EagerSessionCreator(3)
    with pytest.raises(TypeError, match="integer tf.Variable"):
        pyhooks.EagerSessionCreator(Model().step, global_step=tf.Variable(0.0))
    with tf.Graph().as_default():
        with pytest.raises(RuntimeError, match="needs eager execution"):
            pyhooks.EagerSessionCreator(lambda: {})


# --------------------------------------------------------------------------- SPEC §3, errors
def test_losses_collection_gives_the_per_example_loss_to_a_custom_hook():
    """SPEC §3's custom R hook, in Python: ``context.session.graph.get_collection("losses")``."""
    means, seen = [], []

    def before_run(context):
        return pyhooks.SessionRunArgs({"losses": context.session.graph.get_collection("losses")})

    def after_run(context, values):
        seen.append(1)
        means.append(float(np.mean(values.results["losses"][0])))

    loop(session(Model(), [pyhooks.LambdaHook(before_run=before_run, after_run=after_run)]),
         max_steps=4)
    assert means == pytest.approx([float(np.mean(r["losses"])) for r in reference(4)])


def test_losses_collection_falls_back_to_loss():
    model = Model()
    step = tf.function(lambda: {"loss": model.step()["loss"]})
    hook = pyhooks.HistorySaverHook(every_n_step=1)
    loop(pyhooks.MonitoredSession(pyhooks.EagerSessionCreator(step), [hook]), max_steps=2)
    expected = [float(r["loss"]) for r in reference(2)]
    assert hook.history.to_dict()["mean_losses"] == pytest.approx(expected)
    assert hook.history.to_dict()["total_losses"] == pytest.approx(expected)


@pytest.mark.parametrize("at", [2, 6])  # the first steps; a later one (plans and callables made)
def test_hook_error_keeps_its_type_and_calls_after_error_not_end(at):
    recorder = Recorder()
    history = pyhooks.HistorySaverHook(every_n_step=10)

    calls = []

    def after_run(context, values):
        calls.append(1)
        if len(calls) == at:
            raise KeyError("boom")

    hook = pyhooks.LambdaHook(after_run=after_run, name="exploding")
    with pytest.raises(KeyError) as info:
        loop(session(Model(), [recorder, history, hook]))
    assert "pyhooks: raised in exploding.after_run()" in info.value.__notes__
    assert recorder.calls == ["begin", ("after_error", "KeyError")]
    assert history.history.to_dict()["steps"] == [at]  # the last step is kept after an error


@pytest.mark.parametrize("anew", [False, True], ids=["same args", "names built anew"])
def test_an_output_missing_from_a_later_step_fails_that_step(anew):
    """Steady fetches (a kept plan) still check every output at every step; names built anew
    at every step (new strings, as from R) are the same fetches."""
    w = tf.Variable(1.0)
    calls = []

    def step():
        calls.append(1)
        w.assign_add(1.0)
        return {"loss": w.read_value(), **({"extra": w * 2} if len(calls) < 5 else {})}

    seen = []
    def before_run(context):
        if anew:
            return pyhooks.SessionRunArgs(tuple(map(new_name, ARGS.fetches)))
        return ARGS

    hook = pyhooks.LambdaHook(before_run=before_run, name="reader",
                              after_run=lambda context, values: seen.append(values.results))
    ARGS = pyhooks.SessionRunArgs(("extra", "loss"))
    with pytest.raises(StepOutputError, match="no output 'extra'; its outputs are: loss"):
        loop(pyhooks.MonitoredSession(pyhooks.EagerSessionCreator(step), [hook]))
    assert [tuple(map(float, v)) for v in seen] == [(4.0, 2.0), (6.0, 3.0), (8.0, 4.0),
                                                    (10.0, 5.0)]


def test_step_error_calls_after_error():
    recorder = Recorder()

    def step():
        raise tf.errors.InvalidArgumentError(None, None, "bad batch")

    with pytest.raises(tf.errors.InvalidArgumentError, match="bad batch"):
        loop(pyhooks.MonitoredSession(pyhooks.EagerSessionCreator(step), [recorder]))
    assert recorder.calls == ["begin", ("after_error", "InvalidArgumentError")]


# --------------------------------------------------------------------------- built-in hooks
def test_progress_bar_shows_the_mean_per_example_loss():
    out = io.StringIO()
    bar = pyhooks.ProgressBarHook(total=4, writer=out, mode="plain")
    loop(session(Model(), [bar]), max_steps=4)
    last = reference(4)[-1]
    lines = out.getvalue().splitlines()
    assert lines[-1] == (f"Training 4/4 [{'=' * 38}] - ETA: 0s - loss: "
                         f"{float(np.mean(last['losses'])):.2f}")
    assert len(lines) == 4


def test_history_saver_records_every_n_steps_and_writes_csv(tmp_path):
    path = tmp_path / "history.csv"
    hook = pyhooks.HistorySaverHook(every_n_step=2, path=path, metrics={"w": Model().w})
    model = Model()
    hook._metrics = {"w": model.w}  # the model's own variable
    loop(session(model, [hook]), max_steps=5)
    ref = reference(5)
    history = hook.history.to_dict()
    assert history["steps"] == [2, 4, 5]
    assert history["mean_losses"] == pytest.approx([float(np.mean(ref[i]["losses"]))
                                                    for i in (1, 3, 4)])
    assert history["total_losses"] == pytest.approx([float(np.sum(ref[i]["losses"]))
                                                     for i in (1, 3, 4)])
    with open(path, newline="", encoding="utf-8") as stream:
        rows = list(csv.reader(stream))
    assert rows[0] == ["mean_losses", "total_losses", "steps", "w", "run"]
    assert [int(r[2]) for r in rows[1:]] == [2, 4, 5]


def test_step_counter_writes_tf_summary_and_logs(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="pyhooks")
    hook = pyhooks.StepCounterHook(every_n_steps=2, output_dir=tmp_path)
    loop(session(Model(), [hook]), max_steps=5)
    rates = tf2_scalars(tmp_path, "global_step/sec")
    assert [step for step, _ in rates] == [3, 5]
    assert all(rate > 0 for _, rate in rates)
    assert len(re.findall(r"global_step/sec: [0-9.e+]+", caplog.text)) == 2


def test_nan_tensor_fails_with_the_step():
    recorder = Recorder()
    with pytest.raises(pyhooks.NanLossDuringTrainingError) as info:
        loop(session(Model(nan_at=3), [recorder, pyhooks.NanTensorHook("loss")]))
    assert info.value.step == 3 and np.isnan(info.value.value)
    assert str(info.value) == "Model diverged with loss = nan at step 3."
    assert recorder.calls == ["begin", ("after_error", "NanLossDuringTrainingError")]


def test_nan_tensor_can_stop_instead():
    from pyhooks.hooks.nan_tensor import NanLossWarning

    with pytest.warns(NanLossWarning, match="at step 2. Stopping training."):
        runs = loop(session(Model(nan_at=2), [pyhooks.NanTensorHook("loss",
                                                                     fail_on_nan_loss=False)]))
    assert runs == 2


def test_nan_tensor_refuses_a_loss_that_is_not_an_output_at_begin():
    recorder = Recorder()
    with pytest.raises(HookSetupError, match="NanTensorHook: `loss_tensor` 3 is neither a step "
                                             "output name nor a variable"):
        session(Model(), [recorder, pyhooks.NanTensorHook(3)])
    assert recorder.calls == ["begin", ("after_error", "HookSetupError")]


def test_logging_tensor_logs_outputs_and_variables_and_the_last_values_at_end(caplog):
    caplog.set_level(logging.INFO, logger="pyhooks")
    model = Model()
    creator = pyhooks.EagerSessionCreator(model.step)
    hook = pyhooks.LoggingTensorHook({"loss": "loss", "w": model.w}, every_n_iter=2, at_end=True,
                                     formatter=lambda v: f"loss={v['loss']:.4f} w={v['w'][0, 0]:.4f}")
    loop(pyhooks.MonitoredSession(creator, [hook]), max_steps=3)
    ref = reference(3)
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("loss=")]
    assert [line.split()[0] for line in lines] == [
        f"loss={ref[0]['loss']:.4f}", f"loss={ref[2]['loss']:.4f}", f"loss={ref[2]['loss']:.4f}"]
    assert int(creator.global_step.numpy()) == 3  # at_end ran no extra step


def test_stop_at_step_last_step_and_num_steps():
    creator = pyhooks.EagerSessionCreator(Model().step)
    assert loop(pyhooks.MonitoredSession(creator, [pyhooks.StopAtStepHook(last_step=3)])) == 3
    hook = pyhooks.StopAtStepHook(num_steps=2)
    assert loop(pyhooks.MonitoredSession(creator, [hook])) == 2
    assert hook.last_step == 5 and int(creator.global_step.numpy()) == 5
    # already there: stopped at creation, no step
    assert loop(pyhooks.MonitoredSession(creator, [pyhooks.StopAtStepHook(last_step=5)])) == 0


def test_checkpoint_saver_saves_a_tf_train_checkpoint(tmp_path):
    model = Model()
    creator = pyhooks.EagerSessionCreator(model.step)
    checkpoint = tf.train.Checkpoint(w=model.w, global_step=creator.global_step)
    saved = []

    class Listener(pyhooks.CheckpointSaverListener):
        def after_save(self, session, global_step_value):
            saved.append((global_step_value, float(model.w.numpy()[0, 0])))

    hook = pyhooks.CheckpointSaverHook(tmp_path, save_steps=2, saver=checkpoint,
                                       listeners=[Listener()])
    loop(pyhooks.MonitoredSession(creator, [hook]), max_steps=5)
    assert [step for step, _ in saved] == [0, 2, 4, 5]
    assert tf.train.latest_checkpoint(str(tmp_path)) == str(tmp_path / "model.ckpt-5")
    assert sorted(p for p in os.listdir(tmp_path) if p.endswith(".index")) == [
        f"model.ckpt-{n}.index" for n in (0, 2, 4, 5)]
    w, step = tf.Variable([[9.0]]), tf.Variable(0, dtype=tf.int64)
    tf.train.Checkpoint(w=w, global_step=step).restore(str(tmp_path / "model.ckpt-4")).expect_partial()
    assert int(step.numpy()) == 4 and float(w.numpy()[0, 0]) == pytest.approx(saved[2][1])


def test_checkpoint_saver_without_a_checkpoint_refuses_at_begin(tmp_path):
    with pytest.raises(HookSetupError, match=r"CheckpointSaverHook on the eager backend needs "
                                             r"saver=tf.train.Checkpoint\(\.\.\.\)"):
        session(Model(), [pyhooks.CheckpointSaverHook(tmp_path, save_steps=1)])
    assert not os.listdir(tmp_path)


def test_summary_saver_writes_named_outputs_with_tf_summary(tmp_path):
    model = Model()
    hook = pyhooks.SummarySaverHook(save_steps=2, output_dir=tmp_path,
                                    summary_op=["loss", model.w])
    loop(session(model, [hook]), max_steps=5)
    ref = reference(5)
    assert tf2_scalars(tmp_path, "loss") == [
        (s, pytest.approx(float(ref[s - 1]["loss"]))) for s in (1, 3, 5)]
    assert [step for step, _ in tf2_scalars(tmp_path, "w")] == [1, 3, 5]


def test_summary_saver_with_a_scaffold_refuses_at_begin(tmp_path):
    hook = pyhooks.SummarySaverHook(save_steps=1, output_dir=tmp_path,
                                    scaffold=tf.compat.v1.train.Scaffold())
    with pytest.raises(HookSetupError, match="SummarySaverHook: a Scaffold's summary op needs a "
                                             "graph; on the eager backend pass summary_op="):
        session(Model(), [hook])


def test_feed_fn_refuses_at_begin():
    with pytest.raises(HookSetupError, match="FeedFnHook needs a TensorFlow graph session"):
        session(Model(), [pyhooks.FeedFnHook(lambda: None)])


def test_profiler_traces_steps_with_tf2_profiler_next_to_hook_spans(tmp_path):
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    class Slow(pyhooks.SessionRunHook):
        def after_run(self, run_context, run_values):
            sum(range(1000))

    hook = pyhooks.ProfilerHook(save_steps=2, output_dir=str(tmp_path / "prof"))
    loop(session(Model(), [pyhooks.HistorySaverHook(every_n_step=1), hook, Slow()]), max_steps=5)
    names = sorted(os.listdir(tmp_path / "prof"))  # the timelines' steps as on a graph
    assert names == ["profile-2", "profile-4", "timeline-2.json", "timeline-4.json"]
    for step in (2, 4):  # TensorFlow's profile of the step, for TensorBoard
        (run,) = os.listdir(tmp_path / "prof" / f"profile-{step}" / "plugins" / "profile")
        (xplane,) = (tmp_path / "prof" / f"profile-{step}" / "plugins" / "profile" / run).glob(
            "*.xplane.pb")
        space = xplane_pb2.XSpace.FromString(xplane.read_bytes())
        traced = {m.name for plane in space.planes for m in plane.event_metadata.values()}
        assert any(name.startswith("AssignSubVariableOp") for name in traced)  # w.assign_sub
        assert any(name.startswith("IteratorGetNext") for name in traced)
    with open(tmp_path / "prof" / "timeline-2.json") as f:
        events = json.load(f)["traceEvents"]
    spans = [e for e in events if e.get("cat") == "pyhooks"]
    assert sorted(e["name"] for e in spans) == sorted([
        "HistorySaverHook.before_run", "ProfilerHook.before_run", "HistorySaverHook.after_run",
        "ProfilerHook.after_run", "Slow.after_run", "MonitoredSession.run"])
    assert all(e["ph"] == "X" and e["dur"] >= 0 and e["args"] == {"step": 2} for e in spans)
    run = next(e for e in spans if e["name"] == "MonitoredSession.run")
    assert all(run["ts"] <= e["ts"] and e["ts"] + e["dur"] <= run["ts"] + run["dur"]
               for e in spans)


def test_profiler_with_tf2_profiler_busy_still_writes_hook_spans(tmp_path, caplog):
    tf.profiler.experimental.start(str(tmp_path / "mine"))
    try:
        hook = pyhooks.ProfilerHook(save_steps=2, output_dir=str(tmp_path / "prof"))
        loop(session(Model(), [hook]), max_steps=3)
    finally:
        tf.profiler.experimental.stop()
    assert sorted(os.listdir(tmp_path / "prof")) == ["timeline-2.json"]
    assert "TensorFlow's profiler is busy" in caplog.text


def test_final_ops_reads_variables_and_the_last_outputs_without_a_step():
    model = Model()
    creator = pyhooks.EagerSessionCreator(model.step)
    hook = pyhooks.FinalOpsHook({"w": model.w, "loss": "loss"})
    loop(pyhooks.MonitoredSession(creator, [hook]), max_steps=2)
    assert hook.final_ops_values["loss"] == pytest.approx(float(reference(2)[1]["loss"]))
    np.testing.assert_array_equal(hook.final_ops_values["w"], model.w.numpy())
    assert int(creator.global_step.numpy()) == 2


def test_global_step_waiter_at_zero_starts_at_once():
    hooks = [pyhooks.GlobalStepWaiterHook(wait_until_step=0), pyhooks.StopAtStepHook(last_step=2)]
    assert loop(session(Model(), hooks)) == 2


def test_configure_gcs_sets_the_environment_for_the_run_only(monkeypatch):
    monkeypatch.delenv("GCS_READ_CACHE_BLOCK_SIZE_MB", raising=False)
    hook = pyhooks.ConfigureGcsHook(block_cache=pyhooks.BlockCacheParams(block_size=4 * 2**20))
    seen = []
    probe = pyhooks.LambdaHook(
        after_run=lambda context, values: seen.append(os.environ.get("GCS_READ_CACHE_BLOCK_SIZE_MB")))
    loop(session(Model(), [hook, probe]), max_steps=1)
    assert seen == ["4"] and "GCS_READ_CACHE_BLOCK_SIZE_MB" not in os.environ

# --------------------------------------------------------------------------- SPEC §3 from R
R_SCRIPT = r'''
import json, os
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
import numpy as np, tensorflow as tf, keras, pyhooks, pyhooks.r
SPEC_HOOK = """
mean_losses_history <<- NULL
hook_history_saver_custom <- function(every_n_step) {
  iter_count <<- 0
  session_run_hook(
    before_run = function(context) {
      session_run_args(losses = context$session$graph$get_collection("losses"))
    },
    after_run = function(context, values) {
      iter_count <<- iter_count + 1
      print(paste0("Running step: ", iter_count))
      if (iter_count %% every_n_step == 0) {
        raw_losses <- values$results$losses[[1]]
        mean_losses_history <<- c(mean_losses_history, mean(raw_losses))
      }
    },
    end = function(session) cat("MEANS", sprintf("%.6f", mean_losses_history), "\\n")
  )
}
hook_history_saver_custom(every_n_step = 1)
"""
out = {}
w = tf.Variable(0.0)
expected = []

@tf.function
def step():
    losses = tf.square(w - tf.constant([1.0, 2.0, 3.0]))
    w.assign_add(0.5)
    return {"loss": tf.reduce_mean(losses), "losses": losses}

hooks = [pyhooks.r.r_hook(SPEC_HOOK), pyhooks.StopAtStepHook(last_step=4)]
with pyhooks.MonitoredSession(pyhooks.EagerSessionCreator(step), hooks) as sess:
    while not sess.should_stop():
        sess.run()
out["eager"] = [float(np.mean(np.square(0.5 * i - np.array([1.0, 2.0, 3.0])))) for i in range(4)]

x = np.arange(16, dtype="float32").reshape(-1, 1) / 16
model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)])
model.compile(optimizer="sgd", loss="mse")
seen = []
record = keras.callbacks.LambdaCallback(
    on_train_batch_end=lambda batch, logs: seen.append(logs["loss"]))
model.fit(x, 2 * x, batch_size=4, epochs=1, verbose=0, shuffle=False,
          callbacks=[pyhooks.keras_callback([pyhooks.r.r_hook(SPEC_HOOK)]), record])
out["keras"] = seen
print("RESULT" + json.dumps(out))
'''


def test_spec_custom_r_hook_runs_unchanged_on_eager_and_keras():
    import json
    import subprocess
    import sys

    from test_r import r_package_installed

    pytest.importorskip("rpy2")
    if not r_package_installed():
        pytest.skip("R or the R package pyhooks is not installed (make setup installs both)")
    env = dict(os.environ, RETICULATE_PYTHON=sys.executable)
    proc = subprocess.run([sys.executable, "-c", R_SCRIPT], capture_output=True, text=True,
                          env=env, timeout=600)
    line = next((l for l in proc.stdout.splitlines() if l.startswith("RESULT")), None)
    assert line is not None, proc.stdout + proc.stderr
    expected = json.loads(line[len("RESULT"):])
    runs = [[float(v) for v in l.split()[1:]] for l in proc.stdout.splitlines()
            if l.startswith("MEANS")]
    assert runs[0] == pytest.approx(expected["eager"], abs=1e-6)
    assert runs[1] == pytest.approx(expected["keras"], abs=1e-6)
    assert proc.stdout.count('[1] "Running step: 4"') == 2


def test_every_hook_gets_end_even_after_one_raised_and_the_first_error_wins():
    ended = []

    def ends(name, fail):
        def end(session):
            ended.append(name)
            if fail:
                raise ValueError(f"boom in {name}")
        return pyhooks.LambdaHook(end=end, name=name)
    with pytest.raises(ValueError, match="boom in a") as info:
        loop(session(Model(), [ends("a", True), ends("b", False), ends("c", True)]), max_steps=2)
    assert ended == ["a", "b", "c"]
    assert [str(e) for e in info.value.pyhooks_end_errors] == ["boom in c"]
