"""Hooks under ``tf.distribute``: the chief, per-worker files, stopping together, per-replica values.

Used through :class:`pyhooks.EagerSessionCreator` (``strategy=``, ``is_chief=``,
``chief_only_hooks=``, ``agree_every_n_steps=``) and :func:`pyhooks.keras_callback`
(``strategy=``, ``is_chief=``, ``chief_only_hooks=``), and by the estimators'
``run_config(train_distribute=)`` (:mod:`pyhooks.estimators.distributed`); the
functions here are what those arguments do:

- **The chief** (:func:`find_worker`): ``is_chief`` if given, else the strategy's
  ``extended.should_checkpoint`` (MultiWorkerMirroredStrategy: the ``chief`` task,
  or worker 0 without one; one-process strategies: always). Chief-only hooks run
  on the chief only, as with ``MonitoredTrainingSession(chief_only_hooks=)``.
- **Per-worker files** (:func:`worker_path`): on a worker that is not the chief,
  the hooks that write files (``HistorySaverHook(path=)``, ``StepCounterHook``,
  ``SummarySaverHook`` and ``ProfilerHook``'s ``output_dir``, ``CheckpointSaverHook``'s
  ``checkpoint_dir``) write below ``<dir>/tmp_<task_type>_<task_id>/``, TensorFlow's
  convention, never into the chief's files.
- **Stopping together** (:class:`StopAgreementHook`, added last on every worker of a
  multi-worker strategy): every ``agree_every_n_steps`` steps the workers exchange
  one small all-reduce saying who asked to stop (a hook's ``request_stop()``:
  ``StopAtStepHook``, ``NanTensorHook``, your own); if anyone did, every worker stops
  after that same step. Between two agreements a stop request waits for the next
  one. By default (``"auto"``) the steps between agreements follow measured times
  (about 2% of a step spent agreeing, at most 1 s apart, a ``StopAtStepHook``'s
  last step agreed at that step). An error on one worker (a hook's, its ``begin()``
  included, or the step's) is reported to the cluster, so the other workers' next
  collective fails at once with TensorFlow's error naming the task and the reason
  (``... Error reported from
  /job:worker/task:1: pyhooks: worker 1 failed in local step 7: ValueError: ...``),
  instead of waiting on a peer that is gone. End of input: use a dataset
  distributed by the strategy (``strategy.distribute_datasets_from_function`` or
  ``experimental_distribute_dataset``): TensorFlow gives a worker whose input is
  over empty batches until every worker's is, then ends all at the same step (the
  mean loss of an empty batch is NaN: with ``NanTensorHook`` all stop at the first).
- **Per-replica values** (:func:`reduce_output`): a step output that is a
  ``PerReplica`` value (what ``strategy.run`` returns) reaches the hooks as one
  value over this worker's replicas: the **sum** for scalars, TensorFlow's
  convention for a loss scaled by the global batch size
  (``tf.nn.compute_average_loss(per_example, global_batch_size=)``: each
  replica's loss is its share of the batch's mean, and their sum is that mean,
  what a single replica of the whole batch computes), and the concatenation
  along the first axis for per-example values. An output combined otherwise is
  declared by name: ``EagerSessionCreator(output_reductions={"accuracy":
  "mean"})`` (``"sum"``, ``"mean"`` or ``"concat"``). Values that cannot be
  combined so are an error naming the output and the fix (reduce it in the step
  with ``strategy.reduce``). Values across *workers* are not combined (under
  ``MultiWorkerMirroredStrategy`` a worker's ``"loss"`` is its replicas' share
  of the global loss): reduce them in the step if hooks should see them.
  Without ``strategy=``, a per-replica output is an error naming it and saying
  to pass ``strategy=``.
- **Scheduled steps** (ParameterServerStrategy with a ``ClusterCoordinator``):
  wrap the step in :class:`ScheduledSteps`; the hooks then get the values of
  executed steps, one step behind the scheduling, and the global step counts the
  steps whose values the hooks got. A step function returning the
  ``RemoteValue`` of ``schedule()`` itself is refused with an error saying so.
"""

from __future__ import annotations

import json
import logging
import os
import time

