"""Faults in real processes: kill -9, SIGINT, a full disk, two trainers, leftover secrets.

Each test runs ``fault_worker.py`` in a subprocess (bounded in time) and checks
what the next process finds: nothing lost, nothing corrupted, nothing stuck.
"""

import csv
import json
import os
import signal
import subprocess
import sys
import time

import pytest

tf = pytest.importorskip("tensorflow")

import pyhooks  # noqa: E402
from pyhooks.hooks import _model_dir  # noqa: E402

WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fault_worker.py")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def start(*args, slow=None, new_session=False):
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    if slow is not None:
        env["PYHOOKS_FAULT_SLOW"] = str(slow)
    return subprocess.Popen([sys.executable, WORKER, *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env,
                            start_new_session=new_session)


def wait_for_line(process, wanted, timeout=120):
    """Reads the worker's stdout until a line starting with ``wanted``; returns it."""
    deadline = time.monotonic() + timeout
    for line in process.stdout:
        if line.startswith(wanted):
            return line.strip()
        if time.monotonic() > deadline:
            break
    process.kill()
    raise AssertionError(f"no {wanted!r} from the worker: {process.stderr.read()[-2000:]}")


def run(*args, timeout=180):
    process = start(*args)
    out, err = process.communicate(timeout=timeout)
    return process.returncode, out, err


def history_rows(model_dir):
    with open(os.path.join(model_dir, "history.csv"), newline="") as stream:
        return [(int(row["steps"]), int(row["run"])) for row in csv.DictReader(stream)]


def latest_step(model_dir):
    return int(_model_dir.latest_checkpoint(str(model_dir)).rsplit("-", 1)[1])


def test_kill_9_mid_training_resumes_from_the_last_checkpoint(tmp_path):
    worker = start("train", tmp_path, 1000, slow=0.02)
    wait_for_line(worker, "step 12")
    worker.send_signal(signal.SIGKILL)
    worker.wait(timeout=60)
    saved = latest_step(tmp_path)
    assert saved >= 10  # every 5 steps
    assert (tmp_path / f"hooks-{saved}.json").exists()  # the hooks' state beside it
    # a save the kill interrupted leaves files; the next trainer removes them
    leftovers = [tmp_path / "model.ckpt-99.data-00000-of-00001.tempstate123",
                 tmp_path / ("graph.pbtxt.tmp" + "0" * 32)]
    for path in leftovers:
        path.write_bytes(b"x" * 1000)
    (tmp_path / "model.ckpt-98_temp").mkdir()
    (tmp_path / "model.ckpt-98_temp" / "part-00000-of-00001.index").write_bytes(b"x")
    code, out, err = run("train", tmp_path, 3)  # the dead process's lock is not stuck
    assert code == 0, err
    assert out.splitlines()[0] == f"step {saved + 1}"
    assert out.splitlines()[-1] == f"done {saved + 3}"
    # the hooks' state resumed with the model: the history holds the rows of both processes,
    # the killed one's up to its checkpoint (the steps after it were run again), no row twice
    history = json.loads(out.splitlines()[-2].removeprefix("history "))
    kept = [step for step, run_ in zip(history["steps"], history["runs"]) if run_ == 1]
    # a kill within the step of the save leaves the state written just before it, without
    # that step's row
    assert kept in (list(range(1, saved + 1)), list(range(1, saved)))
    assert history["steps"] == kept + [saved + 1, saved + 2, saved + 3]
    assert history["runs"] == [1] * len(kept) + [2] * 3
    assert history["stop"]["reason"] == "steps" and history["stop"]["step"] == saved + 3
    assert sorted(p.name for p in tmp_path.glob("hooks-*.json")) == []  # it ended normally
    assert not any(path.exists() for path in leftovers)
    assert not (tmp_path / "model.ckpt-98_temp").exists()
    rows = history_rows(tmp_path)
    first_run = [step for step, run_ in rows if run_ == 1]
    assert first_run[:3] == [1, 2, 3] and first_run[-1] >= 12
    # the resumed run repeats steps the killed one recorded: its run number tells them apart
    assert [step for step, run_ in rows if run_ == 2] == [saved + 1, saved + 2, saved + 3]


def test_kill_9_of_an_eager_loop_resumes_its_hooks_state_with_its_checkpoint(tmp_path):
    worker = start("eager", tmp_path, 1000, slow=0.02)
    wait_for_line(worker, "step 12")
    worker.send_signal(signal.SIGKILL)
    worker.wait(timeout=60)
    saved = latest_step(tmp_path)
    assert saved >= 10  # every 5 steps
    assert (tmp_path / f"hooks-{saved}.json").exists()
    code, out, err = run("eager", tmp_path, 3)
    assert code == 0, err
    assert out.splitlines()[0] == f"step {saved + 1}"
    assert out.splitlines()[-1] == f"done {saved + 3}"
    history = json.loads(out.splitlines()[-2].removeprefix("history "))
    assert history["steps"] == list(range(1, saved + 4))  # both processes' rows, none twice
    assert history["runs"] == [1] * saved + [2] * 3
    assert not list(tmp_path.glob("hooks-*.json"))  # it ended normally
    assert [step for step, run_ in history_rows(tmp_path) if run_ == 2] == [
        saved + 1, saved + 2, saved + 3]


def test_sigint_to_the_process_group_keeps_a_checkpoint_and_the_history(tmp_path):
    worker = start("train", tmp_path, 1000, slow=0.02, new_session=True)
    wait_for_line(worker, "step 7")
    os.killpg(worker.pid, signal.SIGINT)  # Ctrl-C in a shell: the job's process group
    _, err = worker.communicate(timeout=120)
    assert worker.returncode != 0
    assert "KeyboardInterrupt" in err
    steps = [step for step, _ in history_rows(tmp_path)]
    # the checkpoint saved at the interruption holds every step the history recorded
    assert latest_step(tmp_path) == steps[-1] >= 7
    code, out, err = run("train", tmp_path, 1)
    assert code == 0, err
    assert out.splitlines()[-1] == f"done {steps[-1] + 1}"


def test_ctrl_c_with_the_default_hooks_keeps_the_steps_and_the_next_train_resumes(tmp_path):
    worker = start("defaults", tmp_path, 10**8, slow=0.01, new_session=True)
    wait_for_line(worker, "step 30")
    os.killpg(worker.pid, signal.SIGINT)  # Ctrl-C in a shell: the job's process group
    _, err = worker.communicate(timeout=120)
    assert worker.returncode != 0 and "KeyboardInterrupt" in err
    saved = latest_step(tmp_path)  # no checkpoint hook was given: the estimator saved
    assert saved >= 30
    code, out, err = run("defaults", tmp_path, 2)
    assert code == 0, err
    steps = [line for line in out.splitlines() if line.startswith("step ")]
    assert steps == [f"step {saved + 1}", f"step {saved + 2}"]
    assert out.splitlines()[-1] == f"done {saved + 2}"


def test_a_child_of_a_killed_trainer_does_not_keep_its_lock(tmp_path, mtcars_input, caplog):
    worker = start("fork", tmp_path / "model", tmp_path / "never")
    child = None
    try:
        child = int(wait_for_line(worker, "child ").split()[1])
        wait_for_line(worker, "holding")
        worker.send_signal(signal.SIGKILL)
        worker.wait(timeout=60)
        os.kill(child, 0)  # the forked child lives on
        model = pyhooks.estimators.linear_regressor(
            pyhooks.estimators.feature_columns(pyhooks.estimators.column_numeric("drat")),
            model_dir=str(tmp_path / "model"))
        with caplog.at_level("INFO", logger="pyhooks"):
            model.train(mtcars_input, steps=1, hooks=[pyhooks.ProgressBarHook(writer=lambda t: 0)])
        took = [r.getMessage() for r in caplog.records if "Took over" in r.getMessage()]
        assert len(took) == 1 and f"pid {worker.pid} on " in took[0] and "has ended" in took[0]
    finally:
        worker.kill()
        if child is not None:
            os.kill(child, signal.SIGKILL)


def test_a_full_disk_says_the_path_and_the_cause_and_keeps_the_last_checkpoint(tmp_path):
    code, _, err = run("fsize", tmp_path, 200)
    assert code != 0
    error = "pyhooks.errors.DiskWriteError: "
    last = next(line for line in err.splitlines() if line.startswith(error))
    # the first write the limit stops (a history row, the hooks' state or a checkpoint: which
    # one depends on how many digits the rows' losses print with), named with its path
    assert last.startswith(error + "Could not write the ")
    assert f"to '{tmp_path}" in last and last.endswith(
        ": File too large (a file size limit was reached).")
    assert latest_step(tmp_path) == 2  # the last complete checkpoint
    code, out, err = run("train", tmp_path, 1)
    assert code == 0, err
    assert out.splitlines()[-1] == "done 3"


@pytest.mark.parametrize("limit", [100, 2000])  # the first file written, the event file
def test_a_disk_full_from_the_start_is_one_line_and_leaves_no_temporary_file(tmp_path, limit):
    code, _, err = run("full", tmp_path, limit)
    assert code != 0
    errors = [line for line in err.splitlines() if line.startswith("pyhooks.errors.")]
    assert len(errors) == 1 and errors[0].startswith("pyhooks.errors.DiskWriteError: Could not "
                                                     "write the ")
    assert f"to '{tmp_path}'" in errors[0] and errors[0].endswith("(a file size limit was reached).")
    assert "Exception in thread" not in err and "ERROR:tensorflow" not in err, err
    assert not [name for name in os.listdir(tmp_path) if "tmp" in name]


def test_a_second_trainer_of_a_model_dir_is_refused_until_the_first_is_gone(tmp_path, mtcars_input):
    release = tmp_path / "release"
    holder = start("hold", tmp_path / "model", release)
    try:
        wait_for_line(holder, "holding")
        model = pyhooks.linear_regressor([pyhooks.column_numeric("drat")],
                                         model_dir=str(tmp_path / "model"))
        with pytest.raises(_model_dir.ModelDirLockedError) as info:
            model.train(mtcars_input, steps=1, hooks=[pyhooks.ProgressBarHook(writer=lambda t: None)])
        assert str(info.value).startswith(f"model_dir '{tmp_path / 'model'}' is being trained by "
                                          f"another process or loop (pid {holder.pid} on ")
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=60)
        history = model.train(mtcars_input, steps=1,
                              hooks=[pyhooks.ProgressBarHook(writer=lambda t: None)])
        assert history.to_dict()["steps"] == [1]  # the killed holder saved no checkpoint yet
    finally:
        holder.kill()
        holder.wait(timeout=60)


