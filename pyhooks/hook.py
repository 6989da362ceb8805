"""The hook contract: ``SessionRunHook`` and the values passed to its methods.

This module imports no TensorFlow. Names, fields and positional order match
``tf.compat.v1.train.SessionRunHook`` & co., so hooks written for TensorFlow run
under pyhooks and pyhooks hooks run under TensorFlow's ``MonitoredSession``.

Call order, as driven by :class:`pyhooks.MonitoredSession`::

    for hook in hooks: hook.begin()                 # graph still open
    graph.finalize()
    session = creator.create_session()
    for hook in hooks: hook.after_create_session(session, coord)
    try:
        while not mon_sess.should_stop():           # caller's loop
            context = SessionRunContext(original_args, session)
            for hook in hooks: args[hook] = hook.before_run(context)
            results = session.run(caller fetches + every hook's fetches,
                                  caller feeds + every hook's feeds)
            # session.run raised -> no after_run for this step
            for hook in hooks:
                hook.after_run(context, SessionRunValues(results[hook], ...))
            # context.request_stop() -> should_stop() is True after this step;
            # a further run() raises RuntimeError; a later hook may hold the
            # request with context.defer_stop() (pyhooks: the workers' stop
            # agreement holds it until the next vote) and request it again then
            # AbortedError / UnavailableError (MonitoredSession only):
            #   session = creator.create_session()   # begin() is NOT re-run
            #   for hook in hooks: hook.after_create_session(session, coord)
            #   retry the step
    except (OutOfRangeError, StopIteration):        # input exhausted: clean end
        pass
    except BaseException as error:                  # anything else, Ctrl-C too
        for hook in hooks: hook.after_error(session, error)   # pyhooks only
        session.close()
        raise error                                 # never swallowed, no end()
    for hook in hooks: hook.end(session)            # normal or exhausted input (all of them,
                                                    # even after one raised)
    session.close()

A hook's own exception keeps its type and gains the note
``pyhooks: raised in <Hook>.<method>()``. An exception raised in ``after_error``
is attached to the original error as a note and never replaces it. An
exception raised in one hook's ``end()`` does not keep the other hooks'
``end()`` from running; the first one propagates, with the others attached.
Methods a hook does not override are never called (that is free for the hook).

pyhooks only: a hook may also define ``state_dict()`` and ``load_state_dict(state)``;
an estimator's ``train()`` saves that state beside its checkpoints and gives it
back when a call resumes an interrupted one; so do an eager loop,
``model.fit`` and ``MonitoredTrainingSession`` whose hooks have a
``CheckpointSaverHook``, when they start from its checkpoint
(:mod:`pyhooks.hooks._hook_state`).
``MonitoredSession.stopped_by`` is the hook whose ``after_run`` requested the stop.

What the driver of a loop knows and a hook may need (the number of steps it
will run, the saving listeners of an estimator's ``train()``) is its
:class:`RunInfo`, which a hook reads with :func:`run_info` in ``begin()``::

    with RunInfo(steps=100, saving_listeners=[listener], mode="train"):
        with MonitoredSession(creator, hooks) as session:   # hooks' begin() sees it
            ...

Drivers never change the hooks they are given: a ``ProgressBarHook`` without a
``total`` shows ``run_info().steps``, a ``CheckpointSaverHook`` calls the run's
saving listeners besides its own.
"""

from __future__ import annotations

import contextvars
import io
import sys
from collections import namedtuple
from collections.abc import Mapping

from pyhooks._backend import methods_of

__all__ = ["RunInfo", "SessionRunArgs", "SessionRunContext", "SessionRunHook", "SessionRunValues",
           "run_info"]

HOOK_METHODS = ("begin", "after_create_session", "before_run", "after_run", "end", "after_error")


class SessionRunHook:
    """Base class of hooks that extend a ``MonitoredSession.run()`` loop.

    Every method is optional; the base implementations do nothing and are
    skipped by the runner.

    Example:
        >>> class CountSteps(SessionRunHook):
        ...     def begin(self):
        ...         self.steps = 0
        ...     def after_run(self, run_context, run_values):
        ...         self.steps += 1
    """

    def begin(self):
        """Called once before the session is used; may add ops to the graph."""

    def after_create_session(self, session, coord):
        """Called after every session creation, including re-creation on recovery."""

    def before_run(self, run_context):
        """Called before each ``run()``; may return a :class:`SessionRunArgs`."""
        return None

    def after_run(self, run_context, run_values):
        """Called after each successful ``run()`` with what ``before_run`` asked for."""

    def end(self, session):
        """Called when the loop ends normally or because the input ran out."""

    def after_error(self, session, error):
        """pyhooks only: called when the loop ends with any other exception.

        Args:
            session: the raw session (may be ``None`` if creation failed).
            error: the exception about to propagate. Do not raise it yourself.
        """


