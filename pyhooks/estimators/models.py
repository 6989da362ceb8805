"""Model bodies (linear, DNN) and optimizers, as TensorFlow 1.x's canned estimators build them.

Variable names follow TensorFlow's (``linear/linear_model/<column>/weights``,
``dnn/hiddenlayer_0/kernel``...), so checkpoints are easy to read. A linear
model keeps the weights of its dense columns in one matrix (one matmul and one
optimizer update a step instead of one per column); its checkpoints still hold
each column's weights under the column's name, as tf.estimator's do (see
:func:`saved_variables`).
"""

from __future__ import annotations

import json
import math
import numbers

from pyhooks.estimators.feature_columns import FeatureColumn, scope_name, tensorflow_column_hint
from pyhooks.estimators._sizes import check_fits_memory
from pyhooks.hooks._common import one_of
from pyhooks.timer import check_positive

__all__ = ["DNNLinearCombinedModel", "DNNModel", "LinearModel", "make_optimizer",
           "saved_variables"]

# the graph collection of the dense weight matrices, each as a JSON string
# [matrix variable's name, [[column's variable name, rows], ...]]: strings, so that a
# MetaGraph exported with the graph (a checkpoint hook's) keeps it without a warning
_DENSE_WEIGHTS = "pyhooks_dense_weights"

_OPTIMIZERS = {
    "adagrad": "AdagradOptimizer",
    "adam": "AdamOptimizer",
    "ftrl": "FtrlOptimizer",
    "rmsprop": "RMSPropOptimizer",
    "sgd": "GradientDescentOptimizer",
}


def check_optimizer(optimizer):
    """Validates ``optimizer`` at construction: a name, an Optimizer or a function returning one."""
    if isinstance(optimizer, str):
        if optimizer.lower() not in _OPTIMIZERS:
            raise ValueError(f"`optimizer` {optimizer!r} is not one of 'Adagrad', 'Adam', 'Ftrl', "
                             "'RMSProp', 'SGD' (or give a tf.compat.v1.train.Optimizer).")
        return optimizer
    if callable(optimizer) or hasattr(optimizer, "minimize"):
        return optimizer
    raise TypeError(f"`optimizer` must be a name, a tf.compat.v1.train.Optimizer or a function "
                    f"returning one, got {optimizer!r} ({type(optimizer).__name__}).")


def make_optimizer(tf, optimizer, learning_rate):
    """The optimizer object, built in the current graph."""
    if isinstance(optimizer, str):
        return getattr(tf.compat.v1.train, _OPTIMIZERS[optimizer.lower()])(
            learning_rate=learning_rate)
    if not hasattr(optimizer, "minimize") and callable(optimizer):
        optimizer = optimizer()
    if not hasattr(optimizer, "minimize"):
        raise TypeError(f"`optimizer` must give a tf.compat.v1.train.Optimizer, got {optimizer!r}.")
    return optimizer


def minimize(tf, optimizer, loss, var_list, finite=None):
    """``optimizer``'s update of ``var_list`` for ``loss``; with ``finite`` (a boolean
    tensor), a zero gradient where it is false, so that a batch whose loss is not finite
    changes nothing (Ftrl, Adagrad, SGD: not one weight; momentum optimizers: their
    momentum only). Cheaper than a ``tf.cond`` around the update, which would run the
    optimizer's kernels inside a function call at every step."""
    if finite is None:
        return optimizer.minimize(loss, var_list=var_list)
    pairs = []
    for gradient, variable in optimizer.compute_gradients(loss, var_list=var_list):
        if gradient is not None:
            if isinstance(gradient, tf.IndexedSlices):
                gradient = tf.IndexedSlices(
                    tf.where(finite, gradient.values, tf.zeros_like(gradient.values)),
                    gradient.indices, gradient.dense_shape)
            else:
                gradient = tf.where(finite, gradient, tf.zeros_like(gradient))
        pairs.append((gradient, variable))
    return optimizer.apply_gradients(pairs)


