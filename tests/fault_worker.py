"""A training process for tests/test_faults.py to kill, interrupt or starve of disk.

Usage: python fault_worker.py MODE MODEL_DIR [ARG]

Modes:
  defaults N    train N steps with the estimator's default hooks only (and one that prints
                "step <n>"), as a user's train() call; prints "done <step>".
  train N       train N steps (checkpoint every 5, history CSV every step) and print
                "history <json: the history's steps, runs and stop reason>", then
                "done <step>"; prints "step <n>" after each step and, with
                PYHOOKS_FAULT_SLOW set, sleeps that many seconds per step.
  eager N       as train, in a user's eager loop: a tf.train.Checkpoint restored from
                MODEL_DIR, a MonitoredSession on the eager backend with a
                CheckpointSaverHook (every 5 steps) and the history CSV.
  fork FILE     as hold, after forking a child (printing "child <pid>") that sleeps 120 s.
  hold          train, and in step 1 print "holding" and wait (at most 120 s) until
                the file ARG exists.
  fsize BYTES   train 2 steps, then limit files to BYTES (RLIMIT_FSIZE, SIGXFSZ ignored:
                writes fail as on a full disk) and train 20 more.
  full BYTES    limit files to BYTES (as fsize), then train 3 steps with the default hooks.
  bare [FILE]   a user's MonitoredSession with a bare CheckpointSaverHook on MODEL_DIR, 3 steps;
                with FILE, holds in step 1 as `hold` does; prints "done" at the end.
  gcs           configure GCS credentials for a session, print the credentials file,
                wait to be killed (at most 120 s).
"""

import io
import json
import os
import resource
import signal
import sys
import time

import pyhooks
from pyhooks.estimators import column_numeric, feature_columns, input_fn, linear_regressor, \
    load_mtcars


class Announce(pyhooks.SessionRunHook):
    """Prints each step reached; may sleep or wait for a file."""

    def __init__(self, slow=0.0, hold=None, fork=False):
        self.slow, self.hold, self.fork = slow, hold, fork

    def begin(self):
        from pyhooks.hooks._common import global_step_read

        self.step = global_step_read("Announce")

    def before_run(self, run_context):
        return pyhooks.SessionRunArgs(self.step)

    def after_run(self, run_context, run_values):
        print(f"step {int(run_values.results) + 1}", flush=True)
        if self.fork:  # a child of the trainer, as a multiprocessing worker is
            self.fork = False
            child = os.fork()
            if child == 0:
                time.sleep(120)
                os._exit(0)
            print(f"child {child}", flush=True)
        if self.hold:
            print("holding", flush=True)
            deadline = time.monotonic() + 120
            while not os.path.exists(self.hold) and time.monotonic() < deadline:
                time.sleep(0.05)
            self.hold = None
        if self.slow:
            time.sleep(self.slow)


def model(model_dir):
    return linear_regressor(feature_columns(column_numeric("drat")), model_dir=model_dir)


def hooks(model_dir, **announce):
    return [pyhooks.ProgressBarHook(writer=io.StringIO()),
            pyhooks.CheckpointSaverHook(model_dir, save_steps=5, save_graph_def=False),
            pyhooks.HistorySaverHook(every_n_step=1, path=os.path.join(model_dir, "history.csv")),
            Announce(**announce)]


def eager(model_dir, steps, slow):
    """A user's eager training loop that resumes from its checkpoints."""
    import tensorflow as tf

    x = tf.constant([[1.0], [2.0], [3.0]])
    w, step = tf.Variable([[0.0]]), tf.Variable(0, dtype=tf.int64)
    checkpoint = tf.train.Checkpoint(w=w, global_step=step)
    if tf.train.latest_checkpoint(model_dir):
        checkpoint.restore(tf.train.latest_checkpoint(model_dir))

    @tf.function
    def train_step():
        with tf.GradientTape() as tape:
            losses = tf.reshape(tf.square(tf.matmul(x, w) - 2.0 * x), [-1])
            total = tf.reduce_sum(losses)
        w.assign_sub(0.01 * tape.gradient(total, w))
        return {"loss": tf.reduce_mean(losses), "losses": losses}

    history = pyhooks.HistorySaverHook(every_n_step=1, path=os.path.join(model_dir,
                                                                         "history.csv"))
    loop = [pyhooks.CheckpointSaverHook(model_dir, save_steps=5, saver=checkpoint), history,
            pyhooks.StopAtStepHook(num_steps=steps), Announce(slow=slow)]
    creator = pyhooks.EagerSessionCreator(train_step, global_step=step)
    with pyhooks.MonitoredSession(creator, loop) as session:
        while not session.should_stop():
            session.run()
    print("history", json.dumps({"steps": history.history.to_dict()["steps"],
                                 "runs": history.history.runs}), flush=True)
    print(f"done {int(step.numpy())}", flush=True)


def main(mode, model_dir, arg=None):
    data = input_fn(load_mtcars(), features=["drat"], response="mpg", batch_size=8,
                    num_epochs=None)
    if mode == "train":
        slow = float(os.environ.get("PYHOOKS_FAULT_SLOW", "0"))
        estimator = model(model_dir)
        history = estimator.train(data, steps=int(arg), hooks=hooks(model_dir, slow=slow))
        print("history", json.dumps({"steps": history.to_dict()["steps"], "runs": history.runs,
                                     "stop": history.stop.as_dict()}), flush=True)
        print(f"done {estimator.evaluate(data, steps=1)['global_step']}", flush=True)
    elif mode == "eager":
        eager(model_dir, int(arg), float(os.environ.get("PYHOOKS_FAULT_SLOW", "0")))
    elif mode == "defaults":
        slow = float(os.environ.get("PYHOOKS_FAULT_SLOW", "0"))
        estimator = model(model_dir)
        estimator.train(data, steps=int(arg), hooks=[Announce(slow=slow)])
        print(f"done {estimator.evaluate(data, steps=1)['global_step']}", flush=True)
    elif mode in ("hold", "fork"):
        model(model_dir).train(data, steps=3, hooks=hooks(model_dir, hold=arg,
                                                          fork=mode == "fork"))
    elif mode == "fsize":
        estimator = model(model_dir)
        estimator.train(data, steps=2, hooks=[pyhooks.ProgressBarHook(writer=io.StringIO())])
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        limit = int(arg)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        estimator.train(data, steps=20, hooks=hooks(model_dir))
    elif mode == "full":
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (int(arg), int(arg)))
        model(model_dir).train(data, steps=3)
    elif mode == "bare":
        import tensorflow as tf

        with tf.Graph().as_default():
            step = tf.compat.v1.train.get_or_create_global_step()
            increment = tf.compat.v1.assign_add(step, 1)
            saver = pyhooks.CheckpointSaverHook(model_dir, save_steps=1, save_graph_def=False)
            with pyhooks.MonitoredSession(hooks=[saver, Announce(hold=arg)]) as session:
                for _ in range(3):
                    session.run(increment)
        print("done", flush=True)
    elif mode == "gcs":
        import tensorflow as tf

        hook = pyhooks.ConfigureGcsHook({"type": "service_account", "private_key": "SECRET"})
        with tf.Graph().as_default():
            tf.compat.v1.train.get_or_create_global_step()
            with pyhooks.MonitoredSession(hooks=[hook]):
                print(hook.credentials_path, flush=True)
                time.sleep(120)
    else:
        raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main(*sys.argv[1:])
