"""The bad-input probe of issue 20: every argument of the public API, bad values, both languages.

For each public function in scope (the hooks, ``session_run_hook()`` /
``session_run_args()``, the estimators, the feature columns, ``input_fn()``,
``train()``, ``evaluate()``, ``predict()``, ``run_config()``) the probe reads
its arguments from the code (``inspect.signature`` in Python, ``formals()``
of the R exports and S3 methods), gives each argument the bad values of its
kind (``KINDS``: ``NULL``/``None``, ``NA``, ``NaN``, ``Inf``, negative, zero,
fractions, wrong types, vectors of length 0 and 2, strings, lists, functions,
environments/objects) and calls the function with one bad value at a time on
top of a valid call. What the constructor accepts is then used: a hook is
given to ``train()``, an estimator, a column or an ``input_fn()`` trained 2
steps. Each call is classified:

* ``clear``: an error whose message names the argument (or the bad string);
* ``at train()``: accepted, then such an error from ``train()``;
* ``obscure``: any other error, or a message of more than 12 lines;
* ``silent``: accepted, and ``train()`` ran;
* ``killed``: the process died (or hung for ``--timeout`` seconds).

Huge values (``1e10``, and ``Inf`` for seconds) are "edge" values: running
with them is fine, so they are counted apart (``works`` / ``clear`` / ...).

Cases run in worker processes (this file with ``--worker``, and
``probe_inputs.R``), one per language; a worker that dies is restarted after
the case that killed it. Run: ``.venv/bin/python bench/probe_inputs.py``
(70 s here, on 2 cores; ``--lang py`` or ``--lang r`` for one
language, ``--list silent`` etc. to print the cases of a class).
"""

from __future__ import annotations

import argparse
import collections
import inspect
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
R_WORKER = os.path.join(ROOT, "bench", "probe_inputs.R")

# The bad values of each kind of argument ("+NULL": NULL too, when the default is not NULL).
COUNT = ["NULL", "NA", "NA_int", "NaN", "Inf", "NegInf", "neg", "zero", "frac", "TRUE", "str",
         "empty", "len0", "len2", "list", "fn", "env"]
SECS = ["NULL", "NA", "NaN", "NegInf", "neg", "zero", "TRUE", "str", "len0", "len2", "list",
        "fn", "env"]
TEXTS = ["NULL", "NA", "NA_chr", "NaN", "one", "TRUE", "empty", "len0", "strs2", "list", "fn",
         "env"]
KINDS = {
    "count": (COUNT, ["huge"]),                       # a positive whole number
    "count0": ([v for v in COUNT if v != "zero"], ["huge"]),  # zero or more
    "secs": (SECS, ["huge", "Inf"]),                  # positive seconds
    "secs0": ([v for v in SECS if v != "zero"], ["huge", "Inf"]),
    "prob": (["NA", "NaN", "Inf", "neg", "one", "huge", "TRUE", "str", "len0", "len2", "list",
              "fn", "env"], []),
    "flag": (["NULL", "NA", "NaN", "one", "zero", "str", "empty", "len0", "len2", "list", "fn",
              "env"], []),
    "dir": (TEXTS, []),                               # a directory or file path
    "name": (TEXTS, []),                              # a non-empty string
    "names": (["NULL", "NA", "NA_chr", "NaN", "one", "TRUE", "empty", "list", "fn", "env"], []),
    "choice": (["NULL", "NA", "NaN", "one", "TRUE", "str", "empty", "len0", "strs2", "list",
                "fn", "env"], []),
    "fn": (["NA", "one", "TRUE", "str", "len2", "list", "env"], []),
    "tensor": (["NULL", "NA", "NaN", "one", "TRUE", "str", "empty", "fn", "env"], []),
    "obj": (["NA", "one", "TRUE", "str", "len2", "fn", "env"], []),
    "columns": (["NULL", "NA", "one", "TRUE", "str", "empty", "len0", "list", "fn", "env"], []),
    "column": (["NULL", "NA", "one", "TRUE", "str", "len0", "list", "fn", "env"], []),
    "ints": (["NULL", "NA", "NaN", "neg", "zero", "frac", "TRUE", "str", "len0", "list", "fn",
              "env"], ["huge"]),
    "numbers": (["NULL", "NA", "NaN", "TRUE", "str", "list", "fn", "env"], []),
    "number": (["NA", "TRUE", "str", "len2", "list", "fn", "env"], []),
    "hooks": (["NA", "one", "TRUE", "str", "len2", "list", "fn", "env"], []),
    "estimator": (["NULL", "NA", "one", "str", "list", "fn", "env"], []),
    "input": (["NULL", "NA", "one", "TRUE", "str", "len2", "list", "env"], []),
    "data": (["NULL", "NA", "one", "TRUE", "str", "len0", "fn", "env"], []),
}
# A data frame and an open file (an R connection, a Python file object) are bad for every kind
# of argument but data, which takes data frames.
KINDS = {kind: (bad + (["file"] if kind == "data" else ["df", "file"]), huge)
         for kind, (bad, huge) in KINDS.items()}
