"""Custom estimators: a ``model_fn`` builds the model, as ``tf.estimator.Estimator(model_fn)`` did.

``estimator(model_fn)`` trains, evaluates and predicts with the same input
pipeline, sessions, checkpoints and hooks as the canned estimators. Its
``model_fn(features, labels, mode, params, config)`` is called once per mode
and kind of input (the graph is kept for later calls) and returns an
:func:`estimator_spec`:

* ``features``: a dict ``{column name: tensor}`` (a :class:`Features`): one
  tensor per feature of the :func:`input_fn`, of the column's dtype and shape
  (numbers keep theirs: ``float32`` arrays give ``float32`` tensors, R's
  numbers ``float64`` and ``int64``; an ``[n, 1]`` array ``[batch, 1]``, as
  TensorFlow gave it; text and factors ``string``). Where a tensor is
  expected (``tf.compat.v1.layers.dense(features, 10)``, R's
  ``tf$layers$dense(features, 10L)``), it stands for the matrix of all its
  numeric columns (``float64``, in the input's column order), as tfestimators
  gave custom estimators. :func:`input_layer` turns it into the dense input of
  feature columns.
* ``labels``: the response (one column: of its shape, ``[batch]`` for a
  vector; several: side by side, ``[batch, k]``; :func:`numpy_input_fn` of a
  dict ``y``: a dict of tensors, as in TensorFlow), or None when the input
  has no response. A factor response
  gives ``int64`` class ids: the positions of its labels in its levels when
  the model was first trained (matched by label, whatever the order of a later
  input's levels).
* ``mode``: ``"train"``, ``"eval"`` or ``"infer"`` (:class:`ModeKeys`).
* ``params``: the estimator's ``params``; ``config``: its :func:`run_config`.
  Each is passed only if ``model_fn`` takes an argument of that name.

Training requires ``loss`` and a ``train_op`` that increments the global step
(``optimizer.minimize(loss, global_step=tf.compat.v1.train.get_global_step())``);
evaluation ``loss`` (its mean over batches is the metric ``loss``) and
optionally ``eval_metric_ops`` (``{name: (value, update_op)}``, e.g.
``tf.compat.v1.metrics.accuracy(...)``); prediction ``predictions`` (a tensor
or a dict of tensors whose first dimension is the batch).

Example:
    >>> def model_fn(features, labels, mode, params):
    ...     v1 = tf.compat.v1
    ...     out = tf.reshape(layers.dense(features, 1), [-1])
    ...     if mode == ModeKeys.PREDICT:
    ...         return estimator_spec(mode, predictions={"mpg": out})
    ...     loss = v1.losses.mean_squared_error(labels, out)
    ...     opt = v1.train.GradientDescentOptimizer(params["learning_rate"])
    ...     train_op = opt.minimize(loss, global_step=v1.train.get_global_step())
    ...     return estimator_spec(mode, predictions={"mpg": out}, loss=loss, train_op=train_op)
    >>> model = estimator(model_fn, params={"learning_rate": 0.01})
"""

from __future__ import annotations

import inspect

import numpy as np

from pyhooks.estimators._quiet import import_tensorflow
from pyhooks.estimators.base import Estimator, as_coded
from pyhooks.estimators.config import RunConfig, run_config
from pyhooks.estimators.dataset_input import DatasetInput, as_input
from pyhooks.estimators.feature_columns import FLOAT, INT, STR, FeatureColumn
from pyhooks.estimators.file_pipeline import label_plan
from pyhooks.estimators.graph import FeatureBuilder
from pyhooks.estimators.models import check_columns
from pyhooks.estimators.modes import (LABEL, MODE_KEY, PREDICT, TRAIN, TRAINING_LOSS_COLLECTION,
                                      ModeKeys, is_label, label_key, mode_keys)
from pyhooks.estimators.pipeline import aligned
from pyhooks.estimators.schema import kind_of, label_ids
from pyhooks.hook import SessionRunHook, check_hooks

