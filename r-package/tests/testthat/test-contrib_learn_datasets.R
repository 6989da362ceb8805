# tf$contrib$learn$datasets from R: MNIST read from a local server of small synthetic IDX
# files (no network), as tfestimators' "TensorFlow Layers" article reads it.

# Writes the four MNIST files (n_train + n_test images) into `dir`; returns the labels.
write_mnist_files <- function(dir, n_train = 30L, n_test = 6L) {
  dir.create(dir, showWarnings = FALSE, recursive = TRUE)
  labels <- list(train = (seq_len(n_train) - 1L) %% 10L, test = rev(seq_len(n_test) - 1L) %% 10L)
  for (split in c("train", "test")) {
    n <- length(labels[[split]])
    prefix <- if (split == "train") "train" else "t10k"
    conn <- gzfile(file.path(dir, paste0(prefix, "-images-idx3-ubyte.gz")), "wb")
    writeBin(2051L, conn, endian = "big")
    writeBin(c(n, 28L, 28L), conn, endian = "big")
    # image i has every pixel at value (i - 1) %% 256 (but a 255 as the first's last pixel)
    pixels <- rep((seq_len(n) - 1L) %% 256L, each = 784L)
    pixels[784L] <- 255L
    writeBin(as.raw(pixels), conn)
    close(conn)
    conn <- gzfile(file.path(dir, paste0(prefix, "-labels-idx1-ubyte.gz")), "wb")
    writeBin(2049L, conn, endian = "big")
    writeBin(n, conn, endian = "big")
    writeBin(as.raw(labels[[split]]), conn)
    close(conn)
  }
  labels
}

# A threaded Python http.server of a directory on 127.0.0.1 (server$shutdown() stops it).
serve_dir <- function(dir) {
  main <- reticulate::py_run_string(paste(
    "def serve_dir(path):",
    "    import functools, http.server, threading",
    "    class Quiet(http.server.SimpleHTTPRequestHandler):",
    "        def log_message(self, *args):",
    "            pass",
    "    server = http.server.ThreadingHTTPServer(",
    "        ('127.0.0.1', 0), functools.partial(Quiet, directory=path))",
    "    threading.Thread(target=server.serve_forever, daemon=True).start()",
    "    return server",
    sep = "\n"), local = TRUE)
  main$serve_dir(dir)
}

test_that("tf$contrib$learn$datasets$mnist$read_data_sets() gives R matrices from the download", {
  skip_if_no_pyhooks()
  served <- tempfile("served-")
  labels <- write_mnist_files(served)
  server <- serve_dir(served)
  on.exit({
    server$shutdown()
    server$server_close()
  }, add = TRUE)
  url <- sprintf("http://127.0.0.1:%d/", as.integer(server$server_address[[2]]))
  dir <- tempfile("MNIST_data-")
  mnist <- tf$contrib$learn$datasets$mnist$read_data_sets(dir, validation_size = 10L,
                                                          source_url = url)
  expect_setequal(list.files(dir), c("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
                                     "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"))
  expect_true(is.matrix(mnist$train$images))
  expect_identical(dim(mnist$train$images), c(20L, 784L))
  expect_identical(dim(mnist$validation$images), c(10L, 784L))
  expect_identical(dim(mnist$test$images), c(6L, 784L))
  expect_identical(mnist$train$num_examples, 20L)
  # scaled to [0, 1]; the first 10 training images are the validation set
  expect_equal(mnist$validation$images[, 1], (0:9) / 255, tolerance = 1e-6)
  expect_equal(mnist$validation$images[1, 784], 1)
  expect_equal(mnist$train$images[, 1], (10:29) / 255, tolerance = 1e-6)
  expect_equal(as.integer(mnist$train$labels), labels$train[11:30])
  expect_equal(as.integer(mnist$test$labels), labels$test)
  # the article's next step: NumPy matrices of the images, arrays of the labels
  np <- reticulate::import("numpy", convert = FALSE)
  train_data <- np$asmatrix(mnist$train$images, dtype = np$float32)
  expect_identical(reticulate::py_to_r(train_data$shape), list(20L, 784L))
  expect_identical(reticulate::py_to_r(train_data$dtype$name), "float32")
  eval_labels <- np$asarray(mnist$test$labels, dtype = np$int32)
  expect_equal(as.integer(reticulate::py_to_r(eval_labels)), labels$test)
  # next_batch() from R, and one-hot labels
  batch <- mnist$test$next_batch(4L, shuffle = FALSE)
  expect_identical(dim(batch[[1]]), c(4L, 784L))
  hot <- tf$contrib$learn$datasets$mnist$read_data_sets(dir, one_hot = TRUE, validation_size = 0L,
                                                        source_url = "http://127.0.0.1:9/unused/")
  expect_identical(dim(hot$test$labels), c(6L, 10L))  # files present: no download
  expect_equal(apply(hot$test$labels, 1, which.max) - 1L, labels$test)
})

test_that("load_dataset() reads MNIST_data/ of the working directory, errors name bad values", {
  skip_if_no_pyhooks()
  work <- tempfile("work-")
  write_mnist_files(file.path(work, "MNIST_data"), n_train = 5004L, n_test = 3L)
  old <- setwd(work)
  on.exit(setwd(old), add = TRUE)
  mnist <- tf$contrib$learn$datasets$load_dataset("mnist")  # the files are there: no download
  expect_identical(dim(mnist$train$images), c(4L, 784L))
  expect_identical(dim(mnist$validation$images), c(5000L, 784L))
  expect_identical(dim(mnist$test$images), c(3L, 784L))
  expect_error(tf$contrib$learn$datasets$load_dataset("iris"),
               "Name of dataset is not found: 'iris'.*supports 'mnist'")
  expect_error(tf$contrib$learn$datasets$mnist$read_data_sets("MNIST_data", validation_size = 9000L),
               "Validation size should be between 0 and 5004")
  expect_error(tf$contrib$learn$read_batch_features, "tf.contrib.learn.read_batch_features is gone")
})
