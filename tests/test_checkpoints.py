"""Checkpoints of a model_dir you can rely on: kept as asked, read strictly, one trainer."""

import glob
import os

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

import pyhooks  # noqa: E402
from pyhooks.estimators import (  # noqa: E402
    column_numeric, feature_columns, input_fn, linear_regressor, load_mtcars)
from pyhooks.hooks import _model_dir  # noqa: E402
from pyhooks.errors import CheckpointError  # noqa: E402
from pyhooks.hooks.nan_tensor import NanLossWarning  # noqa: E402


def silent():
    return pyhooks.ProgressBarHook(writer=lambda text: None)


@pytest.fixture(scope="module")
def data():
    return input_fn(load_mtcars(), features=["drat"], response="mpg", batch_size=8,
                    num_epochs=None)


def model(model_dir):
    return linear_regressor(feature_columns(column_numeric("drat")), model_dir=str(model_dir))


def trained(model_dir, data, steps=3):
    model(model_dir).train(data, steps=steps, hooks=[silent()])
    return os.path.join(str(model_dir), f"model.ckpt-{steps}")


def indexes(model_dir):
    return sorted(os.path.basename(p) for p in glob.glob(os.path.join(str(model_dir), "*.index")))


# --------------------------------------------------------------------------- max_to_keep
def test_max_to_keep_holds_across_restarts(tmp_path, data):
    for _ in range(8):  # a new estimator (a new saver) each time, as a new process
        model(tmp_path).train(data, steps=1, hooks=[silent()])
    assert indexes(tmp_path) == [f"model.ckpt-{i}.index" for i in range(4, 9)]
    state = tf.train.get_checkpoint_state(str(tmp_path))
    assert [os.path.basename(p) for p in state.all_model_checkpoint_paths] == [
        f"model.ckpt-{i}" for i in range(4, 9)]


def test_checkpoint_saver_hook_max_to_keep_holds_across_restarts(tmp_path):
    class StartAt(pyhooks.SessionRunHook):  # a restart that restores nothing by itself
        def __init__(self, step):
            self.step = step

        def begin(self):
            self.assign = tf.compat.v1.train.get_global_step().assign(self.step)

        def after_create_session(self, session, coord):
            session.run(self.assign)

    def one_run(base):
        with tf.Graph().as_default():
            step = tf.compat.v1.train.get_or_create_global_step()
            train_op = step.assign_add(1)
            hook = pyhooks.CheckpointSaverHook(str(tmp_path), save_steps=1, save_graph_def=False)
            with pyhooks.MonitoredSession(hooks=[StartAt(base), hook]) as session:
                session.run(train_op)  # saves at creation (base) and after the step (base + 1)
    for base in (10, 20, 30, 40):
        one_run(base)
    assert indexes(tmp_path) == [f"model.ckpt-{i}.index" for i in (21, 30, 31, 40, 41)]


