"""Faults on the ``dask`` executor: a worker killed mid-compute, an unreachable scheduler,
an external scheduler process SIGKILLed, a worker killed while the statistics plugin is
registered.

The kill test runs a compute of a few seconds on a real LocalCluster
(2 processes x 1 thread, nannies restart a killed worker) with soft
placement, SIGKILLs one worker once a few blocks are done, and checks
the answer. The cluster is closed at the end of the module.
"""

from __future__ import annotations

import logging
import os
import re
import signal
import socket
import time

import numpy as np
import pytest

import lazyarr as la
from lazyarr import api, config
from lazyarr.executors import dask as dask_exec
from lazyarr.executors import dask_run
from lazyarr.executors.dask import DaskExecutor, SchedulerUnreachable
from lazyarr.executors.dask_run import progress_ticks
from lazyarr.optimize.lower import lower


class KillAfter:
    """Progress that SIGKILLs worker process ``pid`` once a ``fraction`` of the blocks is done."""

    def __init__(self, pid, fraction):
        self.pid, self.fraction = pid, fraction
        self.total = self.done = 0
        self.killed_at = None
        self.t_start = self.t_kill = 0.0

    def start(self, total):
        self.total = total
        self.t_start = time.perf_counter()

    def advance(self, n=1):
        self.done += n
        if self.killed_at is None and self.done >= self.fraction * self.total:
            os.kill(self.pid, signal.SIGKILL)
            self.killed_at = self.done
            self.t_kill = time.perf_counter() - self.t_start

    def finish(self):
        pass


def _dask_plan(y, alternate=False):
    """``y``'s plan for the dask executor; ``alternate``: every stage's blocks planned on
    workers 0 and 1 in turn."""
    plan = api.make_plan([y._expr], "dask", tuple(config.get("optimize.passes")))
    if not alternate:
        return plan
    stages = {
        name: s.replace(worker=(np.indices(s.numblocks).sum(axis=0) % 2).astype(np.int32))
        for name, s in plan.stages.items()
    }
    return plan.with_stages(stages)


def _wait_for_workers(client, n, timeout=20):
    """Wait until the cluster has ``n`` workers again (a nanny restarts a killed one)."""
    deadline = time.monotonic() + timeout
    while len(client.scheduler_info()["workers"]) < n and time.monotonic() < deadline:
        time.sleep(0.1)


def test_a_worker_killed_mid_compute_loses_nothing(dask_ex):
    # 48 row blocks of 1M random values: sin^2 + cos^2 is 1, so each row sums to 1M
    n = 1_000_000
    x = la.random.random((48, n), chunks=(1, n), seed=11)
    offsets = np.arange(48.0)
    rows = (la.sin(x) ** 2 + la.cos(x) ** 2).sum(axis=1) + la.arange(48.0, chunks=4)
    plan = _dask_plan(rows, alternate=True)
    client = dask_ex.client()
    workers = dask_ex.plan_context()["workers"]
    pids = client.run(os.getpid)
    progress = KillAfter(pids[workers[0]], fraction=0.4)
    t0 = time.perf_counter()
    with config.set({"dask.placement": "soft"}):
        (got,) = dask_ex.execute(plan, plan.outputs, progress)
    elapsed = time.perf_counter() - t0
    assert progress.killed_at is not None and progress.killed_at < progress.total
    # the lost blocks are recomputed (their random rows drawn again), not the whole plan
    assert dask_ex.last_stats.extra["retries"] == 0
    # killed in the middle: blocks were still to run (counts, not seconds: a batch that
    # finishes reports many blocks at once)
    assert progress.killed_at <= 0.8 * progress.total
    np.testing.assert_allclose(got, n + offsets, rtol=1e-9)
    counted = sum(progress_ticks(lower(plan, generate_in_place=True)))
    assert progress.done == progress.total == counted
    assert elapsed < 60
    # the nanny brought a fresh worker process back
    _wait_for_workers(client, 2)
    assert pids[workers[0]] not in client.run(os.getpid).values()
    # and the executor carries on
    np.testing.assert_array_equal(la.arange(6, chunks=4).compute(executor="dask"), np.arange(6))


