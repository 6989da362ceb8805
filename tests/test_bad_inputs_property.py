"""Generated bad values for every argument of every public constructor: a clear error.

For each (constructor, argument) a strategy draws only values that argument
must refuse; the call must raise ``TypeError`` or ``ValueError`` (pyhooks'
own errors derive from them) whose message names the argument. Accepting
the value (silence) or any other exception (an obscure failure) fails.
"""

import atexit
import math
import os
import shutil
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pyhooks
from pyhooks.estimators import (column_categorical_with_hash_bucket,
                                column_categorical_with_identity, column_embedding,
                                column_numeric, dnn_regressor, input_fn, linear_regressor,
                                run_config)

OTHER = st.sampled_from([object(), b"1", (1,), {1, 2}, {"a": 1}, [1, 2], [], {}, ["a"],
                         pytest, lambda: 1])
TEXT = st.text(max_size=5)
NAN_INF = st.sampled_from([math.nan, math.inf, -math.inf])
FRACTION = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e12,
                     max_value=1e12).filter(lambda x: not float(x).is_integer())
NOT_A_NUMBER = st.one_of(TEXT, st.booleans(), OTHER)


def number(integer, allow_zero=False, allow_none=True):
    """Values a count or period must refuse."""
    options = [NOT_A_NUMBER, NAN_INF, st.integers(max_value=-1),
               st.floats(max_value=-1e-9, allow_nan=False, allow_infinity=False)]
    if not allow_zero:
        options.append(st.sampled_from([0, 0.0]))
    if integer:
        options.append(FRACTION)
    if not allow_none:
        options.append(st.none())
    return st.one_of(*options)


FLAG = st.one_of(st.integers(), st.floats(), TEXT, st.none(), OTHER)  # not True / False
PATH = st.one_of(st.integers(), st.floats(), st.booleans(), OTHER.filter(
    lambda v: not isinstance(v, (str, bytes))))  # not a path
NAME = st.one_of(st.integers(), st.floats(), st.booleans(), OTHER, st.just(""))

# not a saver, scaffold, writer or session config (none has their methods)
NOT_OBJECT = st.one_of(st.integers(), st.floats(), st.booleans(), TEXT,
                       st.sampled_from([object(), (1,), [1, 2], {"a": 1}, lambda: 1]))
NOT_A_TENSOR = st.one_of(st.integers(), st.floats(), st.booleans(), st.just(""),
                         st.sampled_from([object(), lambda: 1]))

TMP = tempfile.gettempdir()
EMPTY = tempfile.mkdtemp(prefix="pyhooks_property_cwd_")
atexit.register(shutil.rmtree, EMPTY, ignore_errors=True)
COLUMN = column_numeric("x")

