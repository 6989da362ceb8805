"""steps_per_execution on the eager backend and in Keras ``fit``, beside one step per call.

Run: ``.venv/bin/python bench/bench_steps_per_execution.py`` (``--rounds 3``,
``--steps 1200``, ``--spe 1,10,100``).

Workload (synthetic data from a fixed seed, as ``bench_floor.py``'s ``dnn``): a
[64, 32] ReLU network with a logistic output (Adagrad 0.05) on 100,000 rows x
20 numeric columns, batch 256, the batches from a ``tf.data`` pipeline (the
arrays shuffled each epoch, repeated, prefetched).

Sides, all in this process, built and warmed (traced) before the first round:

* ``eager loop``: a ``tf.function`` step driven by ``pyhooks.MonitoredSession``
  over ``EagerSessionCreator(step, steps_per_execution=N)`` with the everyday
  hooks (``ProgressBarHook`` to a null stream, ``HistorySaverHook(every_n_step=10)``,
  ``StepCounterHook``) and ``StopAtStepHook(num_steps=)``;
* ``eager, no pyhooks``: the same step called in a plain Python loop (N = 1);
* ``Keras fit``: the same network compiled with ``steps_per_execution=N``,
  ``fit(steps_per_epoch=, epochs=1)`` with ``keras_callback`` of the same hooks,
  and without any callback.

Each round times every side once (the order turns, and reverses every other
round): one loop or ``fit`` of ``--steps`` steps. The table shows the medians
of examples/s (wall) and the process's CPU time per step (all threads), and
the load average during the rounds.
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

ROWS, COLS, BATCH = 100_000, 20, 256


def data():
    import numpy as np

    rng = np.random.default_rng(1)
    x = rng.normal(size=(ROWS, COLS)).astype(np.float32)
    y = (x @ rng.normal(size=COLS).astype(np.float32) > 0).astype(np.float32)
    return x, y


def batches(x, y):
    import tensorflow as tf

    return (tf.data.Dataset.from_tensor_slices((x, y)).shuffle(ROWS, seed=0).batch(BATCH)
            .repeat().prefetch(2))


def network():
    import keras

    keras.utils.set_random_seed(0)
    return keras.Sequential([keras.Input((COLS,)), keras.layers.Dense(64, activation="relu"),
                             keras.layers.Dense(32, activation="relu"), keras.layers.Dense(1)])


def everyday_hooks():
    import pyhooks

    return [pyhooks.ProgressBarHook(writer=io.StringIO()),
            pyhooks.HistorySaverHook(every_n_step=10), pyhooks.StepCounterHook()]


class Eager:
    """The step as a tf.function; run by pyhooks with ``spe`` steps a call, or by a plain loop."""

    def __init__(self, x, y, spe):
        import keras
        import tensorflow as tf

        import pyhooks

        model, optimizer = network(), keras.optimizers.Adagrad(0.05)
        iterator = iter(batches(x, y))

        @tf.function
        def step():
            features, labels = next(iterator)
            with tf.GradientTape() as tape:
                logits = model(features, training=True)[:, 0]
                losses = tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)
                loss = tf.reduce_sum(losses)
            variables = model.trainable_variables
            optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
            return {"loss": loss, "losses": losses}

        self.step = step
        self.creator = None if spe is None else pyhooks.EagerSessionCreator(
            step, steps_per_execution=spe)

    def run(self, steps):
        import pyhooks

        if self.creator is None:
            for _ in range(steps):
                self.step()
            return
        hooks = [*everyday_hooks(), pyhooks.StopAtStepHook(num_steps=steps)]
        with pyhooks.MonitoredSession(self.creator, hooks=hooks) as session:
            while not session.should_stop():
                session.run()


class Fit:
    """Keras ``fit`` with ``steps_per_execution=spe``, with the hooks' callback or none."""

    def __init__(self, x, y, spe, hooks):
        import keras

        self.model = network()
        self.model.compile(optimizer=keras.optimizers.Adagrad(0.05),
                           loss=keras.losses.BinaryCrossentropy(from_logits=True),
                           steps_per_execution=spe)
        self.data = batches(x, y)
        self.hooks = hooks

    def run(self, steps):
        import pyhooks

        callbacks = [pyhooks.keras_callback(everyday_hooks())] if self.hooks else []
        self.model.fit(self.data, steps_per_epoch=steps, epochs=1, verbose=0,
                       callbacks=callbacks)


def measure(side, steps):
    wall, cpu = time.perf_counter(), time.process_time()
    side.run(steps)
    return time.perf_counter() - wall, time.process_time() - cpu


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=1200)
    parser.add_argument("--spe", default="1,10,100")
    args = parser.parse_args()
    spes = [int(s) for s in args.spe.split(",")]
    x, y = data()
    sides = {"eager, no pyhooks (plain loop)": Eager(x, y, None)}
    for spe in spes:
        sides[f"eager loop, everyday hooks, spe {spe}"] = Eager(x, y, spe)
    for spe in spes:
        sides[f"Keras fit, everyday hooks, spe {spe}"] = Fit(x, y, spe, True)
        sides[f"Keras fit, no callback, spe {spe}"] = Fit(x, y, spe, False)
    for side in sides.values():  # build, trace, warm up
        side.run(max(200, max(spes)))
    names, loads = list(sides), []
    times = {name: [] for name in names}
    for r in range(args.rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        if r % 2:
            order.reverse()
        for name in order:
            times[name].append(measure(sides[name], args.steps))
        loads.append(os.getloadavg()[0])
    print(f"\ndnn [64, 32], {ROWS:,} x {COLS}, batch {BATCH}, {args.steps} steps per round, "
          f"{args.rounds} rounds; load average {min(loads):.1f}-{max(loads):.1f}\n")
    print("| side | examples/s (wall) | CPU µs/step |")
    print("|---|---:|---:|")
    for name in names:
        rate = statistics.median(args.steps * BATCH / w for w, _ in times[name])
        cpu = statistics.median(c / args.steps * 1e6 for _, c in times[name])
        print(f"| {name} | {rate:,.0f} | {cpu:.0f} |", flush=True)


if __name__ == "__main__":
    main()
