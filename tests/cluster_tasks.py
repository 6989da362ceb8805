"""One task of a localhost cluster, run as its own process by tests/test_distribute_*.py.

    python tests/cluster_tasks.py <scenario> <config.json> <task_type> <task_id>

``config.json`` holds ``{"cluster": {...}, "dir": ..., ...}``. A task writes what
the test checks to ``<dir>/<task_type>_<task_id>.json`` (ps tasks serve until killed).
"""

from __future__ import annotations

import json
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf  # noqa: E402

import pyhooks  # noqa: E402


def linear_replica(strategy, learning_rate, extra=lambda x: {}, global_batch=None):
    """A replica function fitting y = w x by SGD under ``strategy`` (``w`` made in its scope):
    it returns the loss, the per-example losses and ``extra(x)``'s outputs. The loss is the
    replica's mean, or with ``global_batch`` its share of the global batch's mean
    (``tf.nn.compute_average_loss``, TensorFlow's convention)."""
    with strategy.scope():
        weight = tf.Variable([[0.0]])
        optimizer = tf.keras.optimizers.SGD(learning_rate)

    def replica(x, y):
        with tf.GradientTape() as tape:
            losses = tf.reduce_sum(tf.square(x @ weight - y), axis=1)
            loss = tf.reduce_mean(losses) if global_batch is None else (
                tf.nn.compute_average_loss(losses, global_batch_size=global_batch))
        optimizer.apply_gradients(zip(tape.gradient(loss, [weight]), [weight]))
        return {"loss": loss, "losses": losses, **extra(x)}
    return replica


def _report(config, task_type, task_id, **values):
    path = os.path.join(config["dir"], f"{task_type}_{task_id}.json")
    with open(path + ".tmp", "w", encoding="utf-8") as stream:
        json.dump(values, stream)
    os.replace(path + ".tmp", path)


# --------------------------------------------------------------------------- TF1: ps + workers
def tf1_ps_workers(config, task_type, task_id):
    """A ps task serves; worker 0 is the chief; worker 1 waits for global step 5.

    The train op adds one to the global step and to ``steps_of_worker_<i>`` (on the
    ps), so the workers' step counts can be compared with the global step.
    """
    cluster = tf.train.ClusterSpec(config["cluster"])
    server = tf.compat.v1.train.Server(cluster, job_name=task_type, task_index=task_id)
    if task_type == "ps":
        server.join()
        return
    last_step, chief = config["last_step"], task_id == 0
    with tf.Graph().as_default():
        with tf.compat.v1.device(tf.compat.v1.train.replica_device_setter(
                worker_device=f"/job:worker/task:{task_id}", cluster=cluster)):
            global_step = tf.compat.v1.train.get_or_create_global_step()
            mine = [tf.compat.v1.get_variable(f"steps_of_worker_{i}", shape=[],
                                              dtype=tf.int64, use_resource=True,
                                              initializer=tf.compat.v1.zeros_initializer())
                    for i in range(len(config["cluster"]["worker"]))]
            weight = tf.compat.v1.get_variable("w", initializer=1.0, use_resource=True)
            loss = tf.square(weight - 3.0) * tf.ones([4])  # per-example
            tf.compat.v1.add_to_collection("losses", loss)
            optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.01)
            with tf.control_dependencies([mine[task_id].assign_add(1)]):
                train_op = optimizer.minimize(tf.reduce_sum(loss), global_step=global_step)
        seen = []
        die_at = config.get("die_at") if not os.environ.get("PYHOOKS_TEST_RESTARTED") else None

        def after_run(context, values):
            seen.append(int(values.results))
            if not chief and len(seen) == die_at:  # a crash: no end(), no goodbye
                os._exit(1)
        hooks = [pyhooks.StopAtStepHook(last_step=last_step),
                 pyhooks.LambdaHook(before_run=lambda context: pyhooks.SessionRunArgs(global_step),
                                    after_run=after_run)]
        if not chief:
            hooks.append(pyhooks.GlobalStepWaiterHook(wait_until_step=config["wait_until"],
                                                      timeout_secs=60))
        history = pyhooks.HistorySaverHook(
            every_n_step=5, path=os.path.join(config["dir"], f"history_{task_id}.csv"))
        # the chief holds back at step 10 until worker 1 has made enough steps (so both train)
        wanted = config.get("worker_1_steps", 1)
        held = []

        def hold(context):
            if seen and seen[-1] >= 10 and not held:
                held.append(True)
                deadline = time.monotonic() + 120
                while (context.session.run(mine[1]) < wanted and time.monotonic() < deadline):
                    time.sleep(0.05)
        chief_only = [history, pyhooks.LambdaHook(before_run=hold)]
        with pyhooks.MonitoredTrainingSession(
                master=server.target, is_chief=chief, checkpoint_dir=config["checkpoint_dir"],
                hooks=hooks, chief_only_hooks=chief_only, save_checkpoint_steps=10,
                log_step_count_steps=10, save_summaries_steps=None, save_summaries_secs=None,
                config=tf.compat.v1.ConfigProto(device_filters=[
                    "/job:ps", f"/job:worker/task:{task_id}"]),
                max_wait_secs=120) as session:
            while not session.should_stop():
                session.run(train_op)
            final = session.raw_session().run([global_step, *mine])
    _report(config, task_type, task_id, steps=len(seen), first_step=seen[0] if seen else None,
            global_step=int(final[0]), steps_of_workers=[int(v) for v in final[1:]],
            history_rows=len(history.history) if chief else None)


