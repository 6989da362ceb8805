"""``LoggingTensorHook``: log tensor values every N steps or seconds, and/or at the end."""

from __future__ import annotations

import io
import inspect

import numpy as np

from pyhooks import _logging
from pyhooks.errors import HookSetupError
from pyhooks.hook import SessionRunArgs, SessionRunHook
from pyhooks.hooks._common import check_bool, current_backend, read_values
from pyhooks.hooks._lookup import named_element
from pyhooks.timer import NeverTriggerTimer, SecondOrStepTimer, check_positive

__all__ = ["LoggingTensorHook"]



def _takes_elapsed(formatter):
    """True if ``formatter`` takes ``(values, elapsed_secs)`` rather than ``(values)``."""
    try:
        params = inspect.signature(formatter).parameters.values()
    except (TypeError, ValueError):  # builtins without a signature
        return False
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    # Only two *required* positional parameters opt in: ``f(values, sep=", ")`` and
    # ``f(*args)`` (e.g. wrapped R functions) keep TensorFlow's one-argument call.
    return sum(p.kind in positional and p.default is p.empty for p in params) >= 2


def _as_graph_element(obj, graph):
    if not isinstance(obj, str):
        if getattr(obj, "graph", None) is not graph:
            raise ValueError(f"Passed {obj} should have graph attribute that is equal to "
                             f"current graph {graph}.")
        return obj
    return named_element(obj, graph)


class LoggingTensorHook(SessionRunHook):
    """Logs the values of tensors every N local steps, every N seconds, or at the end.

    Records go to the ``"pyhooks"`` logger at INFO; if logging is not
    configured at all, a stderr handler is attached so they are seen. The
    default line is ``"name = value, name = value"`` (dict keys sorted, list
    order kept) followed by ``" (0.123 sec)"`` since the previous line.

    Args:
        tensors: a dict ``{tag: tensor or name}``, a list of tensors or names,
            or one of them. Names are resolved in ``begin()`` (eager and Keras:
            step output names and variables; ``at_end`` logs the last step's values).
        every_n_iter: log every N runs of this session.
        every_n_secs: log at most every N seconds.
        at_end: also log once in ``end()``. Exactly one of ``every_n_iter`` /
            ``every_n_secs`` unless only ``at_end`` is set.
        formatter: ``f(values) -> str`` or ``f(values, elapsed_secs) -> str``
            (two required positional parameters select the second form);
            ``values`` maps tags to numpy values, ``elapsed_secs`` is None for
            the first line.

    Raises:
        ValueError: bad period combination or value, no tensors; in ``begin()``,
            a tensor of another graph or an ambiguous name.
        TypeError: non-callable ``formatter``, non-boolean ``at_end``.

    Example:
        >>> hook = LoggingTensorHook({"loss": loss, "step": global_step}, every_n_iter=10)
        >>> # INFO:pyhooks:loss = 0.25, step = 10 (0.042 sec)
    """

    def __init__(self, tensors, every_n_iter=None, every_n_secs=None, at_end=False,
                 formatter=None):
        at_end = check_bool("at_end", at_end)
        only_log_at_end = at_end and every_n_iter is None and every_n_secs is None
        if not only_log_at_end and (every_n_iter is None) == (every_n_secs is None):
            raise ValueError("either at_end and/or exactly one of every_n_iter and every_n_secs "
                             "must be provided.")
        try:
            every_n_iter = check_positive("every_n_iter", every_n_iter, integer=True)
        except ValueError as error:
            if isinstance(every_n_iter, (int, float)) and every_n_iter <= 0:
                # TensorFlow's words first (its tests match them), then pyhooks'
                raise ValueError(f"invalid every_n_iter={every_n_iter}: {error}") from None
            raise
        every_n_secs = check_positive("every_n_secs", every_n_secs, integer=False)
        self._log_at_end = check_bool("at_end", at_end)
        if formatter is not None and not callable(formatter):
            raise TypeError(f"`formatter` must be callable, got {formatter!r}.")
        if tensors is None:
            raise TypeError("`tensors` must be a dict, a list or a tensor (name), got None.")
        if not isinstance(tensors, (dict, list, tuple)):
            tensors = [tensors]
        for key, t in (tensors.items() if isinstance(tensors, dict) else enumerate(tensors)):
            if (not (isinstance(t, str) and t) and not isinstance(getattr(t, "name", None), str)
                    or isinstance(t, io.IOBase)):  # a file has a name too
                raise TypeError(f"`tensors` must be a dict, a list or a tensor (name), got "
                                f"{t!r} ({type(t).__name__}) at [{key!r}].")
        if isinstance(tensors, dict):
            self._tag_order = sorted(tensors)
        else:
            self._tag_order = [t if isinstance(t, str) else t.name for t in tensors]
            tensors = dict(zip(self._tag_order, tensors))
        if not tensors:
            raise ValueError("`tensors` must name at least one tensor, got none.")
        self._tensors = tensors
        self._formatter = formatter
        self._formatter_takes_elapsed = formatter is not None and _takes_elapsed(formatter)
        self._timer = (NeverTriggerTimer() if only_log_at_end else
                       SecondOrStepTimer(every_secs=every_n_secs, every_steps=every_n_iter))

    def begin(self):
        import tensorflow as tf

        _logging.ensure_visible_logging()
        self._timer.reset()
        self._iter_count = 0
        backend = current_backend()
        if backend is not None:  # eager / Keras: output names and variables
            self._current_tensors = {tag: backend.element(tensor, f"tensor {tag!r}",
                                                          "LoggingTensorHook")
                                     for tag, tensor in self._tensors.items()}
            return
        graph = tf.compat.v1.get_default_graph()
        self._current_tensors = {}
        for tag, tensor in self._tensors.items():
            try:
                self._current_tensors[tag] = _as_graph_element(tensor, graph)
            except KeyError as error:  # no such name (ambiguous names: TensorFlow's ValueError)
                raise HookSetupError(f"LoggingTensorHook: `tensors` {tag!r} is not a tensor of "
                                     f"the graph: {error}") from error

    def before_run(self, run_context):
        self._should_trigger = self._timer.should_trigger_for_step(self._iter_count)
        return SessionRunArgs(self._current_tensors) if self._should_trigger else None

    def after_run(self, run_context, run_values):
        if self._should_trigger:
            self._log_tensors(run_values.results)
        self._iter_count += 1

    def state_dict(self):
        """The iterations counted (see :mod:`pyhooks.hooks._hook_state`)."""
        return {"iter_count": self._iter_count}

    def load_state_dict(self, state):
        """Counts iterations on from those of ``state`` (an interrupted call resumed)."""
        self._iter_count = int(state["iter_count"])

    def end(self, session):
        if self._log_at_end:
            self._log_tensors(read_values(session, self._current_tensors))

    def _log_tensors(self, values):
        elapsed_secs, _ = self._timer.update_last_triggered_step(self._iter_count)
        with np.printoptions(suppress=True):
            if self._formatter is not None:
                args = (values, elapsed_secs) if self._formatter_takes_elapsed else (values,)
                _logging.info(self._formatter(*args))  # as TensorFlow: the text itself
                return
            line = ", ".join(f"{tag} = {values[tag]}" for tag in self._tag_order)
        if elapsed_secs is not None:
            _logging.info("%s (%.3f sec)", line, elapsed_secs)
        else:
            _logging.info("%s", line)