__all__ = ["CustomEstimator", "EstimatorSpec", "Features", "ModeKeys", "RunConfig", "estimator",
           "estimator_spec", "input_layer", "mode_keys", "run_config"]


# --------------------------------------------------------------------------- estimator_spec
class EstimatorSpec:
    """What a ``model_fn`` returns (see :func:`estimator_spec`)."""

    __slots__ = ("mode", "predictions", "loss", "train_op", "eval_metric_ops", "training_hooks",
                 "evaluation_hooks", "prediction_hooks")

    def __init__(self, mode, predictions=None, loss=None, train_op=None, eval_metric_ops=None,
                 training_hooks=None, evaluation_hooks=None, prediction_hooks=None):
        if mode not in (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT):
            raise ValueError(f"`mode` must be 'train', 'eval' or 'infer' (mode_keys()), got "
                             f"{mode!r}.")
        self.mode = mode
        self.predictions = predictions
        self.loss = loss
        self.train_op = train_op
        if eval_metric_ops is not None and not isinstance(eval_metric_ops, dict):
            raise TypeError("`eval_metric_ops` must be a dict {name: (value, update_op)}, got "
                            f"{eval_metric_ops!r}.")
        self.eval_metric_ops = dict(eval_metric_ops or {})
        for name, pair in self.eval_metric_ops.items():
            if not isinstance(pair, (list, tuple)) or len(pair) != 2:
                raise TypeError(f"`eval_metric_ops` {name!r} must be a (value, update_op) pair "
                                f"such as tf.compat.v1.metrics.mean() returns, got {pair!r}.")
        self.training_hooks = check_hooks(training_hooks, "training_hooks")
        self.evaluation_hooks = check_hooks(evaluation_hooks, "evaluation_hooks")
        self.prediction_hooks = check_hooks(prediction_hooks, "prediction_hooks")

    def __repr__(self):
        return f"EstimatorSpec(mode={self.mode!r}, loss={self.loss!r}, train_op={self.train_op!r})"


def estimator_spec(mode, predictions=None, loss=None, train_op=None, eval_metric_ops=None,
                   training_hooks=None, evaluation_hooks=None, prediction_hooks=None):
    """What a ``model_fn`` returns: the tensors of its mode.

    Args:
        mode: the ``mode`` the ``model_fn`` was called with.
        predictions: a tensor or a dict of tensors (first dimension: the batch);
            required for ``"infer"``.
        loss: a scalar tensor; required for ``"train"`` and ``"eval"``.
        train_op: the training op; required for ``"train"``. It must increment the
            global step (``minimize(loss, global_step=tf.compat.v1.train.get_global_step())``).
        eval_metric_ops: ``{name: (value, update_op)}``, e.g. from ``tf.compat.v1.metrics``.
        training_hooks, evaluation_hooks, prediction_hooks: hooks added to the
            loops of ``train()``, ``evaluate()`` and ``predict()``.

    Returns:
        an :class:`EstimatorSpec`.
    """
    return EstimatorSpec(mode, predictions, loss, train_op, eval_metric_ops, training_hooks,
                         evaluation_hooks, prediction_hooks)


# --------------------------------------------------------------------------- features
class Features(dict):
    """A ``model_fn``'s features: ``{column name: tensor}``; as a tensor, their numeric matrix."""

    __slots__ = ("_matrix",)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._matrix = None

    @property
    def matrix(self):
        """``float64 [batch, n]``: the numeric features side by side (made on first use)."""
        if self._matrix is None:
            tf = import_tensorflow()
            parts = []
            for name, tensor in self.items():
                if tensor.dtype == tf.string:
                    raise TypeError(
                        f"The features hold strings (column {name!r}): they make no numeric "
                        "matrix. Use features[name] (R: features$name) or input_layer() with "
                        "feature columns.")
                value = tf.cast(tensor, tf.float64)
                parts.append(tf.reshape(value, [-1, int(np.prod(tensor.shape[1:]))]))
            self._matrix = parts[0] if len(parts) == 1 else tf.concat(parts, axis=1,
                                                                       name="features")
        return self._matrix


_REGISTERED = []