# --------------------------------------------------------------------------- TF2: collective
def mwms_eager(config, task_type, task_id):
    """MultiWorkerMirroredStrategy, a custom loop through EagerSessionCreator.

    Each worker's input comes from its own pipeline (``distribute_datasets_from_function``);
    ``config["nan_at"] = [worker, step]`` puts a NaN in that worker's batch of that
    step (NanTensorHook(fail_on_nan_loss=False) on every worker asks to stop);
    ``config["fail_at"] = [worker, step]`` makes a hook raise ValueError there;
    ``config["begin_fails_on"] = worker``: a hook's ``begin()`` raises ValueError there.
    """
    import numpy as np

    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    nan_worker, nan_step = config.get("nan_at") or (-1, -1)

    def dataset(context):
        x = np.ones((64, 1), np.float32) * (1 + context.input_pipeline_id)
        if context.input_pipeline_id == nan_worker:
            x[(nan_step - 1) * 4] = np.nan  # the first example of that step's batch
        data = tf.data.Dataset.from_tensor_slices((x, 2 * x)).batch(4)
        # "finite": 16 batches on worker 0, 12 on worker 1
        return data.take(16 - 4 * context.input_pipeline_id) if config.get("finite") else (
            data.repeat())

    replica = linear_replica(strategy, 0.01)
    iterator = iter(strategy.distribute_datasets_from_function(dataset))

    @tf.function
    def train_step():
        return strategy.run(replica, args=next(iterator))

    out = config["dir"]
    steps, chief_steps = [], []
    fail_worker, fail_step = config.get("fail_at") or (-1, -1)
    hang_worker, hang_step = config.get("hang_at") or (-1, -1)

    def after_run(context, values):
        steps.append(int(values.results) + 1)
        if task_id == fail_worker and steps[-1] == fail_step:
            raise ValueError(f"boom at step {fail_step}")
        if task_id == hang_worker and steps[-1] == hang_step:  # to be killed by the test
            open(os.path.join(out, f"hanging_{task_id}"), "w").close()  # noqa: SIM115
            time.sleep(600)

    hooks = [pyhooks.StopAtStepHook(last_step=config.get("last_step", 20)),
             pyhooks.NanTensorHook("loss", fail_on_nan_loss=False),
             pyhooks.HistorySaverHook(every_n_step=5, path=os.path.join(out, "history.csv")),
             pyhooks.StepCounterHook(every_n_steps=5, output_dir=os.path.join(out, "events")),
             pyhooks.LambdaHook(before_run=lambda context: pyhooks.SessionRunArgs(
                 context.session.graph.global_step_read()), after_run=after_run)]
    chief_only = [pyhooks.LambdaHook(after_run=lambda context, values: chief_steps.append(1))]
    if config.get("begin_fails_on") == task_id:
        def begin():
            raise ValueError(f"no begin on worker {task_id}")

        hooks.append(pyhooks.LambdaHook(begin=begin))
    creator = pyhooks.EagerSessionCreator(
        train_step, strategy=strategy, chief_only_hooks=chief_only,
        agree_every_n_steps=config.get("agree_every_n_steps", 1))
    error = None
    try:
        with pyhooks.MonitoredSession(creator, hooks=hooks) as session:
            while not session.should_stop():
                session.run()
    except Exception as caught:  # noqa: BLE001 - reported to the test
        error = caught
    _report(config, task_type, task_id, steps=len(steps), last_step=steps[-1] if steps else None,
            chief_steps=len(chief_steps), is_chief=creator.worker.is_chief,
            num_workers=creator.worker.num_workers,
            error=None if error is None else type(error).__name__,
            message=None if error is None else "\n".join([str(error),
                                                          *getattr(error, "__notes__", [])]))
    if error is not None:
        sys.exit(3)


