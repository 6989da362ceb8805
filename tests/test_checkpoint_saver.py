import os

import numpy as np
import pytest
import tensorflow as tf

import pyhooks
from hooktest_util import counter_graph, make_session, racy_graph, read_events, run_loop
from pyhooks.hooks import _checkpointing
from pyhooks.hooks.checkpoint_saver import CheckpointSaverHook, CheckpointSaverListener
from pyhooks.hooks.stop_at_step import StopAtStepHook


def restored_x(checkpoint_path):
    """Value of the variable ``x`` in a checkpoint, restored by a fresh Saver."""
    with tf.Graph().as_default():
        x = tf.compat.v1.get_variable("x", initializer=-1.0, use_resource=True)
        tf.compat.v1.train.get_or_create_global_step()
        saver = tf.compat.v1.train.Saver()
        with tf.compat.v1.Session() as sess:
            saver.restore(sess, checkpoint_path)
            return float(sess.run(x))


def state(directory):
    ckpt = tf.compat.v1.train.get_checkpoint_state(str(directory))
    return os.path.basename(ckpt.model_checkpoint_path), [
        os.path.basename(p) for p in ckpt.all_model_checkpoint_paths]


class Recorder(CheckpointSaverListener):
    def __init__(self, stop_at=None):
        self.calls = []
        self.stop_at = stop_at

    def begin(self):
        self.calls.append(("begin",))

    def before_save(self, session, global_step_value):
        self.calls.append(("before_save", global_step_value))

    def after_save(self, session, global_step_value):
        self.calls.append(("after_save", global_step_value))
        return global_step_value == self.stop_at

    def end(self, session, global_step_value):
        self.calls.append(("end", global_step_value))


@pytest.mark.parametrize("kwargs, error, message", [
    ({"save_steps": 1, "saver": object(), "scaffold": object()}, ValueError,
     "You cannot provide both saver and scaffold."),
    ({}, ValueError, "Either every_secs or every_steps should be provided. Give one of "
                     "`save_secs` and `save_steps`."),
    ({"save_steps": 1, "save_secs": 1}, ValueError, "Can not provide both every_secs and every_steps."),
    ({"save_steps": 0}, ValueError, "`save_steps` must be positive, got 0."),
    ({"save_steps": 1.5}, ValueError, "`save_steps` must be a whole number, got 1.5."),
    ({"save_secs": "10"}, TypeError, "`save_secs` must be a number, got '10' (str)."),
    ({"save_steps": 1, "listeners": [object]}, TypeError, "`listeners[0]` must be a listener, got"),
    ({"save_steps": 1, "save_on_error": "yes"}, TypeError, "`save_on_error` must be True or False"),
])
def test_bad_arguments(tmp_path, kwargs, error, message):
    with pytest.raises(error) as info:
        CheckpointSaverHook(str(tmp_path), **kwargs)
    assert str(info.value).startswith(message)


def test_bad_checkpoint_dir():
    with pytest.raises(TypeError, match="`checkpoint_dir` must be a non-empty path, got None."):
        CheckpointSaverHook(None, save_steps=1)


def test_no_io_at_construction(tmp_path):
    CheckpointSaverHook(str(tmp_path / "ck"), save_steps=2.0)
    assert not (tmp_path / "ck").exists()


def test_saves_at_creation_every_n_steps_and_end(tmp_path):
    g = counter_graph()
    listener = Recorder()
    with g.graph.as_default():
        hook = CheckpointSaverHook(str(tmp_path), save_steps=2, listeners=[listener])
        run_loop([hook, StopAtStepHook(last_step=5)], g.train_op)
    assert state(tmp_path) == ("model.ckpt-5", ["model.ckpt-0", "model.ckpt-2", "model.ckpt-4",
                                                "model.ckpt-5"])
    assert (tmp_path / "checkpoint").stat().st_mode & 0o777 == 0o644
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]
    assert restored_x(str(tmp_path / "model.ckpt-4")) == 4.0
    assert restored_x(tf.train.latest_checkpoint(str(tmp_path))) == 5.0
    assert (tmp_path / "graph.pbtxt").exists()
    assert (tmp_path / "model.ckpt-4.meta").exists()
    assert listener.calls == [("begin",)] + [
        (m, s) for s in (0, 2, 4, 5) for m in ("before_save", "after_save")] + [("end", 5)]
    events = read_events(tmp_path)
    logged = [e.step for e in events if e.session_log.status == tf.compat.v1.SessionLog.CHECKPOINT]
    assert logged == [0, 2, 4, 5]
    assert any(e.graph_def for e in events)


