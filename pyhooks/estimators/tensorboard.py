"""TensorBoard event files of estimators, as ``tf.estimator`` wrote them into ``model_dir``.

While training, :class:`EventWriterHook` writes the graph's summaries (the
training ``loss`` and any ``tf.compat.v1.summary`` op a ``model_fn`` made) and
``global_step/sec`` every ``save_summary_steps`` steps; after ``evaluate()``,
:func:`write_metrics` writes the metrics to ``model_dir/eval`` (``eval_<name>``
for a named evaluation). :class:`GraphSummaries` stands for a graph's merged
summaries where ``SummarySaverHook`` takes a scaffold (R's
``hook_summary_saver()`` without ``summary_op``).
"""

from __future__ import annotations

import os
import time

from pyhooks.hook import SessionRunArgs, SessionRunHook
from pyhooks.timer import check_positive

__all__ = ["EventWriterHook", "GraphSummaries", "summary_op", "write_metrics"]


def summary_op(graph):
    """The graph's merged summary op (kept in its ``summaries`` collection), or None."""
    import tensorflow as tf

    found = graph.get_collection(tf.compat.v1.GraphKeys.SUMMARY_OP)
    return found[0] if found else None


class GraphSummaries:
    """A scaffold-like object whose ``summary_op`` is the running graph's merged summaries.

    Give it as ``SummarySaverHook(scaffold=GraphSummaries(), ...)``: the op is
    looked up in the default graph when the hook asks for it (pyhooks' estimators
    merge the loss and the model's summaries into one op when they build a graph).
    """

    @property
    def summary_op(self):
        import tensorflow as tf

        return summary_op(tf.compat.v1.get_default_graph())

    def __repr__(self):
        return "GraphSummaries()"


class EventWriterHook(SessionRunHook):
    """Writes a graph's summaries and ``global_step/sec`` to ``output_dir`` every N steps.

    Fetches the summary op and the global step at the first step and then every
    ``every_n_steps`` steps; fetches nothing in between. Flushes at the end and
    after a failure.
    """

    def __init__(self, output_dir, summary, global_step_read, every_n_steps=100):
        self._output_dir = os.fspath(output_dir)
        self._every = check_positive("every_n_steps", every_n_steps, integer=True,
                                     allow_none=False)
        fetches = {"step": global_step_read}
        if summary is not None:
            fetches["summary"] = summary
        self._args = SessionRunArgs(fetches)
        self._writer = None

    def begin(self):
        import tensorflow as tf

        self._writer = tf.compat.v1.summary.FileWriterCache.get(self._output_dir)
        self._countdown = 0
        self._last = None  # (step, time) of the last write

    def before_run(self, run_context):
        if self._countdown:
            self._countdown -= 1
            return None
        return self._args

    def after_run(self, run_context, run_values):
        if run_values.results is None:
            return
        from tensorflow.core.framework.summary_pb2 import Summary
        from tensorflow.core.util.event_pb2 import SessionLog

        self._countdown = self._every - 1
        step = int(run_values.results["step"]) + 1
        now = time.perf_counter()
        if self._last is None:
            self._writer.add_session_log(SessionLog(status=SessionLog.START), step)
        elif now > self._last[1] and step > self._last[0]:
            rate = (step - self._last[0]) / (now - self._last[1])
            self._writer.add_summary(
                Summary(value=[Summary.Value(tag="global_step/sec", simple_value=rate)]), step)
        summary = run_values.results.get("summary")
        if summary is not None:
            self._writer.add_summary(summary, step)
        self._last = (step, now)

    def end(self, session):
        self._writer.flush()

    def after_error(self, session, error):
        if self._writer is not None:
            self._writer.flush()


def write_metrics(model_dir, name, metrics, step):
    """Writes ``{tag: number}`` at ``step`` to ``model_dir/eval`` (``eval_<name>``)."""
    import tensorflow as tf
    from tensorflow.core.framework.summary_pb2 import Summary

    directory = os.path.join(model_dir, "eval" if not name else f"eval_{name}")
    with tf.Graph().as_default():  # the v1 writer wants a graph (it writes none of this one)
        writer = tf.compat.v1.summary.FileWriterCache.get(directory)
    values = [Summary.Value(tag=tag, simple_value=float(value))
              for tag, value in sorted(metrics.items()) if tag != "global_step"]
    writer.add_summary(Summary(value=values), step)
    writer.flush()