# The kind of each argument, by name (the same names mean the same in every function).
ARGS = {
    "checkpoint_dir": "dir", "save_secs": "secs", "save_steps": "count", "saver": "obj",
    "checkpoint_basename": "name", "scaffold": "obj", "listeners": "obj",
    "save_graph_def": "flag", "save_on_error": "flag", "credentials": "obj",
    "block_cache": "obj", "feed_fn": "fn", "final_ops": "tensor", "final_ops_feed_dict": "obj",
    "wait_until_step": "count0", "timeout_secs": "secs", "every_n_step": "count", "path": "dir",
    "metrics": "names", "loss": "tensor", "tensors": "tensor", "every_n_iter": "count",
    "every_n_secs": "secs", "at_end": "flag", "formatter": "fn", "loss_tensor": "tensor",
    "fail_on_nan_loss": "flag", "fail_on_inf": "flag", "output_dir": "dir",
    "show_dataflow": "flag", "show_memory": "flag", "label": "name", "total": "count",
    "writer": "obj", "mode": "choice", "min_interval": "secs0", "every_n_steps": "count",
    "summary_writer": "obj", "num_steps": "count0", "last_step": "count0", "summary_op": "tensor",
    "begin": "fn", "after_create_session": "fn", "before_run": "fn", "after_run": "fn",
    "end": "fn", "after_error": "fn", "fetches": "tensor", "feed_dict": "obj", "options": "obj",
    "block_size": "count", "max_bytes": "count", "max_staleness": "count0",
    "feature_columns": "columns", "model_dir": "dir", "label_dimension": "count",
    "n_classes": "count", "weight_column": "name", "label_vocabulary": "names",
    "optimizer": "obj", "activation_fn": "choice", "dropout": "prob", "seed": "count0",
    "config": "obj", "session_config": "obj", "hidden_units": "ints",
    "linear_feature_columns": "columns", "dnn_feature_columns": "columns",
    "dnn_hidden_units": "ints", "linear_optimizer": "obj", "dnn_optimizer": "obj",
    "dnn_activation_fn": "choice", "dnn_dropout": "prob", "sparse_combiner": "choice",
    "linear_sparse_combiner": "choice", "key": "name", "shape": "ints", "default_value": "number",
    "dtype": "choice", "normalizer_fn": "fn", "num_buckets": "count", "hash_bucket_size": "count",
    "vocabulary_list": "names", "num_oov_buckets": "count0", "vocabulary_file": "dir",
    "vocabulary_size": "count", "source_column": "column", "boundaries": "numbers",
    "keys": "names", "hash_key": "number", "categorical_column": "column", "dimension": "count",
    "combiner": "choice", "initializer": "fn", "max_norm": "secs", "trainable": "flag",
    "weight_feature_key": "name", "columns": "columns", "names": "names", "data": "data",
    "features": "names", "response": "name", "batch_size": "count", "shuffle": "flag",
    "num_epochs": "count", "queue_capacity": "count", "num_threads": "count", "epochs": "count",
    "object": "estimator", "input_fn": "input", "steps": "count", "hooks": "hooks",
    "max_steps": "count", "saving_listeners": "obj", "name": "name", "checkpoint_path": "dir",
    "simplify": "flag", "predict_keys": "names", "as_dict": "flag", "tf_random_seed": "count0",
    "save_summary_steps": "count", "log_step_count_steps": "count", "keep_checkpoint_max": "count",
    "save_checkpoints_steps": "count", "save_checkpoints_secs": "secs", "train_distribute": "obj",
    "chief_only_hooks": "hooks", "label_key": "name", "label_dtype": "choice",
    "label_default": "number", "steps_per_execution": "count", "state_dict": "fn",
    "load_state_dict": "fn", "state_key": "name", "column_types": "obj", "na": "names",
    "example_spec": "obj", "guess_rows": "count", "agree_every_n_steps": "count",
    "start_delay_secs": "secs0", "throttle_secs": "secs0", "x": "data", "y": "data",
    "target_column": "name", "keep_checkpoint_every_n_hours": "secs",
}
# Values that are valid for one argument although bad for its kind.
VALID = {
    "ProfilerHook.output_dir": {"empty"}, "hook_profiler.output_dir": {"empty"},
    "label": {"NULL", "empty"},                     # no label
    "optimizer": {"str"}, "linear_optimizer": {"str"}, "dnn_optimizer": {"str"},
    "shuffle": set(),
    "metrics": {"len0", "strs2"}, "keys": {"strs2"}, "names": {"NULL", "df"},
    "tensors": {"str"}, "loss": {"str"}, "final_ops": {"str"}, "summary_op": {"str"},
    "fetches": {"str", "one", "NULL", "empty", "NaN", "TRUE"},  # any structure of values
    "vocabulary_list": {"one"}, "label_vocabulary": {"strs2"},
    "default_value": {"NULL"}, "hash_key": {"NULL"},
    "predict_keys": {"NULL"}, "response": {"NULL"},
    "credentials": {"str"},  # a path
    "credentials_py": {"list"},
    "feed_dict": {"list"}, "final_ops_feed_dict": {"list"},
    "num_epochs": {"NULL"}, "epochs": {"NULL"}, "queue_capacity": {"NULL"},  # NULL: forever
    "FinalOpsHook.final_ops": {"NULL"}, "hook_final_ops.final_ops": {"NULL"},  # nothing to run
    "feature_columns.names": {"list"},              # R: a named list is data with names
    "writer": {"fn"},                               # ProgressBarHook: a callable taking the text
    "StepCounterHook.output_dir": {"empty"}, "hook_step_counter.output_dir": {"empty"},  # none
    "save_summary_steps": {"NULL", "zero"}, "log_step_count_steps": {"NULL", "zero"},  # off
    "save_checkpoints_steps": {"NULL"}, "save_checkpoints_secs": {"NULL"},  # at the end only
    "column_numeric.dtype": {"NULL"},               # the default, float32
    "agree_every_n_steps": {"NULL"},                # no agreement between workers
    "eval_spec.steps": {"NULL"},                    # until the input ends
    "features_r": {"one"}, "response_r": {"one"},   # R: a column position
    "hidden_units_r": {"list"}, "dnn_hidden_units_r": {"list"}, "boundaries_r": {"list"},  # R lists
    "linear_feature_columns": {"len0"}, "dnn_feature_columns": {"len0"},  # none: the other part
    "column_categorical_with_vocabulary_list.vocabulary_list": {"empty"},  # the string ""
}
# Arguments that exclude each other: probing one drops the other from the valid call.
EXCLUSIVE = {"save_secs": ["save_steps"], "every_n_secs": ["every_n_iter", "every_n_steps"],
             "summary_op": ["scaffold"], "last_step": ["num_steps"], "saver": ["scaffold"]}