def test_under_tensorflow_monitored_session(tmp_path):
    g = counter_graph()
    with g.graph.as_default():
        hook = CheckpointSaverHook(str(tmp_path), save_steps=2, save_graph_def=False)
        run_loop([hook], g.train_op, max_steps=3, runner="tf")
    assert state(tmp_path) == ("model.ckpt-3", ["model.ckpt-0", "model.ckpt-2", "model.ckpt-3"])
    assert restored_x(str(tmp_path / "model.ckpt-3")) == 3.0
    assert not (tmp_path / "graph.pbtxt").exists()
    assert not list(tmp_path.glob("*.meta"))


def test_listener_requests_stop(tmp_path):
    g = counter_graph()
    listener = Recorder(stop_at=2)
    with g.graph.as_default():
        hook = CheckpointSaverHook(str(tmp_path), save_steps=1, listeners=[listener])
        results = run_loop([hook], g.train_op)
    assert len(results) == 2
    assert listener.calls[-1] == ("end", 2)
    assert state(tmp_path)[0] == "model.ckpt-2"


def test_crash_while_writing_data_keeps_previous_checkpoint(tmp_path, monkeypatch):
    g = counter_graph()
    with g.graph.as_default():
        hook = CheckpointSaverHook(str(tmp_path), save_steps=2)
        calls = []
        real_save = tf.compat.v1.train.Saver.save

        def failing_save(saver, sess, save_path, global_step=None, **kwargs):
            calls.append(global_step)
            if global_step == 2:  # a half-written data file, then the crash
                with open(f"{save_path}-2.data-00000-of-00001", "wb") as f:
                    f.write(b"\x00partial")
                raise OSError("disk full")
            return real_save(saver, sess, save_path, global_step=global_step, **kwargs)

        monkeypatch.setattr(tf.compat.v1.train.Saver, "save", failing_save)
        with pytest.raises(OSError, match="disk full"):
            run_loop([hook], g.train_op)
    assert calls == [0, 2]  # save_on_error does not retry a failed save
    assert state(tmp_path) == ("model.ckpt-0", ["model.ckpt-0"])
    assert restored_x(tf.train.latest_checkpoint(str(tmp_path))) == 0.0


def test_crash_while_replacing_index_keeps_previous_index(tmp_path, monkeypatch):
    g = counter_graph()
    with g.graph.as_default():
        hook = CheckpointSaverHook(str(tmp_path), save_steps=2)
        with make_session([hook]) as sess:
            before = (tmp_path / "checkpoint").read_text()

            def broken_replace(src, dst):
                raise OSError("power cut")

            monkeypatch.setattr(_checkpointing.os, "replace", broken_replace)
            with pytest.raises(OSError, match="power cut"):
                sess.run(g.train_op)
                sess.run(g.train_op)
            monkeypatch.undo()
    assert (tmp_path / "checkpoint").read_text() == before
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]
    assert restored_x(tf.train.latest_checkpoint(str(tmp_path))) == 0.0


@pytest.mark.parametrize("save_on_error, error, expected", [
    (True, ValueError("boom"), "model.ckpt-3"),
    (False, ValueError("boom"), "model.ckpt-2"),
    (True, pyhooks.NanLossDuringTrainingError("nan"), "model.ckpt-2"),
])
def test_save_on_error(tmp_path, save_on_error, error, expected):
    g = counter_graph()
    with g.graph.as_default():
        hook = CheckpointSaverHook(str(tmp_path), save_steps=2, save_on_error=save_on_error)
        with pytest.raises(type(error)):
            with make_session([hook]) as sess:
                for _ in range(3):
                    sess.run(g.train_op)
                raise error
    assert state(tmp_path)[0] == expected


