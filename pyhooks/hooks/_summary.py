"""Writing TF2 (``tf.summary``) event files without TensorBoard installed (eager/Keras backends).

``tf.summary.scalar`` & co. live in the ``tensorboard`` package, which pyhooks does
not require; ``tf.summary.write`` is TensorFlow's own. Values are written in
the layouts of TensorBoard's scalars, histograms and text plugins, so TensorBoard
shows them as ``tf.summary.scalar``/``histogram``/``text`` would.
"""

from __future__ import annotations

__all__ = ["write_value"]

_BUCKETS = 30


def _metadata(plugin):
    from tensorflow.core.framework import summary_pb2

    return summary_pb2.SummaryMetadata(
        plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name=plugin))


def write_value(writer, tag, value, step):
    """Writes ``value`` at ``step`` to the ``tf.summary`` ``writer``.

    A number is a scalar (float32), several numbers a histogram (30 buckets),
    strings text.
    """
    import numpy as np
    import tensorflow as tf

    value = np.asarray(value)
    if value.dtype.kind in "SUO":
        tensor, plugin = tf.constant(value.astype(bytes) if value.dtype.kind == "U" else value), "text"
    elif value.size == 1:
        tensor, plugin = tf.constant(float(value.reshape(())), tf.float32), "scalars"
    else:
        values = value.astype(np.float64).ravel()
        counts, edges = np.histogram(values[np.isfinite(values)], bins=_BUCKETS)
        tensor = tf.constant(np.stack([edges[:-1], edges[1:], counts], axis=1), tf.float64)
        plugin = "histograms"
    with writer.as_default():
        tf.summary.write(tag, tensor, step=int(step), metadata=_metadata(plugin))
