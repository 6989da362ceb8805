"""Hook state resumes with the model (``state_dict``/``load_state_dict``), and stop reasons.

Real estimators in real TensorFlow sessions; the kill -9 case is in test_faults.py.
"""

import json
import os

import pytest

tf = pytest.importorskip("tensorflow")
import pyhooks  # noqa: E402
from pyhooks.estimators import column_numeric, feature_columns, input_fn, linear_regressor, \
    load_mtcars  # noqa: E402
from pyhooks.hooks._hook_state import HookState, listening, state_keys  # noqa: E402
from hooktest_util import InterruptAt  # noqa: E402


def silent():
    return pyhooks.ProgressBarHook(writer=lambda text: None)


@pytest.fixture(scope="module")
def data():
    return input_fn(load_mtcars(), features=["drat"], response="mpg", batch_size=8,
                    num_epochs=None)


def model(model_dir, **kwargs):
    return linear_regressor(feature_columns(column_numeric("drat")), model_dir=str(model_dir),
                            **kwargs)


class FailAt(pyhooks.SessionRunHook):
    """Raises in after_run once the global step reaches ``step``."""

    def __init__(self, step, error=RuntimeError):
        self.step, self.error = step, error

    def begin(self):
        self.read = tf.compat.v1.train.get_global_step()

    def before_run(self, run_context):
        return pyhooks.SessionRunArgs(self.read)

    def after_run(self, run_context, run_values):
        if int(run_values.results) + 1 >= self.step:
            raise self.error(f"failed at {self.step}")


class Counter(pyhooks.SessionRunHook):
    """A user's hook with state: the steps it saw."""

    def __init__(self, state_key=None):
        if state_key is not None:
            self.state_key = state_key
        self.seen = 0

    def begin(self):
        self.seen = 0

    def after_run(self, run_context, run_values):
        self.seen += 1

    def state_dict(self):
        return {"seen": self.seen}

    def load_state_dict(self, state):
        self.seen = state["seen"]


def saving(every=2):
    return pyhooks.estimators.run_config(save_checkpoints_steps=every)


# --------------------------------------------------------------------------- hook state
def test_a_train_after_a_failure_resumes_the_history_and_marks_the_runs(tmp_path, data):
    estimator = model(tmp_path, config=saving(2))
    history = pyhooks.HistorySaverHook(every_n_step=1)
    with pytest.raises(RuntimeError, match="failed at 5"):
        estimator.train(data, steps=10, hooks=[history, FailAt(5), silent()])
    assert history.history.to_dict()["steps"] == [1, 2, 3, 4, 5]
    assert (tmp_path / "hooks-5.json").exists()  # saved with the checkpoint after the failure
    resumed = estimator.train(data, steps=3, hooks=[pyhooks.HistorySaverHook(every_n_step=1),
                                                    silent()])
    assert resumed.to_dict()["steps"] == [1, 2, 3, 4, 5, 6, 7, 8]
    assert resumed.runs == [1] * 5 + [2] * 3
    assert not list(tmp_path.glob("hooks-*.json"))  # it ended normally: the next starts afresh
    fresh = estimator.train(data, steps=2, hooks=[pyhooks.HistorySaverHook(every_n_step=1),
                                                  silent()])
    assert fresh.to_dict()["steps"] == [9, 10] and fresh.runs == [1, 1]


