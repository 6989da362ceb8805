"""input_fn(): column-oriented data validated before any training (no TensorFlow needed)."""

import math

import numpy as np
import pytest

from pyhooks.estimators import input_fn, load_mtcars
from pyhooks.estimators.inputs import InputFn


def test_mtcars_is_r_mtcars():
    data = load_mtcars()
    assert sorted(data) == sorted(["mpg", "cyl", "disp", "hp", "drat", "wt", "qsec", "vs", "am",
                                   "gear", "carb"])
    assert all(len(v) == 32 and v.dtype == np.float64 for v in data.values())
    assert abs(float(data["mpg"].mean()) - 20.09062) < 1e-5
    assert round(float(data["mpg"].std(ddof=1)), 6) == 6.026948
    assert round(float(data["hp"].mean()), 4) == 146.6875
    assert round(float(data["wt"].mean()), 5) == 3.21725
    assert round(float(data["disp"].sum()), 1) == 7383.1
    assert data["mpg"][0] == 21.0 and data["wt"][1] == 2.875 and data["qsec"][-1] == 18.6
    names = load_mtcars(row_names=True)["model"]
    assert names[0] == "Mazda RX4" and names[-1] == "Volvo 142E"


def test_dict_of_lists_and_arrays():
    inp = input_fn({"x": [1, 2, 3], "y": np.array([0.5, 1.5, 2.5]), "s": ["a", "b", "c"]},
                   features=["x", "s"], response="y", batch_size=2)
    assert isinstance(inp, InputFn)
    assert inp.n == 3 and inp.features == ["x", "s"] and inp.response == ["y"]
    assert inp.columns["x"].dtype == np.int64
    assert inp.columns["s"].dtype.kind == "U"
    assert inp.steps_per_run() == 2
    features, labels = inp()
    assert list(features) == ["x", "s"] and labels.tolist() == [0.5, 1.5, 2.5]
    assert "3 rows" in repr(inp)


def test_structured_array():
    data = np.array([(1.0, 2), (3.0, 4)], dtype=[("a", "f8"), ("b", "i4")])
    inp = input_fn(data, features="a", response="b")
    assert inp.features == ["a"] and inp.columns["b"].tolist() == [2, 4]


def test_pandas_dataframe_when_installed():
    pandas = pytest.importorskip("pandas")
    frame = pandas.DataFrame({"x": [1.0, 2.0], "y": [3.0, 4.0]})
    assert input_fn(frame, features="x", response="y").n == 2


def test_only_selected_columns_are_checked():
    # 'junk' has missing values but is not used
    inp = input_fn({"x": [1.0, 2.0], "junk": [None, "a"]}, features="x")
    assert list(inp.columns) == ["x"] and inp.response == []


def test_shuffle_auto_means_when_training():
    inp = input_fn({"x": [1.0]}, features="x")
    assert inp.shuffles(training=True) and not inp.shuffles(training=False)
    fixed = input_fn({"x": [1.0]}, features="x", shuffle=False)
    assert not fixed.shuffles(training=True)
    assert input_fn({"x": [1.0]}, features="x", shuffle=np.bool_(True)).shuffle is True


def test_r_doubles_are_accepted_as_counts():
    inp = input_fn({"x": [1.0]}, features="x", batch_size=8.0, num_epochs=2.0)
    assert inp.batch_size == 8 and inp.num_epochs == 2
    assert input_fn({"x": [1.0]}, features="x", num_epochs=None).steps_per_run() is None


@pytest.mark.parametrize("kwargs, error, words", [
    (dict(features="nope"), ValueError, ["features", "'nope'", "mpg, cyl"]),
    (dict(features="drat", response="nope"), ValueError, ["response", "'nope'", "has: mpg"]),
    (dict(features=[]), ValueError, ["features"]),
    (dict(features=None), ValueError, ["features"]),
    (dict(features=3), TypeError, ["features", "3"]),
    (dict(features=["drat", "drat"]), ValueError, ["more than once", "drat"]),
    (dict(features="drat", batch_size=0), ValueError, ["batch_size", "0"]),
    (dict(features="drat", batch_size=2.5), ValueError, ["batch_size", "2.5"]),
    (dict(features="drat", batch_size="8"), TypeError, ["batch_size", "'8'"]),
    (dict(features="drat", num_epochs=-1), ValueError, ["num_epochs", "-1"]),
    (dict(features="drat", shuffle="yes"), ValueError, ["shuffle", "'yes'"]),
    (dict(features="drat", queue_capacity=0), ValueError, ["queue_capacity"]),
])
def test_bad_arguments(kwargs, error, words):
    with pytest.raises(error) as raised:
        input_fn(load_mtcars(), **kwargs)
    for word in words:
        assert word in str(raised.value)