from pyhooks.errors import PyhooksError
from pyhooks.hook import SessionRunHook, check_hooks
from pyhooks.hooks._common import check_bool
from pyhooks.hooks._workers import Worker, worker_path, worker_scope

__all__ = ["REDUCTIONS", "PerReplicaOutputError", "ScheduledSteps", "StopAgreementHook", "Worker",
           "check_agreement_every", "check_plain_output", "check_reductions", "find_worker", "reduce_output",
           "report_failure", "report_failure_of_task", "worker_hooks", "worker_path",
           "worker_scope"]

_log = logging.getLogger("pyhooks")


class PerReplicaOutputError(PyhooksError, TypeError):
    """A ``PerReplica`` step output pyhooks cannot combine for the hooks (the message says how)."""


# --------------------------------------------------------------------------- the chief
def _task_of(strategy):
    """``(task_type, task_id, cluster)`` from the strategy's resolver, else ``TF_CONFIG``."""
    resolver = getattr(strategy, "cluster_resolver", None)
    if resolver is not None and getattr(resolver, "task_type", None) is not None:
        try:
            cluster = resolver.cluster_spec().as_dict()
        except Exception:  # noqa: BLE001 - a resolver without a spec: one task
            cluster = {}
        return resolver.task_type, int(resolver.task_id), cluster
    config = os.environ.get("TF_CONFIG")
    if config:
        try:
            parsed = json.loads(config)
            task = parsed.get("task") or {}
            if task.get("type") is not None:
                return task["type"], int(task.get("index", 0)), parsed.get("cluster") or {}
        except (ValueError, TypeError, AttributeError):
            pass
    return None, None, {}


def find_worker(strategy=None, is_chief=None):
    """This process's :class:`Worker` under ``strategy``, or ``None`` without either argument.

    Args:
        strategy: a ``tf.distribute.Strategy`` (its ``extended.should_checkpoint``
            says whether this is the chief; its cluster resolver gives the task).
        is_chief: True or False to decide yourself (overrides the strategy).

    Raises:
        TypeError: ``is_chief`` is not True, False or None, or ``strategy`` is not a
            ``tf.distribute.Strategy``.
    """
    if strategy is None and is_chief is None:
        return None
    if is_chief is not None:
        is_chief = check_bool("is_chief", is_chief)
    if strategy is not None and not hasattr(getattr(strategy, "extended", None),
                                            "should_checkpoint"):
        raise TypeError(f"`strategy` must be a tf.distribute.Strategy, got {strategy!r}.")
    task_type, task_id, cluster = _task_of(strategy)
    if is_chief is None:
        is_chief = bool(strategy.extended.should_checkpoint)
    trainers = [job for job in ("chief", "worker") if job in cluster]
    num_workers, index = 1, 0
    if strategy is not None and trainers and task_type in trainers and _is_multi_worker(strategy):
        num_workers = sum(len(cluster[job]) for job in trainers)
        index = task_id + (len(cluster["chief"]) if task_type == "worker" and
                           "chief" in cluster else 0)
    return Worker(task_type, task_id, is_chief, num_workers, index)


def _is_multi_worker(strategy):
    """Whether the strategy's replicas span processes that each run the training loop."""
    extended = strategy.extended
    return bool(getattr(extended, "_in_multi_worker_mode", lambda: False)()) and not hasattr(
        strategy, "_cluster_coordinator") and type(strategy).__name__ not in (
        "ParameterServerStrategyV2", "ParameterServerStrategy")


def worker_hooks(hooks, chief_only_hooks, worker, agree_every_n_steps=None, strategy=None):
    """The hooks one worker runs: ``hooks``, then ``chief_only_hooks`` on the chief, then
    (several workers, ``agree_every_n_steps`` given: a number or ``"auto"``) a
    :class:`StopAgreementHook`, last, so that it sees every stop request.

    Raises:
        ValueError: ``chief_only_hooks`` without a ``worker`` (no strategy, no ``is_chief``).
    """
    hooks = check_hooks(hooks)
    chief_only = check_hooks(chief_only_hooks, "chief_only_hooks")
    check_agreement_every(agree_every_n_steps, allow_none=True)
    if worker is None:
        if chief_only:
            raise ValueError("`chief_only_hooks` needs `strategy=` or `is_chief=` to know whether "
                             "this process is the chief.")
        return hooks
    hooks = hooks + (chief_only if worker.is_chief else [])
    if worker.num_workers > 1 and agree_every_n_steps is not None:
        hooks.append(StopAgreementHook(strategy, worker, agree_every_n_steps, hooks=hooks))
    return hooks


