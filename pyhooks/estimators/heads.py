"""Heads: labels, per-example loss, predictions and metrics of regressors and classifiers.

The per-example loss (shape ``[batch]``, times the example weight) is what goes
in the ``losses`` collection; the training loss is its sum over the batch
(TensorFlow 1.x canned estimators' ``SUM`` reduction). Labels are converted in
numpy when the input is prepared, so a bad label fails before training.
"""

from __future__ import annotations

import numpy as np

from pyhooks.estimators._sizes import check_fits_memory
from pyhooks.estimators.inputs import one_column
from pyhooks.estimators.pipeline import as_float32, first_fraction
from pyhooks.estimators.schema import label_ids
from pyhooks.timer import check_positive

__all__ = ["ClassificationHead", "RegressionHead"]


class RegressionHead:
    """Squared error; labels ``float32 [batch, label_dimension]``."""

    def __init__(self, label_dimension=1):
        self.label_dimension = check_positive("label_dimension", label_dimension, integer=True,
                                              allow_none=False)
        check_fits_memory("label_dimension", self.label_dimension)
        self.logits_dimension = self.label_dimension
        self.prediction_keys = ("predictions",)

    def label_dtype(self, tf):
        return tf.float32

    def label_shape(self):
        return [None, self.label_dimension]

    def labels(self, input_fn, levels=None):
        """``float32 [n, label_dimension]`` of the response columns (numbers only)."""
        names = input_fn.response
        stacked = []
        for name in names:
            values = input_fn.columns[name]
            if name in input_fn.factors or values.dtype.kind not in "biuf":
                what = "a factor" if name in input_fn.factors else f"strings such as {values[0]!r}"
                raise TypeError(f"Response column {name!r} must be numeric for a regressor, got "
                                f"{what}.")
            stacked.append(as_float32(f"Response column {name!r}", values, "a regressor")
                           .reshape(len(values), -1))
        width = sum(part.shape[1] for part in stacked)
        if width != self.label_dimension:
            raise ValueError(f"The estimator has label_dimension={self.label_dimension}, but the "
                             f"input's `response` holds {width} value(s) per example: {names}.")
        return np.concatenate(stacked, axis=1)

    def class_names(self, levels=None):
        return None  # a regressor has no classes

    def unweighted_loss(self, tf, labels, logits):
        return _squared_error(tf, labels, logits)

    def predictions(self, tf, logits):
        return {"predictions": logits}

    def metrics(self, tf, labels, logits, unweighted, weights, training_loss):
        m = tf.compat.v1.metrics
        return {
            "loss": m.mean(training_loss),
            "average_loss": m.mean(unweighted, weights=weights),
            "label/mean": m.mean(labels, weights=_expand(tf, weights, labels)),
            "prediction/mean": m.mean(logits, weights=_expand(tf, weights, logits)),
        }


# The two losses below are TensorFlow's with their gradients written out. TensorFlow derives
# a gradient op by op, and for a batch of unknown size each broadcasting op adds shape
# bookkeeping (BroadcastGradientArgs, Shape, Sum, Reshape): ~25 of the ~130 small ops of a
# linear model's step (bench/README.md, "What each mechanism is worth").


def _squared_error(tf, labels, logits):
    """``sum((logits - labels)**2, axis=1)`` of ``[batch, d]`` tensors; gradient 2 (logits -
    labels)."""

    @tf.custom_gradient
    def loss(predicted):
        difference = predicted - labels
        return tf.reduce_sum(tf.square(difference), axis=1), \
            lambda upstream: 2.0 * difference * tf.expand_dims(upstream, 1)

    return loss(logits)


def _logistic_loss(tf, labels, logits):
    """``tf.nn.sigmoid_cross_entropy_with_logits`` (0/1 ``labels``, the same shape as
    ``logits``) as ``softplus(logits) - logits * labels`` (TensorFlow's softplus is stable
    for large logits; its ``log1p(exp(-abs(x)))`` is made one unvectorized op by the
    graph optimizer: 80 us at batch 4096); gradient ``sigmoid(logits) - labels``."""

    @tf.custom_gradient
    def loss(x):
        value = tf.nn.softplus(x) - x * labels
        return value, lambda upstream: upstream * (tf.sigmoid(x) - labels)

    return loss(logits)


def _expand(tf, weights, like):
    if weights is None:
        return None
    return tf.broadcast_to(tf.expand_dims(weights, 1), tf.shape(like))


