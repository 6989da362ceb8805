"""The data contract: what a model was trained on, recorded in model_dir, checked at every call.

Through real ``train()`` / ``evaluate()`` / ``predict()`` calls, with pandas
DataFrames and dicts of arrays, in this process and in a new one.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest

from pyhooks import estimators as est

ROWS = 64


def quiet_bar():
    import io

    import pyhooks

    return pyhooks.ProgressBarHook(writer=io.StringIO())


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(3)
    x = rng.normal(size=ROWS)
    color = np.where(x > 0, "red", "blue")
    return pd.DataFrame({
        "x": x,
        "n": rng.integers(0, 5, ROWS),
        "color": pd.Categorical(color, categories=["blue", "red"]),
        "answer": pd.Categorical(np.where(x + rng.normal(0, .3, ROWS) > 0, "yes", "no"),
                                 categories=["no", "yes"]),
        "extra": "ignored",
    })


def reorder(series, categories):
    return pd.Categorical(series.astype(str), categories=categories)


@pytest.fixture(scope="module")
def classifier(frame, tmp_path_factory):
    model = est.linear_classifier(est.feature_columns(
        est.column_numeric("x"),
        est.column_categorical_with_vocabulary_list("color", ["blue", "red"])),
        model_dir=str(tmp_path_factory.mktemp("classifier")))
    model.train(est.input_fn(frame, ["x", "color"], "answer", batch_size=16, num_epochs=None),
                steps=40, hooks=[quiet_bar()])
    return model


def test_the_first_train_records_the_schema_in_model_dir(classifier):
    with open(os.path.join(classifier.model_dir, "pyhooks_schema.json"), encoding="utf-8") as f:
        schema = json.load(f)
    assert schema["features"] == [
        {"name": "color", "kind": "factor", "dtype": "str", "shape": [], "levels": ["blue", "red"]},
        {"name": "x", "kind": "numeric", "dtype": "float64", "shape": []}]
    assert schema["response"] == [{"name": "answer", "kind": "factor", "dtype": "str",
                                   "shape": [], "levels": ["no", "yes"]}]


def test_categories_listed_in_another_order_mean_the_same_data(classifier, frame):
    metrics = classifier.evaluate(est.input_fn(frame, ["x", "color"], "answer"))
    flipped = frame.assign(answer=reorder(frame["answer"], ["yes", "no"]),
                           color=reorder(frame["color"], ["red", "blue"]))
    assert classifier.evaluate(est.input_fn(flipped, ["x", "color"], "answer")) == metrics
    assert 0.7 < metrics["accuracy"] < 1
    plain = classifier.predict(est.input_fn(frame, ["x", "color"]), as_dict=True)
    again = classifier.predict(est.input_fn(flipped, ["x", "color"]), as_dict=True)
    np.testing.assert_array_equal(plain["probabilities"], again["probabilities"])
    assert set(plain["classes"].ravel()) <= {"no", "yes"}  # the levels' names


def test_text_where_a_factor_was_recorded_is_matched_by_label(classifier, frame):
    text = frame.assign(answer=frame["answer"].astype(str), color=frame["color"].astype(str))
    assert classifier.evaluate(est.input_fn(text, ["x", "color"], "answer")) == \
        classifier.evaluate(est.input_fn(frame, ["x", "color"], "answer"))


@pytest.mark.parametrize("column, call", [("answer", "evaluate"), ("color", "predict")])
def test_a_level_never_seen_in_training_names_the_column_the_value_and_the_row(
        classifier, frame, column, call):
    changed = frame.copy()
    values = changed[column].astype(str).to_numpy().copy()
    values[5] = "maybe"
    changed[column] = pd.Categorical(values)
    input = est.input_fn(changed, ["x", "color"], "answer")
    with pytest.raises(ValueError, match=rf"'{column}' holds 'maybe' at index 5, which was not "
                                         r"one of its levels when the model was trained"):
        getattr(classifier, call)(input)


def test_an_unused_new_level_is_no_error(classifier, frame):
    wider = frame.assign(color=pd.Categorical(frame["color"].astype(str),
                                              categories=["green", "blue", "red"]))
    classifier.predict(est.input_fn(wider, ["x", "color"]))


def test_a_changed_kind_names_the_column(classifier, frame):
    with pytest.raises(TypeError, match="Column 'x' holds str values; the model was trained on "
                                        "float values in it"):
        classifier.predict(est.input_fn(frame.assign(x=frame["x"].astype(str)), ["x", "color"]))


def test_a_missing_column_is_named_and_extra_columns_are_ignored(classifier, frame):
    with pytest.raises(ValueError, match="no feature column 'color', which the model was trained"):
        classifier.predict(est.input_fn(frame, ["x", "n"]))
    rows = classifier.predict(est.input_fn(frame, ["x", "color", "n", "extra"]))
    assert len(rows) == ROWS  # no response needed, unread columns ignored


@pytest.mark.parametrize("make", [
    lambda fcs, model_dir: est.linear_classifier(fcs, model_dir=model_dir),
    lambda fcs, model_dir: est.dnn_classifier(
        [4], [fcs[0], est.column_indicator(fcs[1])], model_dir=model_dir),
    lambda fcs, model_dir: est.dnn_linear_combined_classifier(
        linear_feature_columns=fcs[1:], dnn_feature_columns=fcs[:1], dnn_hidden_units=[4],
        model_dir=model_dir),
], ids=["linear", "dnn", "dnn_linear_combined"])
def test_the_first_train_names_a_feature_column_whose_input_is_not_a_feature(
        make, frame, tmp_path):
    fcs = est.feature_columns(
        est.column_numeric("x"),
        est.column_categorical_with_vocabulary_list("color", ["blue", "red"]))
    model = make(fcs, str(tmp_path))
    with pytest.raises(ValueError, match="^Feature column 'color(_indicator)?' needs the input column "
                                         "'color', which is not one of the input's features: "
                                         "x, n.$"):
        model.train(est.input_fn(frame, ["x", "n"], "answer"), steps=1)
    with pytest.raises(ValueError, match="'color', which is the input's response, not one of "
                                         "its features; its features are: x.$"):
        model.train(est.input_fn(frame, ["x"], "color"), steps=1)
    assert not os.path.exists(os.path.join(str(tmp_path), "pyhooks_schema.json"))
    model.train(est.input_fn(frame, ["x", "color"], "answer"), steps=1, hooks=[quiet_bar()])
    assert model.evaluate(est.input_fn(frame, ["x", "color"], "answer"))["global_step"] == 1


def test_integers_where_floats_were_recorded_are_read_as_floats(tmp_path):
    data = {"x": np.arange(20, dtype=np.float64), "y": np.arange(20) * 2.0}
    model = est.linear_regressor(est.feature_columns(est.column_numeric("x")),
                                 model_dir=str(tmp_path))
    model.train(est.input_fn(data, "x", "y", batch_size=5), hooks=[quiet_bar()])
    ints = {"x": np.arange(20), "y": np.arange(20) * 2}
    assert model.evaluate(est.input_fn(ints, "x", "y"))["global_step"] == 4


def test_fractions_where_integers_were_recorded_are_refused(tmp_path):
    data = {"k": np.arange(20) % 3, "y": np.arange(20.0)}
    model = est.linear_regressor(est.feature_columns(est.column_numeric("k")),
                                 model_dir=str(tmp_path))
    model.train(est.input_fn(data, "k", "y", batch_size=5), hooks=[quiet_bar()])
    model.predict(est.input_fn({"k": np.array([1.0, 2.0])}, "k"))  # whole doubles are fine
    with pytest.raises(TypeError, match=r"Column 'k' holds 2.5 at index 1; the model was trained "
                                        "on whole numbers"):
        model.predict(est.input_fn({"k": np.array([1.0, 2.5])}, "k"))


def test_a_changed_shape_names_the_column(tmp_path):
    data = {"v": np.ones((10, 3)), "y": np.zeros(10)}
    model = est.linear_regressor(est.feature_columns(est.column_numeric("v", shape=3)),
                                 model_dir=str(tmp_path))
    model.train(est.input_fn(data, "v", "y", batch_size=5), hooks=[quiet_bar()])
    with pytest.raises(ValueError, match=r"'v' holds shape \[2\] per example; the model was "
                                         r"trained on shape \[3\]"):
        model.predict(est.input_fn({"v": np.ones((4, 2))}, "v"))


@pytest.mark.parametrize("values, words", [
    (np.array(["2020-01-01", "2020-02-01"], dtype="datetime64[D]"), "holds dates and times"),
    (pd.Series(pd.to_datetime(["2020-01-01", "2021-01-01"])), "holds dates and times"),
    (pd.Series(pd.to_datetime(["2020-01-01", "2021-01-01"]).tz_localize("UTC")),
     "holds dates and times"),
    ([datetime.date(2020, 1, 1), datetime.date(2020, 1, 2)], "holds dates and times"),
    (pd.Series(pd.to_timedelta([1, 2], unit="D")), "holds durations"),
    ([datetime.timedelta(1), datetime.timedelta(2)], "holds durations"),
    (pd.Series(pd.period_range("2020-01", periods=2, freq="M")), "holds periods"),
    (np.array([1 + 2j, 3j]), "holds complex numbers"),
])
def test_dates_durations_and_complex_numbers_are_refused_with_a_way_to_convert(values, words):
    with pytest.raises(TypeError, match=f"Column 'when' {words}") as raised:
        est.input_fn({"when": values, "y": [1.0, 2.0]}, "when", "y")
    assert "Convert" in str(raised.value) or "real and imaginary" in str(raised.value)
    if words == "holds durations":  # their hint is not the dates' "days since 1970-01-01"
        assert "np.timedelta64(1, 'D')" in str(raised.value)
        assert "1970" not in str(raised.value)
    if words == "holds periods":
        assert "p.ordinal" in str(raised.value)


@pytest.mark.parametrize("where", ["feature", "response", "weight"])
def test_numbers_beyond_float32_are_refused_naming_the_column(where, tmp_path):
    # a canned model computes in float32: 1e39 would be Inf there, and the loss NaN
    data = {"x": np.array([1.0, 2.0, 3.0]), "y": np.array([1.0, 2.0, 3.0]), "w": np.ones(3)}
    data[{"feature": "x", "response": "y", "weight": "w"}[where]][1] = 1e39
    model = est.linear_regressor([est.column_numeric("x")], weight_column="w",
                                 model_dir=str(tmp_path))
    named = {"feature": "Column 'x'", "response": "Response column 'y'",
             "weight": "weight_column 'w'"}[where]
    with pytest.raises(ValueError, match=rf"^{named} holds 1e\+39, beyond the range of the "
                                         r"float32 numbers .* rescale it first\.$"):
        model.train(est.input_fn(data, ["x", "w"], "y"), steps=1, hooks=[quiet_bar()])


@pytest.mark.parametrize("values, said", [
    ([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0, 7.0]], "2 value(s) at index 0, 3 at index 2"),
    ([[1.0, 2.0], 3.0], "2 value(s) at index 0, 1 at index 1"),
])
def test_rows_of_different_lengths_are_refused_naming_two(values, said):
    with pytest.raises(ValueError, match=r"^Column 'v' holds rows of different lengths: "
                                         + re.escape(said)):
        est.input_fn({"v": values}, "v")


@pytest.mark.parametrize("values", [
    pd.array(["a", None, "b", None], dtype="string"),
    pd.array([True, None, False, None], dtype="boolean"),
    pd.array([1.5, None, 2.5, None], dtype="Float64"),
    pd.Categorical(["a", None, "b", None]),
], ids=["string", "boolean", "Float64", "categorical"])
def test_pandas_missing_values_are_counted_and_located(values):
    with pytest.raises(ValueError, match=r"^Column 'x' has 2 missing value\(s\) .*, first at "
                                         r"index 1:"):
        est.input_fn(pd.DataFrame({"x": values}), "x")


def test_values_of_one_unreadable_kind_are_named_as_such():
    import decimal

    with pytest.raises(TypeError, match=r"^Column 'x' holds Decimal values, which pyhooks does "
                                        r"not read as numbers, booleans or strings: convert"):
        est.input_fn({"x": np.array([decimal.Decimal("1.5")] * 3, dtype=object)}, "x")


@pytest.mark.parametrize("values, mix", [
    ([True, 2, 3], "bool, int"),  # numpy alone would read 1, 2, 3
    ([False, 2.5, 1.0], "bool, float"),
    (np.array([1, "a", 2.0], dtype=object), "float, int, str"),
    ([1, "a"], "int, str"),  # numpy alone would read "1", "a"
])
def test_a_mix_of_kinds_is_refused_naming_them(values, mix):
    with pytest.raises(TypeError, match=rf"Column 'x' must hold values of one kind \(numbers, "
                                        rf"booleans or strings\), got a mix of {mix}\."):
        est.input_fn({"x": values}, "x")


@pytest.mark.parametrize("values", [np.array([b"red", b"gr\xc3\xbcn", b"red"]),
                                    np.array([b"red", "grün".encode(), b"red"], dtype=object)],
                         ids=["numpy_bytes", "python_bytes"])
def test_bytes_are_their_utf8_text(values, tmp_path):
    # TensorFlow's strings are UTF-8 bytes: b"red" is "red" to a vocabulary, as in TensorFlow
    colour = est.column_categorical_with_vocabulary_list("colour", ["red", "grün"])
    model = est.linear_regressor([est.column_indicator(colour)], model_dir=str(tmp_path))
    as_text = {"colour": np.array(["red", "grün", "red"]), "y": [1.0, 5.0, 1.0]}
    model.train(est.input_fn(as_text, "colour", "y", batch_size=3, num_epochs=None), steps=30,
                hooks=[quiet_bar()])
    want = model.predict(est.input_fn(as_text, "colour", shuffle=False), as_dict=True)
    got = model.predict(est.input_fn({"colour": values}, "colour", shuffle=False), as_dict=True)
    np.testing.assert_array_equal(got["predictions"], want["predictions"])
    assert want["predictions"][1] != want["predictions"][0]
    with pytest.raises(ValueError, match=r"Column 'colour' has 1 value\(s\) of bytes that are "
                                         r"not UTF-8 text, first at index 1: decode them"):
        est.input_fn({"colour": np.array([b"red", b"\xff"], dtype=object)}, "colour")


@pytest.mark.parametrize("column", ["x", "y"])
@pytest.mark.parametrize("bad", [np.inf, -np.inf])
def test_infinite_values_are_refused_naming_the_column_and_the_index(column, bad):
    data = {"x": np.arange(5.0), "y": np.arange(5.0)}
    data[column][3] = bad
    with pytest.raises(ValueError, match=rf"Column '{column}' has 1 infinite value\(s\) "
                                         r"\(Inf/-Inf\), first at index 3"):
        est.input_fn(data, "x", "y")


def test_two_columns_of_one_name_are_refused():
    frame = pd.DataFrame([[1.0, 2.0, 3.0]], columns=["drat", "drat", "mpg"])
    with pytest.raises(ValueError, match="more than one column named 'drat'"):
        est.input_fn(frame, "drat", "mpg")


def test_a_factor_response_needs_as_many_classes_as_levels(tmp_path, frame):
    three = frame.assign(answer=pd.Categorical(frame["answer"].astype(str),
                                               categories=["no", "yes", "maybe"]))
    model = est.linear_classifier(est.feature_columns(est.column_numeric("x")),
                                  model_dir=str(tmp_path))
    with pytest.raises(ValueError, match=r"'answer' is a factor of 3 levels \('no', 'yes', "
                                         r"'maybe'\), but the classifier has n_classes = 2"):
        model.train(est.input_fn(three, "x", "answer"), steps=1)


def test_a_custom_model_gets_class_ids_of_the_recorded_levels(tmp_path, frame):
    import tensorflow as tf

    seen = []

    def model_fn(features, labels, mode):
        v1 = tf.compat.v1
        w = v1.get_variable("w", [], initializer=v1.zeros_initializer(), dtype=tf.float64)
        loss = tf.reduce_mean(tf.square(features["x"] * w - tf.cast(labels, tf.float64)))
        seen.append(labels.dtype)
        op = v1.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=v1.train.get_global_step())
        return est.estimator_spec(mode, loss=loss, train_op=op,
                                  eval_metric_ops={"label": v1.metrics.mean(labels)})

    model = est.estimator(model_fn, model_dir=str(tmp_path))
    model.train(est.input_fn(frame, ["x"], "answer", batch_size=64), hooks=[quiet_bar()])
    flipped = frame.assign(answer=reorder(frame["answer"], ["yes", "no"]))
    mean = model.evaluate(est.input_fn(frame, ["x"], "answer"))["label"]
    assert model.evaluate(est.input_fn(flipped, ["x"], "answer"))["label"] == mean
    assert mean == pytest.approx(np.mean(frame["answer"] == "yes"))
    assert seen[0] == tf.int64


def test_the_contract_holds_in_a_new_process(classifier, frame, tmp_path):
    frame.to_pickle(tmp_path / "frame.pkl")
    metrics = classifier.evaluate(est.input_fn(frame, ["x", "color"], "answer"))
    code = textwrap.dedent(f"""
        import pandas as pd
        from pyhooks import estimators as est
        frame = pd.read_pickle({str(tmp_path / "frame.pkl")!r})
        frame["answer"] = pd.Categorical(frame["answer"].astype(str), categories=["yes", "no"])
        model = est.linear_classifier(est.feature_columns(
            est.column_numeric("x"),
            est.column_categorical_with_vocabulary_list("color", ["blue", "red"])),
            model_dir={classifier.model_dir!r})
        print(model.evaluate(est.input_fn(frame, ["x", "color"], "answer"))["accuracy"])
        try:
            model.predict(est.input_fn(frame.assign(x=frame["x"].astype(str)), ["x", "color"]))
        except TypeError as error:
            print(error)
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=240, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"})
    assert done.returncode == 0, done.stderr
    accuracy, error = done.stdout.strip().splitlines()
    assert float(accuracy) == pytest.approx(metrics["accuracy"])
    assert error.startswith("Column 'x' holds str values; the model was trained on float values")


