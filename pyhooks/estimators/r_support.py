"""An estimator's checkpoints and exports as the R package gives them (tfestimators' meanings).

The R functions ``export_savedmodel()``, ``variable_names()`` and
``variable_value()`` call these. They follow tfestimators and the tensorflow R
package where those differ from ``tf.estimator``:

* :func:`export_savedmodel_to`: ``overwrite`` and ``versioned``, as the
  tensorflow R package's ``export_savedmodel()`` generic took them;
* :func:`variable_names` and :func:`variable_values`: tfestimators' message for
  a name the checkpoint does not hold, with what it holds after it; 64-bit
  integer values as doubles (R has no 64-bit integers; reticulate converts
  such arrays the same way).
"""

from __future__ import annotations

import os
import shutil
import tempfile

import numpy as np

from pyhooks.estimators._quiet import import_tensorflow

__all__ = ["export_savedmodel_to", "variable_names", "variable_values"]

_SAVED_MODEL_FILES = ("saved_model.pb", "saved_model.pbtxt")


def _is_saved_model_or_empty(path):
    entries = os.listdir(path)
    return not entries or any(name in entries for name in _SAVED_MODEL_FILES)


def export_savedmodel_to(estimator, export_dir_base, overwrite=True, versioned=None,
                         checkpoint_path=None, as_text=False):
    """Exports ``estimator`` as a SavedModel, where the R package's arguments say.

    Args:
        estimator: a trained estimator.
        export_dir_base: with ``versioned``, the directory under which a new
            ``<timestamp>`` directory holds the export; without, the export's own
            directory.
        overwrite: when not ``versioned`` and ``export_dir_base`` exists: True
            replaces it (only if it holds a SavedModel or nothing: any other
            directory is refused, never deleted), False is an error.
        versioned: export under a new timestamped directory (default: ``not
            overwrite``, as in the tensorflow R package).
        checkpoint_path: the checkpoint to export (default: the latest).
        as_text: write the graph as text.

    Returns:
        the path of the SavedModel's directory.

    Raises:
        FileExistsError: ``export_dir_base`` exists and cannot be replaced.
        TypeError, ValueError: as :meth:`Estimator.export_savedmodel`.
    """
    for name, value in (("overwrite", overwrite), ("versioned", versioned),
                        ("as_text", as_text)):
        if not isinstance(value, (bool, np.bool_)) and not (name == "versioned" and value is None):
            raise TypeError(f"`{name}` must be True or False, got {value!r}.")
    if versioned is None:
        versioned = not overwrite
    if not isinstance(export_dir_base, (str, os.PathLike)) or not os.fspath(export_dir_base):
        raise TypeError(f"`export_dir_base` must be a directory path, got {export_dir_base!r}.")
    target = os.path.abspath(os.fspath(export_dir_base))
    if versioned:
        return estimator.export_savedmodel(target, checkpoint_path=checkpoint_path,
                                           as_text=bool(as_text))
    exists = os.path.lexists(target)
    if exists and not os.path.isdir(target):
        raise FileExistsError(f"`export_dir_base` {target!r} is a file, not a directory.")
    if exists and not overwrite:
        raise FileExistsError(f"`export_dir_base` {target!r} already exists: give "
                              "overwrite = True to replace it, or versioned = True to export "
                              "under it in a new timestamped directory.")
    if exists and not _is_saved_model_or_empty(target):
        raise FileExistsError(f"`export_dir_base` {target!r} exists and holds no SavedModel: it "
                              "is not replaced. Export to a new or empty directory, or give "
                              "versioned = True.")
    parent = os.path.dirname(target)
    os.makedirs(parent, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=f".{os.path.basename(target)}.export-", dir=parent)
    try:
        made = estimator.export_savedmodel(staging, checkpoint_path=checkpoint_path,
                                           as_text=bool(as_text))
        # the new export replaces the old one only once it is complete
        old = None
        if exists:
            old = tempfile.mkdtemp(prefix=f".{os.path.basename(target)}.old-", dir=parent)
            os.rmdir(old)
            os.rename(target, old)
        os.rename(made, target)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _latest(estimator):
    path = estimator.latest_checkpoint()
    if path is None:
        raise ValueError(f"There is no checkpoint in {estimator.model_dir!r} yet: train the "
                         "model first.")
    return path


def variable_names(estimator):
    """Names of the variables in the latest checkpoint, sorted.

    Raises:
        ValueError: no checkpoint yet.
    """
    tf = import_tensorflow()
    return sorted(name for name, _ in tf.train.list_variables(_latest(estimator)))


def variable_values(estimator, names=None):
    """``{name: value}`` of the latest checkpoint's variables (all when ``names`` is None).

    Values are NumPy arrays (scalars: 0-d), 64-bit integers as float64.

    Raises:
        ValueError: no checkpoint yet, or names the checkpoint does not hold
            (``Variable not found: <names>``, then what it holds).
    """
    tf = import_tensorflow()
    path = _latest(estimator)
    held = sorted(name for name, _ in tf.train.list_variables(path))
    if names is None:
        names = held
    elif isinstance(names, str):
        names = [names]
    else:
        names = list(names)
    bad = [n for n in names if not isinstance(n, str)]
    if bad:
        raise TypeError(f"Variable names must be strings, got {bad[0]!r}.")
    missing = [n for n in names if n not in held]
    if missing:
        shown = ", ".join(held[:12]) + (f" and {len(held) - 12} more" if len(held) > 12 else "")
        raise ValueError(f"Variable not found: {', '.join(missing)}. The latest checkpoint "
                         f"({os.path.basename(path)}) holds {shown}.")
    reader = tf.train.load_checkpoint(path)
    values = {}
    for name in names:
        value = np.asarray(reader.get_tensor(name))
        if value.dtype.kind in "iu" and value.dtype.itemsize == 8:
            value = value.astype(np.float64)
        values[name] = value
    return values


def class_names(estimator):
    """A classifier's class names as R shows them, or None for other models.

    A logical response's classes are ``"FALSE"`` and ``"TRUE"`` in R (Python's ``"0"`` and
    ``"1"``, its class ids), so that ``predict()``'s ``classes`` compare equal to the
    response (``"TRUE" == TRUE`` in R; ``"1" == TRUE`` is not); others are Python's.
    """
    names = estimator.class_names()
    schema = estimator._loaded_schema() if names is not None else None
    if (schema is not None and len(schema.response) == 1
            and schema.response[0].kind == "boolean" and names == ["0", "1"]):
        return ["FALSE", "TRUE"]
    return names
