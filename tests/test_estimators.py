"""Canned estimators end to end through real TensorFlow: train / evaluate / predict with hooks."""

import io
import os
import re
import subprocess
import sys

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

import pyhooks  # noqa: E402
from pyhooks.estimators import (  # noqa: E402
    column_numeric,
    dnn_classifier,
    dnn_regressor,
    evaluate,
    feature_columns,
    input_fn,
    linear_classifier,
    linear_regressor,
    load_mtcars,
    predict,
    train,
)
from pyhooks.hooks import History  # noqa: E402


def quiet_bar(**kwargs):
    """A ProgressBarHook writing into a buffer (its text is in ``.out``)."""
    out = io.StringIO()
    hook = pyhooks.ProgressBarHook(writer=out, mode="plain", **kwargs)
    hook.out = out
    return hook


@pytest.fixture(scope="module")
def mtcars():
    return load_mtcars()


@pytest.fixture(scope="module")
def spec_input(mtcars):
    """SPEC §3: input_fn(mtcars, response = "mpg", features = c("drat", "cyl"), batch_size = 8L)."""
    return input_fn(mtcars, response="mpg", features=["drat", "cyl"], batch_size=8)


@pytest.fixture(scope="module")
def fcs():
    return feature_columns(column_numeric("drat"))


@pytest.fixture(scope="module")
def shared_lr(fcs):
    """One regressor shared by the tests that only need *a* trained model."""
    return linear_regressor(fcs)


class Recorder(pyhooks.SessionRunHook):
    """Fetches the global step (the variable, as session.run(global_step) does) each step."""

    def __init__(self):
        self.fetched, self.after, self.calls = [], [], []

    def begin(self):
        self.calls.append("begin")
        self.step = tf.compat.v1.train.get_global_step()
        from tensorflow.python.training import training_util

        self.step_read = training_util._get_or_create_global_step_read()  # noqa: SLF001

    def after_create_session(self, session, coord):
        self.calls.append("after_create_session")

    def before_run(self, run_context):
        return pyhooks.SessionRunArgs([self.step, self.step_read])

    def after_run(self, run_context, run_values):
        self.fetched.append(tuple(int(v) for v in run_values.results))
        self.after.append(int(run_context.session.run(self.step)))

    def end(self, session):
        self.calls.append("end")


# --------------------------------------------------------------------------- SPEC §3
def test_spec_history_every_2_steps_over_4(fcs, spec_input):
    lr = linear_regressor(feature_columns=fcs)
    history = train(lr, input_fn=spec_input, steps=4,
                    hooks=[pyhooks.HistorySaverHook(every_n_step=2), quiet_bar()])
    assert isinstance(history, History)
    table = history.to_dict()
    assert table["steps"] == [2, 4]
    for mean, total in zip(table["mean_losses"], table["total_losses"]):
        assert total == pytest.approx(8 * mean, rel=1e-5)
        assert 50 < mean < 2000  # untrained squared error on mpg ~ 400
    assert "mean_losses total_losses steps" in repr(history)


def test_spec_progress_bar_example(fcs, spec_input):
    bar = quiet_bar()
    lr = linear_regressor(feature_columns=fcs)
    returned = train(lr, input_fn=spec_input, steps=2, hooks=[bar])
    assert isinstance(returned, History)
    text = bar.out.getvalue()
    # the caller's bar had no total: train() gave it `steps`, for this call only
    assert "Training 2/2 [======================================]" in text and "loss: " in text
    assert bar.total is None


def test_a_bar_reused_across_calls_gets_each_calls_total(fcs, spec_input):
    bar = quiet_bar()
    lr = linear_regressor(feature_columns=fcs)
    train(lr, input_fn=spec_input, steps=2, hooks=[bar])
    train(lr, input_fn=spec_input, steps=3, hooks=[bar])
    text = bar.out.getvalue()
    assert "Training 3/3 [=" in text
    assert "3/2" not in text and "stopped" not in text


def test_spec_custom_hook_gets_per_example_losses(fcs, spec_input):
    """The custom hook of SPEC §3 in Python: fetch graph.get_collection('losses')."""
    seen = []

    class HistorySaverCustom(pyhooks.SessionRunHook):
        def before_run(self, context):
            return pyhooks.SessionRunArgs(
                {"losses": context.session.graph.get_collection("losses")})

        def after_run(self, context, values):
            seen.append(values.results["losses"][0])

    history_hook = pyhooks.HistorySaverHook(every_n_step=1)
    lr = linear_regressor(feature_columns=fcs)
    train(lr, input_fn=spec_input, steps=4, hooks=[HistorySaverCustom(), history_hook,
                                                   quiet_bar()])
    assert len(seen) == 4
    assert all(np.shape(raw) == (8,) for raw in seen)  # per example, not reduced
    means = [float(np.mean(raw)) for raw in seen]
    assert means == pytest.approx(history_hook.history.to_dict()["mean_losses"], rel=1e-6)
    assert all(50 < m < 2000 for m in means)


def test_training_loss_collection_is_the_batch_sum(shared_lr, spec_input):
    class Both(pyhooks.SessionRunHook):
        def begin(self):
            graph = tf.compat.v1.get_default_graph()
            self.fetch = [graph.get_collection("losses")[0],
                          graph.get_collection("pyhooks_training_loss")[0]]
            self.pairs = []

        def before_run(self, context):
            return pyhooks.SessionRunArgs(self.fetch)

        def after_run(self, context, values):
            self.pairs.append(values.results)

    hook = Both()
    shared_lr.train(spec_input, steps=3, hooks=[hook, quiet_bar()])
    for per_example, total in hook.pairs:
        assert np.shape(total) == ()
        assert float(total) == pytest.approx(float(np.sum(per_example)), rel=1e-5)


