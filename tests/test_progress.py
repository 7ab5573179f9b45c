"""The ``progress`` setting: ``auto`` draws a bar only where someone watches it live."""

from __future__ import annotations

import io
import sys
import types

import numpy as np
import pytest

import lazyarr as la
from lazyarr import progress


class Terminal(io.StringIO):
    """A text stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


@pytest.fixture
def no_delay(monkeypatch):
    """``auto`` bars open at once (the real delay hides bars of short computes)."""
    monkeypatch.setattr(progress, "AUTO_DELAY_SECONDS", 0.0)


def _compute(setting) -> np.ndarray:
    x = la.ones((4, 4), chunks=2)
    return (x + 1).compute(executor="numpy", progress=setting)


@pytest.mark.parametrize(
    ("stdout", "stderr", "bar"),
    [(Terminal, Terminal, True), (io.StringIO, Terminal, False), (Terminal, io.StringIO, False)],
)
def test_auto_draws_only_when_stdout_and_stderr_are_terminals(
    monkeypatch, no_delay, stdout, stderr, bar
):
    out, err = stdout(), stderr()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    np.testing.assert_array_equal(_compute("auto"), np.full((4, 4), 2.0))
    written = out.getvalue() + err.getvalue()
    assert ("block" in written) is bar
    assert ("\r" in written) is bar


def test_true_draws_even_into_a_file(monkeypatch):
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    np.testing.assert_array_equal(_compute(True), np.full((4, 4), 2.0))
    assert "block" in err.getvalue()
    assert _compute(False) is not None
    assert "block" not in out.getvalue()


def test_auto_draws_in_a_notebook(monkeypatch):
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    kernel_shell = types.SimpleNamespace(kernel=object())
    fake = types.ModuleType("IPython")
    fake.get_ipython = lambda: kernel_shell
    monkeypatch.setitem(sys.modules, "IPython", fake)
    assert progress.interactive()
    assert isinstance(progress.make_progress("auto", "x"), progress.TqdmProgress)
    fake.get_ipython = lambda: types.SimpleNamespace()  # a terminal IPython: no kernel
    assert not progress.interactive()
    assert progress.make_progress("auto", "x") is None


def test_the_bar_is_tqdm_autos(monkeypatch):
    """tqdm.auto picks the widget in a notebook with ipywidgets, else the text bar."""
    from tqdm.auto import tqdm as auto_tqdm

    assert progress.bar_class() is auto_tqdm
    bar = progress.make_progress(True, "x")
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    bar.start(3)
    assert bar.bar.delay == 0.0 and bar.bar.unit == "block"
    bar.finish()


class _Recorder:
    def __init__(self) -> None:
        self.total = 0
        self.done = 0
        self.calls = 0

    def start(self, total_blocks: int) -> None:
        self.total = total_blocks

    def advance(self, blocks: int = 1) -> None:
        self.done += blocks
        self.calls += 1

    def finish(self) -> None:
        pass


@pytest.mark.parametrize("executor", ["numpy", "numba"])
def test_the_bar_counts_the_blocks_a_fused_reduction_reads(monkeypatch, executor):
    """Before: a reduction over 24 blocks fused into one task counted 0/1, then 1/1."""
    recorder = _Recorder()
    monkeypatch.setattr(la.api, "make_progress", lambda setting, description: recorder)
    a = np.arange(24 * 2**17, dtype=np.float64).reshape(24, 2**17)
    x = la.asarray(a, chunks=(1, 2**17))  # 24 blocks of 1 MiB: reblocking keeps them
    with la.config.set({"numba.compile-threshold": 0}):
        got = (x * 2 + 1).sum().compute(executor=executor, progress=True)
    np.testing.assert_allclose(got, (a * 2 + 1).sum())
    assert (recorder.done, recorder.total) == (24, 24)


def test_the_dask_bar_counts_every_block_as_the_numba_bar_does(monkeypatch, dask_ex):
    """Before: the dask executor counted the blocks its tasks made (a reduction over 24
    blocks fused into partials: 0/1, then 1/1); now the blocks each partial reads, advanced
    as partials finish, with the numba executor's total. Generated and in-memory inputs."""
    with la.config.set({"numba.compile-threshold": 0, "dask.batch-tasks": False}):
        for make in (
            lambda: la.random.random((24, 2**17), chunks=(1, 2**17), seed=1),
            lambda: la.asarray(np.ones((24, 2**17)), chunks=(1, 2**17)),
        ):
            counts = {}
            for executor in ("numba", "dask"):
                recorder = _Recorder()
                monkeypatch.setattr(la.api, "make_progress", lambda s, d, r=recorder: r)
                got = (make() * 2 + 1).sum().compute(executor=executor, progress=True)
                counts[executor] = (recorder.done, recorder.total, recorder.calls, got)
            (done, total, calls, got), numba = counts["dask"], counts["numba"]
            assert (done, total) == numba[:2] == (24, 24)
            np.testing.assert_allclose(got, numba[3])
            assert calls == len(lower_graph_partials(make())) > 2  # one per partial task