def check_columns(feature_columns, dense_only, who):
    if isinstance(feature_columns, FeatureColumn):
        feature_columns = [feature_columns]
    if not isinstance(feature_columns, (list, tuple)) or not feature_columns:
        raise ValueError(f"`feature_columns` must be a non-empty list of feature columns, got "
                         f"{feature_columns!r}.")
    for column in feature_columns:
        if not isinstance(column, FeatureColumn):
            raise TypeError(f"`feature_columns` must hold feature columns (column_*()), got "
                            f"{column!r} ({type(column).__name__})."
                            + tensorflow_column_hint(column))
        if dense_only and not column.is_dense:
            raise ValueError(f"{who} needs dense columns; {column.name!r} is categorical: wrap it "
                             "in column_indicator() or column_embedding().")
    names = [c.name for c in feature_columns]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"Duplicate feature column name(s): {dupes}.")
    scopes = {}
    for name in names:
        other = scopes.setdefault(scope_name(name), name)
        if other != name:
            raise ValueError(f"Feature columns {other!r} and {name!r} would share the variable "
                             f"names {scope_name(name)!r} in TensorFlow, which takes letters, "
                             "digits and '_.-/' only: rename one of the columns.")
    return sorted(feature_columns, key=lambda c: c.name)


class LinearModel:
    """``sum_i w_i x_i + b``; categorical columns get one weight per bucket (zeros at start)."""

    def __init__(self, feature_columns, sparse_combiner="sum"):
        self.columns = check_columns(feature_columns, False, "A linear model")
        if not one_of(sparse_combiner, ("sum", "mean", "sqrtn")):
            raise ValueError(f"`sparse_combiner` must be 'sum', 'mean' or 'sqrtn', got "
                             f"{sparse_combiner!r}.")
        self.sparse_combiner = sparse_combiner  # one id per example: all give the same result
        self.default_learning_rate = min(0.2, 1.0 / math.sqrt(len(self.columns)))

    def logits(self, tf, builder, units, training):
        v1 = tf.compat.v1
        zeros = v1.zeros_initializer()
        parts, dense, values, rows = [], [], [], []
        with v1.variable_scope("linear/linear_model"):
            for column in self.columns:
                with v1.variable_scope(scope_name(column.name)) as scope:
                    if not column.is_categorical:  # a block of the dense matrix (below)
                        dense.append(column)
                        values.append(builder.dense(column))
                        rows.append((scope.name + "/weights", column.dimension))
                    else:
                        weights = v1.get_variable("weights", [column.num_buckets, units],
                                                  initializer=zeros)
                        ids = builder.ids(column)
                        part = tf.gather(weights, tf.maximum(ids, 0))
                        if getattr(column, "can_miss", True):
                            part *= tf.cast(tf.expand_dims(ids >= 0, 1), tf.float32)
                        if hasattr(column, "id_weights"):  # a weighted categorical column
                            part *= tf.expand_dims(column.id_weights(builder), 1)
                        parts.append(part)
            bias = v1.get_variable("bias_weights", [units], initializer=zeros)
        if dense:
            # the dense columns' weights, one matrix (each column's rows in column order; out
            # of linear_model/, where no column's scope can meet it), and the columns side by
            # side: as a held batch gathered them, else transposed and joined along the batch
            # (a concat along the batch copies each column whole, one along the columns copies
            # them value by value: 4096 rows x 10 columns, ~0.2 ms a step)
            with v1.variable_scope("linear"):
                weights = v1.get_variable("dense_weights", [sum(n for _, n in rows), units],
                                          initializer=zeros)
            v1.add_to_collection(_DENSE_WEIGHTS, json.dumps([weights.op.name, rows]))
            block = builder.dense_block(dense)
            if block is not None:  # held columns, side by side as they were gathered
                parts.insert(0, tf.matmul(block, weights))
            else:
                values = tf.concat([tf.transpose(x) for x in values], 0)
                parts.insert(0, tf.matmul(values, weights, transpose_a=True))
        total = parts[0] if len(parts) == 1 else tf.add_n(parts)
        return tf.nn.bias_add(total, bias, name="logits")


_ACTIVATIONS = ("relu", "relu6", "elu", "selu", "tanh", "sigmoid", "softplus", "softsign",
                "leaky_relu", "swish", "gelu", "linear")