PY_DATA = "dict(x=X, y=Y, c=C, s=S, b=B)"
# name: (python callable, R callable, what runs after an accepted call, python base, R base)
HOOK_PY, HOOK_R = "train(EST, INP, steps=2, hooks=[made])", \
    "train(EST, INP, steps = 2, hooks = list(made))"
LIN_PY, LIN_R = ("train(linear_regressor([made]), INP_ALL, steps=2)",
                 "train(linear_regressor(feature_columns(made)), INP_ALL, steps = 2)")
DNN_PY, DNN_R = ("train(dnn_regressor([2], [made]), INP_ALL, steps=2)",
                 "train(dnn_regressor(2, feature_columns(made)), INP_ALL, steps = 2)")
EST_PY, EST_R = "train(made, INP_ALL, steps=2)", "train(made, INP_ALL, steps = 2)"
CLS_PY, CLS_R = "train(made, INP_CLS, steps=2)", "train(made, INP_CLS, steps = 2)"
PARSE_PY, PARSE_R = ("tf.io.parse_example([RECORD], made)",
                     "tf$io$parse_example(list(RECORD), made)")
FUNCTIONS = [
    ("CheckpointSaverHook", "hook_checkpoint_saver", HOOK_PY, HOOK_R,
     "dict(checkpoint_dir=tmp(), save_steps=1)", "list(checkpoint_dir = tmp(), save_steps = 1)"),
    ("ConfigureGcsHook", "hook_configure_gcs", HOOK_PY, HOOK_R, "{}", "list()"),
    ("FeedFnHook", "hook_feed_fn", HOOK_PY, HOOK_R, "dict(feed_fn=lambda: {})",
     "list(feed_fn = function() list())"),
    ("FinalOpsHook", "hook_final_ops", HOOK_PY, HOOK_R, "dict(final_ops='global_step:0')",
     "list(final_ops = 'global_step:0')"),
    ("GlobalStepWaiterHook", "hook_global_step_waiter", HOOK_PY, HOOK_R,
     "dict(wait_until_step=0, timeout_secs=1)", "list(wait_until_step = 0, timeout_secs = 1)"),
    ("HistorySaverHook", "hook_history_saver", HOOK_PY, HOOK_R, "{}", "list()"),
    ("LoggingTensorHook", "hook_logging_tensor", HOOK_PY, HOOK_R,
     "dict(tensors=['global_step:0'], every_n_iter=1)",
     "list(tensors = 'global_step:0', every_n_iter = 1)"),
    ("NanTensorHook", "hook_nan_tensor", HOOK_PY, HOOK_R, "dict(loss_tensor=LOSS)",
     "list(loss_tensor = LOSS)"),
    ("ProfilerHook", "hook_profiler", HOOK_PY, HOOK_R, "dict(save_steps=1, output_dir=tmp())",
     "list(save_steps = 1, output_dir = tmp())"),
    ("ProgressBarHook", "hook_progress_bar", HOOK_PY, HOOK_R, "dict(writer=QUIET)",
     "list(writer = QUIET)"),
    ("StepCounterHook", "hook_step_counter", HOOK_PY, HOOK_R, "dict(output_dir=tmp())",
     "list(output_dir = tmp())"),
    ("StopAtStepHook", "hook_stop_at_step", HOOK_PY, HOOK_R, "dict(num_steps=1)",
     "list(num_steps = 1)"),
    ("SummarySaverHook", "hook_summary_saver", HOOK_PY, HOOK_R,
     "dict(save_steps=1, output_dir=tmp(), scaffold=GraphSummaries())",
     "list(save_steps = 1, output_dir = tmp())"),
    ("BlockCacheParams", None, None, None, "{}", None),
    ("LambdaHook", "session_run_hook", HOOK_PY, HOOK_R, "{}", "list()"),
    ("SessionRunArgs", "session_run_args",
     "train(EST, INP, steps=2, hooks=[LambdaHook(before_run=lambda c: made)])",
     "train(EST, INP, steps = 2, hooks = list(session_run_hook(before_run = function(c) made)))",
     "dict(fetches='global_step:0')", "list(step = 'global_step:0')"),
    ("linear_regressor", "linear_regressor", EST_PY, EST_R, "dict(feature_columns=[NUM])",
     "list(feature_columns = NUM)"),
    ("linear_classifier", "linear_classifier", CLS_PY, CLS_R, "dict(feature_columns=[NUM])",
     "list(feature_columns = NUM)"),
    ("dnn_regressor", "dnn_regressor", EST_PY, EST_R,
     "dict(hidden_units=[2], feature_columns=[NUM])", "list(hidden_units = 2, feature_columns = NUM)"),
    ("dnn_classifier", "dnn_classifier", CLS_PY, CLS_R,
     "dict(hidden_units=[2], feature_columns=[NUM])", "list(hidden_units = 2, feature_columns = NUM)"),
    ("dnn_linear_combined_regressor", "dnn_linear_combined_regressor", EST_PY, EST_R,
     "dict(linear_feature_columns=[NUM], dnn_feature_columns=[NUM], dnn_hidden_units=[2])",
     "list(linear_feature_columns = NUM, dnn_feature_columns = NUM, dnn_hidden_units = 2)"),
    ("dnn_linear_combined_classifier", "dnn_linear_combined_classifier", CLS_PY, CLS_R,
     "dict(linear_feature_columns=[NUM], dnn_feature_columns=[NUM], dnn_hidden_units=[2])",
     "list(linear_feature_columns = NUM, dnn_feature_columns = NUM, dnn_hidden_units = 2)"),
    ("run_config", "run_config", "train(linear_regressor([NUM], config=made), INP_ALL, steps=2)",
     "train(linear_regressor(NUM, config = made), INP_ALL, steps = 2)", "{}", "list()"),
    ("column_numeric", "column_numeric", DNN_PY, DNN_R, "dict(key='x')", "list('x')"),
    ("column_bucketized", "column_bucketized", DNN_PY, DNN_R,
     "dict(source_column=NUM, boundaries=[1.0, 2.0])",
     "list(source_column = NUM, boundaries = c(1, 2))"),
    ("column_categorical_with_identity", "column_categorical_with_identity", LIN_PY, LIN_R,
     "dict(key='c', num_buckets=3)", "list('c', num_buckets = 3)"),
    ("column_categorical_with_hash_bucket", "column_categorical_with_hash_bucket", LIN_PY, LIN_R,
     "dict(key='s', hash_bucket_size=5)", "list('s', hash_bucket_size = 5)"),
    ("column_categorical_with_vocabulary_list", "column_categorical_with_vocabulary_list",
     LIN_PY, LIN_R, "dict(key='s', vocabulary_list=['a', 'b'])",
     "list('s', vocabulary_list = c('a', 'b'))"),
    ("column_categorical_with_vocabulary_file", "column_categorical_with_vocabulary_file",
     LIN_PY, LIN_R, "dict(key='s', vocabulary_file=VOCAB)", "list('s', vocabulary_file = VOCAB)"),
    ("column_categorical_weighted", "column_categorical_weighted", LIN_PY, LIN_R,
     "dict(categorical_column=CAT, weight_feature_key='x')",
     "list(categorical_column = CAT, weight_feature_key = 'x')"),
    ("column_crossed", "column_crossed", LIN_PY, LIN_R,
     "dict(keys=['s', 'c'], hash_bucket_size=5)", "list(keys = c('s', 'c'), hash_bucket_size = 5)"),
    ("column_indicator", "column_indicator", DNN_PY, DNN_R, "dict(categorical_column=CAT)",
     "list(categorical_column = CAT)"),
    ("column_embedding", "column_embedding", DNN_PY, DNN_R,
     "dict(categorical_column=CAT, dimension=2)", "list(categorical_column = CAT, dimension = 2)"),
    ("feature_columns", "feature_columns", "train(linear_regressor(made), INP_ALL, steps=2)",
     "train(linear_regressor(made), INP_ALL, steps = 2)", "{}", "list(NUM)"),
    ("input_fn", "input_fn", "train(EST, made, steps=2)", "train(EST, made, steps = 2)",
     f"dict(data={PY_DATA}, features=['x'], response='y', batch_size=4)",
     "list(data = DATA, features = 'x', response = 'y', batch_size = 4)"),
    ("numpy_input_fn", "numpy_input_fn", "train(EST, made, steps=2)",
     "train(EST, made, steps = 2)", "dict(x={'x': X}, y=Y, batch_size=4, shuffle=True)",
     "list(x = list(x = DATA$x), y = DATA$y, batch_size = 4, shuffle = TRUE)"),
    ("pandas_input_fn", None, "train(EST, made, steps=2)", None,
     "dict(x=pandas.DataFrame({'x': X}), y=pandas.Series(Y), batch_size=4, shuffle=True, "
     "target_column='y')", None),
    ("train", "train", None, None, "dict(object=EST, input_fn=INP, steps=2)",
     "list(EST, input_fn = INP, steps = 2)"),
    ("evaluate", "evaluate", None, None, "dict(object=EST, input_fn=INP, steps=1)",
     "list(EST, input_fn = INP, steps = 1)"),
    ("predict", "predict", None, None, "dict(object=EST, input_fn=INP)",
     "list(EST, input_fn = INP)"),
    ("train_spec", "train_spec", "train_and_evaluate(EST, made, eval_spec(INP, throttle_secs=0))",
     "train_and_evaluate(EST, made, eval_spec(INP, throttle_secs = 0))", "dict(input_fn=INP)",
     "list(INP)"),
    ("eval_spec", "eval_spec", "train_and_evaluate(EST, train_spec(INP), made)",
     "train_and_evaluate(EST, train_spec(INP), made)", "dict(input_fn=INP, throttle_secs=0)",
     "list(INP, throttle_secs = 0)"),
    ("classifier_parse_example_spec", "classifier_parse_example_spec", PARSE_PY, PARSE_R,
     "dict(feature_columns=[NUM], label_key='b')", "list(NUM, label_key = 'b')"),
    ("regressor_parse_example_spec", "regressor_parse_example_spec", PARSE_PY, PARSE_R,
     "dict(feature_columns=[NUM], label_key='y')", "list(NUM, label_key = 'y')"),
]
R_METHODS = {"train": "train.pyhooks_estimator", "evaluate": "evaluate.pyhooks_estimator",
             "predict": "predict.pyhooks_estimator", "input_fn": "input_fn.data.frame"}

