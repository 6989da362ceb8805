"""pyhooks' runner driving real TensorFlow graph sessions; interop with TensorFlow's hooks."""

import glob
import logging

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
v1 = tf.compat.v1

import pyhooks  # noqa: E402
from tests.fakes import RecordingHook  # noqa: E402


class Model:
    """y = w, loss = (w - 3)^2, plain gradient descent; a fresh private graph."""

    def __init__(self):
        self.graph = tf.Graph()
        with self.graph.as_default():
            self.global_step = v1.train.get_or_create_global_step()
            self.w = v1.get_variable("w", [], initializer=v1.zeros_initializer())
            self.x = v1.placeholder_with_default(1.0, [], name="x")
            self.loss = tf.square(self.w * self.x - 3.0, name="loss")
            self.train_op = v1.train.GradientDescentOptimizer(0.1).minimize(
                self.loss, global_step=self.global_step)


class WrappedCreator:
    """Creates real sessions and can make their run() raise once."""

    def __init__(self, fail_on_call=None, error=None):
        self.inner = v1.train.ChiefSessionCreator()
        self.fail_on_call, self.error = fail_on_call, error
        self.created = 0
        self.calls = 0

    def create_session(self):
        self.created += 1
        return _FlakySession(self.inner.create_session(), self)


class _FlakySession:
    def __init__(self, sess, creator):
        self._sess, self._creator = sess, creator
        self.graph = sess.graph

    def run(self, *args, **kwargs):
        creator = self._creator
        creator.calls += 1
        if creator.calls == creator.fail_on_call:
            raise creator.error
        return self._sess.run(*args, **kwargs)

    def make_callable(self, fetches):
        call, creator = self._sess.make_callable(fetches), self._creator

        def run():
            creator.calls += 1
            if creator.calls == creator.fail_on_call:
                raise creator.error
            return call()
        return run

    def close(self):
        self._sess.close()


def test_trains_and_graph_is_finalized_after_begin():
    model = Model()
    finalized = []

    class AddsOp(pyhooks.SessionRunHook):
        def begin(self):
            self.doubled = tf.identity(model.w * 2, name="doubled")
            finalized.append(v1.get_default_graph().finalized)

        def before_run(self, run_context):
            return pyhooks.SessionRunArgs(self.doubled)

        def after_run(self, run_context, run_values):
            self.last = run_values.results

    hook = AddsOp()
    with model.graph.as_default():
        with pyhooks.MonitoredSession(hooks=[hook]) as sess:
            assert model.graph.finalized
            losses = [sess.run([model.train_op, model.loss])[1] for _ in range(20)]
    assert finalized == [False]
    assert losses[-1] < losses[0] / 10
    assert hook.last == pytest.approx(2 * 3 * (1 - 0.8 ** 19), rel=1e-2)  # read races the update


def test_nested_fetches_come_back_like_session_run():
    model = Model()
    with model.graph.as_default():
        fetches = {"a": [model.loss, (model.w, model.loss)], "b": model.global_step}
        hook = RecordingHook("h", [], fetches=[model.w, {"l": model.loss}])
        with pyhooks.MonitoredSession(hooks=[hook]) as sess:
            got = sess.run(fetches)
            raw = sess.raw_session().run(fetches)
    assert got == raw
    assert isinstance(got["a"][1], tuple)
    assert hook.results == [[0.0, {"l": 9.0}]]


def test_recovers_from_aborted_error_without_calling_begin_again():
    model = Model()
    log = []
    hook = RecordingHook("h", log, fetches=None)
    creator = WrappedCreator(fail_on_call=2, error=tf.errors.AbortedError(None, None, "preempted"))
    with model.graph.as_default():
        with pyhooks.MonitoredSession(creator, [hook]) as sess:
            first = sess.run(model.loss)
            retried = sess.run(model.loss)
    assert creator.created == 2
    assert first == retried == 9.0
    calls = [entry[1] for entry in log]
    assert calls.count("begin") == 1
    assert calls.count("after_create_session") == 2
    assert calls.count("after_run") == 2
    assert calls[-1] == "end"


def test_recovery_continues_on_the_new_session():
    """Steady steps use the session's callable; after an AbortedError the runner continues on
    the new session (a callable of the old one would fail: closed)."""
    model = Model()
    hook = RecordingHook("h", [], fetches=(model.w, model.global_step), same_args=True)
    creator = WrappedCreator(fail_on_call=6, error=tf.errors.AbortedError(None, None, "preempted"))
    with model.graph.as_default():
        with pyhooks.MonitoredSession(creator, [hook]) as sess:
            for _ in range(10):
                sess.run(model.train_op)
    assert creator.created == 2
    steps = [int(step) for _, step in hook.results]  # (the variable: read racing the update)
    assert len(steps) == 10 and steps[4] >= 4 and steps[5] <= 1  # a new session starts afresh


