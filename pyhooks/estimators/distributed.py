"""Training an estimator under a ``tf.distribute`` strategy (``run_config(train_distribute=)``).

As ``tf.estimator`` did, in graph mode: the training graph's model is built
once per replica by ``strategy.extended.call_for_each_replica`` under
``strategy.scope()`` (mirrored variables; a ``tf.compat.v1`` optimizer's
``minimize`` all-reduces the gradients across the replicas), and the session
gets ``strategy.update_config_proto(config)``. What changes for the user:

- **The input.** Every worker reads its own ``input_fn``; each batch is cut
  into as many consecutive parts as this worker has replicas (a
  ``MirroredStrategy`` over two devices trains each half of a batch on one).
  Give a ``batch_size`` that is a multiple of the number of replicas: the parts
  are then equal and the training the same as without the strategy.
- **The gradients.** The canned estimators' training loss is the batch's sum:
  the replicas' gradients are summed, which is the whole batch's gradient. A
  ``model_fn``'s loss is scaled as ``tf.estimator`` scaled it: a mean loss
  (``tf.compat.v1.losses.*``' default reduction) is divided by the number of
  replicas before the sum, so that the update is the mean's.
- **What the hooks see** (reduced values): the training loss (collection
  ``pyhooks_training_loss``, NanTensorHook's) is reduced over every replica of
  every worker: the sum for the canned estimators (the sum over all workers'
  batches), and for a ``model_fn`` the replicas' mean (its sum when its loss is
  a sum). The per-example losses (collection ``losses``) of a canned estimator
  are this worker's, its replicas' parts joined in batch order, so the
  history's ``mean_losses`` is the batch's mean. A ``model_fn``'s ``losses``
  collection holds the reduced loss. The global step counts steps (one per
  ``run``, however many replicas).
- **Several workers** (``MultiWorkerMirroredStrategy``, the cluster in
  ``TF_CONFIG``): every worker process runs the same script with the same
  ``steps``. The session connects to this worker's own server (the one the
  strategy started). The chief (``chief`` task, else worker 0) writes
  ``model_dir``'s checkpoints and events; any other worker trains with
  ``model_dir/tmp_<task_type>_<task_id>`` as its ``model_dir`` (its events and
  files there, no checkpoints), and hooks that write files write below that
  too (:func:`pyhooks.distribute.worker_path`); ``train(chief_only_hooks=)``
  run on the chief only. Variables start as the chief's
  (broadcast when the session starts). Workers agree on stopping
  (:class:`pyhooks.distribute.StopAgreementHook`, one small eager all-reduce,
  every ``run_config(agree_every_n_steps=)`` steps: by default ``"auto"``,
  spaced for about 2% of a step, at most 1 s apart, ``train()``'s own last
  step agreed at that step): a stop requested on one worker ends every
  worker's ``train()`` after the same step, so no worker is left waiting in a
  collective for a peer that left.
- **A worker that fails.** An error raised on one worker (by a hook, or
  ``NanTensorHook``'s) is reported to the cluster naming the worker and the
  error (``Error reported from /job:worker/task:1: pyhooks: worker 1 failed in
  local step 3: ValueError: ...``), and so is an error in ``train()`` before
  its steps (the input's checks against the model's contract, the
  ``model_fn``: ``worker 1 failed in train() before its first step (...):
  ...``), and R's ``input_fn()`` refusing its data on a worker once the
  strategy is made (``worker 1 failed building the input (input_fn()):
  ...``). The others fail with that message at their next agreement, or, when
  their step waits in its all-reduce for the failed worker, within about 3 s
  (a thread asks TensorFlow's coordination service every second whether a
  task failed, and cancels such a step by closing the session: the error is
  the failed task's, with TensorFlow's type). A worker that dies is noticed so
  too, once the coordination service misses its heartbeats (10 s by default):
  the others fail with ``UnavailableError`` naming the task, about 10 s
  after the death. The session is not re-created (a new one cannot bring the
  peer back), and after a failure that closed the session nothing is saved.
- **Inputs of several workers.** Every worker's input must last the steps (``num_epochs = None``, or
  ``steps`` of at most its batches): ``train()`` refuses an input that could
  end first, since a worker whose input ends would leave the others waiting.

``ParameterServerStrategy`` is refused with an error naming it and what to use
instead: its graph builds, but every replica of it runs on the coordinator
process itself (no worker trains), and its ``ClusterCoordinator`` schedules
only ``tf.function``s.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading

from pyhooks.estimators.graph import ModelTensors
from pyhooks.hook import SessionRunArgs, SessionRunHook
from pyhooks.estimators.modes import TRAINING_LOSS_COLLECTION

__all__ = ["ReplicatedTraining", "check_strategy"]

# (and their TensorFlow 1 variants, MirroredStrategyV1 & co.)
_GRAPH_STRATEGIES = ("MirroredStrategy", "MultiWorkerMirroredStrategy",
                     "CollectiveAllReduceStrategy", "OneDeviceStrategy")


def check_strategy(strategy):
    """``strategy`` if ``train_distribute`` can be it, else TypeError/ValueError saying what to use.

    Accepted: ``MirroredStrategy`` (one process, several devices),
    ``MultiWorkerMirroredStrategy`` (several processes, ``TF_CONFIG``),
    ``OneDeviceStrategy``, and ``None``.
    """
    if strategy is None:
        return None
    if not hasattr(getattr(strategy, "extended", None), "call_for_each_replica") or not hasattr(
            strategy, "scope"):
        raise TypeError(f"`train_distribute` must be a tf.distribute strategy (e.g. "
                        f"tf.distribute.MirroredStrategy()) or None, got {strategy!r}.")
    names = {cls.__name__ for cls in type(strategy).__mro__}
    if names & {"ParameterServerStrategyV2", "ParameterServerStrategyV1",
                "ParameterServerStrategy"}:
        raise ValueError(
            f"`train_distribute` = {type(strategy).__name__}: parameter-server training cannot "
            "train an estimator's graph on TensorFlow 2 (in a graph its replica runs on this "
            "coordinator process and no worker trains; its ClusterCoordinator schedules only "
            "tf.functions). Use tf.distribute.MultiWorkerMirroredStrategy() for "
            "estimators, or pyhooks.EagerSessionCreator(pyhooks.distribute.ScheduledSteps(...)) "
            "for a parameter-server custom loop.")
    if not any(name.startswith(_GRAPH_STRATEGIES) for name in names):
        raise ValueError(
            f"`train_distribute` = {type(strategy).__name__}: pyhooks' estimators train under "
            "tf.distribute.MirroredStrategy, MultiWorkerMirroredStrategy or OneDeviceStrategy; "
            "use one of those.")
    return strategy


def _local_address(strategy):
    """``grpc://host:port`` of this worker's task, from the strategy's resolver or ``TF_CONFIG``."""
    resolver = getattr(strategy, "cluster_resolver", None)
    if resolver is not None and getattr(resolver, "task_type", None) is not None:
        spec = resolver.cluster_spec()
        return "grpc://" + spec.task_address(resolver.task_type, int(resolver.task_id))
    config = json.loads(os.environ["TF_CONFIG"])
    task = config["task"]
    return "grpc://" + config["cluster"][task["type"]][int(task.get("index", 0))]