@pytest.mark.parametrize("data, error, words", [
    ({"x": [1.0, math.nan, 3.0]}, ValueError, ["'x'", "1 missing", "index 1"]),
    ({"x": [1.0, None, 3.0]}, ValueError, ["'x'", "missing", "index 1"]),
    ({"x": ["a", None]}, ValueError, ["'x'", "missing", "index 1"]),
    ({"x": [1, "a"]}, TypeError, ["'x'", "mix", "int", "str"]),
    ({"x": []}, ValueError, ["no rows"]),
    ({"x": [1.0, 2.0], "y": [1.0]}, ValueError, ["same length", "'x': 2", "'y': 1"]),
    ({"x": [["a", "b"], ["c", "d"]]}, ValueError, ["'x'", "one-dimensional", "(2, 2)"]),
    ({"x": [1 + 2j]}, TypeError, ["'x'", "complex"]),
    ({3: [1.0]}, TypeError, ["column names must be strings"]),
])
def test_bad_data(data, error, words):
    with pytest.raises(error) as raised:
        input_fn(data, features=list(data)[0] if isinstance(list(data)[0], str) else "x",
                 response="y" if "y" in data else None)
    for word in words:
        assert word in str(raised.value)


@pytest.mark.parametrize("data, words", [
    (np.zeros((3, 2)), ["plain numpy array", "(3, 2)"]),
    ([1, 2, 3], ["list"]),
])
def test_data_must_be_column_oriented(data, words):
    with pytest.raises(TypeError) as raised:
        input_fn(data, features="x")
    assert "`data`" in str(raised.value)
    for word in words:
        assert word in str(raised.value)


def test_a_string_is_a_file_path():
    with pytest.raises(ValueError, match="`data`: no file 'mtcars'"):
        input_fn("mtcars", features="x")


def test_queue_capacity_defaults_to_the_whole_data():
    inp = input_fn({"x": [1.0, 2.0]}, features="x")
    assert inp.queue_capacity is None
    assert input_fn({"x": [1.0, 2.0]}, features="x", queue_capacity=1000.0).queue_capacity == 1000


def test_columns_from_r_bytes():
    from pyhooks.estimators.inputs import column_from_r

    doubles = column_from_r("double", bytearray(np.array([1.5, -2.0], "<f8").tobytes())).values
    assert doubles.dtype == np.float64 and doubles.tolist() == [1.5, -2.0]
    integers = column_from_r("integer", np.array([3, -4], "<i4").tobytes()).values
    assert integers.dtype == np.int64 and integers.tolist() == [3, -4]
    logicals = column_from_r("logical", np.array([1, 0, 1], "<i4").tobytes()).values
    assert logicals.dtype == bool and logicals.tolist() == [True, False, True]
    strings = column_from_r("character", np.array([2, 1, 2], "<i4").tobytes(), ["red", "blue"])
    assert strings.factor is None
    assert strings.values.dtype.kind == "U" and strings.values.tolist() == ["blue", "red", "blue"]
    factor = column_from_r("factor", np.array([2, 1, 2], "<i4").tobytes(), ["no", "yes"])
    assert factor.values.tolist() == ["yes", "no", "yes"]
    assert factor.factor.levels == ("no", "yes") and factor.factor.codes.tolist() == [1, 0, 1]
    with pytest.raises(TypeError, match="'complex'"):
        column_from_r("complex", b"")
    inp = input_fn({"x": column_from_r("double", np.array([1.0, np.inf]).tobytes()),
                    "s": strings}, features=["s"])
    assert inp.columns["s"].tolist() == ["blue", "red", "blue"] and inp.first_row == 1
    with pytest.raises(ValueError, match=r"Column 'x' has 1 infinite value\(s\) \(Inf/-Inf\), "
                                         r"first at row 2"):
        input_fn({"x": column_from_r("double", np.array([1.0, np.inf]).tobytes())},
                 features=["x"])
