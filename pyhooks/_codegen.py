"""Functions generated from source lines, for the per-step paths (private).

A call site that always meets the same class is specialised by CPython (3.11+);
a loop over several hook classes, or over leaves of several kinds, is not, and
pays for its own bookkeeping. The runner therefore generates, once per hook list
or step plan, straight-line functions with one call site per hook or leaf
(:func:`pyhooks.session.before_run_caller`, :meth:`pyhooks.eager._Evaluator._values_function`),
and for steady steps one function doing the whole step
(:meth:`pyhooks.session._MonitoredSessionBase._fuse`, the Keras adapter's batch methods).

Sources repeat (every runner with four hooks generates the same caller). Each
use is compiled anew: CPython keeps its specialisations in the code object, and
a code object shared by runners with other hook classes would lose them. The
lines of each distinct source go into ``linecache`` once, under one file name,
so that tracebacks through generated code show them.
"""

from __future__ import annotations

import linecache

__all__ = ["make_function"]

_MAX_SOURCES = 512  # distinct sources registered in linecache; more get no source lines
_filenames = {}  # source -> its file name in linecache (text only, no per-run state)


def make_function(lines, name, namespace):
    """The function ``name`` defined by the source ``lines``, with ``namespace`` as its globals."""
    source = "\n".join(lines) + "\n"
    filename = _filenames.get(source)
    if filename is None and len(_filenames) < _MAX_SOURCES:
        filename = _filenames[source] = f"<pyhooks generated {name} #{len(_filenames)}>"
    if filename is None:  # too many distinct sources: tracebacks show no lines for this one
        filename = f"<pyhooks generated {name}>"
    elif filename not in linecache.cache:  # new, or linecache was cleared since
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - our own source
    return namespace[name]