def _register_features_conversion(tf):
    """Lets TensorFlow read :class:`Features` as its matrix (once per process)."""
    if _REGISTERED:
        return

    def convert(value, dtype=None, name=None, as_ref=False):
        matrix = value.matrix
        if dtype is not None and dtype != matrix.dtype:
            matrix = tf.cast(matrix, dtype)
        return matrix

    tf.register_tensor_conversion_function(Features, convert)
    _REGISTERED.append(True)


class _FeatureBuilder(FeatureBuilder):
    """Feature columns on a ``model_fn``'s features: raw tensors cast to what a column needs."""

    def __init__(self, tf, features):
        super().__init__(tf, {})
        self._features = features

    def raw(self, key, kind):
        tf = self.tf
        if key not in self._features:
            raise ValueError(f"input_layer(): no feature {key!r}; the features are: "
                             f"{', '.join(self._features)}.")
        tensor = _one_per_example(self._features[key])
        if kind == FLOAT:
            return tf.cast(tensor, tf.float32)
        if kind == INT:
            return self._whole(key, tensor)
        if kind == STR:
            if tensor.dtype != tf.string:
                raise TypeError(f"input_layer(): feature {key!r} must hold strings for its "
                                f"vocabulary, got {tensor.dtype.name}.")
            return tensor
        return self.raw_as_string(key)

    def raw_as_string(self, key):
        tf = self.tf
        tensor = _one_per_example(self._features[key])
        if tensor.dtype == tf.string:
            return tensor
        return tf.strings.as_string(self._whole(key, tensor))

    def _whole(self, key, tensor):
        """A feature's numbers as int64; a fraction fails the step naming the feature (a float
        input is checked when it runs, never rounded: TensorFlow refuses floats here)."""
        tf = self.tf
        if not tensor.dtype.is_floating:
            return tf.cast(tensor, tf.int64)
        fraction = tf.not_equal(tensor, tf.math.floor(tensor))
        check = tf.debugging.Assert(
            tf.logical_not(tf.reduce_any(fraction)),
            [f"input_layer(): feature `{key}` must hold whole numbers for its categorical "
             "column, got", tf.boolean_mask(tensor, fraction)], summarize=1)
        with tf.control_dependencies([check]):
            return tf.cast(tensor, tf.int64)


def _one_per_example(tensor):
    """A ``[batch, 1]`` feature (a one-column matrix) as ``[batch]``, what the feature columns
    read for one value per example (as the canned estimators' ``one_column()``)."""
    if tensor.shape.rank == 2 and tensor.shape[1] == 1:
        return tensor[:, 0]
    return tensor


def input_layer(features, feature_columns):
    """The dense ``float32 [batch, d]`` input of ``feature_columns`` for a ``model_fn``'s features.

    Args:
        features: the ``features`` a ``model_fn`` gets (a dict of tensors).
        feature_columns: dense feature columns (numeric, bucketized, indicator,
            embedding), e.g. from :func:`feature_columns`.

    Returns:
        a tensor, the columns' values side by side (in name order, as TensorFlow).
    """
    tf = import_tensorflow()
    if not isinstance(features, dict):
        raise TypeError(f"`features` must be the dict of tensors a model_fn gets, got "
                        f"{features!r}.")
    if isinstance(feature_columns, FeatureColumn):
        feature_columns = [feature_columns]
    columns = check_columns(list(feature_columns or []), True, "input_layer()")
    builder = _FeatureBuilder(tf, features)
    with tf.compat.v1.variable_scope(None, default_name="input_layer"):
        parts = [builder.dense(column) for column in columns]
    return parts[0] if len(parts) == 1 else tf.concat(parts, axis=1)


