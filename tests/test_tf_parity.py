"""TensorFlow's own MonitoredSession tests (public API only), restated for pyhooks' runner.

Each test follows one of ``monitored_session_test.py``'s in TensorFlow 2.21: the
same graph, the same hooks' behaviour, the same expectations; where TensorFlow
reaches into private classes (``session._coordinated_creator.coord``) a hook
hands the test the coordinator instead.
"""

import os

import pytest

tf = pytest.importorskip("tensorflow")
v1 = tf.compat.v1

import pyhooks  # noqa: E402


def counter():
    step = v1.train.get_or_create_global_step()
    return step, v1.assign_add(step, 1)


class RaiseAtCall(pyhooks.SessionRunHook):
    """Raises ``error`` once, in the ``n``-th after_run (1-based)."""

    def __init__(self, n, error):
        self.n, self.error, self.calls, self.raised = n, error, 0, False

    def after_run(self, run_context, run_values):
        self.calls += 1
        if self.calls == self.n and not self.raised:
            self.raised = True
            raise self.error


class CoordHook(pyhooks.SessionRunHook):
    def after_create_session(self, session, coord):
        self.coord = coord


class StopCoordinatorAtCall(CoordHook):
    """Reports ``error`` to the coordinator (as a thread would) in the ``n``-th after_run."""

    def __init__(self, n, error):
        self.n, self.error, self.calls = n, error, 0

    def after_run(self, run_context, run_values):
        self.calls += 1
        if self.calls == self.n:
            try:
                raise self.error
            except type(self.error) as caught:
                self.coord.request_stop(caught)


class CountingCreator:
    def __init__(self):
        self.created = 0

    def create_session(self):
        self.created += 1
        return v1.train.ChiefSessionCreator().create_session()


def test_defaults_and_graph():
    with tf.Graph().as_default() as graph:
        variable = v1.Variable(0)
        with pyhooks.MonitoredSession() as session:
            assert session.run(variable) == 0
            assert session.graph is graph


def test_last_step_and_num_steps_across_a_restore(tmp_path):
    with tf.Graph().as_default():
        step, do_step = counter()
        with pyhooks.MonitoredSession(hooks=[pyhooks.StopAtStepHook(last_step=3)]) as session:
            assert session.run(step) == 0
            for expected in (1, 2, 3):
                assert not session.should_stop()
                assert session.run(do_step) == expected
            assert session.should_stop()
            saver = v1.get_collection(v1.GraphKeys.SAVERS)[0]  # the scaffold's
            path = saver.save(session.raw_session(), str(tmp_path / "step-3"))

        def restore(scaffold, sess):
            scaffold.saver.restore(sess, path)
        creator = v1.train.ChiefSessionCreator(v1.train.Scaffold(init_fn=restore))
        with pyhooks.MonitoredSession(creator, [pyhooks.StopAtStepHook(num_steps=4)]) as session:
            assert session.run(do_step) == 4
            for _ in range(3):
                assert not session.should_stop()
                session.run(do_step)
            assert session.should_stop()


def test_recovery_restores_the_last_checkpoint(tmp_path):
    logdir = str(tmp_path)
    with tf.Graph().as_default():
        step, do_step = counter()
        scaffold = v1.train.Scaffold()
        abort = RaiseAtCall(4, tf.errors.AbortedError(None, None, "Abort"))
        save = pyhooks.CheckpointSaverHook(logdir, save_steps=1, scaffold=scaffold)
        creator = v1.train.ChiefSessionCreator(scaffold, checkpoint_dir=logdir)
        with pyhooks.MonitoredSession(creator, [abort, save]) as session:
            assert session.run(step) == 0
            assert session.run(do_step) == 1
            assert session.run(do_step) == 2
            assert not session.should_stop()
            # the hook aborts this step: restored from the step-2 checkpoint, run again
            assert session.run(do_step) == 3
            assert abort.raised and not session.should_stop()
            assert session.run(do_step) == 4


@pytest.mark.parametrize("error", [tf.errors.OutOfRangeError(None, None, "EOI"),
                                   StopIteration()])
