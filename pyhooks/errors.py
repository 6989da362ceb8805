"""pyhooks' exceptions and warnings: one small hierarchy.

Every error pyhooks raises on its own account derives from :class:`PyhooksError`
(as well as from the builtin type a caller would naturally catch, so
``except ValueError`` keeps working). Errors raised by user hooks are never
wrapped or replaced: they propagate with their own type and gain a note naming
the hook and the method (see :func:`add_hook_note`).
"""

from __future__ import annotations

__all__ = [
    "HookSetupError",
    "NanLossDuringTrainingError",
    "PyhooksError",
    "PyhooksWarning",
    "add_hook_note",
]


class PyhooksError(Exception):
    """Base class of every exception raised by pyhooks itself."""


class NanLossDuringTrainingError(PyhooksError, RuntimeError):
    """The monitored loss became NaN (or infinite) during training.

    Attributes:
        step: the global step at which the loss diverged, or ``None``.
        value: the offending loss value.
    """

    def __init__(self, message: str = "NaN loss during training.", step=None, value=None):
        super().__init__(message)
        self.step = step
        self.value = value


class HookSetupError(PyhooksError, RuntimeError):
    """A hook cannot find (in ``begin()``) a tensor it needs, or cannot run on this backend."""


class PyhooksWarning(UserWarning):
    """Base class of the warnings pyhooks emits."""


def add_hook_note(error: BaseException, hook: object, method: str) -> None:
    """Adds ``"raised in <Hook>.<method>()"`` to ``error`` once, keeping its type.

    Only the innermost hook call adds a note, so nested runners (a pyhooks hook
    driving another session) do not stack misleading notes.
    """
    if getattr(error, "_pyhooks_noted", False):
        return
    name = getattr(hook, "hook_name", None) or type(hook).__name__
    try:
        error.add_note(f"pyhooks: raised in {name}.{method}()")
        error._pyhooks_noted = True  # type: ignore[attr-defined]
    except (AttributeError, TypeError):  # exceptions with __slots__ or C types
        pass