# --------------------------------------------------------------------------- the estimator
class _GlobalStepMustAdvance(SessionRunHook):
    """Fails a ``train()`` whose ``train_op`` leaves the global step as it was (it would never end)."""

    def __init__(self, read):
        self._read = read
        self._start = None

    def after_create_session(self, session, coord):
        self._start = int(session.run(self._read))

    def after_run(self, run_context, run_values):
        if self._start is None:
            return
        step = int(run_context.session.run(self._read))
        start, self._start = self._start, None
        if step == start:
            raise ValueError(
                "The model_fn's train_op did not increment the global step, so training "
                "would never end: build it as optimizer.minimize(loss, global_step="
                "tf.compat.v1.train.get_global_step()) (R: optimizer$minimize(loss, "
                "global_step = tf$train$get_global_step())).")


class CustomEstimator(Estimator):
    """An estimator whose model is built by a ``model_fn`` (see :func:`estimator`)."""

    def __init__(self, model_fn, model_dir=None, config=None, params=None):
        if not callable(model_fn):
            raise TypeError(f"`model_fn` must be a function, got {model_fn!r}.")
        if config is not None and not isinstance(config, RunConfig):
            raise TypeError(f"`config` must be made by run_config(), got {config!r}.")
        if params is not None and not isinstance(params, dict):
            raise TypeError(f"`params` must be a dict (R: a named list), got {params!r}.")
        super().__init__(None, None, model_dir, None, None, None, None, "estimator",
                         config=config)
        self.params = dict(params or {})
        self._model_fn = model_fn
        self._model_fn_args = _accepted_args(model_fn)

    def __repr__(self):
        return f"<pyhooks estimator (custom model_fn): model_dir={self.model_dir!r}>"

    def _graph_key(self, mode, signature):
        return (mode, signature)  # a model_fn's graph depends on the input's columns

    custom_model = True

    def model_builder(self):
        return self._build_model_fn

    def class_names(self):
        return None

    def _read_features(self, input_fn):
        return list(input_fn.features)  # a model_fn gets every feature

    def _input(self, input_fn):
        return as_input(input_fn)  # tf.estimator's function returning a tf.data.Dataset

    def _feeds(self, input_fn, mode):
        if not isinstance(input_fn, DatasetInput):
            return super()._feeds(input_fn, mode)
        if self._replicated is not None and mode == TRAIN:
            raise ValueError("A function returning a tf.data.Dataset cannot be the input_fn of "
                             "training under `train_distribute`: give the data to input_fn() or "
                             "numpy_input_fn().")
        input_fn.build(import_tensorflow(), MODE_KEY[mode], self._seed, self.params, self.config)
        if mode == PREDICT and input_fn.num_epochs is None:
            raise ValueError(f"predict(): the dataset of `input_fn` {input_fn!r} repeats forever, "
                             "so the predictions would never end: predict() makes one pass "
                             "(drop its repeat()).")
        schema, new = self._contract(input_fn, mode)
        return input_fn.plan(schema, mode != PREDICT), (schema if new else None)

    def _record_schema(self, input_fn):
        if isinstance(input_fn, DatasetInput):
            return input_fn.schema()  # from the dataset's element spec
        return super()._record_schema(input_fn)

    def serving_inputs(self):
        """The model_fn's features as recorded (or as the first graph built saw them)."""
        self._schema_levels()  # loads the schema
        if self._schema is not None:
            return [(c.name, c.name, "string" if c.kind in ("string", "factor") else c.dtype,
                     c.shape) for c in self._schema.features]
        for (_, signature), _held in self._states:
            if not isinstance(signature, tuple):  # a dataset's ("tf.data"): no columns here
                continue
            return [(name, name, dtype, shape) for name, dtype, shape in signature
                    if not is_label(name)]
        raise ValueError("export_savedmodel() of a custom estimator needs its input's "
                         "columns: train it first.")

    def _make_feeds(self, input_fn, labelled, schema):
        columns = input_fn.columns
        names = input_fn.features if schema is None else [c.name for c in schema.features]
        feeds = {name: self._feed(input_fn, name, schema) for name in names}
        if input_fn.response:  # predict() too: a model_fn may read labels in every mode
            if schema is not None and not labelled and [c.name for c in schema.response] != \
                    input_fn.response:
                return feeds  # another response than the model's: predictions need none
            if input_fn.labels_as_dict:  # each response column its own tensor, of its kind
                feeds.update((label_key(name), self._label_feed(input_fn, name, schema))
                             for name in input_fn.response)
                return feeds
            arrays = [columns[name] for name in input_fn.response]
            kinds = {kind_of(a, input_fn.factors.get(n)) for n, a in zip(input_fn.response,
                                                                         arrays)}
            if len(kinds) > 1:
                raise TypeError(f"The response columns {input_fn.response} must be of one kind, "
                                f"got {sorted(kinds)}.")
            if len(arrays) == 1:
                feeds[LABEL] = self._label_feed(input_fn, input_fn.response[0], schema)
            elif kinds & {"string", "factor"}:
                raise TypeError(f"The response columns {input_fn.response} hold text: several "
                                "response columns must hold numbers (one text response "
                                "column may be a factor).")
            else:
                parts = [self._feed(input_fn, n, schema) for n in input_fn.response]
                feeds[LABEL] = aligned(np.concatenate([p.reshape(len(p), -1) for p in parts],
                                                      axis=1))
        return feeds

    def _file_labels(self, input_fn, feeds, schema):
        """A file input's labels: a text response as its recorded levels' positions, else as
        the sample's (see ``file_pipeline.label_plan``)."""
        levels = None if schema is None else schema.response_levels
        if levels is not None and input_fn.columns[input_fn.response[0]].dtype.kind == "U":
            return label_plan(input_fn, feeds[LABEL], labels=levels)
        return label_plan(input_fn, feeds[LABEL])

    def _feed(self, input_fn, name, schema):
        """One column as fed: numbers as recorded (or as they are), text as codes."""
        values = input_fn.columns[name]
        if values.dtype.kind == "U":
            return as_coded(values, input_fn.factors.get(name))
        return values if schema is None else schema.as_recorded(name, values)

    def _label_feed(self, input_fn, name, schema):
        """The response: a factor's class ids (by label, in its recorded levels), else as fed."""
        levels = None if schema is None else schema.response_levels
        factor = input_fn.factors.get(name)
        if levels is None and factor is not None:
            levels = factor.levels
        if levels is not None:
            return aligned(label_ids(input_fn, name, levels, "the levels the model was trained on"))
        return self._feed(input_fn, name, schema)

    def _call_model_fn(self, features, labels, mode):
        kwargs = {}
        if "params" in self._model_fn_args:
            kwargs["params"] = self.params
        if "config" in self._model_fn_args:
            kwargs["config"] = self.config
        spec = self._model_fn(features, labels, mode, **kwargs)
        if not isinstance(spec, EstimatorSpec):
            raise TypeError(f"model_fn must return estimator_spec(...), got {spec!r} "
                            f"({type(spec).__name__}) for mode {mode!r}.")
        return spec

    def _build_model_fn(self, state, tf, mode, batch):
        """Calls the model_fn on the input's tensors and keeps what the loops of ``mode`` run."""
        v1 = tf.compat.v1
        _register_features_conversion(tf)
        features = Features((name, tensor) for name, tensor in batch.items()
                            if not is_label(name))
        prefix = label_key("")  # a dict of labels, as numpy_input_fn() of a dict y gives
        labels = {key[len(prefix):]: tensor for key, tensor in batch.items()
                  if key.startswith(prefix)} or batch.get(LABEL)
        spec = self._call_model_fn(features, labels, MODE_KEY[mode])
        state.model_variables = v1.global_variables()
        if mode == PREDICT:
            _keep_predictions(state, spec)
            return
        if spec.loss is None:
            raise ValueError(f"For mode {MODE_KEY[mode]!r}, the model_fn's estimator_spec() needs "
                             "`loss`.")
        loss = tf.reshape(_tensor(spec.loss, "loss", scalar=True), [])
        if not v1.get_collection(v1.GraphKeys.LOSSES):
            v1.add_to_collection(v1.GraphKeys.LOSSES, loss)
        v1.add_to_collection(TRAINING_LOSS_COLLECTION, loss)
        state.training_loss = loss
        if mode == TRAIN:
            _keep_training(state, spec)
        else:
            _keep_evaluation(state, spec, tf, loss)

    def _available_keys(self, state):
        return tuple(state.predictions)

    def _finish_predictions(self, merged):
        return merged


