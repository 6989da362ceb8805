"""One mode's graph: its input pipeline, model, saver and session (built once, kept).

An estimator keeps one :class:`GraphState` per mode (train, eval, predict; a
custom estimator one per kind of input too), built on first use inside a
private ``tf.Graph()`` from a :class:`GraphSpec` and kept with its
``tf.compat.v1.Session``: variables live in the session between calls;
checkpoints in the model directory are written at the end of every
``train()`` and read when a session starts or when the directory holds a newer
checkpoint than the one the session last saw (another estimator object trained
it, or ``evaluate()`` needs what ``train()`` saved).

The model is built by ``spec.build(target, tf, mode, batch)`` (a canned model:
:func:`canned_build`; a custom one: its ``model_fn``), which sets on ``target``
(a :class:`ModelTensors`) what the loops of the mode run.

Conventions for hooks (see DEVELOPING.md): a global step whose value fetched in
a step is the value *before* that step's increment (the increment waits for
the variable's read, which is also the ``global_step_read`` tensor); the
per-example loss in the ``losses`` collection; the training loss (its sum over
the batch) in ``pyhooks_training_loss``.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any, Callable, NamedTuple

from pyhooks.estimators._quiet import import_tensorflow, quiet
from pyhooks.estimators.dataset_input import DatasetPipeline, DatasetPlan
from pyhooks.estimators.feature_columns import FLOAT, STR_OR_INT, NumericColumn
from pyhooks.estimators.kept_session import run_loop
from pyhooks.estimators.models import make_optimizer, minimize, saved_variables
from pyhooks.estimators.modes import (LABEL, PREDICT, TRAIN, TRAINING_LOSS_COLLECTION, WEIGHT,
                                      feature_name)
from pyhooks.estimators.file_pipeline import FilePipeline, FilePlan
from pyhooks.estimators.held_input import HeldInput
from pyhooks.estimators.pipeline import StreamedInput
from pyhooks.hooks import _model_dir

__all__ = ["FeatureBuilder", "GraphSpec", "GraphState", "ModelTensors", "canned_build",
           "global_step_read"]


class GraphSpec(NamedTuple):
    """What one mode's graph is built from (the estimator makes it; nothing else is read).

    Attributes:
        signature: ``((name, dtype, shape), ...)`` of the fed columns
            (:func:`pyhooks.estimators.pipeline.signature_of`).
        build: ``build(target, tf, mode, batch)`` builds the model on ``batch``.
        model_dir: where the checkpoints are (the chief's under a strategy).
        seed: the graph-level random seed, or None.
        keep_checkpoint_max: checkpoints kept.
        session_config: a ``ConfigProto`` or None.
        replicated: a :class:`pyhooks.estimators.distributed.ReplicatedTraining` for
            a training graph under a strategy, else None.
        custom: whether ``build`` is a ``model_fn``'s (its loss is scaled across replicas).
        steps_per_execution: a training graph's steps per session call (see
            :func:`build_steps_loop`).
        held: whether the input is held in the session (``HeldInput``), else read through
            tf.data (``StreamedInput``); see :func:`pyhooks.estimators.pipeline.reads_held`.
        keep_checkpoint_every_n_hours: one more checkpoint kept every this many hours.
    """

    signature: tuple
    build: Callable
    model_dir: str
    seed: Any = None
    keep_checkpoint_max: int = 5
    session_config: Any = None
    replicated: Any = None
    custom: bool = False
    steps_per_execution: int = 1
    held: bool = False
    keep_checkpoint_every_n_hours: float = 10000


class ModelTensors:
    """What a model's build sets: the tensors and hooks the loops of its mode use."""

    replicated = False  # a replica's build (its step is counted once, for all)
    skips_nonfinite = False  # whether a step whose loss is not finite updates nothing

    def __init__(self, global_step, global_step_read):
        self.global_step = global_step
        self.global_step_read = global_step_read
        self.model_variables = []
        self.predictions = self.per_example_loss = self.training_loss = None
        self.train_op = self.fetches = None
        self.metric_values = self.metric_update = self.metric_reset = None
        self.spec_hooks = []  # a model_fn's estimator_spec() hooks for this mode


