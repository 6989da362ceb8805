"""Sizes that set a weight matrix's shape, checked against the machine's memory.

A bucket count, a layer width or a number of classes of ``1e10`` would make
TensorFlow allocate tens of gigabytes for one variable when the session
starts: the process is killed (``std::bad_alloc``, or the kernel's out-of-memory
killer) or hangs. Each such size alone needs at least 4 bytes per unit (one
float32 weight per bucket, class or unit); a size needing more than the
machine's physical memory is refused at construction, naming the argument.
"""

from __future__ import annotations

import os

__all__ = ["check_fits_memory"]


def _memory_bytes():
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # not POSIX: no limit known
        return None


def check_fits_memory(name, size):
    """``size`` (a whole number, or None); ``ValueError`` naming ``name`` if it cannot fit."""
    memory = _memory_bytes()
    if size is not None and memory is not None and size * 4 > memory:
        raise ValueError(f"`{name}` = {size} needs at least {size * 4 / 2**30:.0f} GiB for one "
                         f"weight matrix, more than this machine's memory "
                         f"({memory / 2**30:.0f} GiB).")
    return size
