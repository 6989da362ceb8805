"""HistorySaverHook: the loss (and extra metrics) every N steps, kept in a :class:`History`."""

from __future__ import annotations

import csv
import math
import os

import numpy as np

from pyhooks.hook import SessionRunArgs, SessionRunHook
from pyhooks.hooks._common import StepReader, StepsPerRun, exact_step, global_step_read, to_numpy
from pyhooks.hooks._history import BASE_COLUMNS, History, open_csv
from pyhooks.hooks._lookup import find_loss, graph_element
from pyhooks.hooks._model_dir import disk_error
from pyhooks.hooks._workers import worker_path
from pyhooks.timer import check_positive

__all__ = ["History", "HistorySaverHook"]

_SCALARS = frozenset({float, np.float32, np.float64, np.float16})
_sum = np.add.reduce
_SMALL = 256

def _number(value):
    value = np.asarray(to_numpy(value))
    return (value.item() if value.size == 1 else value.mean().item())


class HistorySaverHook(StepsPerRun, SessionRunHook):
    """Records the loss every ``every_n_step`` global steps, and always the last step.

    Per row: ``steps`` (the global step reached), ``mean_losses`` and
    ``total_losses`` (mean and sum of the per-example loss of the batch), plus one
    column per entry of ``metrics`` (a non-scalar metric is recorded as its mean).
    The history is reset by ``begin()``: each run gets a fresh :class:`History`,
    except when an estimator's ``train()`` resumes an interrupted one
    (:mod:`pyhooks.hooks._hook_state`): then it keeps the rows saved with the
    checkpoint it resumes from (those of later steps, which are run again, are
    not), and its rows have the next ``run`` number (``History.runs``).

    Args:
        every_n_step: record every this many steps (a whole number; ``2.0`` is accepted).
        path: a CSV file to which each row is appended (and flushed) as it is recorded,
            with one more column, ``run``: 1 for the rows of the first run written to
            the file, 2 for the next, and so on. A run resumed from a checkpoint
            repeats steps an earlier run recorded: its ``run`` tells them apart. On a
            worker other than the chief: ``<dir>/tmp_<task_type>_<task_id>/<file>``
            (see :mod:`pyhooks.distribute`).
        metrics: ``{name: tensor or tensor name}`` of extra values to record.
        loss: the per-example loss; default the first tensor of the ``losses`` collection.

    Example:
        >>> hook = HistorySaverHook(every_n_step=2)
        >>> # ... train 4 steps from step 0 with hooks=[hook] ...
        >>> hook.history
          mean_losses total_losses steps
        1    343.9690     2751.752     2
        2    419.7618     3358.094     4
    """

    def __init__(self, every_n_step=10, path=None, metrics=None, loss=None):
        self._every_n_step = check_positive("every_n_step", every_n_step, integer=True,
                                            allow_none=False)
        if path is not None and not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"`path` must be a file path or None, got {path!r} "
                            f"({type(path).__name__}).")
        self._path = None if path is None else os.fspath(path)
        if self._path is not None and (not self._path or self._path.endswith(os.sep)
                                       or os.path.isdir(self._path)):
            raise ValueError(f"`path` must be a file path or None, got {path!r}"
                             f"{' (a directory)' if self._path else ''}.")
        if metrics is not None and not isinstance(metrics, dict):
            raise TypeError(f"`metrics` must be a dict of name -> tensor, got {metrics!r}.")
        self._metrics = dict(metrics or {})
        for name in self._metrics:
            if not isinstance(name, str) or name in BASE_COLUMNS:
                raise ValueError(f"`metrics` names must be strings other than {BASE_COLUMNS}, "
                                 f"got {name!r}.")
        self._loss = loss
        self._history = History(self._metrics)
        self._file = None
        self._last = None
        self._recorded_step = -1

    @property
    def history(self):
        """The :class:`History` of the current (or last) run."""
        return self._history

    def begin(self):
        name = type(self).__name__
        self._history = History(self._metrics)
        self._file_path = worker_path(self._path, is_file=True)  # a non-chief worker: its own
        self._due = None  # the step due for the next row
        self._step_tensor = global_step_read(name)
        loss = find_loss(self._loss, name, required=True)
        extra = [graph_element(v, f"`metrics` {k!r}", name)
                 for k, v in self._metrics.items()]
        step = self._step_tensor
        self._args = SessionRunArgs((step, loss, *extra))  # a tuple: cannot change
        self._read_step = StepReader(step)
        self._per_run = self.steps_per_run()
        self._last = None
        self._recorded_step = -1

    def after_create_session(self, session, coord):
        self._due = self._read_step(session) + self._every_n_step

    def before_run(self, run_context):
        return self._args

    def after_run(self, run_context, run_values):
        self._last = results = run_values.results
        if self._due is None:  # driven without after_create_session: counted from this run
            self._due = int(results[0]) + self._every_n_step
        # the fetched read + 1 is at most the step reached: confirm it when a row may be due
        if int(results[0]) + self._per_run >= self._due:
            step = self._read_step(run_context.session)
            if step >= self._due and step > self._recorded_step:
                self._due = step + self._every_n_step
                self._record(results, step)

    def _record(self, results, step):
        loss = results[1]
        self._recorded_step = step
        if type(loss) in _SCALARS:  # a scalar loss (Keras' logs): no array work
            total, size = float(loss), 1
        else:
            loss = to_numpy(loss, copy=False)
            if type(loss) is not np.ndarray:
                loss = np.asarray(loss)
            size = loss.size
            # a batch's losses: summed exactly in Python (numpy's dispatch costs more); big ones
            # by numpy (pairwise, in their dtype)
            total = (math.fsum(loss.ravel().tolist()) if size <= _SMALL else
                     float(_sum(loss, None)))
        row = (total / max(size, 1), total, step)  # in BASE_COLUMNS' order
        if self._metrics:
            row += tuple(map(_number, results[2:]))
        self._history.append_values(row)
        if self._file_path is not None:
            try:
                if self._file is None:
                    self._file, self._run = open_csv(self._file_path, self._history.columns)
                    self._csv = csv.writer(self._file)
                self._csv.writerow((*row, self._run))
                self._file.flush()
            except OSError as error:
                file, self._file = self._file, None
                if file is not None:
                    try:  # the rows it could not flush are this same failure
                        file.close()
                    except OSError:
                        pass
                found = disk_error(f"the history row of step {row[2]}", self._file_path, error)
                if found is None:
                    raise
                raise found from error

    def state_dict(self):
        """The rows recorded so far (see :mod:`pyhooks.hooks._hook_state`)."""
        return {**self._history.state(), "recorded_step": self._recorded_step}

    def load_state_dict(self, state):
        """Keeps the rows of ``state``; the rows this run records get the next run number."""
        self._history.resumed(state)
        self._recorded_step = int(state.get("recorded_step", -1))

    def end(self, session):
        self._finish(session)

    def after_error(self, session, error):
        self._finish(session)

    def _finish(self, session):
        """The last step's row, unless it was recorded; then the file is closed."""
        try:
            if self._last is not None and session is not None:
                ran = int(self._last[0]) + self._per_run  # at most the step the last values reached
                try:
                    step = exact_step(session, self._step_tensor)
                except Exception:  # noqa: BLE001 - a broken session: the last run's own step
                    step = ran
                # a later run whose values this hook never got (Ctrl-C, an error in another
                # hook's after_run): no row with a loss of the step before it
                if self._recorded_step < step <= ran:
                    self._record(self._last, step)
        finally:
            if self._file is not None:
                self._file.close()
                self._file = None
