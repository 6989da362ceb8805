"""The estimator: ``train()`` / ``evaluate()`` / ``predict()`` with hooks, fast when called again.

R users call ``train()`` many times on one model. An :class:`Estimator` keeps one
graph and session per mode (:mod:`pyhooks.estimators.graph`), converts each
input's columns for its model once (then caches them), checks every input
against the data contract recorded in its model_dir
(:mod:`pyhooks.estimators.schema`), and runs the loop of each call under
:class:`pyhooks.MonitoredSession` with the caller's hooks and
:func:`pyhooks.estimators.own_hooks.default_hooks`. What the hooks need from the call (the steps it means to
run, its saving listeners) they read from :func:`pyhooks.run_info`; the
estimator never changes a hook it did not create.
"""

from __future__ import annotations

import os
import weakref

import numpy as np

from pyhooks.errors import NanLossDuringTrainingError
from pyhooks.estimators._quiet import import_tensorflow, native_stderr_filtered, quiet
from pyhooks.estimators.config import RunConfig, check_session_config
from pyhooks.estimators.dataset_input import DatasetPlan
from pyhooks.estimators.distributed import ReplicatedTraining
from pyhooks.estimators.export import export_savedmodel
from pyhooks.estimators.feature_columns import FLOAT, INT, STR, STR_OR_INT
from pyhooks.estimators.file_pipeline import FilePlan, file_plan, label_plan
from pyhooks.estimators.files import FileInput
from pyhooks.estimators.graph import GraphSpec, GraphState, canned_build
from pyhooks.estimators.inputs import check_input_fn, one_column
from pyhooks.estimators.modes import EVAL, LABEL, PREDICT, TRAIN, WEIGHT, feature_name
from pyhooks.estimators.own_hooks import StopAfterNRuns, default_hooks
from pyhooks.estimators.pipeline import (Coded, aligned, as_float32, coded, convert, reads_held,
                                         signature_of)
from pyhooks.estimators.schema import Schema
from pyhooks.estimators.stopping import StopReason, stop_reason
from pyhooks.estimators.tensorboard import write_metrics
from pyhooks.hook import RunInfo, check_hooks
from pyhooks.hooks import _model_dir
from pyhooks.hooks._hook_state import HookState
from pyhooks.hooks.checkpoint_saver import CheckpointSaverHook
from pyhooks.hooks.history_saver import History, HistorySaverHook
from pyhooks.hooks.stop_at_step import StopAtStepHook
from pyhooks.timer import check_positive

__all__ = ["Estimator"]

KIND_DTYPES = {FLOAT: "float32", INT: "int64", STR: "string", STR_OR_INT: "string"}


def _steps(name, value):
    return check_positive(name, value, integer=True)