# (constructor, base keyword arguments, argument, strategy of bad values)
CASES = [
    (pyhooks.CheckpointSaverHook, {"checkpoint_dir": TMP, "save_steps": 1}, "checkpoint_dir", PATH),
    (pyhooks.CheckpointSaverHook, {"checkpoint_dir": TMP}, "save_steps", number(True)),
    (pyhooks.CheckpointSaverHook, {"checkpoint_dir": TMP}, "save_secs", number(False)),
    (pyhooks.CheckpointSaverHook, {"checkpoint_dir": TMP, "save_steps": 1},
     "checkpoint_basename", NAME),
    (pyhooks.CheckpointSaverHook, {"checkpoint_dir": TMP, "save_steps": 1}, "save_graph_def", FLAG),
    (pyhooks.CheckpointSaverHook, {"checkpoint_dir": TMP, "save_steps": 1}, "save_on_error", FLAG),
    (pyhooks.CheckpointSaverHook, {"checkpoint_dir": TMP, "save_steps": 1}, "saver", NOT_OBJECT),
    (pyhooks.CheckpointSaverHook, {"checkpoint_dir": TMP, "save_steps": 1}, "scaffold",
     NOT_OBJECT),
    (pyhooks.CheckpointSaverHook, {"checkpoint_dir": TMP, "save_steps": 1}, "listeners",
     st.one_of(st.integers(), st.floats(), st.booleans(), TEXT.filter(bool),
               st.sampled_from([object(), lambda: 1, [1], (object(),)]))),
    (pyhooks.CheckpointSaverHook, {"checkpoint_dir": TMP, "save_steps": 1}, "save_secs",
     st.floats(min_value=1e-3, max_value=1e6)),  # both periods
    (pyhooks.SummarySaverHook, {"output_dir": TMP, "save_steps": 1}, "summary_op",
     NOT_A_TENSOR),
    (pyhooks.SummarySaverHook, {"output_dir": TMP, "save_steps": 1, "summary_op": "x"},
     "summary_writer", NOT_OBJECT),
    (pyhooks.StepCounterHook, {}, "summary_writer", NOT_OBJECT),
    (pyhooks.LoggingTensorHook, {"every_n_iter": 1}, "tensors", st.one_of(
        NOT_A_TENSOR, st.lists(NOT_A_TENSOR, min_size=1, max_size=3))),
    (pyhooks.NanTensorHook, {}, "loss_tensor", st.sampled_from([None, "", True, False])),
    (pyhooks.GlobalStepWaiterHook, {}, "wait_until_step", number(True, allow_zero=True,
                                                                 allow_none=False)),
    (pyhooks.GlobalStepWaiterHook, {"wait_until_step": 1}, "timeout_secs", number(False)),
    (pyhooks.HistorySaverHook, {}, "every_n_step", number(True, allow_none=False)),
    (pyhooks.HistorySaverHook, {}, "path", st.one_of(PATH, st.just(""))),
    (pyhooks.LoggingTensorHook, {"tensors": ["x"]}, "every_n_iter", number(True)),
    (pyhooks.LoggingTensorHook, {"tensors": ["x"]}, "every_n_secs", number(False)),
    (pyhooks.LoggingTensorHook, {"tensors": ["x"], "every_n_iter": 1}, "at_end", FLAG),
    (pyhooks.NanTensorHook, {"loss_tensor": "x"}, "fail_on_nan_loss", FLAG),
    (pyhooks.NanTensorHook, {"loss_tensor": "x"}, "fail_on_inf", FLAG),
    (pyhooks.ProfilerHook, {}, "save_steps", number(True)),
    (pyhooks.ProfilerHook, {"save_steps": 1}, "output_dir", PATH),
    (pyhooks.ProfilerHook, {"save_steps": 1}, "show_dataflow", FLAG),
    (pyhooks.ProfilerHook, {"save_steps": 1}, "show_memory", FLAG),
    (pyhooks.ProgressBarHook, {}, "total", number(True)),
    (pyhooks.StepCounterHook, {}, "every_n_steps", number(True)),
    (pyhooks.StepCounterHook, {}, "output_dir", PATH),
    (pyhooks.StopAtStepHook, {}, "num_steps", number(True, allow_zero=True)),
    (pyhooks.SummarySaverHook, {"output_dir": TMP, "summary_op": "x"}, "save_steps", number(True)),
    (pyhooks.SummarySaverHook, {"save_steps": 1, "summary_op": "x"}, "output_dir", PATH),
    (pyhooks.FinalOpsHook, {}, "final_ops", st.one_of(st.integers(), st.floats(), st.booleans(),
                                                     st.just(""), st.lists(st.integers(),
                                                                           min_size=1))),
    (pyhooks.BlockCacheParams, {}, "block_size", number(True)),
    (pyhooks.BlockCacheParams, {}, "max_bytes", number(True)),
    (pyhooks.BlockCacheParams, {}, "max_staleness", number(True, allow_zero=True)),
    (pyhooks.SecondOrStepTimer, {}, "every_steps", number(True)),
    (input_fn, {"data": {"x": [1.0, 2.0], "y": [1.0, 2.0]}, "features": "x", "response": "y"},
     "batch_size", number(True, allow_none=False)),
    (input_fn, {"data": {"x": [1.0, 2.0], "y": [1.0, 2.0]}, "features": "x", "response": "y"},
     "num_epochs", number(True)),
    (input_fn, {"data": {"x": [1.0, 2.0], "y": [1.0, 2.0]}, "features": "x", "response": "y"},
     "queue_capacity", number(True)),  # None: shuffle all rows
    (input_fn, {"data": {"x": [1.0, 2.0], "y": [1.0, 2.0]}, "features": "x", "response": "y"},
     "seed", number(True, allow_zero=True)),
    (input_fn, {"data": {"x": [1.0, 2.0], "y": [1.0, 2.0]}, "features": "x", "response": "y"},
     "shuffle", FLAG.filter(lambda v: v != "auto")),
    (column_numeric, {"key": "x"}, "dtype", st.one_of(st.integers(), st.floats(), st.booleans(),
                                                      TEXT.filter(lambda v: v not in (
                                                          "float", "double", "float32",
                                                          "float64", "int32", "int64")))),
    (column_numeric, {}, "key", NAME),
    (column_categorical_with_identity, {"key": "x"}, "num_buckets", number(True,
                                                                           allow_none=False)),
    (column_categorical_with_hash_bucket, {"key": "x"}, "hash_bucket_size",
     number(True, allow_none=False)),
    (column_embedding, {"categorical_column": column_categorical_with_identity("x", 3)},
     "dimension", number(True, allow_none=False)),
    (linear_regressor, {"feature_columns": [COLUMN]}, "model_dir", st.one_of(PATH, st.just(""))),
    (linear_regressor, {"feature_columns": [COLUMN]}, "label_dimension",
     number(True, allow_none=False)),
    (linear_regressor, {"feature_columns": [COLUMN]}, "seed", number(True, allow_zero=True)),
    (linear_regressor, {"feature_columns": [COLUMN]}, "session_config", NOT_OBJECT),
    (run_config, {}, "session_config", NOT_OBJECT),
    (dnn_regressor, {"hidden_units": [3], "feature_columns": [COLUMN]}, "dropout",
     st.one_of(NOT_A_NUMBER, NAN_INF, st.floats(min_value=1.0, allow_nan=False),
               st.floats(max_value=-1e-9, allow_nan=False))),
]


