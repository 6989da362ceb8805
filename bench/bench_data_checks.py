"""What the data checks cost: this checkout beside an earlier one, on real-sized data.

Run: ``.venv/bin/python bench/bench_data_checks.py --against DIR`` (``--rounds N``,
default 5), where DIR is a checkout of pyhooks (e.g. ``git worktree add /tmp/old
<commit>``); without ``--against`` only this checkout's two sides run. Each side runs in
a fresh process per round (rounds alternate the order); the table shows medians.

Workloads (synthetic data from fixed seeds, 1,000,000 rows: ``x1``, ``x2`` numbers,
``user`` 50,000 distinct strings, ``color`` 8 strings, ``store`` 1,000 ids held as
whole doubles, as R holds them, and a 0/1 label):

* preparing the data: ``input_fn()`` and the estimator's conversion of every column
  for ``train()`` (``Estimator._feeds``), for a ``linear_classifier`` of ``x1``, ``x2``,
  ``user`` hashed into 1,000 buckets, ``color`` as a vocabulary list and ``store``
  hashed into 100 buckets. Done once per input (then cached), not per step;
* training steps of a custom estimator whose ``model_fn`` reads ``x1``, ``x2``,
  ``store`` one-hot through ``column_categorical_with_identity("store", 1000)`` and
  ``store`` hashed into 100 buckets, embedded in 8 dimensions, with ``input_layer()``, then dense 64 / 32 / 1,
  sigmoid cross-entropy, Adagrad 0.05, batch 256: examples/s over 400 steps after 50.
  The checks that ``store`` holds whole numbers run in this graph at every step.

Sides: the earlier checkout and this one fed ``store`` as doubles, and this one fed
``store`` as int64 (no whole-number check to run: the floor for the check).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROWS, BATCH, WARMUP, STEPS = 1_000_000, 256, 50, 400


def data(store_dtype):
    import numpy as np

    rng = np.random.default_rng(7)
    users = np.array([f"u{i}" for i in range(50_000)])
    colors = np.array(["red", "green", "blue", "black", "white", "yellow", "purple", "orange"])
    store = rng.integers(0, 1000, ROWS)
    x1, x2 = rng.normal(size=ROWS), rng.normal(size=ROWS)
    return {"x1": x1, "x2": x2, "user": users[rng.integers(0, 50_000, ROWS)],
            "color": colors[rng.integers(0, 8, ROWS)], "store": store.astype(store_dtype),
            "y": ((x1 + (store % 7) / 7.0) > 0.5).astype(np.int64)}


def side(store_dtype):
    """One side's two measurements, in this process (the tree is on sys.path[0])."""
    import tensorflow as tf

    import pyhooks
    from pyhooks.estimators import (column_categorical_with_hash_bucket,
                                    column_categorical_with_identity,
                                    column_categorical_with_vocabulary_list, column_embedding,
                                    column_indicator,
                                    column_numeric, estimator, estimator_spec, input_fn,
                                    input_layer, layers, linear_classifier)
    from pyhooks.estimators.modes import TRAIN

    columns = data(store_dtype)
    start = time.perf_counter()
    features = ["x1", "x2", "user", "color", "store"]
    train_input = input_fn(columns, features, "y", batch_size=BATCH, num_epochs=None)
    made = time.perf_counter()
    linear = linear_classifier([
        column_numeric("x1"), column_numeric("x2"),
        column_categorical_with_hash_bucket("user", 1000),
        column_categorical_with_vocabulary_list("color", ["red", "green", "blue", "black",
                                                          "white", "yellow", "purple",
                                                          "orange"]),
        column_categorical_with_hash_bucket("store", 100)])
    linear._feeds(train_input, TRAIN)
    converted = time.perf_counter()

    read = [column_numeric("x1"), column_numeric("x2"),
            column_indicator(column_categorical_with_identity("store", 1000)),
            column_embedding(column_categorical_with_hash_bucket("store", 100), 8)]

    def model_fn(features, labels, mode):
        v1 = tf.compat.v1
        hidden = layers.dense(input_layer(features, read), 64, activation=tf.nn.relu)
        hidden = layers.dense(hidden, 32, activation=tf.nn.relu)
        logits = tf.reshape(layers.dense(hidden, 1), [-1])
        loss = v1.losses.sigmoid_cross_entropy(labels, logits)
        step = v1.train.AdagradOptimizer(0.05).minimize(loss, v1.train.get_global_step())
        return estimator_spec(mode, loss=loss, train_op=step)

    class Clock(pyhooks.SessionRunHook):
        def __init__(self):
            self.times = []

        def after_run(self, run_context, run_values):
            self.times.append(time.perf_counter())

    clock = Clock()
    custom_input = input_fn({k: columns[k] for k in ("x1", "x2", "store", "y")},
                            ["x1", "x2", "store"], "y", batch_size=BATCH, num_epochs=None)
    estimator(model_fn).train(custom_input, steps=WARMUP + STEPS, hooks=[clock])
    seconds = clock.times[-1] - clock.times[WARMUP - 1]
    return {"input_fn_s": made - start, "convert_s": converted - made,
            "examples_per_s": STEPS * BATCH / seconds}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--against", help="an earlier checkout of pyhooks")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--side", nargs=2, help=argparse.SUPPRESS)  # tree, store dtype
    args = parser.parse_args()
    if args.side:
        sys.path.insert(0, os.path.abspath(args.side[0]))  # this tree's pyhooks
        print(json.dumps(side(args.side[1])))
        return
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sides = {"this checkout, store as doubles": (here, "float64"),
             "this checkout, store as int64 (no check)": (here, "int64")}
    if args.against:
        sides = {f"{args.against}, store as doubles": (args.against, "float64"), **sides}
    results = {name: [] for name in sides}
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    for round_ in range(args.rounds):
        turn = round_ % len(sides)
        names = list(sides)[turn:] + list(sides)[:turn]
        for name in names:
            tree, dtype = sides[name]
            out = subprocess.run([sys.executable, os.path.abspath(__file__), "--side", tree,
                                  dtype], cwd=tree, env=env, check=True,
                                 capture_output=True, text=True).stdout
            results[name].append(json.loads(out.strip().splitlines()[-1]))
            print(f"round {round_ + 1}: {name}: {results[name][-1]}", file=sys.stderr)
    print(f"\n{args.rounds} rounds, medians; 1,000,000 rows, batch {BATCH}\n")
    print("| side | input_fn() | conversion for train() | custom estimator, examples/s |")
    print("|---|---:|---:|---:|")
    for name, runs in results.items():
        med = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
        print(f"| {name} | {med['input_fn_s'] * 1000:.0f} ms | {med['convert_s'] * 1000:.0f} ms "
              f"| {med['examples_per_s']:,.0f} |")


if __name__ == "__main__":
    main()
