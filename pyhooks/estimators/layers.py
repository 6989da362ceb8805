"""TensorFlow 1.x's ``tf.layers`` functions for ``model_fn``s, built from plain graph ops.

``tf.compat.v1.layers`` needs Keras 2 (the ``tf-keras`` package, which pulls
in a second TensorFlow); these are the layers tfestimators' examples use,
with TensorFlow 1.x's arguments, defaults and variable names
(``dense/kernel``, ``dense_1/bias``, ``conv2d/kernel``...). They create their
variables with ``tf.compat.v1.get_variable`` in the graph being built, of the
input's float type. R's ``tf$layers`` is this module.

Example:
    >>> hidden = dense(features, 10, activation=tf.nn.relu)
    >>> out = dense(dropout(hidden, rate=0.1, training=mode == "train"), 1)
"""

from __future__ import annotations

import numbers

import numpy as np

from pyhooks.estimators._quiet import import_tensorflow

__all__ = ["average_pooling2d", "conv2d", "dense", "dropout", "flatten", "max_pooling2d"]


def _whole(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or value != int(value) \
            or value <= 0:
        raise ValueError(f"`{name}` must be a positive whole number, got {value!r}.")
    return int(value)


def _pair(name, value):
    if isinstance(value, (list, tuple)):
        if len(value) != 2:
            raise ValueError(f"`{name}` must be one number or two, got {value!r}.")
        return (_whole(name, value[0]), _whole(name, value[1]))
    value = _whole(name, value)
    return (value, value)


def _padding(padding):
    if not isinstance(padding, str) or padding.lower() not in ("valid", "same"):
        raise ValueError(f"`padding` must be 'valid' or 'same', got {padding!r}.")
    return padding.upper()


def _tensor(tf, who, inputs):
    """``inputs`` as a tensor, or an error naming the layer, the argument and what was given."""
    try:
        return tf.convert_to_tensor(inputs)
    except (TypeError, ValueError) as error:
        given = ("a function" if callable(inputs) else "None (NULL in R)" if inputs is None
                 else f"a {type(inputs).__name__}: {inputs!r:.80}")
        raise TypeError(f"{who}(): `inputs` must be a tensor (or an array of numbers), got "
                        f"{given}.") from error


def _float_input(tf, who, inputs):
    inputs = _tensor(tf, who, inputs)
    if not inputs.dtype.is_floating:
        inputs = tf.cast(inputs, tf.float32)
    return inputs


def dense(inputs, units, activation=None, use_bias=True, kernel_initializer=None,
          bias_initializer=None, name=None, reuse=None, trainable=True):
    """``activation(inputs @ kernel + bias)``: a fully connected layer (``tf.layers.dense``)."""
    tf = import_tensorflow()
    v1 = tf.compat.v1
    units = _whole("units", units)
    inputs = _float_input(tf, "dense", inputs)
    if inputs.shape.rank is None or inputs.shape[-1] is None:
        raise ValueError(f"dense(): the last dimension of `inputs` must be known, got "
                         f"{inputs.shape}.")
    with v1.variable_scope(name, default_name="dense", reuse=reuse):
        kernel = v1.get_variable("kernel", [inputs.shape[-1], units], dtype=inputs.dtype,
                                 initializer=kernel_initializer or v1.glorot_uniform_initializer(),
                                 trainable=trainable)
        rank = inputs.shape.rank
        out = tf.matmul(inputs, kernel) if rank == 2 else tf.tensordot(inputs, kernel, [[rank - 1],
                                                                                        [0]])
        if use_bias:
            bias = v1.get_variable("bias", [units], dtype=inputs.dtype,
                                   initializer=bias_initializer or v1.zeros_initializer(),
                                   trainable=trainable)
            out = tf.nn.bias_add(out, bias)
        return activation(out) if activation is not None else out


def dropout(inputs, rate=0.5, training=False, name=None, seed=None):
    """Drops each value with probability ``rate`` when ``training`` (a bool or a bool tensor)."""
    tf = import_tensorflow()
    if isinstance(training, (bool, np.bool_)):
        if not training:
            return tf.identity(inputs, name=name)
        return tf.nn.dropout(inputs, rate=rate, seed=seed, name=name)
    return tf.cond(tf.cast(training, tf.bool),
                   lambda: tf.nn.dropout(inputs, rate=rate, seed=seed),
                   lambda: tf.identity(inputs), name=name)


def flatten(inputs, name=None):
    """``[batch, ...]`` as ``[batch, product of the other dimensions]``."""
    tf = import_tensorflow()
    inputs = _tensor(tf, "flatten", inputs)
    return tf.reshape(inputs, [-1, int(np.prod(inputs.shape[1:]))], name=name)


def conv2d(inputs, filters, kernel_size, strides=(1, 1), padding="valid", activation=None,
           use_bias=True, kernel_initializer=None, bias_initializer=None, name=None, reuse=None,
           trainable=True):
    """A 2-D convolution over ``[batch, height, width, channels]`` (``tf.layers.conv2d``)."""
    tf = import_tensorflow()
    v1 = tf.compat.v1
    filters = _whole("filters", filters)
    kh, kw = _pair("kernel_size", kernel_size)
    sh, sw = _pair("strides", strides)
    inputs = _float_input(tf, "conv2d", inputs)
    if inputs.shape.rank != 4:
        raise ValueError(f"conv2d(): `inputs` must be [batch, height, width, channels], got "
                         f"{inputs.shape}.")
    with v1.variable_scope(name, default_name="conv2d", reuse=reuse):
        kernel = v1.get_variable("kernel", [kh, kw, inputs.shape[-1], filters],
                                 dtype=inputs.dtype,
                                 initializer=kernel_initializer or v1.glorot_uniform_initializer(),
                                 trainable=trainable)
        out = tf.nn.conv2d(inputs, kernel, strides=[1, sh, sw, 1], padding=_padding(padding))
        if use_bias:
            bias = v1.get_variable("bias", [filters], dtype=inputs.dtype,
                                   initializer=bias_initializer or v1.zeros_initializer(),
                                   trainable=trainable)
            out = tf.nn.bias_add(out, bias)
        return activation(out) if activation is not None else out


def max_pooling2d(inputs, pool_size, strides, padding="valid", name=None):
    """The maximum over ``pool_size`` windows (``tf.layers.max_pooling2d``)."""
    tf = import_tensorflow()
    return tf.nn.max_pool2d(inputs, list(_pair("pool_size", pool_size)),
                            list(_pair("strides", strides)), _padding(padding), name=name)


def average_pooling2d(inputs, pool_size, strides, padding="valid", name=None):
    """The mean over ``pool_size`` windows (``tf.layers.average_pooling2d``)."""
    tf = import_tensorflow()
    return tf.nn.avg_pool2d(inputs, list(_pair("pool_size", pool_size)),
                            list(_pair("strides", strides)), _padding(padding), name=name)
