"""TensorFlow 2.21's MonitoredSession semantics where pyhooks differed, on real sessions."""

import csv
import threading

import pytest

tf = pytest.importorskip("tensorflow")
v1 = tf.compat.v1

import pyhooks  # noqa: E402
from pyhooks import session as session_module  # noqa: E402
from tests.fakes import RecordingHook  # noqa: E402


def counter_graph():
    """A global step and a train op that increments it (optimizer.minimize style)."""
    graph = tf.Graph()
    with graph.as_default():
        step = v1.train.get_or_create_global_step()
        w = v1.get_variable("w", [], initializer=v1.zeros_initializer())
        loss = tf.square(w - 3.0)
        train = v1.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
        v1.add_to_collection(v1.GraphKeys.LOSSES, loss)
    return graph, train


def read_after_increment(train):
    """A session fault: a step fetching the global step read with ``train`` sees the value
    after the step's own increment (one outcome of the race, made certain)."""
    from tensorflow.python.training import training_util

    read = training_util._get_or_create_global_step_read(train.graph)  # noqa: SLF001

    def fault(sess, fetches, values):
        if isinstance(fetches, list) and any(f is train for f in fetches):
            return [v + 1 if f is read else v for f, v in zip(fetches, values)]
        return values
    return fault


class Creator:
    """Real sessions, each made to fail as the test says."""

    def __init__(self, plan):
        self.inner = v1.train.ChiefSessionCreator()
        self.plan = list(plan)  # per session: a function (session, coord, run number) or None
        self.sessions = []

    def create_session(self):
        sess = _Session(self.inner.create_session(), self.plan.pop(0) if self.plan else None)
        self.sessions.append(sess)
        return sess


class _Session:
    def __init__(self, sess, fault):
        self._sess, self.fault, self.runs = sess, fault, 0
        self.graph, self.sess_str = sess.graph, sess.sess_str

    def run(self, fetches, *args, **kwargs):
        self.runs += 1
        if self.fault is not None and self.fault.__code__.co_argcount == 1:
            self.fault(self)
        values = self._sess.run(fetches, *args, **kwargs)
        if self.fault is not None and self.fault.__code__.co_argcount == 3:
            values = self.fault(self, fetches, values)
        return values

    def close(self):
        self._sess.close()


class CoordHook(pyhooks.SessionRunHook):
    def after_create_session(self, session, coord):
        self.coord = coord


def report(coord, error):
    """What a thread does: request_stop with the error it is handling (TensorFlow wants that)."""
    try:
        raise error
    except type(error) as caught:
        coord.request_stop(caught)


def test_a_preemption_a_thread_reports_to_the_coordinator_gets_a_new_session():
    graph, train = counter_graph()
    hook = CoordHook()
    creator = Creator([None, None])
    with graph.as_default(), pyhooks.MonitoredSession(creator, [hook]) as sess:
        sess.run(train)
        thread = threading.Thread(target=report, args=(
            hook.coord, tf.errors.UnavailableError(None, None, "ps went away")))
        thread.start()
        thread.join()
        assert not sess.should_stop()  # recovered there: a new session, training goes on
        assert len(creator.sessions) == 2
        sess.run(train)
        assert not sess.should_stop()


def test_a_cancelled_step_after_a_reported_preemption_is_that_preemption():
    """TensorFlow raises the coordinator's preemption in place of the step's error and
    recovers from it: the step runs again in a new session."""
    graph, train = counter_graph()
    hook = CoordHook()

    def cancel(sess):
        if sess.runs == 2:
            report(hook.coord, tf.errors.AbortedError(None, None, "worker preempted"))
            raise tf.errors.CancelledError(None, None, "queue cancelled")
    creator = Creator([cancel, None])
    with graph.as_default(), pyhooks.MonitoredSession(creator, [hook]) as sess:
        sess.run(train)
        sess.run(train)  # cancelled, then recovered and run again
        assert len(creator.sessions) == 2


