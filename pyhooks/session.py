"""The hooked runner: ``MonitoredSession`` and friends, driving hooks around a session.

The runner touches the raw session only through ``run(fetches, feed_dict,
options, run_metadata)``, ``graph`` and ``close()``; sessions come from any
object with ``create_session()`` (TensorFlow's ``ChiefSessionCreator`` and
``WorkerSessionCreator`` are used as they are). See :mod:`pyhooks.hook` for the
call order.

Per step the runner asks every hook that overrides ``before_run`` for its
:class:`SessionRunArgs`, merges all fetches into one flat list in which every
graph element appears once, runs it in a single ``session.run`` call and hands
each requester back exactly the structure it asked for. With no hook taking
part in a step the caller's arguments go to ``session.run`` untouched.

Hook timings (for :class:`pyhooks.ProfilerHook`): a hook that has an attribute
``pyhooks_span_sink`` asks for them. When that attribute holds a list at the
start of a step (``None`` or anything else means no), the runner appends to it
one span ``(hook_name, method, start, end)`` (``time.perf_counter`` seconds) per
``before_run``/``after_run`` call of every hook in that step, and a last span
``("MonitoredSession", "run", start, end)`` for the whole step; other steps run
untimed. A runner without such a hook never looks (its per-step path is
unchanged).

Sessions that are not TensorFlow graphs (:mod:`pyhooks.eager`) take part through
two optional attributes. A session creator's ``pyhooks_hook_scope()`` is a
context manager entered around the hooks' ``begin()`` (their lookups of the
global step, the loss... are answered by that backend: see
:mod:`pyhooks.hooks._common`). A session's ``pyhooks_step_fetch`` is what the
runner fetches in place of a caller's ``None`` when hooks add fetches (for
sessions whose ``run(None)`` runs a step; its value in the results is ``None``).
"""

from __future__ import annotations

import contextlib
import logging
import sys
from functools import partial
from time import perf_counter

from pyhooks._codegen import make_function
from pyhooks._plans import (FetchMerger, PlanCache, by_signature, can_change, expression, rebuild,
                            signature, written_out)
from pyhooks.errors import add_hook_note
from pyhooks.hook import (SessionRunArgs, SessionRunContext, SessionRunValues, check_hooks,
                          context_class, fixed_args_attribute, hooks_by_method)

__all__ = [
    "USE_DEFAULT",
    "MonitoredSession",
    "MonitoredTrainingSession",
    "SingularMonitoredSession",
]

_log = logging.getLogger("pyhooks")

USE_DEFAULT = object()
_tuple_new = tuple.__new__  # builds SessionRunArgs/Values without namedtuple's slow __new__
_NO_ARGS = SessionRunArgs(None)
_NOTHING = SessionRunValues(None, None, None)
_EDITABLE = object()  # nobody's fetches: see _MonitoredSessionBase._fuse
_CALLABLE_CACHE_SIZE = 64


# --------------------------------------------------------------------------- feeds/options
def _feed_name(key):
    return getattr(key, "name", None) or str(key)


def _check_disjoint(current, incoming, message):
    common = set(current).intersection(incoming)
    if common:
        names = ", ".join(sorted(_feed_name(k) for k in common))
        raise RuntimeError(f"{message} Conflict(s): {names}")


def _merge_run_options(options, incoming):
    """Merges ``incoming`` into ``options`` (a fresh copy) as TensorFlow does."""
    options.trace_level = max(options.trace_level, incoming.trace_level)
    options.timeout_in_ms = max(options.timeout_in_ms, incoming.timeout_in_ms)
    options.inter_op_thread_pool = max(options.inter_op_thread_pool, incoming.inter_op_thread_pool)
    options.output_partition_graphs = max(options.output_partition_graphs,
                                          incoming.output_partition_graphs)
    options.debug_options.debug_tensor_watch_opts.extend(
        incoming.debug_options.debug_tensor_watch_opts)
    options.debug_options.reset_disk_byte_usage = (
        options.debug_options.reset_disk_byte_usage or incoming.debug_options.reset_disk_byte_usage)
    options.report_tensor_allocations_upon_oom = (
        options.report_tensor_allocations_upon_oom or incoming.report_tensor_allocations_upon_oom)


def _copy_options(options):
    from tensorflow.core.protobuf import config_pb2

    copy = config_pb2.RunOptions()
    if options is not None:
        copy.CopyFrom(options)
    return copy


def _new_run_metadata():
    from tensorflow.core.protobuf import config_pb2

    return config_pb2.RunMetadata()


# --------------------------------------------------------------------------- errors
def _tf_errors():
    tf_errors = sys.modules.get("tensorflow.python.framework.errors_impl")
    return tf_errors


def _is_end_of_input(exc_type):
    if exc_type is None:
        return False
    if issubclass(exc_type, StopIteration):
        return True
    tf_errors = _tf_errors()
    return tf_errors is not None and issubclass(exc_type, tf_errors.OutOfRangeError)


