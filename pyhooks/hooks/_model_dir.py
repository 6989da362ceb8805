"""A model directory's checkpoints read strictly, its leftovers removed, its trainer locked.

* :func:`latest_checkpoint` reads the ``checkpoint`` index as TensorFlow's
  ``tf.train.latest_checkpoint`` does, but a garbage index, an index naming
  missing files, or checkpoint files without an index raise
  :class:`CheckpointError` instead of meaning "no checkpoint" (a silent
  restart from step 0).
* :func:`recover_saver` gives a ``Saver`` the checkpoints already on disk, so
  that ``max_to_keep`` counts them (TensorFlow's ``recover_last_checkpoints``).
* :func:`remove_partial_saves` deletes what an interrupted save leaves behind.
* :class:`TrainingLock`: one trainer per directory. An advisory ``flock`` on
  ``<dir>/.pyhooks-train.lock``, released by the kernel when the process
  ends however it ends (kill -9 included), so a crashed trainer never leaves
  the directory locked. The file records who holds it, for the message.
"""

from __future__ import annotations

import atexit
import errno
import fcntl
import glob
import logging
import os
import re
import shutil
import socket
import tempfile
import threading

from pyhooks import _logging
from pyhooks._secrets import running
from pyhooks.errors import CheckpointError, DiskWriteError, ModelDirLockedError

__all__ = ["CheckpointError", "DiskWriteError", "ModelDirLockedError", "TrainingLock",
           "checkpoint_files_error", "disk_error", "latest_checkpoint", "listed_checkpoints",
           "recover_saver", "remove_partial_saves"]

LOCK_NAME = ".pyhooks-train.lock"
# What interrupted saves leave: TensorFlow's bundle writer (`<file>.tempstate<n>`), a
# sharded save's `<prefix>_temp/` directory, atomic writes (`<file>.tmp<32 hex>`, as
# `graph.pbtxt` is written) and pyhooks' own atomic index (`.checkpoint.<x>.tmp`).
_PARTIAL_FILE = re.compile(r".*\.tempstate\d+$|.*\.tmp[0-9a-f]{32}$|^\.checkpoint\..*\.tmp$")
_PARTIAL_DIR = re.compile(r".*_temp(_[0-9a-f]{32})?$")


# The causes told apart, as the C library spells them (TensorFlow puts them in its messages).
_DISK_CAUSES = {errno_: os.strerror(errno_) for errno_ in (
    errno.ENOSPC, errno.EFBIG, errno.EROFS, errno.EACCES, errno.EDQUOT, errno.EIO, errno.EPERM)}
_HINTS = {errno.ENOSPC: "the disk is full", errno.EFBIG: "a file size limit was reached",
          errno.EDQUOT: "the disk quota is used up", errno.EROFS: "the disk is read-only"}


def disk_error(what, path, error):
    """A one-line :class:`DiskWriteError` for ``error`` while writing ``what`` to ``path``.

    Returns None unless ``error`` (an ``OSError`` or a TensorFlow error) is
    about the disk (full, read-only, no permission, a size limit, I/O).
    """
    code = getattr(error, "errno", None) if isinstance(error, OSError) else None
    if code not in _DISK_CAUSES:
        text = str(error)
        code = next((c for c, cause in _DISK_CAUSES.items() if cause in text), None)
        if code is None:
            return None
    hint = f" ({_HINTS[code]})" if code in _HINTS else ""
    found = DiskWriteError(f"Could not write {what} to {path!r}: {_DISK_CAUSES[code]}{hint}.")
    found.errno = code  # str() stays the message alone: path and cause first
    return found


_TEMPORARY_PREFIX = "pyhooks_model_"
_TEMPORARY = []  # the temporary model directories this process made


def make_model_dir(model_dir):
    """``model_dir`` as an absolute directory path, created if needed.

    None: a new temporary directory, removed when the process ends (and, if the
    process was killed, by the next one that makes a temporary model directory).
    Anything but a path, or a path to a file, is an error naming ``model_dir``
    and saying what to give instead.
    """
    if model_dir is None:
        parent = tempfile.gettempdir()
        remove_temporary_model_dirs(parent, dead_only=True)
        path = tempfile.mkdtemp(prefix=f"{_TEMPORARY_PREFIX}{os.getpid()}_", dir=parent)
        if not _TEMPORARY:
            atexit.register(remove_temporary_model_dirs)
        _TEMPORARY.append(path)
        return path
    if not isinstance(model_dir, (str, os.PathLike)) or not os.fspath(model_dir):
        raise TypeError(f"`model_dir` must be a directory path or None, got {model_dir!r}.")
    path = os.path.abspath(os.fspath(model_dir))
    if os.path.exists(path) and not os.path.isdir(path):
        raise ValueError(f"`model_dir` {path!r} is a file, not a directory: give the path of a "
                         "directory (a new one, or one holding a model's checkpoints).")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as error:
        found = disk_error("the model directory", path, error)
        if found is None:
            raise ValueError(f"`model_dir` {path!r} cannot be created: {error.strerror or error}."
                             ) from error
        raise found from error
    return path


