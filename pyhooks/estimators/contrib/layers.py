"""``tf.contrib.layers``' model-building functions of TensorFlow 1.x, built from graph ops.

What tfestimators' documentation and tests used (R: ``tf$contrib$layers$...``):

* :func:`fully_connected`: ``activation_fn(inputs @ weights + biases)``, variables
  ``<scope>/weights`` and ``<scope>/biases`` (scope ``fully_connected``,
  ``fully_connected_1``...); a ``normalizer_fn`` takes the place of the biases;
* :func:`stack`: the same layer applied several times, one argument each, in a
  scope ``Stack`` (``Stack/fully_connected_1``, ``Stack/fully_connected_2``...);
* :func:`dropout`: ``keep_prob`` and ``is_training`` (``True`` by default, as in
  TensorFlow 1.x: set it from the mode to keep every value at prediction);
* :func:`optimize_loss`: an optimizer by name (``"Adagrad"``, ``"Adam"``,
  ``"Ftrl"``, ``"RMSProp"``, ``"SGD"``), a class, an instance or a function of
  the learning rate; gradient clipping, learning rate decay, ``update_ops`` and
  summaries; returns the loss, whose evaluation runs the update.

They work in the graph a ``model_fn`` builds (``tf.compat.v1``, graph mode) and
keep the input's float type (tfestimators' custom models get ``float64``
features). Any other name is an ``AttributeError`` naming the replacement.
"""

from __future__ import annotations

import numbers

import numpy as np

from pyhooks.estimators._quiet import import_tensorflow
from pyhooks.estimators.contrib import gone_message

__all__ = ["dropout", "fully_connected", "optimize_loss", "stack"]

_REPLACED = {
    "conv2d": "tf.layers.conv2d", "convolution2d": "tf.layers.conv2d",
    "max_pool2d": "tf.layers.max_pooling2d", "avg_pool2d": "tf.layers.average_pooling2d",
    "flatten": "tf.layers.flatten", "linear": "tf.contrib.layers.fully_connected("
    "activation_fn=None)", "xavier_initializer": "tf.glorot_uniform_initializer",
    "l2_regularizer": "a function of the weights, e.g. lambda w: 0.01 * tf.nn.l2_loss(w)",
}


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    instead = _REPLACED.get(name)
    raise AttributeError(gone_message(
        f"tf.contrib.layers.{name}",
        f"tf.contrib.layers.{name} was removed from TensorFlow 2: use {instead}"
        if instead else None))


def __dir__():
    return list(__all__)


