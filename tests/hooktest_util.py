"""Helpers for the built-in hook tests: tiny graphs, loop drivers, event readers.

Plain functions (not fixtures) so that test modules can import them without a
shared conftest.
"""

from __future__ import annotations

import glob
import os
import types

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf  # noqa: E402
from tensorflow.python.training import training_util  # noqa: E402

import pyhooks  # noqa: E402

RUNNERS = ("pyhooks", "tf")


def counter_graph(with_global_step=True):
    """A graph whose ``train_op`` adds 1 to the global step (after the hooks' read).

    Returns a namespace with ``graph``, ``global_step``, ``train_op``, ``x``
    (a float variable incremented by ``delta``), ``delta`` (placeholder with
    default 1.0) and ``loss`` (= ``x`` after the update, through ``loss_feed``).
    Enter ``ns.graph.as_default()`` yourself.
    """
    graph = tf.Graph()
    with graph.as_default():
        ns = types.SimpleNamespace(graph=graph)
        ns.delta = tf.compat.v1.placeholder_with_default(tf.constant(1.0), [], name="delta")
        ns.x = tf.compat.v1.get_variable("x", initializer=0.0, use_resource=True)
        update = tf.compat.v1.assign_add(ns.x, ns.delta)
        if with_global_step:
            ns.global_step = tf.compat.v1.train.get_or_create_global_step()
            read = training_util._get_or_create_global_step_read()
            with tf.control_dependencies([read, update]):
                ns.train_op = tf.compat.v1.assign_add(ns.global_step, 1)
        else:
            ns.global_step = None
            ns.train_op = update.op if hasattr(update, "op") else update
        ns.loss = tf.identity(update, name="loss")
    return ns


def make_session(hooks, runner="pyhooks", **creator_kwargs):
    """A monitored session of the chosen runner (``"pyhooks"`` or ``"tf"``)."""
    if runner == "pyhooks":
        creator = tf.compat.v1.train.ChiefSessionCreator(**creator_kwargs)
        return pyhooks.MonitoredSession(session_creator=creator, hooks=hooks)
    creator = tf.compat.v1.train.ChiefSessionCreator(**creator_kwargs)
    return tf.compat.v1.train.MonitoredSession(session_creator=creator, hooks=hooks)


def run_loop(hooks, fetches, max_steps=20, runner="pyhooks", feed_dict=None, **creator_kwargs):
    """Runs ``fetches`` until a stop is requested or ``max_steps``; returns the results."""
    results = []
    with make_session(hooks, runner, **creator_kwargs) as sess:
        while not sess.should_stop() and len(results) < max_steps:
            results.append(sess.run(fetches, feed_dict=feed_dict))
    return results


def read_events(directory):
    """Every event of every event file in ``directory``, in file then record order."""
    events = []
    for path in sorted(glob.glob(os.path.join(str(directory), "events.out.tfevents.*"))):
        events.extend(tf.compat.v1.train.summary_iterator(path))
    return events


def scalars(directory, tag):
    """``[(step, value)]`` of the scalar summaries named ``tag`` in ``directory``."""
    out = []
    for event in read_events(directory):
        for value in event.summary.value:
            if value.tag == tag:
                out.append((event.step, value.simple_value))
    return out


class FakeClock:
    """A clock for ``timer.clock``: advances by ``tick`` seconds at every read."""

    def __init__(self, start=1000.0, tick=0.0):
        self.now = start
        self.tick = tick

    def __call__(self):
        value = self.now
        self.now += self.tick
        return value

    def advance(self, secs):
        self.now += secs


def racy_graph():
    """The common TF1 pattern ``optimizer.minimize(loss, global_step=gs)``.

    Its increment is not ordered after the hooks' read of the global step, so
    the fetched value is sometimes the step after the run (value + 1 overshoots).
    """
    graph = tf.Graph()
    with graph.as_default():
        ns = types.SimpleNamespace(graph=graph)
        ns.global_step = tf.compat.v1.train.get_or_create_global_step()
        ns.w = tf.compat.v1.get_variable("w", [], initializer=tf.compat.v1.zeros_initializer())
        ns.loss = tf.square(ns.w - 3.0, name="loss")
        ns.train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
            ns.loss, global_step=ns.global_step)
    return ns


class Recorder(pyhooks.SessionRunHook):
    """Records begin / end / after_error (and nothing per step) in ``calls``."""

    def __init__(self):
        self.calls = []

    def begin(self):
        self.calls.append("begin")

    def end(self, session):
        self.calls.append("end")

    def after_error(self, session, error):
        self.calls.append(("after_error", type(error).__name__))


def drive(hooks, sess, fetches, steps, feed_dict=None):
    """Runs ``steps`` steps as a framework that drives hooks itself does (TensorFlow's
    ``_HookedSession``): ``before_run``, one ``sess.run`` of everyone's fetches,
    ``after_run``; no ``begin``, ``after_create_session`` or ``end`` (call them yourself).

    Returns the caller's results; stops early after a step in which a hook asked.
    """
    out = []
    for _ in range(steps):
        context = pyhooks.SessionRunContext(pyhooks.SessionRunArgs(fetches, feed_dict), sess)
        asked = [hook.before_run(context) for hook in hooks]
        feeds, options = dict(feed_dict or {}), None
        for args in asked:
            if args is not None:
                feeds.update(args.feed_dict or {})
                options = args.options or options
        theirs = [[] if a is None or a.fetches is None else [a.fetches] for a in asked]
        metadata = tf.compat.v1.RunMetadata()
        mine, values = sess.run([fetches, theirs], feed_dict=feeds or None, options=options,
                                run_metadata=metadata)
        for hook, value in zip(hooks, values):
            hook.after_run(context, pyhooks.SessionRunValues(
                value[0] if value else None, options or tf.compat.v1.RunOptions(), metadata))
        out.append(mine)
        if context.stop_requested:
            break
    return out


class InterruptAt(pyhooks.SessionRunHook):
    """Raises KeyboardInterrupt (Ctrl-C) in its ``n``-th after_run."""

    def __init__(self, n):
        self.n, self.runs = n, 0

    def after_run(self, run_context, run_values):
        self.runs += 1
        if self.runs == self.n:
            raise KeyboardInterrupt
