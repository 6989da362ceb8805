"""export_savedmodel(), checkpoint_path and train_and_evaluate(), through real TensorFlow."""

import importlib.util
import re

import numpy as np
import pytest

from pyhooks.estimators import (
    column_categorical_with_vocabulary_list,
    column_indicator,
    column_numeric,
    dnn_classifier,
    estimator,
    estimator_spec,
    eval_spec,
    feature_columns,
    input_fn,
    layers,
    linear_regressor,
    load_mtcars,
    run_config,
    train_and_evaluate,
    train_spec,
)

tf = pytest.importorskip("tensorflow")
v1 = tf.compat.v1

from hooktest_util import scalars  # noqa: E402


@pytest.fixture(scope="module")
def data():
    mtcars = load_mtcars()
    return dict(mtcars, g=np.array(["abc"[int(x) % 3] for x in mtcars["gear"]]))


def test_export_savedmodel_serves_the_predictions(data, tmp_path):
    columns = feature_columns(column_numeric("drat"), column_indicator(
        column_categorical_with_vocabulary_list("cyl", [4, 6, 8])))
    model = dnn_classifier([3], columns, n_classes=3, label_vocabulary=["a", "b", "c"], seed=1)
    model.train(input_fn(data, ["drat", "cyl"], "g", batch_size=8), steps=3)
    path = model.export_savedmodel(str(tmp_path))
    serve = tf.saved_model.load(path).signatures["serving_default"]
    out = serve(drat=tf.constant(data["drat"], tf.float32),
                cyl=tf.constant(data["cyl"].astype(np.int64)))
    expected = model.predict(input_fn(data, ["drat", "cyl"]), as_dict=True)
    np.testing.assert_allclose(out["probabilities"].numpy(), expected["probabilities"], rtol=1e-6)
    assert [c.decode() for c in out["classes"].numpy().ravel()] == list(
        expected["classes"].ravel())


def test_export_savedmodel_of_a_custom_estimator(data, tmp_path):
    def model_fn(features, labels, mode):
        out = tf.reshape(layers.dense(features, 1), [-1])
        if labels is None:  # the SavedModel has no labels
            return estimator_spec(mode, predictions={"mpg": out})
        loss = v1.losses.mean_squared_error(labels, out)
        train_op = v1.train.GradientDescentOptimizer(0.001).minimize(
            loss, global_step=v1.train.get_global_step())
        return estimator_spec(mode, predictions={"mpg": out}, loss=loss, train_op=train_op)

    model = estimator(model_fn)
    with pytest.raises(ValueError, match="train the model"):
        model.export_savedmodel(str(tmp_path))
    model.train(input_fn(data, ["drat", "wt"], "mpg"), steps=2)
    serve = tf.saved_model.load(model.export_savedmodel(str(tmp_path))).signatures[
        "serving_default"]
    got = serve(drat=tf.constant(data["drat"]), wt=tf.constant(data["wt"]))["mpg"].numpy()
    expected = model.predict(input_fn(data, ["drat", "wt"]), as_dict=True)["mpg"]
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_checkpoint_path_and_train_and_evaluate(data, tmp_path):
    model = linear_regressor(feature_columns(column_numeric("drat")), model_dir=str(tmp_path))
    metrics, history = train_and_evaluate(
        model, train_spec(input_fn(data, ["drat"], "mpg", batch_size=8, num_epochs=None),
                          max_steps=2),
        eval_spec(input_fn(data, ["drat"], "mpg"), steps=None, name="first"))
    assert metrics["global_step"] == 2
    assert history.to_dict()["eval_average_loss"] == [metrics["average_loss"]]
    first = model.latest_checkpoint()
    model.train(input_fn(data, ["drat"], "mpg", batch_size=8), steps=3)
    inp = input_fn(data, ["drat"], "mpg")
    assert model.evaluate(inp, checkpoint_path=first)["global_step"] == 2
    assert model.evaluate(inp)["global_step"] == 5
    old = model.predict(inp, as_dict=True, checkpoint_path=first)["predictions"]
    assert not np.allclose(old, model.predict(inp, as_dict=True)["predictions"])
    with pytest.raises(ValueError, match="not a checkpoint"):
        model.predict(inp, checkpoint_path=str(tmp_path / "nothing"))
    with pytest.raises(TypeError, match="train_spec"):
        train_and_evaluate(model, {}, eval_spec(inp))