# --------------------------------------------------------------------------- TF2: ps strategy
def pss_eager(config, task_type, task_id):
    """ParameterServerStrategy: workers and ps serve; the chief schedules through ScheduledSteps."""
    import numpy as np

    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    if task_type in ("worker", "ps"):
        tf.distribute.Server(resolver.cluster_spec(), job_name=task_type, task_index=task_id,
                             protocol="grpc", start=True).join()
        return
    strategy = tf.distribute.experimental.ParameterServerStrategy(resolver)
    coordinator = tf.distribute.experimental.coordinator.ClusterCoordinator(strategy)
    with strategy.scope():
        executed = tf.Variable(0, dtype=tf.int64)
    replica = linear_replica(strategy, 0.01, lambda x: {"executed": executed.assign_add(1)})

    def dataset():
        x = np.ones((64, 1), np.float32)
        return tf.data.Dataset.from_tensor_slices((x, 2 * x)).batch(4).repeat()
    batches = iter(coordinator.create_per_worker_dataset(dataset))

    @tf.function
    def train_step(iterator):
        return strategy.run(replica, args=next(iterator))

    history = pyhooks.HistorySaverHook(every_n_step=1)
    seen = []
    hooks = [pyhooks.StopAtStepHook(last_step=config["last_step"]), history,
             pyhooks.NanTensorHook("loss"),
             pyhooks.LambdaHook(before_run=lambda context: pyhooks.SessionRunArgs("executed"),
                                after_run=lambda context, values: seen.append(
                                    int(values.results)))]
    step = pyhooks.distribute.ScheduledSteps(coordinator, train_step, args=(batches,))
    creator = pyhooks.EagerSessionCreator(step, strategy=strategy)
    with pyhooks.MonitoredSession(creator, hooks=hooks) as session:
        while not session.should_stop():
            session.run()
    coordinator.join()
    _report(config, task_type, task_id, history=history.history.to_dict(),
            global_step=int(creator.global_step.numpy()), executed=int(executed.numpy()),
            seen_executed=seen, is_chief=creator.worker.is_chief,
            num_workers=creator.worker.num_workers)


