"""Switching executors by configuration gives identical results, with a clear precedence.

Every usable executor computes the same expression chosen four ways: the
``executor=`` keyword, ``config.set(...)``, the ``LAZYARR_EXECUTOR`` variable
(in a fresh process) and the user YAML file (``LAZYARR_CONFIG``; re-read in
this process per executor, and read at start-up by a fresh process).
Precedence, strongest first: keyword > context manager > env var > file > default.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import lazyarr as la
from lazyarr import config
from lazyarr.executors import registry
from lazyarr.executors.numpy import NumpyExecutor
from lazyarr.executors.testing import ComputeRefused

EXECUTORS = sorted(n for n, (ok, _) in registry.available().items() if ok and n != "raise")

EXPRESSION = """
import lazyarr as la
x = la.arange(1200, chunks=170).reshape(40, 30)
ints = ((x * 7 - 3) % 11).sum(axis=0)
floats = la.sqrt(x.astype("float64") + 0.5) * 2.0 - 1.0
"""


def expression() -> tuple[la.LazyArray, la.LazyArray]:
    names: dict = {}
    exec(EXPRESSION, names)
    return names["ints"], names["floats"]


def expected() -> tuple[np.ndarray, np.ndarray]:
    x = np.arange(1200).reshape(40, 30)
    return ((x * 7 - 3) % 11).sum(axis=0), np.sqrt(x.astype("float64") + 0.5) * 2.0 - 1.0


def check(results) -> None:
    """Integer math and correctly rounded elementwise floats: equal to the last bit."""
    for got, want in zip(results, expected()):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def test_there_is_an_executor_to_switch_to():
    assert "numpy" in EXECUTORS


@pytest.mark.parametrize("name", EXECUTORS)
def test_context_manager(name):
    with config.set(executor=name):
        check(la.compute(*expression()))
        assert la.last_run().executor == name


@pytest.mark.parametrize("name", EXECUTORS)
def test_keyword(name):
    ints, floats = expression()
    check((ints.compute(executor=name), floats.compute(executor=name)))
    assert la.last_run().executor == name


SUBPROCESS = (
    EXPRESSION
    + """
import json, sys
import numpy as np
results = la.compute(ints, floats)
np.savez(sys.argv[1], ints=results[0], floats=results[1])
print(json.dumps({"executor": la.last_run().executor,
                  "config": la.config.get("executor")}))
"""
)


def fresh_process(tmp_path: Path, env_vars: dict[str, str], file: str | None) -> dict:
    """Run the expression in a new interpreter with only these settings; return what it used."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LAZYARR_")}
    user = tmp_path / "lazyarr.yaml"
    if file is not None:
        user.write_text(file)
    env["LAZYARR_CONFIG"] = str(user)
    env.update(env_vars)
    out = tmp_path / "results.npz"
    run = subprocess.run(
        [sys.executable, "-c", SUBPROCESS, str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    info = {"returncode": run.returncode, "stderr": run.stderr}
    if run.returncode == 0:
        info.update(json.loads(run.stdout.strip().splitlines()[-1]))
        with np.load(out) as data:
            info["results"] = (data["ints"], data["floats"])
    return info


@pytest.mark.parametrize("name", EXECUTORS)
def test_env_var_in_a_fresh_process(tmp_path, name):
    info = fresh_process(tmp_path, {"LAZYARR_EXECUTOR": name}, None)
    assert info["returncode"] == 0, info["stderr"][-3000:]
    assert info["executor"] == name
    check(info["results"])


@pytest.fixture
def user_file(monkeypatch, tmp_path):
    """Point LAZYARR_CONFIG at a fresh YAML file; the config is re-read after the test."""
    path = tmp_path / "lazyarr.yaml"
    monkeypatch.setenv("LAZYARR_CONFIG", str(path))
    yield path
    monkeypatch.undo()
    config.refresh()


@pytest.mark.parametrize("name", EXECUTORS)
def test_yaml_file(user_file, name):
    user_file.write_text(f"# written by a test\nexecutor: {name}\n")
    config.refresh()
    assert config.get("executor") == name
    check(la.compute(*expression()))
    assert la.last_run().executor == name


def test_yaml_file_in_a_fresh_process(tmp_path):
    info = fresh_process(tmp_path, {}, "executor: numpy\n")
    assert info["returncode"] == 0, info["stderr"][-3000:]
    assert info["executor"] == info["config"] == "numpy"
    check(info["results"])
    refused = fresh_process(tmp_path, {}, "executor: raise\n")
    assert refused["returncode"] != 0 and "ComputeRefused" in refused["stderr"]


def test_env_beats_file_in_a_fresh_process(tmp_path):
    info = fresh_process(tmp_path, {"LAZYARR_EXECUTOR": "numpy"}, "executor: raise\n")
    assert info["returncode"] == 0, info["stderr"][-3000:]
    assert info["executor"] == "numpy"
    refused = fresh_process(tmp_path, {"LAZYARR_EXECUTOR": "raise"}, "executor: numpy\n")
    assert refused["returncode"] != 0 and "ComputeRefused" in refused["stderr"]
    bare = tmp_path / "no-file"  # LAZYARR_CONFIG names a file that does not exist
    bare.mkdir()
    default = fresh_process(bare, {}, None)
    assert default["executor"] == default["config"] == "numba"


class Tagged(NumpyExecutor):
    """The reference executor under another name, to see which setting won."""

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__()


@pytest.fixture
def tagged(monkeypatch, tmp_path):
    monkeypatch.setattr(registry, "_INSTANCES", dict(registry._INSTANCES))
    for tag in ("file", "env", "ctx", "kw"):
        monkeypatch.setitem(registry._EXTRA, f"tag-{tag}", Tagged(f"tag-{tag}"))
    yield monkeypatch
    monkeypatch.undo()
    config.refresh()  # forget the file and variables set here


def used(**kw) -> str:
    ints, floats = expression()
    check(la.compute(ints, floats, **kw))
    return la.last_run().executor


def test_precedence_keyword_context_env_file_default(tagged, tmp_path):
    assert used() == "numba"  # default (conftest points LAZYARR_CONFIG at an empty file)
    user = tmp_path / "lazyarr.yaml"
    user.write_text("executor: tag-file\n")
    tagged.setenv("LAZYARR_CONFIG", str(user))
    config.refresh()
    assert used() == "tag-file"
    tagged.setenv("LAZYARR_EXECUTOR", "tag-env")
    config.refresh()
    assert used() == "tag-env"
    with config.set(executor="tag-ctx"):
        assert used() == "tag-ctx"
        assert used(executor="tag-kw") == "tag-kw"
        with pytest.raises(ComputeRefused):
            used(executor="raise")  # the keyword really decides
    assert used() == "tag-env"
    tagged.delenv("LAZYARR_EXECUTOR")
    config.refresh()
    assert used() == "tag-file"


def test_a_typo_in_any_source_names_the_known_executors(tmp_path):
    with (
        pytest.raises(ValueError, match=r"unknown executor 'numpi'.*did you mean 'numpy'"),
        config.set(executor="numpi"),
    ):
        used()
    info = fresh_process(tmp_path, {"LAZYARR_EXECUTOR": "numpi"}, None)
    assert info["returncode"] != 0 and "did you mean 'numpy'" in info["stderr"]
