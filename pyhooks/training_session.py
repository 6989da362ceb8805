"""``MonitoredTrainingSession``: a :class:`~pyhooks.MonitoredSession` with TensorFlow's default hooks."""

from __future__ import annotations

import os

from pyhooks import _logging
from pyhooks.hook import check_hooks
from pyhooks.hooks._hook_state import for_loop, listening
from pyhooks.session import MonitoredSession

__all__ = ["USE_DEFAULT", "MonitoredTrainingSession"]

USE_DEFAULT = object()
_COLLECTIVE = ("CollectiveAllReduceStrategy", "CollectiveAllReduceStrategyV1",
               "MultiWorkerMirroredStrategy")


def _defaults(steps, secs, default_steps, default_secs):
    """TensorFlow's rule: both left to default -> the defaults; one given -> the other off."""
    if steps is USE_DEFAULT and secs is USE_DEFAULT:
        return default_steps, default_secs
    return (None if steps is USE_DEFAULT else steps), (None if secs is USE_DEFAULT else secs)


def MonitoredTrainingSession(master="", is_chief=True, checkpoint_dir=None, scaffold=None,  # noqa: N802
                             hooks=None, chief_only_hooks=None, save_checkpoint_secs=USE_DEFAULT,
                             save_summaries_steps=USE_DEFAULT, save_summaries_secs=USE_DEFAULT,
                             config=None, stop_grace_period_secs=120, log_step_count_steps=100,
                             max_wait_secs=7200, save_checkpoint_steps=USE_DEFAULT,
                             summary_dir=None, save_graph_def=True):
    """A :class:`MonitoredSession` with TensorFlow's default training hooks.

    Same arguments and defaults as ``tf.compat.v1.train.MonitoredTrainingSession``:
    on the chief, a ``StepCounterHook`` and ``SummarySaverHook`` (every 100 steps)
    write to ``summary_dir or checkpoint_dir`` and a ``CheckpointSaverHook`` saves
    every 600 s to ``checkpoint_dir`` — all pyhooks' own hooks. Inside a
    distribute coordinator's worker context (TensorFlow's
    ``distribute_coordinator``) the context decides, as in TensorFlow: the chief
    from ``worker_context.is_chief``, the default hooks from its
    ``should_save_summary`` and ``should_checkpoint``; with a collective
    strategy, the other workers write theirs to ``<dir>/tmp_<task_type>_<task_id>``.

    On a chief outside a worker context, the state of hooks that keep one
    (``state_dict()``: ``StepCounterHook``'s, a ``HistorySaverHook``'s...) is saved
    beside the checkpoints and given back when the session starts from one of
    them (:mod:`pyhooks.hooks._hook_state`).
    """
    from tensorflow.python.distribute import distribute_coordinator_context
    from tensorflow.python.training.monitored_session import (
        ChiefSessionCreator, Scaffold, WorkerSessionCreator)

    save_summaries_steps, save_summaries_secs = _defaults(
        save_summaries_steps, save_summaries_secs, 100, None)
    save_checkpoint_steps, save_checkpoint_secs = _defaults(
        save_checkpoint_steps, save_checkpoint_secs, None, 600)
    scaffold = scaffold or Scaffold()
    hooks = check_hooks(hooks)
    chief_only_hooks = check_hooks(chief_only_hooks, "chief_only_hooks")
    summary_dir = summary_dir or checkpoint_dir

    context = distribute_coordinator_context.get_current_worker_context()
    if context:
        tmpdir = None
        if type(context._strategy).__name__ in _COLLECTIVE:  # noqa: SLF001 - as TensorFlow
            tmpdir = (f"tmp_{context.task_type}_{context.task_id}" if context.task_type
                      else "tmp")
            if save_checkpoint_secs:
                _logging.warning("Collective ops may deadlock with `save_checkpoint_secs`: saving "
                                 "every 1000 steps instead.")
                save_checkpoint_secs, save_checkpoint_steps = None, 1000

        def where(directory, allowed):  # the chief's directory, a worker's own, or none
            return directory if allowed else (
                os.path.join(directory, tmpdir) if tmpdir and directory else None)
        all_hooks = hooks + (chief_only_hooks if context.is_chief else [])
        all_hooks += _default_hooks(
            scaffold, where(summary_dir, context.should_save_summary),
            where(checkpoint_dir, context.should_checkpoint), log_step_count_steps,
            save_summaries_steps, save_summaries_secs, save_checkpoint_steps,
            save_checkpoint_secs, save_graph_def)
        creator = context.session_creator(scaffold, config=config,
                                          checkpoint_dir=checkpoint_dir,
                                          max_wait_secs=max_wait_secs)
        return MonitoredSession(creator, all_hooks, stop_grace_period_secs)

    if not is_chief:
        creator = WorkerSessionCreator(scaffold=scaffold, master=master, config=config,
                                       max_wait_secs=max_wait_secs)
        return MonitoredSession(creator, hooks, stop_grace_period_secs)
    creator = ChiefSessionCreator(scaffold=scaffold, checkpoint_dir=checkpoint_dir, master=master,
                                  config=config)
    all_hooks = chief_only_hooks + _default_hooks(
        scaffold, summary_dir, checkpoint_dir, log_step_count_steps, save_summaries_steps,
        save_summaries_secs, save_checkpoint_steps, save_checkpoint_secs, save_graph_def) + hooks
    state = for_loop(all_hooks)  # the hooks' state beside the checkpoints, last
    if state is not None:
        all_hooks.append(state)
    with listening(state):  # around the hooks' begin()
        return MonitoredSession(creator, all_hooks, stop_grace_period_secs)


def _default_hooks(scaffold, summary_dir, checkpoint_dir, log_step_count_steps,
                   save_summaries_steps, save_summaries_secs, save_checkpoint_steps,
                   save_checkpoint_secs, save_graph_def):
    """The step counter and summary saver writing to ``summary_dir``, the checkpoint saver."""
    from pyhooks import hooks as builtin

    found = []
    if summary_dir:
        if log_step_count_steps and log_step_count_steps > 0:
            found.append(builtin.StepCounterHook(output_dir=summary_dir,
                                                 every_n_steps=log_step_count_steps))
        if (save_summaries_steps and save_summaries_steps > 0) or (
                save_summaries_secs and save_summaries_secs > 0):
            found.append(builtin.SummarySaverHook(
                scaffold=scaffold, save_steps=save_summaries_steps,
                save_secs=save_summaries_secs, output_dir=summary_dir))
    if checkpoint_dir and ((save_checkpoint_secs and save_checkpoint_secs > 0) or (
            save_checkpoint_steps and save_checkpoint_steps > 0)):
        found.append(builtin.CheckpointSaverHook(
            checkpoint_dir, save_steps=save_checkpoint_steps, save_secs=save_checkpoint_secs,
            scaffold=scaffold, save_graph_def=save_graph_def))
    return found
