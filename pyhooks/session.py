"""The hooked runner: ``MonitoredSession`` and friends, driving hooks around a session.

The runner touches the raw session only through ``run(fetches, feed_dict,
options, run_metadata)``, ``make_callable`` (if it has one), ``graph`` and
``close()``; sessions come from any object with ``create_session()``
(TensorFlow's ``ChiefSessionCreator`` and ``WorkerSessionCreator`` are used as
they are). See :mod:`pyhooks.hook` for the call order.

One step, as TensorFlow's ``_HookedSession.run`` (:class:`pyhooks._steps.HookedStep`,
shared with the Keras adapter)::

    context = SessionRunContext(SessionRunArgs(fetches, feed_dict), session)
    request = step.before(context, fetches, feed_dict, options)  # before_run on every hook,
                                                   # the fetches planned (pyhooks._plans)
    values = plan.call()            # make_callable(plan.flat), or session.run(plan.flat, ...)
    return step.after(request, values, ...)        # after_run on every hook: its results

Every graph element is fetched once however many parties ask for it, and each
gets back exactly the structure it asked for. Steps with feeds or
``RunOptions`` (the caller's or a hook's) go through ``session.run`` with the
merged feeds and options; other steps through the session's ``make_callable``
of the plan's flat fetch list once that plan is seen a second time.

Sessions and creators that are not TensorFlow's (:mod:`pyhooks.eager`, the
estimators' kept session) take part through the optional members of
:mod:`pyhooks._backend`: the creator's hooks and its scope around the hooks'
``begin()``, whether a new session can cure a preemption, what to fetch for a
caller's ``None``, whether ``make_callable`` is cheap.
"""

from __future__ import annotations

import inspect
import logging

from pyhooks import _backend
from pyhooks._feeds import new_run_metadata, new_run_options
from pyhooks._steps import (HookedStep, call, call_after_error, call_end, is_end_of_input,
                            is_preemption, make_coordinator)
from pyhooks.hook import SessionRunArgs, SessionRunContext, check_hooks, hooks_by_method

__all__ = ["MonitoredSession", "SingularMonitoredSession"]

_log = logging.getLogger("pyhooks")

MAX_RECOVERIES = 30  # sessions re-created in a row without a successful step, then the error
_new_tuple = tuple.__new__  # a namedtuple without its Python-level __new__ (per step)


