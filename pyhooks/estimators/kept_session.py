"""The estimator's long-lived session as ``MonitoredSession`` sees it, and the loop that runs it.

:class:`pyhooks.MonitoredSession` gets a session creator whose
``create_session()`` hands out the kept session behind a wrapper whose
``close()`` does nothing. The graph is finalized after it is built; before each
call's hooks run ``begin()`` it is reopened so that hooks may add ops, and the
creator finalizes it again before the first step, so a stray op created inside
the loop is still an error.

``MonitoredSession`` turns a repeated fetch list into a callable of the
session; the wrapper's ``make_callable`` makes it run in the caller's thread
(``RUN_INLINE``). Measured side by side with TensorFlow's inter-op pool
(bench/README.md, ``bench_floor.py --pool``), this halves the cost of mtcars'
tiny steps and is 1.1 to 2 times as fast on the DNN and linear models of
100,000 and 1,000,000 rows; the step's matrix kernels still use the intra-op
pool.

TensorFlow's pool threads compute with subnormal floats flushed to zero; the
calling thread does not, so an inline step flushes them too while it runs
(:func:`flushing_denormals`): the same numbers as in the pool, and no slow
path (a confident classifier's ``exp(-logit)`` near 1e-38 made the DNN of
bench/bench_floor.py 2x slower). Where that is not known to work (other than glibc
on x86_64), steps run in the pool.
"""

from __future__ import annotations

import ctypes
import platform

from pyhooks.estimators._quiet import quiet
from pyhooks.session import MonitoredSession

__all__ = ["KeptSessionCreator", "run_loop"]

# A step's ops run in the calling thread, not TensorFlow's inter-op pool (see the
# module docstring; bench/bench_estimators_data.py measures both).
RUN_INLINE = True
_CALLABLE_CACHE = 64


def _denormal_control():
    """``(libm, fenv_t type, word index, bits)`` that set flush-to-zero in glibc's ``fenv_t``
    on x86_64 Linux (its MXCSR, the 8th word: FTZ bit 15, DAZ bit 6), or None elsewhere
    (untested there: steps run in the pool)."""
    if platform.system() != "Linux" or platform.machine() != "x86_64":
        return None
    try:
        libm = ctypes.CDLL("libm.so.6")  # glibc's, whose fesetenv sets the whole MXCSR
    except OSError:
        return None
    return libm, ctypes.c_uint32 * 8, 7, 0x8040


_DENORMALS = _denormal_control()


def flushing_denormals(run):
    """``run`` with subnormal floats flushed to zero in the calling thread while it runs (the
    state of every TensorFlow pool thread), the thread's own state restored after."""
    libm, env_type, index, bits = _DENORMALS

    def run_flushed(*args):
        saved = env_type()
        libm.fegetenv(saved)
        flushed = env_type(*saved)
        flushed[index] |= bits
        libm.fesetenv(flushed)
        try:
            return run(*args)
        finally:
            libm.fesetenv(saved)
    return run_flushed


class KeptSessionMethods:
    """The estimator's long-lived session as ``MonitoredSession`` sees it (see
    :func:`kept_session_type`).

    ``close()`` keeps the session open. ``make_callable()`` (which
    ``MonitoredSession`` uses for a fetch list it sees again) returns a
    TensorFlow callable (``Session._make_callable_from_options``) that runs
    the step in the calling thread (``RunOptions.inter_op_thread_pool = -1``,
    ``RUN_INLINE``): no thread hand-off between the step's many small ops.
    Everything else is the wrapped ``tf.compat.v1.Session``'s.
    """

    __slots__ = ()  # the subclass made by kept_session_type() holds the fields

    def __init__(self, state):
        self._sess = state.session
        self._cache = state.callables
        self._graph = state.graph
        self._inline = RUN_INLINE and _DENORMALS is not None

    @property
    def graph(self):
        return self._graph

    @property
    def sess_str(self):
        return self._sess.sess_str

    def partial_run_setup(self, *args, **kwargs):
        return self._sess.partial_run_setup(*args, **kwargs)

    def partial_run(self, *args, **kwargs):
        return self._sess.partial_run(*args, **kwargs)

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        return self._sess.run(fetches, feed_dict=feed_dict, options=options,
                              run_metadata=run_metadata)

    pyhooks_keeps_callables = True  # make_callable of a list seen before costs nothing

    def make_callable(self, fetches, feed_list=None, accept_options=False):
        """What ``MonitoredSession`` caches for a repeated fetch list: a TensorFlow callable."""
        if feed_list is not None or accept_options:
            return self._sess.make_callable(fetches, feed_list, accept_options)
        if not isinstance(fetches, (list, tuple)):  # one element: its value
            run_list = self.make_callable([fetches])
            return lambda: run_list()[0]
        # Kept across train() calls: the default hooks fetch the same tensors.
        key = (self._inline, *map(id, fetches))
        entry = self._cache.get(key)
        if entry is None:
            if len(self._cache) >= _CALLABLE_CACHE:
                self._cache.clear()
            # holds the fetched objects, so that their ids stay theirs
            entry = self._cache[key] = (list(fetches),
                                        fast_callable(self._sess, self._graph, list(fetches),
                                                       self._inline))
        return entry[1]

    def close(self):
        """Keeps the session: it belongs to the estimator."""

    def __getattr__(self, name):
        return getattr(self._sess, name)

    def __repr__(self):
        return f"<pyhooks kept session of {self._sess!r}>"


