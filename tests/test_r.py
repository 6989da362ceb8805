"""pyhooks.r: hooks written in R run from Python through rpy2 (R embedded in the process).

The R side runs in a child process, which also proves the process exits
cleanly (rpy2 + reticulate used to die at exit with a GIL error).
"""

import json
import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import pyhooks.r

SCRIPT = textwrap.dedent(r'''
    import json, os
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
    import tensorflow as tf
    import pyhooks, pyhooks.r
    v1 = tf.compat.v1
    out = {}

    def graph():
        g = tf.Graph()
        with g.as_default():
            v1.train.get_or_create_global_step()
            w = v1.get_variable("w", [], initializer=v1.zeros_initializer())
            per_example = tf.square(w - tf.constant([1.0, 2.0, 3.0]))
            v1.add_to_collection("losses", per_example)
            train = v1.train.GradientDescentOptimizer(0.1).minimize(tf.reduce_sum(per_example))
        return g, train

    R = "a user's R"  # reticulate, starting in this process, deletes __main__.R: kept
    hook = pyhooks.r.r_hook("""
        means <- c()
        session_run_hook(
          before_run = function(context) {
            session_run_args(losses = context$session$graph$get_collection("losses"))
          },
          after_run = function(context, values) {
            means <<- c(means, mean(values$results$losses[[1]]))
            cat("Running step:", length(means), "\\n")
            if (length(means) >= 3) context$request_stop()
          },
          end = function(session) cat("means:", round(means, 4), "\\n"))
    """)
    out["methods"] = sorted(hook.pyhooks_methods)
    out["type"] = type(hook).__name__
    g, train = graph()
    steps = 0
    with g.as_default(), pyhooks.MonitoredSession(hooks=[hook]) as sess:
        while not sess.should_stop():
            sess.run(train)
            steps += 1
    out["steps"] = steps

    failing = pyhooks.r.r_hook(
        'session_run_hook(after_run = function(context, values) stop("no luck from R"))')
    g, train = graph()
    try:
        with g.as_default(), pyhooks.MonitoredSession(hooks=[failing]) as sess:
            sess.run(train)
    except Exception as error:
        out["error"] = [type(error).__name__, str(error), getattr(error, "__notes__", [])]

    named = pyhooks.r.r_hook("""
        seen <- c()
        session_run_hook(
          before_run = function(context) {
            session_run_args(op = "seven", tensor = "seven:0")
          },
          after_run = function(context, values) {
            seen <<- c(seen, unlist(values$results))
            if (length(seen) >= 6) context$request_stop()
          },
          end = function(session) cat("named:", seen, "\\n"))
    """)
    g, train = graph()
    with g.as_default():
        v1.get_variable("seven", initializer=tf.constant(7, tf.int64), use_resource=True)
    with g.as_default(), pyhooks.MonitoredSession(hooks=[named]) as sess:
        while not sess.should_stop():
            sess.run(train)

    # The same kind of R hook on the eager backend and on Keras' fit: each step's loss, as
    # plain TensorFlow gives it (the step function called directly, a plain Keras callback).
    from r_backends import Plain, fit, step_fn
    import rpy2.robjects as ro

    R_LOSSES = """
        seen <- c()
        session_run_hook(
          before_run = function(context) session_run_args(loss = "loss"),
          after_run = function(context, values) {
            seen <<- c(seen, values$results$loss)
            if (length(seen) >= 4) context$request_stop()
          },
          end = function(session) assign("r_seen", seen, envir = globalenv()))
    """
    R_FAILING = 'session_run_hook(after_run = function(context, values) stop("no luck from R"))'
    plain = step_fn()
    out["eager_plain"] = [float(plain()["loss"]) for _ in range(4)]
    steps = 0
    with pyhooks.MonitoredSession(pyhooks.EagerSessionCreator(step_fn()),
                                  [pyhooks.r.r_hook(R_LOSSES)]) as sess:
        while not sess.should_stop():
            sess.run()
            steps += 1
    out["eager_steps"] = steps
    out["eager_r"] = list(ro.globalenv["r_seen"])
    try:
        with pyhooks.MonitoredSession(pyhooks.EagerSessionCreator(step_fn()),
                                      [pyhooks.r.r_hook(R_FAILING)]) as sess:
            sess.run()
    except Exception as error:
        out["eager_error"] = [type(error).__name__, str(error), getattr(error, "__notes__", [])]

    plain = Plain()
    fit([plain, pyhooks.keras_callback([pyhooks.r.r_hook(R_LOSSES)])], 10)
    out["keras_plain"] = plain.losses
    out["keras_r"] = list(ro.globalenv["r_seen"])
    try:
        fit([pyhooks.keras_callback([pyhooks.r.r_hook(R_FAILING)])], 10)
    except Exception as error:
        out["keras_error"] = [type(error).__name__, str(error), getattr(error, "__notes__", [])]

    for key, code in [("bad_code", "stop('broken R')"), ("not_a_hook", "list(a = 1)")]:
        try:
            pyhooks.r.r_hook(code)
        except ValueError as error:
            out[key] = str(error)
    # R objects of Python objects left by failed runs, freed while r_hook() runs R: the
    # process crashed there (SIGSEGV / SIGABRT) when R ran through rpy2 without the GIL
    import gc
    out["rounds"] = []
    for k in range(10):
        g, train = graph()
        try:
            with g.as_default(), pyhooks.MonitoredSession(hooks=[pyhooks.r.r_hook(R_FAILING)]) as sess:
                sess.run(train)
        except Exception as error:
            out["rounds"].append(type(error).__name__)
        gc.collect()
        pyhooks.r.r_hook("session_run_hook(end = function(session) NULL)")

    out["main_names"] = [globals().get("R"), "r" in globals()]
    print("RESULT" + json.dumps(out))
''')