def check_agreement_every(every, allow_none=False):
    """``every`` if it is a positive whole number or ``"auto"`` (or None, with ``allow_none``);
    else a ValueError naming ``agree_every_n_steps``."""
    from pyhooks.timer import check_positive

    if isinstance(every, str):
        if every == "auto":
            return every
        raise ValueError("`agree_every_n_steps` must be a positive whole number, 'auto'"
                         f"{' or None' if allow_none else ''}, got {every!r}.")
    return check_positive("agree_every_n_steps", every, integer=True, allow_none=allow_none)


# --------------------------------------------------------------------------- stopping together
class StopAgreementHook(SessionRunHook):
    """Makes all workers stop after the same step; reports this worker's failure to the others.

    Added (last) by :class:`pyhooks.EagerSessionCreator` under a multi-worker
    strategy; see the module docstring. Each agreement is one all-reduce of
    ``2 * num_workers`` numbers (who asked to stop, and each worker's proposal for
    the steps until the next agreement), compiled once.

    With ``every_n_steps="auto"`` (the default) the steps between two agreements
    are chosen from measured times so that agreeing costs about
    :attr:`TARGET_COST` of a step: each worker proposes ``ceil(vote time /
    (TARGET_COST x step time))`` (at least 1; at most what :attr:`MAX_WAIT_SECS`
    of steps holds, and no more than the steps left to the earliest
    ``StopAtStepHook.last_step`` among ``hooks``, so that a planned stop is agreed
    at its own step), and every worker takes the smallest proposal, read from the
    same all-reduce: all of them agree at the same steps.

    Args:
        strategy: the ``tf.distribute`` strategy the workers train with.
        worker: this process's :class:`Worker`.
        every_n_steps: agree every this many steps (a stop waits until then), or
            ``"auto"``.
        vote: ``vote(flags) -> sum of every worker's flags`` (numpy arrays of
            ``2 * num_workers``), to use instead of calling the all-reduce this hook
            compiles (an estimator's, which runs it eagerly while its graph is the
            default one).
        hooks: the worker's other hooks (their ``StopAtStepHook`` s bound the steps
            between two automatic agreements).
    """

    TARGET_COST = 0.02  # of a step's time, spent agreeing (every_n_steps="auto")
    MAX_WAIT_SECS = 1.0  # at most this long between two automatic agreements

    def __init__(self, strategy, worker, every_n_steps="auto", vote=None, hooks=()):
        self._every = check_agreement_every(every_n_steps)
        self._strategy = strategy
        self._worker = worker
        self._vote = vote
        from pyhooks.hooks.stop_at_step import StopAtStepHook

        self._stop_hooks = [hook for hook in hooks if isinstance(hook, StopAtStepHook)]
        self.clock = time.perf_counter
        self._reset()

    def _reset(self):
        self._steps = 0
        self._next_vote = 1 if self._every == "auto" else self._every
        self._pending = False
        self._start_step = None  # the global step when the session was created
        self._since = None  # (clock, steps) after the last vote
        self.stopped_by = None  # after an agreed stop: the indices of the workers that asked
        self.vote_steps = []  # the local steps after which the workers agreed

    def begin(self):
        self._reset()
        if self._vote is None:
            self._vote = _make_vote(self._strategy, 2 * self._worker.num_workers)
        from pyhooks.hooks._common import global_step_read

        self._read = global_step_read("StopAgreementHook", required=False) if (
            self._stop_hooks and self._every == "auto") else None

    def after_create_session(self, session, coord):
        if self._read is not None and self._start_step is None:
            self._start_step = int(session.run(self._read)) - self._steps

    def after_run(self, run_context, run_values):
        self._steps += 1
        if run_context.defer_stop():  # held until the vote: then every worker stops together
            self._pending = True
        if self._steps < self._next_vote:
            return
        import numpy as np

        count = self._worker.num_workers
        flags = np.zeros(2 * count, np.float32)
        flags[self._worker.index] = 1.0 if self._pending else 0.0
        auto = self._every == "auto"
        if auto:
            flags[count + self._worker.index] = self._proposal()
        started = self.clock()
        summed = np.asarray(self._vote(flags))
        ended = self.clock()
        self._since = (ended, self._steps, ended - started)
        self.vote_steps.append(self._steps)
        self._next_vote = self._steps + (int(summed[count:].min()) if auto else self._every)
        asked = np.flatnonzero(summed[:count])
        if asked.size:
            self.stopped_by = asked.tolist()
            run_context.request_stop()
            _log.info("Worker(s) %s asked to stop: all %d workers stop after local step %d.",
                      self.stopped_by, count, self._steps)

    def _proposal(self):
        """This worker's steps until the next agreement (see the class docstring)."""
        import math

        steps = 1
        if self._since is not None:
            since, at, vote_secs = self._since
            step_secs = max((self.clock() - since) / max(self._steps - at, 1), 1e-6)
            steps = math.ceil(round(vote_secs / (self.TARGET_COST * step_secs), 6))
            steps = min(steps, max(1, int(self.MAX_WAIT_SECS / step_secs)), 2 ** 20)
        for hook in self._stop_hooks:  # a planned stop is agreed at its own step
            last = getattr(hook, "last_step", None)
            if last is not None and self._start_step is not None:
                left = last - (self._start_step + self._steps)
                if left >= 1:
                    steps = min(steps, left)
        return float(max(steps, 1))

    def after_error(self, session, error):
        """Tells the other workers why this one fails (unless a peer's failure caused it)."""
        report_failure(self._worker, f"in local step {self._steps + 1}", error)