def test_exit_cleanly_when_a_hook_signals_the_end_of_input(error):
    with tf.Graph().as_default():
        step, do_step = counter()
        session = pyhooks.MonitoredSession(hooks=[RaiseAtCall(2, error)])
        with session:
            assert session.run(step) == 0
            assert not session.should_stop()
            session.run(do_step)
            pytest.fail("the hook's error should have ended the with block")
        assert session.should_stop()


def test_regular_exceptions_pass_through_and_stop():
    with tf.Graph().as_default():
        step, do_step = counter()
        hook = RaiseAtCall(4, RuntimeError("regular exception"))
        session = pyhooks.MonitoredSession(hooks=[hook])
        with pytest.raises(RuntimeError, match="regular exception"):
            with session:
                assert session.run(step) == 0
                assert session.run(do_step) == 1
                assert session.run(do_step) == 2
                session.run(do_step)
        assert hook.raised and session.should_stop()


def test_an_error_reported_to_the_coordinator_passes_through_the_with_block():
    with tf.Graph().as_default():
        step, _ = counter()
        hook = CoordHook()
        session = pyhooks.MonitoredSession(hooks=[hook])
        ran = False
        with pytest.raises(RuntimeError, match="a thread wants to stop"):
            with session:
                assert session.run(step) == 0
                try:
                    raise RuntimeError("a thread wants to stop")
                except RuntimeError as error:
                    hook.coord.request_stop(error)
                assert session.run(step) == 0  # run() still works
                ran = True
                assert session.should_stop()
        assert ran


def feeding(c, v, value):
    """A step_fn running ``v`` with hooks, ``c`` fed ``value``."""
    def step_fn(step_context):
        return step_context.run_with_hooks(fetches=v, feed_dict={c: value})
    return step_fn


def test_a_coordinators_preemption_in_step_fn_gets_a_new_session():
    with tf.Graph().as_default():
        c = tf.constant(0)
        v = tf.identity(c)
        creator = CountingCreator()
        hook = StopCoordinatorAtCall(2, tf.errors.AbortedError(None, None, "Aborted at N"))
        session = pyhooks.MonitoredSession(creator, [hook])
        assert session.run_step_fn(feeding(c, v, 51)) == 51
        assert not session.should_stop()
        assert session.run_step_fn(feeding(c, v, 42)) == 42
        assert not session.should_stop()  # a new session: training goes on
        assert creator.created == 2
        session.close()


def test_a_fatal_error_in_the_coordinator_stops_and_is_raised_at_close():
    with tf.Graph().as_default():
        c = tf.constant(0)
        v = tf.identity(c)
        creator = CountingCreator()
        hook = StopCoordinatorAtCall(2, tf.errors.UnknownError(None, None, "fatal"))
        session = pyhooks.MonitoredSession(creator, [hook])
        assert session.run_step_fn(feeding(c, v, 51)) == 51
        assert session.run_step_fn(feeding(c, v, 42)) == 42
        assert session.should_stop() and creator.created == 1
        with pytest.raises(tf.errors.UnknownError):
            session.close()


class RunOptionsHook(pyhooks.SessionRunHook):
    """Sets RunOptions and records what after_run receives."""

    def __init__(self, trace_level, timeout_in_ms, output_partition_graphs, watch,
                 report_tensor_allocations_upon_oom):
        self.options = v1.RunOptions(
            trace_level=trace_level, timeout_in_ms=timeout_in_ms,
            output_partition_graphs=output_partition_graphs,
            report_tensor_allocations_upon_oom=report_tensor_allocations_upon_oom)
        self.options.debug_options.debug_tensor_watch_opts.extend([watch])
        self.run_options, self.run_metadata = [], []

    def before_run(self, run_context):
        return pyhooks.SessionRunArgs(None, None, options=self.options)

    def after_run(self, run_context, run_values):
        self.run_options.append(run_values.options)
        self.run_metadata.append(run_values.run_metadata)


def watch(node):
    from tensorflow.core.protobuf import debug_pb2

    return debug_pb2.DebugTensorWatch(node_name=node, output_slot=0,
                                      debug_ops=["DebugIdentity"], debug_urls=[])