class ReplicatedTraining:
    """How one estimator's training graph runs under ``strategy`` (see the module docstring).

    Attributes:
        strategy: the ``tf.distribute`` strategy.
        worker: this process's :class:`pyhooks.distribute.Worker`.
        multi_worker: whether several processes train together.
        local_replicas: how many replicas this process runs (the parts of a batch).
    """

    _phase = "in train()"  # where a failure happens (see failures())
    _vote = None  # the stop agreement's all-reduce, once made (see hooks())

    def __init__(self, strategy):
        from pyhooks import distribute

        self.strategy = check_strategy(strategy)
        self.worker = distribute.find_worker(strategy)
        self.multi_worker = self.worker.num_workers > 1
        # a strategy with a cluster (even of one worker) places ops on /job:worker/...: the
        # session runs them on this task's server
        self._clustered = any(device.startswith("/job:") and not device.startswith(
            "/job:localhost") for device in strategy.extended.worker_devices)
        self.local_replicas = len(strategy.extended.worker_devices)

    @property
    def is_chief(self):
        return self.worker.is_chief

    @contextlib.contextmanager
    def failures(self):
        """Around ``train()``: with several workers, an error is told to the others, naming
        this worker and the phase (:func:`pyhooks.distribute.report_failure`; the stop
        agreement has told them of an error in a step), then raised."""
        self._phase = "in train() before its first step (input checks, building the model)"
        try:
            yield
        except BaseException as error:
            if self.multi_worker:
                from pyhooks.distribute import report_failure

                report_failure(self.worker, self._phase, error)
            raise

    def own_dir(self, model_dir):
        """``model_dir`` on the chief; ``model_dir/tmp_<type>_<id>`` on any other worker."""
        if self.is_chief:
            return model_dir
        own = (f"tmp_{self.worker.task_type}_{self.worker.task_id}"
               if self.worker.task_type is not None else "tmp")
        return os.path.join(model_dir, own)

    def scope(self):
        """The context in which hooks' ``begin()`` find this worker (for their files)."""
        from pyhooks.hooks._workers import worker_scope

        return worker_scope(self.worker)

    def check_steps(self, input_fn, steps, max_steps, start):
        """With several workers, refuses a ``train()`` whose input could end before its steps.

        A worker whose input ends would leave the others waiting for it in the
        step's all-reduce; every worker must run the same number of steps.
        """
        if not self.multi_worker or input_fn.num_epochs is None:
            return
        batches = input_fn.steps_per_run()
        if batches is None:  # files: their rows are not counted in advance
            raise ValueError(
                f"Under {type(self.strategy).__name__} with {self.worker.num_workers} workers, "
                "every worker must train the same number of steps: an input of files must "
                "repeat (num_epochs = None), with `steps` or `max_steps`.")
        wanted = steps if steps is not None else (None if max_steps is None else
                                                  max_steps - start)
        if wanted is None or wanted > batches:
            raise ValueError(
                f"Under {type(self.strategy).__name__} with {self.worker.num_workers} workers, "
                "every worker must train the same number of steps, and this worker's input "
                f"holds {batches} batch(es) (num_epochs = {input_fn.num_epochs}) for "
                f"`steps` = {wanted}: give `steps` of at most {batches}, or an input that "
                "repeats (num_epochs = None).")

    def session_args(self, config):
        """``(target, config)`` of the training session: the strategy's settings added."""
        import tensorflow as tf

        config = tf.compat.v1.ConfigProto() if config is None else _copy(config)
        cpus = [d for d in self.strategy.extended.worker_devices if "CPU" in d.upper()]
        if cpus:  # several logical CPUs in the session (the strategy names /cpu:1 and up)
            config.device_count["CPU"] = max(config.device_count.get("CPU", 1), len(cpus))
        config = self.strategy.update_config_proto(config)
        target = _local_address(self.strategy) if self._clustered else ""
        return target, config

    # ------------------------------------------------------------------ the graph
    def build(self, state, tf, build_replica, batch, custom):
        """Builds ``build_replica(replica_state, batch_part)`` once per replica; sets on ``state``
        what the loop runs: ``train_op``, ``fetches``, ``training_loss``, ``per_example_loss``
        (canned), ``model_variables``, ``spec_hooks``, and the ``losses`` collections."""
        v1 = tf.compat.v1
        strategy = self.strategy
        graph = v1.get_default_graph()
        parts = _split(tf, batch, self.local_replicas)
        replicas = []

        def replica_fn():
            # this replica's part of the batch (the id is a constant in graph mode)
            replica_id = tf.get_static_value(
                tf.distribute.get_replica_context().replica_id_in_sync_group)
            replica_batch = parts[int(replica_id) % self.local_replicas]
            replica = _ReplicaState(state)
            replicas.append(replica)
            build_replica(replica, replica_batch)
            # the loss and, packed into its all-reduce, whether it is finite on this worker
            loss = replica.training_loss
            finite = tf.cast(tf.math.is_finite(loss), loss.dtype)
            loss = tf.concat([tf.reshape(loss, [1]), tf.one_hot(
                self.worker.index, self.worker.num_workers, dtype=loss.dtype) * (1 - finite)], 0)
            if custom:
                return loss, replica.train_op
            return loss, replica.per_example_loss, replica.train_op

        with strategy.scope():
            if custom:  # as tf.estimator: a mean loss is scaled for the sum of the gradients
                with strategy._scale_loss_for_estimator_enabled():  # noqa: SLF001
                    outputs = strategy.extended.call_for_each_replica(replica_fn)
            else:
                outputs = strategy.extended.call_for_each_replica(replica_fn)
            loss = outputs[0]
            scaled = getattr(graph, "_is_loss_scaled_by_optimizer", False)
            reduce_op = tf.distribute.ReduceOp.MEAN if custom and scaled else \
                tf.distribute.ReduceOp.SUM
            reduced = strategy.reduce(reduce_op, loss, axis=None)
            training_loss = tf.identity(reduced[0], name="training_loss")
            state.not_finite_on = reduced[1:] > 0  # the workers whose loss was not finite
            updates = strategy.experimental_local_results(outputs[-1])
            update = tf.group(*[u for u in updates if u is not None], name="replicated_update")
        first = replicas[0]
        state.model_variables = first.model_variables
        state.spec_hooks = first.spec_hooks
        state.training_loss = training_loss
        for key in (v1.GraphKeys.LOSSES, TRAINING_LOSS_COLLECTION, v1.GraphKeys.TRAIN_OP):
            graph.clear_collection(key)
        if custom:  # the model_fn's train_op incremented the global step (once, merged)
            state.train_op = update
            graph.add_to_collection(v1.GraphKeys.LOSSES, training_loss)
        else:
            local = strategy.experimental_local_results(outputs[1])
            state.per_example_loss = tf.concat(list(local), axis=0, name="per_example_loss")
            graph.add_to_collection(v1.GraphKeys.LOSSES, state.per_example_loss)
            # the step is counted once, after every replica's update and the step's read
            with tf.control_dependencies([update, state.global_step_read]):
                state.train_op = state.global_step.assign_add(1, read_value=False)
        graph.add_to_collection(TRAINING_LOSS_COLLECTION, training_loss)
        graph.add_to_collection(v1.GraphKeys.TRAIN_OP, state.train_op)
        state.fetches = state.train_op

    def first_hooks(self, state):
        """The hooks this worker runs before the others: with several workers, one naming
        the workers whose loss was not finite on ``NanLossDuringTrainingError``."""
        if not self.multi_worker:
            return []
        from pyhooks.distribute import _task_of

        return [_NotFiniteOn(state.not_finite_on, _task_of(self.strategy)[2])]

    def hooks(self, state, every_n_steps="auto", others=()):
        """The hooks this worker adds to ``train()``: the stop agreement with several workers,
        every ``every_n_steps`` steps (``"auto"``: from measured times, ``others``'
        ``StopAtStepHook`` s agreed at their step; see
        :class:`pyhooks.distribute.StopAgreementHook`)."""
        self._phase = "in train()'s loop (its session, steps or hooks)"
        if not self.multi_worker or every_n_steps is None:
            return []
        from pyhooks.distribute import StopAgreementHook, _make_vote

        from tensorflow.python.eager import context

        def vote(flags):  # eagerly (the strategy's collectives), not in the estimator's graph
            with context.eager_mode():
                if self._vote is None:  # made once per estimator: tracing it takes ~1 s
                    self._vote = _make_vote(self.strategy, 2 * self.worker.num_workers)
                return self._vote(flags).numpy()

        return [StopAgreementHook(self.strategy, self.worker, every_n_steps, vote=vote,
                                  hooks=others)]

    @contextlib.contextmanager
    def watching(self, session):
        """Around the training loop, with several workers: a step waiting for a failed peer ends.

        A graph step waiting in its all-reduce for a worker that died or failed
        would wait for ever (graph collectives check no peer's health). A thread
        asks TensorFlow's coordination service every :attr:`_PeerWatch.INTERVAL`
        seconds whether a task has failed (a reported error, or heartbeats missing
        for its timeout, 10 s by default); when one has and this worker's loop
        has not ended within :attr:`_PeerWatch.GRACE` seconds (a stop agreement
        waiting in its eager all-reduce fails by itself), it closes ``session``,
        which cancels the step, and the loop's error becomes the peer's failure,
        naming the task.
        """
        if not self.multi_worker:
            yield
            return
        watch = _PeerWatch(self.strategy, session)
        watch.start()
        try:
            yield
        except BaseException as error:
            failure = watch.stop()
            if failure is None:
                raise
            raise failure from error
        finally:
            watch.stop()