def report_failure(worker, where, error):
    """Tells the other workers that ``worker`` fails ``where`` (``"in local step 3"``) with
    ``error``: their next collective fails with TensorFlow's error carrying this message.

    Nothing is sent for a peer's failure reaching this worker, nor twice for one error; if
    the cluster cannot be told, the reason is a note on ``error`` (which always wins).
    """
    if _peer_failure(error) or getattr(error, "_pyhooks_reported", False):
        return
    notes = "; ".join(n.removeprefix("pyhooks: ") for n in getattr(error, "__notes__", ()))
    message = (f"pyhooks: {worker.name} failed {where}: {type(error).__name__}: {error}"
               + (f" ({notes})" if notes else ""))
    try:
        error._pyhooks_reported = True  # noqa: SLF001 - one report per error
    except AttributeError:
        pass
    try:
        from tensorflow.python.eager import context

        context.context().report_error_to_cluster(2, message)  # UNKNOWN
    except Exception as secondary:  # noqa: BLE001 - the original error wins
        if type(secondary).__name__ != "FailedPreconditionError":  # another task reported first
            error.add_note(f"pyhooks: could not tell the other workers: {secondary!r}")


def report_failure_of_task(where, message):
    """Tells the other workers of the cluster in ``TF_CONFIG`` that this task fails ``where``
    with ``message`` (an error outside Python: R's ``input_fn()`` checks); their next
    collective fails with TensorFlow's error carrying it. Returns whether they were told:
    not without a cluster of several workers, nor before this process made its strategy (then
    the others fail at its own start). R's ``input_fn()`` and ``train()`` call it.
    """
    import sys

    if "tensorflow" not in sys.modules:
        return False
    task_type, task_id, cluster = _task_of(None)
    trainers = [job for job in ("chief", "worker") if job in cluster]
    if task_type not in trainers or sum(len(cluster[job]) for job in trainers) < 2:
        return False
    from tensorflow.python.eager import context

    name = Worker(task_type, task_id, False, 0, 0).name
    try:
        context.context().report_error_to_cluster(2, f"pyhooks: {name} failed {where}: {message}")
    except Exception as secondary:  # noqa: BLE001 - the caller's error wins; the log says why
        _log.warning("pyhooks: could not tell the other workers that %s failed: %r",
                     name, secondary)
        return False
    return True