def _is_preemption(error):
    tf_errors = _tf_errors()
    return tf_errors is not None and isinstance(error, (tf_errors.AbortedError,
                                                        tf_errors.UnavailableError))


class _Coordinator:
    """A minimal coordinator for sessions that are not TensorFlow's."""

    def __init__(self):
        self._stop = False

    def request_stop(self, ex=None):
        self._stop = True

    def should_stop(self):
        return self._stop

    def join(self, threads=None, stop_grace_period_secs=120, ignore_live_threads=False):
        pass


def _make_coordinator(session):
    if "tensorflow" in sys.modules and hasattr(session, "graph") and hasattr(session, "sess_str"):
        from tensorflow.python.training import coordinator, queue_runner_impl

        coord = coordinator.Coordinator()
        graph = session.graph
        if graph.get_collection(queue_runner_impl.ops.GraphKeys.QUEUE_RUNNERS):
            queue_runner_impl.start_queue_runners(sess=session, coord=coord)
        return coord
    return _Coordinator()


def _call(hook, method, *args):
    try:
        return getattr(hook, method)(*args)
    except BaseException as error:
        add_hook_note(error, hook, method)
        raise


def call_before_run(hooks, context):
    """``[hook.before_run(context) for hook in hooks]``; an error names the hook."""
    args_list = []
    append = args_list.append
    try:
        for hook in hooks:
            append(hook.before_run(context))
    except BaseException as error:
        add_hook_note(error, hook, "before_run")
        raise
    return args_list


def call_after_run(hooks, picks, values, context, options=None, run_metadata=None):
    """``after_run`` on every hook, each with its results: ``values`` picked by its pick.

    ``picks`` are :class:`pyhooks._plans.StepPlan` picks (``None``: no results),
    or ``None`` when no hook fetched anything.
    An error names the hook.
    """
    nothing = (_NOTHING if options is None and run_metadata is None else  # immutable: shared
               _tuple_new(SessionRunValues, (None, options, run_metadata)))
    try:
        if picks is None:  # nobody fetched anything
            for hook in hooks:
                hook.after_run(context, nothing)
            return
        for hook, pick in zip(hooks, picks):
            if pick is None:
                hook.after_run(context, nothing)
            else:
                mine = values[pick] if type(pick) is int else pick(values)
                hook.after_run(context, nothing if mine is None else
                               _tuple_new(SessionRunValues, (mine, options, run_metadata)))
    except BaseException as error:
        add_hook_note(error, hook, "after_run")
        raise


# Unrolled hook calls (see pyhooks._codegen): a loop calling four hook classes
# costs about twice as much per call as one call site per hook. So a runner
# calls its fixed list of hooks through a function generated for that list.
_UNROLL_LIMIT = 32  # hooks; longer lists use the loops above


def before_run_caller(hooks):
    """``lambda context: call_before_run(hooks, context)``, one call site per hook."""
    hooks = tuple(hooks)
    if not hooks or len(hooks) > _UNROLL_LIMIT:
        return partial(call_before_run, hooks)
    lines = ["def before_run(context):", *_indent(_before_calls("h", hooks)),
             f"    return [{_names('r', len(hooks))}]"]
    return _generate(lines, "before_run", _hook_names("h", hooks))


def after_run_caller(hooks):
    """``partial(call_after_run, hooks)``, one call site per hook."""
    hooks = tuple(hooks)
    if not hooks or len(hooks) > _UNROLL_LIMIT:
        return partial(call_after_run, hooks)
    lines = ["def after_run(picks, values, context, options=None, run_metadata=None):",
             "    nothing = (NOTHING if options is None and run_metadata is None else",
             "               new(Values, (None, options, run_metadata)))",
             "    if picks is None:",
             "        picks = NO_PICKS"]
    lines += _indent(_calls("after_run", "h", [[
        f"pick = picks[{k}]",
        "if pick is None:",
        "    mine = nothing",
        "else:",
        "    mine = values[pick] if type(pick) is int else pick(values)",
        "    mine = nothing if mine is None else new(Values, (mine, options, run_metadata))",
        f"h{k}.after_run(context, mine)"] for k in range(len(hooks))]))
    return _generate(lines, "after_run", {**_hook_names("h", hooks),
                                          "NO_PICKS": (None,) * len(hooks)})


class FusedKept:
    """Fused step functions made for a runner, by the identity of the objects bound in them.

    Hooks that switch between a few sets of args switch between their
    functions, each made (compiled) once. Holds the objects: their ids stay theirs.
    """

    __slots__ = ("_made",)
    SIZE = 16

    def __init__(self):
        self._made = {}

    def get(self, objects, make):
        """The function made for ``objects`` (see :func:`fused_key`)."""
        key = tuple(map(id, objects))
        entry = self._made.get(key)
        if entry is None:
            if len(self._made) >= self.SIZE:
                self._made.clear()
            entry = self._made[key] = (make(), objects)
        return entry[0]

    def clear(self):
        self._made.clear()


