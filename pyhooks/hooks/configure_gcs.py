"""ConfigureGcsHook: credentials and block cache for TensorFlow's gs:// filesystem, for one run."""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
import weakref

from pyhooks._secrets import PREFIX, remove_stale_directories, secret_parent
from pyhooks.hook import SessionRunHook
from pyhooks.timer import check_positive

__all__ = ["BlockCacheParams", "ConfigureGcsHook"]

_MIB = 1024 * 1024
_MALFORMED = object()


class _Secret:
    """Holds a secret string that shows as ``'***'`` wherever it is printed; not picklable."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __repr__(self):
        return "'***'"

    def __reduce__(self):
        raise TypeError("GCS credentials are not picklable.")


class BlockCacheParams:
    """The GCS block cache: ``block_size`` and ``max_bytes`` in bytes, ``max_staleness`` in seconds.

    Defaults as TensorFlow's: 128 MiB blocks, a cache of two blocks, no staleness.
    """

    def __init__(self, block_size=None, max_bytes=None, max_staleness=None):
        block_size = check_positive("block_size", block_size, integer=True)
        max_bytes = check_positive("max_bytes", max_bytes, integer=True)
        max_staleness = check_positive("max_staleness", max_staleness, integer=True,
                                       allow_zero=True)
        self._block_size = block_size or 128 * _MIB
        self._max_bytes = max_bytes or 2 * self._block_size
        self._max_staleness = max_staleness or 0

    block_size = property(lambda self: self._block_size)
    max_bytes = property(lambda self: self._max_bytes)
    max_staleness = property(lambda self: self._max_staleness)

    def environment(self):
        """The ``GCS_READ_CACHE_*`` variables TensorFlow reads (sizes rounded up to MiB)."""
        return {"GCS_READ_CACHE_BLOCK_SIZE_MB": str(math.ceil(self._block_size / _MIB)),
                "GCS_READ_CACHE_MAX_SIZE_MB": str(math.ceil(self._max_bytes / _MIB)),
                "GCS_READ_CACHE_MAX_STALENESS": str(self._max_staleness)}

    def __repr__(self):
        return (f"BlockCacheParams(block_size={self._block_size}, max_bytes={self._max_bytes}, "
                f"max_staleness={self._max_staleness})")


class ConfigureGcsHook(SessionRunHook):
    """Configures Google Cloud Storage access for the duration of a run.

    TensorFlow's gs:// filesystem reads its settings from the environment: in
    ``after_create_session`` the hook writes the credentials to a file (mode 0600,
    in a private directory under ``/dev/shm``, in memory, where there is one, else
    the temporary directory) named by ``GOOGLE_APPLICATION_CREDENTIALS``
    and sets ``GCS_READ_CACHE_*``; ``end``/``after_error`` restore the environment
    and delete the file; a process killed before that (kill -9) leaves its
    directory, which the next ``import pyhooks`` on the machine deletes.
    Credentials never appear in ``repr()``, logs or errors.
    TensorFlow reads these variables when the process first opens a gs:// path.

    Args:
        credentials: a JSON string or a dict with a ``refresh_token`` (user account)
            or a ``private_key`` (service account).
        block_cache: a :class:`BlockCacheParams`.

    Raises:
        ValueError: malformed credentials, or ``block_cache`` of the wrong type.

    Example:
        >>> creds = {"type": "authorized_user", "refresh_token": "...", "client_id": "..."}
        >>> hooks = [ConfigureGcsHook(creds, BlockCacheParams(max_staleness=60))]
    """

    def __init__(self, credentials=None, block_cache=None):
        self._credentials = self._block_cache = None  # repr() works if validation fails
        self._saved = self._cleanup = self._path = None
        if credentials is not None:
            if isinstance(credentials, str):
                try:
                    data = json.loads(credentials)
                except ValueError:  # raised outside: the decode error holds the secret text
                    data = _MALFORMED
                if data is _MALFORMED:
                    raise ValueError("credentials was not a well formed JSON string.")
            elif isinstance(credentials, dict):
                data = credentials
            else:
                raise ValueError("credentials is of an unknown type: "
                                 f"{type(credentials).__name__}")
            if not isinstance(data, dict) or not ("refresh_token" in data or "private_key" in data):
                raise ValueError('credentials has neither a "refresh_token" nor a "private_key" '
                                 "field.")
            credentials = _Secret(json.dumps(data))
        self._credentials = credentials
        if block_cache is not None and not isinstance(block_cache, BlockCacheParams):
            raise ValueError("block_cache must be an instance of BlockCacheParams.")
        self._block_cache = block_cache

    def __repr__(self):
        creds = "<hidden>" if getattr(self, "_credentials", None) is not None else None
        cache = getattr(self, "_block_cache", None)
        return f"ConfigureGcsHook(credentials={creds}, block_cache={cache!r})"

    def after_create_session(self, session, coord):
        if self._saved is not None:  # re-created after recovery: already configured
            return
        env = dict(self._block_cache.environment()) if self._block_cache else {}
        if self._credentials is not None:
            parent = secret_parent()
            remove_stale_directories(parent)
            directory = tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=parent)
            self._cleanup = weakref.finalize(self, shutil.rmtree, directory, ignore_errors=True)
            path = os.path.join(directory, "credentials.json")
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(self._credentials.value)
            env["GOOGLE_APPLICATION_CREDENTIALS"] = self._path = path
        self._saved = {name: os.environ.get(name) for name in env}
        os.environ.update(env)

    def end(self, session):
        self._restore()

    def after_error(self, session, error):
        self._restore()

    def _restore(self):
        saved, self._saved = self._saved, None
        for name, value in (saved or {}).items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        if self._cleanup is not None:
            self._cleanup()  # deletes the credentials file and its directory
            self._cleanup = self._path = None

    @property
    def credentials_path(self):
        """The credentials file while a run is configured, else None."""
        return self._path
