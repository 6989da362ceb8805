"""``StepCounterHook``: how many global steps per second training makes."""

from __future__ import annotations

import math

from pyhooks import _logging
from pyhooks.hook import SessionRunArgs, SessionRunHook
from pyhooks.hooks._common import StepReader, StepsPerRun, current_backend, global_step_read
from pyhooks.hooks._lookup import check_has
from pyhooks.hooks._output import check_output_dir
from pyhooks.hooks._workers import worker_path
from pyhooks.timer import SecondOrStepTimer, check_positive

__all__ = ["StepCounterHook"]



class StepCounterHook(StepsPerRun, SessionRunHook):
    """Measures steps per second; logs it and writes it as a TensorBoard summary.

    Every ``every_n_steps`` steps (or ``every_n_secs`` seconds) the rate since the
    previous measurement is logged to the ``"pyhooks"`` logger (INFO,
    ``"global_step/sec: 12.3"``) and, if a writer is available, added to an
    event file as the scalar ``global_step/sec`` at the current step. The first
    trigger only starts the clock. The global step is fetched with the caller's
    fetches at every step; when a measurement may be due (that value + 1), the
    step is read alone to confirm it, as TensorFlow's hook does, so labels and
    rates use the exact step whatever order the train op's increment runs in.

    Its state resumes with the model (:mod:`pyhooks.hooks._hook_state`): ``rates``,
    the rates measured, and the step of the last measurement, so that a call
    resuming an interrupted one measures at the same steps (``every_n_steps``
    after that one, not after its own first step). The clock is not kept: a rate
    spanning the kill would count the time the process was dead, so the first
    measurement of the resumed call only starts its clock, as every call's first
    does. With ``every_n_secs`` the schedule is that clock, so only ``rates`` resumes.

    Args:
        every_n_steps: measure every N global steps.
        every_n_secs: measure every N seconds. Exactly one of the two.
        output_dir: directory of the event file (the writer is opened in
            ``begin()`` through ``FileWriterCache``, or ``tf.summary.create_file_writer``
            on the eager and Keras backends); used only without ``summary_writer``.
        summary_writer: a ``tf.compat.v1.summary.FileWriter`` to write to (eager
            and Keras: a ``tf.summary`` writer, the scalar written with ``tf.summary.write``).

    Raises:
        ValueError: not exactly one of ``every_n_steps``/``every_n_secs``, or a
            non-positive period.
        RuntimeError: in ``begin()``, if the graph has no global step.

    Example:
        >>> hook = StepCounterHook(every_n_steps=10, output_dir="/tmp/model")
        >>> with pyhooks.MonitoredSession(hooks=[hook]) as sess:
        ...     while not sess.should_stop():
        ...         sess.run(train_op)
    """

    def __init__(self, every_n_steps=100, every_n_secs=None, output_dir=None, summary_writer=None):
        if (every_n_steps is None) == (every_n_secs is None):
            raise ValueError("exactly one of every_n_steps and every_n_secs should be provided.")
        every_n_steps = check_positive("every_n_steps", every_n_steps, integer=True)
        every_n_secs = check_positive("every_n_secs", every_n_secs, integer=False)
        self._timer = SecondOrStepTimer(every_steps=every_n_steps, every_secs=every_n_secs)
        self._every_n_steps = every_n_steps
        self._due = -math.inf  # steps mode: the global step read from which the timer is asked
        self._output_dir = check_output_dir(output_dir)
        self._summary_writer = check_has("summary_writer", summary_writer, ["add_summary", "flush"],
                                         "a summary writer (tf.compat.v1.summary.FileWriter)")
        self._writer = summary_writer
        self._last_global_step = None
        self._warned = 0
        self.rates = 0  # rates measured, of this call and of those it resumed

    def begin(self):
        import tensorflow as tf

        eager = current_backend() is not None
        output_dir = worker_path(self._output_dir)  # a non-chief worker: its own directory
        if self._summary_writer is None and output_dir:
            self._writer = (tf.summary.create_file_writer(str(output_dir)) if eager else
                            tf.compat.v1.summary.FileWriterCache.get(str(output_dir)))
        self._global_step_tensor = global_step_read("StepCounterHook")
        self._summary_tag = ("global_step/sec" if eager else
                             tf.compat.v1.train.get_global_step().op.name + "/sec")
        self._timer.reset()
        self._due = -math.inf
        self._last_global_step = None
        self.rates = 0
        self._args = SessionRunArgs(self._global_step_tensor)
        self._read_step = StepReader(self._global_step_tensor)
        self._per_run = self.steps_per_run()

    def before_run(self, run_context):
        return self._args

    def after_run(self, run_context, run_values):
        stale = run_values.results
        upper = int(stale) + self._per_run  # at most the step reached (+1: a read racing the op)
        if upper > self._due and self._timer.should_trigger_for_step(upper):
            step = self._read_step(run_context.session)
            if self._timer.should_trigger_for_step(step):
                self._count(step)
        if stale == self._last_global_step and self._warned < 5:
            self._warned += 1
            _logging.warning(
                "StepCounterHook: the global step has not been increased by this run (%s, as "
                "in the run before), so no rate can be measured. Give the global step to the "
                "optimizer (`minimize(..., global_step=...)`) or increment it in the train op.",
                stale, first_n=5)
        self._last_global_step = stale

    def _count(self, step):
        elapsed_secs, elapsed_steps = self._timer.update_last_triggered_step(step)
        if self._every_n_steps is not None:  # no clock needed before the next one is due
            self._due = step + self._every_n_steps - 1
        if elapsed_secs is not None and elapsed_secs > 0:
            self.rates += 1
            self._record(elapsed_steps / elapsed_secs, step)

    def state_dict(self):
        """The rates measured and the step of the last measurement (see the class docstring)."""
        return {"rates": self.rates, "last_step": self._timer.last_triggered_step()}

    def load_state_dict(self, state):
        """Counts rates on from ``state``'s and, measuring every N steps, keeps its schedule."""
        self.rates = int(state["rates"])
        last = state.get("last_step")
        if last is not None and self._every_n_steps is not None:
            self._timer.resume(int(last))
            self._due = int(last) + self._every_n_steps - 1

    def _record(self, steps_per_sec, step):
        if self._writer is not None and not hasattr(self._writer, "add_summary"):  # tf.summary
            from pyhooks.hooks._summary import write_value

            write_value(self._writer, self._summary_tag, steps_per_sec, step)
        elif self._writer is not None:
            from tensorflow.core.framework.summary_pb2 import Summary

            summary = Summary(value=[Summary.Value(tag=self._summary_tag,
                                                   simple_value=steps_per_sec)])
            self._writer.add_summary(summary, step)
        _logging.info("%s: %g", self._summary_tag, steps_per_sec)

    def end(self, session):
        if self._writer is not None:
            self._writer.flush()

    def after_error(self, session, error):
        if self._writer is not None:
            self._writer.flush()