def test_a_new_process_drops_the_rows_after_the_checkpoint_it_resumes_from(tmp_path, data):
    estimator = model(tmp_path, config=saving(3))
    with pytest.raises(RuntimeError):  # as if killed after step 4: the state of step 3 is kept
        estimator.train(data, steps=10, hooks=[pyhooks.HistorySaverHook(every_n_step=1),
                                               FailAt(5), silent()])
    saved = json.loads((tmp_path / "hooks-3.json").read_text())
    assert saved["step"] == 3
    assert saved["hooks"]["HistorySaverHook-1"]["rows"][-1][2] == 3  # its row of step 3 too
    os.unlink(tmp_path / "hooks-5.json")  # the kill came before the save at the failure:
    for path in tmp_path.glob("model.ckpt-5.*"):  # back to the checkpoint of step 3
        os.unlink(path)
    (tmp_path / "checkpoint").write_text('model_checkpoint_path: "model.ckpt-3"\n')
    other = model(tmp_path, config=saving(3))  # a new process's estimator
    history = other.train(data, steps=2, hooks=[pyhooks.HistorySaverHook(every_n_step=1),
                                                silent()])
    assert history.to_dict()["steps"] == [1, 2, 3, 4, 5]
    assert history.runs == [1, 1, 1, 2, 2]


def test_only_the_states_of_kept_checkpoints_are_kept(tmp_path, data):
    estimator = model(tmp_path, config=pyhooks.estimators.run_config(save_checkpoints_steps=1,
                                                                     keep_checkpoint_max=2))
    with pytest.raises(RuntimeError):
        estimator.train(data, steps=10, hooks=[FailAt(6), silent()])
    kept = sorted(int(p.name.split("-")[1].split(".")[0]) for p in tmp_path.glob("*.index"))
    states = sorted(int(p.name[6:-5]) for p in tmp_path.glob("hooks-*.json"))
    assert states == kept == [5, 6]


def test_the_state_follows_checkpoints_of_another_base_name(tmp_path, data):
    def hooks():
        return [pyhooks.CheckpointSaverHook(str(tmp_path), save_steps=2,
                                            checkpoint_basename="my.ckpt"),
                pyhooks.HistorySaverHook(every_n_step=1), silent()]

    estimator = model(tmp_path)
    with pytest.raises(RuntimeError):
        estimator.train(data, steps=10, hooks=[*hooks(), FailAt(5)])
    assert estimator.latest_checkpoint().endswith("my.ckpt-5")
    assert sorted(p.name for p in tmp_path.glob("hooks-*.json")) == [
        f"hooks-{step}.json" for step in (0, 2, 4, 5)]
    history = model(tmp_path).train(data, steps=3, hooks=hooks())
    assert history.to_dict()["steps"] == list(range(1, 9))
    assert history.runs == [1] * 5 + [2] * 3


def test_users_hooks_progress_bar_and_logging_counts_resume(tmp_path, data):
    estimator = model(tmp_path)
    counter, bar = Counter(), pyhooks.ProgressBarHook(writer=lambda text: None)
    logger = pyhooks.LoggingTensorHook({"step": "global_step"}, every_n_iter=100)
    with pytest.raises(RuntimeError):
        estimator.train(data, steps=10, hooks=[counter, bar, logger, FailAt(4)])
    assert counter.seen == bar.steps == logger._iter_count == 4
    counter2, bar2 = Counter(), pyhooks.ProgressBarHook(writer=lambda text: None)
    logger2 = pyhooks.LoggingTensorHook({"step": "global_step"}, every_n_iter=100)
    estimator.train(data, steps=2, hooks=[counter2, bar2, logger2])
    assert (counter2.seen, bar2.steps, logger2._iter_count) == (6, 6, 6)
    assert bar2._expected() == 6  # the steps of both calls: 4 + 2


class Rates:
    """A summary writer keeping the steps of the rates written."""

    def __init__(self):
        self.steps = []

    def add_summary(self, summary, step):
        self.steps.append(step)

    def flush(self):
        pass