class _PeerWatch:
    """The thread of :meth:`ReplicatedTraining.watching`."""

    INTERVAL = 1.0  # seconds between two questions to the coordination service
    GRACE = 2.0  # seconds the loop has to fail by itself before its session is closed

    def __init__(self, strategy, session):
        from pyhooks.distribute import _task_of

        cluster = _task_of(strategy)[2]
        self._jobs = [(job, len(cluster[job])) for job in ("chief", "worker") if job in cluster]
        self._session = session
        self.failure = None

        self._ended = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="pyhooks-peer-watch",
                                        daemon=True)

    def start(self):
        self._thread.start()

    def stop(self):
        """Ends the watch; returns the error to raise for a peer's failure, or None."""
        self._ended.set()
        if self._thread.is_alive():
            self._thread.join()
        return self.failure

    def _watch(self):
        from tensorflow.python.eager import context

        while not self._ended.wait(self.INTERVAL):
            try:
                states = context.context().get_task_states(self._jobs)
            except Exception:  # noqa: BLE001 - no coordination service: nothing to watch
                return
            failed = [(name, state) for name, state in zip(self._names(), states) if state]
            if not failed:
                continue
            if self._ended.wait(self.GRACE):
                return  # the loop ended by itself (its own error, or a vote that failed)
            self.failure = _peer_error(*failed[0])
            self.failure.closed_session_for_peer = True
            self._session.close()  # cancels the step waiting for the peer
            return

    def _names(self):
        return [f"/job:{job}/task:{index}" for job, count in self._jobs
                for index in range(count)]