# --------------------------------------------------------------------------- damaged files
def test_a_truncated_data_file_is_a_short_error_naming_model_dir_and_file(tmp_path, data):
    path = trained(tmp_path, data)
    data_file = glob.glob(path + ".data-*")[0]
    os.truncate(data_file, os.path.getsize(data_file) // 2)
    with pytest.raises(CheckpointError) as info:
        model(tmp_path).train(data, steps=1, hooks=[silent()])
    message = str(info.value)
    assert message.startswith(f"model_dir '{tmp_path}': checkpoint file "
                              f"{os.path.basename(data_file)} is damaged (truncated or corrupt: ")
    assert "\n" not in message and len(message) < 300


def test_a_truncated_index_file_is_a_short_error(tmp_path, data):
    path = trained(tmp_path, data)
    os.truncate(path + ".index", 10)
    with pytest.raises(CheckpointError, match=r"^model_dir '.*': checkpoint file "
                                              r"model.ckpt-3.index is damaged \(truncated"):
        model(tmp_path).evaluate(data, steps=1)


@pytest.mark.parametrize("damage, words", [
    (lambda d: open(os.path.join(d, "checkpoint"), "w").write("garbage {{{"),
     "its `checkpoint` index file is not a checkpoint index"),
    (lambda d: open(os.path.join(d, "checkpoint"), "w").close(),
     "its `checkpoint` index file names no checkpoint (empty or damaged)"),
    (lambda d: [os.unlink(p) for p in glob.glob(os.path.join(d, "model.ckpt-3*"))],
     "its `checkpoint` index file names model.ckpt-3, whose file model.ckpt-3.index is missing"),
    (lambda d: os.unlink(os.path.join(d, "checkpoint")),
     "holds checkpoint files (model.ckpt-3.index) but no `checkpoint` index file"),
])
def test_a_garbage_or_dangling_index_is_an_error_not_a_restart_from_0(tmp_path, data, damage,
                                                                    words):
    trained(tmp_path, data)
    damage(str(tmp_path))
    with pytest.raises(CheckpointError) as info:
        model(tmp_path).train(data, steps=1, hooks=[silent()])
    assert words in str(info.value)
    assert str(info.value).startswith(f"model_dir '{tmp_path}'")
    with pytest.raises(CheckpointError):  # the estimator's own accessor says the same
        model(tmp_path).latest_checkpoint()


def test_a_moved_model_dir_whose_index_has_absolute_paths_resumes(tmp_path, data):
    trained(tmp_path / "old", data)
    index = (tmp_path / "old" / "checkpoint").read_text()
    (tmp_path / "old" / "checkpoint").write_text(  # as TensorFlow writes absolute paths
        index.replace('"model.ckpt', f'"{tmp_path / "old"}/model.ckpt'))
    os.rename(tmp_path / "old", tmp_path / "new")
    history = model(tmp_path / "new").train(data, steps=1, hooks=[silent()])
    assert history.to_dict()["steps"] == [4]


def test_a_new_index_that_became_garbage_is_noticed_by_a_live_estimator(tmp_path, data):
    estimator = model(tmp_path)
    estimator.train(data, steps=2, hooks=[silent()])
    with open(tmp_path / "checkpoint", "w") as stream:
        stream.write("not a checkpoint index")
    with pytest.raises(CheckpointError):
        estimator.train(data, steps=1, hooks=[silent()])


# --------------------------------------------------------------------------- leftovers, lock
def test_partial_saves_are_removed_at_the_start_and_nothing_else(tmp_path, data):
    trained(tmp_path, data, steps=2)
    partial = ["model.ckpt-9.index.tempstate123", "model.ckpt-9.data-00000-of-00001.tempstate9",
               "graph.pbtxt.tmp" + "ab" * 16, ".checkpoint.x1y2.tmp"]
    kept = ["notes.txt", "graph.pbtxt.tmp", "my.tempstate"]
    for name in partial + kept:
        (tmp_path / name).write_text("x")
    (tmp_path / "model.ckpt-9_temp").mkdir()
    (tmp_path / "model.ckpt-9_temp" / "part-00000-of-00001.data-00000-of-00001").write_text("x")
    (tmp_path / "data_temp").mkdir()
    (tmp_path / "data_temp" / "mine.csv").write_text("x")  # not a save's: kept
    model(tmp_path).train(data, steps=1, hooks=[silent()])
    names = set(os.listdir(tmp_path))
    assert not names & {*partial, "model.ckpt-9_temp"}
    assert names >= {*kept, "data_temp", "model.ckpt-3.index"}


def test_a_held_lock_refuses_training_and_is_free_after_release(tmp_path, data):
    trained(tmp_path, data, steps=1)
    lock = _model_dir.TrainingLock(str(tmp_path)).acquire()  # as another trainer would
    try:
        with pytest.raises(_model_dir.ModelDirLockedError,
                           match=r"is being trained by another process or loop \(pid \d+ on "):
            model(tmp_path).train(data, steps=1, hooks=[silent()])
        assert model(tmp_path).evaluate(data, steps=1)["global_step"] == 1  # reading is fine
    finally:
        lock.release()
    assert model(tmp_path).train(data, steps=1, hooks=[silent()]).to_dict()["steps"] == [2]


def test_train_of_the_same_estimator_from_its_own_hook_is_refused(tmp_path, data):
    estimator = model(tmp_path)

    class Nested(pyhooks.SessionRunHook):
        def after_run(self, run_context, run_values):
            estimator.train(data, steps=1, hooks=[silent()])

    with pytest.raises(RuntimeError, match=r"called again from inside its own train\(\)"):
        estimator.train(data, steps=2, hooks=[Nested(), silent()])
    # the step that ran before the refusal is kept
    assert estimator.train(data, steps=1, hooks=[silent()]).to_dict()["steps"] == [2]


# --------------------------------------------------------------------------- hooks' meaning
def test_an_error_in_end_keeps_the_steps_done_and_saves_them(tmp_path, data):
    class FailsAtEnd(pyhooks.SessionRunHook):
        def end(self, session):
            raise OSError("end failed")

    estimator = model(tmp_path)
    estimator.train(data, steps=3, hooks=[silent()])
    with pytest.raises(OSError, match="end failed"):
        estimator.train(data, steps=5, hooks=[FailsAtEnd(), silent()])
    assert estimator.latest_checkpoint().endswith("model.ckpt-8")
    resumed = estimator.train(data, steps=1, hooks=[silent()])
    # the failed call's history resumes (its hooks' state was saved with step 8)
    assert (resumed.to_dict()["steps"], resumed.runs) == ([8, 9], [1, 2])


def test_the_callers_nan_tensor_hook_decides(tmp_path):
    big = input_fn({"x": np.full(8, 1e30), "y": np.full(8, 1e30)}, features="x", response="y",
                   batch_size=8, num_epochs=None)
    estimator = linear_regressor([column_numeric("x")], model_dir=str(tmp_path),
                                 optimizer=tf.compat.v1.train.GradientDescentOptimizer(1.0))
    loss = "training_loss:0"
    with pytest.warns(NanLossWarning, match="Model diverged"):
        history = estimator.train(big, steps=5, hooks=[
            pyhooks.NanTensorHook(loss, fail_on_nan_loss=False), silent()])
    assert history.to_dict()["steps"][-1] < 5  # stopped, not failed


# --------------------------------------------------------------------------- sizes
@pytest.mark.parametrize("kwargs", [{"queue_capacity": 1e10}, {"queue_capacity": 10**9},
                                    {"batch_size": 1e10}, {"batch_size": 1e10, "shuffle": True}])
def test_huge_buffers_and_batches_train_as_the_data_allows(tmp_path, kwargs):
    small = input_fn(load_mtcars(), features=["drat"], response="mpg", **kwargs)
    history = model(tmp_path).train(small, steps=3, hooks=[silent()])
    assert history.to_dict()["steps"] == [1]  # one batch of all 32 rows, one epoch


def test_a_batch_that_cannot_fit_in_memory_is_refused(tmp_path):
    forever = input_fn(load_mtcars(), features=["drat"], response="mpg", batch_size=1e12,
                       num_epochs=None)
    with pytest.raises(ValueError, match=r"^`batch_size` = 1000000000000: batches of "
                                         r"1000000000000 rows of this input need about "):
        model(tmp_path).train(forever, steps=1, hooks=[silent()])


# --------------------------------------------------------------------------- a loss that diverges
def diverging(tmp_path, **kwargs):
    """A linear regressor whose SGD steps are far too large: its loss overflows within steps."""
    return pyhooks.estimators.linear_regressor(
        pyhooks.estimators.feature_columns(pyhooks.estimators.column_numeric("drat")),
        model_dir=str(tmp_path), optimizer=lambda: tf.compat.v1.train.GradientDescentOptimizer(
            1e4), **kwargs)


def weights_of(model):
    return [np.asarray(model.get_variable_value(name)) for name in model.get_variable_names()
            if "linear_model" in name]


def test_a_diverging_canned_model_saves_its_last_good_step_and_resumes(tmp_path, data):
    model = diverging(tmp_path)
    with pytest.raises(pyhooks.NanLossDuringTrainingError) as raised:
        model.train(data, steps=100, hooks=[silent()])
    step = raised.value.step
    assert 1 <= step < 100
    assert model.latest_checkpoint().endswith(f"model.ckpt-{step}")  # the step before the NaN
    assert all(np.isfinite(w).all() for w in weights_of(model))
    assert model.evaluate(data, steps=1)["global_step"] == step


def test_a_stop_at_nan_keeps_finite_weights(tmp_path, data):
    model = diverging(tmp_path)
    with pytest.warns(pyhooks.NanLossWarning):
        model.train(data, steps=100, hooks=[
            silent(), pyhooks.NanTensorHook("training_loss:0", fail_on_nan_loss=False)])
    assert all(np.isfinite(w).all() for w in weights_of(model))
    step = int(model.latest_checkpoint().rsplit("-", 1)[1])
    assert model.evaluate(data, steps=1)["global_step"] == step < 100


def test_a_diverging_model_fn_keeps_the_last_checkpoint_before_the_nan(tmp_path, data):
    v1 = tf.compat.v1

    def model_fn(features, labels, mode):
        w = v1.get_variable("w", [], dtype=tf.float64, initializer=v1.zeros_initializer())
        loss = tf.reduce_mean(tf.square(features["drat"] * w - labels))
        op = v1.train.GradientDescentOptimizer(1e4).minimize(
            loss, global_step=v1.train.get_global_step())
        return pyhooks.estimators.estimator_spec(mode, loss=loss, train_op=op)

    config = pyhooks.estimators.run_config(save_checkpoints_steps=1)
    model = pyhooks.estimators.estimator(model_fn, model_dir=str(tmp_path), config=config)
    with pytest.raises(pyhooks.NanLossDuringTrainingError) as raised:
        model.train(data, steps=100, hooks=[silent()])
    saved = int(model.latest_checkpoint().rsplit("-", 1)[1])
    assert saved < raised.value.step  # the NaN step's update is not saved
    assert np.isfinite(model.get_variable_value("w"))
    assert model.evaluate(data, steps=1)["global_step"] == saved  # the session was forgotten