class DNNModel:
    """Fully connected hidden layers (Glorot-uniform kernels, zero biases), linear logits."""

    def __init__(self, hidden_units, feature_columns, activation_fn="relu", dropout=None):
        if isinstance(hidden_units, numbers.Real):
            hidden_units = [hidden_units]
        if not isinstance(hidden_units, (list, tuple)) or not hidden_units:
            raise ValueError(f"`hidden_units` must be a non-empty list of layer sizes, got "
                             f"{hidden_units!r}.")
        self.hidden_units = [check_fits_memory("hidden_units", check_positive(
            "hidden_units", u, integer=True, allow_none=False)) for u in hidden_units]
        self.columns = check_columns(feature_columns, True, "A DNN model")
        if isinstance(activation_fn, str):
            if activation_fn not in _ACTIVATIONS:
                raise ValueError(f"`activation_fn` must be a function or one of {_ACTIVATIONS}, "
                                 f"got {activation_fn!r}.")
        elif not callable(activation_fn):
            raise TypeError(f"`activation_fn` must be a function or a name, got {activation_fn!r}.")
        self.activation_fn = activation_fn
        self.activation_arg = "activation_fn"
        if dropout is not None:
            dropout = check_positive("dropout", dropout, integer=False, allow_zero=True)
            if dropout >= 1:
                raise ValueError(f"`dropout` must be in [0, 1), got {dropout!r}.")
        self.dropout = dropout
        self.default_learning_rate = 0.05

    def _activation(self, tf):
        fn = self.activation_fn
        if not isinstance(fn, str):
            def checked(x):
                out = fn(x)
                if not hasattr(out, "shape") or not hasattr(out, "dtype"):
                    raise TypeError(f"`{self.activation_arg}` must return a tensor (it is "
                                    f"applied to each hidden layer), {fn!r} returned "
                                    f"{out!r} ({type(out).__name__}).")
                return out
            return checked
        if fn == "linear":
            return lambda x: x
        return getattr(tf.nn, fn)

    def logits(self, tf, builder, units, training):
        v1 = tf.compat.v1
        glorot = v1.glorot_uniform_initializer()
        zeros = v1.zeros_initializer()
        activation = self._activation(tf)
        with v1.variable_scope("dnn"):
            with v1.variable_scope("input_from_feature_columns/input_layer"):
                net = builder.dense_block(self.columns)
                if net is None:
                    parts = [builder.dense(column) for column in self.columns]
                    net = parts[0] if len(parts) == 1 else tf.concat(parts, axis=1)
            for i, width in enumerate(self.hidden_units):
                with v1.variable_scope(f"hiddenlayer_{i}"):
                    kernel = v1.get_variable("kernel", [net.shape[1], width], initializer=glorot)
                    bias = v1.get_variable("bias", [width], initializer=zeros)
                    net = activation(tf.nn.bias_add(tf.matmul(net, kernel), bias))
                    if training and self.dropout:
                        net = tf.nn.dropout(net, rate=self.dropout)
            with v1.variable_scope("logits"):
                kernel = v1.get_variable("kernel", [net.shape[1], units], initializer=glorot)
                bias = v1.get_variable("bias", [units], initializer=zeros)
                return tf.nn.bias_add(tf.matmul(net, kernel), bias, name="logits")


def _column_list(columns, name):
    """``columns`` (None, one column, or a list or tuple of them) as a list."""
    if columns is None:
        return []
    if isinstance(columns, FeatureColumn):
        return [columns]
    if not isinstance(columns, (list, tuple)):
        raise TypeError(f"`{name}` must be a list of feature columns or None, got {columns!r} "
                        f"({type(columns).__name__}).")
    return list(columns)


class _renamed:
    """Re-raises a TypeError/ValueError of a part with the wide & deep argument names."""

    def __init__(self, names):
        self.names = names

    def __enter__(self):
        return self

    def __exit__(self, kind, error, traceback):
        if kind is None or not issubclass(kind, (TypeError, ValueError)) or len(error.args) != 1:
            return False
        text = str(error.args[0])
        for short, full in self.names.items():
            text = text.replace(f"`{short}`", f"`{full}`")
        if text == error.args[0]:
            return False
        error.args = (text,)
        return False


