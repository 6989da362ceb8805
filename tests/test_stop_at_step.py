import pytest
import tensorflow as tf

import pyhooks
from hooktest_util import counter_graph, make_session, racy_graph, run_loop
from pyhooks.hooks.stop_at_step import StopAtStepHook


@pytest.mark.parametrize("kwargs, error, message", [
    ({}, ValueError, "One of num_steps or last_step must be specified."),
    ({"num_steps": 1, "last_step": 2}, ValueError,
     "Only one of num_steps or last_step can be specified."),
    ({"num_steps": -1}, ValueError, "`num_steps` must be zero or more, got -1."),
    ({"last_step": 2.5}, ValueError, "`last_step` must be a whole number, got 2.5."),
    ({"last_step": "3"}, TypeError, "`last_step` must be a whole number, got '3' (str)."),
])
def test_bad_arguments(kwargs, error, message):
    with pytest.raises(error) as info:
        StopAtStepHook(**kwargs)
    assert str(info.value) == message


def test_whole_float_accepted():
    assert StopAtStepHook(last_step=4.0).last_step == 4


@pytest.mark.parametrize("runner", ["pyhooks", "tf"])
def test_last_step(runner):
    g = counter_graph()
    with g.graph.as_default():
        results = run_loop([StopAtStepHook(last_step=3)], [g.train_op, g.loss], runner=runner)
    assert [loss for _, loss in results] == [1.0, 2.0, 3.0]


def _train(g, hooks, runner="pyhooks", checkpoint_dir=None):
    count = 0
    with make_session(hooks, runner, checkpoint_dir=checkpoint_dir) as sess:
        while not sess.should_stop():
            sess.run(g.train_op)
            count += 1
        final = sess.raw_session().run(g.global_step) if runner == "pyhooks" else None
    return count, final


@pytest.mark.parametrize("runner", ["pyhooks", "tf"])
def test_num_steps_relative_to_first_session(tmp_path, runner):
    g = counter_graph()
    with g.graph.as_default():
        saver_hook = pyhooks.CheckpointSaverHook(str(tmp_path), save_steps=1000)
        assert _train(g, [saver_hook, StopAtStepHook(last_step=4)], runner,
                      str(tmp_path))[0] == 4
        hook = StopAtStepHook(num_steps=3)
        count, _ = _train(g, [hook], runner, str(tmp_path))
        assert count == 3
        assert hook.last_step == 7


def test_not_recomputed_on_recovery():
    g = counter_graph()
    with g.graph.as_default():
        hook = StopAtStepHook(num_steps=2)
        hook.begin()
        with tf.compat.v1.Session() as raw:
            raw.run(tf.compat.v1.global_variables_initializer())

            class Coord:
                stopped = False

                def request_stop(self):
                    self.stopped = True

            hook.after_create_session(raw, Coord())
            assert hook.last_step == 2
            raw.run(g.train_op)
            coord = Coord()
            hook.after_create_session(raw, coord)  # recovery: same target
            assert hook.last_step == 2 and not coord.stopped
            raw.run(g.train_op)
            coord = Coord()
            hook.after_create_session(raw, coord)
            assert coord.stopped


@pytest.mark.parametrize("runner", ["pyhooks", "tf"])
def test_already_past_last_step_runs_nothing(runner):
    g = counter_graph()
    with g.graph.as_default():
        with make_session([StopAtStepHook(last_step=0)], runner) as sess:
            assert sess.should_stop()


def test_needs_global_step():
    g = counter_graph(with_global_step=False)
    with g.graph.as_default():
        with pytest.raises(RuntimeError) as info:
            make_session([StopAtStepHook(num_steps=1)])
    assert str(info.value) == "Global step should be created to use StopAtStepHook."
    assert info.value.__notes__ == ["pyhooks: raised in StopAtStepHook.begin()"]


@pytest.mark.parametrize("runner", ["pyhooks", "tf"])
def test_exact_with_unordered_increment(runner):
    for _ in range(3):  # the read/increment race shows up most of the time
        g = racy_graph()
        with g.graph.as_default():
            with make_session([StopAtStepHook(last_step=7)], runner) as sess:
                runs = 0
                while not sess.should_stop():
                    sess.run(g.train_op)
                    runs += 1
        assert runs == 7


def test_no_coordinator_given_when_already_past_last_step():
    # Frameworks that drive hooks themselves may pass no coordinator (TensorFlow's own
    # hook tests pass None): the hook then stops after the first step, as TensorFlow's.
    from hooktest_util import drive

    g = counter_graph()
    with g.graph.as_default():
        hook = StopAtStepHook(last_step=2)
        hook.begin()
        with tf.compat.v1.Session() as raw:
            raw.run(tf.compat.v1.global_variables_initializer())
            raw.run(tf.compat.v1.assign(g.global_step, 5))
            hook.after_create_session(raw, None)
            assert len(drive([hook], raw, g.train_op, steps=3)) == 1
