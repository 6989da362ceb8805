"""MNIST as ``tf.contrib.learn.datasets.mnist`` of TensorFlow 1.x gave it (NumPy only).

``read_data_sets(train_dir)`` downloads the four IDX files of MNIST from
``source_url`` into ``train_dir`` unless they are there already, reads them
and returns ``Datasets(train, validation, test)``: three :class:`DataSet`
with ``images`` ([n, 784] float32 in [0, 1] by default), ``labels`` (uint8
class ids, or [n, 10] one-hot rows), ``num_examples``, ``epochs_completed``
and ``next_batch()``. The first ``validation_size`` training images are the
validation set. Unlike TensorFlow 1.x, a ``seed`` seeds the data set's own
random generator, not NumPy's global one.
"""

from __future__ import annotations

import collections
import gzip
import os
import tempfile
import urllib.request

import numpy as np

__all__ = ["DEFAULT_SOURCE_URL", "DataSet", "Datasets", "load_mnist", "read_data_sets"]

DEFAULT_SOURCE_URL = "https://storage.googleapis.com/cvdf-datasets/mnist/"
FILES = ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
         "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")
IMAGES_MAGIC, LABELS_MAGIC = 2051, 2049

Datasets = collections.namedtuple("Datasets", ["train", "validation", "test"])


def _numpy_dtype(dtype):
    """np.float32 or np.uint8 from a NumPy, TensorFlow or string dtype, else TypeError."""
    dtype = np.dtype(getattr(dtype, "as_numpy_dtype", dtype))
    if dtype not in (np.float32, np.uint8):
        raise TypeError(f"Invalid image dtype {dtype!r}, expected uint8 or float32")
    return dtype


def _read_idx(path, magic, dims):
    """The uint8 array of the gzipped IDX file `path`: [n] or [n, rows, cols]."""
    try:
        with gzip.open(path, "rb") as f:
            header = np.frombuffer(f.read(4 * (1 + dims)), dtype=">u4")
            data = np.frombuffer(f.read(), dtype=np.uint8)
    except (OSError, EOFError) as e:
        raise ValueError(f"MNIST file {path} is not a gzipped IDX file ({e}); "
                         "delete it to download it again") from e
    if header.size < 1 + dims or header[0] != magic:
        found = header[0] if header.size else "none"
        raise ValueError(f"Invalid magic number {found} in MNIST file {path} "
                         f"(expected {magic}); delete it to download it again")
    shape = tuple(int(d) for d in header[1:])
    if data.size != np.prod(shape):
        raise ValueError(f"MNIST file {path} holds {data.size} bytes of data, "
                         f"not the {np.prod(shape)} of its header's shape {shape}")
    return data.reshape(shape)


def _download(name, train_dir, source_url):
    """The path of `name` in `train_dir`, downloaded from `source_url` if absent."""
    path = os.path.join(train_dir, name)
    if not os.path.exists(path):
        os.makedirs(train_dir, exist_ok=True)
        fd, partial = tempfile.mkstemp(dir=train_dir, prefix=f".{name}.")
        os.close(fd)
        try:
            try:
                urllib.request.urlretrieve(source_url + name, partial)
            except OSError as e:
                raise OSError(f"could not download {source_url + name}: {e}") from e
            os.replace(partial, path)
        finally:
            if os.path.exists(partial):
                os.remove(partial)
    return path


