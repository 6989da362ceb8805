"""ProfilerHook: Chrome traces of TensorFlow's ops and of every hook's calls, every N steps."""

from __future__ import annotations

import json
import os
import time

from pyhooks import _logging
from pyhooks.hook import SessionRunArgs, SessionRunHook
from pyhooks.hooks._common import check_bool, current_backend, global_step_read, require_graph
from pyhooks.hooks._workers import worker_path
from pyhooks.timer import SecondOrStepTimer, check_positive

__all__ = ["ProfilerHook"]

_INSTEAD = ("in model.fit Keras runs the batches; profile them with "
            "keras.callbacks.TensorBoard(profile_batch=...).")


class ProfilerHook(SessionRunHook):
    """Writes ``timeline-<step>.json`` (Chrome Trace Event format) every N steps or seconds.

    A traced step runs with ``RunOptions(trace_level=FULL_TRACE)``; its file holds
    TensorFlow's op timeline and, under :class:`pyhooks.MonitoredSession`, one span
    per hook call of that step (``cat: "pyhooks"``, e.g. ``HistorySaverHook.after_run``)
    in a process of its own, so each hook's cost shows beside the ops. As in
    TensorFlow, the file is written in the traced step's ``after_run`` and the
    step's run metadata goes to an event file in ``output_dir`` (TensorBoard's
    Graphs tab, run ``step_<N>``); the hook calls still to come in that step (later
    hooks' ``after_run``, the whole step's span) are added to the file at the next
    step's ``before_run`` (or in ``end``/``after_error``). As in TensorFlow, the
    first step is never traced. Open the file in ``chrome://tracing`` or
    https://ui.perfetto.dev.

    On the eager backend (:class:`pyhooks.EagerSessionCreator`) a traced step runs
    under TensorFlow 2's profiler instead (``tf.profiler.experimental``, started in
    this hook's ``before_run`` and stopped in its ``after_run``): its trace goes
    to ``output_dir/profile-<step>/plugins/profile/`` (``tensorboard --logdir
    output_dir``, Profile tab: one run per traced step), and
    ``timeline-<step>.json`` holds the hook spans of the step. If another
    profiler is already running, the step is not traced by TensorFlow (a
    warning says so) and the hook spans are still written. In ``model.fit``
    ``begin()`` refuses, naming what to use instead.

    Args:
        save_steps: trace every this many steps. Exactly one of ``save_steps`` and
            ``save_secs``.
        save_secs: trace every this many seconds.
        output_dir: where the files go (created when the first one is written).
        show_dataflow: add flow events connecting producers and consumers of tensors.
        show_memory: add object snapshots showing tensor sizes and lifetimes.

    Example:
        >>> hooks = [ProfilerHook(save_steps=100, output_dir="/tmp/prof")]
        >>> # ... train with hooks; then open /tmp/prof/timeline-101.json ...
    """

    def __init__(self, save_steps=None, save_secs=None, output_dir="", show_dataflow=True,
                 show_memory=False):
        if (save_steps is None) == (save_secs is None):
            raise ValueError("Exactly one of `save_steps` and `save_secs` must be set, got "
                             f"save_steps={save_steps!r}, save_secs={save_secs!r}.")
        save_steps = check_positive("save_steps", save_steps, integer=True)
        save_secs = check_positive("save_secs", save_secs, integer=False)
        if not isinstance(output_dir, (str, os.PathLike)):
            raise TypeError(f"`output_dir` must be a directory path, got {output_dir!r}.")
        self._given_dir = self._output_dir = os.fspath(output_dir)
        self._show_dataflow = check_bool("show_dataflow", show_dataflow)
        self._show_memory = check_bool("show_memory", show_memory)
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._pending = None
        self._next_step = self._decided = self._spans = None

    @property
    def pyhooks_span_sink(self):
        """A list on the steps this hook traces (pyhooks' runner times their hook calls).

        The runner reads it as a step starts, before any ``before_run``: whether
        the step is traced is decided then, with the clock of that moment, as
        TensorFlow's hook decides in its ``before_run``.
        """
        return self._spans if self._decide() else None

    def _decide(self):
        """Whether the coming step is traced (decided once per step; never the first)."""
        if self._decided is None:
            self._decided = (self._next_step is not None and
                             self._timer.should_trigger_for_step(self._next_step))
            self._spans = [] if self._decided else None
        return self._decided

    def begin(self):
        from tensorflow.core.protobuf import config_pb2

        backend = current_backend()
        self._eager = backend is not None and backend.kind == "eager"
        # a non-chief worker: its own directory (below the current one for "")
        own = worker_path(self._given_dir or os.curdir)
        self._output_dir = self._given_dir if own == (self._given_dir or os.curdir) else own
        if not self._eager:
            require_graph("ProfilerHook", _INSTEAD)
        self._step_tensor = global_step_read(type(self).__name__)
        self._profiling = False  # eager: TensorFlow's profiler is running for this hook
        trace = config_pb2.RunOptions(trace_level=config_pb2.RunOptions.FULL_TRACE)
        self._plain_args = SessionRunArgs(self._step_tensor)
        self._trace_args = SessionRunArgs(self._step_tensor, options=trace)
        self._next_step = self._decided = self._spans = None

    def before_run(self, run_context):
        if self._pending is not None:
            self._write()
        tracing = self._decide()
        if self._eager:
            if tracing:
                self._start_profiler(self._next_step)
            return self._plain_args
        return self._trace_args if tracing else self._plain_args

    def after_run(self, run_context, run_values):
        stale_step = int(run_values.results)
        if self._next_step is None:  # first step: the timer starts counting here
            self._timer.update_last_triggered_step(stale_step)
        step = stale_step + 1
        if self._decided:
            step = int(run_context.session.run(self._step_tensor))
            self._timer.update_last_triggered_step(step)
            if self._eager:
                self._stop_profiler()
                stats = None
            else:
                stats = type(run_values.run_metadata.step_stats)()
                stats.CopyFrom(run_values.run_metadata.step_stats)
                self._write_run_metadata(run_values.run_metadata, step)
            offset = time.time() - time.perf_counter()  # perf_counter -> epoch, as TF's ts
            self._pending = (step, stats, self._spans, offset)
            self._write(keep=True)  # now, as TensorFlow; again with the rest of the spans
        self._next_step = step + 1
        self._decided = self._spans = None  # the next step decides for itself

    def end(self, session):
        self._stop_profiler()
        self._write()

    def after_error(self, session, error):
        self._stop_profiler()
        self._write()

    def _start_profiler(self, step):
        import tensorflow as tf

        try:  # a run of its own per step: TensorFlow names runs by the second
            tf.profiler.experimental.start(os.path.join(self._output_dir, f"profile-{step}"))
        except (tf.errors.AlreadyExistsError, tf.errors.UnavailableError) as error:
            _logging.warning("ProfilerHook: TensorFlow's profiler is busy (%s); this step's "
                             "timeline holds the hook calls only.", error.message)
        else:
            self._profiling = True

    def _stop_profiler(self):
        if self._profiling:
            import tensorflow as tf

            self._profiling = False
            tf.profiler.experimental.stop()

    def _write_run_metadata(self, run_metadata, step):
        import tensorflow as tf

        writer = tf.compat.v1.summary.FileWriterCache.get(self._output_dir or ".")
        writer.add_run_metadata(run_metadata, f"step_{step}", step)
        writer.flush()

    def _write(self, keep=False):
        """Writes the pending timeline; ``keep``: it is written again later (more spans)."""
        if self._pending is None:
            return
        import tensorflow as tf
        from tensorflow.python.client import timeline

        step, stats, spans, offset = self._pending
        if not keep:
            self._pending = None
        trace = {"traceEvents": []} if stats is None else json.loads(
            timeline.Timeline(stats).generate_chrome_trace_format(
                show_dataflow=self._show_dataflow, show_memory=self._show_memory))
        events = trace.setdefault("traceEvents", [])
        for event in events:  # TensorFlow's metadata events have no tid
            event.setdefault("tid", 0)
        if spans:
            pid = 1 + max((e["pid"] for e in events if isinstance(e.get("pid"), int)), default=-1)
            events.append({"name": "process_name", "ph": "M", "pid": pid, "tid": 0,
                           "args": {"name": f"pyhooks hook calls (step {step})"}})
            events.extend({"name": f"{hook}.{method}", "cat": "pyhooks", "ph": "X",
                           "pid": pid, "tid": 0, "ts": (start + offset) * 1e6,
                           "dur": max(end - start, 0.0) * 1e6, "args": {"step": step}}
                          for hook, method, start, end in spans)
        path = os.path.join(self._output_dir, f"timeline-{step}.json")
        if keep:
            _logging.info("Saving timeline for %d into '%s'.", step, path)
        if self._output_dir:
            tf.io.gfile.makedirs(self._output_dir)
        with tf.io.gfile.GFile(path, "w") as f:
            f.write(json.dumps(trace, indent=1))