class SessionRunArgs(namedtuple("SessionRunArgs", ["fetches", "feed_dict", "options"])):
    """What a hook adds to the next ``run()`` call.

    Args:
        fetches: any nested list/tuple/dict/namedtuple of graph elements, or None.
        feed_dict: a dict ``{tensor: value}``, or None.
        options: a ``tf.compat.v1.RunOptions``, or None.
    """

    __slots__ = ()

    def __new__(cls, fetches, feed_dict=None, options=None):
        if feed_dict is not None and not isinstance(feed_dict, Mapping):
            raise TypeError("`feed_dict` must be a dict {tensor: value} or None, got "
                            f"{feed_dict!r} ({type(feed_dict).__name__}).")
        if options is not None and not hasattr(options, "trace_level"):
            raise TypeError("`options` must be a tf.compat.v1.RunOptions or None, got "
                            f"{options!r} ({type(options).__name__}).")
        return tuple.__new__(cls, (fetches, feed_dict, options))


class SessionRunValues(namedtuple("SessionRunValues", ["results", "options", "run_metadata"])):
    """What ``after_run`` receives: ``results`` has exactly the structure the hook asked for."""

    __slots__ = ()


class SessionRunContext:
    """The state of one ``run()`` call, shared by every hook of that call.

    Attributes:
        original_args: the caller's :class:`SessionRunArgs`.
        session: the raw session; its ``run`` triggers no hooks.
    """

    __slots__ = ("_original_args", "_session", "_stop_requested")

    def __init__(self, original_args, session):
        self._original_args = original_args
        self._session = session
        self._stop_requested = False

    @property
    def original_args(self):
        return self._original_args

    @property
    def session(self):
        return self._session

    @property
    def stop_requested(self):
        return self._stop_requested

    def request_stop(self):
        """Ends the loop after the current step."""
        self._stop_requested = True

    def defer_stop(self):
        """pyhooks only: holds the stop requested so far in this step; the loop goes on.

        For the one hook that decides when requests take effect: the workers'
        stop agreement (:class:`pyhooks.distribute.StopAgreementHook`, last in the
        list) holds a request until the next vote, then every worker stops after
        the same step. The caller owns the request from now on and calls
        :meth:`request_stop` when it is due; ``stop_requested`` is false for the
        rest of this step.

        Returns:
            whether a stop had been requested.
        """
        requested, self._stop_requested = self._stop_requested, False
        return requested

    def __repr__(self):
        return f"SessionRunContext(stop_requested={self._stop_requested})"


