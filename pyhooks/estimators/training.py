"""``train_and_evaluate()`` with ``train_spec()`` / ``eval_spec()``, as ``tf.estimator``'s (run locally).

Locally, ``tf.estimator.train_and_evaluate`` trained up to ``max_steps`` and
evaluated after the checkpoints saved on the way (when ``throttle_secs`` had
passed since the last evaluation) and at the end. Here one process does the
same with the estimator's own loops: ``train()`` saves checkpoints as its
:func:`run_config` says (every 600 seconds unless ``save_checkpoints_steps`` or
``save_checkpoints_secs`` say otherwise), a saving listener runs ``evaluate()``
after a save when ``start_delay_secs`` have passed since training started and
``throttle_secs`` since the last evaluation began, and the final checkpoint is
always evaluated. Each evaluation writes its metrics to ``model_dir/eval``
(``eval_<name>``), as ``evaluate()`` does.
"""

from __future__ import annotations

import time

from pyhooks.estimators.inputs import check_input_fn
from pyhooks.hook import check_hooks
from pyhooks.hooks._history import History
from pyhooks.timer import check_positive

__all__ = ["EvalSpec", "TrainSpec", "eval_spec", "train_and_evaluate", "train_spec"]


class TrainSpec:
    """The training half of :func:`train_and_evaluate`."""

    def __init__(self, input_fn, max_steps=None, hooks=None):
        self.input_fn = check_input_fn(input_fn, functions=True)  # the estimator checks it
        self.max_steps = check_positive("max_steps", max_steps, integer=True)
        self.hooks = check_hooks(hooks)

    def __repr__(self):
        return f"TrainSpec(input_fn={self.input_fn!r}, max_steps={self.max_steps!r})"


class EvalSpec:
    """The evaluation half of :func:`train_and_evaluate`."""

    def __init__(self, input_fn, steps=100, name=None, hooks=None, start_delay_secs=120,
                 throttle_secs=600):
        self.input_fn = check_input_fn(input_fn, functions=True)  # the estimator checks it
        self.steps = check_positive("steps", steps, integer=True)
        if name is not None and (not isinstance(name, str) or not name):
            raise TypeError(f"`name` must be a non-empty string or None, got {name!r}.")
        self.name = name
        self.hooks = check_hooks(hooks)
        self.start_delay_secs = check_positive("start_delay_secs", start_delay_secs,
                                               integer=False, allow_none=False, allow_zero=True)
        self.throttle_secs = check_positive("throttle_secs", throttle_secs, integer=False,
                                            allow_none=False, allow_zero=True)

    def __repr__(self):
        return (f"EvalSpec(input_fn={self.input_fn!r}, steps={self.steps!r}, name={self.name!r}, "
                f"start_delay_secs={self.start_delay_secs!r}, "
                f"throttle_secs={self.throttle_secs!r})")


def train_spec(input_fn, max_steps=None, hooks=None):
    """What :func:`train_and_evaluate` trains on: ``input_fn`` up to global step ``max_steps``."""
    return TrainSpec(input_fn, max_steps, hooks)


def eval_spec(input_fn, steps=100, name=None, hooks=None, start_delay_secs=120,
              throttle_secs=600):
    """What :func:`train_and_evaluate` evaluates on, and how often.

    Args:
        input_fn: the evaluation input.
        steps: batches per evaluation (None: the whole input).
        name: the evaluation's name (its event files go to ``model_dir/eval_<name>``).
        hooks: hooks for every evaluation loop.
        start_delay_secs: no evaluation before this many seconds of training
            (except the final one).
        throttle_secs: evaluate after a checkpoint save only if this many seconds
            passed since the last evaluation began (0: after every save).
    """
    return EvalSpec(input_fn, steps, name, hooks, start_delay_secs, throttle_secs)


