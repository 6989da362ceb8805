"""Names every layer of the estimators shares: modes, graph collections, the input's keys.

The layers, bottom to top (each imports only the ones below it)::

    modes, inputs            what the data is (input_fn(): columns checked once)
    schema                   the data contract recorded in model_dir and checked at each call
    pipeline                 numpy columns -> placeholders -> tf.data batches
    files, file_pipeline     input_fn() of CSV / TFRecord files, streamed through tf.data
    kept_session             the estimator's long-lived session as MonitoredSession sees it
    graph                    one mode's graph: input pipeline, model, saver, session
    base                     the Estimator: train / evaluate / predict with hooks
    custom, canned, export, training, distributed, config   built on the ones above
"""

from __future__ import annotations

from pyhooks.estimators.feature_columns import FLOAT, INT, STR, STR_OR_INT

__all__ = ["EVAL", "LABEL", "ModeKeys", "PREDICT", "TRAIN", "TRAINING_LOSS_COLLECTION", "WEIGHT",
           "feature_name", "is_label", "label_key", "mode_keys", "tf_dtype"]

TRAIN, EVAL, PREDICT = "train", "eval", "predict"
TRAINING_LOSS_COLLECTION = "pyhooks_training_loss"
LABEL, WEIGHT = "__label__", "__weight__"  # the batch's keys of the labels and example weights


def label_key(name):
    """The batch's key of the response column ``name`` when a model_fn's labels are a dict."""
    return f"{LABEL}/{name}"


def is_label(key):
    """Whether the batch's ``key`` holds labels (all of them, or one column of a dict)."""
    return key == LABEL or key.startswith(LABEL + "/")


class ModeKeys:
    """The ``mode`` a ``model_fn`` is called with (tf.estimator's values)."""

    TRAIN = "train"
    EVAL = "eval"
    PREDICT = "infer"


MODE_KEY = {TRAIN: ModeKeys.TRAIN, EVAL: ModeKeys.EVAL, PREDICT: ModeKeys.PREDICT}


def mode_keys():
    """``{"TRAIN": "train", "EVAL": "eval", "PREDICT": "infer"}``, R's ``mode_keys()``."""
    return {"TRAIN": ModeKeys.TRAIN, "EVAL": ModeKeys.EVAL, "PREDICT": ModeKeys.PREDICT}


def feature_name(key, kind):
    """The batch's key of input column ``key`` read as ``kind`` (a feature column's kind)."""
    return f"{key}:{kind}"


def tf_dtype(tf, kind):
    """The TensorFlow dtype of a feature column's kind of raw input."""
    return {FLOAT: tf.float32, INT: tf.int64, STR: tf.string, STR_OR_INT: tf.string}[kind]