class ClassificationHead:
    """Softmax (or sigmoid for two classes) cross-entropy; labels ``int64 [batch]`` ids."""

    def __init__(self, n_classes=2, label_vocabulary=None):
        self.n_classes = check_positive("n_classes", n_classes, integer=True, allow_none=False)
        check_fits_memory("n_classes", self.n_classes)
        if self.n_classes < 2:
            raise ValueError(f"`n_classes` must be at least 2, got {n_classes!r}.")
        if label_vocabulary is not None:
            if not isinstance(label_vocabulary, (list, tuple)) or not all(
                    isinstance(v, str) for v in label_vocabulary):
                raise TypeError("`label_vocabulary` must be a list of strings, got "
                                f"{label_vocabulary!r}.")
            label_vocabulary = list(label_vocabulary)
            if len(label_vocabulary) != self.n_classes or len(set(label_vocabulary)) != len(
                    label_vocabulary):
                raise ValueError(f"`label_vocabulary` must hold n_classes={self.n_classes} "
                                 f"distinct strings, got {label_vocabulary!r}.")
        self.label_vocabulary = label_vocabulary
        self.binary = self.n_classes == 2
        self.logits_dimension = 1 if self.binary else self.n_classes
        keys = ["logits", "probabilities", "class_ids", "classes"]
        if self.binary:
            keys.insert(1, "logistic")
        self.prediction_keys = tuple(keys)

    def label_dtype(self, tf):
        return tf.int64

    def label_shape(self):
        return [None]

    def labels(self, input_fn, levels=None):
        """``int64 [n]`` class ids of the response.

        Labels (text, a factor) are matched by name: to ``label_vocabulary`` if
        given, else to ``levels`` (the factor's levels when the model was first
        trained). Numbers are class ids ``0..n_classes-1``.
        """
        names = input_fn.response
        if len(names) != 1:
            raise ValueError(f"A classifier needs one response column, got {names}.")
        name = names[0]
        values = one_column(input_fn.columns[name])
        if values.ndim != 1:
            raise ValueError(f"Response column {name!r} must hold one class per example, got "
                             f"{values.shape[1:]} values per example.")
        factor = input_fn.factors.get(name)
        if self.label_vocabulary is not None and (factor is not None or values.dtype.kind == "U"):
            return label_ids(input_fn, name, self.label_vocabulary, "label_vocabulary")
        if factor is not None or (levels is not None and values.dtype.kind == "U"):
            levels = factor.levels if levels is None else levels
            if len(levels) != self.n_classes:
                shown = ", ".join(map(repr, levels[:10])) + (", ..." if len(levels) > 10 else "")
                raise ValueError(
                    f"Response column {name!r} is a factor of {len(levels)} levels ({shown}), but "
                    f"the classifier has n_classes = {self.n_classes}: give n_classes = "
                    f"{len(levels)}, or drop the unused levels first (R: droplevels()).")
            return label_ids(input_fn, name, levels, "the levels the model was trained on")
        if values.dtype.kind == "U":
            raise TypeError(f"Response column {name!r} holds strings such as {values[0]!r}: "
                            "give `label_vocabulary` to the classifier, make it a factor, or "
                            "use class ids 0..n_classes-1.")
        if values.dtype.kind == "b":
            values = values.astype(np.int64)
        fraction = first_fraction(values)
        if fraction is not None:
            raise ValueError(f"Response column {name!r} must hold class ids (whole numbers), got "
                             f"{fraction!r}.")
        ids = values.astype(np.int64)
        bad = (ids < 0) | (ids >= self.n_classes)
        if bad.any():
            raise ValueError(f"Response column {name!r} must hold class ids in [0, "
                             f"{self.n_classes}) for n_classes={self.n_classes}, got "
                             f"{int(ids[bad][0])}.")
        return ids

    def class_names(self, levels=None):
        """The name of each class id: ``label_vocabulary``, else ``levels``, else ``"0"``, ``"1"``..."""
        if self.label_vocabulary is not None:
            return list(self.label_vocabulary)
        if levels is not None and len(levels) == self.n_classes:
            return [str(level) for level in levels]
        return [str(i) for i in range(self.n_classes)]

    def unweighted_loss(self, tf, labels, logits):
        if self.binary:
            labels = tf.cast(tf.expand_dims(labels, 1), tf.float32)
            return tf.reshape(_logistic_loss(tf, labels, logits), [-1])
        return tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)

    def predictions(self, tf, logits):
        if self.binary:
            logistic = tf.sigmoid(logits)
            return {"logits": logits, "logistic": logistic,
                    "probabilities": tf.concat([1.0 - logistic, logistic], axis=1),
                    "class_ids": tf.cast(logits > 0, tf.int64)}
        return {"logits": logits, "probabilities": tf.nn.softmax(logits),
                "class_ids": tf.expand_dims(tf.argmax(logits, axis=1), 1)}

    def metrics(self, tf, labels, logits, unweighted, weights, training_loss):
        m = tf.compat.v1.metrics
        predictions = self.predictions(tf, logits)
        class_ids = tf.reshape(predictions["class_ids"], [-1])
        result = {
            "loss": m.mean(training_loss),
            "average_loss": m.mean(unweighted, weights=weights),
            "accuracy": m.accuracy(labels, class_ids, weights=weights),
        }
        if self.binary:
            logistic = tf.reshape(predictions["logistic"], [-1])
            float_labels = tf.cast(labels, tf.float32)
            bool_labels = tf.cast(labels, tf.bool)
            label_mean = m.mean(float_labels, weights=weights)
            result.update({
                "precision": m.precision(bool_labels, tf.cast(class_ids, tf.bool), weights=weights),
                "recall": m.recall(bool_labels, tf.cast(class_ids, tf.bool), weights=weights),
                "auc": m.auc(bool_labels, logistic, weights=weights, curve="ROC",
                             summation_method="careful_interpolation"),
                "auc_precision_recall": m.auc(bool_labels, logistic, weights=weights, curve="PR",
                                              summation_method="careful_interpolation"),
                "label/mean": label_mean,
                "prediction/mean": m.mean(logistic, weights=weights),
                "accuracy_baseline": (tf.maximum(label_mean[0], 1.0 - label_mean[0]),
                                      label_mean[1]),
            })
        return result
