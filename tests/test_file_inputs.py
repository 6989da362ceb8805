"""input_fn() from CSV and TFRecord files: real files, real TensorFlow sessions."""

import numpy as np
import pytest

import pyhooks
from pyhooks.estimators import (classifier_parse_example_spec, column_categorical_with_vocabulary_list,
                                column_indicator, column_numeric, evaluate, feature_columns,
                                input_fn, predict, regressor_parse_example_spec, train)

N = 2500  # more than one chunk of records (CHUNK_ROWS)


def _data(n=N, seed=0):
    rng = np.random.default_rng(seed)
    x1 = rng.normal(size=n)
    x2 = rng.integers(0, 5, n)
    return {"x1": x1, "x2": x2, "y": 2 * x1 + x2, "lab": np.where(x1 > 0, "b", "a")}


def _write_csv(path, data, bad=None):
    names = list(data)
    with open(path, "w") as file:
        file.write(",".join(names) + "\n")
        for i in range(len(data[names[0]])):
            row = [str(data[name][i]) for name in names]
            if bad is not None and bad[0] == i:
                row[names.index(bad[1])] = bad[2]
            file.write(",".join(row) + "\n")
    return str(path)


FCS = [column_numeric("x1"), column_numeric("x2")]


def test_csv_trains_evaluates_and_predicts_as_the_same_data_in_memory(tmp_path):
    data = _data()
    path = _write_csv(tmp_path / "a.csv", data)
    files = input_fn(path, features=["x1", "x2"], response="y", batch_size=50, shuffle=False)
    assert files.types == {"x1": "numeric", "x2": "integer", "y": "numeric"}
    memory = input_fn(data, features=["x1", "x2"], response="y", batch_size=50, shuffle=False)
    a = pyhooks.linear_regressor(feature_columns=feature_columns(*FCS), seed=1,
                                 model_dir=str(tmp_path / "a"))
    b = pyhooks.linear_regressor(feature_columns=feature_columns(*FCS), seed=1,
                                 model_dir=str(tmp_path / "b"))
    history_a, history_b = train(a, files, steps=30), train(b, memory, steps=30)
    np.testing.assert_allclose(history_a.to_dict()["mean_losses"], history_b.to_dict()["mean_losses"], rtol=1e-5)
    np.testing.assert_allclose(evaluate(a, files)["average_loss"],
                               evaluate(b, memory)["average_loss"], rtol=1e-5)
    predicted = predict(a, input_fn(path, features=["x1", "x2"], batch_size=700), as_dict=True)
    assert predicted["predictions"].shape == (N, 1)
    # the same model; the sums of a prediction in another order (held data: one matmul of
    # the columns side by side), so equal to float32 rounding
    np.testing.assert_allclose(predicted["predictions"],
                               predict(b, memory, as_dict=True)["predictions"], rtol=1e-5,
                               atol=1e-5)