def lower_graph_partials(x: la.LazyArray) -> list:
    """The partial tasks of ``(x * 2 + 1).sum()`` lowered as the dask executor lowers it."""
    from lazyarr.optimize.lower import lower
    from lazyarr.optimize.tasks import TaskKind

    expr = ((x * 2 + 1).sum())._expr
    plan = la.api.make_plan([expr], "dask", la.api.passes_for(None, None))
    graph = lower(plan, plan.outputs, generate_in_place=True)
    return [t for t in graph.tasks if t.kind == TaskKind.PARTIAL]


def test_a_long_task_draws_its_delayed_bar_before_it_ends(monkeypatch):
    """The bar's delay passes during one long task: the waiting thread's ``advance(0)``
    calls draw it (before: a bar opened only when a block finished)."""
    import time

    err = Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.setattr(sys, "stdout", Terminal())
    monkeypatch.setattr(progress, "AUTO_DELAY_SECONDS", 0.2)
    seen_while_running: list[str] = []

    def slow(block):
        time.sleep(0.6)
        seen_while_running.append(err.getvalue())
        return block + 1

    x = la.asarray(np.zeros(2**20), chunks=2**19)  # 2 blocks of 4 MiB: run on the pool
    with la.config.set({"numba.threads": 2}):
        got = la.map_blocks(slow, x).compute(executor="numba", progress="auto")
    np.testing.assert_array_equal(got, np.ones(2**20))
    assert any("block" in seen for seen in seen_while_running), seen_while_running


# -- real terminals and files: a child process whose stdout/stderr are a pty or a file ----

_CHILD = (
    "import lazyarr as la, lazyarr.progress as p\n"
    "p.AUTO_DELAY_SECONDS = 0.0\n"  # the bar at once: the compute is short
    "x = la.ones((4, 4), chunks=2)\n"
    "assert (x + 1).compute(executor='numpy').sum() == 32\n"
    "print('done', flush=True)\n"
)


def _run_child(stdout_tty: bool, stderr_tty: bool, err_file) -> str:
    """Run :data:`_CHILD` with its stdout and stderr on a new pseudo-terminal or, for
    stderr, ``err_file``; return what the terminal received."""
    import fcntl
    import os
    import pty
    import select
    import struct
    import subprocess
    import termios
    from pathlib import Path

    master, slave = pty.openpty()
    # 80 columns, as a terminal window has (a new pty has 0: tqdm would draw nothing)
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    root = str(Path(la.__file__).parent.parent)
    env = {**os.environ, "PYTHONPATH": root, "LAZYARR_PROGRESS": "auto"}
    with open(err_file, "w") as err:
        child = subprocess.Popen(
            [sys.executable, "-c", _CHILD],
            stdout=slave if stdout_tty else subprocess.DEVNULL,
            stderr=slave if stderr_tty else err,
            env=env,
        )
    os.close(slave)
    received = b""
    try:
        while True:
            ready, _, _ = select.select([master], [], [], 60)
            if not ready:
                break
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the child closed its end of the terminal
                break
            if not chunk:
                break
            received += chunk
    finally:
        os.close(master)
        assert child.wait(60) == 0
    return received.decode(errors="replace")


def test_auto_draws_on_a_real_terminal(tmp_path):
    """stdout and stderr on a pty (``isatty()`` is true for real): the bar is drawn."""
    shown = _run_child(True, True, tmp_path / "err.txt")
    assert "block" in shown and "\r" in shown, shown
    assert (tmp_path / "err.txt").read_text() == ""


def test_auto_draws_nothing_into_a_stderr_file(tmp_path):
    """stdout on a terminal but stderr redirected to a file (``2> log``): no bar, in the
    file or anywhere."""
    err_file = tmp_path / "err.txt"
    shown = _run_child(True, False, err_file)
    assert "done" in shown and "block" not in shown, shown
    assert err_file.read_text() == ""
