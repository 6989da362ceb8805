"""Property: whatever nested fetches the caller and hooks ask for, with any duplicates,
each gets back exactly what a plain ``Session.run`` of its own structure returns."""

import collections

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

tf = pytest.importorskip("tensorflow")
v1 = tf.compat.v1

import pyhooks  # noqa: E402

Pair = collections.namedtuple("Pair", "left right")

GRAPH = tf.Graph()
with GRAPH.as_default():
    TENSORS = [tf.constant(i * 1.5, name=f"c{i}") for i in range(6)]
    NOOP = tf.no_op(name="noop")
    SESSION = v1.Session(graph=GRAPH)


class KeepOpen:
    """Hands out the one module-level session; closing the runner keeps it alive."""

    graph = GRAPH

    def create_session(self):
        return self

    def run(self, *args, **kwargs):
        return SESSION.run(*args, **kwargs)

    def close(self):
        pass


leaves = st.sampled_from(TENSORS + [NOOP])
structures = st.recursive(
    leaves,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.lists(children, max_size=4).map(tuple),
        st.dictionaries(st.sampled_from("abcdef"), children, max_size=4),
        st.tuples(children, children).map(lambda t: Pair(*t)),
    ),
    max_leaves=12,
)


class Asker(pyhooks.SessionRunHook):
    def __init__(self, fetches):
        self.fetches = fetches

    def before_run(self, run_context):
        return pyhooks.SessionRunArgs(self.fetches)

    def after_run(self, run_context, run_values):
        self.results = run_values.results


def same(a, b):
    assert type(a) is type(b)
    if isinstance(a, dict):
        assert list(a) == list(b)
        for key in a:
            same(a[key], b[key])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            same(x, y)
    else:
        assert a == b


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(caller=structures, hook_fetches=st.lists(structures, max_size=4))
def test_every_requester_gets_what_session_run_returns(caller, hook_fetches):
    hooks = [Asker(f) for f in hook_fetches]
    with GRAPH.as_default():
        sess = pyhooks.MonitoredSession(KeepOpen(), hooks)
        got = sess.run(caller)
        sess.close()
    same(got, SESSION.run(caller))
    for hook in hooks:
        same(hook.results, SESSION.run(hook.fetches))