# --------------------------------------------------------------------------- global step
def test_global_step_fetched_is_the_value_before_the_increment(shared_lr, mtcars):
    inp = input_fn(mtcars, features=["drat"], response="mpg", batch_size=4, num_epochs=None)
    start = shared_lr.train(inp, steps=1, hooks=[quiet_bar()]).to_dict()["steps"][-1]
    recorder = Recorder()
    shared_lr.train(inp, steps=300, hooks=[recorder, quiet_bar()])
    expected = list(range(start, start + 300))
    assert [variable for variable, _ in recorder.fetched] == expected
    assert [read for _, read in recorder.fetched] == expected
    assert recorder.after == [s + 1 for s in expected]  # the step reached by each run


def test_train_twice_continues_and_a_new_estimator_resumes(fcs, spec_input, tmp_path):
    model_dir = str(tmp_path / "model")
    lr = linear_regressor(fcs, model_dir=model_dir)
    first = lr.train(spec_input, steps=2, hooks=[pyhooks.HistorySaverHook(every_n_step=1),
                                                 quiet_bar()])
    second = lr.train(spec_input, steps=2, hooks=[pyhooks.HistorySaverHook(every_n_step=1),
                                                  quiet_bar()])
    assert first.to_dict()["steps"] == [1, 2]
    assert second.to_dict()["steps"] == [3, 4]
    assert os.path.basename(lr.latest_checkpoint()) == "model.ckpt-4"
    weights = lr.get_variable_value("linear/linear_model/drat/weights")

    again = linear_regressor(fcs, model_dir=model_dir)
    recorder = Recorder()
    third = again.train(spec_input, steps=2, hooks=[recorder, quiet_bar()])
    assert third.to_dict()["steps"] == [6]
    assert recorder.fetched[0][0] == 4
    assert again.evaluate(spec_input)["global_step"] == 6
    assert lr.evaluate(spec_input)["global_step"] == 6  # the first object sees it too
    assert np.all(np.isfinite(weights)) and weights.shape == (1, 1)
    # the first estimator picks up the newer checkpoint before training again
    assert lr.train(spec_input, steps=1, hooks=[quiet_bar()]).to_dict()["steps"] == [7]


def test_temporary_model_dir_and_checkpoint_files(shared_lr):
    assert os.path.isdir(shared_lr.model_dir)
    assert "pyhooks_model_" in os.path.basename(shared_lr.model_dir)


def test_max_steps(fcs, spec_input):
    lr = linear_regressor(fcs)
    assert lr.train(spec_input, max_steps=3, hooks=[quiet_bar()]).to_dict()["steps"] == [3]
    bar = quiet_bar()
    assert lr.train(spec_input, max_steps=3, hooks=[bar]).to_dict()["steps"] == []
    assert bar.out.getvalue() == ""  # nothing ran
    assert lr.train(spec_input, max_steps=4, hooks=[quiet_bar()]).to_dict()["steps"] == [4]


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(steps=2, max_steps=4), ValueError, "Can not provide both steps and max_steps."),
    (dict(steps=0), ValueError, "`steps` must be positive, got 0"),
    (dict(max_steps=-1), ValueError, "`max_steps` must be positive, got -1"),
    (dict(steps=1.5), ValueError, "`steps` must be a whole number"),
    (dict(steps="2"), TypeError, "`steps`"),
    (dict(steps=2, hooks=[1]), TypeError, "`hooks[0]` must be a SessionRunHook, got 1 (int)"),
    (dict(steps=2, hooks=["hook"]), TypeError, "got 'hook' (str)"),
    (dict(steps=2, hooks="hook"), TypeError, "`hooks`"),
    (dict(steps=2, saving_listeners=[object()]), TypeError, "saving_listeners[0]"),
])
def test_bad_train_arguments(shared_lr, spec_input, kwargs, error, message):
    with pytest.raises(error) as raised:
        shared_lr.train(spec_input, **kwargs)
    assert message in str(raised.value)


def test_r_double_steps_are_whole_numbers(shared_lr, spec_input):
    bar = quiet_bar()
    history = shared_lr.train(spec_input, steps=2.0, hooks=[bar])
    assert "Training 2/2 [=" in bar.out.getvalue() and len(history.to_dict()["steps"]) == 1


def test_infinite_input_needs_steps(shared_lr, mtcars):
    forever = input_fn(mtcars, features=["drat"], response="mpg", num_epochs=None)
    with pytest.raises(ValueError, match="never end"):
        shared_lr.train(forever)
    with pytest.raises(ValueError, match="never end"):
        shared_lr.evaluate(forever)


def test_input_running_out_ends_training_cleanly(shared_lr, mtcars):
    one_pass = input_fn(mtcars, features=["drat"], response="mpg", batch_size=8, num_epochs=1)
    recorder = Recorder()
    bar = quiet_bar()
    history = shared_lr.train(one_pass, steps=100, hooks=[recorder, bar])
    assert len(recorder.fetched) == 4  # 32 rows / 8
    assert recorder.calls == ["begin", "after_create_session", "end"]
    assert "Training 4/4 [=" in bar.out.getvalue()  # steps capped by what one pass gives
    assert history.to_dict()["steps"][-1] == recorder.after[-1]
    # without steps: one pass of two epochs
    two = input_fn(mtcars, features=["drat"], response="mpg", batch_size=10, num_epochs=2)
    recorder = Recorder()
    shared_lr.train(two, hooks=[recorder, quiet_bar()])
    assert len(recorder.fetched) == 7  # ceil(64 / 10)


def test_default_hooks_are_added_unless_given(shared_lr, spec_input, capsys):
    history = shared_lr.train(spec_input, steps=3)  # default HistorySaverHook and ProgressBarHook
    assert isinstance(history, History) and len(history) == 1  # the last step is always recorded
    assert "Training 3/3" in capsys.readouterr().out
    own = pyhooks.HistorySaverHook(every_n_step=1)
    bar = quiet_bar(total=2)
    assert shared_lr.train(spec_input, steps=3, hooks=[own, bar]) is own.history
    assert bar.total == 2  # a total given by the caller is kept
    assert capsys.readouterr().out == ""  # no default bar next to the caller's


