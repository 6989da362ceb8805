"""Scaling on localhost: a DNN on a tabular set, 1 vs 2 workers (MultiWorkerMirroredStrategy).

Every worker is a process of its own (``TF_CONFIG`` on loopback ports); each
reads its own shard of a synthetic tabular regression set (8 numeric features,
20,000 rows, fixed seed) in batches of 64 and trains a Dense 64-64-1 network
with SGD, a custom loop (``strategy.run`` inside a ``tf.function``). Per worker
count, in turns (``--repeats``, medians reported), the workers run:

  bare       the loop alone: ``train_step()`` N times, no hooks;
  pyhooks/-  ``MonitoredSession(EagerSessionCreator(train_step, strategy=...))``
             with StopAtStepHook, HistorySaverHook(every 10), NanTensorHook and
             StepCounterHook(every 100), no stop agreement
             (``agree_every_n_steps=None``): the hooks' own cost;
  pyhooks/1  the same, workers agreeing on stopping every step;
  pyhooks/10 the same, agreeing every 10 steps;
  pyhooks/auto the same, agreeing as the default does (``"auto"``: steps between
             agreements from measured times, a StopAtStepHook's step agreed at it);
  estimator/- ``dnn_regressor(hidden_units=[64, 64])`` on the same shard, its
             ``train(steps=N)`` under ``run_config(train_distribute=strategy)``
             (graph mode, the estimator's own hooks) with no agreement
             (``agree_every_n_steps=None``): the engine alone;
  estimator/1 the same, ``agree_every_n_steps=1`` (every step);
  estimator/auto the same, the default (``"auto"``). Another engine than the
             custom loop: its costs are paired with ``estimator/-``.

Columns: steps/s and examples/s (all workers: steps x 64 x workers) of worker 0,
and pyhooks' cost per step over the bare loop of the same turn (paired, so the
drift of a shared machine cancels), worker 0 and worker 1; with two workers,
the agreement's own cost per step (over ``pyhooks/-``, or ``estimator/-``, of
the same turn) and as a share of that baseline's step, worker 0; worker 0's CPU
time per step (all its threads) and the agreement's CPU time per step over the
same baseline; the custom loop's agreements among its timed steps (median of the
turns; their number times ``pyhooks/1``'s cost per agreement is the agreement's cost
apart from the noise of the paired columns). With one worker no
agreement is made (there is nobody to agree with). Wall-clock times of the timed
steps (the first 10 of each turn not counted: tracing, the first agreement).

Run: .venv/bin/python bench/bench_distribute.py [--steps N] [--repeats R]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

WARMUP = 10  # with the steps, a multiple of 10: pyhooks/10 stops at an agreement
BATCH = 64
AGREEMENTS = {"pyhooks/-": None, "pyhooks/1": 1, "pyhooks/10": 10, "pyhooks/auto": "auto"}
ESTIMATORS = {"estimator/-": None, "estimator/1": 1, "estimator/auto": "auto"}
BASELINES = {"pyhooks/-", "estimator/-"}  # the agreement's cost is paired with these


def free_ports(count):
    sockets = [socket.socket() for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


# --------------------------------------------------------------------------- one worker
def worker(args):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import numpy as np
    import tensorflow as tf

    import pyhooks

    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    rng = np.random.default_rng(0)
    features = rng.normal(size=(20000, 8)).astype(np.float32)
    target = (features @ rng.normal(size=(8, 1)) + 0.1 * rng.normal(size=(20000, 1))).astype(
        np.float32)

    def dataset(context):
        data = tf.data.Dataset.from_tensor_slices((features, target)).shard(
            context.num_input_pipelines, context.input_pipeline_id)
        return data.shuffle(2048, seed=1).batch(BATCH, drop_remainder=True).repeat().prefetch(2)

    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.Input((8,)), tf.keras.layers.Dense(64, "relu"),
                                     tf.keras.layers.Dense(64, "relu"), tf.keras.layers.Dense(1)])
        optimizer = tf.keras.optimizers.SGD(0.01)
    iterator = iter(strategy.distribute_datasets_from_function(dataset))

    @tf.function
    def train_step():
        def replica(x, y):
            with tf.GradientTape() as tape:
                losses = tf.reduce_mean(tf.square(model(x, training=True) - y), axis=1)
                loss = tf.reduce_mean(losses)
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return {"loss": loss, "losses": losses}
        return strategy.run(replica, args=next(iterator))

    steps = args.steps

    def bare():
        for _ in range(WARMUP):
            train_step()
        start, cpu = time.perf_counter(), time.process_time()
        for _ in range(steps):
            outputs = train_step()
        float(strategy.experimental_local_results(outputs["loss"])[0])  # wait for the last
        cpu_times["bare"].append(time.process_time() - cpu)
        return time.perf_counter() - start

    def hooked(every):
        hooks = [pyhooks.StopAtStepHook(num_steps=WARMUP + steps),
                 pyhooks.HistorySaverHook(every_n_step=10), pyhooks.NanTensorHook("loss"),
                 pyhooks.StepCounterHook(every_n_steps=100)]
        worker = pyhooks.distribute.find_worker(strategy)
        agreement = None
        if every is not None and worker.num_workers > 1:  # as EagerSessionCreator(
            # agree_every_n_steps=) adds it, last; made here to count its agreements
            agreement = pyhooks.distribute.StopAgreementHook(strategy, worker, every, hooks=hooks)
            hooks.append(agreement)
        creator = pyhooks.EagerSessionCreator(train_step, strategy=strategy)
        with pyhooks.MonitoredSession(creator, hooks=hooks) as session:
            for _ in range(WARMUP):
                session.run()
            start, cpu = time.perf_counter(), time.process_time()
            done = 0
            while not session.should_stop():
                session.run()
                done += 1
            elapsed = time.perf_counter() - start
            cpu = time.process_time() - cpu
        assert done == steps, (done, steps)
        name = next(k for k, v in AGREEMENTS.items() if v == every)
        cpu_times[name].append(cpu)
        if agreement is not None:  # agreements after the warm-up: the timed steps'
            agreements[name].append(sum(step > WARMUP for step in agreement.vote_steps))
        return elapsed

    task = strategy.cluster_resolver.task_id
    shard = {f"x{i}": features[task::strategy.num_replicas_in_sync, i] for i in range(8)}
    shard["y"] = target[task::strategy.num_replicas_in_sync, 0]
    columns = pyhooks.feature_columns(*[pyhooks.column_numeric(f"x{i}") for i in range(8)])
    regressors = {name: pyhooks.dnn_regressor([64, 64], columns, config=pyhooks.estimators.run_config(
        train_distribute=strategy, save_summary_steps=0, agree_every_n_steps=every))
        for name, every in ESTIMATORS.items()}
    data = pyhooks.input_fn(shard, features=[f"x{i}" for i in range(8)], response="y",
                            batch_size=BATCH, num_epochs=None, queue_capacity=2048)
    quiet = [pyhooks.ProgressBarHook(writer=lambda text: None)]

    def estimator(name):
        regressors[name].train(data, steps=WARMUP, hooks=quiet)
        start, cpu = time.perf_counter(), time.process_time()
        regressors[name].train(data, steps=steps, hooks=quiet)
        cpu_times[name].append(time.process_time() - cpu)
        return time.perf_counter() - start

    times = {name: [] for name in ("bare", *AGREEMENTS, *ESTIMATORS)}
    cpu_times = {name: [] for name in times}
    agreements = {name: [] for name in AGREEMENTS}
    bare()  # tracing, the first collectives
    cpu_times["bare"].clear()
    for _ in range(args.repeats):
        times["bare"].append(bare())
        for name, every in AGREEMENTS.items():
            times[name].append(hooked(every))
        for name in ESTIMATORS:
            times[name].append(estimator(name))
    with open(args.out, "w", encoding="utf-8") as stream:
        json.dump({**times, "cpu": cpu_times, "agreements": agreements}, stream)


# --------------------------------------------------------------------------- the driver
def run(num_workers, args, directory):
    addresses = [f"127.0.0.1:{port}" for port in free_ports(num_workers)]
    processes = []
    try:
        for task in range(num_workers):
            env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="",
                       TF_CONFIG=json.dumps({"cluster": {"worker": addresses},
                                             "task": {"type": "worker", "index": task}}))
            out = os.path.join(directory, f"{num_workers}_{task}.json")
            log = open(os.path.join(directory, f"{num_workers}_{task}.log"), "wb")  # noqa: SIM115
            processes.append((subprocess.Popen(
                [sys.executable, __file__, "--worker", "--out", out, "--steps", str(args.steps),
                 "--repeats", str(args.repeats)], env=env, stdout=log, stderr=subprocess.STDOUT),
                out, log))
        results = []
        for process, out, log in processes:
            process.wait(timeout=args.timeout)
            log.close()
            if process.returncode:
                with open(log.name, encoding="utf-8", errors="replace") as stream:
                    raise RuntimeError(f"a worker failed:\n{stream.read()[-3000:]}")
            with open(out, encoding="utf-8") as stream:
                results.append(json.load(stream))
        return results
    finally:
        for process, _, log in processes:
            if process.poll() is None:
                process.kill()
                process.wait()
            log.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.steps % 10:
        parser.error("--steps must be a multiple of 10 (pyhooks/10 agrees every 10 steps)")
    if args.worker:
        worker(args)
        return
    print(f"DNN 8-64-64-1, batch {BATCH} per worker, {args.steps} timed steps per turn, "
          f"{args.repeats} turns, medians; {os.cpu_count()} CPUs shared by all workers")
    print(f"{'workers':>7} {'variant':<14} {'steps/s':>8} {'examples/s':>11} "
          f"{'pyhooks ms/step w0':>19} {'w1':>6} {'agreement ms/step':>18} {'of a step':>9} "
          f"{'CPU ms/step':>11} {'agreement CPU':>13} {'agreements':>10}")
    with tempfile.TemporaryDirectory() as directory:
        for num_workers in (1, 2):
            results = run(num_workers, args, directory)
            for variant in ("bare", *AGREEMENTS, *ESTIMATORS):
                secs = statistics.median(results[0][variant])
                rate = args.steps / secs
                baseline = "estimator/-" if variant in ESTIMATORS else "pyhooks/-"
                over = ["", ""][:num_workers]
                if variant in AGREEMENTS:  # the hooks' cost over the bare loop
                    over = [f"{statistics.median((t - b) / args.steps * 1000 for t, b in zip(result[variant], result['bare'])):+.2f}"
                            for result in results]
                cpu = results[0]["cpu"]
                cpu_step = f"{statistics.median(cpu[variant]) / args.steps * 1000:.2f}"
                agreement = share = cpu_cost = counted = ""
                if results[0]["agreements"].get(variant):
                    counted = f"{statistics.median(results[0]['agreements'][variant]):g}"
                if num_workers > 1 and variant not in BASELINES | {"bare"}:
                    cost = statistics.median(
                        (t - n) / args.steps for t, n in zip(results[0][variant],
                                                             results[0][baseline]))
                    step = statistics.median(results[0][baseline]) / args.steps
                    agreement, share = f"{cost * 1000:+.2f}", f"{cost / step:+.1%}"
                    paired = [t - n for t, n in zip(cpu[variant], cpu[baseline])]
                    cpu_cost = f"{statistics.median(paired) / args.steps * 1000:+.2f}"
                print(f"{num_workers:>7} {variant:<14} {rate:>8.1f} "
                      f"{rate * BATCH * num_workers:>11.0f} {over[0]:>19} "
                      f"{over[1] if num_workers > 1 else '':>6} {agreement:>18} {share:>9} "
                      f"{cpu_step:>11} {cpu_cost:>13} {counted:>10}")


if __name__ == "__main__":
    main()