@pytest.mark.parametrize("make, message", [
    (lambda inp: train_spec(data_frame_like()), "`input_fn` must be made by input_fn()"),
    (lambda inp: eval_spec(None), "`input_fn` must be made by input_fn(), got None"),
    (lambda inp: eval_spec(inp, name=""), "`name` must be a non-empty string or None, got ''"),
    (lambda inp: train_spec(inp, max_steps=0), "`max_steps` must be positive, got 0"),
])
def test_the_specs_refuse_bad_arguments_when_made(data, make, message):
    """Before train_and_evaluate() has trained anything."""
    with pytest.raises((TypeError, ValueError), match=re.escape(message)):
        make(input_fn(data, ["drat"], "mpg"))


def data_frame_like():
    return {"drat": [3.9], "mpg": [21.0]}  # the data itself, not an input_fn() of it


def evaluated_steps(data, tmp_path, **delays):
    """The steps train_and_evaluate() evaluated (returned, and in eval/'s event files)."""
    model = linear_regressor(feature_columns(column_numeric("drat")), model_dir=str(tmp_path),
                             config=run_config(save_checkpoints_steps=3))
    metrics, history = train_and_evaluate(
        model, train_spec(input_fn(data, ["drat"], "mpg", batch_size=8, num_epochs=None),
                          max_steps=10),
        eval_spec(input_fn(data, ["drat"], "mpg"), steps=None, **delays))
    rows = history.to_dict()
    returned = [s for s, v in zip(rows["steps"], rows["eval_average_loss"]) if v == v]
    written = [step for step, _ in scalars(tmp_path / "eval", "average_loss")]
    assert metrics["global_step"] == 10
    assert rows["eval_average_loss"][-1] == metrics["average_loss"]
    assert sorted(int(p.name.split("-")[1].split(".")[0]) for p in tmp_path.glob("*.index")) \
        == [0, 3, 6, 9, 10]
    assert returned == written
    return returned


def test_train_and_evaluate_evaluates_after_saves_as_throttled(data, tmp_path):
    # no throttle: every save after the first; a long throttle: the first save and the end;
    # a long start delay: the end only (the real clock cannot reach 10**6 s in this test)
    assert evaluated_steps(data, tmp_path / "a", throttle_secs=0, start_delay_secs=0) == \
        [3, 6, 9, 10]
    assert evaluated_steps(data, tmp_path / "b", throttle_secs=10**6, start_delay_secs=0) == \
        [3, 10]
    assert evaluated_steps(data, tmp_path / "c", throttle_secs=0, start_delay_secs=10**6) == [10]


def test_train_and_evaluate_history_keeps_training_rows(data, tmp_path):
    """Training rows kept, evaluations beside them; None, not NaN, where none ran (NaN is a
    value an evaluation can give)."""
    from pyhooks import HistorySaverHook

    model = linear_regressor(feature_columns(column_numeric("drat")), model_dir=str(tmp_path),
                             config=run_config(save_checkpoints_steps=3))
    _, history = train_and_evaluate(
        model, train_spec(input_fn(data, ["drat"], "mpg", batch_size=8, num_epochs=None),
                          max_steps=6, hooks=[HistorySaverHook(every_n_step=2)]),
        eval_spec(input_fn(data, ["drat"], "mpg"), steps=2, throttle_secs=0,
                  start_delay_secs=0))
    rows = history.to_dict()
    # the training history's rows (2, 4, 6) and one for the evaluation at step 3
    assert rows["steps"] == [2, 3, 4, 6]
    assert [v is None for v in rows["mean_losses"]] == [False, True, False, False]
    assert [v is None for v in rows["eval_loss"]] == [True, False, True, False]
    lines = repr(history).splitlines()  # printed as R prints it: NA
    assert "NaN" not in repr(history)
    assert lines[2].split()[1:4] == ["NA", "NA", "3"] and lines[1].split()[-1] == "NA"
    if importlib.util.find_spec("pandas"):
        assert history.to_pandas()["eval_loss"].isna().tolist() == [True, False, True, False]
    # max_steps reached already: no training, one evaluation
    metrics, history = train_and_evaluate(
        model, train_spec(input_fn(data, ["drat"], "mpg", num_epochs=None), max_steps=6),
        eval_spec(input_fn(data, ["drat"], "mpg")))
    assert metrics["global_step"] == 6
    assert history.to_dict()["steps"] == [6]