def test_run_options_of_hooks_and_caller_are_merged_and_metadata_observed():
    from tensorflow.core.protobuf import debug_pb2

    with tf.Graph().as_default():
        mine = tf.constant(42, name="my_const")
        tf.constant(24, name="my_const_2")
        a = RunOptionsHook(2, 30000, False, watch("my_const"), False)
        b = RunOptionsHook(3, 60000, True, watch("my_const_2"), True)
        with pyhooks.MonitoredSession(hooks=[a, b]) as session:
            assert session.run(mine) == 42
        assert b.run_options == [v1.RunOptions(
            trace_level=3, timeout_in_ms=60000, output_partition_graphs=True,
            debug_options=debug_pb2.DebugOptions(
                debug_tensor_watch_opts=[watch("my_const"), watch("my_const_2")]),
            report_tensor_allocations_upon_oom=True)]
        assert isinstance(b.run_metadata[0], v1.RunMetadata)
        assert len(b.run_metadata[0].partition_graphs) > 0

    with tf.Graph().as_default():
        mine = tf.constant(42, name="my_const")
        tf.constant(24, name="my_const_2")
        hook = RunOptionsHook(2, 60000, False, watch("my_const_2"), False)
        caller = v1.RunOptions(trace_level=3, timeout_in_ms=30000, output_partition_graphs=True,
                               report_tensor_allocations_upon_oom=True)
        caller.debug_options.debug_tensor_watch_opts.extend([watch("my_const")])
        with pyhooks.MonitoredSession(hooks=[hook]) as session:
            assert session.run(mine, options=caller) == 42
        assert hook.run_options == [v1.RunOptions(
            trace_level=3, timeout_in_ms=60000, output_partition_graphs=True,
            debug_options=debug_pb2.DebugOptions(
                debug_tensor_watch_opts=[watch("my_const"), watch("my_const_2")]),
            report_tensor_allocations_upon_oom=True)]
        assert len(hook.run_metadata[0].partition_graphs) > 0


def test_closing_inside_the_with_block_is_an_error_at_its_end():
    with tf.Graph().as_default():
        with pytest.raises(RuntimeError, match="Session is already closed"):
            with pyhooks.MonitoredSession() as session:
                session.close()


def test_step_fn_example_and_stops():
    with tf.Graph().as_default():
        c = v1.placeholder(tf.float32)
        v = tf.identity(c)

        def step_fn(step_context):
            return step_context.run_with_hooks(fetches=v, feed_dict={c: 3.2})
        with pyhooks.MonitoredSession() as session:
            assert session.run_step_fn(step_fn) == pytest.approx(3.2)

        def stopping(step_context):
            step_context.request_stop()
        with pyhooks.MonitoredSession() as session:
            while not session.should_stop():
                session.run_step_fn(stopping)
                pytest.fail("request_stop() should have ended the with block")

        def returning(step_context):
            return "a type"
        with pyhooks.MonitoredSession() as session:
            assert session.run_step_fn(returning) == "a type"


def test_summaries_and_checkpoints_of_monitored_training_session(tmp_path):
    logdir = str(tmp_path)
    with tf.Graph().as_default():
        step = v1.train.get_or_create_global_step()
        new_step = v1.assign_add(step, 1)
        v1.summary.scalar("my_summary_tag", new_step * 2)
        with pyhooks.MonitoredTrainingSession(is_chief=True, checkpoint_dir=logdir) as session:
            for _ in range(101):  # 100: the default summary period
                session.run(new_step)
    tags = set()
    from tensorflow.core.util import event_pb2

    for name in os.listdir(logdir):
        if name.startswith("events.out.tfevents"):
            for record in v1.io.tf_record_iterator(os.path.join(logdir, name)):
                event = event_pb2.Event.FromString(record)
                tags.update(value.tag for value in event.summary.value)
    assert {"my_summary_tag", "global_step/sec"} <= tags
    with tf.Graph().as_default():  # a restart finds the checkpoint and resumes
        step = v1.train.get_or_create_global_step()
        with pyhooks.MonitoredTrainingSession(is_chief=True, checkpoint_dir=logdir) as session:
            assert session.run(step) == 101