def r_package_installed():
    if shutil.which("Rscript") is None:
        return False
    check = subprocess.run(["Rscript", "-e", "quit(status = !requireNamespace('pyhooks', quietly = TRUE))"],
                           capture_output=True)
    return check.returncode == 0


@pytest.fixture(scope="module")
def r_run():
    pytest.importorskip("rpy2")
    if not r_package_installed():
        pytest.skip("R or the R package pyhooks is not installed (make setup installs both)")
    env = dict(os.environ, RETICULATE_PYTHON=sys.executable,
               PYTHONPATH=os.path.dirname(os.path.abspath(__file__)))
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          env=env, timeout=600)
    line = next((l for l in proc.stdout.splitlines() if l.startswith("RESULT")), None)
    assert line is not None, proc.stdout + proc.stderr
    return proc, json.loads(line[len("RESULT"):])


def test_r_hook_drives_training_and_stops(r_run):
    proc, out = r_run
    assert out["steps"] == 3
    assert "Running step: 1 \nRunning step: 2 \nRunning step: 3 \n" in proc.stdout
    # per-example losses (w - c)^2 with c = 1, 2, 3: mean at w = 0 is 14/3
    assert "means: 4.6667" in proc.stdout


def test_only_given_callbacks_cross_into_r(r_run):
    _, out = r_run
    # and after_create_session, where the R view of the run context is dropped
    assert out["methods"] == ["after_create_session", "after_run", "before_run", "end"]
    assert out["type"] == "RHook"


def test_an_r_hook_gets_the_value_of_a_tensor_or_op_name(r_run):
    proc, _ = r_run
    # "seven" is a variable's op, "seven:0" its handle: both give 7 (TensorFlow: None, a handle)
    assert "named: 7 7 7 7 7 7 \n" in proc.stdout


def test_error_in_r_callback_propagates_with_names(r_run):
    _, out = r_run
    kind, message, notes = out["error"]
    assert "no luck from R" in message
    assert "after_run" in message
    assert "pyhooks: raised in session_run_hook().after_run()" in notes