class Estimator:
    """A canned estimator (see :func:`pyhooks.linear_regressor` & co.).

    Attributes:
        model_dir: where checkpoints are kept (a temporary directory if none was given).
    """

    def __init__(self, model, head, model_dir=None, weight_column=None, optimizer="Ftrl",
                 session_config=None, seed=None, name="Estimator", config=None):
        if config is not None and not isinstance(config, RunConfig):
            raise TypeError(f"`config` must be made by run_config(), got {config!r}.")
        self.config = config = config or RunConfig()
        if model_dir is None:
            model_dir = config.model_dir
        if session_config is None:
            session_config = config.session_config
        check_session_config(session_config)
        if seed is None:
            seed = config.tf_random_seed
        self._model = model
        self._head = head
        self._optimizer = optimizer
        if weight_column is not None and (not isinstance(weight_column, str) or not weight_column):
            raise TypeError(f"`weight_column` must be a column name or None, got "
                            f"{weight_column!r}.")
        self._weight_column = weight_column
        self.model_dir = _model_dir.make_model_dir(model_dir)
        self._session_config = session_config
        self._checkpoint_dir = self.model_dir
        self._replicated = None
        if config.train_distribute is not None:  # a non-chief worker writes in its own dir
            self._replicated = ReplicatedTraining(config.train_distribute)
            self.model_dir = self._replicated.own_dir(self.model_dir)
            os.makedirs(self.model_dir, exist_ok=True)
        self._seed = None if seed is None else check_positive("seed", seed, integer=True,
                                                              allow_zero=True)
        self._name = name
        raw = {}
        for column in model.columns if model is not None else ():
            for key, kind in column.raw_inputs():
                raw.setdefault((key, kind), []).append(column)
        self._raw_inputs = sorted(raw)
        self._raw_users = raw
        self._states = {}
        self._prepared = weakref.WeakKeyDictionary()
        self._schema = None
        self._training = False
        self.last_stop = None  # the StopReason of the last train()

    def __repr__(self):
        names = ", ".join(c.name for c in self._model.columns)
        return f"<pyhooks {self._name}: columns [{names}], model_dir={self.model_dir!r}>"

    # -- the graphs
    custom_model = False  # whether model_builder() is a model_fn's (its loss scaled by replicas)

    def _graph_spec(self, mode, signature, held=False):
        """The :class:`GraphSpec` of ``mode``'s graph for inputs of ``signature`` (``held``: in
        the session)."""
        replicated = self._replicated if mode == TRAIN else None
        if self.custom_model and self.config.steps_per_execution > 1:
            raise ValueError(f"`steps_per_execution` = {self.config.steps_per_execution!r}: only "
                             "the canned estimators run several steps per call (give 1).")
        return GraphSpec(signature, self.model_builder(), self._checkpoint_dir, self._seed,
                         self.config.keep_checkpoint_max, self._session_config, replicated,
                         custom=self.custom_model,
                         steps_per_execution=self.config.steps_per_execution, held=held,
                         keep_checkpoint_every_n_hours=self.config.keep_checkpoint_every_n_hours)

    def model_builder(self):
        """``build(target, tf, mode, batch)`` of this estimator's model (see ``GraphSpec``)."""
        return canned_build(self._model, self._head, self._optimizer, self._raw_inputs)

    def _graph_key(self, mode, signature):
        """What a graph is kept under: canned models have one graph per mode."""
        return mode

    def _state(self, mode, feeds, input_fn, epochs=None):
        """The graph of ``mode`` for ``input_fn`` (its ``feeds``), made on first use: one per
        way of reading the input (held in the session or through tf.data; files: per
        layout)."""
        if isinstance(feeds, DatasetPlan):  # a tf.data input_fn: a new graph for each call
            signature, held = (mode, feeds), False  # (its dataset's); the last one kept
            key = ((mode, "tf.data"), held)
            if key in self._states:
                self._states.pop(key).close()
        elif isinstance(feeds, FilePlan):  # files: a graph per layout of the files
            signature, held = (mode, feeds), False
            key = (signature, held)
        else:
            signature = signature_of(feeds)
            held = reads_held(feeds, input_fn, mode == TRAIN, epochs)
            key = (self._graph_key(mode, signature), held)
        state = self._states.get(key)
        if state is None:
            with quiet(), native_stderr_filtered():
                state = self._states[key] = GraphState(
                    self._graph_spec(mode, signature, held), mode)
        else:
            state.sync()
        return state

    # -- the data
    def _input(self, input_fn):
        """``input_fn`` as this estimator reads it (a custom estimator also takes functions
        returning a tf.data.Dataset)."""
        return input_fn

    def _read_features(self, input_fn):
        """The input columns the model reads (what the schema records)."""
        return sorted({key for key, _ in self._raw_inputs})

    def _contract(self, input_fn, mode):
        """The data contract ``input_fn`` is held to, and whether this call records it.

        The one recorded in model_dir; at a ``train()`` into a model_dir that has
        none yet, this input's (saved once training starts).
        """
        schema = self._loaded_schema()
        if schema is not None:
            return schema, False
        if mode != TRAIN:
            return None, False
        self._check_inputs_given(input_fn)
        return self._record_schema(input_fn), True

    def _record_schema(self, input_fn):
        """The data contract of ``input_fn``, recorded at the first ``train()``."""
        return Schema.record(input_fn, self._read_features(input_fn))

    def _check_inputs_given(self, input_fn):
        """A ValueError naming the feature column whose input column is not a feature of
        ``input_fn``."""
        for (key, _), users in self._raw_users.items():
            if key not in input_fn.columns or key not in input_fn.features:
                why = ("the input's response, not one of its features; its features are"
                       if key in input_fn.response else "not one of the input's features")
                raise ValueError(f"Feature column {users[0].name!r} needs the input column "
                                 f"{key!r}, which is {why}: {', '.join(input_fn.features)}.")

    def _feeds(self, input_fn, mode):
        """The numpy arrays this estimator feeds for ``input_fn``, and the schema it follows.

        Checked against the data contract and converted once per input and
        contract, then cached.
        """
        check_input_fn(input_fn)
        schema, new = self._contract(input_fn, mode)
        labelled = mode != PREDICT
        if labelled and not input_fn.response:
            raise ValueError(f"{'train' if mode == TRAIN else 'evaluate'}() needs labels: "
                             "give `response` to input_fn().")
        cache = self._prepared.setdefault(input_fn, {})
        found = cache.get(labelled)
        if found is None or found[0] is not schema:
            if schema is not None and not new:
                schema.check(input_fn, labelled)
            feeds = self._make_feeds(input_fn, labelled, schema)
            if isinstance(input_fn, FileInput):  # the sample's feeds: what the stream makes
                feeds = file_plan(input_fn, feeds, self._file_labels(input_fn, feeds, schema)
                                  if LABEL in feeds else None, self._weight_column)
            found = cache[labelled] = (schema, feeds)
        return found[1], (schema if new else None)

    def _file_labels(self, input_fn, feeds, schema):
        """How a file input's labels are made (see ``file_pipeline.label_plan``)."""
        n_classes = getattr(self._head, "n_classes", None)
        if n_classes is None:  # a regressor: the response columns side by side
            return label_plan(input_fn, feeds[LABEL], stack=True)
        if input_fn.columns[input_fn.response[0]].dtype.kind == "U":
            return label_plan(input_fn, feeds[LABEL], labels=self._head.label_vocabulary
                              or _levels(schema, input_fn))
        return label_plan(input_fn, feeds[LABEL], n_classes=n_classes)

    def _make_feeds(self, input_fn, labelled, schema):
        """The feeds of ``input_fn`` for the feature columns (see ``_feeds``)."""
        columns = input_fn.columns
        feeds = {}
        self._check_inputs_given(input_fn)
        for (key, kind), users in self._raw_users.items():
            values = convert(key, one_column(columns[key]), kind, users[0])
            per_example = int(np.prod(values.shape[1:]))
            for column in users:
                if column.input_dimension(key) != per_example:
                    raise ValueError(
                        f"Feature column {column.name!r} reads {column.input_dimension(key)} "
                        f"value(s) per example from input column {key!r}, which holds "
                        f"{per_example}: its `shape` must match the data"
                        + (" (give column_numeric() its `shape`)." if per_example > 1 else "."))
                column.check_data(key, values)
            if kind in (STR, STR_OR_INT):
                values = as_coded(values, input_fn.factors.get(key))
            feeds[feature_name(key, kind)] = values
        if labelled:
            feeds[LABEL] = aligned(self._head.labels(input_fn, _levels(schema, input_fn)))
            if self._weight_column is not None:
                feeds[WEIGHT] = self._weights(input_fn)
        return feeds

    def _weights(self, input_fn):
        name = self._weight_column
        if name not in input_fn.columns:
            raise ValueError(f"weight_column {name!r} is not a column of the input; it "
                             f"has: {', '.join(input_fn.features)}.")
        weights = one_column(input_fn.columns[name])
        if weights.dtype.kind not in "biuf" or weights.ndim != 1:
            raise TypeError(f"weight_column {name!r} must be numeric, one value per row.")
        if (weights < 0).any():
            raise ValueError(f"weight_column {name!r} must not be negative.")
        return as_float32(f"weight_column {name!r}", weights, "the model")

    def class_names(self):
        """The names of a classifier's classes (its ``classes`` predictions), or None."""
        return self._head.class_names(self._schema_levels())

    def _schema_levels(self):
        schema = self._loaded_schema()
        return None if schema is None else schema.response_levels

    def _loaded_schema(self):
        """The data contract recorded by the first ``train()``, or None before one."""
        if self._schema is None:
            self._schema = Schema.load(self._checkpoint_dir)
        return self._schema

    # -- public API
    def train(self, input_fn, steps=None, hooks=None, max_steps=None, saving_listeners=None,
              chief_only_hooks=None):
        """Trains the model on ``input_fn``, continuing from the last global step.

        Args:
            input_fn: an :func:`input_fn` with a ``response``.
            steps: train this many more steps (or until the input is exhausted).
            hooks: a list of :class:`pyhooks.SessionRunHook`. A ``NanTensorHook``, a
                ``HistorySaverHook`` and a ``ProgressBarHook`` are added unless
                ``hooks`` has one of that kind (see :func:`pyhooks.estimators.own_hooks.default_hooks`); a
                ``ProgressBarHook`` without a ``total`` shows the steps of the call.
            max_steps: train until the global step reaches this (exclusive with ``steps``).
            saving_listeners: ``CheckpointSaverListener`` objects, called around the
                checkpoint saves of the loop's ``CheckpointSaverHook`` (the caller's, or
                one added: as often as the ``run_config()`` says, every 600 s by
                default, and at the end), through :func:`pyhooks.run_info` (followed
                there by the estimator's own, which saves the hooks' state).
            chief_only_hooks: hooks run only on the chief worker under a
                multi-worker ``train_distribute`` strategy (always without one), after
                ``hooks``.

        Returns:
            the :class:`pyhooks.hooks.History` recorded by the ``HistorySaverHook``; its
            ``stop`` says why the call stopped (a
            :class:`pyhooks.estimators.stopping.StopReason`: steps reached, input
            exhausted, a hook's request, a loss not finite, an interrupt, an error).
            An exception raised by ``train()`` carries the same as ``error.pyhooks_stop``,
            and ``estimator.last_stop`` keeps that of the last call.

        Hook state resumes with the model: the state of hooks that define
        ``state_dict()`` and ``load_state_dict()`` (``HistorySaverHook``'s rows, the
        progress bar's and ``LoggingTensorHook``'s counts, your own hooks') is saved
        beside each checkpoint as ``hooks-<step>.json``; a call that resumes from the
        checkpoint of an interrupted one (killed, Ctrl-C, an error) loads it, so its
        history holds the rows of both (``History.runs`` tells them apart) and no row
        twice. After a call that ended normally the next starts the hooks afresh.
        See :mod:`pyhooks.hooks._hook_state` for the protocol and its keys.

        The first ``train()`` into a model_dir records what the model is trained
        on (:mod:`pyhooks.estimators.schema`); every later call's input is checked
        against it. Only one ``train()`` at a time may write to ``model_dir`` (a
        ``flock`` on ``model_dir/.pyhooks-train.lock``, freed when the process ends
        however it ends). At the start, the temporary files of a save that a crash
        interrupted are removed.

        Nothing trained is lost: checkpoints are saved every 600 seconds (or as the
        ``run_config()`` says) and when the call ends, however it ends (its steps,
        the input exhausted, a hook's stop, an error in a hook, Ctrl-C: the error is
        raised after the save); the next ``train()`` resumes from there. A batch
        whose loss is not finite (NaN, ±Inf) updates nothing in a canned model, so
        what is saved after it is the last good step; a ``model_fn``'s own train op
        cannot be held back, so after such a loss its weights are not saved, and
        the model is what the latest checkpoint holds.

        Raises:
            ValueError: both ``steps`` and ``max_steps``, non-positive steps, input
                that repeats forever with neither, or input that breaks the model's
                data contract (a TypeError for a column of another kind).
            pyhooks.ModelDirLockedError: another process or loop trains into
                ``model_dir``; RuntimeError: called from a hook of this estimator's
                own ``train()``.
            pyhooks.CheckpointError: a damaged checkpoint, or a garbage or dangling
                ``checkpoint`` index.
        """
        input_fn = self._input(input_fn)
        if self._replicated is None:
            return self._train(input_fn, steps, hooks, max_steps, saving_listeners,
                               chief_only_hooks)
        with self._replicated.failures():  # told to the other workers, naming this one
            return self._train(input_fn, steps, hooks, max_steps, saving_listeners,
                               chief_only_hooks)

    def _train(self, input_fn, steps, hooks, max_steps, saving_listeners, chief_only_hooks):
        if steps is not None and max_steps is not None:
            raise ValueError("Can not provide both steps and max_steps.")
        if steps is not None:
            steps = _steps("steps", steps)
            if steps <= 0:
                raise ValueError(f"Must specify steps > 0, given: {steps}")
        if max_steps is not None:
            max_steps = _steps("max_steps", max_steps)
            if max_steps <= 0:
                raise ValueError(f"Must specify max_steps > 0, given: {max_steps}")
        hooks = check_hooks(hooks)
        chief_only = check_hooks(chief_only_hooks, "chief_only_hooks")
        if self._replicated is None or self._replicated.is_chief:
            hooks += chief_only
        listeners = list(saving_listeners or [])
        for i, listener in enumerate(listeners):
            if not callable(getattr(listener, "after_save", None)):
                raise TypeError(f"`saving_listeners[{i}]` must be a CheckpointSaverListener, "
                                f"got {listener!r}.")
        feeds, new_schema = self._feeds(input_fn, TRAIN)
        if steps is None and max_steps is None and input_fn.num_epochs is None:
            raise ValueError(f"Training would never end: the input repeats forever "
                             f"({input_fn.repeats_forever}) and neither `steps` nor "
                             "`max_steps` is given.")
        if self._training:
            raise RuntimeError(
                f"train() of {self._name} was called again from inside its own train() (from "
                "a hook?): the two loops would interleave their steps. Train after it returns.")
        lock = _model_dir.TrainingLock(self.model_dir).acquire()
        self._training = True
        try:
            _model_dir.check_writable(self.model_dir, "the model's checkpoints")
            if new_schema is not None and self._is_chief():
                new_schema.save(self._checkpoint_dir)
            self._schema = new_schema or self._schema
            return self._train_locked(input_fn, feeds, steps, max_steps, hooks, listeners)
        finally:
            self._training = False
            lock.release()

    def _is_chief(self):
        return self._replicated is None or self._replicated.is_chief

    def _train_locked(self, input_fn, feeds, steps, max_steps, hooks, listeners):
        """``train()`` while holding ``model_dir``'s training lock."""
        _model_dir.remove_partial_saves(self.model_dir)  # of a save a crash interrupted
        state = self._state(TRAIN, feeds, input_fn)
        start = state.step()
        if max_steps is not None and start >= max_steps:  # nothing to do: the caller's history
            history = next((h.history for h in hooks if isinstance(h, HistorySaverHook)),
                           None) or History()
            history.stop = self.last_stop = StopReason("steps", start)
            return history
        total = steps if steps is not None else (
            max_steps - start if max_steps is not None else input_fn.steps_per_run())
        if input_fn.num_epochs is not None and input_fn.steps_per_run() is not None:
            total = min(total, input_fn.steps_per_run())
        if self._replicated is not None:
            self._replicated.check_steps(input_fn, steps, max_steps, start)
        extra, history = default_hooks(hooks, state, self.config, self.model_dir, steps,
                                       max_steps)
        epochs_stop = None  # the stop at the last batch of a steps loop's epochs: their end
        if total is not None and state.last_step is not None:
            # a steps loop's last call runs what is left; a call after it would run none,
            # where the input running out would have ended a one-step loop
            state.set_last_step(start + total)
            if steps is None and max_steps is None:
                epochs_stop = StopAtStepHook(last_step=start + total)
                extra.append(epochs_stop)
        loop = hooks + extra + state.spec_hooks
        resumed = HookState(self.model_dir, loop, start, write=self._is_chief())
        loop.append(resumed)  # its begin() after every other hook's: their state loaded
        own_stop = extra[0] if extra and isinstance(extra[0], StopAtStepHook) else None
        state.start_input(feeds, input_fn, training=True)
        # the hooks' RunInfo: a progress bar shows `total`, checkpoint savers call `listeners`
        with RunInfo(steps=total, saving_listeners=[*listeners, resumed.listener], mode=TRAIN,
                     steps_per_run=self.config.steps_per_execution):
            try:
                if self._replicated is None:
                    ended = state.run_loop(loop, state.fetches)
                else:  # the workers' stop agreement last (it sees every stop request)
                    replicated = self._replicated
                    agreement = replicated.hooks(state, self.config.agree_every_n_steps, loop)
                    # hooks' files in the worker's own place; a step left waiting for a failed
                    # peer is ended
                    with replicated.scope(), replicated.watching(state.session):
                        ended = state.run_loop(replicated.first_hooks(state) + loop + agreement,
                                               state.fetches)
            except BaseException as error:
                self.last_stop = stop_reason(_step_or(state, start), error=error)
                _keep(error, "pyhooks_stop", self.last_stop)
                self._keep_progress(state, loop, error, resumed)
                raise
        exhausted, stopped_by = ended
        if epochs_stop is not None and stopped_by is epochs_stop:
            exhausted, stopped_by = True, None
        self.last_stop = stop_reason(state.step(), exhausted, stopped_by, own_stop=own_stop)
        self._keep_progress(state, loop)
        resumed.finish()
        history.history.stop = self.last_stop
        return history.history

    def _keep_progress(self, state, hooks, error=None, resumed=None):
        """Saves the steps the loop ran (``error``: it failed, or was interrupted).

        A canned model skips the update of a batch whose loss is not finite
        (``state.skips_nonfinite``, see :func:`pyhooks.estimators.graph.canned_build`),
        so its weights are always the last good step's; other train ops (a
        ``model_fn``'s) apply such updates, and after a loss that was not finite
        the weights are forgotten instead: the model is what the latest checkpoint
        holds. A save that fails is noted on ``error`` (which wins), or raised.
        """
        if getattr(error, "closed_session_for_peer", False):  # a peer failed: nothing to save
            state.discard()
            return
        spoiled = not state.skips_nonfinite and (
            isinstance(error, NanLossDuringTrainingError) or any(
                isinstance(h, CheckpointSaverHook) and h.diverged_at is not None for h in hooks))
        if spoiled:
            state.discard()
            return
        try:
            saved = self._save_if_needed(state)
        except Exception as secondary:
            if error is None:
                raise
            error.add_note(f"pyhooks: the checkpoint after it could not be saved: {secondary}")
            state.discard()
            return
        if resumed is not None and saved is not None:  # the hooks' state of that step
            try:
                resumed.save(state.step())
            except Exception as secondary:  # noqa: BLE001 - noted on the error, which wins
                error.add_note(f"pyhooks: the hooks' state could not be saved: "
                               f"{type(secondary).__name__}: {secondary}")

    def _save_if_needed(self, state):
        if not self._is_chief():
            return None  # checkpoints are the chief's
        step = state.step()
        latest = _model_dir.latest_checkpoint(self.model_dir)
        if latest is not None and latest.endswith(f"-{step}"):
            state.saved(latest)  # a hook saved it at its end() or after_error()
            return latest
        with quiet():
            return state.save(step)

    def evaluate(self, input_fn, steps=None, hooks=None, name=None, checkpoint_path=None):
        """Evaluates the model (as last saved by ``train()``) on ``input_fn``.

        Args:
            input_fn: an :func:`input_fn` with a ``response``; shuffled only if its
                ``shuffle`` is True. Checked against the model's data contract.
            steps: evaluate this many batches (default: until the input is exhausted).
            hooks: a list of hooks run in the evaluation loop.
            name: a name for this evaluation: its TensorBoard metrics go to
                ``model_dir/eval_<name>`` (``model_dir/eval`` without one).
            checkpoint_path: evaluate this checkpoint instead of the latest one.

        Returns:
            ``{metric: float}``: ``loss`` (the mean over batches of each batch's
            summed loss), ``average_loss`` (the mean per-example loss),
            ``global_step`` (int), and for regressors ``label/mean`` and
            ``prediction/mean``; for binary classifiers also ``accuracy``,
            ``accuracy_baseline``, ``auc``, ``auc_precision_recall``, ``precision``,
            ``recall``, ``label/mean``, ``prediction/mean``; for multi-class
            classifiers ``accuracy``.
        """
        if steps is not None:
            steps = _steps("steps", steps)
            if steps <= 0:
                raise ValueError(f"Must specify steps > 0, given: {steps}")
        if name is not None and not isinstance(name, str):
            raise TypeError(f"`name` must be a string or None, got {name!r}.")
        hooks = check_hooks(hooks)
        input_fn = self._input(input_fn)
        feeds, _ = self._feeds(input_fn, EVAL)
        if steps is None and input_fn.num_epochs is None:
            raise ValueError(f"Evaluation would never end: the input repeats forever "
                             f"({input_fn.repeats_forever}) and `steps` is not given.")
        state = self._state(EVAL, feeds, input_fn)
        state.restore(checkpoint_path)
        state.session.run(state.metric_reset)
        state.start_input(feeds, input_fn, training=False)
        extra = [] if steps is None else [StopAfterNRuns(steps)]
        with RunInfo(steps=steps or input_fn.steps_per_run(), mode=EVAL):
            state.run_loop(hooks + extra + state.spec_hooks, state.fetches)
        values = state.session.run(state.metric_values)
        results = {key: float(value) for key, value in sorted(values.items())}
        results["global_step"] = state.step()
        write_metrics(self.model_dir, name, results, results["global_step"])
        return results

    def predict(self, input_fn, hooks=None, predict_keys=None, as_dict=False,
                checkpoint_path=None):
        """Predictions for every example of ``input_fn``, in input order.

        Args:
            input_fn: an :func:`input_fn` (its ``response`` is ignored); one pass is made
                whatever ``num_epochs`` says. Checked against the model's data contract.
                An input made with ``shuffle=True`` is refused: its predictions would not
                follow the rows of the data (TensorFlow returned them shuffled).
            hooks: a list of hooks run in the prediction loop.
            predict_keys: a key or list of keys to keep (default: all). Regressors:
                ``predictions``. Classifiers: ``logits``, ``logistic`` (binary only),
                ``probabilities``, ``class_ids``, ``classes`` (the response's labels: a
                factor's levels, ``label_vocabulary``, else ``"0"``, ``"1"``...; a bool
                response is class 0 for False and 1 for True).
            checkpoint_path: predict with this checkpoint instead of the latest one.
            as_dict: False (default): a list with one ``{key: numpy array}`` per example,
                as ``tf.estimator``'s ``predict`` yields; True: one dict of arrays whose
                first dimension is the example.

        Returns:
            a list of dicts (one per example), or a dict of arrays if ``as_dict``.
        """
        hooks = check_hooks(hooks)
        input_fn = check_input_fn(self._input(input_fn))
        if input_fn.shuffles(training=False):  # refused before any data is converted
            raise ValueError("predict(): `input_fn` shuffles its rows (shuffle=True), so the "
                             "predictions would not follow the rows of the data. Make it with "
                             "shuffle='auto' (shuffles only for training) or shuffle=False.")
        feeds, _ = self._feeds(input_fn, PREDICT)
        state = self._state(PREDICT, feeds, input_fn, epochs=1)
        state.restore(checkpoint_path)
        keys = self._predict_keys(predict_keys, state)
        graph_keys = [k for k in keys if k in state.predictions]
        if "classes" in keys and "classes" not in state.predictions \
                and "class_ids" not in graph_keys:  # a canned classifier's names of class_ids
            graph_keys.append("class_ids")
        fetch = [state.predictions[k] for k in graph_keys]  # the same list objects every call
        batches = []
        state.start_input(feeds, input_fn, training=False, epochs=1)
        steps = None if input_fn.n is None else -(-input_fn.n // input_fn.batch_size)
        with RunInfo(steps=steps, mode=PREDICT):
            state.run_loop(hooks + state.spec_hooks, fetch, collect=batches.append)
        merged = {k: np.concatenate([b[i] for b in batches]) if batches
                  else np.zeros((0,), dtype=np.float32) for i, k in enumerate(graph_keys)}
        merged = self._finish_predictions(merged)
        merged = {k: merged[k] for k in keys}
        if as_dict:
            return merged
        count = len(next(iter(merged.values()))) if merged else 0
        return [{k: v[i] for k, v in merged.items()} for i in range(count)]

    def _available_keys(self, state):
        return self._head.prediction_keys

    def _finish_predictions(self, merged):
        ids = merged.get("class_ids")
        if ids is not None:
            merged["classes"] = np.asarray(self.class_names(), dtype=object)[ids]
        return merged

    def _predict_keys(self, predict_keys, state=None):
        available = self._available_keys(state)
        if predict_keys is None:
            return list(available)
        if isinstance(predict_keys, str):
            predict_keys = [predict_keys]
        keys = list(predict_keys)
        unknown = [k for k in keys if k not in available]
        if unknown or not keys:
            raise ValueError(f"`predict_keys` {predict_keys!r}: unknown key(s) {unknown}; this "
                             f"estimator predicts {list(available)}.")
        return keys

    # -- checkpoints
    def latest_checkpoint(self):
        """The path of the newest checkpoint in ``model_dir``, or None.

        Raises:
            pyhooks.CheckpointError: a garbage or dangling ``checkpoint`` index file.
        """
        import_tensorflow()
        return _model_dir.latest_checkpoint(self.model_dir)

    def get_variable_names(self):
        """Names of the variables in the latest checkpoint."""
        tf = import_tensorflow()
        path = self.latest_checkpoint()
        if path is None:
            raise ValueError(f"No checkpoint in {self.model_dir!r}: train the model first.")
        return sorted(name for name, _ in tf.train.list_variables(path))

    def get_variable_value(self, name):
        """The value of variable ``name`` in the latest checkpoint."""
        tf = import_tensorflow()
        path = self.latest_checkpoint()
        if path is None:
            raise ValueError(f"No checkpoint in {self.model_dir!r}: train the model first.")
        return tf.train.load_variable(path, name)

    def serving_inputs(self):
        """``[(input name, batch key, dtype, per-example shape)]``: what an export takes.

        One input per column the model reads (a column read as two kinds:
        ``<name>_<kind>``), one value (or a row of ``column_numeric(shape =)``) per
        example.
        """
        keys = [key for key, _ in self._raw_inputs]
        inputs = []
        for key, kind in self._raw_inputs:
            width = max(column.input_dimension(key) for column in self._raw_users[(key, kind)])
            inputs.append((key if keys.count(key) == 1 else f"{key}_{kind}",
                           feature_name(key, kind), KIND_DTYPES[kind],
                           () if width == 1 else (width,)))
        return inputs

    def export_savedmodel(self, export_dir_base, checkpoint_path=None, as_text=False):
        """A SavedModel of the predictions (see :func:`pyhooks.estimators.export.export_savedmodel`)."""
        return export_savedmodel(self, export_dir_base, checkpoint_path, as_text)

    def close(self):
        """Closes the estimator's sessions (they are re-created on next use)."""
        for state in self._states.values():
            state.close()
        self._states.clear()


def _step_or(state, default):
    """The session's global step, or ``default`` when the session cannot say (it broke)."""
    try:
        return state.step()
    except Exception:  # noqa: BLE001 - the loop's error is the one reported
        return default


def _keep(error, name, value):
    try:
        setattr(error, name, value)
    except (AttributeError, TypeError):  # exceptions with __slots__ or C types
        pass


def as_coded(values, factor):
    """A text column as :class:`~pyhooks.estimators.pipeline.Coded`: a factor's own codes, or
    codes made into its distinct values."""
    if factor is not None and all(isinstance(level, str) for level in factor.levels):
        return Coded(aligned(factor.codes), np.asarray(factor.levels, dtype=str))
    return Coded(*coded(values))


def _levels(schema, input_fn):
    """The response's levels a classifier's class ids follow: recorded, else this input's."""
    if schema is not None:
        return schema.response_levels
    if len(input_fn.response) == 1:
        factor = input_fn.factors.get(input_fn.response[0])
        return None if factor is None else factor.levels
    return None
