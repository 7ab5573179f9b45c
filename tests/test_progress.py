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