def remove_temporary_model_dirs(parent=None, dead_only=False):
    """Removes the temporary model directories this process made (``model_dir = None``).

    With ``dead_only``: those that processes which no longer run left in
    ``parent`` (named ``pyhooks_model_<pid>_...``, owned by this user).
    """
    if not dead_only:
        while _TEMPORARY:
            shutil.rmtree(_TEMPORARY.pop(), ignore_errors=True)
        return
    try:
        names = [n for n in os.listdir(parent) if n.startswith(_TEMPORARY_PREFIX)]
    except OSError:
        return
    for name in names:
        pid = name[len(_TEMPORARY_PREFIX):].partition("_")[0]
        path = os.path.join(parent, name)
        try:
            if not pid.isdigit() or running(int(pid)) or os.stat(path).st_uid != os.getuid():
                continue
        except OSError:
            continue
        shutil.rmtree(path, ignore_errors=True)


def check_writable(path, what):
    """A :class:`DiskWriteError` naming ``what`` and ``path`` unless a file can be made in ``path``.

    Made (and removed) before a loop starts, so that a directory the user cannot
    write fails the call before any step, with nothing written.
    """
    try:
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as error:
        found = disk_error(what, path, error)
        if found is None:
            raise
        raise found from error


def event_writer(directory):
    """``FileWriterCache``'s event writer of ``directory``, its write failures reported once.

    TensorFlow's writer writes from a thread of its own, and a failed write (a
    full disk) logs an error and prints that thread's traceback besides the
    error the next ``flush()`` raises; pyhooks' event writers report the failure
    through :func:`flush_events` alone (installed once: a ``threading.excepthook``
    that passes every other thread's exceptions on, and a filter of that one
    line on the ``tensorflow`` logger).
    """
    import tensorflow as tf

    _quiet_event_threads()
    return tf.compat.v1.summary.FileWriterCache.get(str(directory))


def flush_events(writer, directory):
    """``writer.flush()``; a full or read-only disk is a one-line :class:`DiskWriteError`."""
    try:
        writer.flush()
    except Exception as error:  # noqa: BLE001 - TensorFlow raises its thread's exception type
        found = disk_error("the event file", directory, error)
        if found is None:
            raise
        raise found from None


_EXCEPTHOOK = []


def _quiet_event_threads():
    if _EXCEPTHOOK:
        return
    previous = threading.excepthook

    def excepthook(args):
        thread = getattr(args.thread, "name", "")
        if thread.startswith("EventLoggerThread") and disk_error("", "", args.exc_value):
            return  # the writer's flush() raises it as a DiskWriteError
        previous(args)

    _EXCEPTHOOK.append(previous)
    threading.excepthook = excepthook
    logging.getLogger("tensorflow").addFilter(_writer_thread_disk_errors)


def _writer_thread_disk_errors(record):
    """False for the writer thread's log line of a disk error (reported by flush_events)."""
    message = record.getMessage()
    return not (message.startswith("EventFileWriter writer thread error")
                and disk_error("", "", OSError(message)) is not None)


def _shown(model_dir):
    return f"model_dir {model_dir!r}"


