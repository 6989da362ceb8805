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


NAMES = [t.name for t in TENSORS] + [NOOP.name]  # fetches by name ("c0:0", "noop")


def nested(leaves):
    return st.recursive(
        leaves,
        lambda children: st.one_of(
            st.lists(children, max_size=4),
            st.lists(children, max_size=4).map(tuple),
            st.dictionaries(st.sampled_from("abcdef"), children, max_size=4),
            st.tuples(children, children).map(lambda t: Pair(*t)),
        ),
        max_leaves=12,
    )


leaves = st.sampled_from(TENSORS + [NOOP])
structures = nested(leaves)
named = nested(st.sampled_from(TENSORS + [NOOP] + NAMES))  # names too


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
@given(caller=named, hook_fetches=st.lists(named, max_size=4))
def test_every_requester_gets_what_session_run_returns(caller, hook_fetches):
    hooks = [Asker(f) for f in hook_fetches]
    with GRAPH.as_default():
        sess = pyhooks.MonitoredSession(KeepOpen(), hooks)
        got = sess.run(caller)
        sess.close()
    same(got, SESSION.run(caller))
    for hook in hooks:
        same(hook.results, SESSION.run(hook.fetches))


# --------------------------------------------------------------------------- step plans
def morph(old, new):
    """``new``'s structure, reusing (and editing in place) ``old``'s lists and dicts where it can.

    What a party that keeps its fetches in one object and edits it does; the
    runner's step plans must notice every such edit.
    """
    if type(old) is list and type(new) is list:
        old[:] = [morph(o, n) for o, n in zip(old, new)] + new[len(old):]
        return old
    if type(old) is dict and type(new) is dict:
        merged = {k: morph(old[k], v) if k in old else v for k, v in new.items()}
        old.clear()
        old.update(merged)
        return old
    if type(old) in (tuple, Pair) and type(new) is type(old) and len(old) == len(new):
        children = [morph(o, n) for o, n in zip(old, new)]
        if all(c is o for c, o in zip(children, old)):
            return old
        return Pair(*children) if type(new) is Pair else tuple(children)
    return new


def relabel(fetches, mapping):
    """``fetches`` with the same kinds of containers (new objects), each leaf replaced by ``mapping``."""
    if isinstance(fetches, dict):
        return {k: relabel(v, mapping) for k, v in fetches.items()}
    if isinstance(fetches, Pair):
        return Pair(*(relabel(f, mapping) for f in fetches))
    if isinstance(fetches, (list, tuple)):
        return type(fetches)(relabel(f, mapping) for f in fetches)
    return mapping[fetches]


STEPS = 6  # a party keeping its structure gets a callable from its second step
mappings = st.permutations(TENSORS + [NOOP]).map(lambda p: dict(zip(TENSORS + [NOOP], p)))


@st.composite
def step_fetches(draw):
    """Fetches for ``STEPS`` steps: the first structure again, with other leaves, or a new one."""
    first = draw(structures)
    steps = [first]
    for _ in range(STEPS - 1):
        steps.append(draw(st.one_of(mappings.map(lambda m: relabel(first, m)), structures,
                                    st.just(first))))
    return steps


class Editor(pyhooks.SessionRunHook):
    """Asks for ``steps[i]`` at step i: editing one structure in place where it can."""

    def __init__(self, steps, keep_args):
        self.steps, self.keep_args = steps, keep_args
        self.fetches = steps[0]
        self.args = pyhooks.SessionRunArgs(self.fetches)
        self.step = 0

    def before_run(self, run_context):
        if self.step:
            self.fetches = morph(self.fetches, self.steps[self.step])
            if self.args.fetches is not self.fetches:
                self.args = pyhooks.SessionRunArgs(self.fetches)
        # the same SessionRunArgs every step (pyhooks' hooks), or a new one (TensorFlow's)
        return self.args if self.keep_args else pyhooks.SessionRunArgs(self.fetches)

    def after_run(self, run_context, run_values):
        self.expected = SESSION.run(self.fetches)
        self.results = run_values.results
        self.step += 1


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(callers=step_fetches(),
       hooks_steps=st.lists(st.tuples(step_fetches(), st.booleans()), max_size=4),
       in_place=st.lists(st.booleans(), min_size=STEPS, max_size=STEPS))
@pytest.mark.parametrize("creator", ["KeepOpen", "Callables"])
def test_fetches_edited_between_steps_are_seen(creator, callers, hooks_steps, in_place):
    """Step plans are reused only while every structure is what it was (6 steps per example).

    Hooks keep one structure and edit it in place, or hand over new ones; so
    does the caller. At every step each party gets what a plain
    ``Session.run`` of its structure returns. With ``make_callable``
    (Callables), steady steps run through the session's callables too.
    """
    hooks = [Editor(steps, keep) for steps, keep in hooks_steps]
    caller = callers[0]
    with GRAPH.as_default():
        sess = pyhooks.MonitoredSession(globals()[creator](), hooks)
        for step in range(STEPS):
            if step:
                caller = morph(caller, callers[step]) if in_place[step] else callers[step]
            same(sess.run(caller), SESSION.run(caller))
            for hook in hooks:
                same(hook.results, hook.expected)
        sess.close()


def test_a_caller_list_edited_after_an_equal_one_is_seen():
    """Found by the property above: a plan made for list ``a`` reused for an equal list ``b``
    must watch ``b`` itself once ``b`` is edited in place."""

    class Fixed(pyhooks.SessionRunHook):
        args = pyhooks.SessionRunArgs(TENSORS[3])

        def before_run(self, run_context):
            return self.args

    with GRAPH.as_default():
        sess = pyhooks.MonitoredSession(KeepOpen(), [Fixed()])
        a, b = [TENSORS[0]], [TENSORS[0]]
        assert sess.run(a) == sess.run(b) == [0.0]
        b[0] = TENSORS[1]
        assert sess.run(b) == [1.5]
        sess.close()


class Callables(KeepOpen):
    """With ``make_callable``: plans get the session's callables from their second use."""

    def make_callable(self, fetches):
        return SESSION.make_callable(fetches)
