"""Evaluation results as estimators write them, and the rules early stopping applies to them.

``evaluate()`` (and so ``train_and_evaluate()``) writes each evaluation's metrics
as scalar summaries at its global step to ``model_dir/eval`` (``eval_<name>``);
:func:`read_eval_metrics` reads them back. The rules are the callables
``pyhooks.hooks.early_stopping`` checks periodically; they read the files at
every check (another process may be writing them).
"""

from __future__ import annotations

import glob
import math
import numbers
import os

from pyhooks import _logging
from pyhooks.timer import check_positive

__all__ = ["MissingMetricError", "NoImprovement", "ThresholdCrossed", "eval_dir_of",
           "read_eval_metrics"]


class MissingMetricError(KeyError):
    """An evaluation lacks the rule's metric: a KeyError (as TensorFlow's rules raised), whose
    text is its message (a plain KeyError's text is the message's repr, in quotes)."""

    def __str__(self):
        return str(self.args[0])


def read_eval_metrics(eval_dir):
    """``{global_step: {metric: value}}`` of every evaluation in ``eval_dir``, by step.

    A directory that does not exist (yet) or holds no event file gives ``{}``. A
    damaged event file (a write cut short) is read up to the damage, with a
    warning. Several evaluations at one step: the last one read wins.
    """
    import tensorflow as tf

    found = {}
    for path in sorted(glob.glob(os.path.join(os.fspath(eval_dir), "events.out.tfevents.*"))):
        try:
            for event in _events(tf, path):
                values = {v.tag: v.simple_value for v in event.summary.value
                          if v.HasField("simple_value")}
                if values:
                    found.setdefault(int(event.step), {}).update(values)
        except tf.errors.DataLossError as error:
            _logging.warning("Early stopping: the rest of %s cannot be read (%s); using what "
                             "came before.", path, error.message)
    return dict(sorted(found.items()))


def _events(tf, path):
    """The events of one file, without TensorFlow's deprecation notice for its reader."""
    from tensorflow.python.util import deprecation

    with deprecation.silence():
        yield from tf.compat.v1.train.summary_iterator(path)


def eval_dir_of(estimator, eval_dir, hook_name):
    """``eval_dir``, or ``estimator``'s ``model_dir/eval`` (checked, nothing read)."""
    model_dir = getattr(estimator, "model_dir", None)
    if not isinstance(model_dir, (str, os.PathLike)) or not callable(
            getattr(estimator, "evaluate", None)):
        raise TypeError(f"{hook_name}: `estimator` must be a pyhooks estimator "
                        f"(linear_regressor() & co., estimator()), got {estimator!r}.")
    if eval_dir is None:
        return os.path.join(os.fspath(model_dir), "eval")
    if not isinstance(eval_dir, (str, os.PathLike)) or not os.fspath(eval_dir):
        raise TypeError(f"{hook_name}: `eval_dir` must be a directory path or None, got "
                        f"{eval_dir!r}.")
    return os.fspath(eval_dir)


def _steps(name, value):
    return check_positive(name, value, integer=True, allow_none=False, allow_zero=True)


class _Rule:
    """What the rules share: where they read, which metric, from which step on.

    Raises:
        TypeError / ValueError: naming the hook and the argument.
    """

    def __init__(self, hook_name, estimator, eval_dir, metric_name, min_steps):
        eval_dir = eval_dir_of(estimator, eval_dir, hook_name)
        if not isinstance(metric_name, str) or not metric_name:
            raise TypeError(f"{hook_name}: `metric_name` must be a metric's name (\"loss\", "
                            f"\"accuracy\"...), got {metric_name!r}.")
        self.hook_name, self.eval_dir = hook_name, eval_dir
        self.metric_name, self.min_steps = metric_name, _steps("min_steps", min_steps)

    def values(self):
        """``[(step, value)]`` of the metric at steps from ``min_steps`` on."""
        out = []
        for step, metrics in read_eval_metrics(self.eval_dir).items():
            if step < self.min_steps:
                continue
            if self.metric_name not in metrics:
                raise MissingMetricError(
                    f"{self.hook_name}: the evaluation at step {step} in {self.eval_dir} has no "
                    f"metric \"{self.metric_name}\"; it has {', '.join(sorted(metrics))}.")
            out.append((step, metrics[self.metric_name]))
        return out

    def unused_note(self):
        """A warning's text if ``eval_dir`` holds no evaluation the rule looks at (none at a
        step from ``min_steps`` on), so it had nothing to act on; else None."""
        if any(step >= self.min_steps for step in read_eval_metrics(self.eval_dir)):
            return None
        since = f" from step {self.min_steps} on" if self.min_steps else ""
        return (f"{self.hook_name}: {self.eval_dir} has no evaluation{since}, so it could not "
                "stop training. It reads the evaluations that train_and_evaluate() writes after "
                "checkpoint saves (save_checkpoints_steps or save_checkpoints_secs of run_config() "
                "set how often; 600 seconds by default); train() alone writes none.")


class ThresholdCrossed(_Rule):
    """True once an evaluation's metric is above (``higher``) or below the threshold."""

    def __init__(self, hook_name, estimator, eval_dir, metric_name, threshold, higher,
                 min_steps):
        super().__init__(hook_name, estimator, eval_dir, metric_name, min_steps)
        if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real):
            raise TypeError(f"{hook_name}: `threshold` must be a number, got {threshold!r}.")
        if math.isnan(threshold):
            raise ValueError(f"{hook_name}: `threshold` must be a number, got NaN.")
        self.threshold, self.higher = float(threshold), higher

    def __call__(self):
        for step, value in self.values():
            if value > self.threshold if self.higher else value < self.threshold:
                _logging.info("Early stopping: at step %d, %s = %g is %s the threshold %g.",
                              step, self.metric_name, value,
                              "above" if self.higher else "below", self.threshold)
                return True
        return False

    def __repr__(self):
        side = "higher" if self.higher else "lower"
        return f"stop if {self.metric_name} is {side} than {self.threshold:g}"


class NoImprovement(_Rule):
    """True once the metric has not improved for ``max_steps`` steps of evaluations.

    Improving is a strictly higher (``higher``) or lower value than the best so
    far; the count is from the step of the best evaluation to a later one.
    """

    def __init__(self, hook_name, estimator, eval_dir, metric_name, max_steps, higher,
                 min_steps, max_name="max_steps"):
        super().__init__(hook_name, estimator, eval_dir, metric_name, min_steps)
        self.max_steps, self.higher = _steps(max_name, max_steps), higher

    def __call__(self):
        best = best_step = None
        for step, value in self.values():
            if best is None or (value > best if self.higher else value < best):
                best, best_step = value, step
            if step - best_step >= self.max_steps:
                _logging.info("Early stopping: %s has not %s for %d steps (best %g at step %d; "
                              "at most %d allowed).", self.metric_name,
                              "increased" if self.higher else "decreased", step - best_step,
                              best, best_step, self.max_steps)
                return True
        return False

    def __repr__(self):
        change = "increase" if self.higher else "decrease"
        return f"stop if no {change} in {self.metric_name} for {self.max_steps} steps"