def test_numpy_input_fn_keeps_the_arrays_dtypes_for_a_tf1_model_fn(tmp_path):
    import tensorflow as tf

    dtypes = []

    def model_fn(features, labels, mode):
        v1 = tf.compat.v1
        dtypes.append((features["x"].dtype, features["k"].dtype, getattr(labels, "dtype", None)))
        w = v1.get_variable("w", [], initializer=v1.zeros_initializer())  # float32
        out = features["x"] * w + tf.cast(features["k"], tf.float32)
        if mode == est.ModeKeys.PREDICT:
            return est.estimator_spec(mode, predictions=out)
        loss = v1.losses.mean_squared_error(labels, out)
        op = v1.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=v1.train.get_global_step())
        return est.estimator_spec(mode, loss=loss, train_op=op)

    x = np.linspace(0, 1, 40, dtype=np.float32)
    k = np.zeros(40, dtype=np.int32)
    model = est.estimator(model_fn, model_dir=str(tmp_path))
    model.train(est.numpy_input_fn({"x": x, "k": k}, 2 * x, batch_size=8, shuffle=True,
                                   num_epochs=None), steps=30, hooks=[quiet_bar()])
    assert dtypes == [(tf.float32, tf.int32, tf.float32)]
    predictions = model.predict(est.numpy_input_fn({"x": x, "k": k}, shuffle=False))
    assert predictions[-1]["predictions"].dtype == np.float32
    assert dtypes[-1] == (tf.float32, tf.int32, None)


