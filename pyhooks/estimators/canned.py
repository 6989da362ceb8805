"""The canned estimators and the module-level ``train`` / ``evaluate`` / ``predict`` (R's verbs).

Defaults are TensorFlow 1.x's: linear models start at zero weights and use
FTRL with learning rate ``min(0.2, 1/sqrt(number of columns))``; DNN models use
Adagrad with learning rate 0.05 and Glorot-uniform kernels. A named optimizer
('Adagrad', 'Adam', 'Ftrl', 'RMSProp', 'SGD') gets that learning rate; pass a
``tf.compat.v1.train.Optimizer`` (or a function returning one) to choose your own.
The training loss is the sum of the per-example losses of a batch.
"""

from __future__ import annotations

from pyhooks.estimators.base import Estimator
from pyhooks.estimators.heads import ClassificationHead, RegressionHead
from pyhooks.estimators.models import (
    DNNLinearCombinedModel,
    DNNModel,
    LinearModel,
    check_optimizer,
)

__all__ = ["dnn_classifier", "dnn_linear_combined_classifier", "dnn_linear_combined_regressor",
           "dnn_regressor", "evaluate", "linear_classifier", "linear_regressor", "predict",
           "train"]


def linear_regressor(feature_columns, model_dir=None, label_dimension=1, weight_column=None,
                     optimizer="Ftrl", sparse_combiner="sum", session_config=None, seed=None,
                     config=None):
    """A linear regression model (squared error), as ``tf.estimator.LinearRegressor``.

    Args:
        feature_columns: the model's inputs, e.g. ``feature_columns(column_numeric("drat"))``.
        model_dir: where checkpoints go; a new temporary directory if None
            (removed when the process ends: give one to keep the model). An
            estimator on a ``model_dir`` that holds checkpoints resumes from them.
        label_dimension: the number of response columns.
        weight_column: an input feature holding per-example weights.
        optimizer: 'Ftrl' (default), another name, or a ``tf.compat.v1.train.Optimizer``.
        sparse_combiner: accepted for compatibility (one value per example and column).
        session_config: a ``tf.compat.v1.ConfigProto`` for the estimator's sessions.
        seed: the graph-level random seed.
        config: a :func:`run_config`: its ``model_dir``, ``session_config`` and
            ``tf_random_seed`` where the arguments are None, and how often TensorBoard
            event files are written (``save_summary_steps``).

    Returns:
        an :class:`~pyhooks.estimators.base.Estimator`.

    Example:
        >>> data = load_mtcars()
        >>> lr = linear_regressor(feature_columns(column_numeric("drat")))
        >>> history = lr.train(input_fn(data, ["drat"], "mpg", batch_size=8), steps=4)
    """
    return Estimator(LinearModel(feature_columns, sparse_combiner), RegressionHead(label_dimension),
                     model_dir, weight_column, check_optimizer(optimizer), session_config, seed,
                     "linear_regressor", config=config)


def linear_classifier(feature_columns, model_dir=None, n_classes=2, weight_column=None,
                      label_vocabulary=None, optimizer="Ftrl", sparse_combiner="sum",
                      session_config=None, seed=None, config=None):
    """A linear classifier (logistic regression for two classes, softmax otherwise).

    Labels are class ids ``0..n_classes-1`` (whole numbers), or strings listed in
    ``label_vocabulary``. Other arguments as :func:`linear_regressor`.
    """
    return Estimator(LinearModel(feature_columns, sparse_combiner),
                     ClassificationHead(n_classes, label_vocabulary), model_dir, weight_column,
                     check_optimizer(optimizer), session_config, seed, "linear_classifier",
                     config=config)


def dnn_regressor(hidden_units, feature_columns, model_dir=None, label_dimension=1,
                  weight_column=None, optimizer="Adagrad", activation_fn="relu", dropout=None,
                  session_config=None, seed=None, config=None):
    """A feed-forward neural network regressor, as ``tf.estimator.DNNRegressor``.

    Args:
        hidden_units: layer sizes, e.g. ``[10, 10]``.
        feature_columns: dense columns only (wrap categorical ones in
            :func:`column_indicator` or :func:`column_embedding`).
        activation_fn: a name ('relu', 'tanh', 'sigmoid', 'elu', ...) or a function.
        dropout: the probability of dropping a hidden unit while training, or None.
        optimizer: 'Adagrad' (learning rate 0.05) by default.

    Other arguments as :func:`linear_regressor`.
    """
    return Estimator(DNNModel(hidden_units, feature_columns, activation_fn, dropout),
                     RegressionHead(label_dimension), model_dir, weight_column,
                     check_optimizer(optimizer), session_config, seed, "dnn_regressor",
                     config=config)


def dnn_classifier(hidden_units, feature_columns, model_dir=None, n_classes=2, weight_column=None,
                   label_vocabulary=None, optimizer="Adagrad", activation_fn="relu", dropout=None,
                   session_config=None, seed=None, config=None):
    """A feed-forward neural network classifier, as ``tf.estimator.DNNClassifier``.

    Arguments as :func:`dnn_regressor` and :func:`linear_classifier`.
    """
    return Estimator(DNNModel(hidden_units, feature_columns, activation_fn, dropout),
                     ClassificationHead(n_classes, label_vocabulary), model_dir, weight_column,
                     check_optimizer(optimizer), session_config, seed, "dnn_classifier",
                     config=config)


