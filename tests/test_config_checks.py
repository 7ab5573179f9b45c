"""Settings are checked when they are set (issue 24, row 5 and the config rows of 7):
executor names against the registry, with a near miss; the variable or file that gave a
bad value named at import; the CLI refuses to write one; per-call keywords of compute."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import lazyarr as la
from lazyarr import config
from lazyarr.api import MemoryLimitError
from lazyarr.executors import registry


def _run(code: str, tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("LAZYARR_")}
    clean.update({"LAZYARR_CONFIG": os.devnull, **env})
    clean["PYTHONPATH"] = str(Path(la.__file__).parents[1])  # this lazyarr, from any cwd
    return subprocess.run(
        [sys.executable, *code.split("\0")],
        env=clean,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_config_set_refuses_an_unknown_executor_with_a_near_miss() -> None:
    before = config.get("executor")
    with pytest.raises(ValueError, match="unknown executor 'numab'; did you mean 'numba'"):
        config.set(executor="numab")
    with pytest.raises(ValueError, match="did you mean 'numpy'"), config.set(executor="nunpy"):
        pass
    assert config.get("executor") == before
    registry.register("checks-test", "lazyarr.executors.numpy:NumpyExecutor")
    with config.set(executor="checks-test"):  # a registered name is fine
        np.testing.assert_array_equal(la.arange(3).compute(), np.arange(3))


def test_bad_executor_in_the_environment_warns_at_import_naming_the_variable(tmp_path) -> None:
    code = "-c\0import lazyarr as la\ntry:\n la.ones(2).compute()\nexcept ValueError as e:\n"
    code += " print(e)"
    out = _run(code, tmp_path, LAZYARR_EXECUTOR="nunpy")
    assert "ConfigWarning: environment variable LAZYARR_EXECUTOR" in out.stderr
    assert "did you mean 'numpy'" in out.stderr
    assert "LAZYARR_EXECUTOR" in out.stdout  # and computing says why it cannot run


def test_cli_refuses_to_write_an_unknown_executor(tmp_path) -> None:
    user = tmp_path / "lazyarr.yaml"
    out = _run("-m\0lazyarr\0config\0set\0executor\0nmpy", tmp_path, LAZYARR_CONFIG=str(user))
    assert out.returncode != 0
    assert "did you mean 'numpy'" in out.stderr
    assert not user.exists()


def test_a_non_mapping_config_file_is_reported_briefly(tmp_path, monkeypatch) -> None:
    user = tmp_path / "lazyarr.yaml"
    user.write_text("".join(f"- item number {i}\n" for i in range(2000)))
    monkeypatch.setenv("LAZYARR_CONFIG", str(user))
    try:
        with pytest.warns(config.ConfigWarning) as caught:
            config.refresh()
        (message,) = [str(w.message) for w in caught]
        assert "must hold a mapping of settings, not a list" in message
        assert "item number" not in message and len(message) < 300
        with pytest.raises(ValueError, match="not a list") as info:
            config.get("executor")
        assert "item number" not in str(info.value)
    finally:
        monkeypatch.undo()
        config.refresh()


def test_a_missing_config_file_named_by_the_variable_warns(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("LAZYARR_CONFIG", str(tmp_path / "missing.yaml"))
    try:
        with pytest.warns(config.ConfigWarning, match=r"missing\.yaml \(named by \$LAZYARR"):
            config.refresh()
        assert config.get("executor") == "numba"  # the defaults hold
    finally:
        monkeypatch.undo()
        config.refresh()


def test_compute_and_persist_take_memory_limit_for_one_call() -> None:
    x = la.ones(10**5) + 1
    with pytest.raises(MemoryLimitError):
        x.sum().compute(memory_limit="1KiB")
    with pytest.raises(MemoryLimitError):
        la.persist(x, memory_limit="1KiB")
    assert config.get("memory-limit") is None
    assert x.sum().compute(memory_limit="1GiB") == 2 * 10**5
    (total,) = la.compute(x.sum(), memory_limit="1GiB")
    assert total == 2 * 10**5
    with pytest.raises(TypeError, match="memory_limt"):
        x.compute(memory_limt="1GiB")