_KEPT_TYPE = []


def kept_session_type():
    """``KeptSession``: :class:`KeptSessionMethods` on TensorFlow's ``SessionInterface``
    (``Saver.save`` & co. accept only those). Made on first use: its base comes from
    TensorFlow, which ``import pyhooks.estimators`` does not import."""
    if not _KEPT_TYPE:
        from tensorflow.python.client.session import SessionInterface

        _KEPT_TYPE.append(type("KeptSession", (KeptSessionMethods, SessionInterface),
                               {"__slots__": ("_sess", "_cache", "_graph", "_inline")}))
    return _KEPT_TYPE[0]


def fast_callable(session, graph, fetches, inline):
    """A function running ``fetches`` (flat graph elements), in the caller's thread if ``inline``.

    Falls back to ``session.make_callable`` for anything that is not a plain
    tensor or operation of the graph (nested structures, other graphs' elements).
    """
    from tensorflow.core.protobuf import config_pb2

    elements = []
    try:
        for fetch in fetches:
            if isinstance(fetch, (list, tuple, dict)):
                raise TypeError("nested")
            elements.append(graph.as_graph_element(fetch, allow_tensor=True,
                                                   allow_operation=True))
    except (TypeError, ValueError, KeyError):
        return session.make_callable(fetches)
    options = config_pb2.CallableOptions()
    if inline:
        options.run_options.inter_op_thread_pool = -1  # run in the calling thread
    slots = []
    names = {}
    for element in elements:
        if hasattr(element, "dtype"):  # a tensor
            index = names.get(element.name)
            if index is None:
                index = names[element.name] = len(names)
                options.fetch.append(element.name)
            slots.append(index)
        else:
            options.target.append(element.name)
            slots.append(None)
    run = session._make_callable_from_options(options)  # noqa: SLF001
    if inline:
        run = flushing_denormals(run)

    if all(slot == i for i, slot in enumerate(slots)):
        return run
    if all(slot is None for slot in slots):
        def run_targets():
            run()
            return [None] * len(slots)
        return run_targets

    def run_and_place():
        values = run()
        return [None if slot is None else values[slot] for slot in slots]
    return run_and_place


class KeptSessionCreator:
    """``create_session()`` finalizes the graph and returns the kept session."""

    def __init__(self, state):
        self._state = state
        # under a strategy a lost peer is not cured by a new session: its error propagates
        self.pyhooks_can_recover = state.can_recover

    def create_session(self):
        self._state.graph.finalize()
        return kept_session_type()(self._state)


def run_loop(state, hooks, fetches, collect=None):
    """Runs ``fetches`` in ``state``'s session under ``MonitoredSession`` until a hook stops it
    or the input ends; ``collect`` gets each step's values.

    Returns:
        ``(input exhausted, the hook that requested the stop or None)``.
    """
    graph = state.graph
    exhausted = True
    with graph.as_default():
        with quiet():
            graph._unsafe_unfinalize()  # noqa: SLF001 - hooks' begin() may add ops
            try:
                monitored = MonitoredSession(KeptSessionCreator(state), hooks)
            finally:
                graph.finalize()
        try:
            with monitored:
                while not monitored.should_stop():
                    values = monitored.run(fetches)
                    if collect is not None:
                        collect(values)
                exhausted = False  # (the input's end leaves the block from monitored.run)
        finally:  # closing un-finalized the graph it found open (as TensorFlow's does)
            graph.finalize()
    return exhausted, monitored.stopped_by