def test_other_reported_errors_stop_the_loop_and_are_raised_at_close():
    graph, train = counter_graph()
    hook = CoordHook()
    with graph.as_default():
        sess = pyhooks.MonitoredSession(Creator([]), [hook])
        sess.run(train)
        report(hook.coord, ValueError("a thread failed"))
        assert sess.should_stop()
        with pytest.raises(ValueError, match="a thread failed"):
            sess.close()
    with graph.as_default():
        single = pyhooks.SingularMonitoredSession(hooks=[hook])
        report(hook.coord, ValueError("again"))
        with pytest.raises(ValueError, match="again"):  # SingularMonitoredSession: raised here
            single.should_stop()


def test_run_step_fn_reruns_the_whole_step_fn_after_a_preemption_in_its_own_code():
    graph, train = counter_graph()
    calls = []

    def step_fn(step_context):
        calls.append(len(calls))
        step_context.run_with_hooks(train)
        if len(calls) == 1:
            raise tf.errors.AbortedError(None, None, "raised by step_fn itself")
        return step_context.session.run(v1.train.get_global_step())

    creator = Creator([None, None])
    with graph.as_default(), pyhooks.MonitoredSession(creator, []) as sess:
        assert sess.run_step_fn(step_fn) == 1  # the new session starts from 0 again
        assert calls == [0, 1] and len(creator.sessions) == 2


def test_close_unfinalizes_the_graph_the_session_finalized():
    graph, train = counter_graph()
    with graph.as_default():
        with pyhooks.MonitoredSession() as sess:
            sess.run(train)
            assert graph.finalized
        assert not graph.finalized
        tf.constant(1.0)  # the graph takes new ops again, as after TensorFlow's close()
    finalized, train = counter_graph()
    with finalized.as_default():
        scaffold = v1.train.Scaffold()
        scaffold.finalize()  # finalizes the graph
        creator = v1.train.ChiefSessionCreator(scaffold=scaffold)
        with pyhooks.MonitoredSession(creator) as sess:
            sess.run(train)
    assert finalized.finalized  # it was finalized before: it stays so


def test_every_hook_gets_end_even_after_one_raised_and_the_first_error_wins():
    graph, train = counter_graph()
    log = []
    hooks = [RecordingHook("a", log, raise_in="end"), RecordingHook("b", log),
             RecordingHook("c", log, raise_in="end")]
    with graph.as_default():
        with pytest.raises(ValueError, match="boom in a.end") as info:
            with pyhooks.MonitoredSession(hooks=hooks) as sess:
                sess.run(train)
    assert [entry for entry in log if entry[1] == "end"] == [("a", "end"), ("b", "end"),
                                                             ("c", "end")]
    assert any("RecordingHook.end() also raised ValueError: boom in c.end" in n
               for n in info.value.__notes__)
    assert [str(e) for e in info.value.pyhooks_end_errors] == ["boom in c.end"]


def test_sessions_are_re_created_a_bounded_number_of_times_then_the_error_is_raised():
    graph, train = counter_graph()

    def always(sess):
        raise tf.errors.UnavailableError(None, None, "never comes back")
    creator = Creator([always] * (session_module.MAX_RECOVERIES + 2))
    with graph.as_default(), pyhooks.MonitoredSession(creator, []) as sess:
        with pytest.raises(tf.errors.UnavailableError) as info:
            sess.run(train)
    assert len(creator.sessions) == session_module.MAX_RECOVERIES + 1
    assert any("gave up after" in note for note in info.value.__notes__)


def test_the_eager_backend_never_re_creates_its_session():
    calls = []

    def step():
        calls.append(1)
        raise tf.errors.UnavailableError(None, None, "a collective's peer is gone")
    with pytest.raises(tf.errors.UnavailableError):
        with pyhooks.MonitoredSession(pyhooks.EagerSessionCreator(step), []) as sess:
            sess.run()
    assert calls == [1]