# --------------------------------------------------------------------------- one process
def _mirrored_loop(strategy, hooks, reductions=None):
    """An eager loop of 2 steps of 8 rows of y = 2 x under ``strategy`` (None: one replica), the
    loss scaled by the global batch of 8; ``hooks`` run; returns the first ``run("loss")``."""
    import numpy as np

    x = np.arange(16, dtype=np.float32).reshape(16, 1)
    data = tf.data.Dataset.from_tensor_slices((x, 2 * x)).batch(8).repeat()
    if strategy is None:
        replica = linear_replica(tf.distribute.get_strategy(), 0.001, lambda x: {
            "x": x[:, 0], "replica_mean": tf.reduce_mean(tf.square(2 * x))}, global_batch=8)
        iterator = iter(data)

        @tf.function
        def train_step():
            return replica(*next(iterator))
    else:
        def extra(x):  # an output whose shape differs between replicas, the batch, a mean
            odd = tf.zeros([2, tf.distribute.get_replica_context().replica_id_in_sync_group + 1])
            return {"odd": odd, "x": x[:, 0], "replica_mean": tf.reduce_mean(tf.square(2 * x))}
        replica = linear_replica(strategy, 0.001, extra, global_batch=8)
        iterator = iter(strategy.experimental_distribute_dataset(data))

        @tf.function
        def train_step():
            return strategy.run(replica, args=next(iterator))
    creator = pyhooks.EagerSessionCreator(train_step, strategy=strategy, chief_only_hooks=[],
                                          output_reductions=reductions)
    with pyhooks.MonitoredSession(creator, hooks=hooks) as session:
        first = session.run("loss")
        while not session.should_stop():
            session.run()
        refused = None
        try:
            if strategy is not None:
                session.raw_session().pyhooks_read("odd")  # the last step's, no step run
        except pyhooks.distribute.PerReplicaOutputError as error:
            refused = str(error)
    return first, refused


def mirrored(config, task_type, task_id):
    """MirroredStrategy over 2 logical CPUs: an eager loop and model.fit, per-replica outputs,
    beside the same loop on one replica."""
    import numpy as np

    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    runs = {}
    for name, run_strategy in (("mirrored", strategy), ("single", None)):
        history = pyhooks.HistorySaverHook(every_n_step=1)
        seen, bar_output = [], []
        hooks = [history, pyhooks.NanTensorHook("loss"), pyhooks.StopAtStepHook(last_step=2),
                 pyhooks.ProgressBarHook(total=2, loss="loss", writer=bar_output.append,
                                         mode="plain"),
                 pyhooks.LambdaHook(
                     before_run=lambda context: pyhooks.SessionRunArgs(
                         ["loss", "replica_mean", "x", context.session.graph.get_collection(
                             "pyhooks_training_loss")[0]]),
                     after_run=lambda context, values, seen=seen: seen.append(values.results))]
        first, refused = _mirrored_loop(run_strategy, hooks, {"replica_mean": "mean"})
        runs[name] = dict(first=float(first), first_type=type(first).__name__,
                          history={k: [float(v) for v in vs]
                                   for k, vs in history.history.to_dict().items()},
                          seen=[[float(loss), float(mean), np.asarray(x).tolist(), float(training)]
                                for loss, mean, x, training in seen],
                          bar=bar_output, refused=refused)
    # the same step without strategy=: its per-replica outputs refused, naming the output
    try:
        _mirrored_loop_without_strategy(strategy)
        unreduced = None
    except pyhooks.distribute.PerReplicaOutputError as error:
        unreduced = str(error)
    # model.fit under the same strategy, with a chief-only hook (this process is the chief)
    x = np.arange(16, dtype=np.float32).reshape(16, 1)
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.Input((1,)), tf.keras.layers.Dense(1)])
        model.compile(optimizer="sgd", loss="mse")
        fit_history = pyhooks.HistorySaverHook(every_n_step=1)
        callback = pyhooks.keras_callback([], chief_only_hooks=[fit_history])
    model.fit(x, 2 * x, batch_size=8, epochs=1, verbose=0, callbacks=[callback])
    _report(config, task_type, task_id, runs=runs, unreduced=unreduced,
            fit_rows=len(fit_history.history), chief=callback.worker.is_chief)


