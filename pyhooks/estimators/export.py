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
import types

from pyhooks.estimators._quiet import import_tensorflow, quiet
from pyhooks.estimators.estimator import _LABEL, PREDICT, _feature_name, _GraphState, _tf_dtype

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
        ValueError: no checkpoint yet, or a custom estimator that has not seen
            any input (its input columns are not known yet).
    """
    tf = import_tensorflow()
    v1 = tf.compat.v1
    if not isinstance(export_dir_base, (str, os.PathLike)) or not os.fspath(export_dir_base):
        raise TypeError(f"`export_dir_base` must be a directory path, got {export_dir_base!r}.")
    checkpoint = checkpoint_path or estimator.latest_checkpoint()
    if checkpoint is None:
        raise ValueError(f"No checkpoint in {estimator.model_dir!r}: train the model before "
                         "exporting it.")
    custom = getattr(estimator, "_model_fn", None) is not None
    if custom:
        signatures = [key[1] for key in estimator._states if isinstance(key, tuple)]  # noqa: SLF001
        if not signatures:
            raise ValueError("export_savedmodel() of a custom estimator needs its input's "
                             "columns: train, evaluate or predict with it first.")
        inputs = [(name, kind, shape) for name, kind, shape in signatures[0] if name != _LABEL]
    path = _unique_dir(os.fspath(export_dir_base))
    graph = tf.Graph()
    with graph.as_default(), quiet():
        state = types.SimpleNamespace(spec_hooks=[])
        state.global_step = v1.train.get_or_create_global_step()
        state.global_step_read = state.global_step._graph_element  # noqa: SLF001
        if custom:
            batch = {name: v1.placeholder(tf.as_dtype(kind), [None, *shape], name=name)
                     for name, kind, shape in inputs}
            serving = dict(batch)
            estimator._build_model_fn(state, tf, PREDICT, batch)  # noqa: SLF001
        else:
            raw = estimator._raw_inputs  # noqa: SLF001
            keys = [key for key, _ in raw]
            batch, serving = {}, {}
            for key, kind in raw:
                name = key if keys.count(key) == 1 else f"{key}_{kind}"
                width = max(column.input_dimension(key)
                            for column in estimator._raw_users[(key, kind)])  # noqa: SLF001
                placeholder = v1.placeholder(_tf_dtype(tf, kind),
                                             [None] if width == 1 else [None, width], name=name)
                batch[_feature_name(key, kind)] = serving[name] = placeholder
            _GraphState._build_canned(state, tf, estimator, PREDICT, batch)  # noqa: SLF001
        outputs = dict(state.predictions)
        head = getattr(estimator, "_head", None)
        if "class_ids" in outputs and hasattr(head, "n_classes"):
            names = head.label_vocabulary or [str(i) for i in range(head.n_classes)]
            outputs["classes"] = tf.gather(tf.constant(names), outputs["class_ids"])
        saver = v1.train.Saver(var_list=state.model_variables, allow_empty=True)
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