def case_id(case):
    return f"{getattr(case[0], '__name__', case[0])}-{case[2]}"


@pytest.mark.parametrize("make, base, argument, bad", CASES, ids=map(case_id, CASES))
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_bad_values_are_refused_naming_the_argument(make, base, argument, bad, data):
    value = data.draw(bad, label=argument)
    here = os.getcwd()
    os.chdir(EMPTY)  # a directory named after garbage ("1.0", "True") would appear here
    try:
        made = make(**base, **{argument: value})
    except (TypeError, ValueError) as error:
        assert argument in str(error), f"{type(error).__name__}: {error}"
        assert os.listdir(EMPTY) == []
        return
    finally:
        os.chdir(here)
    pytest.fail(f"{case_id((make, base, argument))}={value!r} was accepted: {made!r}")


def test_sizes_whose_weights_cannot_fit_in_memory_are_refused_at_construction():
    from pyhooks.estimators import (column_categorical_with_vocabulary_list, column_crossed,
                                    dnn_classifier, linear_classifier)

    huge = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 4 + 1  # > memory / 4 B
    ids = column_categorical_with_identity("c", 3)
    calls = {
        "n_classes": lambda: linear_classifier([COLUMN], n_classes=huge),
        "label_dimension": lambda: linear_regressor([COLUMN], label_dimension=huge),
        "hidden_units": lambda: dnn_classifier([4, huge], [COLUMN]),
        "num_buckets": lambda: column_categorical_with_identity("c", huge),
        "hash_bucket_size": lambda: column_categorical_with_hash_bucket("s", huge),
        "dimension": lambda: column_embedding(ids, huge),
        "vocabulary_size": lambda: pyhooks.column_categorical_with_vocabulary_file(
            "s", __file__, vocabulary_size=huge),
    }
    for argument, call in calls.items():
        with pytest.raises(ValueError, match=rf"^`{argument}` = {huge} needs at least \d+ GiB "
                                             r"for one weight matrix, more than this machine's "
                                             r"memory \(\d+ GiB\)\.$"):
            call()
    fine = huge // 100  # below memory: accepted (TensorFlow allocates it only when training)
    assert linear_classifier([COLUMN], n_classes=fine) is not None
    assert column_crossed(["s", "c"], hash_bucket_size=fine) is not None
    assert column_categorical_with_vocabulary_list("s", ["a"]) is not None


