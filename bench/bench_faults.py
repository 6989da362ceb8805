"""Reliability: the faults of issue 20 re-measured, printed as a table.

Each row runs a fault for real (new estimators or new processes on one
model_dir, files damaged on disk, kill -9, RLIMIT_FSIZE for a full disk,
huge sizes) and prints what a user finds: the files left, the lines of the
error, whether the run went on or was refused. With ``Rscript`` and the R
package installed (``make setup``), the R rows run ``r-package/tests/
testthat/fault-worker.R`` too. Every subprocess is bounded in time.

Run: .venv/bin/python bench/bench_faults.py
"""

from __future__ import annotations

import glob
import io
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKER = os.path.join(ROOT, "tests", "fault_worker.py")
R_WORKER = os.path.join(ROOT, "r-package", "tests", "testthat", "fault-worker.R")
ENV = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2")


def silent():
    import pyhooks

    return pyhooks.ProgressBarHook(writer=io.StringIO())


def data():
    from pyhooks.estimators import input_fn, load_mtcars

    return input_fn(load_mtcars(), features=["drat"], response="mpg", batch_size=8,
                    num_epochs=None)


def model(model_dir):
    from pyhooks.estimators import column_numeric, linear_regressor

    return linear_regressor([column_numeric("drat")], model_dir=model_dir)


def outcome(call):
    """``(what happened, lines of the error message)``."""
    try:
        call()
    except Exception as error:  # noqa: BLE001 - the answer is the error
        text = str(error)
        return f"{type(error).__name__}: {text.splitlines()[0]}", len(text.splitlines())
    return "ran", 0


def restarts(directory):
    import pyhooks

    for _ in range(12):  # a new estimator (a new saver) each time, as a new process
        hook = pyhooks.CheckpointSaverHook(directory, save_steps=1, save_graph_def=False)
        model(directory).train(data(), steps=4, hooks=[silent(), hook])
    size = sum(os.path.getsize(p) for p in glob.glob(os.path.join(directory, "model.ckpt-*")))
    return f"{len(glob.glob(os.path.join(directory, '*.index')))} checkpoints, {size} bytes"


def leftovers(directory):
    model(directory).train(data(), steps=1, hooks=[silent()])
    names = ["model.ckpt-9.data-00000-of-00001.tempstate1", "model.ckpt-9.index.tempstate2",
             "graph.pbtxt.tmp" + "0" * 32, ".checkpoint.abc.tmp"]
    for name in names:
        with open(os.path.join(directory, name), "wb") as stream:
            stream.write(b"x" * 100_000)
    os.makedirs(os.path.join(directory, "model.ckpt-9_temp"))
    model(directory).train(data(), steps=1, hooks=[silent()])
    left = [n for n in names + ["model.ckpt-9_temp"] if os.path.exists(os.path.join(directory, n))]
    return f"{len(names) + 1} planted, {len(left)} left"


def truncated(directory, suffix):
    model(directory).train(data(), steps=2, hooks=[silent()])
    path = glob.glob(os.path.join(directory, f"model.ckpt-2{suffix}"))[0]
    os.truncate(path, os.path.getsize(path) // 2)
    found, lines = outcome(lambda: model(directory).train(data(), steps=1, hooks=[silent()]))
    return f"{lines} line(s): {found}"


def damaged_index(directory, text):
    model(directory).train(data(), steps=2, hooks=[silent()])
    with open(os.path.join(directory, "checkpoint"), "w") as stream:
        stream.write(text)
    found, _ = outcome(lambda: model(directory).train(data(), steps=1, hooks=[silent()]))
    return found


def second_trainer(directory):
    os.makedirs(directory, exist_ok=True)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom pyhooks.hooks._model_dir import "
         "TrainingLock\nTrainingLock(sys.argv[1]).acquire()\nprint('held', flush=True)\n"
         "time.sleep(60)", directory], stdout=subprocess.PIPE, text=True, env=ENV)
    try:
        holder.stdout.readline()
        refused, _ = outcome(lambda: model(directory).train(data(), steps=1, hooks=[silent()]))
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
        after, _ = outcome(lambda: model(directory).train(data(), steps=1, hooks=[silent()]))
    finally:
        holder.kill()
        holder.wait(timeout=30)
    return f"{refused.split(':')[0]} while held; after kill -9: {after}"


def full_disk(directory):
    done = subprocess.run([sys.executable, WORKER, "fsize", directory, "200"], env=ENV,
                          capture_output=True, text=True, timeout=300)
    line = next((l for l in done.stderr.splitlines() if "DiskWriteError" in l), "none")
    return f"1 line: {line.split(': ', 1)[-1]}"


def full_disk_r(directory):
    rscript = shutil.which("Rscript")
    if rscript is None or not os.path.exists(R_WORKER):
        return "skipped (no Rscript)"
    out = directory + ".out"
    env = dict(ENV, RETICULATE_PYTHON=sys.executable,
               R_LIBS=os.path.join(ROOT, ".venv", "R-library"))
    subprocess.run([rscript, R_WORKER, "fsize", directory, out], env=env,
                   capture_output=True, timeout=300)
    try:
        with open(out) as stream:
            message = next(l for l in stream if l.startswith("message "))[8:].strip()
    except (OSError, StopIteration):
        return "no message"
    bullets = message.replace("\\n\u2139", "\n\u2139").splitlines()
    return f"{len(bullets)} bullets, cause on line 1: {bullets[0].replace(chr(92) + 'n', ' ')}"


