"""``train_and_evaluate()`` with ``train_spec()`` / ``eval_spec()``, as ``tf.estimator``'s (run locally).

Locally, ``tf.estimator.train_and_evaluate`` trained up to ``max_steps`` and
evaluated the checkpoints it saved on the way and at the end. Here one
process does the same with the estimator's own loops: ``train()`` up to
``max_steps`` (or until the training input ends), then ``evaluate()`` of the
final checkpoint; the metrics are returned.
"""

from __future__ import annotations

from pyhooks.hook import check_hooks
from pyhooks.timer import check_positive

__all__ = ["EvalSpec", "TrainSpec", "eval_spec", "train_and_evaluate", "train_spec"]


class TrainSpec:
    """The training half of :func:`train_and_evaluate`."""

    def __init__(self, input_fn, max_steps=None, hooks=None):
        self.input_fn = input_fn
        self.max_steps = check_positive("max_steps", max_steps, integer=True)
        self.hooks = check_hooks(hooks)

    def __repr__(self):
        return f"TrainSpec(input_fn={self.input_fn!r}, max_steps={self.max_steps!r})"


class EvalSpec:
    """The evaluation half of :func:`train_and_evaluate`."""

    def __init__(self, input_fn, steps=100, name=None, hooks=None):
        self.input_fn = input_fn
        self.steps = check_positive("steps", steps, integer=True)
        if name is not None and not isinstance(name, str):
            raise TypeError(f"`name` must be a string or None, got {name!r}.")
        self.name = name
        self.hooks = check_hooks(hooks)

    def __repr__(self):
        return f"EvalSpec(input_fn={self.input_fn!r}, steps={self.steps!r}, name={self.name!r})"


def train_spec(input_fn, max_steps=None, hooks=None):
    """What :func:`train_and_evaluate` trains on: ``input_fn`` up to global step ``max_steps``."""
    return TrainSpec(input_fn, max_steps, hooks)


def eval_spec(input_fn, steps=100, name=None, hooks=None):
    """What :func:`train_and_evaluate` evaluates on: ``steps`` batches (None: all) of ``input_fn``."""
    return EvalSpec(input_fn, steps, name, hooks)


def train_and_evaluate(estimator, train_spec, eval_spec):
    """Trains ``estimator`` as ``train_spec`` says, then evaluates it as ``eval_spec`` says.

    Returns:
        the evaluation's metrics (a dict, as ``evaluate()``).
    """
    if not isinstance(train_spec, TrainSpec):
        raise TypeError(f"`train_spec` must be made by train_spec(), got {train_spec!r}.")
    if not isinstance(eval_spec, EvalSpec):
        raise TypeError(f"`eval_spec` must be made by eval_spec(), got {eval_spec!r}.")
    estimator.train(train_spec.input_fn, max_steps=train_spec.max_steps, hooks=train_spec.hooks)
    return estimator.evaluate(eval_spec.input_fn, steps=eval_spec.steps, name=eval_spec.name,
                              hooks=eval_spec.hooks)