def test_credentials_of_a_killed_process_are_removed_by_the_next_run():
    worker = start("gcs", "-")
    path = wait_for_line(worker, "/")
    assert os.path.exists(path)
    with open(path) as stream:
        assert "SECRET" in stream.read()
    worker.send_signal(signal.SIGKILL)
    worker.wait(timeout=60)
    assert os.path.exists(path)  # nothing runs at kill -9 ...
    subprocess.run([sys.executable, "-c", "import pyhooks"], check=True, timeout=60,
                   env=dict(os.environ, PYTHONPATH=ROOT))
    assert not os.path.exists(os.path.dirname(path))  # ... the next pyhooks process removes it
    hook = pyhooks.ConfigureGcsHook({"type": "service_account", "private_key": "other"})
    with tf.Graph().as_default():
        tf.compat.v1.train.get_or_create_global_step()
        with pyhooks.MonitoredSession(hooks=[hook]):
            assert os.path.exists(hook.credentials_path)
    assert hook.credentials_path is None


@pytest.fixture
def mtcars_input():
    from pyhooks.estimators import input_fn, load_mtcars

    return input_fn(load_mtcars(), features=["drat"], response="mpg", batch_size=8)


def test_a_bare_checkpoint_saver_refuses_a_model_dir_another_process_trains_into(tmp_path):
    release = tmp_path / "release"
    holder = start("bare", tmp_path / "model", release)  # a user's MonitoredSession
    try:
        wait_for_line(holder, "holding")
        code, out, err = run("bare", tmp_path / "model")  # a second one: refused
        assert code != 0 and "done" not in out
        last = next(line for line in err.splitlines() if line.startswith("pyhooks.errors."))
        assert last.startswith(f"pyhooks.errors.ModelDirLockedError: model_dir "
                               f"'{tmp_path / 'model'}' is being trained by another process or "
                               f"loop (pid {holder.pid} on "), last
        code, out, err = run("train", tmp_path / "model", 1)  # an estimator: refused too
        assert code != 0 and "pyhooks.errors.ModelDirLockedError: " in err
        release.touch()
        out, err = holder.communicate(timeout=120)
        assert holder.returncode == 0 and out.splitlines()[-1] == "done", err
    finally:
        holder.kill()
        holder.wait()
    assert latest_step(tmp_path / "model") == 3  # the holder's checkpoints are whole
    code, out, err = run("bare", tmp_path / "model")  # the lock is free once it ended
    assert code == 0 and out.splitlines()[-1] == "done", err


