"""ProgressBarHook: a Keras-style progress bar with the loss, redrawn at most every N seconds."""

from __future__ import annotations

import collections
import math
import time

import numpy as np

from pyhooks.hook import SessionRunArgs, SessionRunHook, run_info
from pyhooks.hooks._common import StepReader, global_step_read, one_of
from pyhooks.hooks._lookup import find_loss
from pyhooks.hooks._output import MODES, check_writer, choose_mode, format_eta, write_text
from pyhooks.timer import check_positive

__all__ = ["ProgressBarHook"]

_WIDTH = 38
_ETA_WINDOW_SECS = 30.0  # the ETA and the rate come from the steps of about this long


class ProgressBarHook(SessionRunHook):
    """Shows ``Training 2/2 [=====...] - ETA: 0s - loss: 392.01`` while training.

    Steps are counted per run (from 0 at ``begin()``), not from the global step;
    when a run makes several steps (``pyhooks.RunInfo(steps_per_run=)`` > 1) the
    bar counts the global steps each run made.
    The loss shown is the step's mean loss, as Keras shows it: the mean of the
    per-example loss (the ``losses`` collection of a graph, an eager step's
    ``"losses"`` output), a scalar loss as it is (an eager step's ``"loss"``,
    what Keras' logs report, a ``loss=`` scalar). It is fetched with every step
    (the runner sends a tensor several hooks ask for once).
    The ETA (and the rate when ``total`` is unknown) comes from the steps of
    the last ~30 seconds after the first step, which also pays for building and
    tracing: until a second line is due the ETA shows ``?``.
    'dynamic' mode redraws one line in place; 'plain' mode (files, CI, knitr)
    writes whole lines at each 10% of ``total`` (every ``plain_interval`` seconds
    if it is unknown). A run ending before ``total`` steps gets a line saying why.

    Args:
        label: the text before the bar.
        total: the expected number of steps (a public attribute). None: the steps its
            driver expects (``pyhooks.run_info().steps``: an estimator's ``train()``
            and Keras ``fit`` say), else a rate.
        loss: the loss tensor (or name); default the first of the ``losses`` collection.
        writer: a file-like object or a callable taking a str; default ``sys.stdout``.
        mode: 'dynamic', 'plain' or None (``PYHOOKS_PROGRESS``, then ``CI``, then isatty).
        min_interval: least seconds between two redraws.

    Example:
        >>> hook = ProgressBarHook(total=2)
        >>> # ... train 2 steps with hooks=[hook] ...
        Training 2/2 [======================================] - ETA: 0s - loss: 392.01
    """

    plain_interval = 5.0

    def __init__(self, label="Training", total=None, loss=None, writer=None, mode=None,
                 min_interval=0.1):
        if not isinstance(label, str):
            raise TypeError(f"`label` must be a string, got {label!r} ({type(label).__name__}).")
        check_writer(writer)
        if not one_of(mode, (None, *MODES)):
            raise ValueError(f"`mode` must be 'dynamic', 'plain' or None, got {mode!r}.")
        self.label, self.total, self.writer, self.mode = label, total, writer, mode
        self.min_interval = check_positive("min_interval", min_interval, integer=False,
                                           allow_none=False, allow_zero=True)
        self._loss = loss
        self.clock = time.monotonic
        self.steps, self._open_line = 0, False
        self._resumed = 0
        self._run = run_info()

    def _set_total(self, value):
        self._total = check_positive("total", value, integer=True)

    total = property(lambda self: self._total, _set_total, doc="Expected steps, or None.")

    def _expected(self):
        """The steps to show: ``total``, else what the loop's driver expects (or None)."""
        if self._total is not None:
            return self._total
        steps = self._run.steps
        return None if steps is None else steps + self._resumed

    def begin(self):
        self._run = run_info()
        self._per_run = self._run.steps_per_run
        loss = find_loss(self._loss, type(self).__name__, required=False)
        self._args = None if loss is None else SessionRunArgs(loss)
        self._read_step = None
        if self._per_run > 1:  # a call makes up to that many steps: count the ones it made
            read = global_step_read(type(self).__name__, required=False)
            if read is not None:
                self._read_step = StepReader(read)
                self._args = SessionRunArgs((read,) if loss is None else (read, loss))
        self._active_mode = choose_mode(self.mode, self.writer)
        self.steps = self._drawn_steps = self._line_len = self._resumed = 0
        self._next_check, self._stride, self._last_draw = 1, 1, -math.inf
        self._start = self._value = self._context = self._completed = None
        self._samples = collections.deque()  # (steps, time) of the ticks in the ETA window

    def after_create_session(self, session, coord):
        if self._start is None:
            self._start = self.clock()

    def before_run(self, run_context):
        self._context = run_context
        # Every step, so that a run stopped early ends on its true last loss. It
        # costs little: HistorySaverHook fetches the same tensor, the runner sends
        # it once, a fetch list that stays the same runs as one callable, and an
        # eager tensor is converted only when drawn.
        return self._args

    def after_run(self, run_context, run_values):
        self._completed = run_context
        value = run_values.results
        made = self._per_run
        if self._read_step is not None:  # the step before the call, and the one it reached
            before, value = value if len(value) == 2 else (value[0], None)
            made = self._read_step(run_context.session) - int(before)
        if value is not None:
            self._value = value
        steps = self.steps + made
        if self._per_run > 1 and self._expected() is not None:  # the last call runs fewer
            steps = min(steps, self._expected())
        self.steps = steps
        if steps >= self._next_check:
            self._tick()

    def _tick(self):
        steps, total, now = self.steps, self._expected(), self.clock()
        samples = self._samples
        samples.append((steps, now))
        while len(samples) > 2 and samples[1][1] <= now - _ETA_WINDOW_SECS:
            samples.popleft()
        interval = self.min_interval if self._active_mode == "dynamic" else self.plain_interval
        if self._active_mode == "plain" and total is not None:
            mark = math.floor(steps * 10 / total) + 1
            self._next_check = max(steps + 1, math.ceil(mark * total / 10))
            return self._draw(now)
        if now - self._last_draw >= interval:
            if self._last_draw > -math.inf and now > self._last_draw:
                rate = (steps - self._drawn_steps) / (now - self._last_draw)
                self._stride = max(1, int(rate * interval / 2))
            self._draw(now)
        elif now > self._last_draw:  # not due yet: check again about halfway to the due time
            rate = (steps - self._drawn_steps) / (now - self._last_draw)
            self._stride = max(1, int((interval - (now - self._last_draw)) * rate / 2))
        self._next_check = steps + self._stride

    def _seconds_per_step(self, now):
        """Over the ETA window (from the oldest tick in it to now), or None before a second tick."""
        if not self._samples:
            return None
        first_steps, first_time = self._samples[0]
        if self.steps <= first_steps or now <= first_time:
            return None
        return (now - first_time) / (self.steps - first_steps)

    def _line(self, now):
        steps, total = self.steps, self._expected()
        head = f"{self.label} " if self.label else ""
        per_step = self._seconds_per_step(now)
        if total is None:
            if per_step is None:  # the first line: all we know
                elapsed = now - (self._start if self._start is not None else now)
                rate = steps / elapsed if elapsed > 0 else 0.0
            else:
                rate = 1.0 / per_step
            text = f"{head}{steps} steps - {rate:.2f} steps/s"
        else:
            filled = int(_WIDTH * min(steps / total, 1.0))
            bar = "=" * (filled - 1) + (">" if steps < total else "=") if filled else ""
            if steps >= total:
                eta = "0s"
            else:
                eta = "?" if per_step is None else format_eta(per_step * (total - steps))
            text = (f"{head}{steps:>{len(str(total))}}/{total} [{bar.ljust(_WIDTH)}]"
                    f" - ETA: {eta}")
        if self._value is not None:
            text += f" - loss: {float(np.mean(self._value)):.2f}"
        return text

    def _draw(self, now, final=False):
        line = self._line(now)
        if self._active_mode == "dynamic":
            pad = " " * max(0, self._line_len - len(line))
            write_text(self.writer, f"\r{line}{pad}" + ("\n" if final else ""))
            self._line_len, self._open_line = (0, False) if final else (len(line), True)
        elif not (final and self._drawn_steps == self.steps and self._last_draw > -math.inf):
            write_text(self.writer, line + "\n")
        self._last_draw, self._drawn_steps = now, self.steps

    def state_dict(self):
        """The steps counted (see :mod:`pyhooks.hooks._hook_state`)."""
        return {"steps": self.steps}

    def load_state_dict(self, state):
        """Counts on from the steps of ``state`` (an interrupted call resumed); without a
        ``total`` the bar shows them plus the steps of this call."""
        self.steps = self._drawn_steps = self._resumed = int(state["steps"])

    def end(self, session):
        self._draw(self.clock(), final=True)
        steps, total, context = self.steps, self._expected(), self._context
        if total is None or steps >= total:
            return
        if context is not None and context.stop_requested:  # by a hook, not by the input
            message = f"{self.label} stopped by a hook after {steps} of {total} steps.\n"
        elif context is not None and context is not self._completed:  # the last run() raised
            message = f"{self.label} stopped after {steps} of {total} steps: input exhausted.\n"
        else:  # the caller stopped calling run()
            message = f"{self.label} stopped after {steps} of {total} steps.\n"
        write_text(self.writer, message)

    def after_error(self, session, error):
        if self._open_line:
            self._open_line = False
            write_text(self.writer, "\n")