class _EvaluateAfterSaves:
    """A ``CheckpointSaverListener`` evaluating the checkpoints ``train()`` saves.

    As ``tf.estimator``'s listener for local training: the save at the start of
    ``train()`` is skipped (nothing trained yet in this call), a later save is
    evaluated when the delays allow it, and ``end()`` evaluates the final
    checkpoint unless it was just evaluated. ``clock`` is replaceable in tests.
    """

    def __init__(self, estimator, spec, clock=time.monotonic):
        self._estimator = estimator
        self._spec = spec
        self._clock = clock
        self.results = []  # the metrics of each evaluation, in order

    def begin(self):
        self._started = self._clock()
        self._last_eval = None  # when the last evaluation began
        self._last_step = None
        self._first_save = True

    def before_save(self, session, global_step_value):
        pass

    def after_save(self, session, global_step_value):
        if self._first_save:
            self._first_save = False
            return False
        now = self._clock()
        if now - self._started < self._spec.start_delay_secs:
            return False
        if self._last_eval is not None and now - self._last_eval < self._spec.throttle_secs:
            return False
        self._evaluate(global_step_value, now)
        return False

    def end(self, session, global_step_value):
        if global_step_value != self._last_step:
            self._evaluate(global_step_value, self._clock())

    def _evaluate(self, step, now):
        self._last_eval = now
        self._last_step = step
        self.evaluate()

    def evaluate(self):
        """Evaluates the latest checkpoint now, as the spec says (metrics kept in ``results``)."""
        spec = self._spec
        self.results.append(self._estimator.evaluate(spec.input_fn, steps=spec.steps,
                                                     name=spec.name, hooks=spec.hooks))


def _with_evaluations(training, evaluations):
    """The training history with an ``eval_<metric>`` column per metric: None where none ran.

    An evaluation at a step the training history has a row for fills that row;
    one at another step gets its own row (training columns None). Rows by step.
    None, not NaN, is "no value": an evaluation whose loss was NaN stays NaN.
    """
    names = sorted({key for metrics in evaluations for key in metrics} - {"global_step"})
    base = training.columns
    merged = History([*base[3:], *(f"eval_{name}" for name in names)])
    by_step = {}
    for metrics in evaluations:
        by_step[metrics["global_step"]] = metrics
    empty = dict.fromkeys(f"eval_{name}" for name in names)
    rows = []
    for row in training.rows():
        found = by_step.pop(row["steps"], None)
        evals = empty if found is None else {f"eval_{n}": found.get(n) for n in names}
        rows.append({**row, **evals})
    for step, metrics in by_step.items():
        row = dict.fromkeys(base)
        row["steps"] = step
        rows.append({**row, **{f"eval_{n}": metrics.get(n) for n in names}})
    for row in sorted(rows, key=lambda r: r["steps"]):
        merged.append(row)
    return merged


def train_and_evaluate(estimator, train_spec, eval_spec):
    """Trains ``estimator`` as ``train_spec`` says, evaluating as ``eval_spec`` says on the way.

    Evaluates after checkpoint saves (see the module docstring: ``run_config()``'s
    ``save_checkpoints_steps`` / ``save_checkpoints_secs`` and the spec's
    ``start_delay_secs`` / ``throttle_secs``) and always at the end.

    Returns:
        ``(metrics, history)``: the final evaluation's metrics (a dict, as
        ``evaluate()``), and the training history with the metrics of every
        evaluation as ``eval_<metric>`` columns (None in the rows of steps that
        were not evaluated, and in the training columns of a row only evaluated;
        ``to_pandas()`` makes them NaN; R's ``NA``).

    Example:
        >>> metrics, history = train_and_evaluate(
        ...     model, train_spec(train_input, max_steps=1000),
        ...     eval_spec(test_input, throttle_secs=60))
    """
    if not isinstance(train_spec, TrainSpec):
        raise TypeError(f"`train_spec` must be made by train_spec(), got {train_spec!r}.")
    if not isinstance(eval_spec, EvalSpec):
        raise TypeError(f"`eval_spec` must be made by eval_spec(), got {eval_spec!r}.")
    listener = _EvaluateAfterSaves(estimator, eval_spec)
    training = estimator.train(train_spec.input_fn, max_steps=train_spec.max_steps,
                               hooks=train_spec.hooks, saving_listeners=[listener])
    if not listener.results:  # max_steps was reached before: no loop, no listener call
        listener.evaluate()
    return listener.results[-1], _with_evaluations(training, listener.results)
