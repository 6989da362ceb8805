"""TensorFlow 1.x's ``tf.feature_column`` for ``model_fn``s (R: ``tf$feature_column``).

Every name is ``tf.compat.v1.feature_column``'s, except that :func:`input_layer`
also takes pyhooks' feature columns (``feature_columns(column_numeric(...))``), as
tfestimators' ``input_layer()`` passed its columns to TensorFlow's: a ``model_fn``
written ``tf$feature_column$input_layer(features, params$feature_columns)`` builds
the same input as :func:`pyhooks.estimators.input_layer`. TensorFlow's own columns
(``tf.feature_column.numeric_column(...)``) still go to TensorFlow's function.
"""

from __future__ import annotations

from pyhooks.estimators._quiet import import_tensorflow
from pyhooks.estimators.feature_columns import FeatureColumn

__all__ = ["input_layer"]

_TF_DEFAULTS = {"weight_collections": None, "trainable": True, "cols_to_vars": None,
                "cols_to_output_tensors": None}


def input_layer(features, feature_columns, weight_collections=None, trainable=True,
                cols_to_vars=None, cols_to_output_tensors=None):
    """TensorFlow's ``input_layer``; of pyhooks' columns, :func:`pyhooks.estimators.input_layer`.

    Raises:
        TypeError: pyhooks' columns mixed with TensorFlow's, or given with one of
            TensorFlow's other arguments (pyhooks' input layer has none of them).
    """
    given = {"weight_collections": weight_collections, "trainable": trainable,
             "cols_to_vars": cols_to_vars, "cols_to_output_tensors": cols_to_output_tensors}
    columns = [feature_columns] if isinstance(feature_columns, FeatureColumn) else feature_columns
    ours = isinstance(columns, (list, tuple)) and any(
        isinstance(c, FeatureColumn) for c in columns)
    if not ours:
        tf = import_tensorflow()
        return tf.compat.v1.feature_column.input_layer(features, feature_columns, **given)
    others = [c for c in columns if not isinstance(c, FeatureColumn)]
    if others:
        raise TypeError("`feature_columns` mixes pyhooks' columns (column_*()) with others, "
                        f"such as {others[0]!r}: make them all with pyhooks' column_*().")
    changed = [name for name, value in given.items() if value is not _TF_DEFAULTS[name]]
    if changed:
        raise TypeError(f"input_layer() of pyhooks' feature columns takes only `features` and "
                        f"`feature_columns`, got `{changed[0]}` too.")
    from pyhooks.estimators.custom import input_layer as pyhooks_input_layer

    return pyhooks_input_layer(features, list(columns))


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return getattr(import_tensorflow().compat.v1.feature_column, name)


def __dir__():
    return sorted(set(dir(import_tensorflow().compat.v1.feature_column)) | set(__all__))