def test_nan_loss_fails_by_default(mtcars):
    big = input_fn({"x": np.full(8, 1e30), "y": np.full(8, 1e30)}, features="x", response="y",
                   batch_size=8, num_epochs=None)
    model = linear_regressor([column_numeric("x")],
                             optimizer=tf.compat.v1.train.GradientDescentOptimizer(1.0))
    with pytest.raises(pyhooks.NanLossDuringTrainingError):
        model.train(big, steps=5, hooks=[quiet_bar()])
    # a failed train() leaves the model as its last checkpoint (here: none, so the start)
    small = input_fn({"x": np.ones(8), "y": np.ones(8)}, features="x", response="y",
                     batch_size=8, num_epochs=None)
    assert model.evaluate(small, steps=1)["global_step"] == 0
    assert model.train(small, steps=2, hooks=[quiet_bar()]).to_dict()["steps"] == [2]
    with pytest.raises(pyhooks.NanLossDuringTrainingError):
        model.train(big, steps=5, hooks=[quiet_bar()])
    recorder = Recorder()
    model.train(small, steps=1, hooks=[recorder, quiet_bar()])
    assert recorder.fetched[0][0] == 2  # back to the checkpoint of step 2
    assert np.isfinite(model.get_variable_value("linear/linear_model/x/weights")).all()


def test_model_dir_of_another_model(tmp_path, spec_input):
    linear_regressor([column_numeric("drat")], model_dir=str(tmp_path)).train(
        spec_input, steps=1, hooks=[quiet_bar()])
    other = dnn_regressor([3], [column_numeric("drat")], model_dir=str(tmp_path))
    with pytest.raises(ValueError, match="different model"):
        other.train(spec_input, steps=1, hooks=[quiet_bar()])


def test_saving_listeners_are_called(shared_lr, spec_input):
    saved = []

    class Listener(pyhooks.CheckpointSaverListener):
        def after_save(self, session, global_step_value):
            saved.append(global_step_value)

    start = shared_lr.evaluate(spec_input, steps=1)["global_step"]
    shared_lr.train(spec_input, steps=2, hooks=[quiet_bar()], saving_listeners=[Listener()])
    assert saved and saved[-1] == start + 2
    assert shared_lr.latest_checkpoint().endswith(f"-{start + 2}")


# --------------------------------------------------------------------------- evaluate / predict
def test_training_reduces_the_loss_on_mtcars(mtcars):
    features = ["drat", "wt"]
    train_input = input_fn(mtcars, features=features, response="mpg", batch_size=8,
                           num_epochs=None)
    eval_input = input_fn(mtcars, features=features, response="mpg", batch_size=32)
    model = linear_regressor(feature_columns([column_numeric(f) for f in features]))
    before = model.evaluate(eval_input)
    model.train(train_input, steps=200, hooks=[quiet_bar()])
    after = model.evaluate(eval_input)
    assert before["global_step"] == 0 and after["global_step"] == 200
    assert after["average_loss"] < 0.25 * before["average_loss"]
    assert after["prediction/mean"] == pytest.approx(20.09, abs=3)


def test_evaluate_regressor_metrics(shared_lr, spec_input):
    metrics = evaluate(shared_lr, spec_input)
    assert set(metrics) == {"loss", "average_loss", "label/mean", "prediction/mean",
                            "global_step"}
    assert metrics["label/mean"] == pytest.approx(20.090625, rel=1e-6)
    assert metrics["loss"] == pytest.approx(8 * metrics["average_loss"], rel=1e-4)
    assert isinstance(metrics["global_step"], int)
    assert evaluate(shared_lr, spec_input) == metrics  # metrics restart at every call
    two_batches = shared_lr.evaluate(spec_input, steps=2)
    assert two_batches["global_step"] == metrics["global_step"]
    first_two = input_fn({k: v[:16] for k, v in load_mtcars().items()}, ["drat"], "mpg",
                         batch_size=8)
    assert two_batches["average_loss"] == pytest.approx(
        shared_lr.evaluate(first_two)["average_loss"], rel=1e-5)


def test_predict_regressor(shared_lr, mtcars):
    # trained here too: run alone (or on another worker), shared_lr is new
    shared_lr.train(input_fn(mtcars, ["drat"], "mpg", num_epochs=None), steps=5,
                    hooks=[quiet_bar()])
    inp = input_fn(mtcars, features=["drat"], batch_size=5)  # no response: prediction only
    rows = predict(shared_lr, inp)
    assert len(rows) == 32
    assert set(rows[0]) == {"predictions"} and rows[0]["predictions"].shape == (1,)
    columns = shared_lr.predict(inp, as_dict=True)
    assert columns["predictions"].shape == (32, 1)
    assert [r["predictions"][0] for r in rows] == pytest.approx(columns["predictions"][:, 0])
    # same drat, same prediction; input order kept
    drat = mtcars["drat"]
    assert rows[0]["predictions"] == pytest.approx(rows[1]["predictions"])  # both 3.90
    assert (np.argsort(columns["predictions"][:, 0], kind="stable").tolist()
            == np.argsort(drat, kind="stable").tolist()) or (
        np.argsort(-columns["predictions"][:, 0], kind="stable").tolist()
        == np.argsort(-drat, kind="stable").tolist())
    with pytest.raises(ValueError, match="unknown key"):
        shared_lr.predict(inp, predict_keys="probabilities")


