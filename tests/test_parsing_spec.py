"""Parsing specs for tf.io.parse_example, against TensorFlow's make_parse_example_spec."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from pyhooks.estimators import (
    classifier_parse_example_spec,
    column_bucketized,
    column_categorical_weighted,
    column_categorical_with_hash_bucket,
    column_categorical_with_identity,
    column_categorical_with_vocabulary_file,
    column_categorical_with_vocabulary_list,
    column_crossed,
    column_embedding,
    column_indicator,
    column_numeric,
    input_fn,
    linear_classifier,
    parse_example_spec,
    regressor_parse_example_spec,
)

fc = tf.feature_column


def pairs(vocabulary_file):
    """(pyhooks column, the same column in tf.feature_column) for every kind of column."""
    return [
        (column_numeric("b"), fc.numeric_column("b")),
        (column_numeric("h", shape=(2, 3), default_value=0),
         fc.numeric_column("h", shape=(2, 3), default_value=0.0)),
        (column_numeric("n", dtype="int64", default_value=1),
         fc.numeric_column("n", dtype=tf.int64, default_value=1)),
        (column_bucketized(column_numeric("c"), [1.0, 2.0]),
         fc.bucketized_column(fc.numeric_column("c"), [1.0, 2.0])),
        (column_crossed(["a", column_categorical_with_identity("d", 3)], 10),
         fc.crossed_column(["a", fc.categorical_column_with_identity("d", 3)], 10)),
        (column_indicator(column_categorical_with_vocabulary_list("e", ["x", "y"])),
         fc.indicator_column(fc.categorical_column_with_vocabulary_list("e", ["x", "y"]))),
        (column_embedding(column_categorical_with_hash_bucket("f", 10), 2),
         fc.embedding_column(fc.categorical_column_with_hash_bucket("f", 10), 2)),
        (column_categorical_with_hash_bucket("fi", 10, dtype="int64"),
         fc.categorical_column_with_hash_bucket("fi", 10, dtype=tf.int64)),
        (column_categorical_weighted(column_categorical_with_vocabulary_list("g", [1, 2]), "gw"),
         fc.weighted_categorical_column(fc.categorical_column_with_vocabulary_list("g", [1, 2]),
                                        "gw")),
        (column_categorical_with_vocabulary_file("v", vocabulary_file),
         fc.categorical_column_with_vocabulary_file("v", vocabulary_file)),
    ]


@pytest.fixture
def vocabulary_file(tmp_path):
    path = tmp_path / "colors.txt"
    path.write_text("red\ngreen\n")
    return str(path)


def test_each_column_parses_as_in_tensorflow(vocabulary_file):
    for ours, theirs in pairs(vocabulary_file):
        assert parse_example_spec(ours) == fc.make_parse_example_spec([theirs]), ours


def test_all_columns_together_as_in_tensorflow(vocabulary_file):
    ours, theirs = zip(*pairs(vocabulary_file))
    assert parse_example_spec(list(ours)) == fc.make_parse_example_spec(list(theirs))


def test_a_feature_read_two_ways_is_an_error():
    with pytest.raises(ValueError, match="'a' is parsed two ways"):
        parse_example_spec([column_numeric("a"), column_categorical_with_identity("a", 3)])
    # read twice the same way: one entry
    assert list(parse_example_spec([column_numeric("a"), column_bucketized(
        column_numeric("a"), [0.5])])) == ["a"]


def test_classifier_spec_adds_the_label_and_weight():
    spec = classifier_parse_example_spec(column_numeric("a"), "b", weight_column="c")
    assert spec == {"a": tf.io.FixedLenFeature((1,), tf.float32),
                    "b": tf.io.FixedLenFeature((1,), tf.int64),
                    "c": tf.io.FixedLenFeature((1,), tf.float32)}
    spec = classifier_parse_example_spec([column_numeric("a")], "label", label_dtype=tf.string,
                                         label_default="none")
    assert spec["label"] == tf.io.FixedLenFeature((1,), tf.string, "none")


def test_regressor_spec_has_the_label_dimension():
    spec = regressor_parse_example_spec([column_numeric("a")], "y", label_dimension=3,
                                        weight_column=column_numeric("w"))
    assert spec["y"] == tf.io.FixedLenFeature((3,), tf.float32)
    assert spec["w"] == tf.io.FixedLenFeature((1,), tf.float32)


@pytest.mark.parametrize("call, message", [
    (lambda: classifier_parse_example_spec(column_numeric("a"), "a"), "`label_key` 'a'"),
    (lambda: classifier_parse_example_spec(column_numeric("a"), "b", weight_column="a"),
     "`weight_column` 'a'"),
    (lambda: classifier_parse_example_spec(column_numeric("a"), "b", weight_column="b"),
     "`weight_column` 'b'"),
    (lambda: classifier_parse_example_spec(column_numeric("a"), "b", label_dtype="int"),
     "`label_dtype`"),
    (lambda: classifier_parse_example_spec(column_numeric("a"), 3), "`label_key`"),
    (lambda: classifier_parse_example_spec("a", "b"), "`feature_columns`"),
    (lambda: classifier_parse_example_spec([], "b"), "`feature_columns`"),
    (lambda: classifier_parse_example_spec(column_numeric("a"), "b", weight_column=3),
     "`weight_column`"),
    (lambda: regressor_parse_example_spec(column_numeric("a"), "b", label_dimension=0),
     "`label_dimension`"),
    (lambda: regressor_parse_example_spec(column_numeric("a"), "b", label_dimension=1e10),
     "`label_dimension`"),
    # a number is not a type (TensorFlow would read 1 as float32's code)
    (lambda: classifier_parse_example_spec(column_numeric("a"), "b", label_dtype=1),
     "`label_dtype`"),
    (lambda: classifier_parse_example_spec(column_numeric("a"), "b", label_dtype=True),
     "`label_dtype`"),
    (lambda: classifier_parse_example_spec(column_numeric("a"), "b", weight_column=""),
     "`weight_column`"),
    # label_default: of the label's type, one value per dimension
    (lambda: classifier_parse_example_spec(column_numeric("a"), "b", label_default=True),
     "`label_default`"),
    (lambda: classifier_parse_example_spec(column_numeric("a"), "b", label_default=0.5),
     "`label_default` must be 1 whole number"),
    (lambda: classifier_parse_example_spec(column_numeric("a"), "b", label_default="x"),
     "`label_default`"),
    (lambda: classifier_parse_example_spec(column_numeric("a"), "b", label_dtype="string",
                                           label_default=1), "`label_default` must be 1 string"),
    (lambda: regressor_parse_example_spec(column_numeric("a"), "b", label_default=[1, 2]),
     "`label_default`"),
    (lambda: regressor_parse_example_spec(column_numeric("a"), "b", label_dimension=2,
                                          label_default=1.0), "`label_default` must be 2 numbers"),
    (lambda: regressor_parse_example_spec(column_numeric("a"), "b", label_default={"a": 1}),
     "`label_default`"),
])


def test_bad_arguments_are_named(call, message):
    with pytest.raises((TypeError, ValueError), match=message):
        call()


def test_label_defaults_fill_records_without_a_label():
    record = tf.train.Example(features=tf.train.Features(feature={
        "a": tf.train.Feature(float_list=tf.train.FloatList(value=[0.5]))})).SerializeToString()
    spec = regressor_parse_example_spec(column_numeric("a"), "y", label_dimension=2,
                                        label_default=[1, 2.5])
    np.testing.assert_allclose(tf.io.parse_example([record], spec)["y"].numpy(), [[1.0, 2.5]])
    spec = classifier_parse_example_spec(column_numeric("a"), "b", label_default=3.0)
    assert spec["b"].default_value == 3
    assert tf.io.parse_example([record], spec)["b"].numpy().tolist() == [[3]]


def test_records_parsed_with_the_spec_train_a_classifier():
    """tf.Example records -> tf.io.parse_example(spec) -> input_fn() -> train()."""
    rng = np.random.default_rng(5)
    x = rng.normal(size=40)
    colors = rng.choice(["red", "blue"], size=40)
    labels = (x > 0).astype(np.int64)
    records = [tf.train.Example(features=tf.train.Features(feature={
        "x": tf.train.Feature(float_list=tf.train.FloatList(value=[v])),
        "color": tf.train.Feature(bytes_list=tf.train.BytesList(value=[c.encode()])),
        "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[y])),
    })).SerializeToString() for v, c, y in zip(x, colors, labels)]
    columns = [column_numeric("x"),
               column_indicator(column_categorical_with_vocabulary_list("color", ["red", "blue"]))]
    parsed = tf.io.parse_example(records, classifier_parse_example_spec(columns, "label"))
    data = {"x": parsed["x"].numpy()[:, 0],
            "color": tf.sparse.to_dense(parsed["color"]).numpy()[:, 0].astype(str),
            "label": parsed["label"].numpy()[:, 0]}
    np.testing.assert_allclose(data["x"], x, rtol=1e-6)
    assert list(data["color"]) == list(colors)
    assert list(data["label"]) == list(labels)
    model = linear_classifier(columns)
    model.train(input_fn(data, ["x", "color"], "label", batch_size=8), steps=2)
    assert model.latest_checkpoint().endswith("model.ckpt-2")
