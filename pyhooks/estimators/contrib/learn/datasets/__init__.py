"""``tf.contrib.learn.datasets`` of TensorFlow 1.x, for MNIST only.

``load_dataset("mnist")`` is ``mnist.read_data_sets("MNIST_data")``, as in
TensorFlow 1.x: the four MNIST files are downloaded into ``MNIST_data/`` of
the working directory unless they are there already. See
:func:`pyhooks.estimators.contrib.learn.datasets.mnist.read_data_sets`.
"""

from __future__ import annotations

from pyhooks.estimators.contrib import gone_message, lazy_names

__all__ = ["load_dataset", "mnist"]

SUPPORTED = ("mnist",)


def load_dataset(name, size="small", test_with_fake_data=False):
    """The data set ``name`` (only ``"mnist"``): a ``Datasets(train, validation, test)``.

    ``size`` is accepted and ignored, as TensorFlow 1.x did for MNIST;
    ``test_with_fake_data=True`` gives TensorFlow 1.x's fake MNIST (no download).
    """
    if name not in SUPPORTED:
        raise ValueError(f"Name of dataset is not found: {name!r}; pyhooks' "
                         f"tf.contrib.learn.datasets.load_dataset() supports "
                         f"{', '.join(map(repr, SUPPORTED))}")
    from pyhooks.estimators.contrib.learn.datasets import mnist as module

    if test_with_fake_data:
        return module.read_data_sets("MNIST_data", fake_data=True)
    return module.load_mnist()


__getattr__ = lazy_names(__name__, ("mnist",), lambda name: gone_message(
    f"tf.contrib.learn.datasets.{name}",
    f"tf.contrib.learn.datasets.{name} is gone: read data with NumPy or pandas (R: "
    "datasets::iris, read.csv()); pyhooks provides load_dataset(\"mnist\") and "
    "mnist.read_data_sets()"))


def __dir__():
    return list(__all__)
