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


def _fake_notebook(monkeypatch) -> None:
    kernel_shell = types.SimpleNamespace(kernel=object())
    fake = types.ModuleType("IPython")
    fake.get_ipython = lambda: kernel_shell
    monkeypatch.setitem(sys.modules, "IPython", fake)


def test_a_notebook_without_ipywidgets_gets_a_text_bar_and_no_warning(monkeypatch):
    """tqdm.auto would warn (TqdmWarning: IProgress not found); warnings are errors here."""
    _fake_notebook(monkeypatch)
    real_find_spec = progress.importlib.util.find_spec
    monkeypatch.setattr(
        progress.importlib.util,
        "find_spec",
        lambda name, *a: None if name == "ipywidgets" else real_find_spec(name, *a),
    )
    from tqdm.std import tqdm as text_tqdm

    assert progress.bar_class() is text_tqdm
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    np.testing.assert_array_equal(_compute(True), np.full((4, 4), 2.0))
    assert "block" in err.getvalue()


def test_a_notebook_with_ipywidgets_gets_the_widget_bar(monkeypatch):
    _fake_notebook(monkeypatch)
    monkeypatch.setattr(progress.importlib.util, "find_spec", lambda name, *a: object())
    from tqdm.notebook import tqdm as notebook_tqdm

    assert progress.bar_class() is notebook_tqdm


def test_outside_a_notebook_the_text_bar(monkeypatch):
    monkeypatch.delitem(sys.modules, "IPython", raising=False)
    from tqdm.std import tqdm as text_tqdm

    assert progress.bar_class() is text_tqdm


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