def test_monitored_training_session_honours_the_distribute_coordinator_context(tmp_path):
    """As TensorFlow: the worker context picks the chief and the default hooks' directories."""
    from tensorflow.python.distribute import distribute_coordinator_context as context

    class Worker:
        is_chief, should_checkpoint, should_save_summary = False, False, False
        task_type, task_id = "worker", 1
        _strategy = type("MultiWorkerMirroredStrategy", (), {})()

        def session_creator(self, scaffold, config=None, checkpoint_dir=None, max_wait_secs=None):
            return v1.train.ChiefSessionCreator(scaffold=scaffold, config=config)

    graph, train = counter_graph()
    chief_only = RecordingHook("chief", [])
    context._worker_context.current = Worker()  # noqa: SLF001
    try:
        with graph.as_default(), pyhooks.MonitoredTrainingSession(
                checkpoint_dir=str(tmp_path), chief_only_hooks=[chief_only],
                save_checkpoint_steps=1) as sess:
            sess.run(train)
    finally:
        del context._worker_context.current  # noqa: SLF001
    assert chief_only.runs == 0  # not the chief
    assert (tmp_path / "tmp_worker_1").is_dir()  # its files in its own directory
    assert not list(tmp_path.glob("model.ckpt*")) and list(tmp_path.glob("tmp_worker_1/model*"))


@pytest.mark.parametrize("racing", [False, True])
def test_history_rows_have_exact_strictly_increasing_steps(tmp_path, racing):
    """A graph whose increment does not wait for the global step read: rows at 2, 4 and the
    last step 5, once each, also when every read sees the run's own increment."""
    graph, train = counter_graph()
    path = tmp_path / "history.csv"
    history = pyhooks.HistorySaverHook(every_n_step=2, path=str(path))
    creator = Creator([read_after_increment(train) if racing else None])
    with graph.as_default(), pyhooks.MonitoredSession(creator, [history]) as sess:
        for _ in range(5):
            sess.run(train)
    assert history.history.to_dict()["steps"] == [2, 4, 5]
    with open(path, newline="") as f:
        assert [int(row["steps"]) for row in csv.DictReader(f)] == [2, 4, 5]


@pytest.mark.parametrize("racing", [False, True])
def test_step_counter_and_stop_at_step_use_exact_steps(tmp_path, racing):
    graph, train = counter_graph()
    creator = Creator([read_after_increment(train) if racing else None])
    counter = pyhooks.StepCounterHook(every_n_steps=2, output_dir=str(tmp_path))
    seen = []
    counter._record = lambda rate, step: seen.append(step)  # noqa: SLF001
    stop = pyhooks.StopAtStepHook(last_step=7)
    with graph.as_default(), pyhooks.MonitoredSession(creator, [counter, stop]) as sess:
        runs = 0
        while not sess.should_stop():
            sess.run(train)
            runs += 1
    assert runs == 7
    assert seen == [3, 5, 7]  # the timer's first trigger at step 1 records nothing


def test_runs_without_the_train_op_leave_history_rows_on_their_steps(tmp_path):
    """A graph whose increment waits for the step read (a fetched read + 1 is the step a
    training run reaches), with runs that only evaluate in between: those reach no step,
    so no row is labelled ahead of the step it was recorded at."""
    from tensorflow.python.training import training_util

    graph = tf.Graph()
    with graph.as_default():
        v1.train.get_or_create_global_step()
        w = v1.get_variable("w", [], initializer=v1.zeros_initializer())
        loss = tf.square(w - 3.0)
        v1.add_to_collection(v1.GraphKeys.LOSSES, loss)
        update = v1.train.GradientDescentOptimizer(0.1).minimize(loss)
        train = tf.group(update, training_util._increment_global_step(1))  # noqa: SLF001
    history = pyhooks.HistorySaverHook(every_n_step=2)
    counter = pyhooks.StepCounterHook(every_n_steps=2, output_dir=str(tmp_path))
    counted = []
    counter._record = lambda rate, step: counted.append(step)  # noqa: SLF001
    with graph.as_default(), pyhooks.MonitoredSession(hooks=[history, counter]) as sess:
        for _ in range(5):
            sess.run(train)
            sess.run(loss)  # evaluates only
    assert history.history.to_dict()["steps"] == [2, 4, 5]
    assert counted == [3, 5]
