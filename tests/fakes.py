"""A tiny in-memory stand-in for a TensorFlow session (no TensorFlow)."""

from __future__ import annotations

import itertools

from pyhooks import SessionRunHook


class FakeTensor:
    """A "graph element" whose value is computed from the step and the feeds."""

    _ids = itertools.count()

    def __init__(self, name, fn=None):
        self.name = name
        self.fn = fn or (lambda step, feeds: f"{name}@{step}")

    def __repr__(self):
        return f"FakeTensor({self.name})"


class FakeGraph:
    def __init__(self):
        self.finalized = False
        self.collections = {}

    def get_collection(self, key):
        return list(self.collections.get(key, []))


class FakeSession:
    """Evaluates nested fetch structures like ``tf.compat.v1.Session.run``."""

    def __init__(self, graph, fail_at=None, callables=False):
        self.graph = graph
        self.step = 0
        self.calls = []
        self.closed = False
        self.fail_at = dict(fail_at or {})
        if callables:  # as tf.compat.v1.Session: runs a flat fetch list without re-analysing it
            self.make_callable = lambda fetches: lambda: self.run(list(fetches))

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        if self.closed:
            raise RuntimeError("Attempted to use a closed Session.")
        self.calls.append((fetches, feed_dict, options))
        error = self.fail_at.pop(self.step, None)
        if error is not None:
            raise error
        result = self._eval(fetches, feed_dict or {})
        self.step += 1
        return result

    def _eval(self, fetches, feeds):
        if isinstance(fetches, dict):
            return type(fetches)((k, self._eval(v, feeds)) for k, v in fetches.items())
        if isinstance(fetches, list):
            return [self._eval(f, feeds) for f in fetches]
        if isinstance(fetches, tuple):
            values = [self._eval(f, feeds) for f in fetches]
            return type(fetches)(*values) if hasattr(fetches, "_fields") else tuple(values)
        return fetches.fn(self.step, feeds)

    def close(self):
        self.closed = True


class FakeCreator:
    def __init__(self, graph=None, fail_at=None, callables=False):
        self.graph = graph or FakeGraph()
        self.sessions = []
        self.fail_at = fail_at
        self.callables = callables

    def create_session(self):
        self.graph.finalized = True
        sess = FakeSession(self.graph, self.fail_at, self.callables)
        self.fail_at = None
        self.sessions.append(sess)
        return sess


class RecordingHook(SessionRunHook):
    """Records every lifecycle call into a shared log; fetches what it is given.

    ``raise_at``: the run (0-based) whose ``raise_in`` method raises (default: any);
    ``same_args``: return one SessionRunArgs object every step (pyhooks' hooks do).
    """

    def __init__(self, name, log, fetches=None, feeds=None, stop_at=None, raise_in=None,
                 raise_at=None, same_args=False):
        self.name, self.log = name, log
        self.fetches, self.feeds = fetches, feeds
        self.stop_at, self.raise_in, self.raise_at = stop_at, raise_in, raise_at
        self.same_args = same_args
        self.args = None
        self.results = []
        self.contexts = []
        self.runs = 0

    def _record(self, method, *extra):
        self.log.append((self.name, method, *extra))
        if self.raise_in == method and self.raise_at in (None, len(self.contexts) - 1):
            raise ValueError(f"boom in {self.name}.{method}")

    def begin(self):
        self._record("begin")

    def after_create_session(self, session, coord):
        self._record("after_create_session")

    def before_run(self, run_context):
        self.contexts.append(run_context)
        self._record("before_run")
        from pyhooks import SessionRunArgs

        if self.fetches is None and self.feeds is None:
            return None
        if not self.same_args:
            return SessionRunArgs(self.fetches, self.feeds)
        if self.args is None:
            self.args = SessionRunArgs(self.fetches, self.feeds)
        return self.args

    def after_run(self, run_context, run_values):
        self._record("after_run")
        self.runs += 1
        self.results.append(run_values.results)
        if self.stop_at is not None and self.runs >= self.stop_at:
            run_context.request_stop()

    def end(self, session):
        self._record("end")

    def after_error(self, session, error):
        self._record("after_error", type(error).__name__)


def new_name(name):
    """A new ``str`` object equal to ``name``: what R gives Python for a name at every call."""
    return "".join(list(name))


