"""pyhooks' exceptions and warnings: one small hierarchy.

Every error pyhooks raises on its own account derives from :class:`PyhooksError`
(as well as from the builtin type a caller would naturally catch, so
``except ValueError`` keeps working). Errors raised by user hooks are never
wrapped or replaced: they propagate with their own type and gain a note naming
the hook and the method (see :func:`add_hook_note`).

The classes, one line each (all importable from ``pyhooks.errors``
and from ``pyhooks``):

* :class:`PyhooksError`: the base class of every error pyhooks raises itself.
* :class:`NanLossDuringTrainingError`: the loss became NaN or infinite (``NanTensorHook``).
* :class:`HookSetupError`: a hook cannot find a tensor it needs, or cannot run on this backend.
* :class:`GlobalStepWaitTimeout`: ``GlobalStepWaiterHook`` waited longer than ``timeout_secs``.
* :class:`CheckpointError`: a model directory's checkpoint files or index are damaged or missing.
* :class:`ModelDirLockedError`: another training loop (another process) trains into the model_dir.
* :class:`DiskWriteError`: a file could not be written (disk full, read-only, no permission, size limit).
* :class:`PyhooksWarning`: the base class of pyhooks' warnings.
* :class:`NanLossWarning`: the loss diverged and ``fail_on_nan_loss=False``: training stopped.
"""

from __future__ import annotations

__all__ = [
    "CheckpointError",
    "DiskWriteError",
    "GlobalStepWaitTimeout",
    "HookSetupError",
    "ModelDirLockedError",
    "NanLossDuringTrainingError",
    "NanLossWarning",
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


class GlobalStepWaitTimeout(PyhooksError, TimeoutError):
    """The global step did not reach ``wait_until_step`` within ``timeout_secs``.

    Attributes:
        wait_until_step: the step waited for.
        step: the global step reached when the wait gave up.
    """

    def __init__(self, message, wait_until_step=None, step=None):
        super().__init__(message)
        self.wait_until_step = wait_until_step
        self.step = step


class CheckpointError(PyhooksError, ValueError):
    """A model directory's checkpoints cannot be read (damaged, missing or garbage files)."""


class ModelDirLockedError(PyhooksError, RuntimeError):
    """Another training loop (another process, or an unfinished one here) holds the directory."""


class DiskWriteError(PyhooksError, OSError):
    """A file could not be written: the disk is full, read-only, or a size limit was reached.

    ``errno`` is the cause's code (``errno.ENOSPC``, ``errno.EACCES``, ...);
    ``str()`` is the one-line message, path and cause first.
    """


class PyhooksWarning(UserWarning):
    """Base class of the warnings pyhooks emits."""


class NanLossWarning(PyhooksWarning):
    """The loss diverged and ``fail_on_nan_loss=False``: training was stopped."""


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
        error._pyhooks_raised_in = (name, method)  # type: ignore[attr-defined]
    except (AttributeError, TypeError):  # exceptions with __slots__ or C types
        pass
