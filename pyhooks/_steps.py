"""What the three step loops share (private): calling hooks, errors, coordinators.

The graph runner (:mod:`pyhooks.session`), the eager backend (:mod:`pyhooks.eager`,
driven by that runner) and the Keras adapter (:mod:`pyhooks.keras`) call hooks
through these functions, so that every backend names a failing hook the same
way and ends a loop the same way.
"""

from __future__ import annotations

import sys

from pyhooks.errors import add_hook_note
from pyhooks.hook import SessionRunValues

__all__ = ["FETCH_ERRORS", "Coordinator", "after_positions", "call", "call_after_error",
           "call_after_run",
           "call_before_run", "call_end", "is_end_of_input", "is_preemption", "make_coordinator",
           "new_run_metadata", "new_run_options", "note_fetch_owner", "results_of_after_hooks"]

FETCH_ERRORS = (TypeError, ValueError, LookupError)  # what a fetch nobody can fetch raises
_new_tuple = tuple.__new__  # a namedtuple without its Python-level __new__ (per step and hook)


# --------------------------------------------------------------------------- errors
def _tf_errors():
    return sys.modules.get("tensorflow.python.framework.errors_impl")


def is_end_of_input(exc_type):
    """Whether ``exc_type`` ends a loop cleanly: ``StopIteration`` or ``OutOfRangeError``."""
    if exc_type is None:
        return False
    if issubclass(exc_type, StopIteration):
        return True
    tf_errors = _tf_errors()
    return tf_errors is not None and issubclass(exc_type, tf_errors.OutOfRangeError)


def is_preemption(error):
    """Whether ``error`` is one a new session may cure: ``AbortedError``, ``UnavailableError``."""
    tf_errors = _tf_errors()
    return tf_errors is not None and isinstance(error, (tf_errors.AbortedError,
                                                        tf_errors.UnavailableError))


def _note(error, text):
    try:
        error.add_note(text)
    except (AttributeError, TypeError):  # exceptions with __slots__ or C types
        pass


# --------------------------------------------------------------------------- hook calls
def call(hook, method, *args):
    """``hook.<method>(*args)``; an error gets a note naming the hook and the method."""
    try:
        return getattr(hook, method)(*args)
    except BaseException as error:
        add_hook_note(error, hook, method)
        raise


def call_before_run(hooks, context):
    """``[hook.before_run(context) for hook in hooks]``; an error names the hook."""
    args_list = []
    try:
        for hook in hooks:
            args_list.append(hook.before_run(context))
    except BaseException as error:
        add_hook_note(error, hook, "before_run")
        raise
    return args_list


def call_after_run(hooks, results, context, options, run_metadata):
    """``after_run`` on every hook with ``SessionRunValues(results[k], options, run_metadata)``."""
    try:
        for hook, result in zip(hooks, results):
            hook.after_run(context, _new_tuple(SessionRunValues, (result, options, run_metadata)))
    except BaseException as error:
        add_hook_note(error, hook, "after_run")
        raise


def after_positions(before_hooks, after_hooks):
    """For each ``after_run`` hook, the position of its results among the ``before_run`` hooks'
    (``-1``: it has no ``before_run``); ``None`` when the two lists are the same hooks."""
    where = {id(h): i for i, h in enumerate(before_hooks)}
    positions = [where.get(id(h), -1) for h in after_hooks]
    return None if positions == list(range(len(before_hooks))) else positions


def results_of_after_hooks(results, positions):
    """The before_run hooks' ``results`` in the after_run hooks' order (see :func:`after_positions`)."""
    if positions is None:
        return results
    return [None if p < 0 else results[p] for p in positions]


def call_end(hooks, session):
    """``end(session)`` on every hook, even after one of them raised.

    The first error is raised once every hook had its ``end()``; the others
    are attached to it (as notes and in ``error.pyhooks_end_errors``).
    """
    first = None
    for hook in hooks:
        try:
            call(hook, "end", session)
        except BaseException as error:  # noqa: BLE001 - raised below, never lost
            if first is None:
                first = error
                continue
            name = getattr(hook, "hook_name", None) or type(hook).__name__
            _note(first, f"pyhooks: {name}.end() also raised {type(error).__name__}: {error}")
            try:
                first.__dict__.setdefault("pyhooks_end_errors", []).append(error)
            except AttributeError:
                pass
    if first is not None:
        raise first