def _whole(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or value != int(value) \
            or value <= 0:
        raise ValueError(f"`{name}` must be a positive whole number, got {value!r}.")
    return int(value)


def _float_input(tf, inputs, who):
    inputs = tf.convert_to_tensor(inputs)
    if not inputs.dtype.is_floating:
        inputs = tf.cast(inputs, tf.float32)
    if inputs.shape.rank is None or inputs.shape.rank < 2 or inputs.shape[-1] is None:
        raise ValueError(f"{who}(): `inputs` must have a batch dimension and a known last "
                         f"dimension, got shape {inputs.shape}.")
    return inputs


def fully_connected(inputs, num_outputs, activation_fn="relu", normalizer_fn=None,
                    normalizer_params=None, weights_initializer=None, weights_regularizer=None,
                    biases_initializer="zeros", biases_regularizer=None, reuse=None,
                    variables_collections=None, outputs_collections=None, trainable=True,
                    scope=None):
    """A fully connected layer: ``activation_fn(normalizer_fn(inputs @ weights) or + biases)``.

    Args:
        inputs: a tensor ``[batch, ..., n]`` (n known).
        num_outputs: the number of units.
        activation_fn: applied last; ReLU by default, None for a linear layer.
        normalizer_fn: applied to ``inputs @ weights`` in place of the biases (e.g.
            :func:`dropout`), with ``normalizer_params`` as keyword arguments.
        normalizer_params: a dict of keyword arguments for ``normalizer_fn``.
        weights_initializer: default Glorot (Xavier) uniform.
        weights_regularizer, biases_regularizer: functions of the variable whose
            result is added to the ``REGULARIZATION_LOSSES`` collection.
        biases_initializer: default zeros; None for no biases.
        reuse: reuse the variables of ``scope``.
        variables_collections: collections the variables are also added to (a
            list, or a dict ``{"weights": [...], "biases": [...]}``).
        outputs_collections: collections the output is added to.
        trainable: add the variables to ``TRAINABLE_VARIABLES``.
        scope: the variable scope (default ``fully_connected``, made unique).

    Returns:
        the output tensor, ``[batch, ..., num_outputs]``, of the input's float type.
    """
    tf = import_tensorflow()
    v1 = tf.compat.v1
    num_outputs = _whole("num_outputs", num_outputs)
    inputs = _float_input(tf, inputs, "fully_connected")
    if activation_fn == "relu":
        activation_fn = tf.nn.relu
    if biases_initializer == "zeros":
        biases_initializer = v1.zeros_initializer()
    if normalizer_params is not None and not isinstance(normalizer_params, dict):
        raise TypeError(f"`normalizer_params` must be a dict (R: a named list), got "
                        f"{normalizer_params!r}.")
    for name, fn in (("activation_fn", activation_fn), ("normalizer_fn", normalizer_fn)):
        if fn is not None and not callable(fn):
            raise TypeError(f"`{name}` must be a function or None, got {fn!r}.")

    def collections(kind):
        if variables_collections is None:
            return None
        chosen = (variables_collections.get(kind) if isinstance(variables_collections, dict)
                  else variables_collections)
        return None if chosen is None else [v1.GraphKeys.GLOBAL_VARIABLES, *chosen]

    with v1.variable_scope(scope, default_name="fully_connected", reuse=reuse):
        weights = v1.get_variable(
            "weights", [inputs.shape[-1], num_outputs], dtype=inputs.dtype,
            initializer=weights_initializer or v1.glorot_uniform_initializer(),
            regularizer=weights_regularizer, trainable=trainable,
            collections=collections("weights"))
        rank = inputs.shape.rank
        outputs = (tf.matmul(inputs, weights) if rank == 2 else
                   tf.tensordot(inputs, weights, [[rank - 1], [0]]))
        if normalizer_fn is not None:
            outputs = normalizer_fn(outputs, **(normalizer_params or {}))
        elif biases_initializer is not None:
            biases = v1.get_variable(
                "biases", [num_outputs], dtype=inputs.dtype, initializer=biases_initializer,
                regularizer=biases_regularizer, trainable=trainable,
                collections=collections("biases"))
            outputs = tf.nn.bias_add(outputs, biases)
        if activation_fn is not None:
            outputs = activation_fn(outputs)
    for collection in outputs_collections or ():
        v1.add_to_collection(collection, outputs)
    return outputs


def dropout(inputs, keep_prob=0.5, noise_shape=None, is_training=True, outputs_collections=None,
            scope=None, seed=None):
    """Keeps each value with probability ``keep_prob`` (scaled by ``1 / keep_prob``).

    Args:
        inputs: a tensor.
        keep_prob: the probability of keeping a value, in (0, 1].
        noise_shape: the shape of the random keep/drop mask, as ``tf.nn.dropout``'s.
        is_training: a bool or a bool tensor; when false, ``inputs`` is returned as it
            is. True by default, as in TensorFlow 1.x.
        outputs_collections: collections the output is added to.
        scope: a name scope for the ops.
        seed: the random seed.

    Returns:
        a tensor of the shape of ``inputs``.
    """
    tf = import_tensorflow()
    v1 = tf.compat.v1
    if isinstance(keep_prob, bool) or not isinstance(keep_prob, numbers.Real) \
            or not 0 < keep_prob <= 1:
        raise ValueError(f"`keep_prob` must be a number in (0, 1], got {keep_prob!r}.")
    with tf.name_scope(scope or "Dropout"):
        inputs = tf.convert_to_tensor(inputs)

        def dropped():
            return tf.nn.dropout(inputs, rate=1.0 - float(keep_prob), noise_shape=noise_shape,
                                 seed=seed)

        if isinstance(is_training, (bool, np.bool_)):
            outputs = dropped() if is_training else tf.identity(inputs)
        else:
            outputs = tf.cond(tf.cast(is_training, tf.bool), dropped, lambda: tf.identity(inputs))
    for collection in outputs_collections or ():
        v1.add_to_collection(collection, outputs)
    return outputs


def stack(inputs, layer, stack_args, scope=None, **kwargs):
    """``layer`` applied once per element of ``stack_args``, each on the last one's output.

    ``stack(x, fully_connected, [32, 64])`` is
    ``fully_connected(fully_connected(x, 32, scope="fully_connected_1"), 64,
    scope="fully_connected_2")`` inside the variable scope ``scope`` (default
    ``Stack``).

    Args:
        inputs: the first layer's input.
        layer: a layer function taking ``(inputs, *args, scope=..., **kwargs)``.
        stack_args: one entry per layer: a value (the layer's second argument) or a
            list or tuple of its positional arguments.
        scope: the enclosing variable scope.
        **kwargs: passed to every call of ``layer``.

    Returns:
        the last layer's output.
    """
    tf = import_tensorflow()
    v1 = tf.compat.v1
    if not callable(layer):
        raise TypeError(f"`layer` must be a layer function, got {layer!r}.")
    if isinstance(stack_args, (str, bytes)) or not hasattr(stack_args, "__len__") \
            or not len(stack_args):
        raise ValueError(f"`stack_args` must be a non-empty list (one entry per layer), got "
                         f"{stack_args!r}.")
    base = getattr(layer, "__name__", None) or getattr(getattr(layer, "func", None), "__name__",
                                                       None) or "stack"
    outputs = inputs
    with v1.variable_scope(scope, default_name="Stack"):
        for i, args in enumerate(stack_args, start=1):
            args = list(args) if isinstance(args, (list, tuple)) else [args]
            outputs = layer(outputs, *args, scope=f"{base}_{i}", **kwargs)
    return outputs


_OPTIMIZERS = {"Adagrad": "AdagradOptimizer", "Adam": "AdamOptimizer", "Ftrl": "FtrlOptimizer",
               "RMSProp": "RMSPropOptimizer", "SGD": "GradientDescentOptimizer"}
_SUMMARIES = ("learning_rate", "loss", "gradients", "gradient_norm", "global_gradient_norm")


def _optimizer(v1, optimizer, learning_rate):
    base = v1.train.Optimizer
    if isinstance(optimizer, str):
        if optimizer not in _OPTIMIZERS:
            raise ValueError(f"`optimizer` {optimizer!r} is not one of {sorted(_OPTIMIZERS)}: "
                             "give an optimizer object for others (e.g. "
                             "tf.train.MomentumOptimizer(0.01, momentum=0.9)).")
        return getattr(v1.train, _OPTIMIZERS[optimizer])(learning_rate=learning_rate)
    if isinstance(optimizer, base):
        return optimizer
    if isinstance(optimizer, type) and issubclass(optimizer, base):
        return optimizer(learning_rate=learning_rate)
    if callable(optimizer):
        made = optimizer(learning_rate)
        if not isinstance(made, base):
            raise TypeError(f"`optimizer` (a function of the learning rate) must return a "
                            f"tf.train optimizer, got {made!r}.")
        return made
    raise TypeError(f"`optimizer` must be a name ({', '.join(sorted(_OPTIMIZERS))}), a "
                    f"tf.train optimizer class or object, or a function of the learning "
                    f"rate, got {optimizer!r}.")


def optimize_loss(loss, global_step, learning_rate, optimizer, gradient_noise_scale=None,
                  gradient_multipliers=None, clip_gradients=None, learning_rate_decay_fn=None,
                  update_ops=None, variables=None, name=None, summaries=None,
                  colocate_gradients_with_ops=False, increment_global_step=True):
    """The training op of ``loss``: its gradients applied by ``optimizer``.

    Args:
        loss: the scalar loss.
        global_step: the global step variable (None: the graph's), incremented by
            each update unless ``increment_global_step`` is False.
        learning_rate: a number (kept in a non-trainable variable ``learning_rate``)
            or a tensor; None only when ``optimizer`` is an optimizer object.
        optimizer: ``"Adagrad"``, ``"Adam"``, ``"Ftrl"``, ``"RMSProp"``, ``"SGD"``, a
            ``tf.train`` optimizer class (made with ``learning_rate=``) or object, or a
            function of the learning rate returning one.
        gradient_noise_scale: add Gaussian noise of this scale (times the gradient's
            standard deviation) to each gradient.
        gradient_multipliers: ``{variable or its name: factor}``.
        clip_gradients: a number (clip by the global norm) or a function of the
            ``[(gradient, variable)]`` list returning a new one.
        learning_rate_decay_fn: ``f(learning_rate, global_step)`` returning the
            learning rate to use.
        update_ops: ops run before the update (default: the ``UPDATE_OPS``
            collection, e.g. batch normalization's).
        variables: the variables to train (default: all trainable ones).
        name: the name scope (default ``OptimizeLoss``).
        summaries: which summaries to add, some of ``"learning_rate"``,
            ``"loss"``, ``"gradients"``, ``"gradient_norm"``,
            ``"global_gradient_norm"`` (default: all).
        colocate_gradients_with_ops: as ``Optimizer.compute_gradients``.
        increment_global_step: whether the update increments ``global_step``.

    Returns:
        the loss of the step (its forward pass, before the update); running it
        applies the update: one training step.
    """
    tf = import_tensorflow()
    v1 = tf.compat.v1
    loss = tf.convert_to_tensor(loss)
    if loss.shape.rank not in (0, None) and loss.shape.num_elements() != 1:
        raise ValueError(f"optimize_loss(): `loss` must be a scalar, got shape {loss.shape}.")
    if isinstance(optimizer, str) and optimizer not in _OPTIMIZERS:
        _optimizer(v1, optimizer, None)  # the error naming the names
    if summaries is None:
        summaries = list(_SUMMARIES)
    else:
        summaries = [summaries] if isinstance(summaries, str) else list(summaries)
        unknown = [s for s in summaries if s not in _SUMMARIES]
        if unknown:
            raise ValueError(f"`summaries` {unknown} are not among {list(_SUMMARIES)}.")
    if learning_rate is None and not isinstance(optimizer, v1.train.Optimizer):
        raise ValueError("optimize_loss(): `learning_rate` is needed unless `optimizer` is an "
                         "optimizer object.")
    if clip_gradients is not None and not callable(clip_gradients) and (
            isinstance(clip_gradients, bool) or not isinstance(clip_gradients, numbers.Real)
            or clip_gradients <= 0):
        raise ValueError(f"`clip_gradients` must be a positive number or a function, got "
                         f"{clip_gradients!r}.")
    if global_step is None:
        global_step = v1.train.get_global_step()
        if global_step is None:
            raise ValueError("optimize_loss(): the graph has no global step; create it with "
                             "tf.train.get_or_create_global_step().")
    with v1.variable_scope(name, default_name="OptimizeLoss", values=[loss, global_step]):
        if update_ops is None:
            update_ops = v1.get_collection(v1.GraphKeys.UPDATE_OPS)
        if update_ops:
            with tf.control_dependencies(list(update_ops)):
                loss = tf.identity(loss)
        rate = None
        if learning_rate is not None:
            if isinstance(learning_rate, numbers.Real) and not isinstance(learning_rate, bool):
                rate = v1.get_variable("learning_rate", [], trainable=False,
                                       initializer=v1.constant_initializer(learning_rate))
            else:
                rate = tf.convert_to_tensor(learning_rate)
            if learning_rate_decay_fn is not None:
                rate = learning_rate_decay_fn(rate, global_step)
            if "learning_rate" in summaries:
                v1.summary.scalar("learning_rate", rate)
        elif learning_rate_decay_fn is not None:
            raise ValueError("optimize_loss(): `learning_rate_decay_fn` needs a `learning_rate`.")
        opt = _optimizer(v1, optimizer, rate)
        if variables is None:
            variables = v1.trainable_variables()
        pairs = opt.compute_gradients(loss, list(variables),
                                      colocate_gradients_with_ops=colocate_gradients_with_ops)
        pairs = [(g, v) for g, v in pairs if g is not None]
        if not pairs:
            raise ValueError("optimize_loss(): `loss` depends on none of the variables to train.")
        if gradient_noise_scale is not None:
            pairs = [(g + tf.random.normal(tf.shape(g), dtype=g.dtype) * gradient_noise_scale
                      * tf.math.reduce_std(g), v) for g, v in pairs]
        if gradient_multipliers:
            factors = {(k if isinstance(k, str) else k.name): f
                       for k, f in gradient_multipliers.items()}
            pairs = [(g * tf.cast(factors.get(v.name, factors.get(v.op.name, 1.0)), g.dtype), v)
                     for g, v in pairs]
        if "global_gradient_norm" in summaries:
            v1.summary.scalar("global_norm/gradient_norm", tf.linalg.global_norm(
                [g for g, _ in pairs]))
        if callable(clip_gradients):
            pairs = list(clip_gradients(pairs))
        elif clip_gradients is not None:
            clipped, _ = tf.clip_by_global_norm([g for g, _ in pairs], float(clip_gradients))
            pairs = list(zip(clipped, [v for _, v in pairs]))
        if "loss" in summaries:
            v1.summary.scalar("loss", loss)
        for g, v in pairs:
            if "gradients" in summaries:
                v1.summary.histogram(f"gradients/{v.op.name}", g)
            if "gradient_norm" in summaries:
                v1.summary.scalar(f"gradient_norm/{v.op.name}", tf.linalg.global_norm([g]))
        update = opt.apply_gradients(
            pairs, global_step=global_step if increment_global_step else None, name="train")
        with tf.control_dependencies([update]):
            return tf.identity(loss)