def _tensor(value, what, scalar=False):
    """``value`` as a tensor of the model_fn's graph; TypeError naming ``what`` if it is none."""
    graph = import_tensorflow().compat.v1.get_default_graph()
    try:
        found = graph.as_graph_element(value, allow_tensor=True, allow_operation=False)
    except (TypeError, ValueError) as error:
        raise TypeError(f"estimator_spec(): `{what}` must be a tensor of the model_fn's "
                        f"graph, got {value!r}.") from error
    if scalar and found.shape.rank not in (0, None) and found.shape.num_elements() != 1:
        raise ValueError(f"estimator_spec(): `{what}` must be a scalar, got shape {found.shape}.")
    return found


def _keep_predictions(state, spec):
    predictions = spec.predictions
    if predictions is None:
        raise ValueError("For mode 'infer', the model_fn's estimator_spec() needs `predictions`.")
    if not isinstance(predictions, dict):
        predictions = {"predictions": predictions}
    state.predictions = {str(k): _tensor(v, f"predictions${k}") for k, v in predictions.items()}
    state.spec_hooks = spec.prediction_hooks


def _keep_training(state, spec):
    v1 = import_tensorflow().compat.v1
    if spec.train_op is None:
        raise ValueError("For mode 'train', the model_fn's estimator_spec() needs `train_op`.")
    try:
        train_op = v1.get_default_graph().as_graph_element(spec.train_op, allow_tensor=True,
                                                           allow_operation=True)
    except (TypeError, ValueError) as error:
        raise TypeError("estimator_spec(): `train_op` must be an op of the model_fn's "
                        f"graph, got {spec.train_op!r}.") from error
    state.train_op = state.fetches = train_op
    v1.add_to_collection(v1.GraphKeys.TRAIN_OP, train_op)
    state.spec_hooks = [*spec.training_hooks, _GlobalStepMustAdvance(state.global_step_read)]


