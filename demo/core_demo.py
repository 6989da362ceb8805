"""A small graph-mode training loop under pyhooks, printing what the hooks saw.

Run: ``.venv/bin/python demo/core_demo.py``.
"""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf  # noqa: E402

import pyhooks  # noqa: E402

v1 = tf.compat.v1


class LossTracker(pyhooks.SessionRunHook):
    """Fetches the loss with every step and keeps it."""

    def __init__(self, loss):
        self.loss, self.seen = loss, []

    def before_run(self, run_context):
        return pyhooks.SessionRunArgs(self.loss)

    def after_run(self, run_context, run_values):
        self.seen.append(float(run_values.results))


def main():
    with tf.Graph().as_default():
        step = v1.train.get_or_create_global_step()
        w = v1.get_variable("w", [], initializer=v1.zeros_initializer())
        loss = tf.square(w - 3.0)
        train_op = v1.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
        tracker = LossTracker(loss)
        hooks = [tracker, pyhooks.StopAtStepHook(last_step=10)]
        with pyhooks.MonitoredSession(hooks=hooks) as sess:
            while not sess.should_stop():
                sess.run(train_op)
    print("losses seen by the hook:", ", ".join(f"{x:.3f}" for x in tracker.seen))


if __name__ == "__main__":
    main()