def test_the_step_counter_keeps_its_count_and_schedule_but_not_its_clock(tmp_path, data):
    estimator = model(tmp_path, config=saving(2))
    first = Rates()
    counter = pyhooks.StepCounterHook(every_n_steps=3, summary_writer=first)
    with pytest.raises(RuntimeError):
        estimator.train(data, steps=20, hooks=[counter, FailAt(8), silent()])
    assert first.steps == [4, 7] and counter.rates == 2  # step 1 started its clock
    saved = json.loads((tmp_path / "hooks-8.json").read_text())["hooks"]["StepCounterHook-1"]
    assert saved == {"rates": 2, "last_step": 7}
    second = Rates()
    resumed = pyhooks.StepCounterHook(every_n_steps=3, summary_writer=second)
    model(tmp_path, config=saving(2)).train(data, steps=6, hooks=[resumed, silent()])
    # steps 9-14 on the schedule of steps 1, 4, 7: step 10 starts the new process's clock
    assert second.steps == [13] and resumed.rates == 3
    by_secs = pyhooks.StepCounterHook(every_n_steps=None, every_n_secs=3600)
    by_secs.load_state_dict({"rates": 5, "last_step": 7})
    assert by_secs.rates == 5 and by_secs._timer.should_trigger_for_step(8)  # its own clock


def test_keys_are_the_class_and_its_rank_or_a_state_key_and_clashes_are_refused():
    a, b, named = Counter(), Counter(), Counter(state_key="mine")
    assert state_keys([a, pyhooks.SessionRunHook(), b, named]) == {
        "Counter-1": a, "Counter-2": b, "mine": named}
    with pytest.raises(ValueError, match=r"hooks\[0\] and hooks\[1\] .* 'mine'"):
        state_keys([Counter(state_key="mine"), Counter(state_key="mine")])
    with pytest.raises(ValueError, match=r"`state_key` of hooks\[0\] \(Counter\) must be"):
        state_keys([Counter(state_key=3)])


def test_a_state_that_is_not_json_is_an_error_naming_the_hook(tmp_path, data):
    class Bad(Counter):
        def state_dict(self):
            return {"x": object()}

    estimator = model(tmp_path)
    with pytest.raises(TypeError, match=r"^state_dict\(\) of the hook 'Bad-1' must return JSON"):
        estimator.train(data, steps=5, hooks=[Bad(), silent()])  # at the save at its start


def test_a_load_state_dict_that_raises_names_the_hook(tmp_path, data):
    class Refuses(Counter):
        def load_state_dict(self, state):
            raise ValueError("no thanks")

    estimator = model(tmp_path)
    with pytest.raises(RuntimeError):
        estimator.train(data, steps=5, hooks=[Refuses(), FailAt(2), silent()])
    with pytest.raises(ValueError, match="no thanks") as raised:
        estimator.train(data, steps=5, hooks=[Refuses(), silent()])
    assert "pyhooks: raised in Refuses.load_state_dict()" in raised.value.__notes__


# --------------------------------------------------------------------------- stop reasons
def test_steps_reached_and_input_exhausted(tmp_path, data):
    estimator = model(tmp_path)
    stop = estimator.train(data, steps=3, hooks=[silent()]).stop
    assert (stop.reason, stop.step, stop.hook) == ("steps", 3, None)
    once = input_fn(load_mtcars(), features=["drat"], response="mpg", batch_size=8)
    stop = estimator.train(once, steps=100, hooks=[silent()]).stop
    assert (stop.reason, stop.step) == ("end_of_input", 7)
    assert str(stop) == "input exhausted at step 7"
    assert estimator.train(data, max_steps=2, hooks=[silent()]).stop.reason == "steps"


def test_a_hooks_request_names_the_hook_and_the_step(tmp_path, data):
    class StopAt3(pyhooks.SessionRunHook):
        def __init__(self):
            self.runs = 0

        def after_run(self, run_context, run_values):
            self.runs += 1
            if self.runs == 3:
                run_context.request_stop()

    stop = model(tmp_path).train(data, steps=10, hooks=[StopAt3(), silent()]).stop
    assert (stop.reason, stop.step, stop.hook) == ("hook", 3, "StopAt3")
    assert str(stop) == "stopped by a hook at step 3: StopAt3"