def credentials(_):
    import pyhooks
    import tensorflow as tf

    worker = subprocess.Popen([sys.executable, WORKER, "gcs", "-"], stdout=subprocess.PIPE,
                              text=True, env=ENV)
    path = worker.stdout.readline().strip()
    worker.send_signal(signal.SIGKILL)
    worker.wait(timeout=30)
    after_kill = os.path.exists(path)
    hook = pyhooks.ConfigureGcsHook({"type": "service_account", "private_key": "x"})
    with tf.Graph().as_default():
        tf.compat.v1.train.get_or_create_global_step()
        with pyhooks.MonitoredSession(hooks=[hook]):
            pass
    return (f"left after kill -9: {int(after_kill)} (in {os.path.dirname(os.path.dirname(path))}"
            f"); after the next run: {int(os.path.exists(path))}")


def sizes(directory):
    from pyhooks.estimators import input_fn, load_mtcars

    results = []
    for kwargs in ({"queue_capacity": 10**10}, {"queue_capacity": 10**9},
                   {"batch_size": 10**10, "num_epochs": None}):
        given = input_fn(load_mtcars(), features=["drat"], response="mpg", **kwargs)
        found, _ = outcome(lambda: model(directory).train(given, steps=1, hooks=[silent()]))
        results.append(f"{next(iter(kwargs.items()))[1]:.0e}: {found.split(':')[0]}")
    return "; ".join(results)


def nan_hook(directory):
    import numpy as np
    import tensorflow as tf
    import warnings

    import pyhooks
    from pyhooks.estimators import column_numeric, input_fn, linear_regressor

    big = input_fn({"x": np.full(8, 1e30), "y": np.full(8, 1e30)}, features="x", response="y",
                   batch_size=8, num_epochs=None)
    estimator = linear_regressor([column_numeric("x")], model_dir=directory,
                                 optimizer=tf.compat.v1.train.GradientDescentOptimizer(1.0))
    hook = pyhooks.NanTensorHook("training_loss:0", fail_on_nan_loss=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found, _ = outcome(lambda: estimator.train(big, steps=5, hooks=[hook, silent()]))
    return f"{found} (stopped with a warning)" if found == "ran" else found


def r_spelling(_):
    """Messages of generated bad arguments (tests/test_bad_inputs_property.py) as R shows them."""
    import re
    import warnings

    sys.path.insert(0, os.path.join(ROOT, "tests"))
    from test_bad_inputs_property import CASES

    from pyhooks._rspelling import r_spelling as spell

    python_way = re.compile(r"\b(None|True|False)\b|\{'|\((dict|NoneType|str|float|int)\)")

    def pythonic(message):
        return bool(python_way.search(re.sub(r'`[^`]*`|"[^"]*"', "", message)))  # not code, text

    messages, clear, obscure, accepted = [], 0, 0, 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for make, base, argument, bad in CASES:
            for _ in range(25):
                try:
                    make(**base, **{argument: bad.example()})
                except (TypeError, ValueError) as error:
                    clear += argument in str(error)
                    obscure += argument not in str(error)
                    messages.append(str(error))
                except Exception:  # noqa: BLE001 - counted
                    obscure += 1
                else:
                    accepted += 1
    before = sum(map(pythonic, messages))
    after = sum(pythonic(spell(m)) for m in messages)
    return (f"{clear} clear (argument named), {obscure} obscure, {accepted} accepted; Python "
            f"spellings in {before} messages as raised, {after} as R shows them")


ROWS = [
    ("12 restarts, max_to_keep=5, 4 saves each", restarts),
    ("partial-save files at the next start", leftovers),
    ("truncated .data file", lambda d: truncated(d, ".data-*")),
    ("truncated .index file", lambda d: truncated(d, ".index")),
    ("garbage `checkpoint` index", lambda d: damaged_index(d, "garbage {{")),
    ("dangling `checkpoint` index", lambda d: damaged_index(
        d, 'model_checkpoint_path: "model.ckpt-77"\n')),
    ("second trainer on one model_dir", second_trainer),
    ("full disk (RLIMIT_FSIZE), Python", full_disk),
    ("full disk (RLIMIT_FSIZE), R", full_disk_r),
    ("GCS credentials after kill -9", credentials),
    ("queue_capacity / batch_size huge", sizes),
    ("NanTensorHook(fail_on_nan_loss=False)", nan_hook),
    ("1,100 generated bad arguments; their messages spelled for R", r_spelling),
]


def main():
    print("| fault | result | seconds |")
    print("|---|---|---|")
    for name, measure in ROWS:
        directory = tempfile.mkdtemp(prefix="pyhooks_bench_faults_")
        start = time.monotonic()
        try:
            result = measure(os.path.join(directory, "model"))
        finally:
            shutil.rmtree(directory, ignore_errors=True)
        result = result.replace(os.path.join(directory, "model"), "<model_dir>")
        result = result if len(result) <= 110 else result[:107] + "..."
        print(f"| {name} | {result} | {time.monotonic() - start:.1f} |", flush=True)


if __name__ == "__main__":
    main()
