"""A custom estimator fed by tf.estimator's kind of input_fn (a function returning a tf.data.Dataset).

Run: ``.venv/bin/python bench/bench_dataset_input.py`` (``BENCH_ROUNDS``, default 5).

Workload (a custom) of ``bench_estimators_data.py``: 100,000 rows x 20 numeric
columns, batch 256, shuffled over all rows, its ``custom_model_fn`` ([64, 32]
ReLU, sigmoid cross-entropy, Adagrad 0.05). Three ways, in one process, rounds
alternating (the order changes each round), medians:

* *input_fn()*: pyhooks' own input of the columns (``input_fn(columns, ...)``);
* *tf.data input_fn*: the function tf.estimator 2.15's side of
  ``bench_estimators_data.py`` gives it, ``from_tensor_slices((features,
  labels)).shuffle(n).repeat().batch(256).prefetch(AUTOTUNE)``, as a tf.estimator
  user wrote it;
* *floor*: that dataset and that ``model_fn`` in a private graph, a plain
  ``Session.run(train_op)`` loop (no hooks, no checkpoints).

Examples/s over STEPS steps after WARMUP inside one call (a hook or the loop
counts), and the wall time of a whole ``train(steps=1)`` call, which for a
tf.data input_fn builds its graph anew (as tf.estimator did) and restores the
latest checkpoint.
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_estimators_data import (A_COLS, STEPS, WARMUP, Clock, columns_a,  # noqa: E402
                                   custom_model_fn)

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))
BATCH = 256


def main():
    import pyhooks
    from pyhooks import estimators as E
    from pyhooks.estimators import _quiet, layers

    tf = _quiet.import_tensorflow()
    v1 = tf.compat.v1
    columns = columns_a()
    names = [k for k in columns if k != "label"]
    n = len(columns["label"])
    fcs = E.feature_columns(*[E.column_numeric(f"x{i}") for i in range(A_COLS)])
    model_fn = custom_model_fn(tf, layers.dense, E.input_layer, E.estimator_spec)
    own = E.input_fn(columns, names, "label", batch_size=BATCH, shuffle=True, num_epochs=None)
    features = {k: columns[k] for k in names}

    def dataset_fn():
        return (tf.data.Dataset.from_tensor_slices((features, columns["label"]))
                .shuffle(n).repeat().batch(BATCH).prefetch(tf.data.AUTOTUNE))

    class Timer(pyhooks.SessionRunHook):
        def __init__(self):
            self.clock = Clock()

        def after_run(self, run_context, run_values):
            self.clock.tick()

    def quiet_bar():
        return pyhooks.ProgressBarHook(writer=lambda text: None)

    models = {kind: E.estimator(model_fn, params={"columns": fcs})
              for kind in ("input_fn()", "tf.data input_fn")}
    inputs = {"input_fn()": own, "tf.data input_fn": dataset_fn}

    def estimator_rate(kind):
        timer = Timer()
        models[kind].train(inputs[kind], steps=WARMUP + STEPS, hooks=[timer, quiet_bar()])
        return timer.clock.rate(BATCH)

    def estimator_call(kind):
        start = time.perf_counter()
        models[kind].train(inputs[kind], steps=1, hooks=[quiet_bar()])
        return time.perf_counter() - start

    graph = tf.Graph()
    with graph.as_default():
        step = v1.train.get_or_create_global_step()
        batch_features, batch_labels = v1.data.make_one_shot_iterator(dataset_fn()).get_next()
        spec = model_fn(batch_features, batch_labels, "train", {"columns": fcs})
        init = v1.global_variables_initializer()
    session = v1.Session(graph=graph)
    session.run(init)
    del step

    def floor_rate(_kind):
        clock = Clock()
        for _ in range(WARMUP + STEPS):
            session.run(spec.train_op)
            clock.tick()
        return clock.rate(BATCH)

    sides = {"input_fn()": estimator_rate, "tf.data input_fn": estimator_rate,
             "floor": floor_rate}
    rates = {kind: [] for kind in sides}
    calls = {kind: [] for kind in models}
    for kind in sides:  # warm-up: graphs built, checkpoints written once
        sides[kind](kind)
    order = list(sides)
    for _ in range(ROUNDS):
        random.shuffle(order)
        for kind in order:
            rates[kind].append(sides[kind](kind))
            if kind in calls:
                calls[kind].append(estimator_call(kind))
    print(f"| input | examples/s (median of {ROUNDS}) | / floor | train(steps=1) call, s |")
    print("|---|---:|---:|---:|")
    floor = statistics.median(rates["floor"])
    for kind in sides:
        rate = statistics.median(rates[kind])
        call = f"{statistics.median(calls[kind]):.3f}" if kind in calls else "-"
        print(f"| {kind} | {rate:,.0f} | {rate / floor:.2f}x | {call} |")


if __name__ == "__main__":
    main()
