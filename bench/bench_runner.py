"""The runner's cost per step, this tree beside an earlier commit and TensorFlow's own runner.

One table from one run. Each variant lives in its own worker process (this
tree's pyhooks, the base commit's pyhooks, TensorFlow's ``MonitoredSession``),
built once; the main process asks the workers in turn for a timed block of
steps, ``--repeats`` rounds (alternating, so drift hits every variant alike),
and prints medians of process CPU time per step.

Workloads:
- toy: a graph-mode step of a 4-weight model (~100 µs), 1 TF thread, with the
  four hooks TensorFlow users run (StepCounter, NanTensor, LoggingTensor every
  100 steps, StopAtStep), pyhooks' and TensorFlow's own;
- toy, everyday: the same step with pyhooks' ProgressBar, HistorySaver,
  StepCounter and NanTensor hooks; "ordered increment": the train op waits for
  the global step read, as in pyhooks' estimators (a fetched read + 1 is then
  exact; without it hooks confirm a step with a raw read before acting on it);
- estimator: ``linear_regressor`` on mtcars (batch 8) through ``train()`` with
  a progress bar and a history, per step of the whole call (500 steps); also
  without the TensorBoard event files estimators now write by default;
- keras: ``model.fit`` of a small dense model, 4 hooks through
  ``keras_callback``, per batch.

Run: .venv/bin/python bench/bench_runner.py [--base REV] [--repeats R] [--only TEXT] [--idle]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# --------------------------------------------------------------------------- workloads (worker side)
def toy(kind, hooks_kind):
    import tensorflow as tf

    import pyhooks

    v1 = tf.compat.v1
    graph = tf.Graph()
    with graph.as_default():
        step = v1.train.get_or_create_global_step()
        w = v1.get_variable("w", [4], initializer=v1.zeros_initializer())
        loss = tf.reduce_sum(tf.square(w - 1.0))
        v1.add_to_collection(v1.GraphKeys.LOSSES, loss)
        if hooks_kind.endswith("ordered"):  # the increment waits for the step read (estimators)
            from tensorflow.python.training import training_util

            read = training_util._get_or_create_global_step_read()  # noqa: SLF001
            with tf.control_dependencies([read]):
                train = v1.train.GradientDescentOptimizer(0.01).minimize(loss, global_step=step)
        else:
            train = v1.train.GradientDescentOptimizer(0.01).minimize(loss, global_step=step)
        config = v1.ConfigProto(inter_op_parallelism_threads=1, intra_op_parallelism_threads=1)
        creator = v1.train.ChiefSessionCreator(config=config)
        out = tempfile.mkdtemp()
        if kind == "tf":
            hooks = [v1.train.StepCounterHook(every_n_steps=100, output_dir=out),
                     v1.train.NanTensorHook(loss),
                     v1.train.LoggingTensorHook({"loss": loss}, every_n_iter=100),
                     v1.train.StopAtStepHook(last_step=10**9)]
            sess = v1.train.MonitoredSession(creator, hooks=hooks)
        else:
            if hooks_kind == "tf4":
                hooks = [pyhooks.StepCounterHook(every_n_steps=100, output_dir=out),
                         pyhooks.NanTensorHook(loss),
                         pyhooks.LoggingTensorHook({"loss": loss}, every_n_iter=100),
                         pyhooks.StopAtStepHook(last_step=10**9)]
            else:  # everyday, everyday-ordered
                hooks = [pyhooks.ProgressBarHook(writer=io.StringIO(), mode="plain"),
                         pyhooks.HistorySaverHook(every_n_step=10),
                         pyhooks.StepCounterHook(every_n_steps=100, output_dir=out),
                         pyhooks.NanTensorHook(loss)]
            sess = pyhooks.MonitoredSession(creator, hooks)
    import logging

    logging.getLogger("pyhooks").setLevel(logging.WARNING)
    logging.getLogger("tensorflow").setLevel(logging.WARNING)

    def block(n):
        run = sess.run
        for _ in range(n):
            run(train)
    return block


def estimator(events=True):
    import pyhooks
    from pyhooks.estimators import (column_numeric, feature_columns, input_fn,
                                    linear_regressor, load_mtcars, train)

    data = load_mtcars()
    # events=False: no TensorBoard event files (they came after the base commit)
    config = {} if events else {"config": pyhooks.estimators.run_config(save_summary_steps=0,
                                                                   log_step_count_steps=0)}
    model = linear_regressor(feature_columns=feature_columns(column_numeric("drat"),
                                                             column_numeric("cyl")), **config)
    source = input_fn(data, response="mpg", features=["drat", "cyl"], batch_size=8,
                      num_epochs=None)

    def block(n):
        train(model, input_fn=source, steps=n,
              hooks=[pyhooks.ProgressBarHook(writer=io.StringIO(), mode="plain"),
                     pyhooks.HistorySaverHook(every_n_step=10)])
    return block


def keras_fit():
    import keras
    import numpy as np

    import pyhooks

    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(2048, 8)).astype("float32"), rng.normal(size=(2048, 1))
    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="relu"),
                              keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")

    def block(n):
        hooks = [pyhooks.ProgressBarHook(writer=io.StringIO(), mode="plain"),
                 pyhooks.HistorySaverHook(every_n_step=10),
                 pyhooks.StepCounterHook(every_n_steps=100),
                 pyhooks.NanTensorHook("loss")]
        model.fit(x, y, batch_size=32, epochs=max(1, n // 64), verbose=0, shuffle=False,
                  callbacks=[pyhooks.keras_callback(hooks)])
    return block, lambda n: max(1, n // 64) * 64


def worker(case):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    steps_of = None
    if case.startswith("toy"):
        kind, hooks_kind = case.split(":")[1:]
        block = toy(kind, hooks_kind)
    elif case.startswith("estimator"):
        block = estimator(events=case != "estimator:no-events")
    else:
        block, steps_of = keras_fit()
    block(200)  # warm-up (graph, callables, tracing)
    print("ready", flush=True)
    for line in sys.stdin:
        n = int(line)
        start = time.process_time()
        block(n)
        done = steps_of(n) if steps_of else n
        print(json.dumps((time.process_time() - start) / done * 1e6), flush=True)


# --------------------------------------------------------------------------- main
def base_tree(rev):
    """The base commit's files in a temporary directory (git archive)."""
    where = tempfile.mkdtemp(prefix="pyhooks-base-")
    archive = subprocess.run(["git", "-C", ROOT, "archive", rev], capture_output=True,
                             check=True).stdout
    tarfile.open(fileobj=io.BytesIO(archive)).extractall(where)  # noqa: S202 - our own repo
    return where


