"""One step of hook calls, shared by the step loops (private); and how loops end.

:class:`HookedStep` is TensorFlow's ``_HookedSession.run`` cut in two around
the session call, so that the graph runner (:mod:`pyhooks.session`, which
also drives the eager backend, :mod:`pyhooks.eager`) and the Keras adapter
(:mod:`pyhooks.keras`, whose "session call" is Keras' batch) run the same
code::

    request = step.before(context, caller_fetches, feed_dict, options)
    values = <request.plan.flat's values>   # session.run(...), or from a batch's logs
    result = step.after(request, values, options, run_metadata)
    # if the session call raised instead: step.failed(request, error, session); raise

The functions below call the other hook methods with error notes, end a loop
(``end``/``after_error`` on every hook) and coordinate sessions that are not
TensorFlow's.
"""

from __future__ import annotations

import sys
from collections import namedtuple
from time import perf_counter

from pyhooks._backend import fetch_checker, span_sink, times_calls
from pyhooks._feeds import merge_requests
from pyhooks._plans import PlanCache
from pyhooks.errors import add_hook_note
from pyhooks.hook import SessionRunValues, hooks_by_method

__all__ = ["FETCH_ERRORS", "Coordinator", "HookedStep", "StepRequest", "call", "call_after_error",
           "call_end", "is_end_of_input", "is_preemption", "make_coordinator"]

FETCH_ERRORS = (TypeError, ValueError, LookupError)  # what a fetch nobody can fetch raises
_new_tuple = tuple.__new__  # a namedtuple without its Python-level __new__ (per step and hook)


# --------------------------------------------------------------------------- the step
class StepRequest(namedtuple("StepRequest", ["context", "args_list", "plan", "feed_dict",
                                             "options", "after_hooks", "sinks", "start"])):
    """What the hooks asked for in one step (made by :meth:`HookedStep.before`).

    Attributes:
        context: the step's ``SessionRunContext``.
        args_list: what each ``before_run`` returned (a ``SessionRunArgs`` or None).
        plan: the step's :class:`pyhooks._plans.StepPlan` (``plan.flat``: what to fetch).
        feed_dict, options: the caller's merged with the hooks' (None if nobody set any).
        after_hooks, sinks, start: the hooks to call in ``after()`` and, in a timed
            step, the span lists and the step's start.
    """

    __slots__ = ()


class HookedStep:
    """The hook calls of one step, for any loop (see the module docstring).

    Hooks that do not override ``before_run``/``after_run`` are never called for
    them; ``active`` is false when no hook overrides either (the driver may then
    skip the hooks' work altogether). ``stopped_by`` is the first hook whose
    ``after_run`` requested the stop that took effect (None: none did). A hook whose ``pyhooks_span_sink`` holds a
    list at the start of a step gets one span ``(hook_name, method, start, end)``
    (``time.perf_counter`` seconds) per hook call of that step, then one
    ``(*name, start, end)`` for the whole step.

    Args:
        hooks: the loop's hooks, in order.
        name: ``(who, what)`` of the whole step's span.
    """

    def __init__(self, hooks, name=("MonitoredSession", "run")):
        using = hooks_by_method(hooks)
        self.hooks = hooks
        self._before_hooks = using["before_run"]
        self._after_hooks = using["after_run"]
        self._positions = _after_positions(self._before_hooks, self._after_hooks)
        self._timing = [hook for hook in hooks if times_calls(hook)]
        self._name = name
        self._plans = PlanCache()
        self.active = bool(self._before_hooks or self._after_hooks)
        self.stopped_by = None  # the first hook whose after_run requested the loop's stop

    def new_session(self):
        """Forgets the plans: their callables belong to the session before."""
        self._plans.clear()

    def before(self, context, caller, feed_dict=None, options=None, fetch_only=None):
        """``before_run(context)`` on every hook, then the step's fetches planned and feeds merged.

        Args:
            context: the step's ``SessionRunContext``.
            caller: the caller's fetches (``None``: none).
            feed_dict, options: the caller's.
            fetch_only: if given, a hook asking for feeds or ``RunOptions`` is a
                ``ValueError`` with this message (Keras runs its batches itself).

        Returns:
            the :class:`StepRequest`.
        Raises:
            RuntimeError: two parties feed the same tensor.
        """
        if self._timing:
            sinks = [sink for sink in map(span_sink, self._timing) if sink is not None]
            if sinks:  # a timed step: its hooks stand in spans, and so does the whole step
                start = perf_counter()
                try:
                    return self._request(context, _timed(self._before_hooks, sinks),
                                         _timed(self._after_hooks, sinks), caller, feed_dict,
                                         options, fetch_only, sinks, start)
                except BaseException:
                    self._end_span(sinks, start)
                    raise
        return self._request(context, self._before_hooks, self._after_hooks, caller, feed_dict,
                             options, fetch_only, None, None)

    def _request(self, context, before, after, caller, feed_dict, options, fetch_only, sinks,
                 start):
        args_list = []
        try:
            for hook in before:
                args_list.append(hook.before_run(context))
        except BaseException as error:
            add_hook_note(error, hook, "before_run")
            raise
        fetches_list, merge = [], feed_dict is not None or options is not None
        for args in args_list:
            if args is None:
                fetches_list.append(None)
            else:
                fetches_list.append(args[0])
                if args[1] or args[2] is not None:
                    merge = True
        if merge:
            if fetch_only is not None:
                _refuse_feeds(before, args_list, fetch_only)
            feed_dict, options = merge_requests(args_list, feed_dict, options)
        return _new_tuple(StepRequest, (context, args_list, self._plans.get(caller, fetches_list),
                                        feed_dict, options, after, sinks, start))

    def after(self, request, values, options, run_metadata):
        """``after_run`` on every hook with exactly the results it asked for (from the plan's
        flat ``values``); returns the caller's results (``None`` if it asked for nothing)."""
        try:
            result, results = request.plan.results(values)
            positions = self._positions
            if positions is not None:
                results = [None if p < 0 else results[p] for p in positions]
            context = request.context
            stopper = None
            try:
                for hook, hook_results in zip(request.after_hooks, results):
                    hook.after_run(context, _new_tuple(SessionRunValues,
                                                       (hook_results, options, run_metadata)))
                    if context._stop_requested and stopper is None:  # noqa: SLF001
                        stopper = hook
            except BaseException as error:
                add_hook_note(error, hook, "after_run")
                raise
            if stopper is not None and context._stop_requested:  # noqa: SLF001
                self.stopped_by = getattr(stopper, "hook", stopper)  # (a timed step's stand-in)
            return result
        finally:
            if request.sinks:
                self._end_span(request.sinks, request.start)

    def failed(self, request, error, session):
        """The step's session call raised ``error`` (no ``after_run``): for one of
        :data:`FETCH_ERRORS`, a note names the first hook whose fetches ``session`` cannot
        fetch, checked alone without running anything."""
        if request.sinks:
            self._end_span(request.sinks, request.start)
        if not isinstance(error, FETCH_ERRORS) or getattr(error, "_pyhooks_noted", False):
            return  # (noted: raised in a hook, whose note says where)
        check = _fetch_check(session)
        if check is None:
            return
        for hook, args in zip(self._before_hooks, request.args_list):
            if args is None or args.fetches is None:
                continue
            try:
                check(args.fetches)
            except Exception:  # noqa: BLE001 - this hook's fetches are the ones
                position = next(i for i, h in enumerate(self.hooks) if h is hook)
                _note(error, f"pyhooks: `hooks[{position}]` ({_name(hook)}) asked for this "
                             "fetch in before_run()")
                return

    def _end_span(self, sinks, start):
        if sinks:
            span = (*self._name, start, perf_counter())
            for sink in sinks:
                sink.append(span)