NUM = column_numeric("x")
# What bench/probe_inputs.py found refused obscurely or not at all: each now names its argument.
FOUND = [
    (lambda: pyhooks.dnn_linear_combined_regressor([NUM], [NUM], [0]), "dnn_hidden_units"),
    (lambda: pyhooks.dnn_linear_combined_regressor([NUM], [NUM], [2], dnn_dropout=2),
     "dnn_dropout"),
    (lambda: pyhooks.dnn_linear_combined_regressor([NUM], [NUM], [2], dnn_activation_fn=1),
     "dnn_activation_fn"),
    (lambda: pyhooks.dnn_linear_combined_classifier([NUM], [NUM], [2], linear_optimizer=1),
     "linear_optimizer"),
    (lambda: pyhooks.dnn_linear_combined_classifier([NUM], [NUM], [2], dnn_optimizer=True),
     "dnn_optimizer"),
    (lambda: pyhooks.dnn_linear_combined_regressor(1, [NUM], [2]), "linear_feature_columns"),
    (lambda: pyhooks.dnn_linear_combined_regressor([NUM], lambda: 1, [2]), "dnn_feature_columns"),
    (lambda: pyhooks.dnn_linear_combined_regressor([NUM], linear_sparse_combiner="x"),
     "linear_sparse_combiner"),
    (lambda: pyhooks.linear_classifier([NUM], label_vocabulary=1), "label_vocabulary"),
    (lambda: column_categorical_with_hash_bucket("s", 5, dtype=1), "dtype"),
    (lambda: pyhooks.column_crossed(["s", "c"], 5, hash_key="a"), "hash_key"),
    (lambda: pyhooks.column_crossed(object(), 5), "keys"),
    (lambda: pyhooks.column_bucketized(NUM, [True]), "boundaries"),
    (lambda: pyhooks.column_bucketized(NUM, {"a": 1.0}), "boundaries"),
    (lambda: column_numeric("x", default_value=True), "default_value"),
    (lambda: pyhooks.column_categorical_with_vocabulary_list("s", [True]), "vocabulary_list"),
    (lambda: pyhooks.column_categorical_with_vocabulary_list("s", {"a": 1}), "vocabulary_list"),
    (lambda: pyhooks.column_categorical_with_vocabulary_list("s", ["a"], dtype=True), "dtype"),
    (lambda: pyhooks.column_categorical_with_vocabulary_list("s", ["a"], default_value=[1, 2]),
     "default_value"),
    (lambda: pyhooks.train(None, None), "object"),
    (lambda: pyhooks.train(linear_regressor([NUM]), None, saving_listeners=1), "saving_listeners"),
    (lambda: pyhooks.predict(linear_regressor([NUM]), None, as_dict="yes"), "as_dict"),
    (lambda: pyhooks.predict(linear_regressor([NUM]), None, predict_keys=1), "predict_keys"),
    (lambda: pyhooks.evaluate(linear_regressor([NUM]), None, name=""), "name"),
]


@pytest.mark.parametrize("call, argument", FOUND, ids=[a for _, a in FOUND])
def test_what_the_probe_found_is_refused_naming_the_argument(call, argument):
    with pytest.raises((TypeError, ValueError)) as info:
        call()
    assert f"`{argument}`" in str(info.value), str(info.value)


def test_a_wide_and_deep_optimizer_function_giving_no_optimizer_is_named_at_train():
    data = {"x": [1.0, 2.0, 3.0, 4.0], "y": [1.0, 2.0, 3.0, 4.0]}
    model = pyhooks.dnn_linear_combined_regressor([NUM], [NUM], [2],
                                                  dnn_optimizer=lambda: 1)
    with pytest.raises(TypeError, match=r"^`dnn_optimizer` must give a "):
        pyhooks.train(model, input_fn(data, features="x", response="y", batch_size=2), steps=1,
                      hooks=[pyhooks.ProgressBarHook(writer=lambda text: None)])
