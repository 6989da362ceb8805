"""Checkpoint writing for ``CheckpointSaverHook``: listeners, saver lookup, atomic save."""

from __future__ import annotations

import os
import tempfile

__all__ = [
    "CheckpointSaverListener",
    "atomic_write_text",
    "collection_saver",
    "eager_saver",
    "save_checkpoint",
    "write_graph",
]


class CheckpointSaverListener:
    """Callbacks around the saves of a :class:`CheckpointSaverHook` (all optional).

    ``after_save`` returning a truthy value requests the loop to stop.

    Example:
        >>> class Announce(CheckpointSaverListener):
        ...     def after_save(self, session, global_step_value):
        ...         print("saved", global_step_value)
    """

    def begin(self):
        """Called in the hook's ``begin()``."""

    def before_save(self, session, global_step_value):
        """Called before every save."""

    def after_save(self, session, global_step_value):
        """Called after every save; return True to stop training."""

    def end(self, session, global_step_value):
        """Called in the hook's ``end()``, after the last save."""


def collection_saver():
    """The only saver of the default graph's ``SAVERS`` collection, created if there is none.

    A new saver is what ``Scaffold.finalize()`` would build (sharded, allowing
    no variables), built here while the graph is still open and added to the
    collection so that the scaffold finds and restores with the same one.

    Raises:
        RuntimeError: several savers in the collection (TensorFlow's message).
    """
    import tensorflow as tf

    key = tf.compat.v1.GraphKeys.SAVERS
    savers = tf.compat.v1.get_collection(key)
    if len(savers) > 1:
        raise RuntimeError(f"More than one item in collection {key}. Please indicate which one "
                           "to use by passing it to the constructor.")
    if savers:
        return savers[0]
    saver = tf.compat.v1.train.Saver(sharded=True, allow_empty=True)
    tf.compat.v1.add_to_collection(key, saver)
    return saver


class _ManagerSaver:
    """A ``tf.train.CheckpointManager`` behind the ``save()`` of a Saver (eager/Keras backends)."""

    def __init__(self, manager):
        self.manager = manager

    def save(self, session, save_path, global_step=None, write_meta_graph=True):
        return self.manager.save(checkpoint_number=global_step)


def eager_saver(backend, saver, scaffold, checkpoint_dir, basename):
    """The saver of a ``CheckpointSaverHook`` on a non-graph backend, or a ``HookSetupError``.

    Without ``saver`` (and ``scaffold``), the backend's default checkpoint: on Keras, the
    model and its optimizer (whose ``iterations`` are the global step).
    """
    import tensorflow as tf

    from pyhooks.errors import HookSetupError

    kind = backend.kind
    if saver is None and scaffold is None and backend.default_checkpoint is not None:
        saver = backend.default_checkpoint()
    if isinstance(saver, tf.train.CheckpointManager):
        return _ManagerSaver(saver)
    if isinstance(saver, tf.train.Checkpoint):
        return _ManagerSaver(tf.train.CheckpointManager(
            saver, checkpoint_dir, max_to_keep=5, checkpoint_name=basename))
    given = "a Scaffold" if scaffold is not None else (
        "no saver" if saver is None else f"saver={saver!r}")
    raise HookSetupError(
        f"CheckpointSaverHook on the {kind} backend needs saver=tf.train.Checkpoint(...) (or a "
        f"tf.train.CheckpointManager), got {given}: there is no graph to collect variables "
        "from. E.g. saver=tf.train.Checkpoint(model=model, optimizer=optimizer, "
        "global_step=global_step).")


def atomic_write_text(path, text):
    """Writes ``text`` to ``path`` so that readers see the old or the new content, never a mix.

    Local paths: a temporary file in the same directory, then ``os.replace`` (no
    ``fsync``, as TensorFlow's own index writes: it cost ~30 ms per save on a busy
    disk, and guards only against a power loss, which the unsynced data files of the
    checkpoint would not survive either). Other file systems (``gs://``...): TensorFlow's
    ``atomic_write_string_to_file``.
    """
    path = os.fspath(path)
    if "://" in path:
        from tensorflow.python.lib.io import file_io

        file_io.atomic_write_string_to_file(path, text)
        return
    directory, name = os.path.split(os.path.abspath(path))
    try:
        mode = os.stat(path).st_mode & 0o777
    except OSError:
        mode = 0o644  # mkstemp's 0600 would hide the index from other readers
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def save_checkpoint(saver, session, save_path, step, write_meta_graph):
    """``saver.save(...)`` in an order that keeps the ``checkpoint`` index valid.

    For a ``tf.compat.v1.train.Saver``: the data files, then the ``.meta``
    graph, then the index (replaced atomically), then the deletion of
    checkpoints beyond ``max_to_keep``. TensorFlow's own ``save`` writes the
    index before the ``.meta`` file. Other savers: their ``save`` as is.
    """
    needed = ("_RecordLastCheckpoint", "_MaybeDeleteOldCheckpoints", "_save_relative_paths",
              "last_checkpoints", "export_meta_graph")
    if not all(hasattr(saver, name) for name in needed):
        saver.save(session, save_path, global_step=step, write_meta_graph=write_meta_graph)
        return
    import tensorflow as tf
    from google.protobuf import text_format
    from tensorflow.python.util import deprecation

    path = saver.save(session, save_path, global_step=step, write_meta_graph=False,
                      write_state=False)
    if write_meta_graph:
        with session.graph.as_default():
            saver.export_meta_graph((path or f"{save_path}-{step}") + ".meta")
    if path is None:  # a saver with nothing to save
        return
    saver._RecordLastCheckpoint(path)  # noqa: SLF001 - max_to_keep bookkeeping
    save_dir = os.path.dirname(save_path)
    paths = saver.last_checkpoints
    if saver._save_relative_paths:  # noqa: SLF001
        paths = [os.path.relpath(p, save_dir) if os.path.isabs(p) else p for p in paths]
    state = tf.compat.v1.train.generate_checkpoint_state_proto(
        save_dir, paths[-1], all_model_checkpoint_paths=paths)
    atomic_write_text(os.path.join(save_dir, "checkpoint"), text_format.MessageToString(state))
    with deprecation.silence():  # TF's own remove_checkpoint is deprecated, noisily
        saver._MaybeDeleteOldCheckpoints(meta_graph_suffix="meta")  # noqa: SLF001 - after the index


def write_graph(writer, graph, saver, checkpoint_dir, save_graph_def):
    """Writes ``graph.pbtxt`` (if ``save_graph_def``) and the graph events (if ``writer``)."""
    from tensorflow.python.framework import meta_graph

    if writer is None and not save_graph_def:
        return
    graph_def = graph.as_graph_def(add_shapes=True)
    if save_graph_def:  # as tf.io.write_graph, with no temporary file left if it fails
        from google.protobuf import text_format

        atomic_write_text(os.path.join(checkpoint_dir, "graph.pbtxt"),
                          text_format.MessageToString(graph_def))
    if writer is not None:
        writer.add_graph(graph)
        writer.add_meta_graph(meta_graph.create_meta_graph_def(graph_def=graph_def,
                                                               saver_def=saver.saver_def))
