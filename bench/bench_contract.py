"""What the data contract costs: this checkout's estimators beside an earlier one, and the check alone.

Run: ``.venv/bin/python bench/bench_contract.py --against DIR`` where DIR holds an
earlier pyhooks (e.g. ``git archive c28bf52 pyhooks | tar -x -C DIR``); without
``--against`` only this checkout runs. ``--rounds N`` (default 5).

Two sides, each a subprocess importing pyhooks from its own directory, alive for
the whole run and taking rounds in turn (so both see the same machine load);
medians of the rounds:

* mtcars: ``linear_regressor`` on ``drat``, batch 8, repeating input, default
  hooks: ``train(steps=10)`` and ``train(steps=510)`` on the same model, so
  ``per step = (t510 - t10) / 500`` and ``per call = t10 - 10 * per step``;
* (a): ``dnn_classifier`` [64, 32] on 100,000 rows x 20 numeric columns, batch
  256, default hooks: ``train(steps=300)`` after a warm-up call, examples/s of
  the whole call.

Then, in this process, the check alone on 1,000,000 rows (20 numeric columns, a
factor of 50 levels, a factor response): ``Schema.check`` of a new input
against the recorded schema (every ``train()``/``evaluate()``/``predict()``
of a new input pays it once; a repeated input is checked once, then cached),
and of an input whose factor lists its levels in another order.
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


def dnn_data(rows=100_000, columns=20):
    import numpy as np

    rng = np.random.default_rng(0)
    x = rng.normal(size=(rows, columns)).astype(np.float32)
    w = rng.normal(size=columns)
    data = {f"x{i}": x[:, i] for i in range(columns)}
    data["label"] = (x @ w + rng.normal(size=rows) > 0).astype(np.int64)
    return data


def serve():
    """One side: answers "round" on stdin with one JSON line of timings."""
    import io

    import pyhooks
    from pyhooks import estimators as est

    def bar():
        return pyhooks.ProgressBarHook(writer=io.StringIO())

    mtcars = est.load_mtcars()
    small = est.linear_regressor(est.feature_columns(est.column_numeric("drat")))
    small_input = est.input_fn(mtcars, ["drat"], "mpg", batch_size=8, num_epochs=None)
    small.train(small_input, steps=10, hooks=[bar()])
    data = dnn_data()
    names = [n for n in data if n != "label"]
    big = est.dnn_classifier([64, 32], est.feature_columns(*[est.column_numeric(n) for n in names]))
    big_input = est.input_fn(data, names, "label", batch_size=256, num_epochs=None)
    big.train(big_input, steps=50, hooks=[bar()])
    print(json.dumps({"ready": pyhooks.__file__}), flush=True)
    for line in sys.stdin:
        if line.strip() != "round":
            break
        times = {}
        for steps in (10, 510):
            start = time.perf_counter()
            small.train(small_input, steps=steps, hooks=[bar()])
            times[steps] = time.perf_counter() - start
        start = time.perf_counter()
        big.train(big_input, steps=300, hooks=[bar()])
        seconds = time.perf_counter() - start
        per_step = (times[510] - times[10]) / 500
        print(json.dumps({"per_step_ms": per_step * 1e3,
                          "per_call_ms": (times[10] - 10 * per_step) * 1e3,
                          "dnn_examples_s": 300 * 256 / seconds}), flush=True)


class Side:
    def __init__(self, name, path):
        self.name, self.path = name, path
        env = {**os.environ, "PYTHONPATH": path, "TF_CPP_MIN_LOG_LEVEL": "2"}
        self.process = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--serve"],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                        env=env, cwd=path)
        self.rounds = []

    def read(self):
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"side {self.name} ended")
        return json.loads(line)

    def round(self):
        self.process.stdin.write("round\n")
        self.process.stdin.flush()
        self.rounds.append(self.read())

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=60)


def contract_check(repeats=20):
    """Medians (ms) of Schema.check on 1,000,000 rows: as recorded, and levels reordered."""
    import numpy as np

    from pyhooks.estimators.inputs import column_from_r, input_fn
    from pyhooks.estimators.schema import Schema

    rng = np.random.default_rng(1)
    rows = 1_000_000
    data = {f"x{i}": rng.normal(size=rows) for i in range(20)}
    levels = [f"level{i}" for i in range(50)]
    codes = rng.integers(1, 51, rows).astype("<i4")
    answer = rng.integers(1, 3, rows).astype("<i4")

    def factor(values, names):
        return column_from_r("factor", values.tobytes(), names)

    first = input_fn({**data, "g": factor(codes, levels), "y": factor(answer, ["no", "yes"])},
                     [*data, "g"], "y")
    schema = Schema.record(first, [*data, "g"])
    reordered = input_fn({**data, "g": factor(51 - codes, levels[::-1]),
                          "y": factor(3 - answer, ["yes", "no"])}, [*data, "g"], "y")
    result = {}
    for name, candidate in (("as recorded", first), ("levels reordered", reordered)):
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            schema.check(candidate, labelled=True)
            times.append(time.perf_counter() - start)
        result[name] = statistics.median(times) * 1e3
    return result


def main(argv):
    if "--serve" in argv:
        serve()
        return
    rounds = int(argv[argv.index("--rounds") + 1]) if "--rounds" in argv else 5
    sides = [Side("this checkout", ROOT)]
    if "--against" in argv:
        sides.append(Side(f"against {argv[argv.index('--against') + 1]}",
                          os.path.abspath(argv[argv.index("--against") + 1])))
    for side in sides:
        where = side.read()["ready"]
        if not where.startswith(side.path):
            raise RuntimeError(f"side {side.name} imported pyhooks from {where}")
    for i in range(rounds):
        for side in (sides if i % 2 == 0 else sides[::-1]):
            side.round()
    for side in sides:
        side.close()
    print(f"load average at the end: {os.getloadavg()[0]:.2f}; {rounds} rounds, medians")
    print(f"{'side':<40} {'mtcars ms/step':>15} {'mtcars ms/call':>15} {'(a) examples/s':>15}")
    for side in sides:
        med = {k: statistics.median(r[k] for r in side.rounds) for k in side.rounds[0]}
        print(f"{side.name:<40} {med['per_step_ms']:>15.3f} {med['per_call_ms']:>15.1f} "
              f"{med['dnn_examples_s']:>15,.0f}")
    check = contract_check()
    print("\nSchema.check on 1,000,000 rows x 22 columns (median of 20):")
    for name, ms in check.items():
        print(f"  {name:<20} {ms:.2f} ms")


if __name__ == "__main__":
    main(sys.argv)