def test_recovers_from_unavailable_error():
    model = Model()
    creator = WrappedCreator(fail_on_call=1, error=tf.errors.UnavailableError(None, None, "gone"))
    with model.graph.as_default():
        with pyhooks.MonitoredSession(creator, []) as sess:
            assert sess.run(model.loss) == 9.0
    assert creator.created == 2


def test_singular_session_does_not_recover(monkeypatch):
    model = Model()
    log = []
    original = v1.train.ChiefSessionCreator.create_session
    state = {"calls": 0}

    def create_session(self):
        sess = original(self)
        flaky = WrappedCreator(fail_on_call=1, error=tf.errors.AbortedError(None, None, "x"))
        state["calls"] += 1
        return _FlakySession(sess, flaky)

    monkeypatch.setattr(v1.train.ChiefSessionCreator, "create_session", create_session)
    with model.graph.as_default():
        with pytest.raises(tf.errors.AbortedError):
            with pyhooks.SingularMonitoredSession(hooks=[RecordingHook("h", log)]) as sess:
                sess.run(model.loss)
    assert state["calls"] == 1
    assert log[-1] == ("h", "after_error", "AbortedError")


def test_singular_session_restores_from_checkpoint_filename_with_path(tmp_path):
    model = Model()
    with model.graph.as_default():
        saver = v1.train.Saver()
        with pyhooks.SingularMonitoredSession() as sess:
            for _ in range(3):
                sess.run(model.train_op)
            trained = sess.run(model.w)
            path = saver.save(sess.raw_session(), str(tmp_path / "w"), global_step=3)
        with pyhooks.SingularMonitoredSession(checkpoint_filename_with_path=path) as sess:
            assert sess.run(model.w) == trained != 0.0
            assert sess.run(model.global_step) == 3


def test_out_of_range_ends_the_loop_cleanly_with_end():
    log = []
    with tf.Graph().as_default():
        batch = v1.data.make_one_shot_iterator(tf.data.Dataset.range(3)).get_next()
        seen = []
        with pyhooks.MonitoredSession(hooks=[RecordingHook("h", log)]) as sess:
            while not sess.should_stop():
                seen.append(sess.run(batch))
    assert seen == [0, 1, 2]
    assert [e[1] for e in log][-2:] == ["before_run", "end"]


def test_hook_run_options_are_merged_and_metadata_returned():
    model = Model()

    class Tracer(pyhooks.SessionRunHook):
        def before_run(self, run_context):
            return pyhooks.SessionRunArgs(None, options=v1.RunOptions(
                trace_level=v1.RunOptions.FULL_TRACE, timeout_in_ms=5000))

        def after_run(self, run_context, run_values):
            self.options = run_values.options
            self.nodes = sum(len(d.node_stats) for d in run_values.run_metadata.step_stats.dev_stats)

    caller_options = v1.RunOptions(timeout_in_ms=10000)
    tracer = Tracer()
    with model.graph.as_default():
        with pyhooks.MonitoredSession(hooks=[tracer]) as sess:
            sess.run(model.train_op, options=caller_options)
    assert tracer.nodes > 0
    assert tracer.options.trace_level == v1.RunOptions.FULL_TRACE
    assert tracer.options.timeout_in_ms == 10000
    assert caller_options.trace_level == v1.RunOptions.NO_TRACE  # caller's object untouched


def test_tensorflow_hooks_run_under_pyhooks(tmp_path):
    model = Model()
    with model.graph.as_default():
        v1.summary.scalar("train_loss", model.loss)
        hooks = [
            v1.train.StepCounterHook(every_n_steps=2, output_dir=str(tmp_path / "steps")),
            v1.train.NanTensorHook(model.loss),
            v1.train.LoggingTensorHook({"loss": model.loss}, every_n_iter=2),
            v1.train.StopAtStepHook(last_step=6),
            v1.train.CheckpointSaverHook(str(tmp_path / "ckpt"), save_steps=3),
            v1.train.SummarySaverHook(save_steps=2, output_dir=str(tmp_path / "summ"),
                                      summary_op=v1.summary.merge_all()),
        ]
        steps = 0
        with pyhooks.MonitoredSession(hooks=hooks) as sess:
            while not sess.should_stop():
                sess.run(model.train_op)
                steps += 1
    assert steps == 6
    assert v1.train.latest_checkpoint(str(tmp_path / "ckpt")).endswith("model.ckpt-6")
    tags = {v.tag for f in glob.glob(str(tmp_path / "steps" / "events*"))
            for e in v1.train.summary_iterator(f) for v in e.summary.value}
    assert "global_step/sec" in tags
    losses = [v.simple_value for f in glob.glob(str(tmp_path / "summ" / "events*"))
              for e in v1.train.summary_iterator(f) for v in e.summary.value if v.tag == "train_loss"]
    assert len(losses) >= 3 and losses[0] == pytest.approx(9.0)