def _refuse_feeds(hooks, args_list, message):
    """``ValueError(message)``, noted with the first hook asking for feeds or ``RunOptions``."""
    for hook, args in zip(hooks, args_list):
        if args is not None and (args[1] or (args[2] is not None and args[2].ByteSize())):
            error = ValueError(message)
            add_hook_note(error, hook, "before_run")
            raise error


def _after_positions(before_hooks, after_hooks):
    """For each ``after_run`` hook, the position of its results among the ``before_run`` hooks'
    (``-1``: it has no ``before_run``); ``None`` when the two lists are the same hooks."""
    where = {id(h): i for i, h in enumerate(before_hooks)}
    positions = [where.get(id(h), -1) for h in after_hooks]
    return None if positions == list(range(len(before_hooks))) else positions


def _fetch_check(session):
    """``check(fetches)``, raising what ``session`` would for them: the session's
    ``pyhooks_check_fetches`` (eager, Keras), else TensorFlow's fetch handler of its graph."""
    check = fetch_checker(session)
    graph = getattr(session, "graph", None)
    if check is not None or graph is None:
        return check
    try:
        from tensorflow.python.client.session import _FetchHandler
    except ImportError:  # pragma: no cover - depends on TensorFlow's layout
        return None
    return lambda fetches: _FetchHandler(graph, fetches, {})


class _TimedHook:
    """Stands for a hook during a timed step: records one span per call into the sinks."""

    def __init__(self, hook, sinks):
        self.hook = hook
        self.hook_name = _name(hook)
        self.sinks = sinks

    def _timed(self, method, *args):
        start = perf_counter()
        try:
            return getattr(self.hook, method)(*args)
        finally:
            span = (self.hook_name, method, start, perf_counter())
            for sink in self.sinks:
                sink.append(span)

    def before_run(self, run_context):
        return self._timed("before_run", run_context)

    def after_run(self, run_context, run_values):
        return self._timed("after_run", run_context, run_values)


def _timed(hooks, sinks):
    return [_TimedHook(hook, sinks) for hook in hooks]


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


def _name(hook):
    return getattr(hook, "hook_name", None) or type(hook).__name__


def _attach(error, hook, method, secondary, field):
    """Keeps ``secondary`` (raised in ``hook.<method>()`` after ``error``) on ``error``: a note,
    and the list ``error.<field>``."""
    _note(error, f"pyhooks: {_name(hook)}.{method}() also raised "
                 f"{type(secondary).__name__}: {secondary}")
    try:
        error.__dict__.setdefault(field, []).append(secondary)
    except AttributeError:
        pass


# --------------------------------------------------------------------------- the other calls
def call(hook, method, *args):
    """``hook.<method>(*args)``; an error gets a note naming the hook and the method."""
    try:
        return getattr(hook, method)(*args)
    except BaseException as error:
        add_hook_note(error, hook, method)
        raise


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
            else:
                _attach(first, hook, "end", error, "pyhooks_end_errors")
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
            _attach(error, hook, "after_error", secondary, "pyhooks_after_error")


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