def fused_key(fetches, plan, args_list):
    """The objects a fused step is made for (:class:`FusedKept`): the caller's fetches,
    the plan (it stands for the hooks' fetches) and the types of the hooks' args.

    Hooks that make new args alike at every step share one function, and so do
    structures (and names) built anew with the same signature, the caller's
    too (a plan is made for one signature of the caller's: it stands for
    them). Held by the cache, the plan keeps every leaf alive, so the ids in a
    fused step's signatures stay theirs.
    """
    caller = plan if by_signature(fetches) else fetches
    return [caller, plan, *map(type, args_list)]


def fusable(before_hooks, after_hooks):
    """Whether :func:`fused_calls` may be used for these hooks (lists of sensible length)."""
    return 0 < len(before_hooks) <= _UNROLL_LIMIT and len(after_hooks) <= _UNROLL_LIMIT


def fused_calls(before_hooks, after_hooks, plan, args_list, source=None):
    """Source lines of one planned step, bound to ``plan`` and ``args_list``.

    For steps whose hooks ask again what ``args_list`` asks (the very
    objects, or new args alike: :func:`pyhooks._plans.same_request`):

    - ``before`` calls every ``before_run`` (on ``context``) into ``r0, r1,
      ...`` (see :func:`_before_calls`);
    - ``check`` is a condition, true when one asked something else (the
      step is then not this plan's);
    - ``values`` computes the flat values: ``source``'s code inlined, given as
      ``(lines, names, items)`` (an eager backend's ``_values_source``), else
      ``vals = call()`` (``call``, the plan's callable, is for the caller to
      name); nothing for a direct plan;
    - ``result`` is the expression of the caller's result (``"None"`` if it
      fetched nothing);
    - ``after`` calls every ``after_run`` with its results rebuilt from the
      flat values by the plan's constant picks (no options, no run metadata).

    The generated functions' globals are ``names`` (see :func:`_generate`).

    Returns:
        ``(before, check, values, result, after, names)``
    """
    names = {**_hook_names("b", before_hooks), **_hook_names("a", after_hooks)}
    names.update((f"args{k}", args) for k, args in enumerate(args_list))
    flat, values = "vals", [] if plan.direct else ["vals = call()"]
    if source is not None:
        values, value_names, items = source
        if names.keys() & value_names.keys():  # pragma: no cover - a naming slip
            raise AssertionError(f"fused step: names collide: {names.keys() & value_names}")
        names.update(value_names)
        if all(map(written_out, [plan.shapes[0], *plan.shapes[1]])):
            flat = items  # each leaf's own expression
        else:  # a structure rebuilt by its pick needs them as a list
            values = [*values, f"vals = [{', '.join(items)}]"]
    result = "None" if plan.shapes[0] is None else expression(plan.shapes[0], flat, names)
    results = ["NOTHING" if shape is None else
               f"new(Values, ({expression(shape, flat, names)}, None, None))"
               for shape in plan.shapes[1]]
    after = _calls("after_run", "a", [[f"a{k}.after_run(context, {results[k]})"]
                                      for k in range(len(after_hooks))])
    check = " or ".join(_request_checks(args_list, names))
    return _before_calls("b", before_hooks), check, values, result, after, names


def _request_checks(args_list, names):
    """One condition per hook, true when its ``r<k>`` asks something other than ``args_list[k]``.

    Other than: of another type, with feeds or options, or fetches of another
    :func:`~pyhooks._plans.signature` (the very same object needs no more
    unless a list or dict in it may have been edited). Adds the names the
    conditions use to ``names``.
    """
    checks = []
    for k, args in enumerate(args_list):
        if args is None:
            checks.append(f"r{k} is not None")
            continue
        names.update({f"args_type{k}": type(args), f"fetches{k}": args[0],
                      f"signature{k}": signature(args[0]), "signature": signature})
        other = (f"type(r{k}) is not args_type{k} or r{k}[1] is not None or "
                 f"r{k}[2] is not None or ")
        if can_change(args[0]):  # a list or dict: edited in place, or built anew
            checks.append(f"({other}signature(r{k}[0]) != signature{k})")
        else:
            checks.append(f"(r{k} is not args{k} and ({other}(r{k}[0] is not fetches{k} and "
                          f"signature(r{k}[0]) != signature{k})))")
    return checks


def _before_calls(prefix, hooks):
    """Lines calling ``before_run(context)`` on hooks ``<prefix>0, ...`` into ``r0, ...``.

    For a hook whose ``before_run`` only returns an attribute (and may keep the
    context, see :func:`pyhooks.hook.returns_attribute`) they do that instead
    of the call.
    """
    calls = []
    for k, hook in enumerate(hooks):
        marked = fixed_args_attribute(hook)
        if marked is None:
            calls.append([f"r{k} = {prefix}{k}.before_run(context)"])
        else:
            name, keep_context = marked
            calls.append([*([f"{prefix}{k}.{keep_context} = context"] if keep_context else []),
                          f"r{k} = {prefix}{k}.{name}  # what its before_run does"])
    return _calls("before_run", prefix, calls)