def test_a_stop_at_nan_gives_the_step_and_the_value(tmp_path, data):
    diverging = model(tmp_path, optimizer=lambda: tf.compat.v1.train.GradientDescentOptimizer(
        1e4))
    with pytest.warns(pyhooks.NanLossWarning):
        stop = diverging.train(data, steps=100, hooks=[
            silent(), pyhooks.NanTensorHook("training_loss:0", fail_on_nan_loss=False)]).stop
    assert stop.reason == "nan" and stop.hook == "NanTensorHook" and 1 < stop.step < 100
    assert stop.value != stop.value or abs(stop.value) == float("inf")
    with pytest.raises(pyhooks.NanLossDuringTrainingError) as raised:
        diverging.train(data, steps=100, hooks=[silent()])
    stop = raised.value.pyhooks_stop
    assert (stop.reason, stop.step, stop.hook, stop.method) == (
        "nan", raised.value.step, "NanTensorHook", "after_run")
    assert diverging.last_stop is stop


def test_an_error_and_an_interrupt_name_the_hook_and_the_method(tmp_path, data):
    estimator = model(tmp_path)
    with pytest.raises(RuntimeError) as raised:
        estimator.train(data, steps=10, hooks=[FailAt(2), silent()])
    stop = raised.value.pyhooks_stop
    assert (stop.reason, stop.step, stop.hook, stop.method) == ("error", 2, "FailAt",
                                                                "after_run")
    assert stop.message == "RuntimeError: failed at 2"
    with pytest.raises(KeyboardInterrupt) as raised:
        estimator.train(data, steps=10, hooks=[FailAt(4, KeyboardInterrupt), silent()])
    stop = raised.value.pyhooks_stop
    assert (stop.reason, stop.step, stop.hook) == ("interrupt", 4, "FailAt")
    assert stop.as_dict()["method"] == "after_run"


def test_the_runner_records_which_hook_requested_the_stop():
    class Asks(pyhooks.SessionRunHook):
        def after_run(self, run_context, run_values):
            run_context.request_stop()

    first, second = Asks(), Asks()
    with tf.Graph().as_default():
        tf.compat.v1.train.get_or_create_global_step()
        ten = tf.constant(10)
        with pyhooks.MonitoredSession(hooks=[pyhooks.SessionRunHook(), first, second]) as session:
            assert session.stopped_by is None
            session.run(ten)
            assert session.stopped_by is first


# --------------------------------------------------------------------------- without an estimator
def fit_line(steps=None):
    """A variable w fitted to y = 2x, its step and a tf.train.Checkpoint of both, restored
    from ``steps``' directory when it has a checkpoint (what a user's eager loop does)."""
    x = tf.constant([[1.0], [2.0], [3.0]])
    w, step = tf.Variable([[0.0]]), tf.Variable(0, dtype=tf.int64)
    checkpoint = tf.train.Checkpoint(w=w, global_step=step)
    if steps is not None and tf.train.latest_checkpoint(str(steps)):
        checkpoint.restore(tf.train.latest_checkpoint(str(steps)))

    @tf.function
    def train_step():
        with tf.GradientTape() as tape:
            losses = tf.reshape(tf.square(tf.matmul(x, w) - 2.0 * x), [-1])
            total = tf.reduce_sum(losses)
        w.assign_sub(0.01 * tape.gradient(total, w))
        return {"loss": tf.reduce_mean(losses), "losses": losses}
    return train_step, step, checkpoint


def eager_run(model_dir, hooks):
    train_step, step, checkpoint = fit_line(model_dir)
    history = pyhooks.HistorySaverHook(every_n_step=1)
    saver = pyhooks.CheckpointSaverHook(str(model_dir), save_steps=3, saver=checkpoint)
    creator = pyhooks.EagerSessionCreator(train_step, global_step=step)
    with pyhooks.MonitoredSession(creator, [saver, history, *hooks]) as session:
        while not session.should_stop():
            session.run()
    return history.history


