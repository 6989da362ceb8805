"""Per-step cost of the built-in hooks on a tiny graph-mode train op.

Compares, in one run (variants interleaved, medians over repeats, µs per step):
a bare ``Session.run`` loop fetching the loss; the same loop under
``pyhooks.MonitoredSession`` with ProgressBarHook (writer: an in-memory sink),
HistorySaverHook, StepCounterHook and NanTensorHook; and under
``tf.compat.v1.train.MonitoredSession`` with TensorFlow's StepCounterHook,
NanTensorHook, LoggingTensorHook and StopAtStepHook. Target: pyhooks' four
hooks add at most 10 µs per step over the bare loop.

Run: .venv/bin/python bench/bench_hooks.py [--steps N] [--repeats R] [--profile]
"""

from __future__ import annotations

import argparse
import gc
import io
import os
import statistics
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

TARGET_US = 10.0
# CPU time of the whole process (TensorFlow's threads included): on a shared machine it
# is much steadier than wall time, and it still counts every cycle the hooks cost.
CLOCK = time.process_time


def build_graph(tf):
    from tensorflow.python.training import training_util

    v1 = tf.compat.v1
    graph = tf.Graph()
    with graph.as_default():
        step = v1.train.get_or_create_global_step()
        read = training_util._get_or_create_global_step_read()
        x = tf.constant([[1.0], [2.0], [3.0], [4.0], [5.0], [6.0], [7.0], [8.0]])
        w = v1.get_variable("w", [1, 1], initializer=v1.zeros_initializer())
        per_example = tf.reshape(tf.square(tf.matmul(x, w) - 2.0 * x), [-1])
        v1.add_to_collection(v1.GraphKeys.LOSSES, per_example)
        loss = tf.reduce_sum(per_example)
        update = v1.train.GradientDescentOptimizer(1e-4).minimize(loss)
        with tf.control_dependencies([read, update]):
            train_op = v1.assign_add(step, 1)
        v1.add_to_collection(v1.GraphKeys.TRAIN_OP, train_op)
        graph.hook_fetches = [read, per_example]  # what pyhooks' four hooks add to a step
    return graph, train_op, loss


def variants(tf, steps):
    """``{name: make(loss)}``: each ``make`` returns a session for the current default graph."""
    import pyhooks
    from pyhooks.hooks import HistorySaverHook, NanTensorHook, ProgressBarHook, StepCounterHook

    v1 = tf.compat.v1
    tfh = v1.train
    # one thread each way: every variant runs the same way, and less scheduling noise
    config = v1.ConfigProto(inter_op_parallelism_threads=1, intra_op_parallelism_threads=1)

    def creator():
        return tfh.ChiefSessionCreator(config=config)

    def bare(loss):
        sess = v1.Session(config=config)
        sess.run(v1.global_variables_initializer())
        return sess

    class BareWithHookFetches:
        """The bare loop, also fetching what the four hooks fetch: TensorFlow's own cost."""

        def __init__(self, loss):
            self.sess, self.extra = bare(loss), v1.get_default_graph().hook_fetches

        def run(self, fetches):
            return self.sess.run([fetches, *self.extra])

        def close(self):
            self.sess.close()

    class Callable:
        """What a runner caching ``Session.make_callable`` per fetch list could reach."""

        def __init__(self, loss):
            graph = v1.get_default_graph()
            self.sess = bare(loss)
            self.call = self.sess.make_callable([graph.get_collection(v1.GraphKeys.TRAIN_OP)[0],
                                                 loss, *graph.hook_fetches])

        def run(self, fetches):
            return self.call()

        def close(self):
            self.sess.close()

    def four_hooks(loss):
        return [ProgressBarHook(total=steps, writer=io.StringIO(), mode="dynamic"),
                HistorySaverHook(), StepCounterHook(), NanTensorHook(loss)]

    def pyhooks_four(loss):
        return pyhooks.MonitoredSession(creator(), four_hooks(loss))

    class CallableCache:
        """Prototype of a core change: the raw session with ``make_callable`` per fetch list."""

        def __init__(self):
            self.sess = creator().create_session()
            self.graph, self.cache = self.sess.graph, {}

        def create_session(self):
            return self

        def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
            if feed_dict or options or run_metadata or type(fetches) not in (list, tuple):
                return self.sess.run(fetches, feed_dict, options, run_metadata)
            key = (type(fetches), *map(id, fetches))
            call = self.cache.get(key)
            if call is None:
                call = self.cache[key] = self.sess.make_callable(fetches)
            return call()

        def close(self):
            self.sess.close()

    def pyhooks_four_cached(loss):
        return pyhooks.MonitoredSession(CallableCache(), four_hooks(loss))

    def pyhooks_none(loss):
        return pyhooks.MonitoredSession(creator(), [])

    def tf_four(loss):
        hooks = [tfh.StepCounterHook(), tfh.NanTensorHook(loss),
                 tfh.LoggingTensorHook({"loss": loss}, every_n_iter=100),
                 tfh.StopAtStepHook(last_step=10**12)]
        return tfh.MonitoredSession(creator(), hooks)

    def single(hook_factory):
        return lambda loss: pyhooks.MonitoredSession(creator(),
                                                     [hook_factory(loss)])

    return {
        "bare Session.run": bare,
        "bare Session.run + the hooks' fetches (step, per-example loss)": BareWithHookFetches,
        "  (for reference: make_callable of the same 4 fetches, no hooks)": Callable,
        "pyhooks MonitoredSession, no hooks": pyhooks_none,
        "pyhooks + ProgressBar, HistorySaver, StepCounter, NanTensor": pyhooks_four,
        "tf MonitoredSession + StepCounter, NanTensor, LoggingTensor, StopAtStep": tf_four,
        "  (prototype: pyhooks + the four, raw session.run via a make_callable cache)":
            pyhooks_four_cached,
        "  pyhooks + ProgressBarHook only": single(
            lambda loss: ProgressBarHook(total=steps, writer=io.StringIO(), mode="dynamic")),
        "  pyhooks + HistorySaverHook only": single(lambda loss: HistorySaverHook()),
        "  pyhooks + StepCounterHook only": single(lambda loss: StepCounterHook()),
        "  pyhooks + NanTensorHook only": single(NanTensorHook),
    }


