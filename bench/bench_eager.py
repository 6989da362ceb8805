"""Per-step cost of pyhooks on TF2 code: a ``tf.function`` custom loop and Keras ``model.fit``.

Compares, in one run (variants interleaved, medians over repeats, µs per step of
process CPU time), with the same tiny Keras model (Dense 4 -> 1, batch 8):

custom loop (``step()`` is a ``tf.function`` returning ``{"loss", "losses"}``):
  the bare loop, twice (the second, with its own model, shows what identical
  code measures: the noise floor); the bare loop also converting the loss to
  numpy (TensorFlow's part of any per-step monitoring); pyhooks'
  ``MonitoredSession(EagerSessionCreator(step))`` without hooks and with ProgressBarHook (writer: an in-memory sink),
  HistorySaverHook, StepCounterHook and NanTensorHook; and Keras' own
  ProgbarLogger, History and TerminateOnNaN driven through a ``CallbackList``
  as Keras documents for custom loops.
model.fit (``verbose=0``; Keras always adds History): no callbacks; Keras'
  ProgbarLogger + TerminateOnNaN (+ its History); ``pyhooks.keras_callback`` of
  the same four hooks, and without hooks. A fit's per-step cost is
  ``(time of fit(N0 + steps) - time of fit(N0)) / steps``, so the set-up of fit
  itself does not count.

The custom-loop variants of A take turns of 25 steps (the step's TensorFlow
work drifts within seconds here), made and run in a random order each repeat;
each fit and each B variant runs whole.

Target: pyhooks' four hooks add at most 10 µs per step over the bare loop, and no
more than Keras' own callbacks. "over bare" is the median over repeats of the
difference to the bare variant of the same repeat (paired: slow drifts of a
shared machine cancel). Keras' progress bar goes to a StringIO too
(stdout is redirected while timing).

Run: .venv/bin/python bench/bench_eager.py [--steps N] [--repeats R] [--profile]
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import itertools
import os
import random
import statistics
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

TARGET_US = 10.0
CLOCK = time.process_time  # steadier than wall time on a shared machine; counts TF's threads
FIT_BASE_STEPS = 100
LOOP_TURN = 25  # steps each custom-loop variant runs before the next one's turn (A)
# The order variants are made and take their turns in. Its own generator: Keras'
# set_random_seed (make_model) re-seeds the global one, which would give every
# repeat the same order, and the same variant the same place in it (worth +-20 µs
# per step of TensorFlow's step here, whatever the variant).
ORDER = random.Random()


def setup_tf():
    import tensorflow as tf

    tf.config.threading.set_inter_op_parallelism_threads(1)
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.get_logger().setLevel("ERROR")  # retracing notices: each variant builds its own step
    import keras

    return tf, keras


def make_model(tf, keras):
    keras.utils.set_random_seed(1)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(0.01), loss="mse")
    x = tf.random.stateless_normal([8, 4], seed=[1, 2])
    y = tf.reduce_sum(x, axis=1, keepdims=True)
    return model, tf.data.Dataset.from_tensors((x, y)).repeat()


def make_step(tf, keras):
    model, dataset = make_model(tf, keras)
    iterator = iter(dataset)
    optimizer = model.optimizer

    @tf.function
    def step():
        x, y = next(iterator)
        with tf.GradientTape() as tape:
            losses = tf.reduce_mean(tf.square(model(x, training=True) - y), axis=1)
            loss = tf.reduce_mean(losses)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return {"loss": loss, "losses": losses}

    return model, step


def four_hooks(steps):
    import pyhooks

    return [pyhooks.ProgressBarHook(total=steps, writer=io.StringIO(), mode="dynamic"),
            pyhooks.HistorySaverHook(), pyhooks.StepCounterHook(), pyhooks.NanTensorHook("loss")]


def noop_hooks(steps):
    """Four hooks that fetch what the four real ones fetch and do nothing with it."""
    import pyhooks
    from pyhooks.eager import GLOBAL_STEP_READ, LOSS

    class Fetch(pyhooks.SessionRunHook):
        def __init__(self, make):
            self.make = make

        def begin(self):  # as the real ones
            self.args = pyhooks.SessionRunArgs(self.make())

        def before_run(self, run_context):
            return self.args

        def after_run(self, run_context, run_values):
            pass

    return [Fetch(lambda: LOSS), Fetch(lambda: (GLOBAL_STEP_READ, LOSS)),
            Fetch(lambda: GLOBAL_STEP_READ), Fetch(lambda: "loss")]


def keras_three(keras):
    return [keras.callbacks.ProgbarLogger(), keras.callbacks.History(),
            keras.callbacks.TerminateOnNaN()]


# --------------------------------------------------------------------------- custom loop
def loop_variants(tf, keras):
    import pyhooks

    # each make(steps) gives run(n): the next n of its steps (see time_loops)
    def bare(steps):
        _, step = make_step(tf, keras)
        step()

        def run(n):
            for _ in range(n):
                step()
        return run

    def bare_numpy(steps):
        _, step = make_step(tf, keras)
        step()

        def run(n):
            for _ in range(n):
                step()["loss"].numpy()
        return run

    def monitored(hooks):
        def make(steps):
            _, step = make_step(tf, keras)
            creator = pyhooks.EagerSessionCreator(step)
            sess = pyhooks.MonitoredSession(creator, hooks(steps + 2))
            sess.run()
            sess.run()  # the second step traces the wrapper that keeps the global step

            def run(n):
                for _ in range(n):
                    sess.run()
            return run
        return make

    def keras_callbacks(steps):
        model, step = make_step(tf, keras)
        callbacks = keras.callbacks.CallbackList(keras_three(keras), model=model, verbose=1,
                                                 epochs=1, steps=steps + 1)
        callbacks.on_train_begin()
        callbacks.on_epoch_begin(0)
        step()
        batches = itertools.count()

        def run(n):
            for _ in range(n):
                i = next(batches)
                callbacks.on_train_batch_begin(i)
                outputs = step()
                callbacks.on_train_batch_end(i, {"loss": outputs["loss"]})
        return run

    return {
        "loop: bare step()": bare,
        "loop: bare step() again (a control: its own model, same code)": bare,
        "loop: bare step() + loss.numpy()": bare_numpy,
        "loop: pyhooks MonitoredSession, no hooks": monitored(lambda steps: []),
        "loop: pyhooks + ProgressBar, HistorySaver, StepCounter, NanTensor": monitored(four_hooks),
        "loop: Keras ProgbarLogger, History, TerminateOnNaN (CallbackList)": keras_callbacks,
    }


# --------------------------------------------------------------------------- model.fit
def fit_variants(tf, keras):
    import pyhooks

    def fit(callbacks):
        def make(steps):
            model, dataset = make_model(tf, keras)
            model.fit(dataset, epochs=1, steps_per_epoch=5, verbose=0)  # traces

            def run_n(n):
                model.fit(dataset, epochs=1, steps_per_epoch=n, verbose=0,
                          callbacks=callbacks(n))
            return run_n
        return make

    return {
        "fit: no callbacks": fit(lambda n: []),
        "fit: Keras ProgbarLogger, TerminateOnNaN (+ History)": fit(
            lambda n: [keras.callbacks.ProgbarLogger(), keras.callbacks.TerminateOnNaN()]),
        "fit: pyhooks.keras_callback, no hooks": fit(lambda n: [pyhooks.keras_callback([])]),
        "fit: pyhooks.keras_callback(ProgressBar, HistorySaver, StepCounter, NanTensor)": fit(
            lambda n: [pyhooks.keras_callback(four_hooks(n))]),
    }


# --------------------------------------------------------------------------- hook paths only
def stub_variants(tf, keras):
    """The same comparisons with TensorFlow's step taken out: only what the hooks add.

    The step's TensorFlow work varies by hundreds of µs from step to step on a
    loaded machine; here each "step" returns the same, already computed tensors
    (custom loop: pyhooks' runner, eager session, numpy conversions and hooks;
    Keras: its ``CallbackList`` calling the callbacks as ``fit`` does, with a
    batch's logs), so the per-step cost of the hooks themselves is measured.
    """
    import pyhooks

    _, step = make_step(tf, keras)
    outputs = step()  # real tensors: converting them to numpy is part of the cost
    loss = outputs["loss"]  # what a fit's logs hold

    def bare(steps):
        stub = outputs.copy
        return lambda: [stub() for _ in range(steps)]

    def monitored(hooks):
        def make(steps):
            creator = pyhooks.EagerSessionCreator(step)
            sess = pyhooks.MonitoredSession(creator, hooks(steps + 2))
            sess.run()
            sess.run()
            stepper = creator._stepper  # noqa: SLF001 - the TensorFlow call, replaced
            stepper._call = outputs.copy  # noqa: SLF001 - a new dict per step, as a step gives

            def run():
                for _ in range(steps):
                    sess.run()
                sess.close()
            return run
        return make

    def callback_list(callbacks):
        def make(steps):
            model, _ = make_model(tf, keras)
            model.optimizer.build(model.trainable_variables)
            model.train_function = lambda iterator: None
            cbs = keras.callbacks.CallbackList(callbacks(steps + 2), model=model, verbose=1,
                                               epochs=1, steps=steps + 2)
            cbs.on_train_begin()
            cbs.on_epoch_begin(0)

            def run():
                for i in range(steps):
                    cbs.on_train_batch_begin(i)
                    cbs.on_train_batch_end(i, {"loss": loss})
                cbs.on_train_end()
            return run
        return make

    return {
        "stub loop: bare (a dict of the step's tensors)": bare,
        "stub loop: pyhooks MonitoredSession, no hooks": monitored(lambda steps: []),
        "stub loop: pyhooks + 4 no-op hooks with the same fetches": monitored(noop_hooks),
        "stub loop: pyhooks + ProgressBar, HistorySaver, StepCounter, NanTensor": monitored(
            four_hooks),
        "stub fit: Keras CallbackList, no callbacks": callback_list(lambda steps: []),
        "stub fit: Keras ProgbarLogger, History, TerminateOnNaN": callback_list(
            lambda steps: keras_three(keras)),
        "stub fit: pyhooks.keras_callback, no hooks": callback_list(
            lambda steps: [pyhooks.keras_callback([])]),
        "stub fit: pyhooks.keras_callback(4 no-op hooks with the same fetches)": callback_list(
            lambda steps: [pyhooks.keras_callback(noop_hooks(steps))]),
        "stub fit: pyhooks.keras_callback(ProgressBar, HistorySaver, StepCounter, NanTensor)":
            callback_list(lambda steps: [pyhooks.keras_callback(four_hooks(steps))]),
    }


def time_loops(makes, steps, chunk=LOOP_TURN):
    """µs/step of each custom-loop variant, the variants taking turns of ``chunk`` steps.

    TensorFlow's step drifts by hundreds of µs within seconds on a shared
    machine; in turns of a few dozen steps every variant meets the same drift.
    The variants are made, and take each turn, in a random order (:data:`ORDER`).
    """
    names = ORDER.sample(list(makes), len(makes))
    runs = {name: makes[name](steps) for name in names}
    spent = dict.fromkeys(makes, 0.0)
    turns = max(1, steps // chunk)
    gc.collect()
    with contextlib.redirect_stdout(io.StringIO()):
        for _ in range(turns):
            for name in ORDER.sample(names, len(names)):
                start = CLOCK()
                runs[name](chunk)
                spent[name] += CLOCK() - start
    return {name: value / (turns * chunk) * 1e6 for name, value in spent.items()}


def time_loop(make, steps):
    run = make(steps)
    gc.collect()
    with contextlib.redirect_stdout(io.StringIO()):
        start = CLOCK()
        run()
        elapsed = CLOCK() - start
    return elapsed / steps * 1e6


def time_fit(make, steps):
    run_n = make(steps)
    gc.collect()
    with contextlib.redirect_stdout(io.StringIO()):
        start = CLOCK()
        run_n(FIT_BASE_STEPS)
        middle = CLOCK()
        run_n(FIT_BASE_STEPS + steps)
        end = CLOCK()
    return ((end - middle) - (middle - start)) / steps * 1e6


def profile(tf, keras, steps):
    import cProfile
    import pstats

    run = loop_variants(tf, keras)[
        "loop: pyhooks + ProgressBar, HistorySaver, StepCounter, NanTensor"](steps)
    profiler = cProfile.Profile()
    profiler.enable()
    run(steps)
    profiler.disable()
    pstats.Stats(profiler).sort_stats("tottime").print_stats(20)


def paired_over(samples, name, base):
    """Median over repeats of (variant - base) in the same repeat: drifts of the machine cancel."""
    return statistics.median(v - b for v, b in zip(samples[name], samples[base]))


def print_table(title, samples, bases, opts):
    medians = {name: statistics.median(values) for name, values in samples.items()}
    width = max(map(len, samples))
    print(title)
    print(f"{'variant':<{width}}  {'µs/step':>8}  {'over bare':>9}  {'min..max':>15}")
    print(f"{'':<{width}}  {'(median)':>8}  {'(paired)':>9}")
    for name, value in medians.items():
        base = next(b for prefix, b in bases.items() if name.startswith(prefix))
        over = ("" if name in bases.values() or name == base else
                f"{paired_over(samples, name, base):+.1f}")
        spread = f"{min(samples[name]):.1f}..{max(samples[name]):.1f}"
        print(f"{name:<{width}}  {value:8.1f}  {over:>9}  {spread:>15}")
    return samples


def verdict(samples, ours, keras_own, base, label):
    over, keras_over = paired_over(samples, ours, base), paired_over(samples, keras_own, base)
    target = "met" if over <= TARGET_US else "MISSED"
    versus = "no worse" if over <= keras_over else "WORSE"
    return (f"{label}: pyhooks' four hooks add {over:+.1f} µs/step (target <= {TARGET_US:.0f}: "
            f"{target}); Keras' own callbacks add {keras_over:+.1f} ({versus} than Keras)")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--profile", action="store_true",
                        help="cProfile the custom loop with the four hooks instead of the table")
    opts = parser.parse_args()
    tf, keras = setup_tf()
    if opts.profile:
        profile(tf, keras, opts.steps)
        return

    loops, fits, stubs = loop_variants(tf, keras), fit_variants(tf, keras), stub_variants(tf, keras)
    samples = {name: [] for name in (*loops, *fits)}
    stub_samples = {name: [] for name in stubs}
    for _ in range(opts.repeats):  # interleaved: every variant once per repeat
        for name, value in time_loops(loops, opts.steps).items():
            samples[name].append(value)
        for name, make in fits.items():
            samples[name].append(time_fit(make, opts.steps))
        for name, make in stubs.items():
            stub_samples[name].append(time_loop(make, opts.steps * 5))

    head = (f"{opts.repeats} repeats (interleaved), process CPU time, 1 TF thread, TensorFlow "
            f"{tf.__version__}, Keras {keras.__version__}")
    measured = print_table(
        f"A. end to end: tiny Keras model (Dense 4->1, batch 8), {opts.steps} steps x {head}",
        samples, {"loop": "loop: bare step()", "fit": "fit: no callbacks"}, opts)
    print(verdict(measured, "loop: pyhooks + ProgressBar, HistorySaver, StepCounter, NanTensor",
                  "loop: Keras ProgbarLogger, History, TerminateOnNaN (CallbackList)",
                  "loop: bare step()", "A loop"))
    print(verdict(measured,
                  "fit: pyhooks.keras_callback(ProgressBar, HistorySaver, StepCounter, NanTensor)",
                  "fit: Keras ProgbarLogger, TerminateOnNaN (+ History)", "fit: no callbacks",
                  "A fit"))
    numpy_part = paired_over(measured, "loop: bare step() + loss.numpy()", "loop: bare step()")
    control = paired_over(measured, "loop: bare step() again (a control: its own model, same code)",
                          "loop: bare step()")
    print(f"  (A loop: TensorFlow converting the loss to numpy: {numpy_part:+.1f} µs; the same "
          f"bare loop measured again: {control:+.1f}; the step-to-step spread of the TensorFlow "
          "work is far above 10 µs here: see B)")
    print()
    measured = print_table(
        f"B. hook paths only (TensorFlow's step stubbed out), {opts.steps * 5} steps x {head}",
        stub_samples, {"stub loop": "stub loop: bare (a dict of the step's tensors)",
                       "stub fit": "stub fit: Keras CallbackList, no callbacks"}, opts)
    print(verdict(measured,
                  "stub loop: pyhooks + ProgressBar, HistorySaver, StepCounter, NanTensor",
                  "stub fit: Keras ProgbarLogger, History, TerminateOnNaN",
                  "stub loop: bare (a dict of the step's tensors)", "B loop"))
    print(verdict(measured,
                  "stub fit: pyhooks.keras_callback(ProgressBar, HistorySaver, StepCounter, "
                  "NanTensor)", "stub fit: Keras ProgbarLogger, History, TerminateOnNaN",
                  "stub fit: Keras CallbackList, no callbacks", "B fit"))
    print(f"  (this machine: an empty Python function call takes {python_call_us():.3f} µs; "
          "all of B is Python and scales with it)")


def python_call_us(calls=200000):
    def nothing():
        pass

    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(calls):
            nothing()
        best = min(best, time.perf_counter() - start)
    return best / calls * 1e6


if __name__ == "__main__":
    main()
