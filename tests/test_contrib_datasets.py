"""tf.contrib.learn.datasets: MNIST read from a local server of small synthetic IDX files."""

import functools
import gzip
import http.server
import os
import struct
import threading

import numpy as np
import pytest

from pyhooks.estimators import contrib, tf1
from pyhooks.estimators.contrib.learn import datasets
from pyhooks.estimators.contrib.learn.datasets import mnist

N_TRAIN, N_TEST = 60, 10


def write_idx(path, array, magic):
    """`array` (uint8) as a gzipped IDX file: magic, then each dimension, big-endian."""
    with gzip.open(path, "wb") as f:
        f.write(struct.pack(f">{1 + array.ndim}I", magic, *array.shape))
        f.write(array.astype(np.uint8).tobytes())


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """(url, requests, arrays): a local server of synthetic MNIST and the paths it was asked."""
    root = tmp_path_factory.mktemp("served")
    rng = np.random.default_rng(1)
    arrays = {"train_images": rng.integers(0, 256, (N_TRAIN, 28, 28), dtype=np.uint8),
              "train_labels": np.arange(N_TRAIN, dtype=np.uint8) % 10,
              "test_images": rng.integers(0, 256, (N_TEST, 28, 28), dtype=np.uint8),
              "test_labels": (np.arange(N_TEST, dtype=np.uint8) * 3) % 10}
    arrays["train_images"][0, 0, 0] = 255  # the maximum, to check scaling
    write_idx(root / "train-images-idx3-ubyte.gz", arrays["train_images"], 2051)
    write_idx(root / "train-labels-idx1-ubyte.gz", arrays["train_labels"], 2049)
    write_idx(root / "t10k-images-idx3-ubyte.gz", arrays["test_images"], 2051)
    write_idx(root / "t10k-labels-idx1-ubyte.gz", arrays["test_labels"], 2049)
    os.mkdir(root / "bad")
    for name in mnist.FILES:  # a copy whose test labels carry an image's magic number
        (root / "bad" / name).write_bytes((root / name).read_bytes())
    write_idx(root / "bad" / "t10k-labels-idx1-ubyte.gz", arrays["test_labels"], 2051)
    requests = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            requests.append(self.path)

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Handler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/", requests, arrays
    server.shutdown()
    server.server_close()


def test_read_data_sets_downloads_parses_scales_and_splits(served, tmp_path):
    url, requests, arrays = served
    before = len(requests)
    data = mnist.read_data_sets(tmp_path / "MNIST_data", validation_size=20, source_url=url)
    assert sorted(os.listdir(tmp_path / "MNIST_data")) == sorted(mnist.FILES)
    assert len(requests) - before == 4
    assert isinstance(data, mnist.Datasets) and data._fields == ("train", "validation", "test")
    assert data.train.images.shape == (40, 784) and data.train.images.dtype == np.float32
    assert data.validation.images.shape == (20, 784) and data.test.images.shape == (10, 784)
    assert (data.train.num_examples, data.validation.num_examples,
            data.test.num_examples) == (40, 20, 10)
    assert data.train.labels.dtype == np.uint8 and data.train.labels.shape == (40,)
    # the first 20 training images are the validation set, scaled to [0, 1]
    flat = arrays["train_images"].reshape(N_TRAIN, 784)
    np.testing.assert_allclose(data.validation.images, flat[:20] / 255.0, rtol=1e-6)
    np.testing.assert_allclose(data.train.images, flat[20:] / 255.0, rtol=1e-6)
    assert data.validation.images.max() == 1.0 and data.validation.images.min() >= 0.0
    np.testing.assert_array_equal(data.train.labels, arrays["train_labels"][20:])
    np.testing.assert_array_equal(data.test.labels, arrays["test_labels"])
    # the files are there: a second call reads them without a request
    again = mnist.read_data_sets(str(tmp_path / "MNIST_data"), one_hot=True, validation_size=10,
                                 source_url=url)
    assert len(requests) - before == 4
    assert again.validation.labels.shape == (10, 10) and again.train.num_examples == 50
    assert again.test.labels.shape == (10, 10)
    np.testing.assert_array_equal(again.test.labels.argmax(axis=1), arrays["test_labels"])
    assert set(np.unique(again.test.labels)) == {0.0, 1.0}


