"""TensorBoard on an estimator's model_dir: started by start_tensorboard(), read over HTTP, seen in Chromium.

The server is real (TensorBoard from the pinned stack, on a free loopback port),
its scalars are read back through TensorBoard's HTTP API, and a real headless
Chromium (Debian's, installed by ``make setup``) renders the scalars page; the
screenshot must hold the two runs' chart lines. Every wait is bounded, every
server is stopped at the end of its test.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import urllib.request

import pytest

import pyhooks
from pyhooks.estimators import column_numeric, feature_columns, input_fn, linear_regressor
from pyhooks.estimators import load_mtcars, run_config
from pyhooks import start_tensorboard, stop_tensorboard

pytest.importorskip("tensorflow")
pytest.importorskip("tensorboard")

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# TensorBoard's colours for the first two runs, in order: "." (training), "eval"
RUN_COLOURS = {".": (255, 112, 67), "eval": (0, 119, 187)}


@pytest.fixture(scope="module")
def trained_dir(tmp_path_factory):
    model_dir = tmp_path_factory.mktemp("model")
    data = load_mtcars()
    model = linear_regressor(feature_columns(column_numeric("drat")), model_dir=str(model_dir),
                             config=run_config(save_summary_steps=1, log_step_count_steps=0))
    history = pyhooks.HistorySaverHook(every_n_step=1)
    model.train(input_fn(data, ["drat"], "mpg", batch_size=8, num_epochs=None), steps=6,
                hooks=[history])
    metrics = model.evaluate(input_fn(data, ["drat"], "mpg"))
    return model_dir, history.history.to_dict(), metrics


def get_json(url, timeout=30):
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return json.loads(response.read().decode())


def scalars_when_loaded(board, run, tag, deadline_secs=120):
    """The (step, value) rows of a run's tag once TensorBoard has read them (bounded wait)."""
    deadline = time.monotonic() + deadline_secs
    while True:
        tags = get_json(board.url + "data/plugin/scalars/tags")
        if tag in tags.get(run, {}):
            rows = get_json(board.url + f"data/plugin/scalars/scalars?run={run}&tag={tag}")
            return [(step, value) for _, step, value in rows]
        if time.monotonic() > deadline or not board.running:
            raise AssertionError(f"TensorBoard never showed {run}/{tag}: {tags}\n" + board.output())
        time.sleep(0.5)


def test_tensorboard_serves_the_loss_and_the_eval_metrics(trained_dir):
    model_dir, history, metrics = trained_dir
    with start_tensorboard(str(model_dir)) as board:
        assert board.url == f"http://127.0.0.1:{board.port}/"
        losses = scalars_when_loaded(board, ".", "loss")
        assert [step for step, _ in losses] == history["steps"]
        # the summary is the training loss, the batch's sum (as the history's total_losses)
        assert [value for _, value in losses] == pytest.approx(history["total_losses"], rel=1e-5)
        evals = scalars_when_loaded(board, "eval", "average_loss")
        assert evals == [(6, pytest.approx(metrics["average_loss"], rel=1e-6))]
        assert get_json(board.url + "data/runs") == [".", "eval"]
        process = board.process
    assert process.poll() is not None  # stopped by the with block


def test_start_tensorboard_checks_its_arguments(tmp_path):
    with pytest.raises(FileNotFoundError, match="`log_dir` must be an existing directory"):
        start_tensorboard(str(tmp_path / "missing"))
    with pytest.raises(ValueError, match="`port` must be a port number"):
        start_tensorboard(str(tmp_path), port=70000)
    with pytest.raises(TypeError, match="`port` must be a whole number"):
        start_tensorboard(str(tmp_path), port="6006")


def test_a_port_in_use_is_an_error_with_tensorboards_words(tmp_path):
    with start_tensorboard(str(tmp_path)) as first:
        with pytest.raises(RuntimeError, match="TensorBoard ended with exit code .*port"):
            start_tensorboard(str(tmp_path), port=first.port)
        assert first.running


def test_stop_tensorboard_stops_the_servers_of_a_log_dir_or_all(tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    with start_tensorboard(str(one)) as first, start_tensorboard(str(two)) as second:
        assert stop_tensorboard(str(tmp_path)) == 0  # no server on this directory
        assert stop_tensorboard(str(one) + "/") == 1
        assert not first.running and second.running
        assert stop_tensorboard() == 1
        assert not second.running
        assert stop_tensorboard() == 0
    with pytest.raises(TypeError, match="`log_dir` must be a directory path or None, got 3"):
        stop_tensorboard(3)


def screenshot(url, path, profile):
    """A PNG of ``url`` by headless Chromium, after up to 20 s of the page's own time."""
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
               "--disable-background-networking", "--disable-component-update",
               "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
               "--window-size=1200,900", "--virtual-time-budget=20000",
               f"--screenshot={path}", url]
    done = subprocess.run(command, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0 and os.path.exists(path), done.stderr[-2000:]


def chart_pixels(path):
    """Pixels of each run's colour in the page's main pane (right of the sidebar, below the bar)."""
    from PIL import Image

    image = Image.open(path).convert("RGB")
    width, height = image.size
    pixels = image.load()
    counts = dict.fromkeys(RUN_COLOURS, 0)
    for x in range(320, width):
        for y in range(120, height):
            pixel = pixels[x, y]
            for run, colour in RUN_COLOURS.items():
                if sum(abs(a - b) for a, b in zip(pixel, colour)) <= 30:
                    counts[run] += 1
    return counts


def test_chromium_shows_the_scalars_of_a_trained_model(trained_dir, tmp_path):
    if not os.path.exists(CHROMIUM):
        pytest.fail("Chromium is missing: `make setup` installs it (Debian's package chromium)")
    model_dir, _, _ = trained_dir
    empty = tmp_path / "empty"
    empty.mkdir()
    with start_tensorboard(str(model_dir)) as board, start_tensorboard(str(empty)) as nothing:
        scalars_when_loaded(board, "eval", "average_loss")  # loaded: the page has data
        shot, blank = tmp_path / "scalars.png", tmp_path / "blank.png"
        # the scalars page, the loss chart first and open
        page = "?darkMode=false#scalars&tagFilter=%5Eloss%24"
        screenshot(board.url + page, shot, tmp_path / "profile-1")
        screenshot(nothing.url + page, blank, tmp_path / "profile-2")
    lines = chart_pixels(shot)
    # the training loss's line over 6 steps (run "."), the eval metrics' points at step 6 ("eval")
    assert lines["."] > 150 and lines["eval"] > 20, lines
    # the same page with no event files has no chart, so the count can fail
    assert chart_pixels(blank) == {".": 0, "eval": 0}
