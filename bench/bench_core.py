"""Per-step cost of the hooked runner on a tiny graph-mode train op (issue: core).

Prints one table measured in one run: medians over repeats, µs per step.
Run: .venv/bin/python bench/bench_core.py [--steps N] [--repeats R]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def import_time():
    code = "import time; t = time.perf_counter(); import pyhooks; print(time.perf_counter() - t)"
    runs = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                 check=True).stdout) for _ in range(5)]
    return statistics.median(runs)


def runner_only(repeats):
    """The runner's own cost per step, with a session that does nothing (no TensorFlow)."""
    import pyhooks

    class NullSession:
        graph = None

        def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
            return None

        def close(self):
            pass

    class Creator:
        def create_session(self):
            return NullSession()

    class Nothing(pyhooks.SessionRunHook):
        def before_run(self, run_context):
            return None

        def after_run(self, run_context, run_values):
            pass

    def per_step(hooks, steps=20000):
        sess = pyhooks.MonitoredSession(Creator(), hooks)
        run = sess.run
        samples = []
        for _ in range(repeats):
            start = time.process_time()
            for _ in range(steps):
                run("op")
            samples.append((time.process_time() - start) / steps * 1e6)
        return statistics.median(samples)

    bare = per_step([])
    ten = per_step([Nothing() for _ in range(10)])
    return bare, (ten - bare) / 10


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=7)
    opts = parser.parse_args()

    import tensorflow as tf

    import pyhooks

    v1 = tf.compat.v1
    graph = tf.Graph()
    with graph.as_default():
        step = v1.train.get_or_create_global_step()
        w = v1.get_variable("w", [4], initializer=v1.zeros_initializer())
        loss = tf.reduce_sum(tf.square(w - 1.0))
        train_op = v1.train.GradientDescentOptimizer(0.01).minimize(loss, global_step=step)

    class FetchLoss(pyhooks.SessionRunHook):
        def before_run(self, run_context):
            return pyhooks.SessionRunArgs(loss)

        def after_run(self, run_context, run_values):
            self.value = run_values.results

    class FetchNothing(pyhooks.SessionRunHook):
        def before_run(self, run_context):
            return None

        def after_run(self, run_context, run_values):
            pass

    with graph.as_default():
        one_thread = v1.ConfigProto(inter_op_parallelism_threads=1, intra_op_parallelism_threads=1)
        raw = v1.Session(graph=graph, config=one_thread)
        raw.run(v1.global_variables_initializer())
        # TensorFlow's runner wants a real Session from its creator: give it the raw one.
        class TfKeep(v1.train.SessionCreator):
            def create_session(self):
                return raw

    def bare(fetches):
        def loop(n):
            run = raw.run
            for _ in range(n):
                run(fetches)
        return loop

    def callable_of(fetches):
        def loop(n):
            run = raw.make_callable(fetches)
            for _ in range(n):
                run()
        return loop

    def hooked(kind, hooks, pair=False):
        with graph.as_default():
            if kind == "tf":
                sess = v1.train.MonitoredSession(TfKeep(), hooks=hooks)
                # TF's close() would close the shared raw session: keep it open.
                sess._sess._sess._sess._sess.close = lambda: None  # noqa: SLF001
            else:
                sess = pyhooks.MonitoredSession(TfKeep(), hooks)  # never closed here

        def loop(n):
            run = sess.run
            for _ in range(n):
                run(train_op)

        def loop_pair(n):  # the classic loop: a new list at every step
            run = sess.run
            for _ in range(n):
                run([train_op, loss])
        return loop_pair if pair else loop

    cases = [
        ("(a)  bare Session.run(train_op)", bare(train_op)),
        ("(a') bare Session.run([train_op, loss])", bare([train_op, loss])),
        ("     (ref.) make_callable([train_op, loss])", callable_of([train_op, loss])),
        ("(b)  tf MonitoredSession, 0 hooks", hooked("tf", [])),
        ("(c)  pyhooks MonitoredSession, 0 hooks", hooked("py", [])),
        ("(d)  tf, 10 hooks fetching the loss", hooked("tf", [FetchLoss() for _ in range(10)])),
        ("(d)  pyhooks, 10 hooks fetching the loss", hooked("py", [FetchLoss() for _ in range(10)])),
        ("(e)  tf, 10 hooks fetching nothing", hooked("tf", [FetchNothing() for _ in range(10)])),
        ("(e)  pyhooks, 10 hooks fetching nothing", hooked("py", [FetchNothing() for _ in range(10)])),
        ("(f)  tf, (d) with run([train_op, loss])",
         hooked("tf", [FetchLoss() for _ in range(10)], pair=True)),
        ("(f)  pyhooks, (d) with run([train_op, loss])",
         hooked("py", [FetchLoss() for _ in range(10)], pair=True)),
    ]
    for _, loop in cases:  # warm up
        loop(200)
    samples = {name: [] for name, _ in cases}
    for _ in range(opts.repeats):  # interleaved, so drift hits every case alike
        for name, loop in cases:
            start = time.process_time()  # CPU time: steadier than wall time on a shared machine
            loop(opts.steps)
            samples[name].append((time.process_time() - start) / opts.steps * 1e6)
    med = {name: statistics.median(v) for name, v in samples.items()}
    base = med["(a)  bare Session.run(train_op)"]
    print(f"\npyhooks core benchmark: {opts.steps} steps x {opts.repeats} repeats (interleaved), "
          "medians of process CPU time, 1 TF thread\n")
    print(f"| {'case':45} | {'µs/step':>8} | {'over (a)':>9} |")
    print(f"|{'-' * 47}|{'-' * 10}|{'-' * 11}|")
    for name, _ in cases:
        print(f"| {name:45} | {med[name]:8.1f} | {med[name] - base:+9.1f} |")
    tf_e = med["(e)  tf, 10 hooks fetching nothing"] - med["(b)  tf MonitoredSession, 0 hooks"]
    py_e = med["(e)  pyhooks, 10 hooks fetching nothing"] - med["(c)  pyhooks MonitoredSession, 0 hooks"]
    print(f"\nper hook that fetches nothing: tf {tf_e / 10:.2f} µs, pyhooks {py_e / 10:.2f} µs")
    print(f"pyhooks (d) vs (a'): {med['(d)  pyhooks, 10 hooks fetching the loss'] - med[cases[1][0]]:+.1f} µs")
    print(f"pyhooks (f) vs (a'): "
          f"{med['(f)  pyhooks, (d) with run([train_op, loss])'] - med[cases[1][0]]:+.1f} µs")
    # Runner overhead is a few µs against a step of ~150 µs whose own spread is
    # larger: also measure it as the median of many alternating paired runs.
    def paired(first, second, pairs=25, steps=1000):
        diffs = []
        for _ in range(pairs):
            start = time.process_time()
            first(steps)
            mid = time.process_time()
            second(steps)
            diffs.append(((time.process_time() - mid) - (mid - start)) / steps * 1e6)
        return statistics.median(diffs)

    loops = dict(cases)
    c_minus_a = paired(loops["(a)  bare Session.run(train_op)"],
                       loops["(c)  pyhooks MonitoredSession, 0 hooks"])
    e_minus_c = paired(loops["(c)  pyhooks MonitoredSession, 0 hooks"],
                       loops["(e)  pyhooks, 10 hooks fetching nothing"])
    print(f"paired medians (25 alternating pairs): (c) - (a) = {c_minus_a:+.1f} µs/step; "
          f"(e) - (c) = {e_minus_c:+.1f} µs/step = {e_minus_c / 10:+.2f} µs per hook")
    bare, per_hook = runner_only(opts.repeats)
    print(f"runner only (a session that does nothing): {bare:.2f} µs/step with 0 hooks, "
          f"{per_hook:.2f} µs per hook that fetches nothing")
    print(f"`import pyhooks`: {import_time() * 1000:.1f} ms (TensorFlow not imported)")


if __name__ == "__main__":
    main()
