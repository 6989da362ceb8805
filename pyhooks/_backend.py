"""What pyhooks' runners ask of creators, sessions and hooks beyond TensorFlow's API (private).

TensorFlow's runner knows one kind of session. pyhooks' drives TensorFlow's
sessions, the eager backend's (:mod:`pyhooks.eager`), the Keras adapter's
(:mod:`pyhooks.keras`) and the estimators' kept session; each may have the
optional members below. Every member is optional: an object without them is
treated as TensorFlow's. They are read here and nowhere else::

    creator.pyhooks_hooks(hooks) -> list     # the hooks to run instead (chief-only, agreement)
    creator.pyhooks_hook_scope()             # context manager around the hooks' begin()
    creator.pyhooks_can_recover = False      # a new session cannot cure a preemption
    session.pyhooks_step_fetch               # what to fetch for a caller's None (run one step)
    session.pyhooks_keeps_callables = True   # make_callable is cheap: use it at a plan's first use
    session.pyhooks_check_fetches(fetches)   # raises what fetching them would (error notes)
    session.pyhooks_read(fetches)            # values without running a training step
    hook.pyhooks_methods                     # the lifecycle methods it implements (LambdaHook)
    hook.pyhooks_span_sink                   # a list: time this step's hook calls into it

The hooks' own lookups in ``begin()`` (the global step, the loss, tensor names)
go to a backend object of their own: see :mod:`pyhooks.hooks._common`.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, ContextManager, Protocol

__all__ = ["Creator", "Hook", "Session", "can_recover", "fetch_checker", "hook_scope",
           "hooks_to_run", "keeps_callables", "methods_of", "reader", "span_sink", "step_fetch",
           "times_calls"]


class Creator(Protocol):
    """A session creator: TensorFlow's ``create_session()``, plus the optional members."""

    pyhooks_can_recover: bool

    def create_session(self) -> Any: ...

    def pyhooks_hooks(self, hooks: list) -> list: ...

    def pyhooks_hook_scope(self) -> ContextManager: ...


class Session(Protocol):
    """A session: TensorFlow's ``run()`` (and ``make_callable``, ``graph``), plus the optional members."""

    pyhooks_step_fetch: Any
    pyhooks_keeps_callables: bool

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None) -> Any: ...

    def pyhooks_check_fetches(self, fetches) -> None: ...

    def pyhooks_read(self, fetches) -> Any: ...


class Hook(Protocol):
    """A hook: TensorFlow's five methods (and pyhooks' ``after_error``), plus the optional members."""

    pyhooks_methods: frozenset
    pyhooks_span_sink: list | None


# --------------------------------------------------------------------------- creators
def hooks_to_run(creator, hooks: list) -> list:
    """The hooks a runner runs with ``creator``: its ``pyhooks_hooks(hooks)``, else ``hooks``."""
    extend = getattr(creator, "pyhooks_hooks", None)
    return hooks if extend is None else extend(hooks)


def hook_scope(creator) -> ContextManager:
    """The context the hooks' ``begin()`` runs in (a backend's lookups, the worker)."""
    scope = getattr(creator, "pyhooks_hook_scope", None)
    return contextlib.nullcontext() if scope is None else scope()


def can_recover(creator) -> bool:
    """Whether a new session from ``creator`` may cure a preemption (TensorFlow's: yes)."""
    return getattr(creator, "pyhooks_can_recover", True)


# --------------------------------------------------------------------------- sessions
def step_fetch(session):
    """What the runner fetches for a caller's ``None`` (``None``: nothing, as TensorFlow)."""
    return getattr(session, "pyhooks_step_fetch", None)


def keeps_callables(session) -> bool:
    """Whether ``session.make_callable`` is worth calling at a fetch list's first use."""
    return getattr(session, "pyhooks_keeps_callables", False)


def fetch_checker(session) -> Callable | None:
    """``session.pyhooks_check_fetches``, or ``None`` (a graph session: TensorFlow checks)."""
    return getattr(session, "pyhooks_check_fetches", None)


def reader(session) -> Callable | None:
    """``session.pyhooks_read``, or ``None`` (a graph session: ``session.run`` reads)."""
    return getattr(session, "pyhooks_read", None)


# --------------------------------------------------------------------------- hooks
def methods_of(hook) -> frozenset | None:
    """The lifecycle methods ``hook`` says it implements, or ``None`` (look at its class)."""
    return getattr(hook, "pyhooks_methods", None)


def times_calls(hook) -> bool:
    """Whether ``hook`` may ask for the timings of hook calls (has ``pyhooks_span_sink``)."""
    return hasattr(hook, "pyhooks_span_sink")


def span_sink(hook) -> list | None:
    """The list this step's hook timings go into, or ``None`` (not this step)."""
    sink = hook.pyhooks_span_sink
    return sink if isinstance(sink, list) else None
