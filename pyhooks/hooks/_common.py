"""Small helpers shared by the built-in hooks (private).

Backends. Hooks look up what they fetch (the global step, the loss, named
tensors) in ``begin()``. For TensorFlow graphs that is the default graph. A
non-graph backend (pyhooks' eager session, the Keras adapter) sets itself as
the *current backend* while the hooks' ``begin()`` runs (:func:`backend_scope`;
:class:`pyhooks.MonitoredSession` enters the creator's ``pyhooks_hook_scope()``
if it has one). The lookups below then ask it instead of the graph. A backend
is any object with:

- ``kind``: a short name for messages (``"eager"``, ``"keras"``);
- ``global_step_read(hook_name, required)``: a fetch whose value is the global
  step *before* the step it is fetched with (what the read tensor gives in a graph);
- ``element(value, what, hook_name)``: ``value`` (a name, a variable...) as a
  fetch of that backend, else :class:`pyhooks.errors.HookSetupError`;
- ``get_collection(key)``: a list, like ``tf.Graph.get_collection`` (``"losses"``
  gives the step's loss).

Without a current backend every lookup is the graph one, unchanged. Sessions
whose steps cannot be evaluated piecemeal provide ``pyhooks_read(fetches)``
(values without running a training step; see :mod:`pyhooks._backend`); hooks
read through :func:`read_values`.
"""

from __future__ import annotations

import contextlib
import contextvars

import numpy as np

from pyhooks._backend import reader
from pyhooks.errors import HookSetupError

__all__ = ["StepReader", "backend_scope", "check_bool", "current_backend", "exact_step",
           "global_step_read", "map_leaves", "one_of", "read_values", "require_graph", "scoped",
           "step_reader", "to_numpy"]

_backend = contextvars.ContextVar("pyhooks_backend", default=None)


def current_backend():
    """The non-graph backend whose hooks are being set up, or ``None`` (TensorFlow graphs)."""
    return _backend.get()


@contextlib.contextmanager
def scoped(variable, value):
    """``variable`` (a ``ContextVar``) holds ``value`` within the block."""
    token = variable.set(value)
    try:
        yield value
    finally:
        variable.reset(token)


def backend_scope(backend):
    """Makes ``backend`` the current backend for the lookups of the hooks' ``begin()``."""
    return scoped(_backend, backend)


def require_graph(hook_name, instead):
    """Refuses, in ``begin()``, to set up a graph-only hook on a non-graph backend.

    Raises:
        HookSetupError: naming ``hook_name``, the backend and what to use ``instead``.
    """
    backend = _backend.get()
    if backend is not None:
        raise HookSetupError(f"{hook_name} needs a TensorFlow graph session and cannot run on "
                             f"the {backend.kind} backend: {instead}")


def read_values(session, fetches):
    """The values of ``fetches`` without running a training step where that matters.

    A graph session evaluates them (``session.run``); a session with
    ``pyhooks_read`` (eager, Keras) reads variables and the last step's outputs.
    """
    read = reader(session)
    return session.run(fetches) if read is None else read(fetches)


def global_step_read(hook_name, required=True):
    """The global step's read tensor of the default graph, as TensorFlow's hooks use.

    Call it in ``begin()``. TensorFlow's ``_get_or_create_global_step_read``
    is used when available: it caches one read tensor per graph (so a second
    ``begin()`` adds nothing) and is the tensor ``training_util`` makes the
    increment wait for, which gives fetched value + 1 == step reached. Under a
    backend (see the module docstring) the backend's equivalent fetch.

    Raises:
        RuntimeError: naming ``hook_name`` if there is no global step and
            ``required``.
    """
    backend = _backend.get()
    if backend is not None:
        return backend.global_step_read(hook_name, required)
    import tensorflow as tf

    try:
        from tensorflow.python.training import training_util

        tensor = training_util._get_or_create_global_step_read()  # noqa: SLF001
    except (ImportError, AttributeError):  # pragma: no cover - private API moved
        tensor = tf.compat.v1.train.get_global_step()
    if tensor is None and required:
        raise RuntimeError(f"Global step should be created to use {hook_name}.")
    return tensor


def exact_step(session, read):
    """The global step now, read alone (no step runs with it): exact."""
    return int(read_values(session, read))


def step_reader(session, read):
    """A function returning the global step now, read alone: ``session``'s callable of
    ``read`` where it makes one (a whole ``Session.run`` costs ~10x more).

    A run's fetched step read is stale: the run's own increment may or may not
    be in it, and a run without the train op increments nothing. So, as
    TensorFlow's hooks do, a hook about to act on a step (a row, a count)
    confirms it with this read. Make it in ``after_create_session`` (a
    recovered session gets a new one).
    """
    make = getattr(session, "make_callable", None)
    if read is not None and make is not None and reader(session) is None:
        try:
            call = make(read)
        except Exception:  # noqa: BLE001 - a session that cannot: read it the plain way
            call = None
        if call is not None:
            return lambda: int(call())
    return lambda: exact_step(session, read)


