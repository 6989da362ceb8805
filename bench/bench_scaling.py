"""How cost grows with the work: 10k to 10M rows in memory, 1 and 5 GB of CSV on disk.

Run: ``.venv/bin/python bench/bench_scaling.py`` (``--rows 10000,100000,1000000,10000000``,
``--gb 1,5``, ``--systems``: some of pyhooks,pyhooks_r,floor,keras,tf_estimator;
``--dir``: where the CSV files go, removed at the end; ``--plot FILE``: also
``bench/scaling.png``, the default).

The model: hidden units [64, 32], ReLU, Adagrad 0.05, batch 256, on 20 numeric
columns ``x0..x19``. In memory it is a classifier (``dnn_classifier``; the label
is whether a fixed linear score of the row is positive); on disk a regressor
(``dnn_regressor``) on bench_files.py's CSV files, whose response ``y`` is a
real number (a linear function of the row plus noise).

Systems, each in a fresh process per size (one run each):

* pyhooks (Python): ``train()`` with its default hooks (the progress bar
  writing nowhere) on ``input_fn(dict of numpy arrays)`` / ``input_fn(path)``,
  shuffled (files: a 10,000-row buffer), repeating;
* pyhooks (R): the same from ``Rscript bench/bench_scaling.R`` on a
  ``data.frame`` (R's doubles, made with ``rnorm``) / the file's path;
* floor: the network by hand in a private ``tf.Graph``, a ``make_callable``
  loop: in memory bench_floor.py's ``Floor`` (the data in a variable, a random
  gather per step); on disk bench_files.py's tf.data pipeline (``CsvDataset``,
  ``shuffle(10_000)``, ``batch``, ``prefetch``);
* Keras fit: the same layers, ``model.fit(x, y)`` on the arrays (shuffled every
  epoch) / on the floor's tf.data pipeline;
* tf.estimator (TensorFlow 2.15 in ``.venv-bench-tf215``, made by
  bench_estimators.py's helper): ``DNNClassifier`` on
  ``tf.compat.v1.estimator.inputs.numpy_input_fn`` / ``DNNRegressor`` on the
  floor's tf.data pipeline, with its default hooks.

Each process generates its data first (not timed), then reads the clock right
before ``import pyhooks`` / ``library(pyhooks)`` / ``import tensorflow``, and
again at the end of the first training step (TensorFlow's import, building the
graph, turning the data into an input and the first step are in "to first
step"). It trains WARMUP + STEPS steps; examples/s is the median over the
STEPS // WINDOW windows of WINDOW steps after the warm-up, CPU time per step
is the process's (all threads) over the same steps. Memory: "data" is the
arrays' size in the process (R's doubles twice NumPy's float32), "RSS at
import" the process's RSS right before the import (the data made, the
interpreter), and "peak RSS" its ``VmHWM`` at the end, counted from that
moment (reset through ``/proc/self/clear_refs``), so making the data is not in
it and holding it is.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
WARMUP, STEPS, WINDOW, BATCH, COLS, BUFFER = 50, 300, 50, 256, 20, 10_000
COLUMNS = [f"x{i}" for i in range(COLS)]
SYSTEMS = ("pyhooks", "pyhooks_r", "floor", "keras", "tf_estimator")
LABELS = {"pyhooks": "pyhooks (Python)", "pyhooks_r": "pyhooks (R)", "floor": "floor",
          "keras": "Keras fit", "tf_estimator": "tf.estimator 2.15"}


# --------------------------------------------------------------------------- in the child
def status_mb(field):
    """``VmHWM`` (peak RSS) or ``VmRSS`` of this process, MB."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


def reset_peak():
    """Starts ``VmHWM`` again from the current RSS (Linux: ``/proc/self/clear_refs``)."""
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")
    return status_mb("VmRSS")


def cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class Marks:
    """The clock at the first step's end and at every WINDOW steps after the warm-up.

    ``start`` is ``time.time()`` (R: ``Sys.time()``) right before the library's import,
    ``rss_mb`` the RSS then (``reset_peak()``'s).
    """

    def __init__(self, start, rss_mb):
        self.start, self.rss_mb, self.done, self.first, self.points = start, rss_mb, 0, None, []

    def step(self):
        self.done += 1
        if self.done == 1:
            self.first = time.time() - self.start
        if self.done >= WARMUP and (self.done - WARMUP) % WINDOW == 0:
            self.points.append((time.perf_counter(), cpu_seconds()))
        return self.done >= WARMUP + STEPS

    def result(self, data_mb):
        rates = [WINDOW * BATCH / (b[0] - a[0]) for a, b in zip(self.points, self.points[1:])]
        cpu = (self.points[-1][1] - self.points[0][1]) / (len(self.points) - 1) / WINDOW
        return {"per_s": statistics.median(rates), "cpu_us": cpu * 1e6, "first_s": self.first,
                "peak_mb": status_mb("VmHWM"), "start_mb": self.rss_mb, "data_mb": data_mb}


def clock_hook(marks):
    """A pyhooks hook stepping ``marks``, stopping the loop after the measured steps."""
    import pyhooks

    class Clock(pyhooks.SessionRunHook):
        def after_run(self, run_context, run_values):
            if marks.step():
                run_context.request_stop()

    return Clock()


def memory_data(rows):
    import numpy as np

    rng = np.random.default_rng(1)
    x = rng.standard_normal(size=(rows, COLS), dtype=np.float32)
    w = rng.normal(size=COLS).astype(np.float32)
    return x, (x @ w > 0).astype(np.int64)


def csv_pipeline(tf, path):
    data = tf.data.experimental.CsvDataset(path, [tf.float32] * (COLS + 1), header=True)
    return data.shuffle(BUFFER).repeat().batch(BATCH).prefetch(tf.data.AUTOTUNE)


def child_pyhooks(source, x, y, rss_mb):
    start = time.time()
    import pyhooks
    from pyhooks.estimators import column_numeric, feature_columns, input_fn, train

    marks = Marks(start, rss_mb)

    fcs = feature_columns(*[column_numeric(c) for c in COLUMNS])
    if x is None:
        model = pyhooks.dnn_regressor(hidden_units=[64, 32], feature_columns=fcs)
        data = input_fn(source, features=COLUMNS, response="y", batch_size=BATCH, shuffle=True,
                        num_epochs=None, queue_capacity=BUFFER)
    else:
        model = pyhooks.dnn_classifier(hidden_units=[64, 32], feature_columns=fcs)
        columns = {c: x[:, i] for i, c in enumerate(COLUMNS)}
        data = input_fn({**columns, "y": y}, features=COLUMNS, response="y", batch_size=BATCH,
                        shuffle=True, num_epochs=None)
    train(model, data, steps=WARMUP + STEPS,
          hooks=[pyhooks.ProgressBarHook(writer=lambda text: None), clock_hook(marks)])
    return marks


def child_floor(source, x, y, rss_mb):
    start = time.time()
    import tensorflow as tf

    marks = Marks(start, rss_mb)
    if x is not None:
        sys.path.insert(0, HERE)
        from bench_floor import Floor

        side = Floor("dnn", x, y, BATCH)
        while not marks.step():
            side.step()
        return marks
    v1 = tf.compat.v1
    sys.path.insert(0, HERE)
    from bench_files import floor_train_op

    with tf.Graph().as_default() as graph:
        *columns, labels = v1.data.make_one_shot_iterator(csv_pipeline(tf, source)).get_next()
        train_op = floor_train_op(tf, columns, labels)
        init = v1.global_variables_initializer()
    graph.finalize()
    with v1.Session(graph=graph) as session:
        session.run(init)
        run = session.make_callable(train_op)
        while True:
            run()
            if marks.step():
                break
    return marks