# --------------------------------------------------------------------------- runner
class _MonitoredSessionBase:
    """Runs hooks around a session; see :mod:`pyhooks.hook` for the contract."""

    def __init__(self, session_creator, hooks, should_recover, stop_grace_period_secs=120):
        self._hooks = _backend.hooks_to_run(session_creator, check_hooks(hooks))
        using = hooks_by_method(self._hooks)
        self._after_create_hooks = using["after_create_session"]
        self._end_hooks = using["end"]
        self._error_hooks = using["after_error"]
        self._hooked = HookedStep(self._hooks)
        self._should_recover = should_recover
        self._stop_grace_period_secs = stop_grace_period_secs
        self._stop = False
        self._sess = None
        self._coord = None
        self._closed = False
        self._recoveries = 0
        if session_creator is None:
            from tensorflow.python.training.monitored_session import ChiefSessionCreator

            session_creator = ChiefSessionCreator()
        self._creator = session_creator
        self._can_recover = should_recover and _backend.can_recover(session_creator)
        self._graph, self._graph_was_finalized = _default_graph()
        try:
            with _backend.hook_scope(session_creator):
                for hook in using["begin"]:
                    call(hook, "begin")
            self._create_session()
        except BaseException as error:
            self._fail(error)
            raise

    # -- session lifetime
    def _create_session(self):
        while True:
            try:
                sess = self._creator.create_session()
                break
            except Exception as error:
                if not (self._can_recover and is_preemption(error)):
                    raise
                self._count_recovery(error, "while a session was being created")
        self._sess = sess
        self._hooked.new_session()
        self._coord = make_coordinator(sess)
        for hook in self._after_create_hooks:
            call(hook, "after_create_session", sess, self._coord)

    def _count_recovery(self, error, where):
        self._recoveries += 1
        if self._recoveries > MAX_RECOVERIES:
            error.add_note(f"pyhooks: gave up after {MAX_RECOVERIES} new sessions in a row "
                           "without a successful step")
            raise error
        _log.info("%s was raised %s (a preemption?); creating a new session (%d of at most "
                  "%d in a row).", type(error).__name__, where, self._recoveries, MAX_RECOVERIES)

    def _recover(self, error, where):
        """A preemption: a new session (``after_create_session`` again, not ``begin``)."""
        self._count_recovery(error, where)
        try:
            self._close_raw()
        except Exception:  # noqa: BLE001 - the old session is gone anyway
            pass
        self._create_session()

    def _close_raw(self):
        sess, coord = self._sess, self._coord
        self._sess = None
        self._coord = None
        try:
            if coord is not None:
                coord.request_stop()
                coord.join(stop_grace_period_secs=self._stop_grace_period_secs,
                           ignore_live_threads=True)
        finally:
            if sess is not None:
                sess.close()

    def _end_of_life(self):
        """The graph a session finalized is editable again once it is closed (as TensorFlow)."""
        graph = self._graph
        if graph is not None and not self._graph_was_finalized and graph.finalized:
            graph._unsafe_unfinalize()  # noqa: SLF001 - what TensorFlow's close() does

    def _fail(self, error):
        """Ends the loop after ``error``: after_error on every hook, close, no end()."""
        if self._closed:
            return
        self._closed = True
        call_after_error(self._error_hooks, self._sess, error)
        try:
            self._close_raw()
        except Exception as secondary:  # noqa: BLE001 - the original error wins
            try:
                error.add_note(f"pyhooks: closing the session also raised {secondary!r}")
            except (AttributeError, TypeError):
                pass
        finally:
            self._end_of_life()

    def close(self):
        """Ends the loop normally: ``end()`` on every hook, then closes the session.

        Raises:
            RuntimeError: it was closed already (as TensorFlow's).
        """
        if self._closed:
            raise RuntimeError("Session is already closed.")
        self._closed = True
        try:
            call_end(self._end_hooks, self._sess)
        finally:
            try:
                self._close_raw()
            finally:
                self._end_of_life()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None or is_end_of_input(exc_type):
            self.close()  # closed already in the block: RuntimeError, as TensorFlow
            return exc_type is not None
        self._fail(exc)
        return False

    # -- state
    @property
    def graph(self):
        return self._sess.graph if self._sess is not None else None

    def should_stop(self):
        """Whether the loop should end: a hook asked, the coordinator did, or the session is closed.

        An error a background thread reported to the coordinator
        (``coord.request_stop(error)``) surfaces here, as in TensorFlow: a
        preemption gets a new session (this returns ``False``); any other
        error makes this ``True`` (``MonitoredSession``) or is raised
        (``SingularMonitoredSession``), and again when the session is closed.
        """
        if self._stop or self._sess is None:
            return True
        try:
            self._coord.raise_requested_exception()
        except Exception as error:
            if not self._should_recover:
                raise
            if not (self._can_recover and is_preemption(error)):
                return True
            self._recover(error, "in a thread of the session")
            return False
        return self._coord.should_stop()

    @property
    def stopped_by(self):
        """pyhooks only: the first hook whose ``after_run`` requested the stop (None: none did)."""
        return self._hooked.stopped_by

    def raw_session(self):
        """The underlying session; its ``run`` triggers no hooks."""
        return self._sess

    _tf_sess = raw_session

    # -- stepping
    def run(self, fetches=None, feed_dict=None, options=None, run_metadata=None):
        """Runs one step: the caller's fetches plus every hook's, in one session call.

        ``fetches=None`` is for sessions where it means "one step" (the eager
        backend); a TensorFlow graph session refuses it, as ``Session.run`` does.

        Returns:
            exactly what ``session.run(fetches, ...)`` would return.
        Raises:
            RuntimeError: if a stop was already requested, or two parties feed
                the same tensor.
        """
        return self._recovering(self._step_once, "in a step", fetches, feed_dict, options,
                                run_metadata)

    def _recovering(self, call, where, *args):
        """``call(*args)``, again in a new session after each preemption (see ``_recover``)."""
        while True:
            try:
                result = call(*args)
                self._recoveries = 0
                return result
            except Exception as error:
                cause = self._preemption_behind(error)
                if cause is None:
                    raise
                self._recover(cause, where)

    def _step_once(self, fetches, feed_dict=None, options=None, run_metadata=None):
        if self._stop:
            raise RuntimeError("Run called even after should_stop requested.")
        if self._sess is None:
            raise RuntimeError("Run called on a closed MonitoredSession.")
        return self._step(fetches, feed_dict, options, run_metadata)

    def _preemption_behind(self, error):
        """The preemption to recover from: ``error``, or one a thread reported to the
        coordinator (it caused ``error``: TensorFlow raises that one instead); else ``None``."""
        cause = error
        if not is_preemption(error) and self._coord is not None:
            try:
                self._coord.raise_requested_exception()
            except Exception as reported:  # noqa: BLE001 - only a preemption replaces it
                if is_preemption(reported):
                    cause = reported
        if not is_preemption(cause):
            return None
        if not self._can_recover:
            if cause is not error:
                raise cause from None
            return None
        return cause

    def _step(self, fetches, feed_dict, options, run_metadata):
        sess, step = self._sess, self._hooked
        if not step.active:
            return sess.run(fetches, feed_dict=feed_dict, options=options,
                            run_metadata=run_metadata)
        context = SessionRunContext(_new_tuple(SessionRunArgs, (fetches, feed_dict, None)), sess)
        request = step.before(context, fetches if fetches is not None else
                              _backend.step_fetch(sess), feed_dict, options)
        feed_dict, options, plan = request.feed_dict, request.options, request.plan
        try:
            if feed_dict or options is not None or run_metadata is not None:
                if run_metadata is None:
                    run_metadata = new_run_metadata()
                values = sess.run(plan.flat, feed_dict=feed_dict, options=options,
                                  run_metadata=run_metadata)
            else:
                values = self._planned_values(plan, sess)
                options, run_metadata = new_run_options(), new_run_metadata()
        except BaseException as error:
            step.failed(request, error, sess)
            raise
        result = step.after(request, values, options, run_metadata)
        if context.stop_requested:
            self._stop = True
        return result

    @staticmethod
    def _planned_values(plan, sess):
        """The flat values of ``plan``: through the session's ``make_callable`` from the
        plan's second use (``Session.run`` analyses its fetches anew at every call), or
        from the first where the session keeps its callables (pyhooks' estimators)."""
        plan.uses += 1
        if plan.call is None and (plan.uses > 1 or _backend.keeps_callables(sess)):
            make_callable = getattr(sess, "make_callable", None)
            try:
                plan.call = make_callable(plan.flat) if make_callable and plan.flat else False
            except Exception:  # noqa: BLE001 - session.run below reports the real problem
                plan.call = False
        if plan.call:
            return plan.call()
        return sess.run(plan.flat)

    def run_step_fn(self, step_fn):
        """Runs ``step_fn(step_context)`` as TensorFlow's ``MonitoredSession.run_step_fn``.

        ``step_context`` has ``session`` (raw), ``run_with_hooks(...)`` and
        ``request_stop()``, which raises ``StopIteration`` out of ``step_fn``
        and of this call (a ``with`` block around the loop ends cleanly). A
        preemption anywhere in ``step_fn`` re-runs all of it in a new session.

        Raises:
            ValueError: ``step_fn`` does not take exactly ``step_context`` (or
                ``self, step_context``).
        """
        _check_step_fn(step_fn)
        return self._recovering(lambda: step_fn(_StepContext(self)), "in step_fn")