class StepReader:
    """:func:`step_reader` for whichever session a hook is given, made at its first read.

    ``reader(session)`` is the global step now. Hooks call it with
    ``run_context.session`` in ``after_run``: it works whether or not
    ``after_create_session`` was called (frameworks that drive hooks
    themselves, and TensorFlow's tests, call ``begin()`` then ``before_run`` /
    ``after_run`` only), and a new session (recovery) gets a new callable.
    """

    __slots__ = ("_call", "_read", "_session")

    def __init__(self, read):
        self._read, self._session, self._call = read, None, None

    def __call__(self, session):
        if session is not self._session:
            self._session, self._call = session, step_reader(session, self._read)
        return self._call()


def map_leaves(fn, fetches):
    """``fetches`` (nested lists, tuples, namedtuples, dicts) with every leaf replaced by
    ``fn(leaf)``, in containers of the same types."""
    cls = type(fetches)
    if cls is list:
        return [map_leaves(fn, f) for f in fetches]
    if cls is dict:
        return {k: map_leaves(fn, v) for k, v in fetches.items()}
    if cls is tuple:
        return tuple(map_leaves(fn, f) for f in fetches)
    if isinstance(fetches, dict):
        result = cls()
        result.update((k, map_leaves(fn, v)) for k, v in fetches.items())
        return result
    if isinstance(fetches, tuple) and hasattr(fetches, "_fields"):
        return cls(*(map_leaves(fn, f) for f in fetches))
    if isinstance(fetches, (list, tuple)):
        return cls(map_leaves(fn, f) for f in fetches)
    return fn(fetches)


def one_of(value, choices):
    """Whether ``value`` is one of ``choices`` (strings, None): compared by type first, so that
    an array or a data frame (whose ``==`` is elementwise) is simply not one of them."""
    return any(value is choice or (type(value) is type(choice) and value == choice)
               for choice in choices)


def check_bool(name, value):
    """Returns ``value`` as ``bool``; ``TypeError`` naming ``name`` unless it is a boolean."""
    if isinstance(value, bool):
        return value
    if type(value).__name__ == "bool_":  # numpy.bool_
        return bool(value)
    raise TypeError(f"`{name}` must be True or False, got {value!r} ({type(value).__name__}).")


def to_numpy(value, copy=True):
    """``value`` as numpy, converted as the eager and Keras backends hand values to hooks.

    An eager tensor as its ``numpy()`` gives it (a copy, unless ``copy=False``:
    for a value only read, the array may share the tensor's memory), without
    TensorFlow's two Python layers; a float as ``np.float64``; a numpy value as
    it is; anything else through ``np.asarray``.
    """
    if type(value) is float:  # Keras' logs
        return np.float64(value)
    internal = getattr(value, "_numpy_internal", None)
    if internal is not None:  # an EagerTensor: its numpy() without two Python layers
        try:
            array = internal()
        except Exception:  # noqa: BLE001 - numpy() raises TensorFlow's own error for it
            return value.numpy()
        return array.copy() if copy and type(array) is np.ndarray else array  # as numpy() does
    convert = getattr(value, "numpy", None)
    if convert is not None:
        return convert()
    if isinstance(value, float):
        return np.float64(value)
    return np.asarray(value) if not isinstance(value, np.generic) else value


class StepsPerRun:
    """How many global steps one ``run()`` call may make, for hooks that act on steps.

    TensorFlow's hooks take ``_set_steps_per_run(n)`` (its private protocol for a
    loop of steps inside one call); pyhooks' public form is
    ``pyhooks.RunInfo(steps_per_run=)``, which the driver enters around the hooks'
    ``begin()``. A value given through ``_set_steps_per_run`` wins. Hooks add
    :meth:`steps_per_run` to the fetched global step read to see that something
    may be due, then confirm the exact step, as they do for one step per call.
    """

    _given_steps_per_run = None

    def _set_steps_per_run(self, steps_per_run):
        from pyhooks.timer import check_positive

        self._given_steps_per_run = check_positive("steps_per_run", steps_per_run, integer=True,
                                                   allow_none=False)

    def steps_per_run(self):
        """The steps a call may make: ``_set_steps_per_run``'s, else the driver's RunInfo's."""
        if self._given_steps_per_run is not None:
            return self._given_steps_per_run
        from pyhooks.hook import run_info

        return run_info().steps_per_run