CLASSES = ["clear", "at train()", "obscure", "silent", "killed"]


# ---------------------------------------------------------------- the Python worker
def py_value(label):
    import math

    if label == "df":
        import pandas
        return pandas.DataFrame({"a": [1.0]})
    if label == "file":
        return open(os.devnull)  # noqa: SIM115 - an open file object is the bad value
    return {"NULL": None, "NaN": math.nan, "Inf": math.inf, "NegInf": -math.inf, "neg": -1,
            "zero": 0, "huge": 1e10, "frac": 2.5, "TRUE": True, "one": 1, "str": "a",
            "empty": "", "len0": [], "len2": [1, 2], "strs2": ["a", "b"], "list": {"a": 1},
            "fn": lambda *a: 1, "env": object()}[label]


def py_namespace():
    import io

    import pyhooks
    from pyhooks import estimators

    ns = {name: getattr(pyhooks, name) for name in pyhooks.__all__}
    ns.update({name: getattr(estimators, name) for name in estimators.__all__})
    root = tempfile.mkdtemp(prefix="pyhooks-probe-")
    ns["tmp"] = lambda: tempfile.mkdtemp(dir=root)
    ns.update(X=[i / 4 for i in range(16)], Y=[(i % 5) * 1.5 for i in range(16)],
              C=[i % 3 for i in range(16)], S=["ab"[i % 2] for i in range(16)],
              B=[i % 2 for i in range(16)], QUIET=io.StringIO())
    vocab = os.path.join(root, "vocab.txt")
    with open(vocab, "w") as stream:
        stream.write("a\nb\n")
    ns["VOCAB"] = vocab
    from pyhooks.estimators.tensorboard import GraphSummaries

    ns["GraphSummaries"] = GraphSummaries
    import tensorflow as tf

    ns["tf"] = tf
    import pandas

    ns["pandas"] = pandas
    ns["RECORD"] = tf.train.Example(features=tf.train.Features(feature={
        "x": tf.train.Feature(float_list=tf.train.FloatList(value=[0.5])),
        "y": tf.train.Feature(float_list=tf.train.FloatList(value=[1.5])),
        "b": tf.train.Feature(int64_list=tf.train.Int64List(value=[1]))})).SerializeToString()
    exec("DATA = " + PY_DATA + "\n"
         "NUM = column_numeric('x'); CAT = column_categorical_with_identity('c', 3)\n"
         "INP = input_fn(DATA, features=['x'], response='y', batch_size=4)\n"
         "INP_ALL = input_fn(DATA, features=['x', 'c', 's'], response='y', batch_size=4)\n"
         "INP_CLS = input_fn(DATA, features=['x'], response='b', batch_size=4)\n"
         "EST = linear_regressor([NUM], model_dir=tmp())\n"
         "train(EST, INP, steps=1, hooks=[ProgressBarHook(writer=QUIET)])\n"
         "LOSS = 'global_step:0'\n", ns)
    return ns