@contextlib.contextmanager
def _resource_variables(v1, wanted):
    """With ``wanted``, the default graph's variables are resource variables whatever
    TensorFlow 1's switches say: a steps loop's body updates the variables it captures,
    which reference variables cannot be there."""
    if not wanted:
        yield
        return
    with v1.variable_scope(v1.get_variable_scope(), use_resource=True):
        yield


def global_step_read(tf, global_step):
    """The tensor that reads ``global_step`` (what ``session.run(global_step)`` fetches).

    A resource variable's read tensor; for TensorFlow 1's reference variables
    (``tf.compat.v1.disable_resource_variables()``) a snapshot of the value, so
    that an increment ordered after it never shows in it.
    """
    read = tf.compat.v1.get_default_graph().as_graph_element(global_step)
    if read.dtype != read.dtype.base_dtype:  # a reference (int64_ref): read it
        read = global_step.read_value()
    return read


class GraphState(ModelTensors):
    """One mode's graph, session, input pipeline and the tensors the loop runs."""

    def __init__(self, spec, mode):
        tf = import_tensorflow()
        v1 = tf.compat.v1
        self.mode = mode
        self.model_dir = spec.model_dir
        self.can_recover = spec.replicated is None
        self.callables = {}  # the kept session's callables (kept_session.KeptSession)
        self.synced_checkpoint = self.synced_stamp = None
        plan = spec.signature[-1] if isinstance(spec.signature, tuple) and spec.signature \
            else None  # (mode, plan) of files or of a tf.data input_fn
        # a tf.data input_fn's dataset is already in the graph it was called in
        self.graph = graph = plan.graph if isinstance(plan, DatasetPlan) else tf.Graph()
        loop = mode == TRAIN and spec.steps_per_execution > 1
        with graph.as_default(), _resource_variables(v1, loop):
            if spec.seed is not None:
                v1.set_random_seed(spec.seed)
            if spec.replicated is None:
                step = v1.train.get_or_create_global_step()
            else:  # mirrored, as a model_fn's minimize(global_step=) needs under a strategy
                with spec.replicated.strategy.scope():
                    step = v1.train.get_or_create_global_step()
            super().__init__(step, global_step_read(tf, step))
            from tensorflow.python.training import training_util  # hooks' global_step_read()

            graph.add_to_collection(training_util.GLOBAL_STEP_READ_KEY, self.global_step_read)
            with tf.name_scope("input"):
                if isinstance(plan, FilePlan):
                    self.pipeline = FilePipeline(tf, plan)
                elif isinstance(plan, DatasetPlan):
                    self.pipeline = DatasetPipeline(tf, plan)
                else:
                    self.pipeline = (HeldInput if spec.held else StreamedInput)(tf,
                                                                                spec.signature)
            self.last_step = None  # a steps loop's bound (see set_last_step)
            if loop:
                build_steps_loop(self, tf, spec, self.pipeline)
            else:
                self._build_model(tf, spec, mode, self.pipeline.batch)
            self.summary_op = None
            if mode == TRAIN:  # for TensorBoard: the loss and the model's own summaries
                v1.summary.scalar("loss", self.training_loss)
                self.summary_op = v1.summary.merge_all()
                graph.add_to_collection(v1.GraphKeys.SUMMARY_OP, self.summary_op)
            variables = v1.global_variables() if mode == TRAIN else self.model_variables
            self.saver = v1.train.Saver(var_list=saved_variables(tf, variables),
                                        max_to_keep=spec.keep_checkpoint_max, allow_empty=True,
                                        keep_checkpoint_every_n_hours=(
                                            spec.keep_checkpoint_every_n_hours),
                                        save_relative_paths=True)
            v1.add_to_collection(v1.GraphKeys.SAVERS, self.saver)
            self.init_op = tf.group(v1.global_variables_initializer(),
                                    v1.local_variables_initializer(), v1.tables_initializer())
        graph.finalize()
        target, config = ("", spec.session_config) if spec.replicated is None else \
            spec.replicated.session_args(spec.session_config)
        self.session = v1.Session(target, graph=graph, config=config)
        self.session.run(self.init_op)
        self.sync()

    def _build_model(self, tf, spec, mode, batch):
        if spec.replicated is None:
            spec.build(self, tf, mode, batch)
        else:  # once per replica (pyhooks/estimators/distributed.py)
            spec.replicated.build(self, tf, lambda replica, part: spec.build(replica, tf, mode,
                                                                             part),
                                  batch, custom=spec.custom)

    # -- checkpoints
    def _index_stamp(self):
        try:
            info = os.stat(os.path.join(self.model_dir, "checkpoint"))
        except OSError:
            return None
        return (info.st_mtime_ns, info.st_size, info.st_ino)

    def sync(self):
        """Restores the latest checkpoint of ``model_dir`` if this session has not seen it.

        The ``checkpoint`` index file is parsed only when its stat changed since
        this session last saved or restored.
        """
        stamp = self._index_stamp()
        if stamp is not None and stamp == self.synced_stamp:
            return
        # strict: a garbage or dangling index is an error, never "no checkpoint"
        latest = _model_dir.latest_checkpoint(self.model_dir)
        if latest is None:
            if self.synced_checkpoint is not None:  # discarded after a failed call
                self.session.run(self.init_op)
                self.synced_checkpoint = None
            return
        if latest != self.synced_checkpoint:
            self._restore_latest(latest)
            self.synced_checkpoint = latest
        self.synced_stamp = stamp
        if self.mode == TRAIN:  # max_to_keep counts the checkpoints of earlier processes
            _model_dir.recover_saver(self.saver, self.model_dir)

    def _restore_latest(self, latest):
        tf = import_tensorflow()
        with self.graph.as_default(), quiet():
            try:
                self.saver.restore(self.session, latest)
            except tf.errors.OpError as error:
                damaged = _model_dir.checkpoint_files_error(self.model_dir, latest, error)
                if damaged is not None:
                    raise damaged from error
                if not isinstance(error, (tf.errors.NotFoundError,
                                          tf.errors.InvalidArgumentError)):
                    raise
                detail = str(error).strip().splitlines()[0]
                name = os.path.basename(latest)
                raise ValueError(
                    f"model_dir {self.model_dir!r} holds a checkpoint ({name}) of a "
                    f"different model (other columns, sizes or optimizer): {detail}"
                ) from error

    def restore(self, checkpoint_path):
        """Restores ``checkpoint_path`` (None: keep the latest); the next call syncs again."""
        if checkpoint_path is None:
            return
        if not isinstance(checkpoint_path, (str, os.PathLike)) or not \
                os.path.exists(os.fspath(checkpoint_path) + ".index"):
            raise ValueError(f"`checkpoint_path` {checkpoint_path!r} is not a checkpoint (e.g. "
                             "latest_checkpoint()).")
        with self.graph.as_default(), quiet():
            self.saver.restore(self.session, os.fspath(checkpoint_path))
        self.synced_checkpoint = os.fspath(checkpoint_path)
        self.synced_stamp = None  # the next call restores the latest one again

    def discard(self):
        """Forgets the session's variables: the next call restores the latest checkpoint.

        After a failed ``train()`` (NaN loss, an error in a hook, Ctrl-C) the model
        is what the last checkpoint holds, as with ``tf.estimator``.
        """
        self.synced_stamp = None
        self.synced_checkpoint = "<discarded>"

    def saved(self, checkpoint):
        """Records that ``checkpoint`` (of this session's variables) was just written."""
        self.synced_checkpoint = checkpoint
        self.synced_stamp = self._index_stamp()

    def save(self, step):
        tf = import_tensorflow()
        path = os.path.join(self.model_dir, "model.ckpt")
        with self.graph.as_default():
            try:
                checkpoint = self.saver.save(self.session, path, global_step=step,
                                             write_meta_graph=False)
            except (tf.errors.OpError, OSError) as error:
                found = _model_dir.disk_error(f"the checkpoint of step {step}", self.model_dir,
                                              error)
                if found is None:
                    raise
                raise found from error
        self.saved(checkpoint)
        return checkpoint

    # -- the loop
    def step(self):
        return int(self.session.run(self.global_step_read))

    def start_input(self, feeds, input_fn, training, epochs=None):
        self.pipeline.start(self.session, feeds, input_fn, training, epochs)

    def set_last_step(self, step):
        """A steps loop's calls stop at ``step`` (the last call runs fewer steps)."""
        if self.last_step is not None:
            assign, value = self.set_last_step_op
            self.session.run(assign, {value: step})

    def run_loop(self, hooks, fetches, collect=None):
        """Runs ``fetches`` under ``pyhooks.MonitoredSession`` until a hook stops or input ends;
        returns ``(input exhausted, the hook that requested the stop or None)``."""
        if isinstance(self.pipeline, FilePipeline):  # a refused value names its file and row
            with self.pipeline.errors():
                return run_loop(self, hooks, fetches, collect)
        return run_loop(self, hooks, fetches, collect)

    def close(self):
        self.session.close()