def _keep_evaluation(state, spec, tf, loss):
    v1 = tf.compat.v1
    with v1.variable_scope("metrics"):
        metrics = {"loss": v1.metrics.mean(loss)}
    for name, (value, update) in spec.eval_metric_ops.items():
        metrics[str(name)] = (_tensor(value, f"eval_metric_ops${name}"), update)
    state.metric_values = {name: value for name, (value, _) in metrics.items()}
    state.metric_update = state.fetches = tf.group(*[update for _, update in metrics.values()])
    state.metric_reset = v1.variables_initializer(
        v1.get_collection(v1.GraphKeys.METRIC_VARIABLES) +
        v1.get_collection(v1.GraphKeys.LOCAL_VARIABLES))
    state.spec_hooks = spec.evaluation_hooks


def _accepted_args(fn):
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return {"params", "config"}
    if any(p.kind is p.VAR_KEYWORD for p in parameters):
        return {"params", "config"}
    return {p.name for p in parameters}


def estimator(model_fn, model_dir=None, config=None, params=None):
    """A custom estimator: ``model_fn`` builds the model (see this module's docstring).

    Args:
        model_fn: ``function(features, labels, mode, params, config)`` returning an
            :func:`estimator_spec` (``params`` and ``config`` are optional arguments).
        model_dir: where checkpoints go; ``config.model_dir`` or a new temporary
            directory if None (removed when the process ends: give one to keep the model).
        config: a :func:`run_config`, or None.
        params: a dict of hyperparameters passed to ``model_fn``.

    Returns:
        a :class:`CustomEstimator`, trained, evaluated and used for predictions as
        the canned estimators; its ``train()``, ``evaluate()`` and ``predict()`` also
        take tf.estimator's ``input_fn``, a function returning a ``tf.data.Dataset``
        (see :mod:`pyhooks.estimators.dataset_input`).
    """
    return CustomEstimator(model_fn, model_dir, config, params)