def test_predict_refuses_an_input_that_shuffles(shared_lr, mtcars, tmp_path):
    from pyhooks.estimators import numpy_input_fn, tf_estimator

    shared_lr.train(input_fn(mtcars, ["drat"], "mpg"), steps=1, hooks=[quiet_bar()])
    said = r"predict\(\): `input_fn` shuffles its rows \(shuffle=True\), so the predictions"
    drat = {"drat": np.asarray(mtcars["drat"])}
    for shuffled in (input_fn(mtcars, ["drat"], shuffle=True),
                     numpy_input_fn(drat, shuffle=True)):
        with pytest.raises(ValueError, match=said):
            shared_lr.predict(shuffled)
    # tf.estimator's spelling too: TensorFlow returned the predictions shuffled
    def model_fn(features, labels, mode):
        return tf_estimator.EstimatorSpec(mode, predictions=features["drat"] * 2.0)

    model = tf_estimator.Estimator(model_fn, model_dir=str(tmp_path))
    with pytest.raises(ValueError, match=said):
        model.predict(numpy_input_fn(drat, shuffle=True))
    # 'auto' and False keep the input order; evaluate() may shuffle (its metrics do not care)
    in_order = shared_lr.predict(numpy_input_fn(drat, shuffle=False), as_dict=True)
    np.testing.assert_array_equal(
        in_order["predictions"],
        shared_lr.predict(input_fn(mtcars, ["drat"]), as_dict=True)["predictions"])
    shared_lr.evaluate(input_fn(mtcars, ["drat"], "mpg", shuffle=True))


@pytest.fixture(scope="module")
def separable():
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.normal(-2, 0.5, 100), rng.normal(2, 0.5, 100)])
    data = {"x": x, "noise": rng.normal(size=200), "y": np.repeat([0, 1], 100),
            "label": np.repeat(["no", "yes"], 100)}
    return data


def test_linear_classifier_separates(separable):
    fcs = feature_columns(column_numeric("x"), column_numeric("noise"))
    model = linear_classifier(fcs)
    model.train(input_fn(separable, ["x", "noise"], "y", batch_size=16, num_epochs=None),
                steps=40, hooks=[quiet_bar()])
    everything = input_fn(separable, ["x", "noise"], "y", batch_size=64)
    metrics = model.evaluate(everything)
    assert metrics["accuracy"] > 0.95
    assert set(metrics) == {"loss", "average_loss", "accuracy", "accuracy_baseline", "auc",
                            "auc_precision_recall", "precision", "recall", "label/mean",
                            "prediction/mean", "global_step"}
    assert metrics["auc"] > 0.95 and metrics["precision"] > 0.9 and metrics["recall"] > 0.9
    assert metrics["accuracy_baseline"] == pytest.approx(0.5)
    rows = model.predict(everything)
    assert len(rows) == 200
    assert set(rows[0]) == {"logits", "logistic", "probabilities", "class_ids", "classes"}
    assert rows[0]["probabilities"].shape == (2,) and rows[0]["class_ids"].shape == (1,)
    assert rows[0]["probabilities"].sum() == pytest.approx(1.0)
    ids = np.array([r["class_ids"][0] for r in rows])
    assert np.mean(ids == separable["y"]) > 0.95
    assert rows[-1]["classes"][0] == str(rows[-1]["class_ids"][0])
    only = model.predict(everything, predict_keys=["classes"])
    assert set(only[0]) == {"classes"}


def test_dnn_classifier_with_label_vocabulary(separable):
    fcs = feature_columns(column_numeric("x"))
    model = dnn_classifier([8], fcs, label_vocabulary=["no", "yes"])
    model.train(input_fn(separable, "x", "label", batch_size=16, num_epochs=None), steps=60,
                hooks=[quiet_bar()])
    everything = input_fn(separable, "x", "label", batch_size=200)
    assert model.evaluate(everything)["accuracy"] > 0.95
    classes = [r["classes"][0] for r in model.predict(everything, predict_keys="classes")]
    assert classes[0] == "no" and classes[-1] == "yes"
    with pytest.raises(ValueError, match="not in label_vocabulary"):
        model.evaluate(input_fn({"x": [1.0], "label": ["maybe"]}, "x", "label"))


def test_multiclass_and_dnn_regressor(mtcars):
    cyl_class = {"drat": mtcars["drat"], "wt": mtcars["wt"],
                 "cyl": (mtcars["cyl"] / 2 - 2).astype(int)}  # 4, 6, 8 -> 0, 1, 2
    fcs = feature_columns(column_numeric("drat"), column_numeric("wt"))
    model = linear_classifier(fcs, n_classes=3)
    inp = input_fn(cyl_class, ["drat", "wt"], "cyl", batch_size=8)
    model.train(inp, steps=5, hooks=[quiet_bar()])
    assert set(model.evaluate(inp)) == {"loss", "average_loss", "accuracy", "global_step"}
    rows = model.predict(inp)
    assert set(rows[0]) == {"logits", "probabilities", "class_ids", "classes"}
    assert rows[0]["probabilities"].shape == (3,)

    regressor = dnn_regressor([4, 4], fcs, dropout=0.1, activation_fn="tanh")
    mpg = input_fn(mtcars, ["drat", "wt"], "mpg", batch_size=8, num_epochs=None)
    history = regressor.train(mpg, steps=3, hooks=[quiet_bar()])
    assert history.to_dict()["steps"] == [3]
    assert "dnn/hiddenlayer_1/kernel" in regressor.get_variable_names()
    assert len(regressor.predict(input_fn(mtcars, ["drat", "wt"]))) == 32


def test_weight_column(mtcars):
    data = dict(mtcars, w=np.where(mtcars["am"] == 1, 2.0, 0.0))
    model = linear_regressor([column_numeric("drat")], weight_column="w")
    inp = input_fn(data, ["drat", "w"], "mpg", batch_size=32, shuffle=False)
    losses = []

    class Grab(pyhooks.SessionRunHook):
        def before_run(self, context):
            return pyhooks.SessionRunArgs(context.session.graph.get_collection("losses"))

        def after_run(self, context, values):
            losses.append(values.results[0])

    model.train(inp, steps=1, hooks=[Grab(), quiet_bar()])
    assert np.all(losses[0][mtcars["am"] == 0] == 0)
    assert np.all(losses[0][mtcars["am"] == 1] > 0)
    with pytest.raises(ValueError, match="weight_column 'w'"):
        model.train(input_fn(data, ["drat"], "mpg"), steps=1)


