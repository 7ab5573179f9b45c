"""Tests for the ``lazyarr`` command line, run as ``python -m lazyarr`` in a subprocess."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from lazyarr import cli

DEFAULTS = yaml.safe_load((Path(cli.__file__).parent / "config.yaml").read_text())


@pytest.fixture
def env(tmp_path) -> dict[str, str]:
    """The environment without LAZYARR_* settings, with the user file in tmp_path."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("LAZYARR_")}
    clean["LAZYARR_CONFIG"] = str(tmp_path / "lazyarr.yaml")
    return clean


def lazyarr(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "lazyarr", *args],
        env=env,
        cwd=Path(env["LAZYARR_CONFIG"]).parent,  # the demo writes plan.html in the cwd
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_help_lists_the_commands(env):
    out = lazyarr("--help", env=env)
    assert out.returncode == 0, out.stderr
    for command in ("config", "executors", "demo"):
        assert command in out.stdout


def test_version_prints_the_package_version(env):
    import lazyarr as la

    out = lazyarr("--version", env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"lazyarr {la.__version__}"
    assert re.fullmatch(r"\d+\.\d+\.\d+\S*", la.__version__)


def test_a_command_is_required(env):
    out = lazyarr(env=env)
    assert out.returncode == 2
    assert "required" in out.stderr


def test_config_show_prints_the_effective_yaml(env):
    out = lazyarr("config", "show", env=env)
    assert out.returncode == 0, out.stderr
    assert env["LAZYARR_CONFIG"] in out.stdout
    assert yaml.safe_load(out.stdout) == DEFAULTS


def test_config_show_includes_env_vars(env):
    env["LAZYARR_ARRAY__CHUNK_SIZE"] = "128MiB"
    out = lazyarr("config", "show", env=env)
    assert yaml.safe_load(out.stdout)["array"]["chunk-size"] == "128MiB"


def test_config_get(env):
    assert lazyarr("config", "get", "array.chunk-size", env=env).stdout == "64MiB\n"
    assert lazyarr("config", "get", "array.chunk_size", env=env).stdout == "64MiB\n"
    assert lazyarr("config", "get", "memory-limit", env=env).stdout == "null\n"
    assert lazyarr("config", "get", "dask.n-workers", env=env).stdout == "2\n"
    assert (
        yaml.safe_load(lazyarr("config", "get", "optimize", env=env).stdout)
        == (DEFAULTS["optimize"])
    )


def test_config_get_unknown_key_suggests(env):
    out = lazyarr("config", "get", "executr", env=env)
    assert out.returncode == 1
    assert "did you mean 'executor'" in out.stderr
    assert "Traceback" not in out.stderr


def test_config_set_writes_the_user_file(env):
    path = Path(env["LAZYARR_CONFIG"])
    assert lazyarr("config", "set", "dask.n_workers", "4", env=env).returncode == 0
    assert lazyarr("config", "set", "memory-limit", "8GB", env=env).returncode == 0
    assert lazyarr("config", "set", "optimize.passes", "[cse]", env=env).returncode == 0
    assert yaml.safe_load(path.read_text()) == {
        "dask": {"n-workers": 4},
        "memory-limit": "8GB",
        "optimize": {"passes": ["cse"]},
    }
    assert lazyarr("config", "get", "dask.n-workers", env=env).stdout == "4\n"
    env["LAZYARR_DASK__N_WORKERS"] = "6"  # env vars win over the file
    assert lazyarr("config", "get", "dask.n-workers", env=env).stdout == "6\n"


def test_config_set_refuses_bad_values(env):
    out = lazyarr("config", "set", "progress", "sometimes", env=env)
    assert out.returncode == 1
    assert "'progress'" in out.stderr
    assert not Path(env["LAZYARR_CONFIG"]).exists()


def test_main_in_process(capsys):
    assert cli.main(["config", "get", "optimize.enabled"]) == 0
    assert capsys.readouterr().out in ("true\n", "false\n")


def test_executors_lists_numpy(env):
    out = lazyarr("executors", env=env)
    assert out.returncode == 0, out.stderr
    assert "numpy" in out.stdout


@pytest.mark.parametrize("executor", [None, "numpy"])
def test_demo_agrees_with_numpy(env, executor):
    args = ["demo", "--size", "2000"] + (["--executor", executor] if executor else [])
    out = lazyarr(*args, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "same results as NumPy" in out.stdout