def _calls(method, prefix, calls):
    """Lines calling ``method`` on hooks ``<prefix>0, <prefix>1, ...``: ``calls[k]`` are hook k's.

    An error gets a note naming the hook (``<prefix>[i]``) and propagates.
    """
    lines = ["try:"]
    for k, call in enumerate(calls):
        lines += [f"    i = {k}", *_indent(call)]
    return lines + ["except BaseException as error:",
                    f"    add_hook_note(error, {prefix}[i], {method!r})",
                    "    raise"]


def _indent(lines, depth=1):
    return ["    " * depth + line for line in lines]


def _names(prefix, count):
    return ", ".join(f"{prefix}{k}" for k in range(count))


def _hook_names(prefix, hooks):
    """Globals of generated code naming ``hooks``: ``<prefix>`` (all), ``<prefix>0``, ..."""
    hooks = tuple(hooks)
    return {prefix: hooks, **{f"{prefix}{k}": hook for k, hook in enumerate(hooks)}}


def _generate(lines, name, names):
    """The function ``name`` of ``lines``, with ``names`` and the helpers as its globals."""
    return make_function(lines, name, {"add_hook_note": add_hook_note, "NOTHING": _NOTHING,
                                       "new": _tuple_new, "Values": SessionRunValues, **names})


FETCH_ERRORS = (TypeError, ValueError, LookupError)  # what a fetch nobody can fetch raises