def _peer_failure(error):
    """Whether ``error`` is another task's failure reaching this one (nothing to report): its
    report, or a step cancelled because of it (an estimator's, whose session is closed then)."""
    text = str(error)
    return ("Error reported from /job:" in text or "Collective ops is aborted by" in text
            or type(error).__name__ == "CancelledError")


def _make_vote(strategy, size):
    """``vote(flags) -> sum of every worker's flags`` (``size`` numbers), one all-reduce,
    compiled once."""
    import tensorflow as tf

    def replica_sum(flags):  # (an input of the replica's own: all_reduce needs its device)
        return tf.distribute.get_replica_context().all_reduce("SUM", tf.identity(flags))

    @tf.function(input_signature=[tf.TensorSpec([size], tf.float32)])
    def vote(flags):
        summed = strategy.run(replica_sum, args=(flags,))
        return strategy.experimental_local_results(summed)[0]

    return vote


# --------------------------------------------------------------------------- scheduled steps
class ScheduledSteps:
    """A step for :class:`pyhooks.EagerSessionCreator` that schedules ``step_fn`` on the workers.

    Under ParameterServerStrategy the coordinator process schedules steps
    (``coordinator.schedule(step_fn, args, kwargs)``) that workers execute
    later. Each call of this object schedules one step and returns the outputs
    of the step scheduled by the call before, fetched (waiting until it has
    executed): the workers always have the next step to run while the hooks
    look at the last one. The first call schedules two steps and returns the
    first one's outputs. So the hooks see every step once, in order, one step
    behind the scheduling, and the global step counts the steps whose outputs
    the hooks got; when the loop stops, one more step (already scheduled) is
    still executed: ``coordinator.join()`` waits for it.

    Args:
        coordinator: a ``tf.distribute.experimental.coordinator.ClusterCoordinator``.
        step_fn: a ``tf.function`` returning a dict of named tensors (``strategy.run``
            inside it), as for :class:`pyhooks.EagerSessionCreator`.
        args, kwargs: what ``schedule()`` passes to ``step_fn`` (e.g. an iterator of
            ``coordinator.create_per_worker_dataset(...)``).

    Example:
        >>> step = pyhooks.distribute.ScheduledSteps(coordinator, train_step, args=(batches,))
        >>> creator = pyhooks.EagerSessionCreator(step, strategy=strategy)
    """

    def __init__(self, coordinator, step_fn, args=(), kwargs=None):
        if not callable(getattr(coordinator, "schedule", None)):
            raise TypeError(f"`coordinator` must be a ClusterCoordinator, got {coordinator!r}.")
        if not callable(step_fn):
            raise TypeError(f"`step_fn` must be callable, got {step_fn!r}.")
        self.coordinator = coordinator
        self.step_fn = step_fn
        self.args = tuple(args)
        self.kwargs = dict(kwargs or {})
        self._in_flight = None

    def _schedule(self):
        return self.coordinator.schedule(self.step_fn, args=self.args, kwargs=self.kwargs)

    def __call__(self):
        if self._in_flight is None:
            self._in_flight = self._schedule()
        executed, self._in_flight = self._in_flight, self._schedule()
        return executed.fetch()


# --------------------------------------------------------------------------- per-replica values
REDUCTIONS = ("sum", "mean", "concat")  # what an output's per-replica values may be combined by


def check_reductions(reductions):
    """``{output name: reduction}`` (a dict copy) if every reduction is one of :data:`REDUCTIONS`.

    Raises:
        TypeError: ``reductions`` is not a dict of names, or ``None``.
        ValueError: a reduction is not ``"sum"``, ``"mean"`` or ``"concat"``.
    """
    if reductions is None:
        return {}
    if not isinstance(reductions, dict) or not all(isinstance(k, str) for k in reductions):
        raise TypeError("`output_reductions` must be a dict {output name: 'sum', 'mean' or "
                        f"'concat'}}, got {reductions!r}.")
    for name, reduction in reductions.items():
        if reduction not in REDUCTIONS:
            raise ValueError(f"`output_reductions`[{name!r}] must be 'sum', 'mean' or "
                             f"'concat', got {reduction!r}.")
    return dict(reductions)


