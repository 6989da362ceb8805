"""Training from CSV files bigger than memory: pyhooks' file input_fn() vs a hand-written tf.data pipeline.

Run: ``.venv/bin/python bench/bench_files.py`` (``--sizes 1,5``: the files' GB;
``--rounds 3``; ``--dir``: where the files are written, deleted at the end).

The files: 20 numeric columns ``x0..x19`` and ``y`` (a linear function of
them plus noise), 6 significant digits, one block of 200,000 rows written
again and again until the file has its size (the rows repeat every block).
The model: a DNN regressor, hidden units [64, 32], ReLU, Adagrad 0.05,
squared error summed over the batch, batch 256, STEPS steps after WARMUP.

* pyhooks: ``dnn_regressor`` trained by ``train()`` on ``input_fn(path)`` with
  its default hooks (NaN check, history, progress bar), shuffled through its
  default buffer (10,000 rows), or in file order;
* floor: the same network by hand in ``tf.compat.v1`` in a private graph:
  ``CsvDataset`` (the 21 columns as float32), ``shuffle(10_000)`` (or not),
  ``batch(256)``, ``prefetch(AUTOTUNE)``, and a ``make_callable(train_op)``
  loop.

Each measurement runs in a fresh process: examples/s over the measured steps
(wall clock, and per CPU second of the process, fairer on a loaded machine)
and the process's peak RSS (``VmHWM``). Rounds alternate the systems; the
table shows medians and the load average.
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

import numpy as np

WARMUP, STEPS, BATCH, BUFFER = 200, 1500, 256, 10_000
COLUMNS = [f"x{i}" for i in range(20)]


def write_csv(path, gigabytes):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200_000, 20)).astype(np.float32)
    y = x @ rng.normal(size=20).astype(np.float32) + 0.1 * rng.normal(size=200_000)
    block = "\n".join(",".join(f"{v:.6g}" for v in row) for row in np.column_stack([x, y]))
    block = (block + "\n").encode()
    target = int(gigabytes * 2**30)
    with open(path, "wb") as file:
        file.write((",".join(COLUMNS + ["y"]) + "\n").encode())
        written = 0
        while written < target:
            file.write(block)
            written += len(block)
    return path


def peak_rss_mb():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def run_pyhooks(path, shuffle):
    import pyhooks
    from pyhooks.estimators import column_numeric, feature_columns, input_fn, train

    marks = {}

    class Clock(pyhooks.SessionRunHook):
        def __init__(self):
            self.done = 0

        def after_run(self, run_context, run_values):
            self.done += 1
            if self.done == WARMUP:
                marks["start"] = (time.perf_counter(), cpu_seconds())
            elif self.done == WARMUP + STEPS:
                marks["end"] = (time.perf_counter(), cpu_seconds())

    model = pyhooks.dnn_regressor(hidden_units=[64, 32], feature_columns=feature_columns(
        *[column_numeric(c) for c in COLUMNS]))
    data = input_fn(path, features=COLUMNS, response="y", batch_size=BATCH, shuffle=shuffle,
                    num_epochs=None, queue_capacity=BUFFER)
    train(model, data, steps=WARMUP + STEPS, hooks=[Clock()])
    return marks


def floor_train_op(tf, columns, labels):
    """The hand-written floor's train op: the DNN [64, 32] regressor of ``columns`` (a list
    of batch tensors), squared error summed, Adagrad 0.05, in the default graph."""
    v1 = tf.compat.v1
    hidden = tf.stack(columns, axis=1)
    for i, units in enumerate((64, 32, 1)):
        w = v1.get_variable(f"w{i}", [hidden.shape[1], units],
                            initializer=v1.glorot_uniform_initializer())
        b = v1.get_variable(f"b{i}", [units], initializer=v1.zeros_initializer())
        hidden = tf.matmul(hidden, w) + b
        if units > 1:
            hidden = tf.nn.relu(hidden)
    loss = tf.reduce_sum(tf.math.squared_difference(tf.reshape(hidden, [-1]), labels))
    step = v1.train.get_or_create_global_step()
    return v1.train.AdagradOptimizer(0.05).minimize(loss, global_step=step)


def run_floor(path, shuffle):
    import tensorflow as tf
    v1 = tf.compat.v1
    marks = {}
    with tf.Graph().as_default() as graph:
        data = tf.data.experimental.CsvDataset(path, [tf.float32] * 21, header=True)
        if shuffle:
            data = data.shuffle(BUFFER)
        data = data.repeat().batch(BATCH).prefetch(tf.data.AUTOTUNE)
        *x, y = v1.data.make_one_shot_iterator(data).get_next()
        train_op = floor_train_op(tf, x, y)
        init = v1.global_variables_initializer()
    graph.finalize()
    with v1.Session(graph=graph) as session:
        session.run(init)
        run = session.make_callable(train_op)
        for i in range(WARMUP + STEPS):
            if i == WARMUP:
                marks["start"] = (time.perf_counter(), cpu_seconds())
            run()
        marks["end"] = (time.perf_counter(), cpu_seconds())
    return marks


def child(system, path, shuffle):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    run = run_pyhooks if system == "pyhooks" else run_floor
    marks = run(path, shuffle)
    wall = marks["end"][0] - marks["start"][0]
    cpu = marks["end"][1] - marks["start"][1]
    print(json.dumps({"per_s": STEPS * BATCH / wall, "per_cpu_s": STEPS * BATCH / cpu,
                      "peak_mb": peak_rss_mb()}))


def measure(system, path, shuffle):
    done = subprocess.run([sys.executable, __file__, "--child", system, path,
                           "1" if shuffle else "0"], capture_output=True, text=True,
                          timeout=1800, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1,5")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--dir", default=None)
    parser.add_argument("--child", nargs=3)
    args = parser.parse_args()
    if args.child:
        system, path, shuffle = args.child
        return child(system, path, shuffle == "1")
    where = tempfile.mkdtemp(prefix="pyhooks-bench-files-", dir=args.dir)
    rows = []
    try:
        for size in (float(s) for s in args.sizes.split(",")):
            path = write_csv(os.path.join(where, f"data-{size:g}GB.csv"), size)
            on_disk = os.path.getsize(path) / 2**30
            for shuffle in (True, False):
                results = {"pyhooks": [], "floor": []}
                for r in range(args.rounds):
                    for system in (("pyhooks", "floor") if r % 2 == 0 else ("floor", "pyhooks")):
                        results[system].append(measure(system, path, shuffle))
                rows.append((on_disk, shuffle, results, os.getloadavg()[0]))
                print_row(*rows[-1], flush=True)
            os.remove(path)
    finally:
        shutil.rmtree(where, ignore_errors=True)
    print(f"\n{args.rounds} rounds, medians; batch {BATCH}, {STEPS} steps measured after "
          f"{WARMUP}; load average at the end: {os.getloadavg()[0]:.2f}")


HEADER_PRINTED = []


def print_row(size, shuffle, results, load, flush=False):
    if not HEADER_PRINTED:
        print("| file | order | system | examples/s | examples/CPU-s | peak RSS MB | "
              "pyhooks/floor (wall, CPU) | load |")
        print("|---|---|---|---|---|---|---|---|")
        HEADER_PRINTED.append(True)
    med = {s: {k: statistics.median(r[k] for r in runs) for k in runs[0]}
           for s, runs in results.items()}
    ratio = (f"{med['pyhooks']['per_s'] / med['floor']['per_s']:.2f}x, "
             f"{med['pyhooks']['per_cpu_s'] / med['floor']['per_cpu_s']:.2f}x")
    for system in ("pyhooks", "floor"):
        m = med[system]
        print(f"| {size:.2f} GB | {'shuffled' if shuffle else 'in order'} | {system} | "
              f"{m['per_s']:,.0f} | {m['per_cpu_s']:,.0f} | {m['peak_mb']:,.0f} | "
              f"{ratio if system == 'pyhooks' else ''} | {load:.1f} |", flush=flush)


if __name__ == "__main__":
    main()