def note_fetch_owner(error, session, hooks, before_hooks, args_list):
    """Names, in a note on ``error``, the first hook whose fetches ``session`` cannot fetch.

    For an error of a step (one of :data:`FETCH_ERRORS`, not raised inside a
    hook): TensorFlow's message, or the backend's, names the fetch; the note
    says which hook asked for it (its position in ``hooks``). Each hook's
    fetches are checked alone, without running anything: through the
    session's ``pyhooks_check_fetches`` (eager, Keras), else TensorFlow's own
    fetch handler for the session's graph. Nothing found: no note.
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
            try:
                error.add_note(f"pyhooks: `hooks[{position}]` ({name}) asked for this fetch "
                               "in before_run()")
            except (AttributeError, TypeError):
                pass
            return


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
            try:
                error.add_note(f"pyhooks: {name}.after_error() also raised "
                               f"{type(secondary).__name__}: {secondary}")
                error.__dict__.setdefault("pyhooks_after_error", []).append(secondary)
            except (AttributeError, TypeError):
                pass


# --------------------------------------------------------------------------- runner
class _MonitoredSessionBase:
    """Runs hooks around a session; see :mod:`pyhooks.hook` for the contract."""

    def __init__(self, session_creator, hooks, should_recover, stop_grace_period_secs=120):
        self._hooks = check_hooks(hooks)
        using = hooks_by_method(self._hooks)
        self._after_create_hooks = using["after_create_session"]
        self._before_hooks = using["before_run"]
        self._after_hooks = using["after_run"]
        self._end_hooks = using["end"]
        self._error_hooks = using["after_error"]
        self._step_hooks = bool(self._before_hooks or self._after_hooks)
        self._plans = PlanCache(self._before_hooks, self._after_hooks)
        self._call_before = before_run_caller(self._before_hooks)
        self._call_after = after_run_caller(self._after_hooks)
        self._fused = self._fused_fetches = self._fused_signature = None  # see _fuse
        self._fused_made = FusedKept()
        self._span_hooks = [h for h in self._hooks if hasattr(h, "pyhooks_span_sink")]
        self._fusable = not self._span_hooks and fusable(self._before_hooks, self._after_hooks)
        if self._span_hooks:  # shadows the method for this runner only: others pay nothing
            self._hooked_run = self._span_aware_run
            self._timed = None
        self._should_recover = should_recover
        self._stop_grace_period_secs = stop_grace_period_secs
        self._stop = False
        self._sess = None
        self._coord = None
        self._closed = False
        if session_creator is None:
            from tensorflow.python.training.monitored_session import ChiefSessionCreator

            session_creator = ChiefSessionCreator()
        self._creator = session_creator
        scope = getattr(session_creator, "pyhooks_hook_scope", None)
        try:
            with scope() if scope is not None else contextlib.nullcontext():
                for hook in using["begin"]:
                    _call(hook, "begin")
            self._create_session()
        except BaseException as error:
            self._fail(error)
            raise

    # -- session lifetime
    def _create_session(self):
        while True:
            try:
                sess = self._creator.create_session()
                break
            except Exception as error:
                if not (self._should_recover and _is_preemption(error)):
                    raise
                _log.info("An error was raised while a session was being created: %s. "
                          "Retrying.", type(error).__name__)
        self._sess = sess
        self._callables = {}
        self._plans.clear()  # their callables belong to the old session
        self._fused = None
        self._fused_made.clear()
        self._coord = _make_coordinator(sess)
        for hook in self._after_create_hooks:
            _call(hook, "after_create_session", sess, self._coord)

    def _close_raw(self):
        sess, coord = self._sess, self._coord
        self._sess = None
        self._coord = None
        try:
            if coord is not None:
                coord.request_stop()
                coord.join(stop_grace_period_secs=self._stop_grace_period_secs,
                           ignore_live_threads=True)
        finally:
            if sess is not None:
                sess.close()

    def _fail(self, error):
        """Ends the loop after ``error``: after_error on every hook, close, no end()."""
        if self._closed:
            return
        self._closed = True
        call_after_error(self._error_hooks, self._sess, error)
        try:
            self._close_raw()
        except Exception as secondary:  # noqa: BLE001 - the original error wins
            try:
                error.add_note(f"pyhooks: closing the session also raised {secondary!r}")
            except (AttributeError, TypeError):
                pass

    def close(self):
        """Ends the loop normally: ``end()`` on every hook, then closes the session."""
        if self._closed:
            return
        self._closed = True
        try:
            for hook in self._end_hooks:
                _call(hook, "end", self._sess)
        finally:
            self._close_raw()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None or _is_end_of_input(exc_type):
            self.close()
            return exc_type is not None
        self._fail(exc)
        return False

    # -- state
    @property
    def graph(self):
        return self._sess.graph if self._sess is not None else None

    def should_stop(self):
        return self._stop or self._sess is None or self._coord.should_stop()

    def raw_session(self):
        """The underlying session; its ``run`` triggers no hooks."""
        return self._sess

    _tf_sess = raw_session

    # -- stepping
    def run(self, fetches=None, feed_dict=None, options=None, run_metadata=None):
        """Runs one step: the caller's fetches plus every hook's, in one ``session.run``.

        ``fetches=None`` is for sessions where it means "one step" (the eager
        backend); a TensorFlow graph session refuses it, as ``Session.run`` does.

        Returns:
            exactly what ``session.run(fetches, ...)`` would return.
        Raises:
            RuntimeError: if a stop was already requested, or two parties feed
                the same tensor.
        """
        if self._stop:
            raise RuntimeError("Run called even after should_stop requested.")
        if self._sess is None:
            raise RuntimeError("Run called on a closed MonitoredSession.")
        while True:
            try:
                fused = self._fused
                if (fused is not None and feed_dict is None and options is None
                        and run_metadata is None and (
                            fetches is self._fused_fetches or self._fused_signature is not None
                            and signature(fetches) == self._fused_signature)):
                    return fused(fetches)
                if not self._step_hooks:
                    return self._sess.run(fetches, feed_dict=feed_dict, options=options,
                                          run_metadata=run_metadata)
                return self._hooked_run(fetches, feed_dict, options, run_metadata)
            except Exception as error:
                if not (self._should_recover and _is_preemption(error)):
                    raise
                _log.info("Session was aborted (%s); creating a new one and retrying the step.",
                          type(error).__name__)
                try:
                    self._close_raw()
                except Exception:  # noqa: BLE001 - the old session is gone anyway
                    pass
                self._create_session()

    def _hooked_run(self, fetches, feed_dict, options, run_metadata):
        context = SessionRunContext(
            _NO_ARGS if fetches is None and feed_dict is None and options is None else
            _tuple_new(SessionRunArgs, (fetches, feed_dict, options)), self._sess)
        return self._after_before_run(context, self._call_before(context), fetches, feed_dict,
                                      options, run_metadata)

    def _after_before_run(self, context, args_list, fetches, feed_dict, options, run_metadata):
        """The rest of a step once the hooks' ``before_run`` gave ``args_list``."""
        sess = self._sess
        if not any(args_list):  # no hook adds anything: the caller's call goes out untouched
            result = sess.run(fetches, feed_dict=feed_dict, options=options,
                              run_metadata=run_metadata)
            values, picks = (), None
        else:  # through the step's plan (see pyhooks._plans), else merged afresh
            try:
                plan = None
                if not feed_dict and options is None and run_metadata is None:
                    caller = (fetches if fetches is not None else
                              getattr(sess, "pyhooks_step_fetch", None))
                    if caller is not None:
                        plan = self._plans.get(caller, args_list)
                        if self._plans.stable and self._fusable and feed_dict is None and (
                                plan.direct or plan.call is not None):
                            self._fuse(plan, args_list, fetches)
                if plan is None:  # hooks feed or set options (or the caller does)
                    result, values, options, run_metadata = self._merged_run(
                        fetches, feed_dict, options, run_metadata, args_list)
                    picks = self._plans.positions
                elif plan.direct:  # no hook fetches anything
                    result, values, picks = sess.run(fetches), (), plan.after_picks
                else:
                    call = plan.call
                    values = call() if call is not None else self._plan_values(plan, sess)
                    pick, picks = plan.caller, plan.after_picks
                    result = values[pick] if type(pick) is int else pick(values)
            except FETCH_ERRORS as error:
                note_fetch_owner(error, sess, self._hooks, self._before_hooks, args_list)
                raise
        self._call_after(picks, values, context, options, run_metadata)
        if context._stop_requested:
            self._stop = True
        return result

    def _merged_run(self, fetches, feed_dict, options, run_metadata, args_list):
        """One step with the hooks' feeds and options merged in (no plan: they may change).

        Returns:
            ``(result, results, options, run_metadata)``: the caller's result, the
            hooks' results by before_run position (then one ``None``) and the
            options and metadata the step ran with.
        """
        sess = self._sess
        requests = []
        hook_feeds = None
        merged_options = None
        for position, args in enumerate(args_list):
            if args is None:
                continue
            hook_fetches, hook_feed, hook_options = args
            if hook_fetches is not None:
                requests.append((position, hook_fetches))
            if hook_feed:
                if hook_feeds is None:
                    hook_feeds = dict(hook_feed)
                else:
                    _check_disjoint(hook_feeds, hook_feed, "Same tensor is fed by two hooks.")
                    hook_feeds.update(hook_feed)
            if hook_options is not None:
                if merged_options is None:
                    merged_options = _copy_options(options)
                _merge_run_options(merged_options, hook_options)
        if hook_feeds is not None:
            if feed_dict:
                _check_disjoint(feed_dict, hook_feeds,
                                "Same tensor is fed by a SessionRunHook and user.")
                hook_feeds.update(feed_dict)
            feed_dict = hook_feeds
        if merged_options is not None:
            options = merged_options
            if run_metadata is None:
                run_metadata = _new_run_metadata()
        if not requests:
            result = sess.run(fetches, feed_dict=feed_dict, options=options,
                              run_metadata=run_metadata)
            return result, [None] * (len(args_list) + 1), options, run_metadata
        merger = FetchMerger()
        caller_plan = merger.add(fetches if fetches is not None else
                                 getattr(sess, "pyhooks_step_fetch", None))
        plans = [(position, merger.add(value)) for position, value in requests]
        if feed_dict or options is not None or run_metadata is not None:
            values = sess.run(merger.flat, feed_dict=feed_dict, options=options,
                              run_metadata=run_metadata)
        else:
            values = self._run_flat(sess, merger.flat)
        results = [None] * (len(args_list) + 1)
        for position, plan in plans:
            results[position] = rebuild(plan, values)
        return rebuild(caller_plan, values), results, options, run_metadata

    def _fuse(self, plan, args_list, fetches):
        """From the next step on, ``run(fetches)`` is one generated function for ``plan``.

        Hooks asking the same step after step (the same args objects, or new
        args alike, what :class:`PlanCache` found twice in a row) run through a
        function made for them (:func:`fused_calls`): the before_run calls, the
        plan's values, the after_run calls with constant picks, and the stop. A
        hook that asks anything else takes that step back to the general path.
        Hooks that switch between a few requests switch between their
        functions (kept, not made again).

        The caller's fetches are the very object (a leaf), or a structure or
        name of the same :func:`~pyhooks._plans.signature` (``run([train_op,
        loss])`` builds a new list at every step, and may edit a kept one in
        place; a name from R is a new string at every call).
        """
        self._fused = self._fused_made.get(fused_key(fetches, plan, args_list),
                                           lambda: self._fused_step(plan, args_list, fetches))
        # the very object only if it cannot change (a leaf, or tuples of leaves)
        self._fused_fetches = _EDITABLE if can_change(fetches) else fetches
        self._fused_signature = signature(fetches) if by_signature(fetches) else None

    def _fused_step(self, plan, args_list, fetches):
        """The function :meth:`_fuse` installs."""
        # the values: the plan's callable, or its code inlined (an eager session's)
        source = None if plan.direct else getattr(plan.call, "pyhooks_source", None)
        before, check, values, result, after, names = fused_calls(
            self._before_hooks, self._after_hooks, plan, args_list, source)
        names.update(runner=self, sess=self._sess, FETCHES=fetches, call=plan.call,
                     Context=context_class(_NO_ARGS if fetches is None else
                                           SessionRunArgs(fetches), self._sess),
                     NewContext=SessionRunContext, NewArgs=SessionRunArgs)
        lines = ["def fused_step(fetches):",  # FETCHES, or a structure of its signature
                 "    context = (Context() if fetches is FETCHES else",
                 "               NewContext(new(NewArgs, (fetches, None, None)), sess))",
                 "    context._stop_requested = False", *_indent(before),
                 f"    if {check}:  # not this plan's step",
                 "        return runner._after_before_run(",
                 f"            context, [{_names('r', len(self._before_hooks))}],"
                 " fetches, None, None, None)"]
        if plan.direct:
            lines.append("    result = sess.run(fetches)")
        else:
            lines += [*_indent(values), f"    result = {result}"]
        lines += [*_indent(after), "    if context._stop_requested:",
                  "        runner._stop = True", "    return result"]
        return _generate(lines, "fused_step", names)

    def _plan_values(self, plan, sess):
        """The flat values of ``plan``'s step; the plan keeps the callable once there is one."""
        values = self._run_flat(sess, plan.flat)
        entry = self._callables.get(tuple(map(id, plan.flat)))
        if entry is not None and entry[1]:
            plan.call = entry[1]
        return values

    def _span_aware_run(self, fetches, feed_dict, options, run_metadata):
        """``_hooked_run``, timing every hook's calls when a span sink asks for it."""
        sinks = [s for s in (h.pyhooks_span_sink for h in self._span_hooks)
                 if isinstance(s, list)]
        if not sinks:
            return _MonitoredSessionBase._hooked_run(self, fetches, feed_dict, options,
                                                     run_metadata)
        if self._timed is None:
            proxies = {id(h): _TimedHook(h) for h in self._hooks}
            self._timed = (before_run_caller([proxies[id(h)] for h in self._before_hooks]),
                           after_run_caller([proxies[id(h)] for h in self._after_hooks]),
                           list(proxies.values()))
        for proxy in self._timed[2]:
            proxy.sinks = sinks
        plain = self._call_before, self._call_after
        self._call_before, self._call_after = self._timed[0], self._timed[1]
        start = perf_counter()
        try:
            return _MonitoredSessionBase._hooked_run(self, fetches, feed_dict, options,
                                                     run_metadata)
        finally:
            self._call_before, self._call_after = plain
            span = ("MonitoredSession", "run", start, perf_counter())
            for sink in sinks:
                sink.append(span)

    def _run_flat(self, sess, flat):
        """Runs a flat fetch list, through a cached ``make_callable`` once it repeats.

        ``Session.run`` re-analyses its fetches on every call (tens of µs per
        tensor); hooks ask for the same tensors step after step, so the second
        time a list is seen it becomes a callable of the session (if it has
        ``make_callable``). The cache holds the fetched objects themselves, so
        the ``id()`` key cannot be reused by another object while cached.
        """
        key = tuple(map(id, flat))
        entry = self._callables.get(key)
        if entry is None:
            if len(self._callables) >= _CALLABLE_CACHE_SIZE:
                self._callables.clear()
            self._callables[key] = [flat, None]
            return sess.run(flat)
        if entry[1] is None:
            make_callable = getattr(sess, "make_callable", None)
            try:  # (an empty list: TensorFlow's callable would refuse to run it)
                entry[1] = make_callable(entry[0]) if make_callable and entry[0] else False
            except Exception:  # noqa: BLE001 - session.run below reports the real problem
                entry[1] = False
        if entry[1] is False:
            return sess.run(flat)
        return entry[1]()

    def run_step_fn(self, step_fn):
        """Runs ``step_fn(step_context)`` as TensorFlow's ``MonitoredSession.run_step_fn``.

        ``step_context`` has ``session`` (raw), ``run_with_hooks(...)`` and
        ``request_stop()`` (which ends ``step_fn`` and the loop).
        """
        context = _StepContext(self)
        try:
            return step_fn(context)
        except _StopStepFn:
            self._stop = True
            return None