def test_dtype_reshape_and_validation_size(served, tmp_path):
    url, _, arrays = served
    raw = mnist.read_data_sets(tmp_path, dtype=np.uint8, reshape=False, validation_size=0,
                               source_url=url)
    assert raw.train.images.dtype == np.uint8 and raw.train.images.shape == (60, 28, 28, 1)
    np.testing.assert_array_equal(raw.train.images[..., 0], arrays["train_images"])
    assert raw.validation.num_examples == 0
    # TensorFlow's dtypes are accepted as TensorFlow 1.x took them
    assert mnist.read_data_sets(tmp_path, dtype=tf1.uint8,
                                validation_size=0).train.images.dtype == np.uint8
    with pytest.raises(ValueError, match="Validation size should be between 0 and 60. Received: 61"):
        mnist.read_data_sets(tmp_path, validation_size=61)
    with pytest.raises(TypeError, match="Invalid image dtype.*expected uint8 or float32"):
        mnist.read_data_sets(tmp_path, dtype=np.float64, validation_size=0)


def test_next_batch_cycles_epochs_and_shuffles(served, tmp_path):
    url, _, arrays = served
    test = mnist.read_data_sets(tmp_path, validation_size=0, source_url=url).test
    images, labels = test.next_batch(4, shuffle=False)
    np.testing.assert_array_equal(labels, arrays["test_labels"][:4])
    assert images.shape == (4, 784) and test.epochs_completed == 0
    test.next_batch(4, shuffle=False)
    images, labels = test.next_batch(4, shuffle=False)  # 2 left, then 2 of the next epoch
    assert test.epochs_completed == 1 and images.shape == (4, 784)
    np.testing.assert_array_equal(labels, arrays["test_labels"][[8, 9, 0, 1]])
    # shuffled: an epoch holds every example once, in another order for another seed
    orders = []
    for seed in (1, 2):
        shuffled = mnist.read_data_sets(tmp_path, validation_size=0, seed=seed).train
        labels = np.concatenate([shuffled.next_batch(20)[1] for _ in range(3)])
        assert shuffled.epochs_completed == 0
        assert sorted(labels) == sorted(arrays["train_labels"])
        orders.append(labels)
        shuffled.next_batch(1)
        assert shuffled.epochs_completed == 1
    assert not np.array_equal(*orders)


def test_fake_data_needs_no_files(tmp_path):
    fake = mnist.read_data_sets(tmp_path / "none", fake_data=True, one_hot=True)
    assert fake.train.num_examples == 10000 and not (tmp_path / "none").exists()
    images, labels = fake.train.next_batch(3)
    assert np.asarray(images).shape == (3, 784) and np.asarray(labels).shape == (3, 10)


def test_bad_magic_names_the_file(served, tmp_path):
    url, _, _ = served
    with pytest.raises(ValueError, match=r"Invalid magic number 2051 in MNIST file "
                                         r".*t10k-labels-idx1-ubyte\.gz \(expected 2049\)"):
        mnist.read_data_sets(tmp_path, source_url=url + "bad/", validation_size=0)
    with pytest.raises(OSError, match=r"could not download http://127.0.0.1:\d+/missing/"
                                      r"train-images-idx3-ubyte.gz: HTTP Error 404"):
        mnist.read_data_sets(tmp_path / "other", source_url=url + "missing/")
    assert os.listdir(tmp_path / "other") == []  # no partial file left to pass for data


def test_load_dataset_reads_mnist_data_of_the_working_directory(tmp_path, monkeypatch):
    """TensorFlow 1.x's MNIST_data/, files present: no download (the default URL is not asked)."""
    rng = np.random.default_rng(2)
    os.mkdir(tmp_path / "MNIST_data")
    for name, n in zip(mnist.FILES, (5003, 5003, 7, 7)):
        images = "images" in name
        array = rng.integers(0, 256, (n, 28, 28) if images else (n,), dtype=np.uint8)
        write_idx(tmp_path / "MNIST_data" / name, array, 2051 if images else 2049)
    monkeypatch.chdir(tmp_path)
    data = tf1.contrib.learn.datasets.load_dataset("mnist")
    assert data.train.images.shape == (3, 784) and data.validation.num_examples == 5000
    assert data.test.labels.shape == (7,) and data.train.images.dtype == np.float32


def test_unknown_names_are_errors_naming_them():
    with pytest.raises(ValueError, match=r"Name of dataset is not found: 'iris'.*supports 'mnist'"):
        datasets.load_dataset("iris")
    with pytest.raises(AttributeError, match=r"tf.contrib.learn.read_batch_features is gone: .*"
                                             r"parse_example"):
        contrib.learn.read_batch_features  # noqa: B018
    with pytest.raises(AttributeError, match=r"tf.contrib.learn.datasets.load_iris is gone"):
        datasets.load_iris  # noqa: B018
    assert contrib.learn.datasets.mnist.read_data_sets is mnist.read_data_sets