def dnn_linear_combined_regressor(linear_feature_columns=None, dnn_feature_columns=None,
                                  dnn_hidden_units=None, model_dir=None, label_dimension=1,
                                  weight_column=None, linear_optimizer="Ftrl",
                                  dnn_optimizer="Adagrad", dnn_activation_fn="relu",
                                  dnn_dropout=None, linear_sparse_combiner="sum",
                                  session_config=None, seed=None, config=None):
    """Wide & deep regression: a linear model plus a DNN, as ``tf.estimator.DNNLinearCombinedRegressor``.

    Args:
        linear_feature_columns: the wide part's columns (categorical ones included).
        dnn_feature_columns: the deep part's columns (dense only).
        dnn_hidden_units: the deep part's layer sizes, e.g. ``[10, 10]``.
        linear_optimizer: 'Ftrl' (default), another name, or an Optimizer, for the wide part.
        dnn_optimizer: 'Adagrad' (default), another name, or an Optimizer, for the deep part.
        dnn_activation_fn, dnn_dropout: as ``activation_fn`` and ``dropout`` of
            :func:`dnn_regressor`.

    Other arguments as :func:`linear_regressor`.
    """
    model = DNNLinearCombinedModel(linear_feature_columns, dnn_feature_columns, dnn_hidden_units,
                                   dnn_activation_fn, dnn_dropout, linear_optimizer,
                                   dnn_optimizer, linear_sparse_combiner)
    return Estimator(model, RegressionHead(label_dimension), model_dir, weight_column, None,
                     session_config, seed, "dnn_linear_combined_regressor",
                     config=config)


def dnn_linear_combined_classifier(linear_feature_columns=None, dnn_feature_columns=None,
                                   dnn_hidden_units=None, model_dir=None, n_classes=2,
                                   weight_column=None, label_vocabulary=None,
                                   linear_optimizer="Ftrl", dnn_optimizer="Adagrad",
                                   dnn_activation_fn="relu", dnn_dropout=None,
                                   linear_sparse_combiner="sum", session_config=None, seed=None,
                                   config=None):
    """Wide & deep classification, as ``tf.estimator.DNNLinearCombinedClassifier``.

    Arguments as :func:`dnn_linear_combined_regressor` and :func:`linear_classifier`.
    """
    model = DNNLinearCombinedModel(linear_feature_columns, dnn_feature_columns, dnn_hidden_units,
                                   dnn_activation_fn, dnn_dropout, linear_optimizer,
                                   dnn_optimizer, linear_sparse_combiner)
    return Estimator(model, ClassificationHead(n_classes, label_vocabulary), model_dir,
                     weight_column, None, session_config, seed, "dnn_linear_combined_classifier",
                     config=config)


def _estimator(object_, verb):
    if not isinstance(object_, Estimator):
        raise TypeError(f"{verb}() needs an estimator (linear_regressor() & co.) as `object`, got "
                        f"{object_!r} ({type(object_).__name__}).")
    return object_


def train(object, input_fn, steps=None, hooks=None, max_steps=None, saving_listeners=None):  # noqa: A002
    """``object.train(...)``, R's ``train(model, input_fn, steps, hooks)``; returns the History."""
    if saving_listeners is not None and not isinstance(saving_listeners, (list, tuple)):
        raise TypeError(f"`saving_listeners` must be a list of CheckpointSaverListener objects, "
                        f"got {saving_listeners!r} ({type(saving_listeners).__name__}).")
    return _estimator(object, "train").train(input_fn, steps=steps, hooks=hooks,
                                              max_steps=max_steps,
                                              saving_listeners=saving_listeners)


def evaluate(object, input_fn, steps=None, hooks=None, name=None,  # noqa: A002
             checkpoint_path=None):
    """``object.evaluate(...)``: a dict of metrics."""
    if name is not None and (not isinstance(name, str) or not name):
        raise TypeError(f"`name` must be a non-empty string or None, got {name!r}.")
    return _estimator(object, "evaluate").evaluate(input_fn, steps=steps, hooks=hooks, name=name,
                                                    checkpoint_path=checkpoint_path)


def predict(object, input_fn, hooks=None, predict_keys=None, as_dict=False,  # noqa: A002
            checkpoint_path=None):
    """``object.predict(...)``: a list of per-example dicts (or a dict of arrays)."""
    if not isinstance(as_dict, bool):
        raise TypeError(f"`as_dict` must be True or False, got {as_dict!r}.")
    if predict_keys is not None and not isinstance(predict_keys, (str, list, tuple)):
        raise TypeError(f"`predict_keys` must be a name, a list of names or None, got "
                        f"{predict_keys!r} ({type(predict_keys).__name__}).")
    return _estimator(object, "predict").predict(input_fn, hooks=hooks, predict_keys=predict_keys,
                                                  as_dict=as_dict, checkpoint_path=checkpoint_path)