class _TimedHook:
    """Stands for a hook during a timed step: records one span per call into the sinks."""

    __slots__ = ("hook", "hook_name", "sinks")

    def __init__(self, hook):
        self.hook = hook
        self.hook_name = getattr(hook, "hook_name", None) or type(hook).__name__
        self.sinks = ()

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


class _StopStepFn(Exception):
    pass


class _StepContext:
    def __init__(self, monitored):
        self._monitored = monitored

    @property
    def session(self):
        return self._monitored._sess

    def run_with_hooks(self, *args, **kwargs):
        return self._monitored.run(*args, **kwargs)

    def request_stop(self):
        raise _StopStepFn()


class MonitoredSession(_MonitoredSessionBase):
    """A session that runs hooks, handles initialization and recovers from preemption.

    Args:
        session_creator: anything with ``create_session()``; default TensorFlow's
            ``ChiefSessionCreator()``.
        hooks: a list of :class:`SessionRunHook` (TensorFlow's hooks work too; one hook
            alone is a list of it).
        stop_grace_period_secs: how long to wait for queue-runner threads at close.

    On ``AbortedError``/``UnavailableError`` the session is re-created (hooks get
    ``after_create_session`` again, not ``begin``) and the step is retried.

    Example:
        >>> with pyhooks.MonitoredSession(hooks=[pyhooks.StopAtStepHook(last_step=10)]) as sess:
        ...     while not sess.should_stop():
        ...         sess.run(train_op)
    """

    def __init__(self, session_creator=None, hooks=None, stop_grace_period_secs=120):
        super().__init__(session_creator, hooks, should_recover=True,
                         stop_grace_period_secs=stop_grace_period_secs)