def names_it(text, arg, label):
    """Whether ``text`` names ``arg`` (as a word: not ``saver`` in ``saver_def``)."""
    import re

    return (re.search(rf"(?<![\w.]){re.escape(arg)}(?!\w)", text) is not None
            or (label in ("str", "strs2") and "'a'" in text))


def py_worker(path):
    import warnings

    warnings.simplefilter("ignore")
    ns = py_namespace()
    with open(path) as stream:
        cases = [json.loads(line) for line in stream]
    print("@@READY", flush=True)
    for case in cases:
        print("\n@@START", case["id"], flush=True)
        start = time.monotonic()
        outcome, text = py_case(ns, case)
        print("\n@@RESULT", json.dumps([case["id"], outcome, text[:2000],
                                        round(time.monotonic() - start, 2)]), flush=True)


def py_case(ns, case):
    arg, label = case["arg"], case["label"]
    ns["QUIET"].seek(0)
    ns["QUIET"].truncate()
    try:
        base = eval(case["base"], ns)
        for name in case["drop"]:
            base.pop(name, None)
        base[arg] = py_value(label)
        made = eval(case["fun"], ns)(**base)
    except Exception as error:  # noqa: BLE001 - the answer is the error
        return classify(error, arg, label, "clear"), describe(error)
    if not case["then"]:
        return "silent", repr(made)[:200]
    try:
        eval(case["then"], dict(ns, made=made))
    except Exception as error:  # noqa: BLE001
        return classify(error, arg, label, "at train()"), describe(error)
    return "silent", repr(made)[:200]