def child_keras(source, x, y, rss_mb):
    start = time.time()
    import tensorflow as tf

    marks = Marks(start, rss_mb)

    class Clock(tf.keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            if marks.step():
                self.model.stop_training = True

    model = tf.keras.Sequential([tf.keras.Input((COLS,)),
                                 tf.keras.layers.Dense(64, activation="relu"),
                                 tf.keras.layers.Dense(32, activation="relu"),
                                 tf.keras.layers.Dense(1)])
    if x is None:
        model.compile(tf.keras.optimizers.Adagrad(0.05), loss="mse")
        data = csv_pipeline(tf, source).map(lambda *row: (tf.stack(row[:-1], axis=1), row[-1]))
        model.fit(data, epochs=1, steps_per_epoch=WARMUP + STEPS + 1, verbose=0,
                  callbacks=[Clock()])
    else:
        model.compile(tf.keras.optimizers.Adagrad(0.05),
                      loss=tf.keras.losses.BinaryCrossentropy(from_logits=True))
        epochs = -(-(WARMUP + STEPS + 1) * BATCH // len(x))
        model.fit(x, y.astype("float32"), batch_size=BATCH, epochs=epochs, shuffle=True,
                  verbose=0, callbacks=[Clock()])
    return marks


def child_tf_estimator(source, x, y, rss_mb):
    start = time.time()
    import tensorflow as tf

    tf.get_logger().setLevel("ERROR")
    marks = Marks(start, rss_mb)

    class Clock(tf.estimator.SessionRunHook):
        def after_run(self, run_context, run_values):
            if marks.step():
                run_context.request_stop()

    fcs = [tf.feature_column.numeric_column(c) for c in COLUMNS]
    model_dir = tempfile.mkdtemp(prefix="bench_scaling_tfest_")
    if x is None:
        model = tf.estimator.DNNRegressor([64, 32], fcs, model_dir=model_dir)

        def data():
            return csv_pipeline(tf, source).map(
                lambda *row: (dict(zip(COLUMNS, row[:-1])), row[-1]))
    else:
        model = tf.estimator.DNNClassifier([64, 32], fcs, model_dir=model_dir)
        data = tf.compat.v1.estimator.inputs.numpy_input_fn(
            {c: x[:, i] for i, c in enumerate(COLUMNS)}, y, batch_size=BATCH, num_epochs=None,
            shuffle=True)
    model.train(data, steps=WARMUP + STEPS + 1, hooks=[Clock()])
    shutil.rmtree(model_dir, ignore_errors=True)
    return marks


def child(system, source):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    if source.startswith("mem:"):
        x, y = memory_data(int(source[4:]))
        data_mb = (x.nbytes + y.nbytes) / 2**20
    else:
        x = y = None
        data_mb = 0.0
    run = {"pyhooks": child_pyhooks, "floor": child_floor, "keras": child_keras,
           "tf_estimator": child_tf_estimator}[system]
    marks = run(source, x, y, reset_peak())
    print(json.dumps(marks.result(data_mb)), flush=True)


# --------------------------------------------------------------------------- the driver
def measure(system, source, bench_python):
    if system == "pyhooks_r":
        command = ["Rscript", os.path.join(HERE, "bench_scaling.R"), source]
    else:
        python = bench_python if system == "tf_estimator" else sys.executable
        command = [python, os.path.abspath(__file__), "--child", system, source]
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", PYTHONPATH=ROOT)
    env.setdefault("RETICULATE_PYTHON", sys.executable)
    env.setdefault("PYHOOKS_PYTHON", sys.executable)
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=900, env=env)
    except subprocess.TimeoutExpired:  # subprocess.run kills the child
        return {"error": "did not finish in 900 s"}
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        tail = (done.stderr or done.stdout).strip().splitlines() or ["no output"]
        return {"error": f"exit {done.returncode}: {tail[-1][:160]}"}
    return json.loads(lines[-1])


def row_text(where, system, result, load):
    if "error" in result:
        return (f"| {where} | {LABELS[system]} | — | — | — | — | — | — | {load:.1f} | "
                f"{result['error']} |")
    return (f"| {where} | {LABELS[system]} | {result['per_s']:,.0f} | {result['cpu_us']:,.0f} | "
            f"{result['data_mb']:,.0f} | {result['start_mb']:,.0f} | {result['peak_mb']:,.0f} | "
            f"{result['first_s']:.1f} | {load:.1f} | |")


def plot(rows, path):
    """Four panels; in memory and on disk are separate lines on one axis of sizes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 4, figsize=(14, 3.6), dpi=72)
    sources = list(dict.fromkeys(r["where"] for r in rows))
    panels = (("per_s", "examples/s (wall)"), ("cpu_us", "CPU µs per step"),
              ("peak_mb", "peak RSS, MB"), ("first_s", "to first step, s"))
    for n, system in enumerate(SYSTEMS):
        mine = {r["where"]: r["result"] for r in rows if r["system"] == system
                and "error" not in r["result"]}
        for on_disk in (False, True):
            xs = [i for i, s in enumerate(sources) if s in mine and s.endswith("CSV") == on_disk]
            for axis, (key, _) in zip(axes, panels):
                axis.plot(xs, [mine[sources[i]][key] for i in xs], marker="o", color=f"C{n}",
                          label=LABELS[system] if not on_disk and xs else None)
    for axis, (_, title) in zip(axes, panels):
        axis.set_title(title, fontsize=10)
        axis.set_xticks(range(len(sources)))
        axis.set_xticklabels(sources, rotation=35, fontsize=7, ha="right")
        axis.set_yscale("log")
        axis.grid(True, alpha=0.3)
    axes[0].legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", default="10000,100000,1000000,10000000")
    parser.add_argument("--gb", default="1,5")
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--dir", default=None)
    parser.add_argument("--plot", default=os.path.join(HERE, "scaling.png"))
    parser.add_argument("--save", default=None, help="also write the results as JSON here")
    parser.add_argument("--replot", default=None, help="only plot a --save file")
    parser.add_argument("--child", nargs=2)
    args = parser.parse_args()
    if args.child:
        return child(*args.child)
    if args.replot:
        with open(args.replot) as stream:
            return plot(json.load(stream), args.plot)
    systems = [s for s in args.systems.split(",") if s]
    bench_python = None
    if "tf_estimator" in systems:
        sys.path.insert(0, HERE)
        import bench_estimators

        why_not = bench_estimators.ensure_bench_venv()
        if why_not is not None:
            print(f"tf.estimator unavailable: {why_not}")
            systems.remove("tf_estimator")
        bench_python = bench_estimators._bench_python()  # noqa: SLF001
    print(f"load average at the start: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    print("| data | system | examples/s | CPU µs/step | data MB | RSS at import MB | "
          "peak RSS MB | to first step s | load | note |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---|", flush=True)
    rows = []
    sources = [(f"{int(n):,} rows", f"mem:{int(n)}") for n in args.rows.split(",") if n]
    where_dir = tempfile.mkdtemp(prefix="pyhooks-bench-scaling-", dir=args.dir)
    try:
        for where, source in sources:
            for system in systems:
                result = measure(system, source, bench_python)
                rows.append({"where": where, "system": system, "result": result})
                print(row_text(where, system, result, os.getloadavg()[0]), flush=True)
        sys.path.insert(0, HERE)
        from bench_files import write_csv

        for gb in (float(g) for g in args.gb.split(",") if g):
            path = write_csv(os.path.join(where_dir, f"data-{gb:g}GB.csv"), gb)
            where = f"{os.path.getsize(path) / 2**30:.2f} GB CSV"
            for system in systems:
                result = measure(system, path, bench_python)
                rows.append({"where": where, "system": system, "result": result})
                print(row_text(where, system, result, os.getloadavg()[0]), flush=True)
            os.remove(path)
    finally:
        shutil.rmtree(where_dir, ignore_errors=True)
    print(f"\nbatch {BATCH}, {STEPS} steps measured after {WARMUP} (medians of {WINDOW}-step "
          f"windows), one process per cell; load average at the end: "
          f"{' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    if args.save:
        with open(args.save, "w") as stream:
            json.dump(rows, stream)
    if args.plot:
        plot(rows, args.plot)
        print(f"plot: {os.path.relpath(args.plot, ROOT)}")


if __name__ == "__main__":
    main()