def _mirrored_loop_without_strategy(strategy):
    replica = linear_replica(strategy, 0.001, global_batch=8)
    x = tf.ones([8, 1])
    train_step = tf.function(lambda: strategy.run(replica, args=(x, 2 * x)))
    creator = pyhooks.EagerSessionCreator(train_step)
    with pyhooks.MonitoredSession(creator, hooks=[pyhooks.NanTensorHook("loss")]) as session:
        session.run()


# --------------------------------------------------------------------------- estimators
def mwms_estimator(config, task_type, task_id):
    """An estimator's ``train()`` under MultiWorkerMirroredStrategy (``run_config(train_distribute=)``).

    Each worker trains on its own rows (``y = 2 x + 1``, different ``x`` per worker),
    8 steps of 4 rows. ``config["custom"]``: a ``model_fn`` instead of a linear
    regressor; ``config["nan_at"] = [worker, step]``: an infinite loss in that worker's batch
    of that step; ``config["stop_at"] = [worker, step]``: a hook of that worker
    asks to stop after that step; ``config["fail_at"]``: a hook of that worker raises
    ValueError there; ``config["model_fn_fails_on"] = worker``: that worker's ``model_fn``
    (``custom``) raises ValueError; ``config["hang_at"]``: a hook of that worker waits
    there (to be killed): after the step, or before it for a negative step (the other
    workers then wait in its all-reduce); ``config["agree_every_n_steps"]``: the run
    config's (default ``"auto"``).
    """
    import numpy as np

    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    out = config["dir"]
    x = np.linspace(-1, 1, 32) + task_id / 2
    nan_worker, nan_step = config.get("nan_at") or (-1, -1)
    if task_id == nan_worker:
        x[(nan_step - 1) * 4] = 1e30  # an infinite loss in float32
    data = {"x": x, "y": 2 * x + 1}
    inp = pyhooks.input_fn(data, features=["x"], response="y", batch_size=4, shuffle=False)
    run_config = pyhooks.estimators.run_config(model_dir=os.path.join(out, "model"),
                                               tf_random_seed=1, save_summary_steps=2,
                                               train_distribute=strategy,
                                               agree_every_n_steps=config.get(
                                                   "agree_every_n_steps", "auto"))
    if config.get("custom"):
        from pyhooks.estimators import layers

        def model_fn(features, labels, mode):
            v1 = tf.compat.v1
            if task_id == config.get("model_fn_fails_on"):
                raise ValueError(f"no model on worker {task_id}")
            out = tf.reshape(layers.dense(features, 1), [-1])
            loss = v1.losses.mean_squared_error(labels, out)
            step = v1.train.GradientDescentOptimizer(0.1).minimize(
                loss, global_step=v1.train.get_global_step())
            return pyhooks.estimators.estimator_spec(mode, loss=loss, train_op=step)
        model = pyhooks.estimators.estimator(model_fn, config=run_config)
    else:
        model = pyhooks.linear_regressor(pyhooks.feature_columns(pyhooks.column_numeric("x")),
                                         config=run_config)
    steps = []
    stop_worker, stop_step = config.get("stop_at") or (-1, -1)
    fail_worker, fail_step = config.get("fail_at") or (-1, -1)
    hang_worker, hang_step = config.get("hang_at") or (-1, -1)
    chief_steps = []

    def after_run(context, values):
        steps.append(int(values.results) + 1)
        if task_id == stop_worker and steps[-1] == stop_step:
            context.request_stop()
        if task_id == fail_worker and steps[-1] == fail_step:
            raise ValueError(f"boom at step {fail_step}")
        if task_id == hang_worker and steps[-1] == hang_step:  # to be killed by the test
            open(os.path.join(out, f"hanging_{task_id}"), "w").close()  # noqa: SIM115
            time.sleep(600)

    def before_run(context):
        if task_id == hang_worker and len(steps) + 1 == -hang_step:  # the other one in the step
            open(os.path.join(out, f"hanging_{task_id}"), "w").close()  # noqa: SIM115
            time.sleep(600)
        return pyhooks.SessionRunArgs(tf.compat.v1.train.get_global_step())

    hooks = [pyhooks.HistorySaverHook(every_n_step=2, path=os.path.join(out, "history.csv")),
             pyhooks.LambdaHook(before_run=before_run, after_run=after_run)]
    error = None
    try:
        history = model.train(inp, steps=8, hooks=hooks, chief_only_hooks=[pyhooks.LambdaHook(
            after_run=lambda context, values: chief_steps.append(1))])
    except Exception as caught:  # noqa: BLE001 - reported to the test
        error, history = caught, None
    variables = {}
    if error is None:  # this worker's values (a non-chief saves no checkpoint)
        state = next(state for (key, _), state in model._states.items()  # noqa: SLF001
                     if "train" in (key, key[0]))
        variables = {v.op.name: np.asarray(value).ravel().tolist() for v, value in zip(
            state.model_variables, state.session.run(state.model_variables))}
    _report(config, task_type, task_id, steps=len(steps),
            last_step=steps[-1] if steps else None, variables=variables,
            chief_steps=len(chief_steps),
            history=None if history is None else history.to_dict(),
            model_dir=model.model_dir, checkpoint=model.latest_checkpoint(),
            error=None if error is None else type(error).__name__,
            message=None if error is None else "\n".join([str(error),
                                                          *getattr(error, "__notes__", [])]),
            ended=time.time())
    if error is not None:
        sys.exit(3)