def test_tensorflow_nan_hook_fails_under_pyhooks():
    with tf.Graph().as_default():
        v1.train.get_or_create_global_step()
        loss = tf.constant(np.nan)
        with pytest.raises(v1.train.NanLossDuringTrainingError):
            with pyhooks.MonitoredSession(hooks=[v1.train.NanTensorHook(loss)]) as sess:
                sess.run(loss)


def test_pyhooks_hooks_run_under_tensorflow_monitored_session():
    model = Model()
    log = []
    hook = RecordingHook("h", log, fetches={"loss": model.loss}, stop_at=3)
    with model.graph.as_default():
        with v1.train.MonitoredSession(hooks=[hook]) as sess:
            while not sess.should_stop():
                sess.run(model.train_op)
    assert hook.runs == 3
    assert hook.results[0] == {"loss": 9.0}
    assert [e[1] for e in log][:2] == ["begin", "after_create_session"]
    assert log[-1] == ("h", "end")


@pytest.mark.parametrize("bad, error", [("nonexistent:0", ValueError), (1.5, TypeError)])
def test_a_fetch_tensorflow_refuses_names_the_hook_that_asked_for_it(bad, error):
    model = Model()
    fine = pyhooks.LambdaHook(before_run=lambda context: pyhooks.SessionRunArgs(model.loss))
    asks = pyhooks.LambdaHook(before_run=lambda context: pyhooks.SessionRunArgs({"x": [bad]}),
                              name="asks")
    with model.graph.as_default():
        with pytest.raises(error, match="Argument `fetch`") as info:
            with pyhooks.MonitoredSession(hooks=[pyhooks.StopAtStepHook(3), fine, asks]) as sess:
                sess.run(model.train_op)
    assert info.value.__notes__ == [
        "pyhooks: `hooks[2]` (asks) asked for this fetch in before_run()"]
    # the caller's own bad fetch: TensorFlow's error alone
    with model.graph.as_default():
        with pytest.raises(error, match="Argument `fetch`") as info:
            with pyhooks.MonitoredSession(hooks=[fine]) as sess:
                sess.run([model.train_op, bad])
    assert not getattr(info.value, "__notes__", [])


def test_hook_error_under_real_session_has_note(caplog):
    model = Model()

    class Broken(pyhooks.SessionRunHook):
        def after_run(self, run_context, run_values):
            raise KeyError("missing")

    with model.graph.as_default():
        with pytest.raises(KeyError) as info:
            with pyhooks.MonitoredSession(hooks=[Broken()]) as sess:
                sess.run(model.train_op)
    assert "pyhooks: raised in Broken.after_run()" in info.value.__notes__


def test_monitored_training_session_defaults(tmp_path):
    pytest.importorskip("pyhooks.hooks.checkpoint_saver")
    model = Model()
    with model.graph.as_default():
        with pyhooks.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), log_step_count_steps=1,
                                              save_summaries_steps=None,
                                              hooks=[pyhooks.StopAtStepHook(last_step=3)]) as sess:
            kinds = [type(h).__name__ for h in sess._hooks]
            while not sess.should_stop():
                sess.run(model.train_op)
    assert kinds == ["StepCounterHook", "CheckpointSaverHook", "StopAtStepHook", "HookState"]
    assert v1.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-3")
    logging.getLogger("pyhooks").handlers.clear()


def test_monitored_training_session_checks_both_hook_lists():
    with pytest.raises(TypeError, match=r"`chief_only_hooks\[0\]` must be a SessionRunHook, got 'x'"):
        pyhooks.MonitoredTrainingSession(chief_only_hooks=["x"], save_checkpoint_secs=None)
    with pytest.raises(TypeError, match=r"`hooks` must be a list of SessionRunHook, got 7 \(int\)"):
        pyhooks.MonitoredTrainingSession(hooks=7, save_checkpoint_secs=None)
