"""Early stopping on evaluation results, as ``tf.estimator.experimental``'s hooks.

``stop_if_no_decrease_hook(model, "loss", 1000)`` & co. return an
:class:`EarlyStoppingHook` to give ``train_spec(hooks=)``: while
``train_and_evaluate()`` trains, it reads the evaluations written to
``model_dir/eval`` (see :func:`pyhooks.hooks._eval_metrics.read_eval_metrics`)
and stops training when the rule holds; the final checkpoint is then evaluated
as usual. Same arguments, defaults and rules as TensorFlow's.
"""

from __future__ import annotations

import os
import warnings

from pyhooks import _logging
from pyhooks.errors import PyhooksWarning
from pyhooks.hooks._workers import worker_path
from pyhooks.hook import SessionRunArgs, SessionRunHook
from pyhooks.hooks._common import global_step_read
from pyhooks.hooks._eval_metrics import NoImprovement, ThresholdCrossed, eval_dir_of
from pyhooks.timer import SecondOrStepTimer, check_positive

__all__ = ["EarlyStoppingHook", "make_early_stopping_hook", "stop_if_higher_hook",
           "stop_if_lower_hook", "stop_if_no_decrease_hook", "stop_if_no_increase_hook"]


class EarlyStoppingHook(SessionRunHook):
    """Requests a stop when ``should_stop_fn()`` returns True; asks it every N seconds or steps.

    Asked after the first run, then whenever the period has passed (global steps
    or seconds). Several workers (an estimator under a multi-worker
    ``train_distribute``, an eager loop with a stop agreement): only the chief
    asks, and its request reaches every worker through the workers' stop
    agreement (:class:`pyhooks.distribute.StopAgreementHook`), so all of them
    stop after the same step. At the end, the rule of a ``stop_if_*_hook()`` that found no
    evaluation to act on (``train()`` alone, or checkpoints too rare) says so in a
    :class:`~pyhooks.errors.PyhooksWarning`.

    Args:
        should_stop_fn: a function of no arguments returning True to stop.
        run_every_secs: ask every this many seconds (default 60).
        run_every_steps: ask every this many global steps. Exactly one of the two
            (give ``run_every_secs=None`` with it).

    Raises:
        TypeError: ``should_stop_fn`` is not callable.
        ValueError: both periods, or neither, or one that is not positive.
    """

    def __init__(self, should_stop_fn, run_every_secs=60, run_every_steps=None):
        if not callable(should_stop_fn):
            raise TypeError(f"`should_stop_fn` must be a function, got {should_stop_fn!r}.")
        if (run_every_secs is None) == (run_every_steps is None):
            raise ValueError("Exactly one of `run_every_secs` and `run_every_steps` must be set, "
                             f"got run_every_secs={run_every_secs!r}, run_every_steps="
                             f"{run_every_steps!r} (give run_every_secs=None with steps).")
        self.should_stop_fn = should_stop_fn
        self._timer = SecondOrStepTimer(
            every_secs=check_positive("run_every_secs", run_every_secs, integer=False),
            every_steps=check_positive("run_every_steps", run_every_steps, integer=True))
        self._args = None

    def __repr__(self):
        return f"<EarlyStoppingHook: {self.should_stop_fn!r}>"

    def begin(self):
        self._timer.reset()
        read = global_step_read(type(self).__name__)
        probe = os.path.join("model_dir", "eval")
        # the chief (or a single process) decides; the others get its stop through the agreement
        self._args = SessionRunArgs(read) if worker_path(probe) == probe else None

    def before_run(self, run_context):
        return self._args

    def after_run(self, run_context, run_values):
        if self._args is None:
            return
        step = int(run_values.results) + 1  # the step this run reached
        if self._timer.should_trigger_for_step(step):
            self._timer.update_last_triggered_step(step)
            if self.should_stop_fn():
                _logging.info("Requesting early stopping at global step %d.", step)
                run_context.request_stop()

    def end(self, session):
        # a rule of stop_if_*_hook() that found no evaluation to act on says so (a PyhooksWarning:
        # an R warning in R), not silently trained to the end
        note = getattr(self.should_stop_fn, "unused_note", None)
        if note is not None and self._args is not None:  # the chief's
            text = note()
            if text is not None:
                warnings.warn(text, PyhooksWarning, stacklevel=2)