def mwms_early_stopping(config, task_type, task_id):
    """``train_and_evaluate()`` under MultiWorkerMirroredStrategy with an early-stopping hook.

    Each worker trains a linear regressor on its own rows (as ``mwms_estimator``), up to
    ``config["max_steps"]``, saving (and so evaluating, on the chief) every 2 steps; the
    hook stops when the evaluated ``average_loss`` is below ``config["threshold"]``.
    """
    import numpy as np

    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    out = config["dir"]
    x = np.linspace(-1, 1, 32) + task_id / 2
    train = pyhooks.input_fn({"x": x, "y": 2 * x + 1}, features=["x"], response="y",
                             batch_size=4, shuffle=False, num_epochs=None)
    test = pyhooks.input_fn({"x": x, "y": 2 * x + 1}, features=["x"], response="y",
                            batch_size=32, shuffle=False, num_epochs=1)
    model = pyhooks.linear_regressor(
        pyhooks.feature_columns(pyhooks.column_numeric("x")),
        config=pyhooks.estimators.run_config(model_dir=os.path.join(out, "model"),
                                             tf_random_seed=1, save_checkpoints_steps=2,
                                             train_distribute=strategy))
    steps = []
    hooks = [pyhooks.stop_if_lower_hook(model, "average_loss", config["threshold"],
                                        run_every_secs=None, run_every_steps=1),
             pyhooks.LambdaHook(
                 before_run=lambda context: pyhooks.SessionRunArgs(
                     tf.compat.v1.train.get_global_step()),
                 after_run=lambda context, values: steps.append(int(values.results) + 1))]
    metrics, history = pyhooks.train_and_evaluate(
        model, pyhooks.train_spec(train, max_steps=config["max_steps"], hooks=hooks),
        pyhooks.eval_spec(test, steps=None, start_delay_secs=0, throttle_secs=0))
    evaluations = pyhooks.hooks.read_eval_metrics(os.path.join(out, "model", "eval"))
    _report(config, task_type, task_id, last_step=steps[-1] if steps else None,
            steps=len(steps), final_step=metrics["global_step"],
            evaluations={str(k): v["average_loss"] for k, v in evaluations.items()})


