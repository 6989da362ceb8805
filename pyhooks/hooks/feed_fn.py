"""``FeedFnHook``: feed the values a function returns into every run."""

from __future__ import annotations

from pyhooks.hook import SessionRunArgs, SessionRunHook
from pyhooks.hooks._common import require_graph

__all__ = ["FeedFnHook"]


class FeedFnHook(SessionRunHook):
    """Calls ``feed_fn()`` before every run and feeds the dict it returns.

    ``feed_fn`` raising ``StopIteration`` means the input is exhausted: the
    monitored session ends cleanly (``end()`` is called), as with
    ``OutOfRangeError``. A generator's ``next`` is therefore a fine ``feed_fn``.

    Args:
        feed_fn: a function of no arguments returning ``{tensor: value}`` (or None).

    Raises:
        TypeError: if ``feed_fn`` is not callable; in ``before_run``, if it
            returns something other than a dict or None.
        HookSetupError: in ``begin()`` on the eager or Keras backend (no feeds there).

    Example:
        >>> batches = iter([{x: [1.0]}, {x: [2.0]}])
        >>> hook = FeedFnHook(lambda: next(batches))
        >>> with pyhooks.MonitoredSession(hooks=[hook]) as sess:
        ...     while not sess.should_stop():
        ...         sess.run(train_op)  # two steps, then a clean end
    """

    def __init__(self, feed_fn):
        if not callable(feed_fn):
            raise TypeError(f"`feed_fn` must be callable, got {feed_fn!r} "
                            f"({type(feed_fn).__name__}).")
        self.feed_fn = feed_fn

    def begin(self):
        require_graph("FeedFnHook", "an eager step and model.fit take no feeds; pass the inputs "
                      "to the step function instead (e.g. from a tf.data iterator).")

    def before_run(self, run_context):
        feed_dict = self.feed_fn()
        if feed_dict is not None and not isinstance(feed_dict, dict):
            raise TypeError(f"`feed_fn` must return a dict, got {feed_dict!r} "
                            f"({type(feed_dict).__name__}).")
        return SessionRunArgs(fetches=None, feed_dict=feed_dict)