def describe(error):
    notes = "\n".join(getattr(error, "__notes__", []))
    return f"{type(error).__name__}: {error}" + (f"\n{notes}" if notes else "")


def classify(error, arg, label, named):
    text = describe(error)
    return named if names_it(text, arg, label) and len(text.splitlines()) <= 12 else "obscure"


# ---------------------------------------------------------------- the driver
def python_cases():
    import pyhooks
    from pyhooks import estimators

    cases = []
    for py, _, then, _, base, _ in FUNCTIONS:
        fn = getattr(pyhooks, py, None) or getattr(estimators, py)
        for name, parameter in inspect.signature(fn).parameters.items():
            if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
                continue
            cases += arg_cases("py", py, py, name, parameter.default is None, base, then)
    return cases


def r_formals():
    script = ("suppressMessages(library(pyhooks)); m <- c(%s);"
              "for (f in c(%s)) { fn <- if (f %%in%% names(m)) getFromNamespace(m[[f]], "
              "'pyhooks') else getExportedValue('pyhooks', f);"
              "for (a in names(formals(fn))) "
              "cat(f, a, is.null(formals(fn)[[a]]), '\\n') }") % (
        ", ".join(f"{k} = '{v}'" for k, v in R_METHODS.items()),
        ", ".join(f"'{r}'" for _, r, *_ in FUNCTIONS if r))
    out = subprocess.run(["Rscript", "-e", script], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, R_LIBS=os.path.join(ROOT, ".venv", "R-library")))
    if out.returncode:
        raise SystemExit(out.stderr)
    return [line.split() for line in out.stdout.splitlines() if line.strip()]


