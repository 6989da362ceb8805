"""Training speed of custom and wide & deep estimators beside canned ones and hand-written floors.

Issue 18's workload (a): 100,000 rows x 20 numeric columns (fixed seeds), a
numeric response, batches of 256 shuffled over all rows, a [64, 32] ReLU
network wherever there is one (Adagrad 0.05 where the model is written here;
the canned estimators' defaults otherwise). Every system is built and trained
once first (graph, session, first steps). Then ``ROUNDS`` rounds, each in a new
random order of the systems: one training call of ``WARMUP + STEPS`` steps
where a hook reads the clock after step ``WARMUP`` and after the last step, so
feeding the data, building graphs and saving checkpoints are left out (the
floors: the same steps in a bare loop). Medians over the rounds, with the
lowest and highest, of examples/s (wall clock) and of the process's CPU time
per step (every thread: the step, the input pipeline, the hooks; less
sensitive than the wall clock to other jobs on a shared machine). The rounds
stop once ``BUDGET`` seconds have passed.

Systems: *floor*: the model by hand with ``tf.compat.v1`` in a private graph,
the matrix fed once through a placeholder, ``from_tensor_slices``,
``shuffle(all rows)``, ``repeat``, ``batch``, ``prefetch``, ``Session.run``
of a callable. *floor, batched*: the same graph fed as pyhooks feeds it (each
epoch one permutation gathers the whole matrix, ``rebatch`` cuts it).
*pyhooks*: ``input_fn()`` on a dict of numpy columns and the default hooks
(NaN check, history, progress bar writing nowhere).

    .venv/bin/python bench/bench_custom_estimators.py [--rounds N]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402

ROWS, COLUMNS, BATCH = 100_000, 20, 256
WARMUP, STEPS = 50, 400
ROUNDS = 5
BUDGET = 600.0
NAMES = [f"x{i:02d}" for i in range(COLUMNS)]


def make_data():
    rng = np.random.default_rng(0)
    data = {name: rng.normal(size=ROWS) for name in NAMES}
    weights = rng.normal(size=COLUMNS)
    data["y"] = sum(w * data[n] for w, n in zip(weights, NAMES)) + rng.normal(size=ROWS)
    return data


class _Clock:
    """A hook reading the clock after step WARMUP and after the last step of the call."""

    def __new__(cls):
        from pyhooks import SessionRunHook

        class Clock(SessionRunHook):
            def begin(self):
                self.steps = 0
                self.marks = []

            def after_run(self, run_context, run_values):
                self.steps += 1
                if self.steps in (WARMUP, WARMUP + STEPS):
                    self.marks.append((time.perf_counter(), time.process_time()))

        return Clock()


class EstimatorSystem:
    def __init__(self, make):
        from pyhooks import HistorySaverHook, ProgressBarHook
        from pyhooks.estimators import input_fn

        self.model = make()
        self.input = input_fn(DATA, NAMES, "y", batch_size=BATCH, num_epochs=None)
        self.hooks = lambda: [ProgressBarHook(writer=lambda text: None), HistorySaverHook()]
        self.model.train(self.input, steps=WARMUP, hooks=self.hooks())

    def seconds(self):
        clock = _Clock()
        self.model.train(self.input, steps=WARMUP + STEPS, hooks=[clock, *self.hooks()])
        return [b - a for a, b in zip(*clock.marks)]


class FloorSystem:
    """The [64, 32] network and its input by hand; ``batched``: pyhooks' way of batching."""

    def __init__(self, batched):
        import tensorflow as tf

        v1 = tf.compat.v1
        self.graph = tf.Graph()
        with self.graph.as_default():
            x_in = v1.placeholder(tf.float32, [None, COLUMNS])
            y_in = v1.placeholder(tf.float32, [None])
            if batched:
                def epoch(i):
                    order = tf.random.experimental.stateless_shuffle(
                        tf.range(ROWS, dtype=tf.int64), seed=tf.stack([i, i]))
                    return tf.gather(x_in, order), tf.gather(y_in, order)
                dataset = tf.data.Dataset.counter().map(epoch).rebatch(BATCH)
            else:
                dataset = (tf.data.Dataset.from_tensor_slices((x_in, y_in)).shuffle(ROWS)
                           .repeat().batch(BATCH))
            iterator = v1.data.make_initializable_iterator(dataset.prefetch(tf.data.AUTOTUNE))
            features, labels = iterator.get_next()
            net = features
            for i, width in enumerate((64, 32)):
                net = tf.nn.relu(tf.matmul(net, v1.get_variable(f"k{i}", [net.shape[1], width]))
                                 + v1.get_variable(f"b{i}", [width],
                                                   initializer=v1.zeros_initializer()))
            out = tf.reshape(tf.matmul(net, v1.get_variable("out", [32, 1])), [-1])
            loss = tf.reduce_mean(tf.square(out - labels))
            step = v1.train.get_or_create_global_step()
            train_op = v1.train.AdagradOptimizer(0.05).minimize(loss, global_step=step)
            self.session = v1.Session()
            self.session.run(v1.global_variables_initializer())
            matrix = np.stack([DATA[n] for n in NAMES], axis=1).astype(np.float32)
            self.session.run(iterator.initializer, {x_in: matrix,
                                                    y_in: DATA["y"].astype(np.float32)})
            self.run = self.session.make_callable(train_op)
        self.graph.finalize()
        for _ in range(WARMUP):
            self.run()

    def seconds(self):
        for _ in range(WARMUP):
            self.run()
        start = time.perf_counter(), time.process_time()
        for _ in range(STEPS):
            self.run()
        return [time.perf_counter() - start[0], time.process_time() - start[1]]