# --------------------------------------------------------------------------- bad inputs
def test_missing_feature_lists_the_inputs_features(shared_lr, mtcars):
    inp = input_fn(mtcars, features=["cyl", "hp"], response="mpg")
    with pytest.raises(ValueError) as raised:
        shared_lr.train(inp, steps=1)
    message = str(raised.value)
    assert "'drat'" in message and "cyl, hp" in message


def test_feature_that_is_the_response(shared_lr, mtcars):
    inp = input_fn(mtcars, features=["cyl"], response="drat")
    with pytest.raises(ValueError, match="response"):
        shared_lr.train(inp, steps=1)


def test_wrong_feature_type(mtcars):
    inp = input_fn({"drat": ["a", "b"], "mpg": [1.0, 2.0]}, features="drat", response="mpg")
    model = linear_regressor([column_numeric("drat")])
    with pytest.raises(TypeError, match="Column 'drat' must be numeric .* strings such as 'a'"):
        model.train(inp, steps=1)  # the feature column's check
    model.train(input_fn(mtcars, features="drat", response="mpg"), steps=1)
    with pytest.raises(TypeError) as raised:
        model.train(inp, steps=1)  # once trained, the recorded schema's
    assert "'drat'" in str(raised.value) and "float values" in str(raised.value)


def test_training_needs_a_response(shared_lr, mtcars):
    with pytest.raises(ValueError, match="needs labels"):
        shared_lr.train(input_fn(mtcars, features="drat"), steps=1)
    with pytest.raises(TypeError, match="input_fn"):
        shared_lr.train(lambda: None, steps=1)


def test_bad_labels_for_classifiers(separable):
    model = linear_classifier([column_numeric("x")])
    with pytest.raises(ValueError, match=r"class ids in \[0, 2\)"):
        model.train(input_fn({"x": [1.0, 2.0], "y": [0, 2]}, "x", "y"), steps=1)
    with pytest.raises(TypeError, match="label_vocabulary"):
        model.train(input_fn({"x": [1.0], "y": ["a"]}, "x", "y"), steps=1)
    with pytest.raises(ValueError, match="whole numbers"):
        model.train(input_fn({"x": [1.0], "y": [0.5]}, "x", "y"), steps=1)
    with pytest.raises(TypeError, match="must be numeric for a regressor"):
        linear_regressor([column_numeric("x")]).train(
            input_fn({"x": [1.0], "y": ["a"]}, "x", "y"), steps=1)


@pytest.mark.parametrize("make, error, words", [
    (lambda: linear_regressor([]), ValueError, ["feature_columns"]),
    (lambda: linear_regressor(["drat"]), TypeError, ["feature columns", "'drat'"]),
    (lambda: linear_regressor([column_numeric("x")], optimizer="Fancy"), ValueError,
     ["optimizer", "'Fancy'"]),
    (lambda: linear_regressor([column_numeric("x")], optimizer=3), TypeError, ["optimizer"]),
    (lambda: linear_regressor([column_numeric("x")], label_dimension=0), ValueError,
     ["label_dimension"]),
    (lambda: linear_classifier([column_numeric("x")], n_classes=1), ValueError, ["n_classes"]),
    (lambda: dnn_regressor([], [column_numeric("x")]), ValueError, ["hidden_units"]),
    (lambda: dnn_regressor([4], [column_numeric("x")], dropout=1.5), ValueError, ["dropout"]),
    (lambda: dnn_regressor([4], [column_numeric("x")], activation_fn="nope"), ValueError,
     ["activation_fn"]),
    (lambda: linear_regressor([column_numeric("x")], model_dir=3), TypeError, ["model_dir"]),
    (lambda: train("model", None), TypeError, ["train()", "estimator"]),
])
def test_bad_estimator_arguments(make, error, words):
    with pytest.raises(error) as raised:
        make()
    for word in words:
        assert word in str(raised.value)


def test_tensorflows_feature_columns_are_refused_naming_pyhooks_function():
    """tf.estimator users bring tf.feature_column's columns (named tuples, so they are
    never read as lists of columns): each is refused naming pyhooks' function for it."""
    fc = tf.feature_column
    ids = fc.categorical_column_with_identity("b", 3)
    cases = [(fc.numeric_column("x"), "column_numeric"),
             (fc.bucketized_column(fc.numeric_column("x"), [0.0]), "column_bucketized"),
             (fc.categorical_column_with_vocabulary_list("a", ["u"]),
              "column_categorical_with_vocabulary_list"),
             (ids, "column_categorical_with_identity"),
             (fc.categorical_column_with_hash_bucket("c", 5),
              "column_categorical_with_hash_bucket"),
             (fc.weighted_categorical_column(ids, "w"), "column_categorical_weighted"),
             (fc.indicator_column(ids), "column_indicator"),
             (fc.embedding_column(ids, 2), "column_embedding"),
             (fc.crossed_column(["a", "b"], 5), "column_crossed")]
    for column, ours in cases:
        hint = f"use {ours}() in place of tf.feature_column's {type(column).__name__}."
        for make in (lambda: feature_columns(column), lambda: feature_columns([column]),
                     lambda: linear_regressor([column]),
                     lambda: dnn_regressor([2], [column_numeric("z"), column])):
            with pytest.raises(TypeError, match=re.escape(hint)):
                make()
    with pytest.raises(TypeError) as raised:  # not TensorFlow's: no hint
        linear_regressor([column_numeric("x"), "y"])
    assert "TensorFlow" not in str(raised.value)


def test_arguments_that_fail_only_when_used_are_named_then():
    """An activation function returning no tensor, a column's shape that does not match the
    data, a checkpoint count TensorFlow cannot hold: errors naming the argument."""
    from pyhooks.estimators import run_config

    data = load_mtcars()
    inp = input_fn(data, response="mpg", features=["drat"], batch_size=8)
    model = dnn_regressor([2], [column_numeric("drat")], activation_fn=lambda x: 1)
    with pytest.raises(TypeError, match="`activation_fn` must return a tensor"):
        train(model, inp, steps=1)
    with pytest.raises(ValueError, match="its `shape` must match the data"):
        train(linear_regressor([column_numeric("drat", shape=3)]), inp, steps=1)
    with pytest.raises(ValueError, match="`keep_checkpoint_max` must be at most 2147483647"):
        run_config(keep_checkpoint_max=1e10)