class Worker:
    def __init__(self, case, tree):
        env = dict(os.environ, PYTHONPATH=tree, TF_CPP_MIN_LOG_LEVEL="2")
        self.proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker",
                                      case], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, env=env, cwd=tempfile.gettempdir())
        line = self.proc.stdout.readline()
        if line.strip() != "ready":
            raise RuntimeError(f"worker {case} in {tree} failed to start")

    def time(self, n):
        self.proc.stdin.write(f"{n}\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--worker")
    parser.add_argument("--base", default="661050e")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--only", help="run only the rows whose label contains this text")
    parser.add_argument("--idle", action="store_true",
                        help="no process keeping a core busy while the workers run")
    opts = parser.parse_args()
    if opts.worker:
        return worker(opts.worker)
    base = base_tree(opts.base)
    rows = [  # (label, case, tree, steps per block)
        ("toy, TF's 4 hooks: TensorFlow MonitoredSession", "toy:tf:tf4", ROOT, opts.steps),
        (f"toy, TF's 4 hooks: pyhooks {opts.base}", "toy:py:tf4", base, opts.steps),
        ("toy, TF's 4 hooks: pyhooks now", "toy:py:tf4", ROOT, opts.steps),
        (f"toy, everyday 4 hooks: pyhooks {opts.base}", "toy:py:everyday", base, opts.steps),
        ("toy, everyday 4 hooks: pyhooks now", "toy:py:everyday", ROOT, opts.steps),
        (f"toy, everyday 4, ordered increment: pyhooks {opts.base}", "toy:py:everyday-ordered",
         base, opts.steps),
        ("toy, everyday 4, ordered increment: pyhooks now", "toy:py:everyday-ordered", ROOT,
         opts.steps),
        (f"estimator (mtcars), train(): pyhooks {opts.base}", "estimator", base, 500),
        ("estimator (mtcars), train(): pyhooks now", "estimator", ROOT, 500),
        ("estimator (mtcars), train(), no event files: pyhooks now", "estimator:no-events", ROOT,
         500),
        (f"keras fit, 4 hooks: pyhooks {opts.base}", "keras", base, 640),
        ("keras fit, 4 hooks: pyhooks now", "keras", ROOT, 640),
    ]
    if opts.only:
        rows = [row for row in rows if opts.only in row[0]]
    # A graph step hands work to TensorFlow's thread pools; on a machine with idle cores
    # each hand-off may wait for a core to wake up, and by how much depends on which
    # worker ran before (TensorFlow's own MonitoredSession: 101 µs/step with a core busy,
    # 167 idle). A process spinning on one core makes every row pay the same.
    spinner = None if opts.idle else subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        workers = [Worker(case, tree) for _, case, tree, _ in rows]
        samples = [[] for _ in rows]
        for _ in range(opts.repeats):
            for i, (worker_, row) in enumerate(zip(workers, rows)):
                samples[i].append(worker_.time(row[3]))
        for worker_ in workers:
            worker_.close()
    finally:
        if spinner is not None:
            spinner.kill()
    print(f"\nRunner cost per step: medians of {opts.repeats} alternating blocks, process CPU "
          f"time, one worker process per row\n")
    print(f"| {'workload: system':55} | {'µs/step':>8} | {'min':>8} | {'max':>8} |")
    print(f"|{'-' * 57}|{'-' * 10}|{'-' * 10}|{'-' * 10}|")
    for (label, *_), values in zip(rows, samples):
        print(f"| {label:55} | {statistics.median(values):8.1f} | {min(values):8.1f} | "
              f"{max(values):8.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