def time_loop(tf, make, steps, warmup=200):
    """µs per step of ``steps`` runs of (train_op, loss), on a fresh graph."""
    graph, train_op, loss = build_graph(tf)
    fetches = (train_op, loss)
    with graph.as_default():
        sess = make(loss)
        try:
            for _ in range(warmup):
                sess.run(fetches)
            gc.collect()
            start = CLOCK()
            for _ in range(steps):
                sess.run(fetches)
            elapsed = CLOCK() - start
        finally:
            sess.close()
    return elapsed / steps * 1e6


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--profile", action="store_true",
                        help="cProfile the four pyhooks hooks' loop instead of the table")
    opts = parser.parse_args()

    import tensorflow as tf

    table = variants(tf, opts.steps + 200)
    if opts.profile:
        import cProfile
        import pstats

        name = "pyhooks + ProgressBar, HistorySaver, StepCounter, NanTensor"
        graph, train_op, loss = build_graph(tf)
        fetches = (train_op, loss)
        with graph.as_default():
            sess = table[name](loss)
            profiler = cProfile.Profile()
            profiler.enable()
            for _ in range(opts.steps):
                sess.run(fetches)
            profiler.disable()
            sess.close()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(25)
        return

    samples = {name: [] for name in table}
    for _ in range(opts.repeats):
        for name, make in table.items():
            samples[name].append(time_loop(tf, make, opts.steps))
    medians = {name: statistics.median(values) for name, values in samples.items()}
    bare = medians["bare Session.run"]
    width = max(map(len, table))
    print(f"tiny graph-mode train op, {opts.steps} steps x {opts.repeats} repeats (interleaved), "
          f"process CPU time, 1 TF thread, TensorFlow {tf.__version__}")
    print(f"{'variant':<{width}}  {'µs/step':>8}  {'over bare':>9}  {'min..max':>15}")
    print(f"{'':<{width}}  {'(median)':>8}")
    for name, value in medians.items():
        spread = f"{min(samples[name]):.1f}..{max(samples[name]):.1f}"
        over = "" if name.startswith("bare") else f"{value - bare:+.1f}"
        print(f"{name:<{width}}  {value:8.1f}  {over:>9}  {spread:>15}")
    four = medians["pyhooks + ProgressBar, HistorySaver, StepCounter, NanTensor"] - bare
    verdict = "met" if four <= TARGET_US else "MISSED"
    tf_part = medians["bare Session.run + the hooks' fetches (step, per-example loss)"] - bare
    print(f"target: pyhooks' four hooks add <= {TARGET_US:.0f} µs/step over bare: "
          f"{four:+.1f} µs -> {verdict}")
    print(f"  of which TensorFlow fetching the two extra tensors: {tf_part:+.1f} µs; "
          f"runner + hooks in Python: {four - tf_part:+.1f} µs")


if __name__ == "__main__":
    main()
