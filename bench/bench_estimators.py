"""pyhooks' linear_regressor vs tf.estimator.LinearRegressor (TF 2.15) on mtcars, batch 8.

Run: ``.venv/bin/python bench/bench_estimators.py`` (``--quick`` for fewer repeats;
``--against DIR``: also pyhooks imported from the checkout DIR, e.g. an earlier
commit's ``git archive``, as a third side taking rounds in turn).

Both sides run in fresh subprocesses: pyhooks in this venv (TensorFlow 2.21),
tf.estimator in ``.venv-bench-tf215`` (``tensorflow-cpu==2.15.*`` and
``tensorflow-estimator==2.15.*``), which this script creates if it is missing.
Each side trains one model with its default hooks (pyhooks: NanTensorHook,
HistorySaverHook, ProgressBarHook writing to a sink, a checkpoint at the end of
each call; tf.estimator: NanTensorHook, LoggingTensorHook, StepCounterHook,
SummarySaverHook, CheckpointSaverHook) on the same shuffled, repeating input:

* first call: ``train(steps=10)`` on a new estimator, TensorFlow import excluded;
* then rounds of ``train(steps=SHORT)`` + ``train(steps=LONG)`` on the same
  model; the two side processes stay alive and take rounds in turn, so both see
  the same machine load. Per call ``time = fixed + steps * per_step``, so
  ``per_step = (median(LONG) - median(SHORT)) / (LONG - SHORT)`` and
  ``fixed = median(SHORT) - SHORT * per_step``.

The floors are bare ``Session.run`` loops over pyhooks' training op (no hooks),
with TensorFlow's thread pool and in the calling thread (what pyhooks' kept
session uses). Not a test: numbers vary with the machine and its load.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BENCH_VENV = os.path.join(ROOT, ".venv-bench-tf215")
MTCARS = os.path.join(ROOT, "pyhooks", "data", "mtcars.csv")
SHORT, LONG = 10, 1010


def _load_mtcars():
    import csv

    import numpy as np

    with open(MTCARS, encoding="utf-8") as stream:
        rows = list(csv.DictReader(stream))
    return {k: np.array([float(r[k]) for r in rows], dtype=np.float32) for k in ("drat", "mpg")}


def _serve(train, first, extra=None):
    """Answers the driver's commands on stdin with one JSON line each (see ``main``)."""
    print(json.dumps({"first": first}), flush=True)
    for line in sys.stdin:
        command = line.strip()
        if command == "round":
            times = {}
            for steps in (SHORT, LONG):
                start = time.perf_counter()
                train(steps)
                times[steps] = time.perf_counter() - start
            print(json.dumps({"short": times[SHORT], "long": times[LONG]}), flush=True)
        elif command == "floor" and extra is not None:
            print(json.dumps(extra()), flush=True)
        else:
            break


# --------------------------------------------------------------------------- sides
def side_pyhooks():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    sys.path.insert(0, ROOT)
    import pyhooks
    from pyhooks.estimators import _quiet

    _quiet.import_tensorflow()  # TensorFlow's import is not part of the first call
    from pyhooks.estimators import (column_numeric, feature_columns, input_fn, linear_regressor,
                                    load_mtcars)

    data = load_mtcars()
    fcs = feature_columns(column_numeric("drat"))
    inp = input_fn(data, features=["drat"], response="mpg", batch_size=8, num_epochs=None,
                   shuffle=True)

    def sink(text):
        pass

    def train(steps):
        return model.train(inp, steps=steps, hooks=[pyhooks.ProgressBarHook(writer=sink)])

    start = time.perf_counter()
    model = linear_regressor(fcs)
    train(10)
    first = time.perf_counter() - start

    def floor():
        """The same training op, bare ``Session.run``, no hooks (and in the calling thread)."""
        from tensorflow.core.protobuf import config_pb2

        state = next(s for (mode, _), s in model._states.items()  # noqa: SLF001
                     if mode == "train")
        result = {}
        for name, pool in (("floor", None), ("floor_inline", -1)):
            options = config_pb2.CallableOptions()
            options.target.append(state.train_op.name)
            if pool is not None:
                options.run_options.inter_op_thread_pool = pool
            call = state.session._make_callable_from_options(options)  # noqa: SLF001
            runs = []
            for _ in range(5):
                start = time.perf_counter()
                for _ in range(LONG):
                    call()
                runs.append((time.perf_counter() - start) / LONG)
            result[name] = statistics.median(runs)
        return result

    _serve(train, first, floor)


def side_tf_estimator():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tempfile

    import tensorflow as tf

    tf.get_logger().setLevel("ERROR")
    data = _load_mtcars()

    def input_fn():
        dataset = tf.data.Dataset.from_tensor_slices(({"drat": data["drat"]}, data["mpg"]))
        return dataset.shuffle(1000).repeat().batch(8)

    def train(steps):
        return model.train(input_fn, steps=steps)

    start = time.perf_counter()
    model = tf.estimator.LinearRegressor([tf.feature_column.numeric_column("drat")],
                                         model_dir=tempfile.mkdtemp(prefix="bench_tfest_"))
    train(10)
    first = time.perf_counter() - start
    _serve(train, first)


# --------------------------------------------------------------------------- driver
def _bench_python():
    return os.path.join(BENCH_VENV, "bin", "python")


