"""The eager and Keras models of the R hook tests' child processes (test_r.py,
test_r_hook_matrix.py): one linear model on three rows, its loss at each step as plain
TensorFlow gives it, and the same training with hooks."""

import keras
import numpy as np
import tensorflow as tf

X = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32)
Y = np.array([[1.0], [2.0], [3.0]], np.float32)


def step_fn():
    """A new eager step function: one gradient step, returning ``{"loss": loss}``."""
    w = tf.Variable(np.zeros((2, 1), np.float32))

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(tf.matmul(X, w) - Y))
        w.assign_sub(0.01 * tape.gradient(loss, w))
        return {"loss": loss}
    return step


class Plain(keras.callbacks.Callback):
    """A plain Keras callback keeping the loss Keras hands it after each batch."""

    def __init__(self):
        super().__init__()
        self.losses = []

    def on_train_batch_end(self, batch, logs=None):
        self.losses.append(float(logs["loss"]))


def fit(callbacks, epochs):
    """The same model in Keras: one batch an epoch, so an epoch is a step."""
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(
        1, use_bias=False, kernel_initializer="zeros")])
    model.compile(optimizer=keras.optimizers.SGD(0.01), loss="mse")
    model.fit(X, Y, batch_size=3, epochs=epochs, shuffle=False, verbose=0, callbacks=callbacks)