def test_an_r_hook_on_the_eager_backend_and_keras_gets_what_plain_tensorflow_gives(r_run):
    _, out = r_run
    # it asked for the loss by name and stopped after 4 steps, on both
    assert out["eager_steps"] == 4
    np.testing.assert_allclose(out["eager_r"], out["eager_plain"], rtol=1e-6)
    assert len(out["keras_plain"]) == 4
    np.testing.assert_allclose(out["keras_r"], out["keras_plain"], rtol=1e-6)
    # the losses are those of the same model and data on both
    np.testing.assert_allclose(out["keras_plain"], out["eager_plain"], rtol=1e-5)


@pytest.mark.parametrize("backend", ["eager", "keras"])
def test_error_in_r_callback_on_eager_and_keras_propagates_with_names(r_run, backend):
    _, out = r_run
    kind, message, notes = out[f"{backend}_error"]
    assert "no luck from R" in message
    assert "after_run" in message
    assert "pyhooks: raised in session_run_hook().after_run()" in notes


def test_bad_r_code_is_a_value_error_with_the_r_message(r_run):
    _, out = r_run
    assert out["bad_code"] == "R: broken R"
    assert "must return session_run_hook(...)" in out["not_a_hook"]
    assert "class list" in out["not_a_hook"]


def test_r_hooks_made_after_failed_runs_do_not_crash_the_process(r_run):
    _, out = r_run
    # each round's run failed with the R hook's error, and the process went on
    assert out["rounds"] == ["RCallbackError"] * 10


def test_starting_r_keeps_the_names_of_main(r_run):
    _, out = r_run
    # reticulate 1.28 defines R and r in __main__ when it starts, deleting a user's R
    assert out["main_names"] == ["a user's R", False]


def test_process_exits_cleanly_without_gil_crash(r_run):
    proc, _ = r_run
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "GIL" not in proc.stderr
    assert "_processevents" not in proc.stderr
    assert "only fixed recently" not in proc.stdout


def test_exit_status_is_kept_once_r_ran():
    """The process ends right after Python finalizes (see pyhooks.r), with Python's status."""
    pytest.importorskip("rpy2")
    if not r_package_installed():
        pytest.skip("R or the R package pyhooks is not installed (make setup installs both)")
    code = ("import sys, pyhooks.r\npyhooks.r.r_hook('session_run_hook()')\n"
            "print('done', flush=True)\nsys.exit(3)")
    env = dict(os.environ, RETICULATE_PYTHON=sys.executable)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 3, proc.stderr[-2000:]
    assert proc.stdout.strip().endswith("done")


def test_arguments_are_checked_before_r_starts(tmp_path):
    with pytest.raises(ValueError, match="Exactly one of `code` and `file`"):
        pyhooks.r.r_hook()
    with pytest.raises(ValueError, match="Exactly one of `code` and `file`"):
        pyhooks.r.r_hook("x", file="y.R")
    with pytest.raises(ValueError, match="`file` does not exist"):
        pyhooks.r.r_hook(file=tmp_path / "missing.R")
    with pytest.raises(TypeError, match="`code` must be a string of R code, got int"):
        pyhooks.r.r_hook(42)


def test_missing_r_package_error_says_how_to_install(tmp_path):
    """R finds no pyhooks in any library: the error names the command that installs it."""
    pytest.importorskip("rpy2")
    if shutil.which("Rscript") is None:
        pytest.skip("R is not installed")
    reticulate = subprocess.run(["Rscript", "-e", "cat(find.package('reticulate'))"],
                                capture_output=True, text=True).stdout
    libs = tmp_path / "libs"
    libs.mkdir()
    (libs / "reticulate").symlink_to(reticulate)  # reticulate alone, no pyhooks
    env = dict(os.environ, R_LIBS=str(libs), R_LIBS_USER=str(tmp_path / "none"),
               R_LIBS_SITE=str(tmp_path / "none"))
    code = ("import pyhooks.r\ntry:\n    pyhooks.r.r_hook('1')\n"
            "except ImportError as e:\n    print('ERROR', e)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=300)
    assert "ERROR the R package 'pyhooks' could not be loaded" in proc.stdout, proc.stderr
    assert "`make install` in the pyhooks checkout" in proc.stdout
    assert "R CMD INSTALL" not in proc.stdout