REFERENCE_VARIABLES = """
import tempfile
import numpy as np
import tensorflow as tf
tf.compat.v1.{switch}()
from pyhooks import estimators as est
v1 = tf.compat.v1
data = est.load_mtcars()
fcs = est.feature_columns(est.column_numeric("drat"))
looped = est.RunConfig(steps_per_execution=2)  # a steps loop updates its variables too
for model, response in ((est.linear_regressor(fcs), "mpg"),
                        (est.dnn_classifier([4], fcs), "am"),
                        (est.dnn_classifier([4], fcs, config=looped), "am")):
    input = est.input_fn(data, ["drat"], response, batch_size=8)
    model.train(input, steps=3)
    print(model.evaluate(input)["global_step"], len(model.predict(input)),
          bool(model.export_savedmodel(tempfile.mkdtemp())))

def model_fn(features, labels, mode):
    w = v1.get_variable("w", [], initializer=v1.zeros_initializer())
    out = features["x"] * w
    if mode == est.ModeKeys.PREDICT:
        return est.estimator_spec(mode, predictions={{"y": out}})
    loss = v1.losses.mean_squared_error(labels, out)
    op = v1.train.GradientDescentOptimizer(0.5).minimize(loss, global_step=v1.train.get_global_step())
    return est.estimator_spec(mode, loss=loss, train_op=op)

x = np.linspace(0, 1, 50, dtype=np.float32)
model = est.estimator(model_fn)
model.train(est.numpy_input_fn({{"x": x}}, 2 * x, batch_size=10, num_epochs=None,
                                shuffle=True), steps=40)
metrics = model.evaluate(est.numpy_input_fn({{"x": x}}, 2 * x, shuffle=False))
last = model.predict(est.numpy_input_fn({{"x": x}}, shuffle=False))[-1]["y"]
print(metrics["global_step"], round(float(last), 1), bool(model.export_savedmodel(tempfile.mkdtemp())))
print(type(v1.global_variables()).__name__)
"""