def test_hard_placement_with_a_lost_worker_raises_instead_of_stalling(dask_ex):
    """Before: the blocks planned on the killed worker waited for it until Ctrl-C."""
    n = 1_000_000
    x = la.random.random((48, n), chunks=(1, n), seed=12)
    rows = (la.sin(x) ** 2).sum(axis=1)
    plan = _dask_plan(rows, alternate=True)
    client = dask_ex.client()
    workers = dask_ex.plan_context()["workers"]
    pids = client.run(os.getpid)
    progress = KillAfter(pids[workers[0]], fraction=0.3)
    t0 = time.perf_counter()
    with (
        config.set({"dask.placement": "hard", "dask.timeout": "2s"}),
        pytest.raises(dask_exec.ComputeStalled, match="placement: soft") as err,
    ):
        dask_ex.execute(plan, plan.outputs, progress)
    assert workers[0] in str(err.value) and progress.killed_at is not None
    assert time.perf_counter() - t0 < 60  # raised after ~2 s without progress, not a hang
    _wait_for_workers(client, 2)
    np.testing.assert_array_equal(la.arange(6, chunks=4).compute(executor="dask"), np.arange(6))


def test_a_paused_worker_that_stalls_the_compute_is_named():
    """A worker paused at its memory limit: before, nothing progressed for minutes."""
    import dask
    from distributed import Client, LocalCluster

    memory = {  # pause at 50% of the limit; never spill, never kill (the test fills it)
        "distributed.worker.memory.pause": 0.5,
        "distributed.worker.memory.target": False,
        "distributed.worker.memory.spill": False,
        "distributed.worker.memory.terminate": False,
    }
    with dask.config.set(memory):
        cluster = LocalCluster(
            n_workers=1,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,  # and the scheduler's HTTP routes on a free port:
            scheduler_kwargs={"dashboard": False, "dashboard_address": "127.0.0.1:0"},
            memory_limit="300MiB",  # 8787 may be another user's on a shared machine
        )
    client = Client(cluster, set_as_default=False)
    try:
        ballast, status = [], set()
        deadline = time.monotonic() + 60
        while status != {"paused"} and time.monotonic() < deadline:
            if len(ballast) < 12:  # 20 MB more until the worker pauses
                ballast.append(client.submit(np.ones, 2_500_000, pure=False))
                # not gathered: a worker that pauses meanwhile runs nothing more
                made = time.monotonic() + 5
                while ballast[-1].status == "pending" and time.monotonic() < made:
                    time.sleep(0.05)
            time.sleep(0.6)  # the worker looks at its memory every 0.5 s
            status = {w["status"] for w in client.scheduler_info()["workers"].values()}
        assert status == {"paused"}
        settings = {
            "dask.address": cluster.scheduler_address,
            "dask.stall-timeout": "2s",
            "memory-limit": None,
        }
        ex = DaskExecutor()
        plan = _dask_plan(la.ones((100, 100), chunks=50).sum())
        try:
            with config.set(settings), pytest.raises(dask_exec.ComputeStalled) as err:
                ex.execute(plan, plan.outputs)
        finally:
            ex.close()
        message = str(err.value)
        (worker,) = client.scheduler_info()["workers"]
        assert "paused" in message and worker in message
        assert re.search(r"holds [\d.]+ [kMG]?i?B of its [\d.]+ [kMG]?i?B limit", message)
    finally:
        client.close()
        cluster.close()


def test_lost_scattered_input_is_scattered_again(dask_ex, monkeypatch):
    """User data has no lineage; when its blocks are lost the compute is submitted again."""
    data = np.arange(12.0)
    y = la.asarray(data, chunks=4) * 2
    plan = api.make_plan([y._expr], "dask", ())
    client = dask_ex.client()
    scatter = dask_run.scatter_blocks
    lost = []

    def scatter_then_lose(*args):
        blocks = scatter(*args)
        if not lost:  # the first time: as if their worker died right away
            # tiny blocks travel in slabs (a slab per worker here): lose those
            futures = {b.slab if isinstance(b, dask_exec._Pick) else b for b in blocks}
            lost.extend(futures)
            client.cancel(list(futures))
        return blocks

    monkeypatch.setattr(dask_run, "scatter_blocks", scatter_then_lose)
    (got,) = dask_ex.execute(plan, plan.outputs)
    assert 1 <= len(lost) <= 3 and all(f.status == "cancelled" for f in lost)
    np.testing.assert_array_equal(got, data * 2)
    assert dask_ex.last_stats.extra["retries"] == 1