def _peer_error(task, state):
    """The error a worker raises when ``task`` failed (``state``: its status in the
    coordination service): TensorFlow's error type of that status, the task named."""
    import tensorflow as tf

    message = str(getattr(state, "message", state))
    kind = type(state) if isinstance(state, tf.errors.OpError) else tf.errors.UnavailableError
    return kind(None, None, f"Error reported from {task}: {message} (pyhooks: this "
                            "worker's step waited for it and was cancelled)")


class _NotFiniteOn(SessionRunHook):
    """Notes on a ``NanLossDuringTrainingError`` the workers whose own loss was not finite
    (the training loss the hooks see is every worker's)."""

    def __init__(self, flags, cluster):
        self._flags = flags
        self._chiefs = len((cluster or {}).get("chief", ()))
        self._last = None

    def before_run(self, run_context):
        return SessionRunArgs(self._flags)

    def after_run(self, run_context, run_values):
        self._last = run_values.results

    def after_error(self, session, error):
        from pyhooks.errors import NanLossDuringTrainingError

        if not isinstance(error, NanLossDuringTrainingError) or self._last is None:
            return
        names = [f"chief {index}" if index < self._chiefs else f"worker {index - self._chiefs}"
                 for index, bad in enumerate(self._last) if bad]  # (find_worker's order)
        if names:
            error.add_note(f"pyhooks: the loss was not finite in the batch of "
                           f"{' and '.join(names)}")


class _ReplicaState(ModelTensors):
    """What one replica's build writes (the graph state's stand-in inside the replicas)."""

    replicated = True

    def __init__(self, state):
        super().__init__(state.global_step, state.global_step_read)


def _split(tf, batch, parts):
    """``parts`` dicts of consecutive rows of ``batch`` (sizes differ by at most one)."""
    if parts == 1:
        return [batch]
    rows = tf.shape(next(iter(batch.values())))[0]
    bounds = [rows * i // parts for i in range(parts + 1)]
    return [{name: tensor[bounds[i]:bounds[i + 1]] for name, tensor in batch.items()}
            for i in range(parts)]


def _copy(config):
    copied = type(config)()
    copied.CopyFrom(config)
    return copied