def r_cases():
    by_name = {r: (then, base) for _, r, _, then, _, base in FUNCTIONS if r}
    cases = []
    for fun, arg, default_null in r_formals():
        if arg == "...":
            continue
        then, base = by_name[fun]
        cases += arg_cases("r", fun, fun, arg, default_null == "TRUE", base, then)
    return cases


def arg_cases(lang, key, fun, arg, default_none, base, then):
    kind = ARGS.get(arg)
    if kind is None:
        raise SystemExit(f"probe_inputs: no kind for argument {arg!r} of {key}: add it to ARGS")
    bad, edge = KINDS[kind]
    valid = VALID.get(f"{key}.{arg}", set()) | VALID.get(arg, set()) | VALID.get(
        f"{arg}_{lang}", set())
    if default_none:
        valid = valid | {"NULL"}
    r_only = {"NA", "NA_int", "NA_chr"}
    out = []
    for label in bad + edge:
        if label in valid or (lang == "py" and label in r_only):
            continue
        out.append({"lang": lang, "fun": fun, "arg": arg, "label": label, "base": base,
                    "then": then or "", "edge": label in edge, "drop": EXCLUSIVE.get(arg, [])})
    return out


def limit_memory():
    """At most ``MEMORY`` bytes of address space for a worker: a huge size fails in it alone."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


MEMORY = 8 << 30


def run_worker(lang, cases, timeout):
    """Runs ``cases`` in worker processes; returns ``{id: (class, text)}``."""
    results = {}
    todo = list(cases)
    workdir = tempfile.mkdtemp(prefix="pyhooks-probe-cwd-")
    while todo:
        path = os.path.join(workdir, f"cases-{lang}.jsonl")
        with open(path, "w") as stream:
            for case in todo:
                stream.write(json.dumps(case) + "\n")
        if lang == "py":
            command = [sys.executable, os.path.abspath(__file__), "--worker", path]
        else:
            command = ["Rscript", R_WORKER, path]
        env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2", TMPDIR=workdir,
                   R_LIBS=os.path.join(ROOT, ".venv", "R-library"),
                   RETICULATE_PYTHON=os.path.join(ROOT, ".venv", "bin", "python"))
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                   cwd=workdir, env=env, start_new_session=True,
                                   preexec_fn=limit_memory)
        current, deadline = None, time.monotonic() + 300
        pending, ended = b"", False
        while not ended:
            ready, _, _ = select.select([process.stdout], [], [], 1.0)
            if not ready:
                if time.monotonic() > deadline:
                    os.killpg(process.pid, 9)
                    if current is not None:
                        results[current] = ("killed", f"hung for more than {timeout} s")
                    break
                continue
            chunk = os.read(process.stdout.fileno(), 1 << 16)  # never waits for a newline
            ended = not chunk
            *lines, pending = (pending + chunk).split(b"\n")
            for line in map(lambda b: b.decode("utf-8", "replace"), lines):
                if line.startswith("@@START"):
                    current = int(line.split()[1])
                    deadline = time.monotonic() + timeout
                elif line.startswith("@@RESULT"):
                    number, outcome, text, _ = json.loads(line[len("@@RESULT"):])
                    results[number] = (outcome, text)
                    current = None
                    if len(results) % 100 == 0:
                        print(f"[{lang}] {len(results)}/{len(cases)} cases", file=sys.stderr,
                              flush=True)
        process.stdout.close()
        code = process.wait()
        if current is not None and current not in results:
            results[current] = ("killed", f"the worker died (exit status {code})")
            print(f"[{lang}] case {current} killed its worker ({code})", file=sys.stderr,
                  flush=True)
        left = [case for case in todo if case["id"] not in results]
        if len(left) == len(todo):
            raise SystemExit(f"probe_inputs: the {lang} worker ran no case (status {code})")
        todo = left
    shutil.rmtree(workdir, ignore_errors=True)  # the workers' files: TMPDIR pointed here
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker")
    parser.add_argument("--lang", choices=["py", "r", "both"], default="both")
    parser.add_argument("--timeout", type=float, default=30)
    parser.add_argument("--list", action="append", default=[],
                        help="print the cases of this class (e.g. silent, obscure)")
    parser.add_argument("--only", help="only the functions whose name contains this")
    options = parser.parse_args()
    if options.worker:
        return py_worker(options.worker)
    cases = {"py": python_cases() if options.lang != "r" else [],
             "r": r_cases() if options.lang != "py" else []}
    number = 0
    for lang in cases:
        if options.only:
            cases[lang] = [c for c in cases[lang] if options.only in c["fun"]]
        for case in cases[lang]:
            case["id"] = number
            number += 1
    start = time.monotonic()
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        futures = {lang: pool.submit(run_worker, lang, todo, options.timeout)
                   for lang, todo in cases.items() if todo}
        results = {lang: future.result() for lang, future in futures.items()}
    report(cases, results, options.list, time.monotonic() - start)


def report(cases, results, shown, seconds):
    table = {lang: collections.Counter() for lang in cases}
    edges = {lang: collections.Counter() for lang in cases}
    spelled = collections.Counter()
    import re

    python_spelling = re.compile(r"\b(None|True|False)\b|\{'|\['")  # not R's NULL, TRUE, c()
    for lang, todo in cases.items():
        for case in todo:
            outcome, text = results.get(lang, {}).get(case["id"], ("killed", "no result"))
            (edges if case["edge"] else table)[lang][outcome] += 1
            if lang == "r" and outcome in ("clear", "at train()") and python_spelling.search(
                    text):
                spelled["python"] += 1
            if outcome in shown or (case["edge"] and f"edge-{outcome}" in shown):
                print(f"[{lang}] {case['fun']}({case['arg']} = {case['label']})"
                      f"{' (edge)' if case['edge'] else ''}: {outcome}: "
                      f"{text.strip().splitlines()[0] if text.strip() else ''}"
                      f"{' ...' if len(text.strip().splitlines()) > 1 else ''}")
    langs = [lang for lang in ("r", "py") if cases[lang]]
    title = {"r": "R", "py": "Python"}
    print(f"\nbad inputs through {len(FUNCTIONS)} public functions ({seconds:.0f} s)\n")
    print("| input | " + " | ".join(title[lang] for lang in langs) + " |")
    print("|---|" + "---|" * len(langs))
    rows = [("clear error naming the argument", "clear"), ("... only at `train()`", "at train()"),
            ("obscure error or traceback", "obscure"), ("silently accepted", "silent"),
            ("process killed or hung", "killed")]
    for text, key in rows:
        print(f"| {text} | " + " | ".join(str(table[lang][key]) for lang in langs) + " |")
    print("| bad inputs, total | " + " | ".join(str(sum(table[lang].values())) for lang in langs)
          + " |")
    print("| huge values (`1e10`, `Inf` seconds): ran / refused clearly / obscure / killed | "
          + " | ".join(f"{edges[lang]['silent']} / {edges[lang]['clear'] + edges[lang]['at train()']}"
                       f" / {edges[lang]['obscure']} / {edges[lang]['killed']}" for lang in langs)
          + " |")
    if "r" in langs:
        print(f"\nclear R messages spelling a value the Python way (None, True, {{'a': ...}}, "
              f"['a']): {spelled['python']}")


if __name__ == "__main__":
    main()