def test_a_glob_of_files_is_read_whole_each_epoch(tmp_path):
    for i in range(3):
        _write_csv(tmp_path / f"part-{i}.csv", _data(n=100, seed=i))
    files = input_fn(str(tmp_path / "part-*.csv"), features=["x1"], response="y",
                     batch_size=32, num_epochs=2)
    assert len(files.files) == 3
    model = pyhooks.dnn_regressor(feature_columns=feature_columns(FCS[0]), hidden_units=[4])
    history = train(model, files)
    assert history.to_dict()["steps"][-1] == -(-600 // 32)  # every row of every file, twice


def test_classifier_reads_text_labels_through_its_vocabulary(tmp_path):
    path = _write_csv(tmp_path / "a.csv", _data())
    model = pyhooks.linear_classifier(feature_columns=feature_columns(*FCS),
                                      label_vocabulary=["a", "b"])
    inp = input_fn(path, features=["x1", "x2"], response="lab", batch_size=100)
    train(model, inp, steps=50)
    assert evaluate(model, inp)["accuracy"] > 0.9
    bad = _write_csv(tmp_path / "bad.csv", _data(), bad=(1500, "lab", "c"))
    with pytest.raises(ValueError, match=r"'lab' of file .*bad.csv' holds 'c' at row 1501 "
                                         r"\(line 1502\): not one of the classes"):
        evaluate(model, input_fn(bad, features=["x1", "x2"], response="lab"))


@pytest.mark.parametrize("value, message", [
    ("NA", "holds 'NA' at row 2001 \\(line 2002\\): a missing value"),
    ("", "holds '' at row 2001 \\(line 2002\\): a missing value"),
    ("inf", "holds 'inf' at row 2001 \\(line 2002\\): not a finite number"),
    ("nan", "holds 'nan' at row 2001 \\(line 2002\\): not a finite number"),
    ("x", "holds 'x' at row 2001 \\(line 2002\\): not a number"),
])
def test_a_bad_value_past_the_sample_names_column_file_and_row(tmp_path, value, message):
    path = _write_csv(tmp_path / "a.csv", _data(), bad=(2000, "x1", value))
    model = pyhooks.linear_regressor(feature_columns=feature_columns(*FCS))
    with pytest.raises(ValueError, match="Column 'x1' of file '.*a.csv' " + message):
        train(model, input_fn(path, features=["x1", "x2"], response="y", shuffle=True))


def test_a_fraction_in_a_column_inferred_integer_names_column_types(tmp_path):
    path = _write_csv(tmp_path / "a.csv", _data(), bad=(2000, "x2", "2.5"))
    model = pyhooks.linear_regressor(feature_columns=feature_columns(*FCS))
    with pytest.raises(ValueError, match="'x2' .* holds '2.5' at row 2001 .*give `column_types`"):
        train(model, input_fn(path, features=["x1", "x2"], response="y"))
    fine = input_fn(path, features=["x1", "x2"], response="y", column_types={"x2": "numeric"})
    assert fine.types["x2"] == "numeric"
    train(model, fine, steps=3)


def test_bad_values_in_the_sample_and_bad_files_refused_by_input_fn(tmp_path):
    path = _write_csv(tmp_path / "a.csv", _data(), bad=(4, "x1", "NA"))
    with pytest.raises(ValueError, match="'x1' of file .* holds 'NA' at row 5 \\(line 6\\)"):
        input_fn(path, features=["x1"], response="y")
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(ValueError, match="empty.csv' is empty"):
        input_fn(str(tmp_path / "empty.csv"), features=["x1"])
    (tmp_path / "header.csv").write_text("x1,y\n")
    with pytest.raises(ValueError, match="has a header but no rows"):
        input_fn(str(tmp_path / "header.csv"), features=["x1"])
    good = _write_csv(tmp_path / "good.csv", _data(n=10))
    with pytest.raises(ValueError, match="`features`: no column 'z' in .*columns are: x1, x2"):
        input_fn(good, features=["z"])
    with pytest.raises(ValueError, match="no file matches"):
        input_fn(str(tmp_path / "nothing-*.csv"), features=["x1"])
    (tmp_path / "other.csv").write_text("x1,q\n1,2\n")
    with pytest.raises(ValueError, match="other.csv' has columns \\['x1', 'q'\\]"):
        input_fn([good, str(tmp_path / "other.csv")], features=["x1"])
    with pytest.raises(ValueError, match="`column_types` of 'x1' must be"):
        input_fn(good, features=["x1"], column_types={"x1": "date"})
    with pytest.raises(ValueError, match="`column_types` is for files"):
        input_fn(_data(n=3), features=["x1"], column_types={"x1": "numeric"})


def test_the_schema_holds_file_inputs_like_data_in_memory(tmp_path):
    path = _write_csv(tmp_path / "a.csv", _data())
    model = pyhooks.linear_regressor(feature_columns=feature_columns(*FCS),
                                     model_dir=str(tmp_path / "m"))
    train(model, input_fn(_data(), features=["x1", "x2"], response="y"), steps=2)
    text = _write_csv(tmp_path / "t.csv", {**_data(), "x1": _data()["lab"]})
    with pytest.raises(TypeError, match="Column 'x1' holds str values; the model was trained "
                                        "on float"):
        evaluate(model, input_fn(text, features=["x1", "x2"], response="y"))
    assert set(evaluate(model, input_fn(path, features=["x1", "x2"], response="y"))) >= {"loss"}


def test_text_features_and_a_custom_estimator_read_files(tmp_path):
    path = _write_csv(tmp_path / "a.csv", _data())
    column = column_indicator(column_categorical_with_vocabulary_list("lab", ["a", "b"]))
    model = pyhooks.dnn_regressor(feature_columns=feature_columns(column), hidden_units=[4])
    train(model, input_fn(path, features=["lab"], response="y"), steps=5)

    seen = {}

    def model_fn(features, labels, mode, params):
        import tensorflow as tf
        seen.update({k: v.dtype for k, v in features.items()})
        w = tf.compat.v1.get_variable("w", [], initializer=tf.zeros_initializer())
        prediction = w * tf.cast(features["x2"], tf.float32)
        if labels is None:
            return pyhooks.estimators.estimator_spec(mode, predictions={"p": prediction})
        loss = tf.reduce_sum(tf.square(prediction - tf.cast(labels, tf.float32)))
        step = tf.compat.v1.train.get_global_step()
        op = tf.compat.v1.train.GradientDescentOptimizer(1e-5).minimize(loss, global_step=step)
        return pyhooks.estimators.estimator_spec(mode, predictions={"p": prediction}, loss=loss,
                                                  train_op=op)

    custom = pyhooks.estimators.estimator(model_fn)
    train(custom, input_fn(path, features=["x2", "lab"], response="y", batch_size=100), steps=3)
    assert seen["x2"].name == "int64" and seen["lab"].name == "string"
    out = predict(custom, input_fn(path, features=["x2", "lab"]), as_dict=True)
    assert out["p"].shape == (N,)


def _write_tfrecord(path, data, missing_at=None):
    import tensorflow as tf
    with tf.io.TFRecordWriter(str(path)) as writer:
        for i in range(len(data["x1"])):
            feature = {"x1": tf.train.Feature(float_list=tf.train.FloatList(value=[data["x1"][i]])),
                       "y": tf.train.Feature(float_list=tf.train.FloatList(value=[data["y"][i]]))}
            if i != missing_at:
                feature["lab"] = tf.train.Feature(bytes_list=tf.train.BytesList(
                    value=[data["lab"][i].encode()]))
            writer.write(tf.train.Example(features=tf.train.Features(
                feature=feature)).SerializeToString())
    return str(path)


def test_tfrecord_files_parsed_with_pyhooks_parsing_specs(tmp_path):
    data = _data()
    path = _write_tfrecord(tmp_path / "a.tfrecord", data)
    x1 = column_numeric("x1")
    spec = regressor_parse_example_spec([x1], "y")
    model = pyhooks.linear_regressor(feature_columns=feature_columns(x1))
    inp = input_fn(path, features=["x1"], response="y", example_spec=spec, batch_size=64)
    train(model, inp, steps=20)
    assert evaluate(model, inp)["global_step"] == 20
    assert predict(model, inp, as_dict=True)["predictions"].shape == (N, 1)

    lab = column_categorical_with_vocabulary_list("lab", ["a", "b"])
    spec = classifier_parse_example_spec([x1, lab], "y", label_dtype="float32")
    bad = _write_tfrecord(tmp_path / "bad.tfrecord", data, missing_at=2200)
    dnn = pyhooks.dnn_regressor(feature_columns=feature_columns(x1, column_indicator(lab)),
                                hidden_units=[4])
    with pytest.raises(ValueError, match="'lab' of file '.*bad.tfrecord' holds '0' at record "
                                         "2201: the number of values"):
        train(dnn, input_fn(bad, features=["x1", "lab"], response="y", example_spec=spec))
    with pytest.raises(ValueError, match="no feature 'z' in `example_spec`"):
        input_fn(path, features=["z"], example_spec=spec)


def test_several_steps_per_call_read_files(tmp_path):
    """run_config's steps_per_execution takes its batches from a file input as from memory."""
    from pyhooks import estimators as est

    path = tmp_path / "data.csv"
    path.write_text("x,y\n" + "".join(f"{i / 10},{i % 7}\n" for i in range(200)))
    model = est.linear_regressor(est.feature_columns(est.column_numeric("x")),
                                 model_dir=str(tmp_path / "model"),
                                 config=est.RunConfig(steps_per_execution=4))
    history = model.train(est.input_fn(str(path), features=["x"], response="y", batch_size=10,
                                       num_epochs=None), steps=10, hooks=[])
    assert history.to_dict()["steps"][-1] == 10


@pytest.mark.parametrize("option, value", [("na", "?"), ("guess_rows", 5),
                                           ("column_types", {"x": "numeric"})])
def test_file_options_are_refused_for_data_in_memory(option, value):
    """An option that only files use is an error with data in memory, never ignored."""
    from pyhooks import estimators as est

    with pytest.raises(ValueError, match=f"`{option}` is for files; `data` is dict"):
        est.input_fn({"x": [1.0, 2.0], "y": [1.0, 2.0]}, ["x"], "y", **{option: value})
