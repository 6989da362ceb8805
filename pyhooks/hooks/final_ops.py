"""``FinalOpsHook``: evaluate tensors once, when the session ends."""

from __future__ import annotations


from pyhooks import _logging
from pyhooks.hook import SessionRunHook
from pyhooks.hooks._common import current_backend, read_values
from pyhooks.hooks._lookup import check_fetches, names_as_values

__all__ = ["FinalOpsHook"]



class FinalOpsHook(SessionRunHook):
    """Runs ``final_ops`` in ``end()`` and keeps their values.

    Typical use: read metric values after an evaluation loop. The ops should
    only read state: if evaluating them needs more input (``OutOfRangeError``
    or ``StopIteration``), a warning is logged and the error is raised, as
    TensorFlow does (results are never silently ``None``).

    Args:
        final_ops: a tensor, a list of tensors or a dict of names to tensors; a tensor
            or operation name gives its value (``"global_step"`` as ``"global_step:0"``).
        final_ops_feed_dict: a feed dict for that one run.

    Raises:
        TypeError: ``final_ops`` holds something that is not a tensor, an operation,
            a variable or a name (a number, an array...), or ``final_ops_feed_dict``
            is not a dict.

    Example:
        >>> hook = FinalOpsHook({"accuracy": accuracy})
        >>> # ... evaluation loop ...
        >>> hook.final_ops_values["accuracy"]
    """

    def __init__(self, final_ops, final_ops_feed_dict=None):
        if final_ops_feed_dict is not None and not isinstance(final_ops_feed_dict, dict):
            raise TypeError("`final_ops_feed_dict` must be a dict or None, got "
                            f"{final_ops_feed_dict!r} ({type(final_ops_feed_dict).__name__}).")
        check_fetches(final_ops, "final_ops", allow_none=True)
        self._final_ops = self._fetches = final_ops
        self._final_ops_feed_dict = final_ops_feed_dict
        self._final_ops_values = None

    def begin(self):
        # a name gives its value ("global_step" and "global_step:0" alike), as TensorFlow's
        # hooks resolve names; on the eager and Keras backends names are the step's outputs
        self._fetches = self._final_ops
        if self._final_ops is not None and current_backend() is None:
            import tensorflow as tf

            self._fetches = names_as_values(self._final_ops, tf.compat.v1.get_default_graph(),
                                            "FinalOpsHook: `final_ops`")

    @property
    def final_ops_values(self):
        """The values of ``final_ops`` (same structure), or None before ``end()``."""
        return self._final_ops_values

    def end(self, session):
        if self._final_ops is None:
            return
        from tensorflow.python.framework import errors

        try:
            if self._final_ops_feed_dict:
                self._final_ops_values = session.run(self._fetches,
                                                     feed_dict=self._final_ops_feed_dict)
            else:  # eager/Keras sessions: variables and the last step's outputs, no new step
                self._final_ops_values = read_values(session, self._fetches)
        except (errors.OutOfRangeError, StopIteration) as error:
            _logging.warning(
                "FinalOpsHook: evaluating `final_ops` in end() raised %s: the input is "
                "exhausted. The final ops most likely have a dependency back to some input "
                "source (an iterator, a queue, a tf.data pipeline), so reading them asks for "
                "one more batch. Final ops should only read state: for a metric, pass its "
                "value tensor (which reads the metric's variables), not its update op nor "
                "anything computed from a batch.", type(error).__name__)
            raise
