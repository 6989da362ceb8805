"""``StopAtStepHook``: end the loop at a given global step."""

from __future__ import annotations

from pyhooks.hook import SessionRunArgs, SessionRunHook
from pyhooks.hooks._common import StepsPerRun, global_step_read
from pyhooks.timer import check_positive

__all__ = ["StopAtStepHook"]


class StopAtStepHook(StepsPerRun, SessionRunHook):
    """Requests a stop once the global step reaches ``last_step``.

    The global step is fetched with every run; once that value + 1 reaches
    ``last_step`` the step is confirmed by one raw read and the stop is
    requested in the run that reaches ``last_step``. ``num_steps`` is
    counted from the global step found when the first session is created
    (after ``begin()``); a session re-created on recovery does not move the
    target. If the global step is already at or past the target when a
    session is created, the stop is requested at once (through the
    coordinator), so no step runs; when ``after_create_session`` is given no
    coordinator (``None``), the first ``after_run`` requests it instead.

    Args:
        num_steps: number of steps to run from the current global step.
        last_step: the global step at which to stop. Exactly one of the two.

    Raises:
        ValueError: if both or neither are given, or one is negative or not a
            whole number.
        RuntimeError: in ``begin()``, if the graph has no global step.

    Example:
        >>> with pyhooks.MonitoredSession(hooks=[StopAtStepHook(num_steps=100)]) as sess:
        ...     while not sess.should_stop():
        ...         sess.run(train_op)
    """

    def __init__(self, num_steps=None, last_step=None):
        if num_steps is None and last_step is None:
            raise ValueError("One of num_steps or last_step must be specified.")
        if num_steps is not None and last_step is not None:
            raise ValueError("Only one of num_steps or last_step can be specified.")
        self._num_steps = check_positive("num_steps", num_steps, integer=True, allow_zero=True)
        self._given_last_step = check_positive("last_step", last_step, integer=True,
                                               allow_zero=True)
        self._last_step = self._given_last_step

    @property
    def last_step(self):
        """The absolute step at which the loop stops (``None`` until known)."""
        return self._last_step

    def begin(self):
        self._global_step_tensor = global_step_read("StopAtStepHook")
        # the same args every step
        self._args = SessionRunArgs(self._global_step_tensor)
        self._last_step = self._given_last_step
        self._per_run = self.steps_per_run()

    def after_create_session(self, session, coord):
        step = int(session.run(self._global_step_tensor))
        if self._last_step is None:
            self._last_step = step + self._num_steps
        if step >= self._last_step and coord is not None:
            coord.request_stop()  # without a coordinator, the first after_run stops

    def before_run(self, run_context):
        return self._args

    def after_run(self, run_context, run_values):
        if self._last_step is None:  # driven without after_create_session: from this run
            self._last_step = int(run_values.results) + self._num_steps
        if int(run_values.results) + self._per_run >= self._last_step:
            # value + 1 can overshoot by one when the train op's increment does not
            # wait for the read (``optimizer.minimize(global_step=...)``): confirm it
            # once, near the end, with a raw read (as TensorFlow does).
            if int(run_context.session.run(self._global_step_tensor)) >= self._last_step:
                run_context.request_stop()