class SingularMonitoredSession(_MonitoredSessionBase):
    """A ``MonitoredSession`` for one process that does not recover from errors.

    Args:
        hooks: a list of hooks.
        scaffold, master, config, checkpoint_dir, checkpoint_filename_with_path: passed
            to TensorFlow's ``ChiefSessionCreator`` (the variables are restored from
            the latest checkpoint of ``checkpoint_dir``, or from that file).
        stop_grace_period_secs: as for :class:`MonitoredSession`.
    """

    def __init__(self, hooks=None, scaffold=None, master="", config=None, checkpoint_dir=None,
                 stop_grace_period_secs=120, checkpoint_filename_with_path=None):
        from tensorflow.python.training.monitored_session import ChiefSessionCreator

        creator = ChiefSessionCreator(scaffold=scaffold, master=master, config=config,
                                      checkpoint_dir=checkpoint_dir,
                                      checkpoint_filename_with_path=checkpoint_filename_with_path)
        super().__init__(creator, hooks, should_recover=False,
                         stop_grace_period_secs=stop_grace_period_secs)


def MonitoredTrainingSession(master="", is_chief=True, checkpoint_dir=None, scaffold=None,  # noqa: N802
                             hooks=None, chief_only_hooks=None, save_checkpoint_secs=USE_DEFAULT,
                             save_summaries_steps=USE_DEFAULT, save_summaries_secs=USE_DEFAULT,
                             config=None, stop_grace_period_secs=120, log_step_count_steps=100,
                             max_wait_secs=7200, save_checkpoint_steps=USE_DEFAULT,
                             summary_dir=None, save_graph_def=True):
    """A :class:`MonitoredSession` with TensorFlow's default training hooks.

    Same arguments and defaults as ``tf.compat.v1.train.MonitoredTrainingSession``:
    on the chief, a ``StepCounterHook`` and ``SummarySaverHook`` (every 100 steps)
    write to ``summary_dir or checkpoint_dir`` and a ``CheckpointSaverHook`` saves
    every 600 s to ``checkpoint_dir`` — all pyhooks' own hooks.
    """
    from tensorflow.python.training.monitored_session import (
        ChiefSessionCreator, Scaffold, WorkerSessionCreator)

    from pyhooks import hooks as builtin

    if save_summaries_steps is USE_DEFAULT and save_summaries_secs is USE_DEFAULT:
        save_summaries_steps, save_summaries_secs = 100, None
    elif save_summaries_secs is USE_DEFAULT:
        save_summaries_secs = None
    elif save_summaries_steps is USE_DEFAULT:
        save_summaries_steps = None
    if save_checkpoint_steps is USE_DEFAULT and save_checkpoint_secs is USE_DEFAULT:
        save_checkpoint_steps, save_checkpoint_secs = None, 600
    elif save_checkpoint_secs is USE_DEFAULT:
        save_checkpoint_secs = None
    elif save_checkpoint_steps is USE_DEFAULT:
        save_checkpoint_steps = None

    scaffold = scaffold or Scaffold()
    if not is_chief:
        creator = WorkerSessionCreator(scaffold=scaffold, master=master, config=config,
                                       max_wait_secs=max_wait_secs)
        return MonitoredSession(creator, hooks or [], stop_grace_period_secs)

    all_hooks = check_hooks(chief_only_hooks, "chief_only_hooks")
    creator = ChiefSessionCreator(scaffold=scaffold, checkpoint_dir=checkpoint_dir, master=master,
                                  config=config)
    summary_dir = summary_dir or checkpoint_dir
    if summary_dir:
        if log_step_count_steps and log_step_count_steps > 0:
            all_hooks.append(builtin.StepCounterHook(output_dir=summary_dir,
                                                     every_n_steps=log_step_count_steps))
        if (save_summaries_steps and save_summaries_steps > 0) or (
                save_summaries_secs and save_summaries_secs > 0):
            all_hooks.append(builtin.SummarySaverHook(
                scaffold=scaffold, save_steps=save_summaries_steps,
                save_secs=save_summaries_secs, output_dir=summary_dir))
    if checkpoint_dir and ((save_checkpoint_secs and save_checkpoint_secs > 0) or (
            save_checkpoint_steps and save_checkpoint_steps > 0)):
        all_hooks.append(builtin.CheckpointSaverHook(
            checkpoint_dir, save_steps=save_checkpoint_steps, save_secs=save_checkpoint_secs,
            scaffold=scaffold, save_graph_def=save_graph_def))
    all_hooks.extend(check_hooks(hooks))
    return MonitoredSession(creator, all_hooks, stop_grace_period_secs)
