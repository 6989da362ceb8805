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
        hooks = [pyhooks.StopAtStepHook(last_step=last_step),
                 pyhooks.LambdaHook(before_run=lambda context: pyhooks.SessionRunArgs(global_step),
                                    after_run=lambda context, values: seen.append(
                                        int(values.results)))]
        if not chief:
            hooks.append(pyhooks.GlobalStepWaiterHook(wait_until_step=config["wait_until"],
                                                      timeout_secs=60))
        history = pyhooks.HistorySaverHook(
            every_n_step=5, path=os.path.join(config["dir"], f"history_{task_id}.csv"))
        # the chief holds back at step 10 until worker 1 has made a step (so both train)
        held = []

        def hold(context):
            if seen and seen[-1] >= 10 and not held:
                held.append(True)
                deadline = time.monotonic() + 60
                while (context.session.run(mine[1]) == 0 and time.monotonic() < deadline):
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


SCENARIOS = {"tf1_ps_workers": tf1_ps_workers}


def main(argv):
    scenario, config_path, task_type, task_id = argv[1:5]
    with open(config_path, encoding="utf-8") as stream:
        config = json.load(stream)
    SCENARIOS[scenario](config, task_type, int(task_id))


if __name__ == "__main__":
    main(sys.argv)