# --------------------------------------------------------------------------- steps loop
def build_steps_loop(state, tf, spec, pipeline):
    """A training graph whose train op runs up to ``spec.steps_per_execution`` steps.

    Keras' ``steps_per_execution`` in graph mode: the model is built once, as
    the body of a ``tf.while_loop`` that takes its own batch from the input
    iterator at each turn, so one session call runs several steps without
    coming back to Python. A call runs ``min(steps_per_execution, last_step -
    global step)`` steps, ``last_step`` being a local variable that ``train()``
    sets (:meth:`GraphState.set_last_step`): the call that reaches the end of
    ``train(steps=)`` runs fewer steps. What the hooks fetch (the ``losses``
    collections, the training loss, the summaries) is the last step's of the
    call; the global step read is the one before the call, as in a one-step
    graph; hooks learn the steps per call from ``pyhooks.RunInfo.steps_per_run``.
    The input running out inside a call ends the call with ``OutOfRangeError``
    (its steps are done and counted, their losses not seen by hooks); held
    input readies a call's batches before its loop (``pipeline.steps``), which
    then runs at most the batches left, and the next call raises:
    ``train()`` bounds ``last_step`` by the input's batches.
    """
    v1 = tf.compat.v1
    steps = spec.steps_per_execution
    state.last_step = v1.Variable(tf.constant(2**62, tf.int64), trainable=False,
                                  collections=[v1.GraphKeys.LOCAL_VARIABLES],
                                  name="steps_loop_last_step")
    value = v1.placeholder(tf.int64, [], name="steps_loop_last_step_value")
    state.set_last_step_op = (state.last_step.assign(value, read_value=False), value)
    with tf.control_dependencies([state.global_step_read]):
        first = tf.identity(state.global_step_read)
        count = tf.minimum(tf.constant(steps, tf.int64), state.last_step.read_value() - first)
    count, ready = pipeline.steps(count)  # the input's batches for them, readied once a call
    if ready is not None:
        with tf.control_dependencies([ready]):
            count = tf.identity(count)
    body_state = []

    def body(i, per_example, loss):
        turn = ModelTensors(state.global_step, state.global_step.read_value())
        spec.build(turn, tf, TRAIN, pipeline.next_batch(ready=True))
        body_state.append(turn)
        with tf.control_dependencies([turn.train_op]):
            return i + 1, tf.identity(turn.per_example_loss), tf.identity(turn.training_loss)

    empty = tf.zeros([0], tf.float32)
    _, per_example, loss = tf.while_loop(
        lambda i, *_: i < count, body, (tf.constant(0, tf.int64), empty, tf.constant(0.0)),
        shape_invariants=(tf.TensorShape([]), tf.TensorShape([None]), tf.TensorShape([])),
        maximum_iterations=steps, name="steps_loop")
    turn = body_state[-1]
    state.model_variables = v1.global_variables()
    state.skips_nonfinite = turn.skips_nonfinite
    graph = v1.get_default_graph()
    for key, value in ((v1.GraphKeys.LOSSES, per_example), (TRAINING_LOSS_COLLECTION, loss)):
        graph.clear_collection(key)
        graph.add_to_collection(key, value)
    state.per_example_loss = tf.identity(per_example, name="per_example_loss")
    state.training_loss = tf.identity(loss, name="training_loss")
    state.train_op = state.fetches = tf.group(per_example, loss, name="steps_loop_train_op")
    graph.clear_collection(v1.GraphKeys.TRAIN_OP)
    v1.add_to_collection(v1.GraphKeys.TRAIN_OP, state.train_op)