def call_after_error(hooks, session, error):
    """``after_error(session, error)`` on every hook, in order.

    An exception raised there never replaces ``error``: it is attached to it as
    a note and in ``error.pyhooks_after_error``, and the next hook still runs.
    """
    for hook in hooks:
        try:
            hook.after_error(session, error)
        except BaseException as secondary:  # noqa: BLE001 - kept as a note, never lost
            name = getattr(hook, "hook_name", None) or type(hook).__name__
            _note(error, f"pyhooks: {name}.after_error() also raised "
                         f"{type(secondary).__name__}: {secondary}")
            try:
                error.__dict__.setdefault("pyhooks_after_error", []).append(secondary)
            except AttributeError:
                pass


def note_fetch_owner(error, session, hooks, before_hooks, args_list):
    """Names, in a note on ``error``, the first hook whose fetches ``session`` cannot fetch.

    For an error of a step (one of :data:`FETCH_ERRORS`, not raised inside a
    hook). Each hook's fetches are checked alone, without running anything:
    through the session's ``pyhooks_check_fetches`` (eager, Keras), else
    TensorFlow's own fetch handler for the session's graph.
    """
    if getattr(error, "_pyhooks_noted", False):  # raised in a hook: its note says where
        return
    check = getattr(session, "pyhooks_check_fetches", None)
    graph = getattr(session, "graph", None)
    if check is None and graph is not None:
        try:
            from tensorflow.python.client.session import _FetchHandler
        except ImportError:  # pragma: no cover - depends on TensorFlow's layout
            return

        def check(fetches):
            _FetchHandler(graph, fetches, {})
    if check is None:
        return
    for hook, args in zip(before_hooks, args_list):
        if args is None or args.fetches is None:
            continue
        try:
            check(args.fetches)
        except Exception:  # noqa: BLE001 - this hook's fetches are the ones
            position = next(i for i, h in enumerate(hooks) if h is hook)
            name = getattr(hook, "hook_name", None) or type(hook).__name__
            _note(error, f"pyhooks: `hooks[{position}]` ({name}) asked for this fetch "
                         "in before_run()")
            return


# --------------------------------------------------------------------------- run options
def new_run_options():
    """An empty ``RunOptions`` (what TensorFlow hands ``after_run``), or ``None`` without TF."""
    config = sys.modules.get("tensorflow.core.protobuf.config_pb2")
    return None if config is None else config.RunOptions()


def new_run_metadata():
    """An empty ``RunMetadata``, or ``None`` without TensorFlow (never imports it)."""
    config = sys.modules.get("tensorflow.core.protobuf.config_pb2")
    return None if config is None else config.RunMetadata()


# --------------------------------------------------------------------------- coordinators
class Coordinator:
    """A minimal ``tf.train.Coordinator`` for sessions that are not TensorFlow's."""

    def __init__(self):
        self._stop = False
        self._error = None

    def request_stop(self, ex=None):
        if ex is not None and self._error is None and not self._stop:
            self._error = ex
        self._stop = True

    def should_stop(self):
        return self._stop

    def raise_requested_exception(self):
        if self._error is not None:
            raise self._error

    def join(self, threads=None, stop_grace_period_secs=120, ignore_live_threads=False):
        self.raise_requested_exception()


def make_coordinator(session):
    """TensorFlow's ``Coordinator`` (queue runners started) for a TF session, else :class:`Coordinator`."""
    if "tensorflow" in sys.modules and hasattr(session, "graph") and hasattr(session, "sess_str"):
        from tensorflow.python.training import coordinator, queue_runner_impl

        coord = coordinator.Coordinator(clean_stop_exception_types=[])
        if session.graph.get_collection(queue_runner_impl.ops.GraphKeys.QUEUE_RUNNERS):
            queue_runner_impl.start_queue_runners(sess=session, coord=coord)
        return coord
    return Coordinator()