# --------------------------------------------------------------------------- quiet
def test_no_tensorflow_noise_on_stdout_or_stderr(tmp_path):
    """A fresh process, TF_CPP_MIN_LOG_LEVEL unset: only the progress bar is printed."""
    script = tmp_path / "quiet.py"
    script.write_text(
        "import pyhooks\n"
        "from pyhooks.estimators import *\n"
        "data = load_mtcars()\n"
        "inp = input_fn(data, response='mpg', features=['drat', 'cyl'], batch_size=8)\n"
        "fcs = feature_columns(column_numeric('drat'),\n"
        "    column_indicator(column_categorical_with_vocabulary_list('cyl', [4, 6, 8])))\n"
        "for make in (lambda: linear_regressor(fcs), lambda: dnn_regressor([3], fcs)):\n"
        "    model = make()\n"
        "    train(model, inp, steps=2)\n"
        "    evaluate(model, inp)\n"
        "    predict(model, inp)\n"
        "print('done')\n")
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYHOOKS_PROGRESS"] = "plain"
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    lines = done.stdout.splitlines()
    assert lines[-1] == "done"
    assert all(line.startswith("Training ") for line in lines[:-1]), done.stdout


def test_quiet_is_not_global(shared_lr, spec_input):
    import logging
    import warnings

    logger = logging.getLogger("tensorflow")
    level = logger.level
    filters = list(warnings.filters)
    shared_lr.train(spec_input, steps=1, hooks=[quiet_bar()])
    assert logger.level == level and warnings.filters == filters


# --------------------------------------------------------------------------- kept graph & session
def test_graph_session_and_callables_are_kept_between_calls(shared_lr, spec_input):
    def calls():
        shared_lr.train(spec_input, steps=2, hooks=[quiet_bar()])
        shared_lr.evaluate(spec_input)
        shared_lr.predict(spec_input)

    calls()
    state = _train_state(shared_lr)  # noqa: SLF001
    graph, session, ops = state.graph, state.session, len(state.graph.get_operations())
    cached = {key: dict(s.callables) for key, s in shared_lr._states.items()}  # noqa: SLF001
    for _ in range(3):
        shared_lr.train(spec_input, steps=2, hooks=[quiet_bar()])
        shared_lr.evaluate(spec_input)
        shared_lr.predict(spec_input)
    assert _train_state(shared_lr) is state  # noqa: SLF001
    assert state.graph is graph and state.session is session
    assert len(graph.get_operations()) == ops  # default hooks add nothing
    assert graph.finalized
    # the same fetch lists, hence the same callables, call after call
    now = {key: dict(s.callables) for key, s in shared_lr._states.items()}  # noqa: SLF001
    assert now == cached


def _train_state(model):
    """The training graph's state (kept under ("train", whether its input is held))."""
    return next(state for (mode, _), state in model._states.items()  # noqa: SLF001
                if mode == "train")


def test_hooks_may_add_ops_in_begin_but_not_in_the_loop(shared_lr, spec_input):
    class AddsInBegin(pyhooks.SessionRunHook):
        def begin(self):
            loss = tf.compat.v1.get_collection("pyhooks_training_loss")[0]
            self.doubled = loss * 2.0
            self.seen = []

        def before_run(self, context):
            return pyhooks.SessionRunArgs([self.doubled, tf.compat.v1.get_collection(
                "pyhooks_training_loss")[0]])

        def after_run(self, context, values):
            self.seen.append(values.results)

    hook = AddsInBegin()
    shared_lr.train(spec_input, steps=2, hooks=[hook, quiet_bar()])
    assert [d for d, _ in hook.seen] == pytest.approx([2 * t for _, t in hook.seen])

    class AddsInLoop(pyhooks.SessionRunHook):
        def after_run(self, context, values):
            tf.constant(1.0)

    with pytest.raises(RuntimeError, match="finalized"):
        shared_lr.train(spec_input, steps=1, hooks=[AddsInLoop(), quiet_bar()])
    # the estimator still works afterwards
    assert len(shared_lr.train(spec_input, steps=1, hooks=[quiet_bar()])) == 1


def test_kept_session_survives_the_runner_and_checkpoint_savers(shared_lr, spec_input):
    class Closer(pyhooks.SessionRunHook):
        def end(self, session):
            session.close()  # a hook closing "its" session must not kill the estimator's
            self.kind = type(session).__name__

    closer = Closer()
    shared_lr.train(spec_input, steps=1, hooks=[closer, quiet_bar()])
    assert closer.kind == "KeptSession"
    assert isinstance(_train_state(shared_lr).session.run(  # noqa: SLF001
        _train_state(shared_lr).global_step_read), np.integer)  # noqa: SLF001


def test_a_step_in_the_calling_thread_flushes_subnormals_as_tensorflows_pool_does():
    from pyhooks.estimators import kept_session

    if kept_session._DENORMALS is None:  # noqa: SLF001
        pytest.skip("no known flush-to-zero control on this platform")
    graph = tf.Graph()
    with graph.as_default():
        tiny = tf.compat.v1.Variable(1e-30, dtype=tf.float32)
        product = tiny * tf.constant(1e-9)  # 1e-39: subnormal in float32
        session = tf.compat.v1.Session(graph=graph)
        session.run(tiny.initializer)
    inline = kept_session.fast_callable(session, graph, [product], inline=True)
    pooled = kept_session.fast_callable(session, graph, [product], inline=False)
    assert session.run(product) == 0.0  # TensorFlow's own pool threads flush it
    assert inline() == pooled() == [0.0]
    options = tf.compat.v1.RunOptions(inter_op_thread_pool=-1)
    assert session.run(product, options=options) > 0  # the calling thread by itself does not
    # and the calling thread's own state is back after the step
    assert np.float32(1e-30) * np.float32(1e-9) > 0
    session.close()


