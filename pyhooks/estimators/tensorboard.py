"""TensorBoard event files of estimators, as ``tf.estimator`` wrote them into ``model_dir``.

While training, :class:`EventWriterHook` writes the graph's summaries (the
training ``loss`` and any ``tf.compat.v1.summary`` op a ``model_fn`` made) every
``save_summary_steps`` steps and ``global_step/sec`` every
``log_step_count_steps`` steps; after ``evaluate()``,
:func:`write_metrics` writes the metrics to ``model_dir/eval`` (``eval_<name>``
for a named evaluation). :class:`GraphSummaries` stands for a graph's merged
summaries where ``SummarySaverHook`` takes a scaffold (R's
``hook_summary_saver()`` without ``summary_op``). :func:`start_tensorboard`
serves them: TensorBoard in a child process, on a loopback port.
"""

from __future__ import annotations

import atexit
import os
import re
import signal
import subprocess
import sys
import threading
import time
import weakref

from pyhooks.hook import SessionRunArgs, SessionRunHook
from pyhooks.hooks._model_dir import event_writer, flush_events
from pyhooks.timer import check_positive

__all__ = ["EventWriterHook", "GraphSummaries", "TensorBoard", "start_tensorboard",
           "stop_tensorboard", "summary_op", "write_metrics"]


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


_SERVING = re.compile(r"TensorBoard \S+ at (http://\S+?:(\d+)/)")
_RUNNING = weakref.WeakSet()  # servers started by this process, stopped at its exit


class TensorBoard:
    """A TensorBoard server started by :func:`start_tensorboard`.

    ``url`` is its address (``http://127.0.0.1:<port>/``), ``port`` the port,
    ``log_dir`` what it serves, ``process`` the child process. ``stop()`` ends
    it; so does leaving a ``with`` block, the exit of this Python process and,
    on Linux, the death of this process.
    """

    def __init__(self, process, log_dir, url, port, output):
        self.process = process
        self.log_dir = log_dir
        self.url = url
        self.port = port
        self._output = output

    @property
    def running(self):
        """True while the server's process runs."""
        return self.process.poll() is None

    def output(self):
        """The last lines TensorBoard wrote to its standard error (its log)."""
        return "".join(self._output)

    def stop(self, timeout=10.0):
        """Ends the server (SIGTERM, then SIGKILL after ``timeout`` seconds); returns its exit code."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        _RUNNING.discard(self)
        return self.process.returncode

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.stop()

    def __repr__(self):
        state = "running" if self.running else f"stopped, exit code {self.process.returncode}"
        return f"<TensorBoard at {self.url} serving {self.log_dir!r} ({state})>"


def _die_with_parent():  # runs in the child before TensorBoard starts (Linux only)
    import ctypes

    pr_set_pdeathsig = 1
    ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


def start_tensorboard(log_dir, port=0, host="127.0.0.1", timeout=120.0, reload_interval=5.0):
    """Starts TensorBoard on ``log_dir`` in a child process and returns once it serves.

    An estimator's ``model_dir`` shows as the runs ``.`` (training: ``loss``,
    ``global_step/sec``) and ``eval`` (the metrics of ``evaluate()``). The
    server reads new events every ``reload_interval`` seconds; it runs until
    :meth:`TensorBoard.stop`, the end of a ``with`` block, or the exit of this
    process.

    Args:
        log_dir: a directory of event files (an estimator's ``model_dir``).
        port: the port to listen on; 0 (the default) takes a free one.
        host: the address to listen on; the loopback address by default, so
            that only this machine can connect.
        timeout: seconds to wait for the server to start.
        reload_interval: seconds between two reads of the event files.

    Returns:
        A :class:`TensorBoard`: ``url``, ``port``, ``stop()``.

    Raises:
        ModuleNotFoundError: the Python package ``tensorboard`` is not installed.
        FileNotFoundError: ``log_dir`` is not an existing directory.
        ValueError: a bad ``port``, ``host``, ``timeout`` or ``reload_interval``.
        RuntimeError: TensorBoard ended or did not serve within ``timeout``
            seconds (its output is in the message).

    Example:
        >>> with start_tensorboard(model.model_dir) as board:  # doctest: +SKIP
        ...     print(board.url)
    """
    import importlib.util

    if importlib.util.find_spec("tensorboard") is None:
        raise ModuleNotFoundError("TensorBoard is not installed: pip install tensorboard",
                                  name="tensorboard")
    if not isinstance(log_dir, (str, os.PathLike)) or not os.path.isdir(log_dir):
        raise FileNotFoundError(f"`log_dir` must be an existing directory, got {log_dir!r}.")
    port = check_positive("port", port, integer=True, allow_none=False, allow_zero=True)
    if port > 65535:
        raise ValueError(f"`port` must be a port number (0 to 65535), got {port!r}.")
    if not isinstance(host, str) or not host:
        raise ValueError(f"`host` must be a non-empty string, got {host!r}.")
    timeout = check_positive("timeout", timeout, integer=False, allow_none=False)
    reload_interval = check_positive("reload_interval", reload_interval, integer=False,
                                     allow_none=False, allow_zero=True)
    log_dir = os.path.abspath(os.fspath(log_dir))
    command = [sys.executable, "-m", "tensorboard.main", "--logdir", log_dir, "--host", host,
               "--port", str(port), "--load_fast", "false",
               "--reload_interval", str(reload_interval)]
    env = dict(os.environ)
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    process = subprocess.Popen(
        command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        env=env, text=True, errors="replace",
        preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None)
    output = []  # TensorBoard's log: its last 50 lines
    found = threading.Event()
    served = {}

    def read():  # drains the pipe for the server's whole life
        for line in process.stderr:
            output.append(line)
            del output[:-50]
            match = _SERVING.search(line)
            if match and not found.is_set():
                served.update(url=match.group(1), port=int(match.group(2)))
                found.set()
        found.set()  # ended

    threading.Thread(target=read, name="tensorboard-log", daemon=True).start()
    found.wait(timeout)
    if not served:
        if process.poll() is None:
            process.kill()
        process.wait()
        problem = ("ended with exit code %d" % process.returncode if found.is_set()
                   else f"did not serve within {timeout:g} seconds")
        raise RuntimeError(f"TensorBoard {problem} (on {log_dir!r}). Its output:\n"
                           + "".join(output).rstrip())
    board = TensorBoard(process, log_dir, served["url"], served["port"], output)
    _RUNNING.add(board)
    return board


def stop_tensorboard(log_dir=None, timeout=10.0):
    """Stops the TensorBoard servers this process started on ``log_dir`` (None: all of them),
    as the R tensorflow package's ``tensorboard(action = "stop")``; returns how many it stopped.
    """
    if log_dir is not None and not isinstance(log_dir, (str, os.PathLike)):
        raise TypeError(f"`log_dir` must be a directory path or None, got {log_dir!r}.")
    wanted = None if log_dir is None else os.path.realpath(os.fspath(log_dir))
    stopped = 0
    for board in list(_RUNNING):
        if wanted is None or os.path.realpath(board.log_dir) == wanted:
            stopped += board.running
            board.stop(timeout)
    return stopped


@atexit.register
def _stop_all():
    stop_tensorboard(timeout=5.0)
