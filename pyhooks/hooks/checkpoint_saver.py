"""``CheckpointSaverHook``: save checkpoints at creation, periodically, at the end, on failure."""

from __future__ import annotations

import logging
import os
import weakref

import numpy as np

from pyhooks import _logging
from pyhooks.errors import CheckpointError, NanLossDuringTrainingError
from pyhooks.hook import SessionRunArgs, SessionRunHook, run_info
from pyhooks.hooks._checkpointing import (
    CheckpointSaverListener, collection_saver, eager_saver, save_checkpoint, write_graph)
from pyhooks.hooks._common import (StepsPerRun, check_bool, current_backend, global_step_read,
                                   to_numpy)
from pyhooks.hooks._lookup import check_exclusive, check_has, find_loss
from pyhooks.hooks._model_dir import (TrainingLock, disk_error, event_writer, flush_events,
                                      latest_checkpoint, recover_saver)
from pyhooks.hooks._workers import worker_path
from pyhooks.timer import SecondOrStepTimer, check_positive

__all__ = ["CheckpointSaverHook", "CheckpointSaverListener"]


class CheckpointSaverHook(StepsPerRun, SessionRunHook):
    """Saves checkpoints at session creation, every N steps or seconds, and at the end.

    At session creation it saves unless the directory's latest checkpoint is
    already this step's (a new loop on a model saved at its end: nothing new).

    The saver is ``saver``, the ``scaffold``'s, the only one in the ``SAVERS``
    collection, or a new one built in ``begin()`` (and added there); its
    checkpoints restore with ``tf.compat.v1.train.Saver``. Data files and the
    ``.meta`` graph are complete before the ``checkpoint`` index, replaced
    atomically, names them: a crash mid-save leaves the previous checkpoint
    as the latest. With ``save_on_error`` a failing loop (an error, Ctrl-C) also
    saves its last state. Once a loss was not finite (NaN or ±Inf, the first of
    the ``losses`` collection; or a :class:`pyhooks.NanLossDuringTrainingError`),
    it saves no more (:attr:`diverged_at`): an update computed from that loss
    may have spoiled the weights, and the latest checkpoint is the last good one.

    From ``begin()`` to ``end()`` (or ``after_error()``) the hook holds
    ``checkpoint_dir``'s training lock, as the estimators do for their
    model_dir: a loop of another process saving there is refused with
    :class:`pyhooks.errors.ModelDirLockedError` (both would write the same
    checkpoint names). Within one process the lock is shared (an estimator's
    ``train()`` runs this hook on its own model_dir).

    On the eager and Keras backends ``saver`` is a ``tf.train.Checkpoint``
    (saved through a ``tf.train.CheckpointManager`` keeping 5, as ``<checkpoint_dir>/
    <checkpoint_basename>-<step>``) or a ``CheckpointManager``; put the global step
    in it to resume the step count. On Keras it may be left out: the checkpoint is then
    ``tf.train.Checkpoint(model=model, optimizer=model.optimizer)`` (the optimizer's
    ``iterations`` are the step count; a separate global step is added as ``global_step``).
    No graph, ``.meta`` or event files there.

    Args:
        checkpoint_dir: directory of the checkpoints, ``graph.pbtxt`` and events (on a
            worker other than the chief, ``<dir>/tmp_<task_type>_<task_id>``: see
            :mod:`pyhooks.distribute`).
        save_secs: save every N seconds.
        save_steps: save every N global steps. Exactly one of the two.
        saver: the ``Saver`` to use.
        checkpoint_basename: file name prefix of the checkpoints.
        scaffold: a ``Scaffold`` whose saver to use (not with ``saver``).
        listeners: :class:`CheckpointSaverListener` objects; the loop's saving listeners
            (``pyhooks.run_info().saving_listeners``, an estimator's ``train(saving_listeners=)``)
            are called after them.
        save_graph_def: also write ``graph.pbtxt`` and ``<checkpoint>.meta`` files.
        save_on_error: also save when the loop fails (pyhooks' ``after_error``).

    Raises:
        ValueError / TypeError: bad arguments; RuntimeError: in ``begin()``, no global step;
        ModelDirLockedError / DiskWriteError: in ``begin()``, another process trains into
        ``checkpoint_dir``, or it cannot be written.

    Example:
        >>> hook = CheckpointSaverHook("/tmp/model", save_steps=100)
    """

    save_log_level = logging.INFO  # of the line each save logs (an estimator's own: DEBUG)
    write_events = True  # SessionLog and graph events in checkpoint_dir (graph mode)

    def __init__(self, checkpoint_dir, save_secs=None, save_steps=None, saver=None,
                 checkpoint_basename="model.ckpt", scaffold=None, listeners=None,
                 save_graph_def=True, save_on_error=True):
        if not isinstance(checkpoint_dir, (str, os.PathLike)) or not os.fspath(checkpoint_dir):
            raise TypeError(f"`checkpoint_dir` must be a non-empty path, got {checkpoint_dir!r}.")
        if not isinstance(checkpoint_basename, str) or not checkpoint_basename:
            raise TypeError(f"`checkpoint_basename` must be a name, got {checkpoint_basename!r}.")
        if saver is not None and scaffold is not None:
            raise ValueError("You cannot provide both saver and scaffold.")
        check_has("saver", saver, ["save"], "a tf.compat.v1.train.Saver, a tf.train.Checkpoint "
                                            "or a tf.train.CheckpointManager")
        check_has("scaffold", scaffold, ["saver"], "a tf.compat.v1.train.Scaffold")
        check_exclusive(required=True, save_secs=save_secs, save_steps=save_steps)
        self._timer = SecondOrStepTimer(
            every_secs=check_positive("save_secs", save_secs, integer=False),
            every_steps=check_positive("save_steps", save_steps, integer=True))
        if listeners is not None and not isinstance(listeners, (list, tuple)):
            raise TypeError(f"`listeners` must be a list of CheckpointSaverListener objects, got "
                            f"{listeners!r} ({type(listeners).__name__}).")
        self._listeners = list(listeners or [])
        for i, listener in enumerate(self._listeners):
            if not callable(getattr(listener, "after_save", None)):
                raise TypeError(f"`listeners[{i}]` must be a listener, got {listener!r}.")
        self._given_dir = self._checkpoint_dir = os.fspath(checkpoint_dir)
        self._basename = checkpoint_basename
        self._save_path = os.path.join(self._checkpoint_dir, checkpoint_basename)
        self._given_saver, self._saver, self._scaffold = saver, saver, scaffold
        self._save_graph_def = check_bool("save_graph_def", save_graph_def)
        self._save_on_error = check_bool("save_on_error", save_on_error)
        self._writer = self._global_step_tensor = self._lock = None
        self._active_listeners = self._listeners
        self._diverged_at = None
        self._written_for = (lambda: None, None)  # (graph, directory) whose graph events it wrote

    @property
    def checkpoint_dir(self):
        """The directory the checkpoints go to (a non-chief worker's own, once begun)."""
        return self._checkpoint_dir

    @property
    def diverged_at(self):
        """The step after which this run saved nothing because a loss was not finite, or None."""
        return self._diverged_at

    def begin(self):
        import tensorflow as tf

        backend = current_backend()
        self._checkpoint_dir = worker_path(self._given_dir)  # a non-chief worker: its own
        self._save_path = os.path.join(self._checkpoint_dir, self._basename)
        self._global_step_tensor = global_step_read("CheckpointSaverHook")
        loss = find_loss(None, "CheckpointSaverHook", required=False)
        # the same args every step (the loss: fetched by the progress bar and history too)
        self._args = SessionRunArgs(self._global_step_tensor if loss is None else
                                    (self._global_step_tensor, loss))
        self._diverged_at = None
        self._per_run = self.steps_per_run()
        if backend is not None:  # eager / Keras: a tf.train.Checkpoint, no graph files
            self._writer = None
            self._saver = eager_saver(backend, self._given_saver, self._scaffold,
                                      self._checkpoint_dir, os.path.basename(self._save_path))
            self._graph_written = True
        else:
            self._writer = event_writer(self._checkpoint_dir) if self.write_events else None
            no_saver = self._given_saver is None and self._scaffold is None
            self._saver = collection_saver() if no_saver else self._given_saver
            # a hook used again on the same graph and directory wrote its graph events already
            written_graph, written_dir = self._written_for
            self._graph_written = (written_graph() is tf.compat.v1.get_default_graph()
                                   and written_dir == self._checkpoint_dir)
        self._timer.reset()
        self._lock_dir()
        self._active_listeners = self._listeners + list(run_info().saving_listeners)
        for listener in self._active_listeners:
            listener.begin()

    def _lock_dir(self):
        """Holds the directory's training lock (another process's loop: ModelDirLockedError)."""
        self._release()
        try:
            os.makedirs(self._checkpoint_dir, exist_ok=True)
        except OSError as error:
            found = disk_error("checkpoints", self._checkpoint_dir, error)
            if found is None:
                raise
            raise found from error
        self._lock = TrainingLock(self._checkpoint_dir).acquire(shared_here=True)

    def after_create_session(self, session, coord):
        step = int(session.run(self._global_step_tensor))
        if not self._graph_written:  # once per begin(), not again on recovery
            # max_to_keep counts the checkpoints earlier processes left
            recover_saver(self._get_saver(), self._checkpoint_dir)
            try:
                write_graph(self._writer, session.graph, self._get_saver(), self._checkpoint_dir,
                            self._save_graph_def)
            except Exception as error:
                found = disk_error("the graph", self._checkpoint_dir, error)
                if found is None:
                    raise
                raise found from error
            self._graph_written = True
            self._written_for = (weakref.ref(session.graph), self._checkpoint_dir)
        # nothing new after recovery at this step, or when the directory's latest checkpoint
        # is of this step (a new loop on a model saved at its end)
        if step != self._timer.last_triggered_step() and not self._saved_already(step):
            self._save(session, step)
        self._timer.update_last_triggered_step(step)

    def _saved_already(self, step):
        try:
            latest = latest_checkpoint(self._checkpoint_dir)
        except CheckpointError:  # a damaged index: a new save replaces it
            return False
        return latest is not None and os.path.normpath(latest) == os.path.normpath(
            f"{self._save_path}-{step}")

    def before_run(self, run_context):
        return self._args

    def after_run(self, run_context, run_values):
        results = run_values.results
        if isinstance(results, tuple):
            results, loss = results
            if self._diverged_at is None and not np.all(np.isfinite(to_numpy(loss, copy=False))):
                self._diverge(int(run_context.session.run(self._global_step_tensor)))
        if self._diverged_at is not None:
            return
        if self._timer.should_trigger_for_step(int(results) + self._per_run):
            # value + 1 may overshoot (increment not ordered after the read): read it back
            step = int(run_context.session.run(self._global_step_tensor))
            if self._timer.should_trigger_for_step(step):
                self._timer.update_last_triggered_step(step)
                if self._save(run_context.session, step):
                    run_context.request_stop()

    def _diverge(self, step):
        self._diverged_at = step
        _logging.warning("Saving no more checkpoints: the loss of step %d was not finite, so "
                         "the weights may be spoiled; the latest checkpoint is the last good "
                         "one.", step)

    def end(self, session):
        try:
            step = int(session.run(self._global_step_tensor))
            if step != self._timer.last_triggered_step() and self._diverged_at is None:
                self._save(session, step)
            for listener in self._active_listeners:
                listener.end(session, step)
            if self._writer is not None:
                flush_events(self._writer, self._checkpoint_dir)
        finally:
            self._release()

    def after_error(self, session, error):
        try:
            if isinstance(error, NanLossDuringTrainingError) and self._diverged_at is None:
                self._diverge(error.step if error.step is not None else -1)
            if (self._save_on_error and session is not None and self._global_step_tensor is not None
                    and not getattr(error, "_pyhooks_checkpoint_save", False)
                    and self._diverged_at is None):
                step = int(session.run(self._global_step_tensor))
                if step != self._timer.last_triggered_step():
                    _logging.log(self.save_log_level, "Saving a checkpoint after %s.",
                                 type(error).__name__)
                    self._save(session, step)
        finally:
            try:
                if self._writer is not None:
                    flush_events(self._writer, self._checkpoint_dir)
            finally:
                self._release()

    def _release(self):
        lock, self._lock = self._lock, None
        if lock is not None:
            lock.release()

    def _get_saver(self):
        saver = self._saver if self._saver is not None else self._scaffold.saver
        if saver is None:
            raise RuntimeError("CheckpointSaverHook: the scaffold has no saver (not finalized?).")
        return saver

    def _save(self, session, step):
        """Saves the checkpoint of ``step``; returns True if a listener asks to stop."""
        from tensorflow.core.util.event_pb2 import SessionLog

        try:
            for listener in self._active_listeners:
                listener.before_save(session, step)
            _logging.log(self.save_log_level, "Saving checkpoints for %d into %s.", step,
                         self._save_path)
            try:
                save_checkpoint(self._get_saver(), session, self._save_path, step,
                                self._save_graph_def)
            except Exception as error:
                found = disk_error(f"the checkpoint of step {step}", self._checkpoint_dir, error)
                if found is None:
                    raise
                raise found from error
        except BaseException as error:
            error.__dict__["_pyhooks_checkpoint_save"] = True  # no second attempt in after_error
            raise
        if self._writer is not None:
            log = SessionLog(status=SessionLog.CHECKPOINT, checkpoint_path=self._save_path)
            self._writer.add_session_log(log, step)
        stoppers = [listener for listener in self._active_listeners
                    if listener.after_save(session, step)]
        for listener in stoppers:
            _logging.info("A CheckpointSaverListener requested that training be stopped. "
                          "listener: %s", listener)
        return bool(stoppers)
