"""Functions generated from source lines, for the per-step paths (private).

A call site that always meets the same class is specialised by CPython (3.11+);
a loop over several hook classes, or over leaves of several kinds, is not, and
pays for its own bookkeeping. The runner therefore generates, once per hook list
or step plan, straight-line functions with one call site per hook or leaf
(:func:`pyhooks.session.before_run_caller`, :meth:`pyhooks.eager._Evaluator._values_function`).
"""

from __future__ import annotations

import linecache

__all__ = ["make_function"]


def make_function(lines, name, namespace):
    """The function ``name`` defined by the source ``lines``, with ``namespace`` as its globals.

    Its source goes into ``linecache``, so tracebacks through it show its lines.
    """
    source = "\n".join(lines) + "\n"
    filename = f"<pyhooks generated {name} {id(namespace):x}>"
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - our own source
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    return namespace[name]