# --------------------------------------------------------------------------- launched by Ray
def ray_launch(config, task_type, task_id):
    """The driver of a local Ray cluster on loopback: for each of ``config["runs"]`` (a
    dict of config entries, ``scenario`` the one each worker runs), a Ray Train
    ``TensorflowTrainer`` of 2 workers, which sets each worker's ``TF_CONFIG``; each worker
    runs that scenario of this file with its own ``dir`` (``<dir>/<n>``), or with
    ``scenario: "rscript"`` an ``Rscript`` of ``config["r_worker"]`` (``r_args``). Reports
    each fit's error (None, or Ray's message), then shuts Ray down.
    """
    import shutil
    import tempfile

    import ray
    from ray.train import RunConfig, ScalingConfig
    from ray.train.tensorflow import TensorflowTrainer

    os.environ.pop("TF_CONFIG")  # the test's, naming this process: Ray sets the workers'
    here = os.path.dirname(os.path.abspath(__file__))
    # Ray's session files (its sockets' paths must stay short), removed at the end
    ray_temp = tempfile.mkdtemp(prefix="ray")
    ray.init(num_cpus=2, object_store_memory=80 * 2**20, include_dashboard=False,
             _node_ip_address="127.0.0.1", log_to_driver=False, _temp_dir=ray_temp,
             runtime_env={"env_vars": {"PYTHONPATH": here}})
    errors = []
    try:
        for n, run in enumerate(config["runs"]):
            run = dict(config, **run, dir=os.path.join(config["dir"], str(n)))
            os.makedirs(run["dir"])
            trainer = TensorflowTrainer(
                ray_worker, train_loop_config=run,
                scaling_config=ScalingConfig(num_workers=2),
                run_config=RunConfig(name=f"run{n}", storage_path=os.path.join(run["dir"], "ray")))
            try:
                trainer.fit()
                errors.append(None)
            except Exception as error:  # noqa: BLE001 - reported to the test
                errors.append(f"{type(error).__name__}: {error}")
    finally:
        ray.shutdown()
        shutil.rmtree(ray_temp, ignore_errors=True)
    _report(config, task_type, task_id, errors=errors)


def ray_worker(config):
    """One Ray Train worker: the task Ray's ``TF_CONFIG`` names runs ``config["scenario"]``."""
    import subprocess

    task = json.loads(os.environ["TF_CONFIG"])["task"]
    if config["scenario"] == "rscript":
        out = os.path.join(config["dir"], f"worker_{task['index']}.txt")
        done = subprocess.run(
            ["Rscript", "--vanilla", config["r_worker"], os.path.join(config["dir"], "model"),
             out, *config.get("r_args", [])], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"Rscript ended with status {done.returncode}:\n"
                               f"{done.stderr[-3000:]}")
        return
    try:
        SCENARIOS[config["scenario"]](config, task["type"], task["index"])
    except SystemExit:  # the scenario caught its error, reported it and exits: Ray shows it
        with open(os.path.join(config["dir"], f"worker_{task['index']}.json"),
                  encoding="utf-8") as stream:
            report = json.load(stream)
        raise RuntimeError(f"{report['error']}: {report['message']}") from None


SCENARIOS = {"tf1_ps_workers": tf1_ps_workers, "mwms_eager": mwms_eager, "pss_eager": pss_eager,
             "mirrored": mirrored, "mwms_estimator": mwms_estimator,
             "mwms_early_stopping": mwms_early_stopping, "ray_launch": ray_launch}


def main(argv):
    scenario, config_path, task_type, task_id = argv[1:5]
    with open(config_path, encoding="utf-8") as stream:
        config = json.load(stream)
    SCENARIOS[scenario](config, task_type, int(task_id))


if __name__ == "__main__":
    main(sys.argv)
