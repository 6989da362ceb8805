"""The estimator helpers with the R package's meanings (pyhooks.estimators.r_support)."""

import os

import numpy as np
import pytest

from pyhooks import ProgressBarHook
from pyhooks.estimators import column_numeric, feature_columns, input_fn, linear_regressor
from pyhooks.estimators import load_mtcars, r_support

pytest.importorskip("tensorflow")


@pytest.fixture(scope="module")
def trained():
    data = load_mtcars()
    model = linear_regressor(feature_columns(column_numeric("drat")))
    model.train(input_fn(data, ["drat"], "mpg", batch_size=8), steps=2,
                hooks=[ProgressBarHook(writer=lambda text: None)])
    return model


def test_unversioned_export_replaces_only_a_saved_model(trained, tmp_path):
    target = tmp_path / "model"
    assert r_support.export_savedmodel_to(trained, str(target)) == str(target)
    assert (target / "saved_model.pb").exists()
    (target / "extra").write_text("x")
    r_support.export_savedmodel_to(trained, str(target), overwrite=True)
    assert not (target / "extra").exists() and (target / "saved_model.pb").exists()
    assert sorted(os.listdir(tmp_path)) == ["model"]  # no staging directory left
    with pytest.raises(FileExistsError, match="already exists"):
        r_support.export_savedmodel_to(trained, str(target), overwrite=False, versioned=False)
    other = tmp_path / "notes"
    other.mkdir()
    (other / "a.txt").write_text("keep")
    with pytest.raises(FileExistsError, match="holds no SavedModel"):
        r_support.export_savedmodel_to(trained, str(other))
    assert (other / "a.txt").read_text() == "keep"
    (tmp_path / "file").write_text("")
    with pytest.raises(FileExistsError, match="is a file"):
        r_support.export_savedmodel_to(trained, str(tmp_path / "file"))
    with pytest.raises(TypeError, match="`overwrite` must be True or False"):
        r_support.export_savedmodel_to(trained, str(target), overwrite="yes")


def test_versioned_export_makes_a_new_directory_each_time(trained, tmp_path):
    first = r_support.export_savedmodel_to(trained, str(tmp_path), overwrite=False)
    second = r_support.export_savedmodel_to(trained, str(tmp_path), versioned=True)
    assert os.path.dirname(first) == str(tmp_path) and first != second
    assert all(os.path.exists(os.path.join(p, "saved_model.pb")) for p in (first, second))


def test_variables_by_name_int64_as_float64(trained):
    names = r_support.variable_names(trained)
    assert names == sorted(trained.get_variable_names())
    values = r_support.variable_values(trained)
    assert list(values) == names
    assert values["global_step"].dtype == np.float64 and values["global_step"] == 2
    one = r_support.variable_values(trained, "linear/linear_model/drat/weights")
    assert one["linear/linear_model/drat/weights"].shape == (1, 1)
    with pytest.raises(ValueError, match=r"^Variable not found: foo, bar\. The latest checkpoint "
                                         r"\(model.ckpt-2\) holds global_step, "):
        r_support.variable_values(trained, ["foo", "global_step", "bar"])


def test_an_untrained_model_has_no_variables():
    model = linear_regressor(feature_columns(column_numeric("drat")))
    with pytest.raises(ValueError, match="There is no checkpoint in .* yet: train the model"):
        r_support.variable_names(model)
    with pytest.raises(ValueError, match="There is no checkpoint"):
        r_support.variable_values(model, ["global_step"])
