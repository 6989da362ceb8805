"""``SummarySaverHook``: write summaries to TensorBoard event files every N steps or seconds."""

from __future__ import annotations

from pyhooks.hook import SessionRunArgs, SessionRunHook
from pyhooks.hooks._common import StepsPerRun, current_backend, global_step_read
from pyhooks.errors import HookSetupError
from pyhooks.hooks._lookup import check_exclusive, check_fetches, check_has
from pyhooks.hooks._output import check_output_dir
from pyhooks.hooks._workers import worker_path
from pyhooks.timer import SecondOrStepTimer, check_positive

__all__ = ["SummarySaverHook"]


class SummarySaverHook(StepsPerRun, SessionRunHook):
    """Evaluates summary ops on the steps the timer selects and writes them to an event file.

    The summary op is fetched only on those steps, together with the caller's
    fetches; the global step is fetched every step (value + 1 is the next
    step) and read back once when a summary is written. A ``SessionLog.START`` is written
    before the first summary. The writer is flushed in ``end()`` and after a
    failure, so TensorBoard sees everything written so far.

    On the eager and Keras backends there is no summary op: ``summary_op`` names
    the values to write (step outputs by name, or variables; a name, a list, or
    ``{tag: name or variable}``), written with ``tf.summary`` (as TensorBoard's
    scalar for one value, histogram for several, text for strings) to a
    ``tf.summary.create_file_writer(output_dir)`` writer (or ``summary_writer``,
    a ``tf.summary`` writer). A ``scaffold`` is refused there in ``begin()``.

    Args:
        save_steps: save every N global steps.
        save_secs: save every N seconds. Exactly one of the two.
        output_dir: directory of the event file; used without ``summary_writer``
            (the writer is opened in ``begin()`` through ``FileWriterCache``).
        summary_writer: a ``tf.compat.v1.summary.FileWriter``.
        scaffold: a ``Scaffold`` whose ``summary_op`` to save.
        summary_op: a serialized-``Summary`` string tensor or a list of them
            (e.g. ``tf.compat.v1.summary.merge_all()``). Exactly one of
            ``scaffold`` / ``summary_op``.

    Raises:
        ValueError: not exactly one of ``scaffold``/``summary_op`` or of the two
            periods, a bad period, or neither ``output_dir`` nor ``summary_writer``
            (TensorFlow silently saved nothing).
        RuntimeError: in ``begin()``, if the graph has no global step.

    Example:
        >>> tf.compat.v1.summary.scalar("loss", loss)
        >>> hook = SummarySaverHook(save_steps=10, output_dir="/tmp/model",
        ...                         summary_op=tf.compat.v1.summary.merge_all())
    """

    def __init__(self, save_steps=None, save_secs=None, output_dir=None, summary_writer=None,
                 scaffold=None, summary_op=None):
        if (scaffold is None) == (summary_op is None):
            raise ValueError("Exactly one of scaffold or summary_op must be provided.")
        output_dir = check_output_dir(output_dir)
        if summary_writer is None and not output_dir:
            raise ValueError("SummarySaverHook needs `output_dir` or `summary_writer` to write "
                             f"to, got output_dir={output_dir!r} and summary_writer=None.")
        check_exclusive(required=True, save_secs=save_secs, save_steps=save_steps)
        self._timer = SecondOrStepTimer(
            every_secs=check_positive("save_secs", save_secs, integer=False),
            every_steps=check_positive("save_steps", save_steps, integer=True))
        check_has("scaffold", scaffold, ["summary_op"], "a tf.compat.v1.train.Scaffold")
        check_fetches(summary_op, "summary_op", allow_none=True)
        check_has("summary_writer", summary_writer, ["add_summary", "flush"],
                  "a tf.compat.v1.summary.FileWriter")
        self._summary_op = summary_op
        self._scaffold = scaffold
        self._output_dir = output_dir
        self._given_writer = summary_writer
        self._summary_writer = summary_writer

    def begin(self):
        import tensorflow as tf

        backend = current_backend()
        self._eager = backend is not None
        if self._eager:
            if self._scaffold is not None:
                raise HookSetupError(
                    f"SummarySaverHook: a Scaffold's summary op needs a graph; on the {backend.kind} "
                    "backend pass summary_op= the step outputs to write with tf.summary, e.g. "
                    "summary_op=['loss'].")
            self._eager_summaries = _eager_summaries(backend, self._summary_op)
        if self._given_writer is None:
            output_dir = worker_path(self._output_dir)  # a non-chief worker: its own directory
            self._summary_writer = (
                tf.summary.create_file_writer(str(output_dir)) if self._eager else
                tf.compat.v1.summary.FileWriterCache.get(str(output_dir)))
        self._next_step = None
        self._timer.reset()
        self._global_step_tensor = global_step_read("SummarySaverHook")
        self._per_run = self.steps_per_run()

    def before_run(self, run_context):
        self._request_summary = (self._next_step is None
                                 or self._timer.should_trigger_for_step(self._next_step))
        if not self._request_summary:
            return None  # between writes the step is counted, nothing is fetched
        requests = {"global_step": self._global_step_tensor}
        summary_op = self._get_summary_op()
        if summary_op is not None:
            requests["summary"] = summary_op
        return SessionRunArgs(requests)

    def after_run(self, run_context, run_values):
        from tensorflow.core.util.event_pb2 import SessionLog

        if self._next_step is None or self._request_summary:
            # value + 1 may overshoot when the increment is not ordered after the
            # read; the steps that write read it back (once per save, as TensorFlow).
            step = int(run_context.session.run(self._global_step_tensor))
        else:
            # Between writes, count runs from the last step read back: exact in one
            # process, and corrected at the next write if other workers move the step.
            step = self._next_step
        if self._next_step is None and not self._eager:
            self._summary_writer.add_session_log(SessionLog(status=SessionLog.START), step)
        if self._request_summary:
            self._timer.update_last_triggered_step(step)
            if self._eager:
                _write_eager(self._summary_writer, run_values.results["summary"], step)
            for summary in () if self._eager else run_values.results.get("summary", ()):
                self._summary_writer.add_summary(summary, step)
        self._next_step = step + self._per_run

    def end(self, session=None):
        self._summary_writer.flush()

    def after_error(self, session, error):
        if self._summary_writer is not None:
            self._summary_writer.flush()

    def _get_summary_op(self):
        """The summary op(s) as a list, or None if the scaffold has none."""
        if self._eager:
            return self._eager_summaries
        summary_op = self._summary_op
        if summary_op is None:
            summary_op = self._scaffold.summary_op
        if summary_op is None:
            return None
        return summary_op if isinstance(summary_op, list) else [summary_op]


def _eager_summaries(backend, spec):
    """``{tag: fetch}`` from a name, a variable, a list of them or a dict (eager/Keras)."""
    if not isinstance(spec, dict):
        items = spec if isinstance(spec, (list, tuple)) else [spec]
        spec = {(item if isinstance(item, str) else
                 getattr(item, "path", None) or item.name.split(":")[0]): item for item in items}
    return {tag: backend.element(value, f"summary {tag!r}", "SummarySaverHook")
            for tag, value in spec.items()}


def _write_eager(writer, values, step):
    from pyhooks.hooks._summary import write_value

    for tag, value in values.items():
        write_value(writer, tag, value, step)
