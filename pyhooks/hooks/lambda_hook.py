"""``LambdaHook``: a hook made of plain callables (the base of R's ``session_run_hook()``)."""

from __future__ import annotations

from pyhooks.hook import HOOK_METHODS, SessionRunHook

__all__ = ["LambdaHook"]


class LambdaHook(SessionRunHook):
    """A hook whose lifecycle methods are the callables given; the others do nothing.

    Each callable takes the arguments of the method it stands for:
    ``begin()``, ``after_create_session(session, coord)``,
    ``before_run(run_context)`` (may return a :class:`pyhooks.SessionRunArgs`),
    ``after_run(run_context, run_values)``, ``end(session)`` and
    ``after_error(session, error)``. pyhooks' runner calls only the given
    ones (``pyhooks_methods``); TensorFlow's ``MonitoredSession`` calls every
    method and the missing ones are no-ops. Errors name the hook by
    ``hook_name``.

    Args:
        begin, after_create_session, before_run, after_run, end, after_error:
            callables or None.
        name: the hook's name in error notes (default ``"LambdaHook"``).

    Raises:
        TypeError: naming the argument, if one is not callable, or if ``name``
            is not a string.

    Example:
        >>> steps = []
        >>> hook = LambdaHook(after_run=lambda context, values: steps.append(1),
        ...                   name="count_steps")
    """

    def __init__(self, begin=None, after_create_session=None, before_run=None, after_run=None,
                 end=None, after_error=None, *, name="LambdaHook"):
        given = {"begin": begin, "after_create_session": after_create_session,
                 "before_run": before_run, "after_run": after_run, "end": end,
                 "after_error": after_error}
        for method, fn in given.items():
            if fn is not None and not callable(fn):
                raise TypeError(f"`{method}` must be callable or None, got {fn!r} "
                                f"({type(fn).__name__}).")
        if not isinstance(name, str) or not name:
            raise TypeError(f"`name` must be a non-empty string, got {name!r}.")
        self._fns = {m: fn for m, fn in given.items() if fn is not None}
        self.pyhooks_methods = frozenset(self._fns)
        self.hook_name = name

    def _call(self, method, *args):
        fn = self._fns.get(method)
        return None if fn is None else fn(*args)

    def begin(self):
        self._call("begin")

    def after_create_session(self, session, coord):
        self._call("after_create_session", session, coord)

    def before_run(self, run_context):
        return self._call("before_run", run_context)

    def after_run(self, run_context, run_values):
        self._call("after_run", run_context, run_values)

    def end(self, session):
        self._call("end", session)

    def after_error(self, session, error):
        self._call("after_error", session, error)

    def __repr__(self):
        methods = ", ".join(m for m in HOOK_METHODS if m in self._fns)
        return f"<LambdaHook {self.hook_name!r}: {methods or 'no methods'}>"