def test_label_dimension_two_and_hooks_in_evaluate_and_predict(mtcars):
    fcs = feature_columns(column_numeric("drat"), column_numeric("wt"))
    model = linear_regressor(fcs, label_dimension=2)
    inp = input_fn(mtcars, ["drat", "wt"], ["mpg", "qsec"], batch_size=8)
    seen = []

    class Losses(pyhooks.SessionRunHook):
        def before_run(self, context):
            return pyhooks.SessionRunArgs(context.session.graph.get_collection("losses")[0])

        def after_run(self, context, values):
            seen.append(np.shape(values.results))

    model.train(inp, steps=2, hooks=[Losses(), quiet_bar()])
    assert seen == [(8,), (8,)]  # one loss per example, summed over the two labels
    recorder = Recorder()
    metrics = model.evaluate(inp, hooks=[recorder])
    assert recorder.calls == ["begin", "after_create_session", "end"]
    assert [s for s, _ in recorder.fetched] == [2, 2, 2, 2]  # evaluation does not step
    assert metrics["global_step"] == 2
    recorder = Recorder()
    rows = model.predict(inp, hooks=[recorder])
    assert len(recorder.fetched) == 4 and recorder.calls[-1] == "end"
    assert rows[0]["predictions"].shape == (2,)
    with pytest.raises(ValueError, match=r"trained with \['mpg', 'qsec'\]"):
        model.train(input_fn(mtcars, ["drat", "wt"], "mpg"), steps=1)


# --------------------------------------------------------------------------- the input pipeline
class BatchRecorder(pyhooks.SessionRunHook):
    """Fetches every tensor of the input's batch (the model's, of ``model``'s graph being run)
    at each step."""

    def __init__(self, model):
        self.model = model

    def begin(self):
        graph = tf.compat.v1.get_default_graph()
        state = next(s for s in self.model._states.values()  # noqa: SLF001
                     if s.graph is graph)
        self.outputs = list(state.pipeline.batch.values())
        self.batches = []

    def before_run(self, run_context):
        return pyhooks.SessionRunArgs(self.outputs)

    def after_run(self, run_context, run_values):
        self.batches.append([np.asarray(v) for v in run_values.results])


def rows_seen(rows=10, batch_size=3, **kwargs):
    """Row numbers (and batch sizes) a linear classifier trained on rows 0..rows-1 received.

    Every input column holds the row number (as a float, an integer label, a
    string for a vocabulary column and a hash bucket), so each fetched tensor of
    a batch must say which rows the batch holds, all in the same order.
    """
    from pyhooks.estimators import (
        column_categorical_with_hash_bucket,
        column_categorical_with_vocabulary_list,
    )

    numbers = np.arange(rows)
    data = {"x": numbers.astype(float), "label": numbers % 2, "word": numbers.astype(str),
            "vocab": numbers.astype(str)}
    fcs = feature_columns(column_numeric("x"),
                          column_categorical_with_hash_bucket("word", 7),
                          column_categorical_with_vocabulary_list("vocab", ["0", "1", "2"]))
    model = linear_classifier(fcs)
    inp = input_fn(data, features=["x", "word", "vocab"], response="label",
                   batch_size=batch_size, **kwargs)
    recorder = BatchRecorder(model)
    model.train(inp, hooks=[recorder, quiet_bar()])
    seen = []
    for batch in recorder.batches:
        by_kind = {}
        for value in batch:
            if value.dtype.kind == "f":
                by_kind["x"] = value.astype(int)
            elif value.dtype.kind == "O":
                by_kind.setdefault("words", []).append([int(v) for v in value])
            else:
                by_kind["label"] = value
        for words in by_kind["words"]:
            assert words == by_kind["x"].tolist()  # the columns of a row stay together
        assert by_kind["label"].tolist() == (by_kind["x"] % 2).tolist()
        seen.append(by_kind["x"])
    return seen, model, inp


