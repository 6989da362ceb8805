"""The hooks an estimator adds to a call's own: the stop at its steps, the NaN check, the
history, the progress bar, the estimator's checkpoint saver, the TensorBoard event writer."""

from __future__ import annotations

import logging

from pyhooks.estimators.tensorboard import EventWriterHook
from pyhooks.hook import SessionRunHook
from pyhooks.hooks.checkpoint_saver import CheckpointSaverHook
from pyhooks.hooks.history_saver import HistorySaverHook
from pyhooks.hooks.nan_tensor import NanTensorHook
from pyhooks.hooks.progress_bar import ProgressBarHook
from pyhooks.hooks.stop_at_step import StopAtStepHook

__all__ = ["StopAfterNRuns", "default_hooks"]


class StopAfterNRuns(SessionRunHook):
    """Requests a stop after ``n`` runs (evaluation ``steps``)."""

    def __init__(self, n):
        self._n = n
        self._done = 0

    def after_create_session(self, session, coord):
        if self._n <= 0:
            coord.request_stop()

    def after_run(self, run_context, run_values):
        self._done += 1
        if self._done >= self._n:
            run_context.request_stop()


def default_hooks(hooks, state, config, model_dir, steps=None, max_steps=None):
    """The hooks ``train()`` adds to the caller's ``hooks``, and the history saver of the call.

    Added: a ``StopAtStepHook`` for ``steps`` / ``max_steps``; unless ``hooks``
    has one of its kind, a ``NanTensorHook`` on the training loss, a
    ``HistorySaverHook``, a ``ProgressBarHook`` and a ``CheckpointSaverHook``
    as ``config`` says (every 600 s by default); the TensorBoard event writer
    when ``config`` writes summaries or step rates.

    Returns:
        ``(extra hooks, the HistorySaverHook whose history train() returns)``.
    """
    def has(kind):
        return next((h for h in hooks if isinstance(h, kind)), None)

    extra = []
    if steps is not None:
        extra.append(StopAtStepHook(num_steps=steps))
    elif max_steps is not None:
        extra.append(StopAtStepHook(last_step=max_steps))
    if has(NanTensorHook) is None:
        extra.append(NanTensorHook(state.training_loss))
    history = has(HistorySaverHook)
    if history is None:
        history = HistorySaverHook()
        extra.append(history)
    if has(ProgressBarHook) is None:
        extra.append(ProgressBarHook())
    if has(CheckpointSaverHook) is None:
        extra.append(_own_saver(state, config, model_dir))
    if config.save_summary_steps or config.log_step_count_steps:
        extra.append(EventWriterHook(model_dir, state.summary_op, state.global_step_read,
                                     config.save_summary_steps, config.log_step_count_steps))
    return extra, history


def _own_saver(state, config, model_dir):
    """The estimator's own ``CheckpointSaverHook`` of ``state``'s graph, kept for every call
    (it writes the graph's events once, not at every call)."""
    frequency = config.checkpoint_frequency()
    events = bool(config.save_summary_steps or config.log_step_count_steps)
    kept = getattr(state, "own_saver", None)
    if kept is None or kept[0] != (frequency, events):
        saver = CheckpointSaverHook(model_dir, saver=state.saver, save_graph_def=False,
                                    **frequency)
        saver.save_log_level = logging.DEBUG  # routine saves: not on the console
        saver.write_events = events  # its graph and checkpoint events where events are written
        kept = state.own_saver = ((frequency, events), saver)
    return kept[1]