@pytest.mark.parametrize("switch", ["disable_resource_variables", "disable_v2_behavior"])
def test_estimators_run_with_tensorflow_1_reference_variables(switch):
    done = subprocess.run([sys.executable, "-c", REFERENCE_VARIABLES.format(switch=switch)],
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"})
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [line for line in done.stdout.splitlines() if not line.startswith("Training")]
    assert lines[:3] == ["3 32 True", "3 32 True", "3 32 True"]
    assert lines[3].startswith("40 ") and lines[3].endswith(" True")
    assert 1.5 < float(lines[3].split()[1]) < 2.5  # y = 2x learned: at x = 1 about 2


def test_column_names_beyond_ascii_train_evaluate_predict_and_export(tmp_path):
    data = {"größe": np.arange(30.0) % 4, "prix €": np.arange(30.0), "y": np.arange(30.0),
            "couleur": np.array(["é", "ß", "ø"] * 10)}
    fcs = est.feature_columns(
        est.column_numeric("größe"), est.column_numeric("prix €"),
        est.column_indicator(est.column_categorical_with_vocabulary_list("couleur",
                                                                         ["é", "ß", "ø"])))
    model = est.dnn_regressor([3], fcs, model_dir=str(tmp_path / "m"))
    names = ["größe", "prix €", "couleur"]
    model.train(est.input_fn(data, names, "y", batch_size=10), hooks=[quiet_bar()])
    assert model.evaluate(est.input_fn(data, names, "y"))["global_step"] == 3
    assert len(model.predict(est.input_fn(data, names))) == 30
    assert os.path.isdir(model.export_savedmodel(str(tmp_path / "export")))


def test_two_names_tensorflow_would_spell_alike_are_refused():
    with pytest.raises(ValueError, match=r"Feature columns 'a b' and 'a_b' would share the "
                                         r"variable names 'a_b'"):
        est.linear_regressor(est.feature_columns(est.column_numeric("a b"),
                                                 est.column_numeric("a_b")))