def _unused_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_scheduler_fails_fast_with_the_address():
    ex = DaskExecutor()
    address = f"tcp://127.0.0.1:{_unused_port()}"
    t0 = time.perf_counter()
    with (
        config.set({"dask.address": address, "dask.timeout": "1s"}),
        pytest.raises(SchedulerUnreachable, match=address.replace(".", r"\.")),
    ):
        ex.client()
    assert time.perf_counter() - t0 < 10
    assert isinstance(SchedulerUnreachable("x"), ConnectionError)
    ex.close()


class _Server:
    """A TCP server on loopback that accepts connections and then ``behave(conn)``s."""

    def __init__(self, behave):
        import threading

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.conns = []
        self.behave = behave
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)
            try:
                self.behave(conn)
            except OSError:  # closed by the test while waiting
                return

    def close(self):
        self.sock.close()
        for c in self.conns:
            c.close()


def _silent(conn):
    pass


def _greeting(conn):
    conn.sendall(b"SSH-2.0-OpenSSH_9.6p1 Ubuntu-3ubuntu13\r\n")


def _http(conn):
    conn.recv(65536)  # waits for a request that Dask's client never sends first
    conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")


@pytest.mark.parametrize(
    ("behave", "says"),
    [
        (_silent, "sent no Dask handshake"),
        (_http, "sent no Dask handshake"),
        (_greeting, "not with Dask's protocol"),
    ],
)
def test_a_port_that_is_not_a_scheduler_fails_within_the_timeout(behave, says):
    """Before: a silent port or an HTTP server hung for minutes; a greeting server raised
    ``MemoryError: Unable to allocate 2.82 EiB``."""
    server = _Server(behave)
    ex = DaskExecutor()
    address = f"tcp://127.0.0.1:{server.port}"
    t0 = time.perf_counter()
    try:
        with (
            config.set({"dask.address": address, "dask.timeout": "1s"}),
            pytest.raises(SchedulerUnreachable, match=says) as err,
        ):
            ex.client()
        assert address in str(err.value)
        assert time.perf_counter() - t0 < 10  # not a hang: the timeout is 1 s
    finally:
        server.close()
        ex.close()


class _Started:
    """Progress that sets an event once the first block is done."""

    def __init__(self):
        import threading

        self.event = threading.Event()

    def start(self, total):
        pass

    def advance(self, n=1):
        self.event.set()

    def finish(self):
        pass


def test_a_settings_change_in_another_thread_waits_for_the_running_compute():
    """Before: changing a dask.* setting in one thread closed the cluster under another
    thread's compute (ClosedClientError)."""
    import contextvars
    import threading

    ex = DaskExecutor()
    base = {"dask.n-workers": 2, "dask.threads-per-worker": 1, "dask.processes": False}
    n = 400_000
    x = la.random.random((64, n), chunks=(1, n), seed=5)
    rows = (la.sin(x) ** 2 + la.cos(x) ** 2).sum(axis=1)
    got, errors, started = [], [], _Started()
    try:
        with config.set(base):
            plan = api.make_plan([rows._expr], "dask", tuple(config.get("optimize.passes")))
            first = ex.client()

            def compute():
                try:
                    got.extend(ex.execute(plan, plan.outputs, started))
                except BaseException as e:  # reported below
                    errors.append(e)

            # the thread computes with this block's settings (scoped to this thread)
            in_block = contextvars.copy_context()
            worker = threading.Thread(target=in_block.run, args=(compute,), daemon=True)
            worker.start()
            assert started.event.wait(60)
            with config.set({"dask.n-workers": 1}):
                second = ex.client()  # a new cluster for the new setting
            assert second is not first
            worker.join(120)
            assert not worker.is_alive(), "the first compute did not finish"
        assert not errors, errors
        np.testing.assert_allclose(got[0], np.full(64, float(n)), rtol=1e-9)
        assert first.status == "closed"  # closed once its compute had finished
    finally:
        ex.close()


