"""Training speed of custom and wide & deep estimators beside canned ones and a hand-written floor.

Same data (20,000 rows, 6 numeric columns, a numeric response), batch size
128, a 2x32 ReLU network where there is one, plain SGD where the model is
written by hand. Each row trains ``STEPS`` steps after a warm-up call (graph
building and the first steps are not timed) and reports steps per second and
microseconds per step; every run is bounded by ``BUDGET`` seconds.

    .venv/bin/python bench/bench_custom_estimators.py
"""

from __future__ import annotations

import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("PYHOOKS_PROGRESS", "plain")

import numpy as np  # noqa: E402

STEPS = 400
BUDGET = 60.0
ROWS = 20_000
NAMES = [f"x{i}" for i in range(6)]


def make_data():
    rng = np.random.default_rng(0)
    data = {name: rng.normal(size=ROWS) for name in NAMES}
    data["y"] = sum((i + 1) * data[n] for i, n in enumerate(NAMES)) + rng.normal(size=ROWS)
    return data


def silent_hooks():
    from pyhooks import HistorySaverHook, ProgressBarHook

    return [ProgressBarHook(writer=lambda text: None), HistorySaverHook(every_n_step=100)]


def time_estimator(model, data):
    from pyhooks.estimators import input_fn

    inp = input_fn(data, NAMES, "y", batch_size=128, num_epochs=None)
    model.train(inp, steps=20, hooks=silent_hooks())  # graph, session, first steps
    start = time.perf_counter()
    model.train(inp, steps=STEPS, hooks=silent_hooks())
    return time.perf_counter() - start


def custom_model_fn(features, labels, mode):
    import tensorflow as tf

    from pyhooks.estimators import estimator_spec, layers

    v1 = tf.compat.v1
    net = tf.cast(tf.convert_to_tensor(features), tf.float32)
    net = layers.dense(net, 32, activation=tf.nn.relu)
    net = layers.dense(net, 32, activation=tf.nn.relu)
    out = tf.reshape(layers.dense(net, 1), [-1])
    loss = v1.losses.mean_squared_error(tf.cast(labels, tf.float32), out)
    train_op = v1.train.AdagradOptimizer(0.05).minimize(loss,
                                                        global_step=v1.train.get_global_step())
    return estimator_spec(mode, predictions=out, loss=loss, train_op=train_op)


def floor(data):
    """The same network and input pipeline in a bare tf.compat.v1 session loop."""
    import tensorflow as tf

    v1 = tf.compat.v1
    with tf.Graph().as_default():
        x = np.stack([data[n] for n in NAMES], axis=1).astype(np.float32)
        y = data["y"].astype(np.float32)
        dataset = tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(128)
        features, labels = v1.data.make_one_shot_iterator(dataset).get_next()
        net = features
        for width in (32, 32):
            kernel = v1.get_variable(f"k{width}{net.shape[1]}", [net.shape[1], width])
            net = tf.nn.relu(tf.matmul(net, kernel))
        out = tf.reshape(tf.matmul(net, v1.get_variable("out", [32, 1])), [-1])
        loss = tf.reduce_mean(tf.square(out - labels))
        step = v1.train.get_or_create_global_step()
        train_op = v1.train.AdagradOptimizer(0.05).minimize(loss, global_step=step)
        with v1.Session() as session:
            session.run(v1.global_variables_initializer())
            run = session.make_callable([train_op, loss])
            for _ in range(20):
                run()
            start = time.perf_counter()
            for _ in range(STEPS):
                run()
            return time.perf_counter() - start


def main():
    from pyhooks.estimators import (
        column_numeric,
        dnn_linear_combined_regressor,
        dnn_regressor,
        estimator,
        feature_columns,
        linear_regressor,
    )

    data = make_data()
    columns = feature_columns(*[column_numeric(n) for n in NAMES])
    rows = [
        ("hand-written tf.compat.v1 loop (floor)", lambda: floor(data)),
        ("linear_regressor (canned)", lambda: time_estimator(linear_regressor(columns), data)),
        ("dnn_regressor [32, 32] (canned)",
         lambda: time_estimator(dnn_regressor([32, 32], columns), data)),
        ("dnn_linear_combined_regressor (wide & deep)",
         lambda: time_estimator(dnn_linear_combined_regressor(columns, columns, [32, 32]), data)),
        ("estimator(model_fn) 2x32 (custom)",
         lambda: time_estimator(estimator(custom_model_fn), data)),
    ]
    print(f"{'model':<46} {'steps/s':>9} {'us/step':>9}")
    for name, run in rows:
        started = time.perf_counter()
        seconds = run()
        if time.perf_counter() - started > BUDGET:
            print(f"{name:<46} (over the {BUDGET:.0f} s budget)")
            continue
        print(f"{name:<46} {STEPS / seconds:>9.0f} {1e6 * seconds / STEPS:>9.0f}")


if __name__ == "__main__":
    main()
