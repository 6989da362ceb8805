"""TensorBoard event files of estimators, as ``tf.estimator`` wrote them into ``model_dir``.

While training, :class:`EventWriterHook` writes the graph's summaries (the
training ``loss`` and any ``tf.compat.v1.summary`` op a ``model_fn`` made) every
``save_summary_steps`` steps and ``global_step/sec`` every
``log_step_count_steps`` steps; after ``evaluate()``,
:func:`write_metrics` writes the metrics to ``model_dir/eval`` (``eval_<name>``
for a named evaluation). :class:`GraphSummaries` stands for a graph's merged
summaries where ``SummarySaverHook`` takes a scaffold (R's
``hook_summary_saver()`` without ``summary_op``).
"""

from __future__ import annotations

import os
import time

from pyhooks.hook import SessionRunArgs, SessionRunHook
from pyhooks.hooks._model_dir import event_writer, flush_events
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
    """Writes a graph's summaries every N steps and ``global_step/sec`` every M steps.

    As ``tf.estimator`` did with ``save_summary_steps`` (``summary_steps``) and
    ``log_step_count_steps`` (``rate_steps``): each is written at the first step
    and then every so many steps (None or 0: never); ``global_step/sec`` is the
    steps per second since the previous measurement. Fetches the global step (and
    the summary op when it is due) only at those steps, nothing in between.
    Flushes at the end and after a failure.
    """

    def __init__(self, output_dir, summary, global_step_read, summary_steps=100,
                 rate_steps=None):
        self._output_dir = os.fspath(output_dir)
        self._summary_every = check_positive("summary_steps", summary_steps, integer=True,
                                             allow_zero=True) or 0
        self._rate_every = check_positive("rate_steps", rate_steps, integer=True,
                                          allow_zero=True) or 0
        if summary is None:
            self._summary_every = 0
        step_only = SessionRunArgs({"step": global_step_read})
        with_summary = SessionRunArgs({"step": global_step_read, "summary": summary})
        # what to fetch by (summary due, rate due)
        self._args = {(True, True): with_summary, (True, False): with_summary,
                      (False, True): step_only}
        self._writer = None

    def begin(self):
        self._writer = event_writer(self._output_dir)
        # steps left before the next write of each kind (-1: never)
        self._summary_in = 0 if self._summary_every else -1
        self._rate_in = 0 if self._rate_every else -1
        self._due = None
        self._last = None  # (step, time) of the last rate measurement
        self._started = False

    def before_run(self, run_context):
        due = (self._summary_in == 0, self._rate_in == 0)
        if self._summary_in > 0:
            self._summary_in -= 1
        if self._rate_in > 0:
            self._rate_in -= 1
        self._due = due
        return self._args.get(due)

    def after_run(self, run_context, run_values):
        if run_values.results is None:
            return
        from tensorflow.core.framework.summary_pb2 import Summary
        from tensorflow.core.util.event_pb2 import SessionLog

        summary_due, rate_due = self._due
        step = int(run_values.results["step"]) + 1
        if not self._started:
            self._writer.add_session_log(SessionLog(status=SessionLog.START), step)
            self._started = True
        if rate_due:
            self._rate_in = self._rate_every - 1
            now = time.perf_counter()
            if self._last is not None and now > self._last[1] and step > self._last[0]:
                rate = (step - self._last[0]) / (now - self._last[1])
                self._writer.add_summary(
                    Summary(value=[Summary.Value(tag="global_step/sec", simple_value=rate)]),
                    step)
            self._last = (step, now)
        if summary_due:
            self._summary_in = self._summary_every - 1
            self._writer.add_summary(run_values.results["summary"], step)

    def end(self, session):
        flush_events(self._writer, self._output_dir)

    def after_error(self, session, error):
        if self._writer is not None:
            flush_events(self._writer, self._output_dir)


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