# -- an external scheduler SIGKILLed ----------------------------------------------------------


class _ExternalCluster:
    """A scheduler and one worker, each a real ``python -m distributed.cli.*`` process on
    loopback; the worker imports this checkout's lazyarr. Always stopped (SIGKILL)."""

    def __init__(self) -> None:
        import subprocess
        import sys
        from pathlib import Path

        port = _unused_port()
        self.address = f"tcp://127.0.0.1:{port}"
        root = str(Path(la.__file__).parent.parent)
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]),
        }
        quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "env": env}
        cli = [sys.executable, "-m"]
        self.scheduler = subprocess.Popen(
            [*cli, "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", str(port),
             "--no-dashboard", "--dashboard-address", "127.0.0.1:0"],
            **quiet,
        )  # fmt: skip
        self.worker = subprocess.Popen(
            [*cli, "distributed.cli.dask_worker", self.address, "--nthreads", "1",
             "--no-nanny", "--host", "127.0.0.1", "--no-dashboard", "--death-timeout", "20"],
            **quiet,
        )  # fmt: skip

    def wait_for_worker(self, timeout: float = 30) -> None:
        from distributed import Client

        with Client(self.address, timeout=timeout, set_as_default=False) as client:
            client.wait_for_workers(1, timeout=timeout)

    def kill_scheduler(self) -> None:
        os.kill(self.scheduler.pid, signal.SIGKILL)
        self.scheduler.wait(10)

    def stop(self) -> None:
        for proc in (self.worker, self.scheduler):
            if proc.poll() is None:
                proc.kill()
            proc.wait(10)


class _KillScheduler(KillAfter):
    """Progress that SIGKILLs the external scheduler once a ``fraction`` of blocks is done."""

    def __init__(self, cluster: _ExternalCluster, fraction: float) -> None:
        super().__init__(cluster.scheduler.pid, fraction)


@pytest.mark.parametrize("when", ["during", "before"])
def test_an_external_scheduler_killed_is_named_as_lost(when):
    """SIGKILL of the scheduler at dask.address, during a compute or between two: lazyarr
    raises SchedulerUnreachable naming the address within dask.timeout. Before: "an input
    scattered from this process was lost" although nothing was scattered."""
    cluster = _ExternalCluster()
    ex = DaskExecutor()
    settings = {"dask.address": cluster.address, "dask.timeout": "3s"}
    try:
        cluster.wait_for_worker()
        with config.set(settings):
            warm = _dask_plan(la.arange(6, chunks=4) * 2)
            np.testing.assert_array_equal(ex.execute(warm, warm.outputs)[0], np.arange(6) * 2)
            n = 400_000
            x = la.random.random((48, n), chunks=(1, n), seed=13)
            plan = _dask_plan((la.sin(x) ** 2 + la.cos(x) ** 2).sum(axis=1))
            progress = _KillScheduler(cluster, fraction=0.25) if when == "during" else None
            if when == "before":
                cluster.kill_scheduler()
            t0 = time.perf_counter()
            with pytest.raises(SchedulerUnreachable) as err:
                ex.execute(plan, plan.outputs, progress)
            elapsed = time.perf_counter() - t0
        message = str(err.value)
        assert cluster.address in message, message
        assert "scattered" not in message, message
        if when == "during":
            assert progress.killed_at is not None and progress.killed_at < progress.total
            assert "was lost during the compute" in message, message
        assert elapsed < 3 + 10, elapsed  # dask.timeout, and slack for a loaded machine
    finally:
        cluster.stop()
        ex.close()


# -- the statistics plugin registered while a worker dies --------------------------------------


def _die_on_plugin_add(dask_worker) -> None:
    """On this worker: SIGKILL the process when the scheduler sends it a plugin."""

    async def die(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGKILL)

    dask_worker.handlers["plugin-add"] = die