def test_saver_from_collection_and_scaffold(tmp_path):
    g = counter_graph()
    with g.graph.as_default():
        saver = tf.compat.v1.train.Saver(max_to_keep=1)
        tf.compat.v1.add_to_collection(tf.compat.v1.GraphKeys.SAVERS, saver)
        run_loop([CheckpointSaverHook(str(tmp_path), save_steps=1), StopAtStepHook(last_step=3)],
                 g.train_op)
        assert state(tmp_path) == ("model.ckpt-3", ["model.ckpt-3"])  # max_to_keep honoured
        assert not (tmp_path / "model.ckpt-2.index").exists()
    g = counter_graph()
    with g.graph.as_default():
        tf.compat.v1.add_to_collection(tf.compat.v1.GraphKeys.SAVERS, tf.compat.v1.train.Saver())
        tf.compat.v1.add_to_collection(tf.compat.v1.GraphKeys.SAVERS, tf.compat.v1.train.Saver())
        with pytest.raises(RuntimeError) as info:
            make_session([CheckpointSaverHook(str(tmp_path / "two"), save_steps=1)])
    assert str(info.value).startswith("More than one item in collection savers.")


def test_scaffold_saver(tmp_path):
    g = counter_graph()
    with g.graph.as_default():
        scaffold = tf.compat.v1.train.Scaffold(saver=tf.compat.v1.train.Saver(max_to_keep=1))
        hook = CheckpointSaverHook(str(tmp_path), save_steps=1, scaffold=scaffold)
        run_loop([hook, StopAtStepHook(last_step=2)], g.train_op, scaffold=scaffold)
    assert state(tmp_path) == ("model.ckpt-2", ["model.ckpt-2"])
    assert np.isclose(restored_x(str(tmp_path / "model.ckpt-2")), 2.0)


def test_monitored_training_session_default_hooks(tmp_path):
    g = counter_graph()
    with g.graph.as_default():
        tf.compat.v1.summary.scalar("x_value", g.x)
        with pyhooks.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), save_summaries_steps=2,
                                              log_step_count_steps=2,
                                              hooks=[StopAtStepHook(last_step=4)]) as sess:
            while not sess.should_stop():
                sess.run(g.train_op)
    assert state(tmp_path)[0] == "model.ckpt-4"
    tags = {v.tag for e in read_events(tmp_path) for v in e.summary.value}
    assert {"x_value", "global_step/sec"} <= tags
    assert restored_x(tf.train.latest_checkpoint(str(tmp_path))) == 4.0


def test_checkpoint_names_match_the_saved_step_with_unordered_increment(tmp_path):
    g = racy_graph()
    with g.graph.as_default():
        hook = CheckpointSaverHook(str(tmp_path), save_steps=2)
        run_loop([hook, StopAtStepHook(last_step=9)], g.train_op)
    paths = tf.compat.v1.train.get_checkpoint_state(str(tmp_path)).all_model_checkpoint_paths
    for path in paths:
        saved = tf.train.load_variable(path, "global_step")
        assert path.endswith(f"model.ckpt-{saved}")
    assert paths[-1].endswith("model.ckpt-9")


def test_crash_while_writing_meta_graph_keeps_previous_checkpoint(tmp_path, monkeypatch):
    g = counter_graph()
    with g.graph.as_default():
        hook = CheckpointSaverHook(str(tmp_path), save_steps=1)
        with make_session([hook]) as sess:
            def broken_export(saver, filename=None, **kwargs):
                with open(filename, "wb") as f:
                    f.write(b"\x00")
                raise OSError("meta write failed")

            monkeypatch.setattr(tf.compat.v1.train.Saver, "export_meta_graph", broken_export)
            with pytest.raises(OSError, match="meta write failed"):
                sess.run(g.train_op)
            monkeypatch.undo()
    assert state(tmp_path) == ("model.ckpt-0", ["model.ckpt-0"])