def _default_graph():
    """TensorFlow's default graph now and whether it was finalized (``(None, True)`` without TF)."""
    import sys

    if "tensorflow" not in sys.modules:
        return None, True
    from tensorflow.python.framework import ops

    graph = ops.get_default_graph()
    return graph, graph.finalized


def _check_step_fn(step_fn):
    try:
        names = tuple(p.name for p in inspect.signature(step_fn).parameters.values()
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
    except (TypeError, ValueError):
        names = None
    if names not in (("step_context",), ("self", "step_context")):
        raise ValueError("`step_fn` may either have one `step_context` argument, or `self` and "
                         f"`step_context` arguments if it's an instance method. Got {names} "
                         "instead.")


class _StepContext:
    """What ``run_step_fn`` hands ``step_fn``: TensorFlow's ``StepContext``."""

    def __init__(self, monitored):
        self._monitored = monitored

    @property
    def session(self):
        return self._monitored._sess  # noqa: SLF001

    def run_with_hooks(self, *args, **kwargs):
        return self._monitored._step_once(*args, **kwargs)  # noqa: SLF001

    def request_stop(self):
        raise StopIteration("step_fn has requested the iterations to stop.")


class MonitoredSession(_MonitoredSessionBase):
    """A session that runs hooks, handles initialization and recovers from preemption.

    Args:
        session_creator: anything with ``create_session()``; default TensorFlow's
            ``ChiefSessionCreator()``.
        hooks: a list of :class:`SessionRunHook` (TensorFlow's hooks work too; one hook
            alone is a list of it).
        stop_grace_period_secs: how long to wait for queue-runner threads at close.

    On ``AbortedError``/``UnavailableError`` the session is re-created (hooks get
    ``after_create_session`` again, not ``begin``) and the step is retried.

    Example:
        >>> with pyhooks.MonitoredSession(hooks=[pyhooks.StopAtStepHook(last_step=10)]) as sess:
        ...     while not sess.should_stop():
        ...         sess.run(train_op)
    """

    def __init__(self, session_creator=None, hooks=None, stop_grace_period_secs=120):
        super().__init__(session_creator, hooks, should_recover=True,
                         stop_grace_period_secs=stop_grace_period_secs)


class SingularMonitoredSession(_MonitoredSessionBase):
    """A ``MonitoredSession`` for one process that does not recover from errors.

    Args:
        hooks: a list of hooks.
        scaffold, master, config, checkpoint_dir, checkpoint_filename_with_path: passed
            to TensorFlow's ``ChiefSessionCreator`` (the variables are restored from
            the latest checkpoint of ``checkpoint_dir``, or from that file).
        stop_grace_period_secs: as for :class:`MonitoredSession`.
    """

    def __init__(self, hooks=None, scaffold=None, master="", config=None, checkpoint_dir=None,
                 stop_grace_period_secs=120, checkpoint_filename_with_path=None):
        from tensorflow.python.training.monitored_session import ChiefSessionCreator

        creator = ChiefSessionCreator(scaffold=scaffold, master=master, config=config,
                                      checkpoint_dir=checkpoint_dir,
                                      checkpoint_filename_with_path=checkpoint_filename_with_path)
        super().__init__(creator, hooks, should_recover=False,
                         stop_grace_period_secs=stop_grace_period_secs)