def test_plugin_registration_retries_when_a_worker_dies_during_the_first_compute(
    dask_ex, monkeypatch
):
    """A worker SIGKILLed while the statistics plugin is registered (the first compute on a
    client): before, the compute failed with the raw CommClosedError of
    ``register_worker_plugin``; registration now retries, and the compute is right."""
    from lazyarr.executors import dask_stats

    client = dask_ex.client()
    _wait_for_workers(client, 2)
    workers = sorted(client.scheduler_info()["workers"])
    pids = client.run(os.getpid)
    dask_stats.ensure_plugin(client)  # registered or not by earlier tests: now it is,
    client.unregister_worker_plugin(dask_stats.PLUGIN_NAME)  # and now as on a new client
    monkeypatch.setattr(dask_stats, "_REGISTERED", set())
    client.run(_die_on_plugin_add, workers=[workers[0]])
    attempts = []
    register = client.register_plugin

    def counted(*args, **kwargs):
        attempts.append(time.perf_counter())
        return register(*args, **kwargs)

    monkeypatch.setattr(client, "register_plugin", counted)
    n = 200_000
    x = la.random.random((8, n), chunks=(1, n), seed=14)
    plan = _dask_plan((la.sin(x) ** 2 + la.cos(x) ** 2).sum(axis=1))
    with config.set({"dask.placement": "soft"}):
        (got,) = dask_ex.execute(plan, plan.outputs)
    np.testing.assert_allclose(got, np.full(8, float(n)), rtol=1e-9)
    assert len(attempts) >= 2, "the first registration did not fail: no worker died"
    _wait_for_workers(client, 2)
    assert pids[workers[0]] not in client.run(os.getpid).values()  # it died; a nanny restarted it
    has_plugin = client.run(lambda dask_worker: dask_stats.PLUGIN_NAME in dask_worker.plugins)
    assert all(has_plugin.values()), has_plugin  # on the survivor and the restarted worker


def test_a_scheduler_gone_before_the_client_noticed_is_named_as_lost(dask_ex, monkeypatch):
    """The race of the test above, made certain: the first scheduler call of a compute
    fails with a comm error while the client still says "running"."""
    from distributed.comm.core import CommClosedError

    from lazyarr.executors import dask_stats

    def gone(client):
        raise CommClosedError("in <TCPConnector>: ConnectionRefusedError: [Errno 111]")

    monkeypatch.setattr(dask_stats, "reset", gone)
    plan = _dask_plan(la.arange(6, chunks=4) * 2)
    with pytest.raises(SchedulerUnreachable, match="does not answer"):
        dask_ex.execute(plan, plan.outputs)


_WS_SCRIPT = """
import http.server, threading
import numpy as np
from distributed import LocalCluster
import lazyarr as la
from lazyarr.executors import registry
from lazyarr.executors.dask import SchedulerUnreachable

ex = registry.get("dask")  # the executor compute(executor="dask") runs on
with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="ws://",
                  dashboard_address=None, scheduler_kwargs={"dashboard": False,
                  "dashboard_address": "127.0.0.1:0"}) as cluster:  # a real websocket scheduler
    with la.config.set({"dask.address": cluster.scheduler_address, "dask.timeout": "10s"}):
        assert (la.arange(6, chunks=3) * 2).sum().compute(executor="dask") == 30
    ex.close()
class Quiet(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

http_server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
threading.Thread(target=http_server.serve_forever, daemon=True).start()
address = f"ws://127.0.0.1:{http_server.server_address[1]}"
with la.config.set({"dask.address": address, "dask.timeout": "2s"}):
    try:
        ex.client()
    except SchedulerUnreachable as e:
        print("unreachable:", e)
ex.close()
"""