def test_eval_spec_and_run_config_check_their_arguments(data):
    inp = input_fn(data, ["drat"], "mpg")
    with pytest.raises(ValueError, match="throttle_secs"):
        eval_spec(inp, throttle_secs=-1)
    with pytest.raises(TypeError, match="start_delay_secs"):
        eval_spec(inp, start_delay_secs="soon")
    with pytest.raises(ValueError, match="at most one of `save_checkpoints_steps`"):
        run_config(save_checkpoints_steps=10, save_checkpoints_secs=60)
    with pytest.raises(ValueError, match="save_checkpoints_steps"):
        run_config(save_checkpoints_steps=0)


def test_run_config_checkpoints_while_training(data, tmp_path):
    model = linear_regressor(feature_columns(column_numeric("drat")), model_dir=str(tmp_path),
                             config=run_config(save_checkpoints_steps=2, keep_checkpoint_max=2))
    model.train(input_fn(data, ["drat"], "mpg", batch_size=8, num_epochs=None), steps=7)
    kept = sorted(int(p.name.split("-")[1].split(".")[0]) for p in tmp_path.glob("*.index"))
    assert kept == [6, 7]
    assert tf.train.get_checkpoint_state(str(tmp_path)).all_model_checkpoint_paths[0].endswith(
        "model.ckpt-6")


def test_keep_checkpoint_every_n_hours_keeps_more_than_keep_checkpoint_max(data, tmp_path):
    """TensorFlow's Saver keeps a checkpoint per period beyond max_to_keep: with a period of
    ~4 µs every checkpoint is kept; with the default (10000 hours), the last one."""
    kept = {}
    for hours in (10000, 1e-9):
        model = linear_regressor(feature_columns(column_numeric("drat")),
                                 model_dir=str(tmp_path / str(hours)),
                                 config=run_config(save_checkpoints_steps=1, keep_checkpoint_max=1,
                                                   keep_checkpoint_every_n_hours=hours))
        model.train(input_fn(data, ["drat"], "mpg", batch_size=8, num_epochs=None), steps=3)
        kept[hours] = sorted(p.name for p in (tmp_path / str(hours)).glob("*.index"))
    assert kept[10000] == ["model.ckpt-3.index"]
    assert kept[1e-9] == [f"model.ckpt-{step}.index" for step in range(4)]
    with pytest.raises(ValueError, match="`keep_checkpoint_every_n_hours` must be positive"):
        run_config(keep_checkpoint_every_n_hours=0)


def test_train_and_evaluate_evaluates_after_the_callers_saver_hook(data, tmp_path):
    from pyhooks import CheckpointSaverHook

    saver = CheckpointSaverHook(str(tmp_path), save_steps=4)
    model = linear_regressor(feature_columns(column_numeric("drat")), model_dir=str(tmp_path))
    _, history = train_and_evaluate(
        model, train_spec(input_fn(data, ["drat"], "mpg", batch_size=8, num_epochs=None),
                          max_steps=9, hooks=[saver]),
        eval_spec(input_fn(data, ["drat"], "mpg"), steps=1, throttle_secs=0,
                  start_delay_secs=0))
    rows = history.to_dict()
    assert [s for s, v in zip(rows["steps"], rows["eval_loss"]) if v == v] == [4, 8, 9]
    assert saver._listeners == []  # noqa: SLF001 - lent for the call only