def latest_checkpoint(model_dir):
    """The path of the newest checkpoint of ``model_dir``, or None if it has none.

    Raises:
        CheckpointError: the ``checkpoint`` file is not an index, names a
            checkpoint whose files are missing, or is missing while
            checkpoint files are there.
    """
    from google.protobuf import text_format
    from tensorflow.python.training import checkpoint_state_pb2

    index = os.path.join(model_dir, "checkpoint")
    try:
        with open(index, encoding="utf-8", errors="replace") as stream:
            text = stream.read()
    except FileNotFoundError:
        orphans = sorted(glob.glob(os.path.join(glob.escape(model_dir), "*.index")))
        if orphans:
            raise CheckpointError(
                f"{_shown(model_dir)} holds checkpoint files ({os.path.basename(orphans[-1])}) "
                "but no `checkpoint` index file naming them; restore the index or move the "
                "files away to start from step 0.") from None
        return None
    except IsADirectoryError:
        raise CheckpointError(f"{_shown(model_dir)}: `checkpoint` is a directory, not the "
                              "checkpoint index file.") from None
    state = checkpoint_state_pb2.CheckpointState()
    try:
        text_format.Merge(text, state)
    except text_format.ParseError as error:
        raise CheckpointError(
            f"{_shown(model_dir)}: its `checkpoint` index file is not a checkpoint index "
            f"({error}); delete or repair it to go on.") from None
    if not state.model_checkpoint_path:
        raise CheckpointError(f"{_shown(model_dir)}: its `checkpoint` index file names no "
                              "checkpoint (empty or damaged); delete or repair it to go on.")
    path = state.model_checkpoint_path
    if not os.path.isabs(path):
        path = os.path.join(model_dir, path)
    moved = os.path.join(model_dir, os.path.basename(path))
    if not os.path.exists(path + ".index") and os.path.exists(moved + ".index"):
        path = moved  # an absolute path of the directory before it was moved or copied
    if not os.path.exists(path + ".index"):
        raise CheckpointError(
            f"{_shown(model_dir)}: its `checkpoint` index file names "
            f"{os.path.basename(path)}, whose file {os.path.basename(path)}.index is missing; "
            "repair the index (or delete it to start from step 0).")
    return path


def listed_checkpoints(model_dir):
    """The checkpoints the ``checkpoint`` index of ``model_dir`` lists (its latest and the
    others its saver keeps, whatever their base name) whose files are there.

    Lenient, unlike :func:`latest_checkpoint`: no index, or one that does not parse,
    lists none.
    """
    from google.protobuf import text_format
    from tensorflow.python.training import checkpoint_state_pb2

    try:
        with open(os.path.join(model_dir, "checkpoint"), encoding="utf-8",
                  errors="replace") as stream:
            text = stream.read()
    except OSError:
        return []
    state = checkpoint_state_pb2.CheckpointState()
    try:
        text_format.Merge(text, state)
    except text_format.ParseError:
        return []
    found = []
    for path in [*state.all_model_checkpoint_paths, state.model_checkpoint_path]:
        if not path:
            continue
        if not os.path.isabs(path):
            path = os.path.join(model_dir, path)
        if not os.path.exists(path + ".index"):  # the directory was moved or copied
            path = os.path.join(model_dir, os.path.basename(path))
        if os.path.exists(path + ".index") and path not in found:
            found.append(path)
    return found


def checkpoint_files_error(model_dir, path, error):
    """A short :class:`CheckpointError` for a checkpoint ``path`` that could not be restored.

    Returns None when its files read back whole (then ``error`` is about the
    model, not the files).
    """
    import tensorflow as tf

    name = os.path.basename(path)
    first = type(error).__name__
    try:
        reader = tf.compat.v1.train.NewCheckpointReader(path)
    except Exception as read_error:  # noqa: BLE001 - any failure to read is the answer
        detail = (str(read_error).strip().splitlines() or [""])[0]
        return CheckpointError(f"{_shown(model_dir)}: checkpoint file {name}.index is damaged "
                               f"(truncated or corrupt: {detail}).")
    try:
        for variable in reader.get_variable_to_shape_map():
            reader.get_tensor(variable)
    except Exception as read_error:  # noqa: BLE001
        detail = (str(read_error).strip().splitlines() or [first])[0]
        data = sorted(glob.glob(glob.escape(path) + ".data-*")) or [path + ".data-*"]
        return CheckpointError(f"{_shown(model_dir)}: checkpoint file "
                               f"{os.path.basename(data[0])} is damaged (truncated or corrupt: "
                               f"{detail}).")
    return None


def recover_saver(saver, model_dir):
    """Tells ``saver`` (a ``tf.compat.v1.train.Saver``) the checkpoints ``model_dir`` lists.

    Without this a new process's saver deletes only what it saved itself, and
    ``max_to_keep`` does not hold across restarts. Other savers: nothing.
    """
    if not hasattr(saver, "recover_last_checkpoints") or saver.last_checkpoints:
        return
    import tensorflow as tf

    state = tf.train.get_checkpoint_state(model_dir)
    if state is None:
        return
    paths = [p if os.path.isabs(p) else os.path.join(model_dir, p)
             for p in state.all_model_checkpoint_paths]
    saver.recover_last_checkpoints(paths)