def test_a_websocket_address_of_an_http_server_is_unreachable_and_exits_cleanly(tmp_path):
    """Before: tornado's WebSocketError, then a Client.__del__ traceback (a 6 s wait) at exit."""
    import subprocess
    import sys
    from pathlib import Path

    root = str(Path(la.__file__).parent.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run(
        [sys.executable, "-c", _WS_SCRIPT],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "unreachable: 'ws://127.0.0.1:" in out.stdout, out.stdout + out.stderr
    assert "not a Dask scheduler's websocket port" in out.stdout
    # (distributed may log its own shutdown of the websocket cluster; no client is left behind)
    assert "Client.__del__" not in out.stderr and "timed out" not in out.stderr, out.stderr


# -- Ctrl-C in a terminal: the process group's SIGINT also stops the LocalCluster's workers ------

_CTRL_C_SCRIPT = """
import signal
import time
import lazyarr as la

def main():
    # Ctrl-C raises KeyboardInterrupt, as in a terminal: a shell without job control starts
    # background jobs with SIGINT ignored, and Python then keeps ignoring it (CI run with &)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    la.config.set({"dask.n-workers": 2, "dask.threads-per-worker": 1, "dask.timeout": "5s"})
    x = la.arange(8, chunks=4)
    print("first", (x * 2).sum().compute(executor="dask"), flush=True)
    try:
        y = la.random.random((4000, 100_000), chunks=(1, 100_000), seed=1)
        print("long start", flush=True)
        (la.sin(y) ** 2).sum().compute(executor="dask")
        print("long done", flush=True)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
    print("again", (x * 3).sum().compute(executor="dask"), flush=True)
    print("workers", len(la.cluster().scheduler_info()["workers"]), flush=True)

if __name__ == "__main__":
    main()
"""


def test_ctrl_c_that_stopped_the_local_cluster_restarts_it_on_the_next_compute(tmp_path):
    """SIGINT to the whole process group, as a terminal's Ctrl-C sends it, during a compute:
    KeyboardInterrupt, then the next compute starts a new LocalCluster. Before: it never
    returned (the nannies had closed with their workers)."""
    import subprocess
    import sys
    from pathlib import Path

    script = tmp_path / "ctrl_c.py"
    script.write_text(_CTRL_C_SCRIPT)
    root = str(Path(la.__file__).parent.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen(
        [sys.executable, str(script)],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,  # its own process group, signalled as a terminal would
    )
    lines = []
    try:
        for line in proc.stdout:
            lines.append(line.strip())
            if line.startswith("long start"):
                time.sleep(1.5)  # the compute is running on the workers
                os.killpg(proc.pid, signal.SIGINT)
                break
        out, _ = proc.communicate(timeout=120)
        lines += out.split("\n")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert "interrupted" in lines, lines
    assert "again 84" in lines, lines
    assert "workers 2" in lines, lines
    assert proc.returncode == 0


def test_an_external_scheduler_without_workers_is_an_error_within_the_timeout():
    """A scheduler whose workers are gone (stopped, killed): an error naming it, not a hang."""
    cluster = _ExternalCluster()
    cluster.worker.kill()  # only the scheduler
    cluster.worker.wait(10)
    ex = DaskExecutor()
    try:
        ex_timeout = {"dask.address": cluster.address, "dask.timeout": "2s"}
        with config.set({**ex_timeout, "dask.timeout": "20s"}):
            ex.client()  # the scheduler is up
        with config.set(ex_timeout), pytest.raises(SchedulerUnreachable, match="has no workers"):
            plan = _dask_plan(la.arange(6, chunks=3) * 2)
            ex.execute(plan, plan.outputs)
    finally:
        cluster.stop()
        ex.close()


def test_our_client_closes_quietly_when_the_users_cluster_goes_away(caplog):
    """Before: "Failed to reconnect to scheduler after 10.00 seconds" and a traceback of the
    cancelled reconnection, logged as errors, from lazyarr's own client."""
    from distributed import LocalCluster

    cluster = LocalCluster(
        n_workers=1,
        threads_per_worker=1,
        processes=False,
        dashboard_address=None,  # the scheduler's HTTP routes too: not 8787
        scheduler_kwargs={"dashboard": False, "dashboard_address": "127.0.0.1:0"},
    )
    ex = DaskExecutor()
    try:
        with config.set({"dask.address": cluster.scheduler_address, "dask.timeout": "1s"}):
            plan = _dask_plan(la.arange(6, chunks=3) * 2)
            (got,) = ex.execute(plan, plan.outputs)
            np.testing.assert_array_equal(got, np.arange(6) * 2)
            client = ex.client()
        caplog.set_level("INFO", logger="distributed.client")
        cluster.close()  # the user's cluster goes away under our client
        deadline = time.monotonic() + 10
        while client.status not in ("closed", "closing") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert client.status in ("closed", "closing")  # it gave up reconnecting
    finally:
        ex.close()
        cluster.close()
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors == [], [r.getMessage() for r in errors]
