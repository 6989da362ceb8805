"""Which worker this process is, for the hooks that write files (private).

Under a ``tf.distribute`` strategy every worker runs the same hooks. The loop's
driver finds this process's :class:`Worker` (:func:`pyhooks.distribute.find_worker`)
and enters :func:`worker_scope` around the hooks' ``begin()`` (the eager creator,
the Keras adapter, an estimator's ``train()``); a hook that writes files resolves
its directory there with :func:`worker_path`, so that a worker other than the
chief writes into its own, never into the chief's. Outside any scope (no
strategy) every path stays as it is.
"""

from __future__ import annotations

import contextvars
import os
from collections import namedtuple

from pyhooks.hooks._common import scoped

__all__ = ["Worker", "current_worker", "worker_path", "worker_scope"]

_worker = contextvars.ContextVar("pyhooks_worker", default=None)


class Worker(namedtuple("Worker", "task_type task_id is_chief num_workers index")):
    """Where this process stands in a cluster.

    Attributes:
        task_type, task_id: the task (``"worker"``, 1), ``None`` if unknown.
        is_chief: whether this process writes the files and runs chief-only hooks.
        num_workers: how many processes train together (1 for one-process strategies).
        index: this process's position among them (0 .. num_workers - 1).
    """

    __slots__ = ()

    @property
    def name(self):
        return (f"{self.task_type} {self.task_id}" if self.task_type is not None
                else "this worker")

    @property
    def own_dir_name(self):
        """The directory a worker other than the chief writes into: ``tmp_<type>_<id>``."""
        return f"tmp_{self.task_type}_{self.task_id}" if self.task_type is not None else "tmp"


def current_worker():
    """The :class:`Worker` of the loop whose hooks are starting, or ``None`` (no strategy)."""
    return _worker.get()


def worker_scope(worker):
    """Makes ``worker`` (a :class:`Worker`, or ``None``) the one :func:`worker_path` uses."""
    return scoped(_worker, worker)


def worker_path(path, is_file=False):
    """``path``, or on a worker other than the chief its own place below it (TensorFlow's
    convention): a directory ``d`` becomes ``d/tmp_<task_type>_<task_id>``, a file ``d/f``
    (``is_file``) ``d/tmp_<...>/f``.

    Call it in ``begin()``. ``None`` and ``""`` stay as they are, as does every
    path on the chief and outside a :func:`worker_scope`.
    """
    worker = _worker.get()
    if not path or worker is None or worker.is_chief:
        return path
    path = os.fspath(path)
    if is_file:
        directory, name = os.path.split(path)
        return os.path.join(directory, worker.own_dir_name, name)
    return os.path.join(path, worker.own_dir_name)