class DataSet:
    """Images and labels, with ``next_batch()`` cycling through them epoch after epoch."""

    def __init__(self, images, labels, fake_data=False, one_hot=False, dtype=np.float32,
                 reshape=True, seed=None):
        dtype = _numpy_dtype(dtype)
        self._rng = np.random.RandomState(None if seed is None else int(seed))
        self._fake_one_hot = one_hot
        if fake_data:
            self._num_examples = 10000
        else:
            images, labels = np.asarray(images), np.asarray(labels)
            if images.shape[0] != labels.shape[0]:
                raise ValueError(f"images.shape: {images.shape} labels.shape: {labels.shape}")
            if reshape:
                images = images.reshape(images.shape[0], int(np.prod(images.shape[1:])))
            if dtype == np.float32:
                images = images.astype(np.float32) / np.float32(255)
            self._num_examples = images.shape[0]
        self._fake = fake_data
        self._images, self._labels = images, labels
        self._epochs_completed = 0
        self._index_in_epoch = 0

    images = property(lambda self: self._images)
    labels = property(lambda self: self._labels)
    num_examples = property(lambda self: self._num_examples)
    epochs_completed = property(lambda self: self._epochs_completed)

    def _shuffle(self):
        order = self._rng.permutation(self._num_examples)
        self._images, self._labels = self._images[order], self._labels[order]

    def next_batch(self, batch_size, fake_data=False, shuffle=True):
        """The next ``batch_size`` (images, labels); an epoch's end wraps into the next."""
        batch_size = int(batch_size)
        if fake_data or self._fake:
            image = [1.0] * 784
            label = [1] + [0] * 9 if self._fake_one_hot else 0
            return [image] * batch_size, [label] * batch_size
        start = self._index_in_epoch
        if start == 0 and self._epochs_completed == 0 and shuffle:
            self._shuffle()
        if start + batch_size <= self._num_examples:
            self._index_in_epoch = start + batch_size
            return self._images[start:start + batch_size], self._labels[start:start + batch_size]
        # the rest of this epoch, then the start of the next (shuffled again)
        rest_images, rest_labels = self._images[start:], self._labels[start:]
        self._epochs_completed += 1
        if shuffle:
            self._shuffle()
        self._index_in_epoch = batch_size - rest_images.shape[0]
        end = self._index_in_epoch
        return (np.concatenate([rest_images, self._images[:end]]),
                np.concatenate([rest_labels, self._labels[:end]]))


def read_data_sets(train_dir, fake_data=False, one_hot=False, dtype=np.float32, reshape=True,
                   validation_size=5000, seed=None, source_url=DEFAULT_SOURCE_URL):
    """MNIST from ``train_dir`` (downloaded from ``source_url`` first if absent): ``Datasets``."""
    options = dict(dtype=dtype, reshape=reshape, seed=seed)
    if fake_data:
        fake = lambda: DataSet([], [], fake_data=True, one_hot=one_hot, **options)  # noqa: E731
        return Datasets(train=fake(), validation=fake(), test=fake())
    source_url = source_url or DEFAULT_SOURCE_URL
    train_dir = os.path.expanduser(os.fspath(train_dir))
    paths = [_download(name, train_dir, source_url) for name in FILES]
    arrays = []
    for path, magic in zip(paths, (IMAGES_MAGIC, LABELS_MAGIC) * 2):
        array = _read_idx(path, magic, 3 if magic == IMAGES_MAGIC else 1)
        if magic == IMAGES_MAGIC:
            array = array[..., np.newaxis]  # [n, rows, cols, 1], as TensorFlow 1.x read it
        elif one_hot:
            array = np.eye(10)[array]  # float64 rows, as TensorFlow 1.x made them
        arrays.append(array)
    train_images, train_labels, test_images, test_labels = arrays
    if validation_size != int(validation_size) or not 0 <= validation_size <= len(train_images):
        raise ValueError(f"Validation size should be between 0 and {len(train_images)}. "
                         f"Received: {validation_size}.")
    cut = int(validation_size)
    return Datasets(train=DataSet(train_images[cut:], train_labels[cut:], **options),
                    validation=DataSet(train_images[:cut], train_labels[:cut], **options),
                    test=DataSet(test_images, test_labels, **options))


def load_mnist(train_dir="MNIST_data"):
    """``read_data_sets(train_dir)``: what ``load_dataset("mnist")`` returns."""
    return read_data_sets(train_dir)