def without_root_powers():
    """The command prefix that runs a process under permission checks, or None if impossible.

    Root ignores file permissions (CAP_DAC_OVERRIDE). The interpreter lives under /root
    here, so an unprivileged user could not run it: the process stays root but loses the
    capabilities that bypass permissions (``setpriv``). Another user needs nothing.
    """
    import shutil

    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    return [setpriv, "--bounding-set", "-dac_override,-dac_read_search,-fowner",
            "--inh-caps=-all", "--"]


@pytest.mark.skipif(without_root_powers() is None,
                    reason="running as root without setpriv: permissions would be ignored")
def test_a_model_dir_the_user_cannot_write_is_a_one_line_error_and_loses_nothing():
    import hashlib
    import shutil
    import tempfile

    parent = tempfile.mkdtemp(prefix="pyhooks-readonly-")  # not under pytest's 0700 tmp_path
    try:
        os.chmod(parent, 0o755)
        model_dir = os.path.join(parent, "model")
        code, out, err = run("train", model_dir, 2)  # as root: 2 steps recorded
        assert code == 0, err
        os.chmod(model_dir, 0o555)

        def contents():
            found = {}
            for folder, _, names in os.walk(model_dir):
                for name in set(names) - {_model_dir.LOCK_NAME}:  # it names its holder
                    with open(os.path.join(folder, name), "rb") as stream:
                        found[os.path.join(folder, name)] = hashlib.sha256(
                            stream.read()).hexdigest()
            return found

        before = contents()
        env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2", HOME=parent)
        done = subprocess.run([*without_root_powers(), sys.executable, WORKER, "train",
                               model_dir, "2"], capture_output=True, text=True, env=env,
                              timeout=180, cwd=parent)
        assert done.returncode != 0 and "done" not in done.stdout
        errors = [line for line in done.stderr.splitlines() if line.startswith("pyhooks.errors.")]
        assert len(errors) == 1, done.stderr  # one line: what, the path, the cause
        assert errors[0].startswith("pyhooks.errors.DiskWriteError: Could not write the ")
        assert f" to '{model_dir}" in errors[0] and errors[0].endswith(": Permission denied.")
        assert contents() == before  # nothing recorded is lost or changed
        os.chmod(model_dir, 0o755)
        code, out, err = run("train", model_dir, 1)  # the owner goes on from step 2
        assert code == 0, err
        assert out.splitlines()[-1] == "done 3"
    finally:
        shutil.rmtree(parent, ignore_errors=True)


def test_temporary_model_dirs_are_removed_when_the_process_ends_or_by_the_next_one():
    code = ("import sys, pyhooks.estimators as e\n"
            "m = e.linear_regressor(e.feature_columns(e.column_numeric('drat')))\n"
            "print(m.model_dir, flush=True)\n"
            "if sys.argv[1] == 'kill':\n"
            "    import os, signal; os.kill(os.getpid(), signal.SIGKILL)\n")
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    ended = subprocess.run([sys.executable, "-c", code, "end"], capture_output=True, text=True,
                           env=env, timeout=120)
    assert not os.path.exists(ended.stdout.strip())  # removed at exit
    killed = subprocess.run([sys.executable, "-c", code, "kill"], capture_output=True, text=True,
                            env=env, timeout=120)
    left = killed.stdout.strip()
    assert killed.returncode == -signal.SIGKILL and os.path.isdir(left)
    ended = subprocess.run([sys.executable, "-c", code, "end"], capture_output=True, text=True,
                           env=env, timeout=120)
    assert not os.path.exists(left)  # the next temporary model_dir removed the dead one's