def ensure_bench_venv():
    """Creates ``.venv-bench-tf215`` with TF 2.15 + tensorflow-estimator once; None or why not."""
    python = _bench_python()
    check = [python, "-c", "import tensorflow_estimator, tensorflow"]
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    if os.path.exists(python):
        if subprocess.run(check, capture_output=True, env=env).returncode == 0:
            return None
    print(f"== creating {os.path.relpath(BENCH_VENV, ROOT)} (tensorflow-cpu 2.15, "
          "tensorflow-estimator 2.15); once", flush=True)
    base = "python3.11" if subprocess.run(["which", "python3.11"],
                                          capture_output=True).returncode == 0 else sys.executable
    steps = [[base, "-m", "venv", BENCH_VENV],
             [python, "-m", "pip", "install", "-q", "--disable-pip-version-check",
              "tensorflow-cpu==2.15.*", "tensorflow-estimator==2.15.*"]]
    for command in steps:
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            lines = (done.stderr or done.stdout).strip().splitlines()
            return f"`{' '.join(command[:4])} ...` failed: " + " | ".join(lines[-3:])
    if subprocess.run(check, capture_output=True, env=env).returncode != 0:
        return "TensorFlow 2.15 installed but does not import"
    return None


class Side:
    """One side's server process."""

    def __init__(self, python, side, root=None):
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
        if root is not None:  # pyhooks from another checkout
            env["PYTHONPATH"] = os.path.abspath(root)
        self.process = subprocess.Popen(
            [python, os.path.abspath(__file__), "--serve", side], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        self.short, self.long = [], []
        self.first = self.ask(None)["first"]

    def ask(self, command):
        if command is not None:
            self.process.stdin.write(command + "\n")
            self.process.stdin.flush()
        while True:
            line = self.process.stdout.readline()
            if not line:
                self.process.wait()
                error = self.process.stderr.read().strip().splitlines() or ["no output"]
                raise RuntimeError(error[-1])
            if line.startswith("{"):
                return json.loads(line)

    def round(self):
        times = self.ask("round")
        self.short.append(times["short"])
        self.long.append(times["long"])

    def result(self):
        per_step = (statistics.median(self.long) - statistics.median(self.short)) / (LONG - SHORT)
        return {"per_step": per_step, "fixed": statistics.median(self.short) - SHORT * per_step,
                "first": self.first}

    def close(self):
        try:
            self.process.stdin.write("quit\n")
            self.process.stdin.close()
        except (BrokenPipeError, OSError):
            pass
        self.process.wait(timeout=60)


def main(argv):
    if "--serve" in argv:
        side = argv[argv.index("--serve") + 1]
        (side_pyhooks if side == "pyhooks" else side_tf_estimator)()
        return 0
    repeats = 3 if "--quick" in argv else 9
    why_not = ensure_bench_venv()
    ours = Side(sys.executable, "pyhooks")
    against = argv[argv.index("--against") + 1] if "--against" in argv else None
    before = Side(sys.executable, "pyhooks", against) if against else None
    theirs = None
    if why_not is None:
        try:
            theirs = Side(_bench_python(), "tf_estimator")
        except (RuntimeError, OSError) as error:
            why_not = str(error)
    if theirs is None:
        print(f"tf.estimator side unavailable: {why_not}")
    # rounds alternate between the sides, so that both see the same machine load
    for i in range(repeats):
        for side in ((ours, before, theirs) if i % 2 == 0 else (theirs, before, ours)):
            if side is not None:
                side.round()
    floor = ours.ask("floor")
    mine = ours.result()
    other = theirs.result() if theirs else {}
    ours.close()
    if theirs:
        theirs.close()
    if before:
        earlier, earlier_floor = before.result(), before.ask("floor")
        before.close()
        print(f"\npyhooks from {against} (the same rounds): "
              f"{earlier['per_step'] * 1e6:.1f} µs/step (this checkout: "
              f"{mine['per_step'] * 1e6:.1f}), fixed cost {earlier['fixed'] * 1e3:.1f} ms "
              f"({mine['fixed'] * 1e3:.1f}), first call {earlier['first']:.2f} s "
              f"({mine['first']:.2f}), bare Session.run in the caller's thread "
              f"{earlier_floor['floor_inline'] * 1e6:.1f} µs ({floor['floor_inline'] * 1e6:.1f})")

    def cell(value, scale, digits):
        return "-" if value is None else f"{value * scale:.{digits}f}"

    def ratio(a, b):
        return "-" if a is None or b is None else f"{a / b:.2f}"

    rows = [
        ("µs/step (hooked train loop)", mine["per_step"], other.get("per_step"), 1e6, 1, "≤ 0.60"),
        ("fixed cost of one train() [ms]", mine["fixed"], other.get("fixed"), 1e3, 1, "≤ 0.25"),
        ("first train() call, 10 steps [s]", mine["first"], other.get("first"), 1, 2, ""),
        ("floor: bare Session.run [µs/step]", floor["floor"], None, 1e6, 1, ""),
        ("floor, caller's thread [µs/step]", floor["floor_inline"], None, 1e6, 1, ""),
    ]
    print(f"\nmtcars, linear regressor on 'drat', batch 8, default hooks; medians of {repeats} "
          f"alternating rounds of train(steps={SHORT}) + train(steps={LONG}) on one model per side")
    head = (f"{'':36}{'pyhooks (TF 2.21)':>19}{'tf.estimator (TF 2.15)':>24}"
            f"{'ratio':>8}{'target':>9}")
    print(head)
    print("-" * len(head))
    for label, value, reference, scale, digits, target in rows:
        print(f"{label:36}{cell(value, scale, digits):>19}{cell(reference, scale, digits):>24}"
              f"{ratio(value, reference):>8}{target:>9}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