def _remote_value_error(name):
    """The error for a ``RemoteValue`` output ``name`` (``None``: the step's own value)."""
    what = "The step function returned" if name is None else f"Step output {name!r} is"
    return PerReplicaOutputError(
        f"{what} a RemoteValue of a step scheduled by a ClusterCoordinator "
        "(ParameterServerStrategy), not yet executed: pyhooks cannot hand it to the hooks. "
        "Give EagerSessionCreator pyhooks.distribute.ScheduledSteps(coordinator, step_fn, "
        "args) as the step (the hooks get the values of executed steps, one step behind), "
        f"or return values ({{'{name or 'loss'}': remote.fetch()}}, which waits for that step).")


def check_plain_output(name, value):
    """``value`` unless it is a ``PerReplica`` or ``RemoteValue`` (a step given without
    ``strategy=``); ``name`` is the output's (``None``: the step function's own value).

    Raises:
        PerReplicaOutputError: naming the output and saying to pass ``strategy=``
            (or, for a ``RemoteValue``, to use :class:`ScheduledSteps`).
    """
    import tensorflow as tf

    if isinstance(value, tf.distribute.experimental.coordinator.RemoteValue):
        raise _remote_value_error(name)
    if isinstance(value, tf.distribute.DistributedValues):
        raise PerReplicaOutputError(
            f"Step output {name or 'loss'!r} is a per-replica value ({type(value).__name__}, what "
            "strategy.run() returns), and the step was given without its strategy: pass "
            "`strategy=` to EagerSessionCreator (or keras_callback) so that pyhooks combines "
            f"it for the hooks, or reduce it in the step ({{'{name or 'loss'}': "
            "strategy.reduce('SUM', per_replica, axis=None)}).")
    return value


def reduce_output(strategy, name, value, reduction=None):
    """Step output ``name`` as one value: a ``PerReplica`` value combined over the replicas.

    ``reduction`` (``"sum"``, ``"mean"``, ``"concat"``; ``None``: by shape):
    scalars (one per replica) by default their sum, TensorFlow's convention for
    a loss scaled by the global batch size; arrays concatenated along the first
    axis (per-example values). Anything else, or arrays whose other dimensions
    differ: :class:`PerReplicaOutputError` naming the output. Other values as they are.
    """
    import tensorflow as tf

    if isinstance(value, tf.distribute.experimental.coordinator.RemoteValue):
        raise _remote_value_error(name)
    if not isinstance(value, tf.distribute.DistributedValues):
        return value
    return _combine(name, strategy.experimental_local_results(value), reduction)


def _combine(name, parts, reduction=None):
    import tensorflow as tf

    fix = (f"reduce it in the step, e.g. {{'{name}': strategy.reduce('SUM', per_replica, "
           "axis=None)}, or return one value per replica of the same shape.")
    try:
        shapes = [tuple(part.shape) for part in parts]
        numeric = all(part.dtype.is_floating or part.dtype.is_integer or part.dtype.is_bool
                      for part in parts)
    except AttributeError:
        shapes, numeric = None, False
    if not numeric:
        raise PerReplicaOutputError(f"Step output {name!r} is a per-replica value pyhooks cannot "
                                    f"combine ({parts!r}): {fix}")
    scalars = all(shape == () for shape in shapes)
    if reduction is None:
        reduction = "sum" if scalars else "concat"
    if reduction != "concat" and all(shape == shapes[0] for shape in shapes):
        dtype = parts[0].dtype if parts[0].dtype.is_floating else tf.float32
        stacked = tf.stack([tf.cast(part, dtype) for part in parts])
        return (tf.reduce_sum if reduction == "sum" else tf.reduce_mean)(stacked, axis=0)
    if reduction == "concat" and all(len(shape) >= 1 and shape[1:] == shapes[0][1:]
                                     for shape in shapes):
        return tf.concat([tf.identity(part) for part in parts], axis=0)
    raise PerReplicaOutputError(f"Step output {name!r} has per-replica values of shapes "
                                f"{shapes}, which pyhooks cannot combine by {reduction!r} "
                                "(sum and mean: one shape; concat: the same shape after the "
                                f"first axis): {fix}")