def custom_model_fn(features, labels, mode):
    """The [64, 32] regressor as a tfestimators user writes it, with pyhooks' TF1 layers."""
    import tensorflow as tf

    from pyhooks.estimators import estimator_spec, layers

    v1 = tf.compat.v1
    net = tf.cast(tf.convert_to_tensor(features), tf.float32)
    net = layers.dense(net, 64, activation=tf.nn.relu)
    net = layers.dense(net, 32, activation=tf.nn.relu)
    out = tf.reshape(layers.dense(net, 1), [-1])
    loss = v1.losses.mean_squared_error(tf.cast(labels, tf.float32), out)
    train_op = v1.train.AdagradOptimizer(0.05).minimize(loss,
                                                        global_step=v1.train.get_global_step())
    return estimator_spec(mode, predictions=out, loss=loss, train_op=train_op)


def systems():
    from pyhooks.estimators import (
        column_numeric,
        dnn_linear_combined_regressor,
        dnn_regressor,
        estimator,
        feature_columns,
        linear_regressor,
    )

    columns = feature_columns(*[column_numeric(n) for n in NAMES])
    return {
        "floor (hand-written, shuffle all rows)": lambda: FloorSystem(batched=False),
        "floor, batched (pyhooks' batching by hand)": lambda: FloorSystem(batched=True),
        "linear_regressor (canned)": lambda: EstimatorSystem(lambda: linear_regressor(columns)),
        "dnn_regressor [64, 32] (canned)":
            lambda: EstimatorSystem(lambda: dnn_regressor([64, 32], columns)),
        "dnn_linear_combined_regressor (wide & deep)":
            lambda: EstimatorSystem(lambda: dnn_linear_combined_regressor(columns, columns,
                                                                          [64, 32])),
        "estimator(model_fn) [64, 32] (custom)":
            lambda: EstimatorSystem(lambda: estimator(custom_model_fn)),
    }


def main():
    global DATA
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    args = parser.parse_args()
    DATA = make_data()
    started = time.perf_counter()
    built = {name: make() for name, make in systems().items()}
    wall = {name: [] for name in built}
    cpu = {name: [] for name in built}
    order = list(built)
    rng = random.Random(0)
    for _ in range(args.rounds):
        rng.shuffle(order)
        for name in order:
            seconds, cpu_seconds = built[name].seconds()
            wall[name].append(STEPS * BATCH / seconds)
            cpu[name].append(1e6 * cpu_seconds / STEPS)
        if time.perf_counter() - started > BUDGET:
            print(f"(stopped after {len(wall[order[0]])} rounds: over the {BUDGET:.0f} s budget)")
            break
    first = next(iter(built))
    floor_wall, floor_cpu = statistics.median(wall[first]), statistics.median(cpu[first])
    print(f"{ROWS:,} rows x {COLUMNS} columns, batch {BATCH}, {STEPS} steps after {WARMUP}, "
          f"{len(wall[first])} rounds; medians (min-max)")
    print("| system | examples/s | / floor | CPU us/step (all threads) | / floor |")
    print("|---|---:|---:|---:|---:|")
    for name in built:
        w, c = statistics.median(wall[name]), statistics.median(cpu[name])
        print(f"| {name} | {w:,.0f} ({min(wall[name]):,.0f}-{max(wall[name]):,.0f}) | "
              f"{w / floor_wall:.2f}x | {c:,.0f} ({min(cpu[name]):,.0f}-{max(cpu[name]):,.0f}) | "
              f"{c / floor_cpu:.2f}x |")


if __name__ == "__main__":
    main()
