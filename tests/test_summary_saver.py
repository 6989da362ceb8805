import pytest
import tensorflow as tf

from hooktest_util import counter_graph, make_session, racy_graph, read_events, run_loop, scalars
from pyhooks.hooks.summary_saver import SummarySaverHook


def graph_with_summary():
    g = counter_graph()
    with g.graph.as_default():
        g.summary = tf.compat.v1.summary.scalar("x_value", g.x)
        g.summary_evals = 0

        def count(x):
            g.summary_evals += 1
            return x

        g.counted = tf.compat.v1.summary.scalar(
            "counted", tf.numpy_function(count, [g.x], tf.float32, stateful=True))
    return g


@pytest.mark.parametrize("kwargs, error, message", [
    ({"save_steps": 1, "output_dir": "d"}, ValueError,
     "Exactly one of scaffold or summary_op must be provided."),
    ({"save_steps": 1, "output_dir": "d", "summary_op": 1, "scaffold": 1}, ValueError,
     "Exactly one of scaffold or summary_op must be provided."),
    ({"save_steps": 1, "summary_op": 1}, ValueError,
     "SummarySaverHook needs `output_dir` or `summary_writer` to write to, got output_dir=None"),
    ({"output_dir": "d", "summary_op": 1}, ValueError,
     "Either every_secs or every_steps should be provided. Give one of `save_secs` and "
     "`save_steps`."),
    ({"save_steps": -2, "output_dir": "d", "summary_op": 1}, ValueError,
     "`save_steps` must be positive, got -2."),
    ({"save_steps": 0.5, "output_dir": "d", "summary_op": 1}, ValueError,
     "`save_steps` must be a whole number, got 0.5."),
    ({"save_secs": [1], "output_dir": "d", "summary_op": 1}, TypeError,
     "`save_secs` must be a number, got [1] (list)."),
])
def test_bad_arguments(kwargs, error, message):
    with pytest.raises(error) as info:
        SummarySaverHook(**kwargs)
    assert str(info.value).startswith(message)


def test_no_io_at_construction(tmp_path):
    SummarySaverHook(save_steps=3.0, output_dir=str(tmp_path / "s"), summary_op="s")
    assert not (tmp_path / "s").exists()


def test_saves_every_n_steps_and_only_fetches_then(tmp_path):
    g = graph_with_summary()
    with g.graph.as_default():
        hook = SummarySaverHook(save_steps=2, output_dir=str(tmp_path), summary_op=g.counted)
        run_loop([hook], g.train_op, max_steps=5)
    # The summary runs with the step: x is read before or after its update, so
    # only the steps are asserted; the op ran exactly on steps 1, 3, 5.
    assert [step for step, _ in scalars(tmp_path, "counted")] == [1, 3, 5]
    assert g.summary_evals == 3
    events = read_events(tmp_path)
    starts = [e.step for e in events if e.session_log.status == tf.compat.v1.SessionLog.START]
    assert starts == [1]


def test_scaffold_summary_op_under_tensorflow_monitored_session(tmp_path):
    g = graph_with_summary()
    with g.graph.as_default():
        scaffold = tf.compat.v1.train.Scaffold(summary_op=g.summary)
        writer = tf.compat.v1.summary.FileWriter(str(tmp_path))
        hook = SummarySaverHook(save_steps=1, summary_writer=writer, scaffold=scaffold)
        run_loop([hook], g.train_op, max_steps=3, runner="tf", scaffold=scaffold)
        writer.close()
    assert [step for step, _ in scalars(tmp_path, "x_value")] == [1, 2, 3]


def test_scaffold_without_summary_op_writes_only_start(tmp_path):
    g = counter_graph()
    with g.graph.as_default():
        scaffold = tf.compat.v1.train.Scaffold()
        hook = SummarySaverHook(save_steps=1, output_dir=str(tmp_path), scaffold=scaffold)
        run_loop([hook], g.train_op, max_steps=2, scaffold=scaffold)
    assert not [e for e in read_events(tmp_path) if e.summary.value]


def test_flushed_after_error(tmp_path):
    g = graph_with_summary()
    with g.graph.as_default():
        hook = SummarySaverHook(save_steps=1, output_dir=str(tmp_path), summary_op=[g.summary])
        with pytest.raises(KeyError):
            with make_session([hook]) as sess:
                sess.run(g.train_op)
                sess.run(g.train_op)
                raise KeyError("stop")
    assert [step for step, _ in scalars(tmp_path, "x_value")] == [1, 2]


def test_needs_global_step(tmp_path):
    g = counter_graph(with_global_step=False)
    with g.graph.as_default():
        with pytest.raises(RuntimeError, match="Global step should be created to use SummarySaverHook"):
            make_session([SummarySaverHook(save_steps=1, output_dir=str(tmp_path),
                                           summary_op=tf.constant(""))])


def test_steps_exact_with_unordered_increment(tmp_path):
    g = racy_graph()
    with g.graph.as_default():
        hook = SummarySaverHook(save_steps=3, output_dir=str(tmp_path),
                                summary_op=tf.compat.v1.summary.scalar("loss_value", g.loss))
        run_loop([hook], g.train_op, max_steps=10)
    assert [step for step, _ in scalars(tmp_path, "loss_value")] == [1, 4, 7, 10]