def test_an_eager_loop_with_a_checkpoint_saver_resumes_the_hooks_state(tmp_path):
    with pytest.raises(KeyboardInterrupt):
        eager_run(tmp_path, [InterruptAt(5)])
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-5")  # at the error
    saved = json.loads((tmp_path / "hooks-5.json").read_text())["hooks"]
    assert [row[2] for row in saved["HistorySaverHook-1"]["rows"]] == [1, 2, 3, 4, 5]
    resumed = eager_run(tmp_path, [pyhooks.StopAtStepHook(last_step=8)])
    assert resumed.to_dict()["steps"] == list(range(1, 9))
    assert resumed.runs == [1] * 5 + [2] * 3
    assert not list(tmp_path.glob("hooks-*.json"))  # it ended normally: the next starts afresh
    assert eager_run(tmp_path, [pyhooks.StopAtStepHook(last_step=9)]).to_dict()["steps"] == [9]


def test_a_monitored_training_session_resumes_the_hooks_state(tmp_path):
    def run(hooks):
        with tf.Graph().as_default():
            step = tf.compat.v1.train.get_or_create_global_step()
            w = tf.compat.v1.get_variable("w", initializer=0.0)
            losses = tf.square(w * tf.constant([1.0, 2.0]) - 2.0)
            tf.compat.v1.add_to_collection("losses", losses)
            train = tf.compat.v1.train.GradientDescentOptimizer(0.01).minimize(
                tf.reduce_sum(losses), global_step=step)
            history = pyhooks.HistorySaverHook(every_n_step=1)
            with pyhooks.MonitoredTrainingSession(
                    checkpoint_dir=str(tmp_path), save_checkpoint_steps=3,
                    save_summaries_steps=None, hooks=[history, *hooks]) as session:
                while not session.should_stop():
                    session.run(train)
        return history.history

    with pytest.raises(KeyboardInterrupt):
        run([InterruptAt(5)])
    assert (tmp_path / "hooks-5.json").exists()  # with the checkpoint saved at the interrupt
    saved = json.loads((tmp_path / "hooks-5.json").read_text())["hooks"]
    assert set(saved) == {"StepCounterHook-1", "HistorySaverHook-1"}
    resumed = run([pyhooks.StopAtStepHook(last_step=8)])
    assert resumed.to_dict()["steps"] == list(range(1, 9))
    assert resumed.runs == [1] * 5 + [2] * 3
    assert not list(tmp_path.glob("hooks-*.json"))


def test_listening_adds_the_listener_to_the_drivers_run_info_for_begin_only(tmp_path):
    state = HookState(str(tmp_path), [Counter()], loop=True)
    with pyhooks.RunInfo(steps=7) as info:
        with listening(state):
            assert pyhooks.run_info() is info  # the one hooks keep: fields set later reach them
            assert info.saving_listeners == (state.listener,)
        assert info.saving_listeners == ()
    with listening(state):
        assert pyhooks.run_info().saving_listeners == (state.listener,)


def test_a_state_file_the_disk_refuses_is_a_one_line_disk_write_error(tmp_path):
    """Writing the hooks' state is one of a step's writes, so a full disk there says the
    file's directory and the cause as the others do (a subprocess, under a file size limit
    of 10 bytes: the state file is longer)."""
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent(f"""
        import resource, signal, sys
        sys.path.insert(0, {os.path.dirname(__file__)!r})
        from test_hook_state import Counter
        from pyhooks.hooks._hook_state import HookState
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (10, 10))
        try:
            HookState({str(tmp_path)!r}, [Counter()], loop=True).save(7)
        except Exception as error:
            print(type(error).__name__, error)
        """)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, env=dict(os.environ, PYTHONPATH=root))
    assert done.stdout.strip() == (f"DiskWriteError Could not write the hooks' state of step 7 "
                                   f"to {str(tmp_path)!r}: File too large (a file size limit "
                                   "was reached)."), done.stderr[-2000:]
    assert not os.listdir(tmp_path)  # no temporary file left