def remove_partial_saves(model_dir):
    """Deletes the leftovers of interrupted saves in ``model_dir``; returns their names.

    Call it only while holding the directory's :class:`TrainingLock`: another
    trainer's save in progress looks the same.
    """
    removed = []
    try:
        entries = list(os.scandir(model_dir))
    except OSError:
        return removed
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False) and _PARTIAL_DIR.fullmatch(entry.name):
                if all(n.startswith("part-") for n in os.listdir(entry.path)):
                    shutil.rmtree(entry.path)
                    removed.append(entry.name)
            elif entry.is_file(follow_symlinks=False) and _PARTIAL_FILE.fullmatch(entry.name):
                os.unlink(entry.path)
                removed.append(entry.name)
        except OSError:
            continue  # gone meanwhile, or not ours to delete: left alone
    return removed


def _holder():
    return f"pid {os.getpid()} on {socket.gethostname()}"


_HELD = {}  # real path of a lock file -> the pid of this process's TrainingLock holding it
_HELD_GUARD = threading.Lock()


class TrainingLock:
    """An exclusive lock on a model directory for one training loop.

    A POSIX record lock (``lockf``) on ``model_dir/.pyhooks-train.lock``: it
    belongs to the process that took it (a child it forks, a multiprocessing
    worker or ``system()``, does not hold it) and the kernel frees it when that
    process ends however it ends. A lock left by a process that ended is taken
    over, and the log says whose it was. ``acquire()`` raises
    :class:`ModelDirLockedError` naming the holder when another process holds
    it, or another training loop of this process.
    """

    def __init__(self, model_dir):
        self.model_dir = model_dir
        self.path = os.path.join(model_dir, LOCK_NAME)
        self._fd = None
        self._key = None

    def acquire(self, shared_here=False):
        """Takes the lock; returns ``self``.

        Args:
            shared_here: if this process already holds the directory (its
                estimator's ``train()`` runs the hook asking), go on without a
                lock of one's own (then ``held`` is False) instead of raising.
        """
        key = os.path.realpath(self.path)
        with _HELD_GUARD:
            if _HELD.get(key) == os.getpid():  # a second lock here would free the first
                if shared_here:
                    return self
                raise self._locked(_holder())
            fd = self._open()
            try:
                fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as error:
                if error.errno not in (errno.EACCES, errno.EAGAIN):
                    os.close(fd)
                    raise
                holder = self._read(fd)
                os.close(fd)
                raise self._locked(holder) from None
            previous = self._read(fd)
            self._write(fd)
            _HELD[key] = os.getpid()
            self._fd, self._key = fd, key
        if previous not in ("unknown", _holder()):
            _logging.info("Took over the training lock of %s: %s, which last held it, has "
                          "ended.", _shown(self.model_dir), previous)
        return self

    def _open(self):
        try:
            return os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as error:
            found = disk_error("the training lock", self.path, error)
            if found is None:
                raise
            raise found from error

    @staticmethod
    def _read(fd):
        return os.pread(fd, 200, 0).decode("utf-8", "replace").strip() or "unknown"

    @staticmethod
    def _write(fd):
        try:  # no truncation to 0 first: on ext4 closing a truncated file flushes it (~4 ms)
            holder = (_holder() + "\n").encode()
            os.pwrite(fd, holder, 0)
            if os.fstat(fd).st_size > len(holder):
                os.ftruncate(fd, len(holder))
        except OSError:
            pass  # a full disk: the lock holds anyway, the message says "unknown"

    def _locked(self, holder):
        return ModelDirLockedError(
            f"{_shown(self.model_dir)} is being trained by another process or loop ({holder}); "
            "two trainers would overwrite each other's checkpoints. Wait for it to finish, or "
            "use another model_dir.")

    @property
    def held(self):
        """True while this object holds the lock."""
        return self._fd is not None

    def release(self):
        with _HELD_GUARD:
            fd, self._fd = self._fd, None
            if fd is not None:
                _HELD.pop(self._key, None)
                try:  # blanked, not truncated (see _write): a lock left named was not released
                    os.pwrite(fd, b" " * len(_holder().encode()), 0)
                except OSError:
                    pass
                os.close(fd)  # closing this process's descriptor frees its lock

    def __enter__(self):
        return self.acquire()

    def __exit__(self, *exc):
        self.release()
