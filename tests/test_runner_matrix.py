"""Every hook shape on every backend, checked against what plain TensorFlow returns.

Backends: a graph ``MonitoredSession``, the eager backend, Keras ``model.fit``.
Hook shapes: which of ``before_run``/``after_run`` a hook defines, times what its
``before_run`` returns from step to step (:data:`MODES`), times the caller's
fetches (graph and eager). Each run takes :data:`STEPS` steps; every value a
hook or the caller receives is compared with the value plain TensorFlow gives
for the same fetch at that step (a ``tf.compat.v1.Session`` running the same
graph, the same step function called directly, the logs Keras hands a plain
callback). A hypothesis test draws per-step sequences of requests.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pyhooks
from pyhooks._plans import signature
from pyhooks.eager import GLOBAL_STEP_READ

STEPS = 20
NAMES = ("loss", "w", "step")
X = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32)
Y = np.array([[1.0], [2.0], [3.0]], np.float32)
W0 = np.array([[0.5], [-0.25]], np.float32)
RATE = 0.01


# --------------------------------------------------------------------------- requests
def _leaf(name):
    return ("leaf", name)


# What a hook's before_run returns at step k (0-based), as a structure of names; the
# modes differ in which objects are new or kept (see ShapeHook.before_run).
MODES = {
    "same args": lambda k: "loss",                          # one SessionRunArgs, kept
    "new args": lambda k: "loss",                           # a new SessionRunArgs each step
    "None": lambda k: None,
    "dict": lambda k: {"l": "loss", "s": "step"},           # built anew each step
    "list kept": lambda k: ["w", "loss"],                   # the same list object
    "list edited in place": lambda k: ["loss"] if k % 2 else ["step", "w", "loss"],
    "nested rebuilt": lambda k: {"a": ["loss", ("step",)], "b": "w"},
    "changes every 3 steps": lambda k: "loss" if (k // 3) % 2 else ("step", "w"),
}
METHOD_SETS = {
    "before_run only": ("before_run",),
    "after_run only": ("after_run",),
    "both": ("before_run", "after_run"),
    "neither": (),
}


def _build(structure, leaves):
    """``structure`` of names with each name replaced by ``leaves[name]`` (a fetch, or the
    reference value of a step)."""
    if structure is None:
        return None
    if isinstance(structure, str):
        return leaves[structure]
    if isinstance(structure, dict):
        return {k: _build(v, leaves) for k, v in structure.items()}
    return type(structure)(_build(v, leaves) for v in structure)


def assert_same(got, want, where):
    """Same containers (types, keys, order) and equal leaf values."""
    if isinstance(want, dict):
        assert type(got) is dict and list(got) == list(want), where
        for key in want:
            assert_same(got[key], want[key], f"{where}[{key!r}]")
    elif isinstance(want, (list, tuple)):
        assert type(got) is type(want) and len(got) == len(want), (where, got, want)
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, f"{where}[{i}]")
    elif want is None:
        assert got is None, (where, got)
    else:
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6, err_msg=where)


class _Base(pyhooks.SessionRunHook):
    def __init__(self, modes, leaves):
        self.modes = modes  # one mode per step (the last one repeats)
        self.leaves = leaves
        self.asked, self.got, self.options = [], [], []
        self.kept_args = self.kept_list = None
        self.k = 0

    def _mode(self):
        return self.modes[min(self.k, len(self.modes) - 1)]

    def _before_run(self, run_context):
        mode = self._mode()
        structure = MODES[mode](self.k)
        self.asked.append(structure)
        self.k += 1
        if structure is None:
            return None
        fetches = _build(structure, self.leaves)
        if mode in ("same args", "changes every 3 steps"):
            if self.kept_args is None or signature(self.kept_args.fetches) != signature(fetches):
                self.kept_args = pyhooks.SessionRunArgs(fetches)
            return self.kept_args
        if mode in ("list kept", "list edited in place"):
            if self.kept_list is None:
                self.kept_list = []
            self.kept_list[:] = fetches  # the same list object, edited in place
            return pyhooks.SessionRunArgs(self.kept_list)
        return pyhooks.SessionRunArgs(fetches)

    def _after_run(self, run_context, run_values):
        if "before_run" not in self.methods:
            self.k += 1
        self.got.append(run_values.results)
        self.options.append((type(run_values.options).__name__,
                             type(run_values.run_metadata).__name__))


def shape_hook(methods, modes, leaves):
    """A hook that defines exactly ``methods`` (plus ``begin``, unused by the runner here)."""
    body = {"methods": methods}
    if "before_run" in methods:
        body["before_run"] = _Base._before_run
    if "after_run" in methods:
        body["after_run"] = _Base._after_run
    return type("Hook_" + "_".join(methods or ("none",)), (_Base,), body)(modes, leaves)


def check_hook(hook, reference, steps=STEPS):
    if "after_run" not in hook.methods:
        assert hook.got == []
        return
    assert len(hook.got) == steps
    assert all(o == ("RunOptions", "RunMetadata") for o in hook.options)
    for k in range(steps):
        want = _build(hook.asked[k], reference[k]) if "before_run" in hook.methods else None
        assert_same(hook.got[k], want, f"{type(hook).__name__} step {k}")


# --------------------------------------------------------------------------- backends
def graph_model():
    graph = tf.Graph()
    with graph.as_default():
        v1 = tf.compat.v1
        step = v1.train.get_or_create_global_step()
        from tensorflow.python.training import training_util

        step_read = training_util._get_or_create_global_step_read()  # noqa: SLF001
        w = v1.get_variable("w", initializer=tf.constant(W0))
        w_read = tf.identity(w.read_value())
        loss = tf.reduce_mean(tf.square(tf.matmul(tf.constant(X), w) - tf.constant(Y)))
        with tf.control_dependencies([loss, w_read, step_read]):  # every read before the update
            train = v1.train.GradientDescentOptimizer(RATE).minimize(loss, global_step=step)
    return graph, train, {"loss": loss, "w": w_read, "step": step_read}


def graph_reference(graph, train, leaves, steps=STEPS):
    with graph.as_default(), tf.compat.v1.Session(graph=graph) as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        return [sess.run({**leaves, "op": train}) for _ in range(steps)]


GRAPH_CALLERS = {
    "an op": (lambda train, leaves: train, lambda ref: None),
    "a new [op, loss] list": (lambda train, leaves: [train, leaves["loss"]],
                              lambda ref: [None, ref["loss"]]),
    "a dict": (lambda train, leaves: {"op": train, "loss": leaves["loss"]},
               lambda ref: {"op": None, "loss": ref["loss"]}),
}


def run_graph(caller, hook_specs, steps=STEPS):
    graph, train, leaves = graph_model()
    reference = graph_reference(graph, train, leaves, steps)
    make, want = GRAPH_CALLERS[caller]
    hooks = [shape_hook(methods, modes, leaves) for methods, modes in hook_specs]
    with graph.as_default(), pyhooks.MonitoredSession(hooks=hooks) as sess:
        for k in range(steps):
            assert_same(sess.run(make(train, leaves)), want(reference[k]), f"caller step {k}")
    for hook in hooks:
        check_hook(hook, reference, steps)


def eager_step_fn():
    w = tf.Variable(W0)
    x, y = tf.constant(X), tf.constant(Y)

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
        before = tf.identity(w)
        w.assign_sub(RATE * tape.gradient(loss, w))
        return {"loss": loss, "w": before}
    return step


def eager_reference(steps=STEPS):
    step = eager_step_fn()
    return [{**{k: v.numpy() for k, v in step().items()}, "step": np.int64(k)}
            for k in range(steps)]


EAGER_LEAVES = {"loss": "loss", "w": "w", "step": GLOBAL_STEP_READ}
EAGER_CALLERS = {
    "None (one step)": (lambda: None, lambda ref: None),
    "a new [loss, w] list": (lambda: ["loss", "w"], lambda ref: [ref["loss"], ref["w"]]),
    "a dict": (lambda: {"loss": "loss"}, lambda ref: {"loss": ref["loss"]}),
}


def run_eager(caller, hook_specs, steps=STEPS):
    reference = eager_reference(steps)
    make, want = EAGER_CALLERS[caller]
    hooks = [shape_hook(methods, modes, EAGER_LEAVES) for methods, modes in hook_specs]
    creator = pyhooks.EagerSessionCreator(eager_step_fn())
    with pyhooks.MonitoredSession(creator, hooks) as sess:
        for k in range(steps):
            assert_same(sess.run(make()), want(reference[k]), f"caller step {k}")
    for hook in hooks:
        check_hook(hook, reference, steps)


def keras_model():
    import keras

    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(
        1, use_bias=False, kernel_initializer=keras.initializers.Constant(W0))])
    model.compile(optimizer=keras.optimizers.SGD(RATE), loss="mse")
    return model


def run_keras(hook_specs, steps=STEPS):
    import keras

    class Plain(keras.callbacks.Callback):  # what Keras gives a plain callback
        def __init__(self):
            super().__init__()
            self.seen = []

        def on_train_batch_end(self, batch, logs=None):
            self.seen.append({"loss": np.float64(logs["loss"]),
                              "w": self.model.layers[0].kernel.numpy(),
                              "step": np.int64(int(self.model.optimizer.iterations.numpy()) - 1)})

    model = keras_model()
    leaves = {"loss": "loss", "w": model.layers[0].kernel, "step": GLOBAL_STEP_READ}
    hooks = [shape_hook(methods, modes, leaves) for methods, modes in hook_specs]
    plain = Plain()
    model.fit(X, Y, batch_size=3, epochs=steps, shuffle=False, verbose=0,
              callbacks=[plain, pyhooks.keras_callback(hooks)])
    for hook in hooks:
        check_hook(hook, plain.seen, steps)


# --------------------------------------------------------------------------- the matrix
SHAPES = list(itertools.product(METHOD_SETS, MODES))


@pytest.mark.parametrize("caller", GRAPH_CALLERS)
@pytest.mark.parametrize(("methods", "mode"), SHAPES)
def test_graph_one_hook(methods, mode, caller):
    run_graph(caller, [(METHOD_SETS[methods], [mode])])


@pytest.mark.parametrize("caller", EAGER_CALLERS)
@pytest.mark.parametrize(("methods", "mode"), SHAPES)
def test_eager_one_hook(methods, mode, caller):
    run_eager(caller, [(METHOD_SETS[methods], [mode])])


@pytest.mark.parametrize(("methods", "mode"), SHAPES)
def test_keras_one_hook(methods, mode):
    run_keras([(METHOD_SETS[methods], [mode])])


ALL_SHAPES = [(METHOD_SETS[methods], [mode]) for methods, mode in SHAPES]


@pytest.mark.parametrize("caller", GRAPH_CALLERS)
def test_graph_every_shape_at_once(caller):
    run_graph(caller, ALL_SHAPES)


@pytest.mark.parametrize("caller", EAGER_CALLERS)
def test_eager_every_shape_at_once(caller):
    run_eager(caller, ALL_SHAPES)


def test_keras_every_shape_at_once():
    run_keras(ALL_SHAPES)


def test_tensorflows_own_first_example_runs_on_every_backend():
    """A hook with a before_run returning SessionRunArgs(loss) and nothing else (two of them)."""
    class Fetch(pyhooks.SessionRunHook):
        def __init__(self, loss):
            self.loss = loss

        def before_run(self, run_context):
            return pyhooks.SessionRunArgs(self.loss)

    graph, train, leaves = graph_model()
    with graph.as_default(), pyhooks.MonitoredSession(
            hooks=[Fetch(leaves["loss"]), Fetch(leaves["loss"])]) as sess:
        for _ in range(5):
            sess.run(train)
    creator = pyhooks.EagerSessionCreator(eager_step_fn())
    with pyhooks.MonitoredSession(creator, [Fetch("loss"), Fetch("loss")]) as sess:
        for _ in range(5):
            sess.run()
    keras_model().fit(X, Y, batch_size=1, epochs=2, verbose=0,
                      callbacks=[pyhooks.keras_callback([Fetch("loss"), Fetch("loss")])])


# --------------------------------------------------------------------------- random sequences
_mode_runs = st.lists(st.sampled_from(sorted(MODES)), min_size=1, max_size=8)
_hook_specs = st.lists(st.tuples(st.sampled_from(sorted(METHOD_SETS)), _mode_runs),
                       min_size=1, max_size=4)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(specs=_hook_specs, caller=st.sampled_from(sorted(GRAPH_CALLERS)))
def test_random_request_sequences_on_a_graph(specs, caller):
    """Each hook's request changes from step to step (a drawn sequence of modes)."""
    run_graph(caller, [(METHOD_SETS[m], modes) for m, modes in specs], steps=8)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(specs=_hook_specs, caller=st.sampled_from(sorted(EAGER_CALLERS)))
def test_random_request_sequences_on_the_eager_backend(specs, caller):
    run_eager(caller, [(METHOD_SETS[m], modes) for m, modes in specs], steps=8)