class RunInfo:
    """What the driver of a loop tells the loop's hooks (pyhooks only; see :func:`run_info`).

    A driver (an estimator's ``train()``, the Keras adapter, your own loop)
    makes one per loop and enters it around the hooks' ``begin()`` calls; a hook
    keeps the object :func:`run_info` gives it there. A driver may learn a field
    after ``begin()`` (Keras knows an epoch's batches at its first epoch) and
    set it then: hooks read the fields when they need them.

    Attributes:
        steps: the steps (``run()`` calls) the driver means to run, or None if it
            does not know (a loop until the input runs out).
        saving_listeners: ``CheckpointSaverListener`` objects that the loop's
            ``CheckpointSaverHook`` calls besides its own (``train(saving_listeners=)``).
        mode: ``"train"``, ``"eval"``, ``"predict"``, or None.
        steps_per_run: the most global steps one ``run()`` call makes (a loop of
            steps inside the call, ``run_config(steps_per_execution=)``,
            ``EagerSessionCreator(steps_per_execution=)``, Keras'
            ``compile(steps_per_execution=)`` under ``keras_callback``; the last
            call may make fewer). Hooks that act on steps count a call as up to
            this many (TensorFlow's private ``_set_steps_per_run``, which
            pyhooks' hooks also take, and which wins over this field).

    Example:
        >>> with RunInfo(steps=10):
        ...     with MonitoredSession(hooks=[ProgressBarHook()]) as session:  # 10 steps shown
        ...         ...
    """

    __slots__ = ("steps", "saving_listeners", "mode", "steps_per_run", "_tokens")

    def __init__(self, steps=None, saving_listeners=(), mode=None, steps_per_run=1):
        if steps is not None and (isinstance(steps, bool) or not isinstance(steps, int)
                                  or steps < 0):
            raise TypeError(f"`steps` must be a whole number >= 0 or None, got {steps!r}.")
        self.steps = steps
        self.saving_listeners = tuple(saving_listeners)
        self.mode = mode
        if isinstance(steps_per_run, bool) or not isinstance(steps_per_run, int) or \
                steps_per_run < 1:
            raise TypeError(f"`steps_per_run` must be a whole number >= 1, got {steps_per_run!r}.")
        self.steps_per_run = steps_per_run
        self._tokens = []

    def __enter__(self):
        self._tokens.append(_RUN_INFO.set(self))
        return self

    def __exit__(self, *exc_info):
        _RUN_INFO.reset(self._tokens.pop())

    def __repr__(self):
        return (f"RunInfo(steps={self.steps!r}, saving_listeners={list(self.saving_listeners)!r}, "
                f"mode={self.mode!r}, steps_per_run={self.steps_per_run!r})")


_RUN_INFO = contextvars.ContextVar("pyhooks_run_info", default=None)


def run_info() -> RunInfo:
    """The :class:`RunInfo` of the loop whose hooks are starting (call it in ``begin()``).

    Outside any driver's ``RunInfo``: an empty one (``steps`` None, no listeners).
    """
    current = _RUN_INFO.get()
    return current if current is not None else RunInfo()


def check_hooks(hooks, name="hooks") -> list:
    """``hooks`` as a new list, checked: ``None`` is none, one hook alone is a list of it.

    Anything that is not a hook (an object with none of the lifecycle methods) is a
    ``TypeError`` naming the argument and position, e.g. ``hooks[1]``.
    """
    if hooks is None:
        return []
    if _is_hook(hooks):
        return [hooks]
    # a file iterates over its lines, a data frame over its column names: not lists of hooks
    if (isinstance(hooks, (str, bytes, dict, io.IOBase)) or not hasattr(hooks, "__iter__")
            or hasattr(hooks, "columns")):
        raise TypeError(f"`{name}` must be a list of SessionRunHook, got {hooks!r} "
                        f"({type(hooks).__name__}).")
    hooks = list(hooks)  # any iterable, as the runner took before (a generator too)
    for i, hook in enumerate(hooks):
        if not _is_hook(hook):
            raise TypeError(f"`{name}[{i}]` must be a SessionRunHook, got {hook!r} "
                            f"({type(hook).__name__}).")
    return hooks


def _is_hook(value):
    return isinstance(value, SessionRunHook) or (
        not isinstance(value, (str, bytes, int, float, dict, list, tuple)) and any(
            callable(getattr(value, m, None)) for m in HOOK_METHODS))


def overridden_methods(hook) -> frozenset:
    """The lifecycle methods ``hook`` really implements.

    A method inherited unchanged from pyhooks' or TensorFlow's ``SessionRunHook``
    is a no-op and is left out: the runners never call it. A hook may state its
    set explicitly through a ``pyhooks_methods`` attribute (``LambdaHook`` and R
    hooks do).
    """
    explicit = methods_of(hook)
    if explicit is not None:
        return frozenset(explicit)
    bases = [SessionRunHook]
    tf_hook = sys.modules.get("tensorflow.python.training.session_run_hook")
    if tf_hook is not None:
        bases.append(tf_hook.SessionRunHook)
    found = set()
    for name in HOOK_METHODS:
        method = getattr(hook, name, None)
        if not callable(method):
            continue
        function = getattr(method, "__func__", None)
        if function is not None and any(vars(base).get(name) is function for base in bases):
            continue  # the base class's no-op
        found.add(name)
    return frozenset(found)


def hooks_by_method(hooks) -> dict:
    """``{method: [the hooks that implement it, in list order]}`` for every lifecycle method."""
    methods = [overridden_methods(h) for h in hooks]
    return {name: [h for h, m in zip(hooks, methods) if name in m] for name in HOOK_METHODS}
