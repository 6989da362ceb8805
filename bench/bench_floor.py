"""pyhooks' canned estimators beside the compute floor, with and without steps_per_execution.

Run: ``.venv/bin/python bench/bench_floor.py`` (``--rounds 5``; ``--quick``: the
DNN only, 3 rounds; ``--spe 1,100``; ``--kinds linear_regressor``; ``--pool``).

Workloads (synthetic data from fixed seeds):

* ``dnn``: ``dnn_classifier`` [64, 32] (Adagrad 0.05) on 100,000 rows x 20
  numeric columns, batch 256;
* ``linear_classifier`` / ``linear_regressor`` (Ftrl, the default rate) on
  1,000,000 rows x 10 numeric columns, batch 32, 256 and 4096.

Sides, all in this process, each with its own graph and session, built and
warmed before the first round:

* pyhooks, the everyday hooks: ``train(steps=)`` with ``ProgressBarHook`` (its
  output to a null stream), ``HistorySaverHook(every_n_step=10)`` and
  ``StepCounterHook``, beside the estimator's defaults (NaN check, checkpoints
  every 600 s, event files); ``run_config(steps_per_execution=)`` 1, 10, 100;
* pyhooks, no user hooks: the same without the three;
* (``--pool``) pyhooks, the everyday hooks, each step's ops in TensorFlow's
  inter-op pool instead of the calling thread (``kept_session.RUN_INLINE =
  False``): the side-by-side behind running them inline;
* the floor: the same network written by hand in a private ``tf.Graph`` with the
  whole data set inside the session (a variable loaded once), each step a
  random gather of the batch's rows, the same optimizer, and a plain
  ``make_callable(train_op)`` loop; for the linear models one weight matrix of
  all columns;
* the floor, one variable per column (linear models): the same, with the weights
  laid out as tf.estimator's linear models have them (pyhooks' checkpoints keep
  that layout, its graph one matrix): a ``[1, 1]`` weight variable per column
  (``x @ w`` per column, summed) and the bias, each updated by its own
  optimizer op.

Each round times every side once, in an order that changes each round: one
``train()`` call of STEPS steps (graph building, restoring and the warm-up
left out; the call's own fixed cost, ~15-30 ms, included) or STEPS calls of
the floor's callable. The table shows the medians of examples/s (wall time)
and CPU time per step (the process's, all threads), and each side's ratio to
the floor (and, for the linear models, to the per-column floor): the median
over the rounds of the ratio within each round (this machine's speed drifts by
up to 2x between minutes, so a side is compared with the floor of its own
round), and the load average. On a loaded machine the wall-time ratio mostly
shows how often the input pipeline's thread got a core: read the CPU columns.
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

DNN_ROWS, DNN_COLS = 100_000, 20
LIN_ROWS, LIN_COLS = 1_000_000, 10


def data(rows, cols, seed):
    import numpy as np

    rng = np.random.default_rng(seed)
    x = rng.normal(size=(rows, cols)).astype(np.float32)
    w = rng.normal(size=cols).astype(np.float32)
    score = x @ w
    return x, (score > 0).astype(np.int64), score.astype(np.float32)


class Floor:
    """The hand-written step: data in a variable, a random gather per step."""

    def __init__(self, kind, x, y, batch, per_column=False):
        import tensorflow as tf

        v1 = tf.compat.v1
        self.graph = tf.Graph()
        with self.graph.as_default():
            holder_x = v1.placeholder(tf.float32, x.shape)
            holder_y = v1.placeholder(tf.float32, y.shape)
            all_x = v1.Variable(holder_x, trainable=False, collections=[])
            all_y = v1.Variable(holder_y, trainable=False, collections=[])
            rows = tf.random.uniform([batch], 0, x.shape[0], dtype=tf.int64)
            features, labels = tf.gather(all_x, rows), tf.gather(all_y, rows)
            net = features
            widths = (64, 32, 1) if kind == "dnn" else (1,)
            if per_column:  # tf.estimator's layout: a weight per column, then the bias
                zeros = v1.zeros_initializer()
                parts = [tf.matmul(features[:, i:i + 1], v1.get_variable(
                    f"w{i}", [1, 1], initializer=zeros)) for i in range(x.shape[1])]
                bias = v1.get_variable("bias", [1], initializer=zeros)
                net, widths = tf.nn.bias_add(tf.add_n(parts), bias), ()
            for i, width in enumerate(widths):
                init = v1.glorot_uniform_initializer() if kind == "dnn" else v1.zeros_initializer()
                kernel = v1.get_variable(f"k{i}", [net.shape[1], width], initializer=init)
                bias = v1.get_variable(f"b{i}", [width], initializer=v1.zeros_initializer())
                net = tf.nn.bias_add(tf.matmul(net, kernel), bias)
                if width != 1:
                    net = tf.nn.relu(net)
            logits = net[:, 0]
            if kind == "linear_regressor":
                loss = tf.reduce_sum(tf.square(logits - labels))
            else:
                loss = tf.reduce_sum(tf.nn.sigmoid_cross_entropy_with_logits(labels=labels,
                                                                             logits=logits))
            optimizer = (v1.train.AdagradOptimizer(0.05) if kind == "dnn" else
                         v1.train.FtrlOptimizer(min(0.2, 1 / LIN_COLS ** 0.5)))
            step = v1.train.get_or_create_global_step()
            train_op = optimizer.minimize(loss, global_step=step)
            self.session = v1.Session(graph=self.graph)
            self.session.run([all_x.initializer, all_y.initializer],
                             {holder_x: x, holder_y: y.astype("float32")})
            self.session.run(v1.global_variables_initializer())
        self.graph.finalize()
        self.step = self.session.make_callable(train_op)

    def run(self, steps):
        for _ in range(steps):
            self.step()


class Pyhooks:
    """An estimator trained ``steps`` at a time, with the everyday hooks or none."""

    def __init__(self, kind, x, y, batch, spe, hooks, inline=True):
        import pyhooks

        columns = {f"x{i}": x[:, i] for i in range(x.shape[1])}
        fcs = pyhooks.feature_columns(*[pyhooks.column_numeric(k) for k in columns])
        config = pyhooks.run_config(steps_per_execution=spe)
        model_dir = tempfile.mkdtemp(prefix="bench_floor_")
        if kind == "dnn":
            self.est = pyhooks.dnn_classifier([64, 32], fcs, model_dir=model_dir, config=config)
        elif kind == "linear_classifier":
            self.est = pyhooks.linear_classifier(fcs, model_dir=model_dir, config=config)
        else:
            self.est = pyhooks.linear_regressor(fcs, model_dir=model_dir, config=config)
        self.input = pyhooks.input_fn({**columns, "y": y}, response="y", features=list(columns),
                                      batch_size=batch, num_epochs=None)
        self.hooks = hooks
        self.inline = inline

    def run(self, steps):
        import pyhooks
        from pyhooks.estimators import kept_session

        hooks = [pyhooks.ProgressBarHook(writer=io.StringIO()),
                 pyhooks.HistorySaverHook(every_n_step=10),
                 pyhooks.StepCounterHook()] if self.hooks else []
        default, kept_session.RUN_INLINE = kept_session.RUN_INLINE, self.inline
        try:
            self.est.train(self.input, steps=steps, hooks=hooks)
        finally:
            kept_session.RUN_INLINE = default


def measure(side, steps):
    wall, cpu = time.perf_counter(), time.process_time()
    side.run(steps)
    return time.perf_counter() - wall, time.process_time() - cpu


def workloads(quick, kinds):
    if "dnn" in kinds:
        yield "dnn", 256, 2000
    if quick:
        return
    for kind in [k for k in ("linear_classifier", "linear_regressor") if k in kinds]:
        for batch, steps in ((32, 4000), (256, 2000), (4096, 300)):
            yield kind, batch, steps


def run_workload(kind, batch, steps, rounds, spes, pool):
    x, labels, score = data(DNN_ROWS, DNN_COLS, 1) if kind == "dnn" else \
        data(LIN_ROWS, LIN_COLS, 2)
    y = score if kind == "linear_regressor" else labels
    sides = {"floor": Floor(kind, x, y, batch)}
    if kind != "dnn":
        sides["floor, one variable per column"] = Floor(kind, x, y, batch, per_column=True)
    for spe in spes:
        sides[f"pyhooks, everyday hooks, spe {spe}"] = Pyhooks(kind, x, y, batch, spe, True)
        sides[f"pyhooks, no user hooks, spe {spe}"] = Pyhooks(kind, x, y, batch, spe, False)
        if pool:
            sides[f"pyhooks, everyday hooks, spe {spe}, steps in TensorFlow's inter-op pool"] = \
                Pyhooks(kind, x, y, batch, spe, True, inline=False)
    for side in sides.values():  # build, restore, warm up
        side.run(max(200, steps // 10))
    times = {name: [] for name in sides}
    loads = []
    names = list(sides)
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        if r % 2:
            order.reverse()
        for name in order:
            times[name].append(measure(sides[name], steps))
        loads.append(os.getloadavg()[0])
    layout = times.get("floor, one variable per column", times["floor"])
    rows = []
    for name in names:
        rate = statistics.median(steps * batch / w for w, _ in times[name])
        cpu = statistics.median(c / steps * 1e6 for _, c in times[name])
        # each ratio paired within its round (the machine's speed drifts between rounds),
        # then the median of the rounds'
        ratios = [statistics.median(f[k] / mine[k] for mine, f in zip(times[name], base))
                  for base in (times["floor"], layout) for k in (0, 1)]
        rows.append((name, rate, ratios[0], cpu, ratios[1], ratios[2], ratios[3]))
    for side in sides.values():
        if isinstance(side, Floor):
            side.session.close()
    return rows, loads


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--spe", default="1,10,100")
    parser.add_argument("--kinds", default="dnn,linear_classifier,linear_regressor")
    parser.add_argument("--pool", action="store_true",
                        help="also a side whose steps run in TensorFlow's inter-op pool")
    args = parser.parse_args()
    rounds = 3 if args.quick else args.rounds
    spes = [int(s) for s in args.spe.split(",")]
    for kind, batch, steps in workloads(args.quick, args.kinds.split(",")):
        rows, loads = run_workload(kind, batch, steps, rounds, spes, args.pool)
        print(f"\n{kind}, batch {batch}, {steps} steps per round, {rounds} rounds; load average "
              f"{min(loads):.1f}-{max(loads):.1f}\n")
        print("| side | examples/s (wall) | × floor | CPU µs/step | × floor (CPU) "
              "| × per-column floor | × per-column floor (CPU) |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for name, rate, ratio, cpu, cpu_ratio, layout_ratio, layout_cpu_ratio in rows:
            print(f"| {name} | {rate:,.0f} | {ratio:.2f} | {cpu:.0f} | {cpu_ratio:.2f} "
                  f"| {layout_ratio:.2f} | {layout_cpu_ratio:.2f} |", flush=True)


if __name__ == "__main__":
    main()
