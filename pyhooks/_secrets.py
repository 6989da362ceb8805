"""Where ConfigureGcsHook keeps credentials, and removing those a killed process left.

``import pyhooks`` calls :func:`remove_stale_directories` (one ``listdir`` of
``/dev/shm``): a process killed with a credentials file open (kill -9) leaves it
behind only until the next pyhooks process starts on the machine.
"""

from __future__ import annotations

import os
import shutil
import tempfile

__all__ = ["PREFIX", "remove_stale_directories", "running", "secret_parent"]

PREFIX = "pyhooks-gcs-"


def secret_parent():
    """Where the credentials file goes: ``/dev/shm`` (memory, never the disk) if usable."""
    shm = "/dev/shm"
    if os.path.isdir(shm) and os.access(shm, os.W_OK | os.X_OK):
        return shm
    return tempfile.gettempdir()


def remove_stale_directories(parent=None):
    """Deletes credentials directories of processes that are gone (killed before cleaning up).

    Their names carry the creating process's id (``pyhooks-gcs-<pid>-<random>``);
    a directory is removed only when no process of that id runs and it is ours.
    """
    parent = secret_parent() if parent is None else parent
    try:
        names = [n for n in os.listdir(parent) if n.startswith(PREFIX)]
    except OSError:
        return
    for name in names:
        pid = name[len(PREFIX):].partition("-")[0]
        if not pid.isdigit() or running(int(pid)):
            continue
        path = os.path.join(parent, name)
        try:
            if os.stat(path).st_uid != os.getuid():
                continue
        except OSError:
            continue
        shutil.rmtree(path, ignore_errors=True)


def running(pid):
    """Whether a process of id ``pid`` runs on this machine."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True