# --------------------------------------------------------------------------- canned models
class FeatureBuilder:
    """What feature columns see while the graph is built: raw tensors, caches."""

    def __init__(self, tf, raw, batch=None):
        self.tf = tf
        self._raw = raw
        self._batch = batch  # the input's batch: a HeldBatch can give columns side by side
        self._ids = {}
        self._dense = {}

    def dense_block(self, columns):
        """The dense values of ``columns`` side by side (``[batch, their dimensions]``), cut at
        once from a held batch's matrix when every one is a plain numeric column (no
        ``normalizer_fn``), else None: the model joins ``dense()`` of each."""
        side_by_side = getattr(self._batch, "side_by_side", None)
        if side_by_side is None or not all(
                type(c) is NumericColumn and c.normalizer_fn is None for c in columns):
            return None
        return side_by_side([feature_name(c.key, FLOAT) for c in columns])

    def raw(self, key, kind):
        return self._raw[(key, kind)]

    def raw_as_string(self, key):
        return self._raw[(key, STR_OR_INT)]

    def ids(self, column):
        found = self._ids.get(id(column))
        if found is None:
            found = self._ids[id(column)] = column.ids(self)
        return found

    def dense(self, column):
        found = self._dense.get(id(column))
        if found is None:
            found = self._dense[id(column)] = column.dense(self)
        return found

    transform = dense

    def variable(self, name, shape, initializer, trainable=True):
        return self.tf.compat.v1.get_variable(name, shape, initializer=initializer,
                                              trainable=trainable)


