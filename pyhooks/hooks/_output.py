"""Where hooks write text: a file-like object or a function, redrawn in place or not."""

from __future__ import annotations

import os
import sys
import warnings

from pyhooks.errors import PyhooksWarning

__all__ = ["MODES", "check_output_dir", "check_writer", "choose_mode", "format_eta",
           "write_text"]

MODES = ("dynamic", "plain")


def check_writer(writer):
    """``TypeError`` unless ``writer`` is None, has ``write()`` or is callable."""
    if writer is not None and not (callable(writer) or callable(getattr(writer, "write", None))):
        raise TypeError(f"`writer` must be a file-like object or a function, got {writer!r}.")
    writable = getattr(writer, "writable", None)
    if callable(writable) and not writable():
        raise TypeError(f"`writer` must be a file open for writing, got {writer!r} (read only).")
    return writer


def check_output_dir(value, name="output_dir"):
    """``value`` (None, a str or a path) as a str or None; ``TypeError`` naming ``name`` else.

    A number or a flag would become a directory named ``1.0`` or ``True``.
    """
    if value is None:
        return None
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"`{name}` must be a directory path or None, got {value!r} "
                        f"({type(value).__name__}).")
    return os.fspath(value)


def _resolve(writer):
    return writer if writer is not None else sys.stdout  # looked up at write time


def choose_mode(mode, writer):
    """``mode`` if given; else ``PYHOOKS_PROGRESS``; else 'plain' on CI; else by ``isatty()``."""
    if mode is not None:
        return mode
    forced = os.environ.get("PYHOOKS_PROGRESS", "")
    if forced in MODES:
        return forced
    if forced:
        warnings.warn(f"PYHOOKS_PROGRESS={forced!r} is not 'dynamic' or 'plain'; ignored.",
                      PyhooksWarning, stacklevel=3)
    if os.environ.get("CI", "").lower() not in ("", "0", "false"):
        return "plain"
    try:
        return "dynamic" if _resolve(writer).isatty() else "plain"
    except Exception:  # noqa: BLE001 - no isatty (a function, a closed stream): not a terminal
        return "plain"


def write_text(writer, text):
    """Writes ``text`` to ``writer`` (default ``sys.stdout``) and flushes it."""
    writer = _resolve(writer)
    write = getattr(writer, "write", None)
    if write is None:
        writer(text)
        return
    write(text)
    flush = getattr(writer, "flush", None)
    if flush is not None:
        flush()


def format_eta(seconds):
    """``"7s"``, ``"1:40"`` or ``"2:45:00"``, as Keras' progress bar shows a remaining time."""
    seconds = int(round(seconds))
    if seconds >= 3600:
        return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"
    return f"{seconds // 60}:{seconds % 60:02d}" if seconds >= 60 else f"{seconds}s"
