"""``GlobalStepWaiterHook``: hold this worker back until the global step reaches a value."""

from __future__ import annotations

import time

from pyhooks import _logging
from pyhooks.errors import GlobalStepWaitTimeout
from pyhooks.hook import SessionRunHook
from pyhooks.hooks._common import global_step_read
from pyhooks.timer import check_positive

__all__ = ["GlobalStepWaitTimeout", "GlobalStepWaiterHook"]



class GlobalStepWaiterHook(SessionRunHook):
    """Delays the first run until the global step reaches ``wait_until_step``.

    Used to start workers gradually in distributed training (other workers
    advance the shared global step). Before the first run the global step is
    read directly from the session, sleeping in between with a back-off from
    ``initial_delay`` doubling up to ``max_delay`` seconds. ``sleep`` and
    ``clock`` are attributes tests may replace.

    Args:
        wait_until_step: the global step to wait for; 0 starts at once.
        timeout_secs: give up after this many seconds with
            :class:`GlobalStepWaitTimeout` (a ``TimeoutError``); None waits for
            ever, as TensorFlow does.

    Raises:
        ValueError / TypeError: a negative or fractional step, a non-positive timeout.
        RuntimeError: in ``begin()``, if the graph has no global step.

    Example:
        >>> hook = GlobalStepWaiterHook(wait_until_step=100 * task_id, timeout_secs=600)
    """

    initial_delay = 0.05
    max_delay = 1.0

    def __init__(self, wait_until_step, timeout_secs=None):
        self._wait_until_step = check_positive("wait_until_step", wait_until_step, integer=True,
                                               allow_none=False, allow_zero=True)
        self._timeout_secs = check_positive("timeout_secs", timeout_secs, integer=False)
        self.sleep = time.sleep
        self.clock = time.monotonic

    def begin(self):
        self._worker_is_started = False
        self._global_step_tensor = global_step_read("GlobalStepWaiterHook")

    def before_run(self, run_context):
        if self._worker_is_started:
            return None
        target = self._wait_until_step
        if target <= 0:
            self._worker_is_started = True
            return None
        _logging.info("Waiting for global step %d before starting training.", target)
        start = self.clock()
        delay = self.initial_delay
        last_logged_step = 0
        while True:
            step = int(run_context.session.run(self._global_step_tensor))
            if step >= target:
                self._worker_is_started = True
                return None
            waited = self.clock() - start
            if self._timeout_secs is not None and waited >= self._timeout_secs:
                raise GlobalStepWaitTimeout(
                    f"GlobalStepWaiterHook: the global step reached only {step} after "
                    f"{waited:.1f} s waiting for step {target} (wait_until_step={target}, "
                    f"timeout_secs="
                    f"{self._timeout_secs:g}).", wait_until_step=target, step=step)
            if step - last_logged_step > 1000:
                _logging.info("Waiting for global step %d before starting training. "
                              "Current step is %d.", target, step)
                last_logged_step = step
            self.sleep(delay)
            delay = min(delay * 2, self.max_delay)