def canned_build(model, head, optimizer, raw_inputs):
    """``build(target, tf, mode, batch)`` of a canned model and head (see :class:`GraphSpec`)."""

    def build(target, tf, mode, batch):
        v1 = tf.compat.v1
        builder = FeatureBuilder(tf, {(key, kind): batch[feature_name(key, kind)]
                                      for key, kind in raw_inputs}, batch)
        logits = model.logits(tf, builder, head.logits_dimension, mode == TRAIN)
        target.model_variables = v1.global_variables()
        if mode == PREDICT:
            target.predictions = head.predictions(tf, logits)
            return
        labels, weights = batch[LABEL], batch.get(WEIGHT)
        unweighted = head.unweighted_loss(tf, labels, logits)
        per_example = unweighted if weights is None else unweighted * weights
        per_example = tf.identity(per_example, name="per_example_loss")
        training_loss = tf.reduce_sum(per_example, name="training_loss")
        v1.add_to_collection(v1.GraphKeys.LOSSES, per_example)
        v1.add_to_collection(TRAINING_LOSS_COLLECTION, training_loss)
        target.per_example_loss, target.training_loss = per_example, training_loss
        if mode == TRAIN:
            _canned_train_op(target, tf, model, optimizer, training_loss)
        else:
            _canned_metrics(target, tf, head, labels, logits, unweighted, weights, training_loss)

    return build


def _canned_train_op(target, tf, model, optimizer, training_loss):
    """The update and the step's count; a batch whose loss is not finite changes nothing.

    Its gradient is zero and it is not counted (:func:`pyhooks.estimators.models.minimize`):
    the weights stay the last good step's (which a save after NaN then writes) where
    applying it would spoil them. Not under a strategy, whose replicas update together.
    """
    v1 = tf.compat.v1
    finite = None if target.replicated else tf.reduce_all(tf.math.is_finite(training_loss),
                                                          name="loss_is_finite")
    if hasattr(model, "minimize"):  # several optimizers (wide & deep)
        update = model.minimize(tf, training_loss, finite)
    else:
        update = minimize(tf, make_optimizer(tf, optimizer, model.default_learning_rate),
                          training_loss, v1.trainable_variables(), finite)
    if target.replicated:  # the step is counted once, after all replicas
        target.train_op = update
        return
    with tf.control_dependencies([update, target.global_step_read]):
        target.train_op = target.global_step.assign_add(tf.cast(finite, tf.int64),
                                                         read_value=False)
    target.skips_nonfinite = True
    v1.add_to_collection(v1.GraphKeys.TRAIN_OP, target.train_op)
    target.fetches = target.train_op


def _canned_metrics(target, tf, head, labels, logits, unweighted, weights, training_loss):
    v1 = tf.compat.v1
    with v1.variable_scope("metrics"):
        metrics = head.metrics(tf, labels, logits, unweighted, weights, training_loss)
    target.metric_values = {name: value for name, (value, _) in metrics.items()}
    target.metric_update = tf.group(*[update for _, update in metrics.values()])
    target.metric_reset = v1.variables_initializer(
        v1.get_collection(v1.GraphKeys.METRIC_VARIABLES))
    target.fetches = target.metric_update
