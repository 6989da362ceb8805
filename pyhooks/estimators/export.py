"""``export_savedmodel()``: an estimator's prediction graph and latest weights as a SavedModel.

The SavedModel has one signature, ``serving_default``: its inputs are the
input columns the model reads (named after them; a column read as two types
gets ``<name>_<type>``), one value per example; its outputs are the
predictions ``predict()`` gives (``classes`` included for classifiers).
``tf.saved_model.load(path).signatures["serving_default"](drat=...)`` serves it.
"""

from __future__ import annotations

import os
import time

from pyhooks.estimators._quiet import import_tensorflow, quiet
from pyhooks.estimators.graph import ModelTensors, global_step_read
from pyhooks.estimators.models import saved_variables
from pyhooks.estimators.modes import PREDICT
from pyhooks.estimators.pipeline import placeholder_name

__all__ = ["export_savedmodel"]


def _unique_dir(base):
    stamp = int(time.time())
    while os.path.exists(os.path.join(base, str(stamp))):
        stamp += 1
    return os.path.join(base, str(stamp))


def export_savedmodel(estimator, export_dir_base, checkpoint_path=None, as_text=False):
    """Writes ``export_dir_base/<timestamp>``: a SavedModel serving ``estimator``'s predictions.

    Args:
        estimator: a trained estimator (canned or custom).
        export_dir_base: the directory under which the timestamped export is made.
        checkpoint_path: the checkpoint to export (default: the latest one).
        as_text: write the graph as a text protocol buffer.

    Returns:
        the export's path.

    Raises:
        ValueError: no checkpoint yet, or a custom estimator whose input columns
            are not known yet (never trained).
    """
    tf = import_tensorflow()
    v1 = tf.compat.v1
    if not isinstance(export_dir_base, (str, os.PathLike)) or not os.fspath(export_dir_base):
        raise TypeError(f"`export_dir_base` must be a directory path, got {export_dir_base!r}.")
    checkpoint = checkpoint_path or estimator.latest_checkpoint()
    if checkpoint is None:
        raise ValueError(f"No checkpoint in {estimator.model_dir!r}: train the model before "
                         "exporting it.")
    inputs = estimator.serving_inputs()
    path = _unique_dir(os.fspath(export_dir_base))
    graph = tf.Graph()
    with graph.as_default(), quiet():
        step = v1.train.get_or_create_global_step()
        state = ModelTensors(step, global_step_read(tf, step))
        batch, serving = {}, {}
        for name, key, dtype, shape in inputs:
            batch[key] = serving[name] = v1.placeholder(tf.as_dtype(dtype), [None, *shape],
                                                        name=placeholder_name(name))
        estimator.model_builder()(state, tf, PREDICT, batch)
        outputs = dict(state.predictions)
        names = estimator.class_names()
        if "class_ids" in outputs and names is not None:
            outputs["classes"] = tf.gather(tf.constant(names), outputs["class_ids"])
        saver = v1.train.Saver(var_list=saved_variables(tf, state.model_variables),
                               allow_empty=True)
        with v1.Session(graph=graph) as session:
            session.run([v1.global_variables_initializer(), v1.tables_initializer()])
            saver.restore(session, checkpoint)
            builder = v1.saved_model.Builder(path)
            signature = v1.saved_model.predict_signature_def(inputs=serving, outputs=outputs)
            builder.add_meta_graph_and_variables(
                session, [v1.saved_model.tag_constants.SERVING],
                signature_def_map={"serving_default": signature},
                main_op=v1.tables_initializer(), strip_default_attrs=True)
            builder.save(as_text=as_text)
    return path
