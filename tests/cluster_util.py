"""Starting localhost clusters for the multi-process tests: free ports, bounded runs, no leftovers."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time

TASKS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cluster_tasks.py")


def free_ports(count):
    """``count`` distinct free loopback ports (bound once, then released)."""
    sockets = []
    try:
        for _ in range(count):
            sock = socket.socket()
            sock.bind(("127.0.0.1", 0))
            sockets.append(sock)
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def cluster_spec(**counts):
    """``{"worker": ["127.0.0.1:<port>", ...], ...}`` with ``counts`` tasks per job."""
    ports = iter(free_ports(sum(counts.values())))
    return {job: [f"127.0.0.1:{next(ports)}" for _ in range(n)] for job, n in counts.items()}


class Cluster:
    """Runs ``cluster_tasks.py <scenario>`` once per task; every process is killed at exit.

    ``wait(timeout)`` waits for the tasks that must end (all but ``serving`` jobs),
    returns ``{(type, id): (returncode, report or None, stderr tail)}``.
    """

    def __init__(self, tmp_path, scenario, cluster, serving=("ps",), env=None, **config):
        self.dir = str(tmp_path)
        self.config = dict(config, cluster=cluster, dir=self.dir)
        path = os.path.join(self.dir, "config.json")
        with open(path, "w", encoding="utf-8") as stream:
            json.dump(self.config, stream)
        self.processes = {}
        self.serving = serving
        self._env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="",
                         PYTHONUNBUFFERED="1", **(env or {}))
        self._command = [sys.executable, TASKS, scenario, path]

    def start(self, task_type, task_id, extra_env=None):
        log = open(os.path.join(self.dir, f"{task_type}_{task_id}.log"), "wb")  # noqa: SIM115
        env = dict(self._env, TF_CONFIG=json.dumps({
            "cluster": self.config["cluster"], "task": {"type": task_type, "index": task_id}}),
            **(extra_env or {}))
        self.processes[(task_type, task_id)] = (subprocess.Popen(
            [*self._command, task_type, str(task_id)], stdout=log, stderr=subprocess.STDOUT,
            env=env, start_new_session=True), log)

    def start_all(self):
        for job, addresses in self.config["cluster"].items():
            for task_id in range(len(addresses)):
                self.start(job, task_id)
        return self

    def wait(self, timeout):
        deadline = time.monotonic() + timeout
        results = {}
        for key, (process, log) in self.processes.items():
            if key[0] in self.serving:
                continue
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                self.kill()
                raise AssertionError(f"task {key} did not end within {timeout} s; its log:\n"
                                     f"{self.log(key)}") from None
            results[key] = (process.returncode, self.report(key), self.log(key))
        return results

    def report(self, key):
        path = os.path.join(self.dir, f"{key[0]}_{key[1]}.json")
        if not os.path.exists(path):
            return None
        with open(path, encoding="utf-8") as stream:
            return json.load(stream)

    def log(self, key, tail=4000):
        with open(os.path.join(self.dir, f"{key[0]}_{key[1]}.log"), "rb") as stream:
            return stream.read().decode("utf-8", "replace")[-tail:]

    def kill(self, key=None):
        keys = [key] if key is not None else list(self.processes)
        for k in keys:
            process, log = self.processes[k]
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
            log.close()

    def kill_when_hanging(self, key, timeout):
        """Kills task ``key`` once it says it hangs (its ``hanging_<id>`` file, written by a
        ``hang_at`` scenario); then waits for the others, as :meth:`wait`. ``killed_at``: when
        (``time.time()``)."""
        deadline = time.monotonic() + 90
        while not os.path.exists(os.path.join(self.dir, f"hanging_{key[1]}")):
            assert time.monotonic() < deadline, self.log(key)
            time.sleep(0.2)
        self.killed_at = time.time()
        self.kill(key)
        del self.processes[key]
        return self.wait(timeout=timeout)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.kill()
        return False