class DNNLinearCombinedModel:
    """Wide & deep: the sum of a linear model's and a DNN's logits, each with its own optimizer.

    Linear (wide) columns may be categorical; DNN (deep) columns must be dense.
    The linear part trains with ``linear_optimizer`` (FTRL, learning rate
    ``min(0.2, 1/sqrt(number of linear columns))``), the DNN with
    ``dnn_optimizer`` (Adagrad, 0.05), as ``tf.estimator.DNNLinearCombined*``.
    """

    def __init__(self, linear_feature_columns, dnn_feature_columns, dnn_hidden_units,
                 dnn_activation_fn="relu", dnn_dropout=None, linear_optimizer="Ftrl",
                 dnn_optimizer="Adagrad", linear_sparse_combiner="sum"):
        linear = _column_list(linear_feature_columns, "linear_feature_columns")
        dnn = _column_list(dnn_feature_columns, "dnn_feature_columns")
        if not linear and not dnn:
            raise ValueError("Either `linear_feature_columns` or `dnn_feature_columns` must be "
                             "given (both are empty).")
        linear_names = {"feature_columns": "linear_feature_columns",
                        "sparse_combiner": "linear_sparse_combiner", "optimizer": "linear_optimizer"}
        dnn_names = {"feature_columns": "dnn_feature_columns", "hidden_units": "dnn_hidden_units",
                     "activation_fn": "dnn_activation_fn", "dropout": "dnn_dropout",
                     "optimizer": "dnn_optimizer"}
        with _renamed(linear_names):
            self.linear = LinearModel(linear, linear_sparse_combiner) if linear else None
            self.linear_optimizer = check_optimizer(linear_optimizer)
        if dnn and dnn_hidden_units is None:
            raise ValueError("`dnn_hidden_units` must be given with `dnn_feature_columns`.")
        with _renamed(dnn_names):
            self.dnn = (DNNModel(dnn_hidden_units, dnn, dnn_activation_fn, dnn_dropout)
                        if dnn else None)
            if self.dnn is not None:
                self.dnn.activation_arg = "dnn_activation_fn"  # as its errors name it
            self.dnn_optimizer = check_optimizer(dnn_optimizer)
        self.columns = (self.linear.columns if self.linear else []) + (
            self.dnn.columns if self.dnn else [])
        self.default_learning_rate = None

    def logits(self, tf, builder, units, training):
        parts = [part.logits(tf, builder, units, training)
                 for part in (self.linear, self.dnn) if part is not None]
        return parts[0] if len(parts) == 1 else tf.add(parts[0], parts[1], name="logits")

    def minimize(self, tf, loss, finite=None):
        """One update per part, each with its optimizer on its own variables (see
        :func:`minimize` for ``finite``)."""
        v1 = tf.compat.v1
        updates = []
        for part, scope, optimizer in ((self.linear, "linear/", self.linear_optimizer),
                                       (self.dnn, "dnn/", self.dnn_optimizer)):
            if part is None:
                continue
            variables = [v for v in v1.trainable_variables() if v.name.startswith(scope)]
            with _renamed({"optimizer": scope[:-1] + "_optimizer"}):  # the argument given
                opt = make_optimizer(tf, optimizer, part.default_learning_rate)
            updates.append(minimize(tf, opt, loss, variables, finite))
        return tf.group(*updates)


def saved_variables(tf, variables):
    """``variables`` as a ``Saver`` saves them, each linear model's dense weight matrix
    (and its optimizer slots) as one variable per column, named as tf.estimator names
    them: ``linear/linear_model/<column>/weights`` (``.../weights/Ftrl``...)."""
    from tensorflow.python.training.saving import saveable_object

    class ColumnWeights(saveable_object.SaveableObject):
        """A matrix saved as its columns' row blocks, restored whole from them."""

        def __init__(self, variable, names, rows):
            value, start, specs = variable.read_value(), 0, []
            for name, n in zip(names, rows):
                specs.append(saveable_object.SaveSpec(value[start:start + n], "", name,
                                                      dtype=variable.dtype.base_dtype,
                                                      device=variable.device))
                start += n
            super().__init__(variable, specs, names[0])
            self.variable = variable

        def restore(self, restored_tensors, restored_shapes):
            return self.variable.assign(tf.concat(restored_tensors, 0), read_value=False)

    blocks = {}  # a matrix's variable name and its slots' ("<matrix>/Ftrl"...): column names
    for entry in tf.compat.v1.get_collection(_DENSE_WEIGHTS):
        matrix, rows = json.loads(entry)
        blocks[matrix] = rows
    out = []
    for variable in variables:
        name = variable.op.name
        matrix = next((m for m in blocks if name == m or name.startswith(m + "/")), None)
        if matrix is None:
            out.append(variable)
            continue
        rows = blocks[matrix]
        out.append(ColumnWeights(variable, [column + name[len(matrix):] for column, _ in rows],
                                 [n for _, n in rows]))
    return out