# 10 or 60 rows x 4 inputs are sliced row by row (the small-data datasets); 3,000 rows
# x 4 inputs are cut into whole batches (see estimator._batches): both must agree.
@pytest.mark.parametrize("rows", [10, 3000])
def test_batches_run_on_across_epochs_in_input_order_without_shuffling(rows):
    seen, _, _ = rows_seen(rows=rows, batch_size=rows * 3 // 10, shuffle=False, num_epochs=2)
    assert [len(b) for b in seen] == [rows * 3 // 10] * 6 + [rows * 2 // 10]  # ceil(2 / 0.3)
    assert np.concatenate(seen).tolist() == list(range(rows)) * 2


@pytest.mark.parametrize("rows", [50, 3000])
def test_shuffling_covers_every_row_once_per_epoch(rows):
    seen, model, inp = rows_seen(rows=rows, batch_size=rows * 4 // 25, num_epochs=3, seed=7)
    order = np.concatenate(seen)
    assert [len(b) for b in seen] == [rows * 4 // 25] * 18 + [rows * 3 // 25]
    epochs = order.reshape(3, rows)
    for epoch in epochs:
        assert sorted(epoch.tolist()) == list(range(rows))
    assert epochs[0].tolist() != list(range(rows))
    assert epochs[0].tolist() != epochs[1].tolist()  # a new permutation each epoch
    # a fixed seed gives the same order in every call, no seed a new one
    again = BatchRecorder(model)
    model.train(inp, hooks=[again, quiet_bar()])
    assert np.concatenate([next(v for v in b if v.dtype.kind == "f") for b in again.batches]
                          ).astype(int).tolist() == order.tolist()
    first, _, _ = rows_seen(rows=rows, batch_size=rows // 5, num_epochs=1)
    second, _, _ = rows_seen(rows=rows, batch_size=rows // 5, num_epochs=1)
    assert np.concatenate(first).tolist() != np.concatenate(second).tolist()


@pytest.mark.parametrize("rows", [60, 3000])
def test_a_bounded_shuffle_buffer_shuffles_locally(rows):
    seen, _, _ = rows_seen(rows=rows, batch_size=rows // 12, num_epochs=2, queue_capacity=4,
                           seed=3)
    order = np.concatenate(seen)
    for epoch in order.reshape(2, rows):
        assert sorted(epoch.tolist()) == list(range(rows))
        assert epoch.tolist() != list(range(rows))
        # the i-th row out of a buffer of 4 is one of the first i + 4 rows in
        assert all(row < i + 4 for i, row in enumerate(epoch.tolist()))


# The pipeline gathers rows in chunks of about GATHER_BYTES, then cuts batches: chunks
# of one batch (1 byte) and of 1,000 rows (not a multiple of the batch, ending inside
# an epoch) must give the same rows as one chunk holding every epoch.
@pytest.mark.parametrize("chunk_rows", [0, 1000])
@pytest.mark.parametrize("kwargs", [{"shuffle": False}, {"seed": 5},
                                    {"seed": 5, "queue_capacity": 50}])
def test_rows_gathered_in_chunks_come_once_per_epoch_in_the_same_order(
        monkeypatch, chunk_rows, kwargs):
    estimator = sys.modules["pyhooks.estimators.pipeline"]
    whole, _, _ = rows_seen(rows=3000, batch_size=480, num_epochs=3, **kwargs)
    row_bytes = 4 + 8 + 2 * estimator.TSTRING_BYTES  # x, label, two string columns
    monkeypatch.setattr(estimator, "GATHER_BYTES", chunk_rows * row_bytes or 1)
    chunked, _, _ = rows_seen(rows=3000, batch_size=480, num_epochs=3, **kwargs)
    assert [len(b) for b in chunked] == [480] * 18 + [360]
    order = np.concatenate(chunked)
    for epoch in order.reshape(3, 3000):
        assert sorted(epoch.tolist()) == list(range(3000))
    if "seed" in kwargs:  # a fixed seed: the same order however the rows are gathered
        assert order.tolist() == np.concatenate(whole).tolist()
    else:
        assert order.tolist() == list(range(3000)) * 3


@pytest.mark.parametrize("values, text", [
    (np.array(["b", "a", "b", "c", "a"]), ["b", "a", "b", "c", "a"]),
    (np.array([10, -3, 10, 7]), ["10", "-3", "10", "7"]),
    (np.array([0.5, 2.25, 0.5]), ["0.5", "2.25", "0.5"]),
    (np.array(["x"]), ["x"]),
])
@pytest.mark.parametrize("chunk", [1, 2, 1 << 16])
def test_string_columns_are_held_as_codes_into_their_distinct_values(values, text, chunk):
    from pyhooks.estimators.pipeline import coded as _coded

    codes, levels = _coded(values, chunk=chunk)
    assert codes.dtype == np.int32 and levels.dtype.kind == "U"
    assert levels[codes].tolist() == text
    assert sorted(levels.tolist()) == sorted(set(text))  # each distinct value once


def test_fed_columns_are_aligned_for_tensorflow_to_use_them_without_a_copy():
    """TensorFlow copies a fed array unless it is 64-byte aligned (then the column is held once)."""
    from pyhooks.estimators.pipeline import Coded as _Coded

    rows = 5000
    data = {"x": np.arange(rows, dtype=float)[1:], "n": np.arange(rows)[1:],  # offset views
            "word": np.array(["a", "b"] * rows)[2:rows + 1], "label": np.arange(rows - 1) % 2}
    model = linear_classifier(feature_columns(
        column_numeric("x"), column_numeric("n"),
        pyhooks.estimators.column_categorical_with_hash_bucket("word", 5)),
        weight_column="n")
    feeds, _ = model._feeds(input_fn(data, ["x", "n", "word"], "label"), "train")
    arrays = [v.codes if isinstance(v, _Coded) else v for v in feeds.values()]
    assert len(arrays) == 5  # x, n, word's codes, the labels and the weights
    for array in arrays:
        assert array.ctypes.data % 64 == 0 and array.flags.c_contiguous
        assert not np.shares_memory(array, data["x"]) and not np.shares_memory(array, data["n"])
    floats = [a.tolist() for a in arrays if a.dtype == np.float32]
    assert sorted(floats) == sorted([data["x"].tolist()] + [data["n"].tolist()] * 2)


def test_string_columns_are_fed_as_codes_and_read_back_as_strings():
    """Through the real pipeline, a vocabulary column's strings arrive as they were."""
    from pyhooks.estimators import column_categorical_with_vocabulary_list, column_indicator
    from pyhooks.estimators.pipeline import Coded as _Coded

    words = np.array(["red", "green", "blue", "green"] * 1500)
    data = {"color": words, "label": (words == "green").astype(int)}
    model = linear_classifier(feature_columns(
        column_indicator(column_categorical_with_vocabulary_list("color", ["red", "green"]))))
    inp = input_fn(data, ["color"], "label", batch_size=1000, shuffle=False)
    feeds, _ = model._feeds(inp, "train")
    coded = feeds[next(name for name in feeds if name.startswith("color"))]
    assert isinstance(coded, _Coded) and sorted(coded.levels.tolist()) == ["blue", "green", "red"]
    recorder = BatchRecorder(model)
    model.train(inp, hooks=[recorder, quiet_bar()])
    got = np.concatenate([next(v for v in b if v.dtype.kind == "O") for b in recorder.batches])
    assert got.astype(str).tolist() == words.tolist()


@pytest.mark.parametrize("rows", [20, 3000])
def test_a_buffer_as_large_as_the_data_is_a_permutation_per_epoch(rows):
    seen, _, _ = rows_seen(rows=rows, batch_size=rows * 3 // 10, num_epochs=2,
                           queue_capacity=rows, seed=1)
    order = np.concatenate(seen)
    assert [sorted(e.tolist()) for e in order.reshape(2, rows)] == [list(range(rows))] * 2
    assert order[:rows].tolist() != list(range(rows))