def make_early_stopping_hook(estimator, should_stop_fn, run_every_secs=60, run_every_steps=None):
    """An :class:`EarlyStoppingHook` for ``estimator``: stops when ``should_stop_fn()`` is True."""
    eval_dir_of(estimator, None, "make_early_stopping_hook")
    return EarlyStoppingHook(should_stop_fn, run_every_secs, run_every_steps)


def stop_if_higher_hook(estimator, metric_name, threshold, eval_dir=None, min_steps=0,
                        run_every_secs=60, run_every_steps=None):
    """Stops training once an evaluation's ``metric_name`` is higher than ``threshold``.

    Args:
        estimator: the estimator being trained (its ``model_dir/eval`` is read).
        metric_name: the metric to watch (``"accuracy"``, ``"auc"``...).
        threshold: the value to exceed.
        eval_dir: where the evaluations are (default ``model_dir/eval``;
            ``model_dir/eval_<name>`` for ``eval_spec(name=)``).
        min_steps: evaluations at global steps before this are not looked at.
        run_every_secs, run_every_steps: how often to read them (see :class:`EarlyStoppingHook`).

    Example:
        >>> hook = stop_if_higher_hook(model, "accuracy", 0.9, run_every_secs=None,
        ...                            run_every_steps=100)
        >>> train_and_evaluate(model, train_spec(train, max_steps=10000, hooks=[hook]),
        ...                    eval_spec(test, throttle_secs=0))
    """
    rule = ThresholdCrossed("stop_if_higher_hook", estimator, eval_dir, metric_name,
                            threshold, True, min_steps)
    return EarlyStoppingHook(rule, run_every_secs, run_every_steps)


def stop_if_lower_hook(estimator, metric_name, threshold, eval_dir=None, min_steps=0,
                       run_every_secs=60, run_every_steps=None):
    """Stops training once an evaluation's ``metric_name`` is lower than ``threshold``.

    Arguments as :func:`stop_if_higher_hook`'s.
    """
    rule = ThresholdCrossed("stop_if_lower_hook", estimator, eval_dir, metric_name,
                            threshold, False, min_steps)
    return EarlyStoppingHook(rule, run_every_secs, run_every_steps)


def stop_if_no_increase_hook(estimator, metric_name, max_steps_without_increase, eval_dir=None,
                             min_steps=0, run_every_secs=60, run_every_steps=None):
    """Stops training once ``metric_name`` has not increased for ``max_steps_without_increase``.

    The steps are counted from the evaluation with the highest value so far to a
    later evaluation; other arguments as :func:`stop_if_higher_hook`'s.
    """
    rule = NoImprovement("stop_if_no_increase_hook", estimator, eval_dir, metric_name,
                         max_steps_without_increase, True, min_steps, "max_steps_without_increase")
    return EarlyStoppingHook(rule, run_every_secs, run_every_steps)


def stop_if_no_decrease_hook(estimator, metric_name, max_steps_without_decrease, eval_dir=None,
                             min_steps=0, run_every_secs=60, run_every_steps=None):
    """Stops training once ``metric_name`` has not decreased for ``max_steps_without_decrease``.

    The steps are counted from the evaluation with the lowest value so far to a
    later evaluation; other arguments as :func:`stop_if_higher_hook`'s.

    Example:
        >>> hook = stop_if_no_decrease_hook(model, "loss", 1000)
    """
    rule = NoImprovement("stop_if_no_decrease_hook", estimator, eval_dir, metric_name,
                         max_steps_without_decrease, False, min_steps, "max_steps_without_decrease")
    return EarlyStoppingHook(rule, run_every_secs, run_every_steps)
