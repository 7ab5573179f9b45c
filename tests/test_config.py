"""Tests for lazyarr.config: schema sync, precedence, validation, user file, digest."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from pathlib import Path

import platformdirs
import pytest
import yaml

from lazyarr import config
from lazyarr.config import SCOPED

PACKAGE = Path(config.__file__).parent.parent  # lazyarr/ (config is a package in it)
CONFIG = Path(config.__file__).parent


def _leaves(tree: dict, prefix: str = "") -> dict:
    """{"a": {"b": 1}} -> {"a.b": 1}."""
    out = {}
    for key, value in tree.items():
        if isinstance(value, dict):
            out.update(_leaves(value, f"{prefix}{key}."))
        else:
            out[prefix + key] = value
    return out


def _schema_leaves(node: dict, prefix: str = "") -> dict:
    out = {}
    for key, spec in node["properties"].items():
        if spec["type"] == "object":
            out.update(_schema_leaves(spec, f"{prefix}{key}."))
        else:
            out[prefix + key] = spec
    return out


DEFAULTS = yaml.safe_load((PACKAGE / "config.yaml").read_text())
SCHEMA = yaml.safe_load((PACKAGE / "config-schema.yaml").read_text())


# the user file of most tests is not written yet: the warning that it is missing is tested below
pytestmark = pytest.mark.filterwarnings(
    "ignore:lazyarr config file .* does not exist:lazyarr.config.ConfigWarning"
)


@pytest.fixture(autouse=True)
def user_file(monkeypatch, tmp_path):
    """No LAZYARR_* variables, the user file in tmp_path, none of the conftest's scoped
    settings; the real state is restored after."""
    for name in list(os.environ):
        if name.startswith("LAZYARR_"):
            monkeypatch.delenv(name)
    path = tmp_path / "lazyarr.yaml"
    monkeypatch.setenv("LAZYARR_CONFIG", str(path))
    config.refresh()
    token = SCOPED.set(None)
    yield path
    SCOPED.reset(token)
    monkeypatch.undo()
    config.refresh()


def _clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LAZYARR_")}
    env.update(extra)
    return env


# ---------------------------------------------------------------- the two YAML files


def test_defaults_and_schema_have_the_same_keys():
    assert sorted(_leaves(DEFAULTS)) == sorted(_schema_leaves(SCHEMA))


def test_every_schema_key_has_type_and_description():
    for key, spec in _schema_leaves(SCHEMA).items():
        assert spec.get("type"), key
        assert spec.get("description", "").strip(), key


def test_defaults_pass_their_own_schema():
    for key, value in _leaves(DEFAULTS).items():
        assert config.resolve(key, value) == value, key


def test_effective_config_is_the_defaults_without_file_or_env():
    assert yaml.safe_load(config.show()) == DEFAULTS
    assert config.get("executor") == DEFAULTS["executor"]
    assert config.get("optimize.passes") == [
        "pushdown",
        "reblock",
        "cse",
        "simplify",
        "fuse",
        "layout",
        "place",
        "memory",
    ]


# ---------------------------------------------------------------- get / set


def test_get_nested_keys_sections_and_both_spellings():
    assert config.get("array.chunk-size") == "64MiB"
    assert config.get("array.chunk_size") == "64MiB"
    assert config.get("dask")["n-workers"] == 2
    assert config.get("memory-limit") is None
    assert config.get("memory_limit") is None


def test_get_returns_a_copy():
    config.get("optimize.passes").append("fuse")
    config.get("dask")["n-workers"] = 99
    assert config.get("optimize.passes") == [
        "pushdown",
        "reblock",
        "cse",
        "simplify",
        "fuse",
        "layout",
        "place",
        "memory",
    ]
    assert config.get("dask.n-workers") == 2


def test_set_as_context_manager_restores_values():
    with config.set(executor="dask", array__chunk_size="1MiB"):
        assert config.get("executor") == "dask"
        assert config.get("array.chunk-size") == "1MiB"
        with config.set({"array.chunk-size": "2MiB"}):
            assert config.get("array.chunk-size") == "2MiB"
        assert config.get("array.chunk-size") == "1MiB"
    assert config.get("executor") == DEFAULTS["executor"]
    assert config.get("array.chunk-size") == "64MiB"


def test_set_as_plain_call_persists_until_refresh():
    config.set({"array.chunk_size": "1MiB"})
    assert config.get("array.chunk-size") == "1MiB"
    config.refresh()
    assert config.get("array.chunk-size") == "64MiB"


def test_set_a_section_with_a_mapping_sets_only_its_keys():
    with config.set(dask={"n_workers": 4}):
        assert config.get("dask.n-workers") == 4
        assert config.get("dask.threads-per-worker") == 1


def test_set_a_section_to_a_scalar_is_refused():
    with pytest.raises(ValueError, match="section"):
        config.set(dask=4)


@pytest.mark.parametrize("key", ["executr", "array.chunk-sise", "chunk_size"])
def test_unknown_keys_raise_keyerror_with_a_suggestion(key):
    with pytest.raises(KeyError, match="did you mean"):
        config.get(key)
    with pytest.raises(KeyError, match="did you mean"):
        config.set({key: 1})


def test_unknown_key_message_names_the_close_key():
    with pytest.raises(config.ConfigKeyError) as info:
        config.set(executr="dask")
    assert "'executor'" in str(info.value)
    with pytest.raises(KeyError, match=r"'array\.chunk-size'"):
        config.get("chunk-size")


def test_get_unknown_key_with_default_returns_the_default():
    assert config.get("myplugin.option", default=3) == 3
    assert config.get("myplugin.option", None) is None


def test_a_refused_set_changes_nothing():
    with pytest.raises(ValueError):
        config.set(executor="dask", progress="sometimes")
    assert config.get("executor") == DEFAULTS["executor"]


# ---------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("executor", 3),
        ("progress", "sometimes"),
        ("progress", 1),
        ("array.chunk-size", "12 parsecs"),
        ("array.chunk-size", -5),
        ("array.chunk-size", True),
        ("optimize.enabled", "yes please"),
        ("optimize.passes", [1, 2]),
        ("optimize.passes", "cse"),
        ("memory-limit", "lots"),
        ("plan-cache.size", -1),
        ("numba.threads", 0),
        ("dask.n-workers", 0),
        ("dask.placement", "off"),
        ("dask.timeout", "soon"),
    ],
)
def test_bad_values_raise_valueerror_naming_the_key(key, value):
    with pytest.raises(ValueError, match=f"'{key}'"):
        config.set({key: value})


@pytest.mark.parametrize(
    ("key", "given", "stored"),
    [
        ("progress", "TRUE", True),
        ("progress", "false", False),
        ("progress", False, False),
        ("progress", "Auto", "auto"),
        ("array.chunk-size", 1024, 1024),
        ("array.chunk-size", "1.5 GiB", "1.5 GiB"),
        ("memory-limit", "8GB", "8GB"),
        ("memory-limit", "null", None),
        ("numba.threads", "4", 4),
        ("optimize.passes", ("cse",), ["cse"]),
        ("optimize.passes", "[cse, fuse]", ["cse", "fuse"]),
        ("dask.timeout", 2.5, 2.5),
        ("dask.placement", "SCHEDULER", "scheduler"),
    ],
)
def test_good_values_are_stored_in_canonical_form(key, given, stored):
    with config.set({key: given}):
        assert config.get(key) == stored
        assert type(config.get(key)) is type(stored)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("64MiB", 64 * 2**20),
        ("4GB", 4 * 10**9),
        ("4gb", 4 * 10**9),
        ("1.5 kib", 1536),
        ("100", 100),
        ("100B", 100),
        ("2k", 2000),
        ("1e3", 1000),
        (4096, 4096),
        (1.5e3, 1500),
    ],
)
def test_parse_bytes(text, expected):
    assert config.parse_bytes(text) == expected


@pytest.mark.parametrize("text", ["", "MiB", "-1MB", "1 XB", "1MB2", "nan", True, None, [1]])
def test_parse_bytes_refuses(text):
    with pytest.raises(ValueError):
        config.parse_bytes(text)


@pytest.mark.parametrize(
    ("text", "expected"), [("10s", 10.0), ("500ms", 0.5), ("2m", 120.0), ("1h", 3600.0), (3, 3.0)]
)
def test_parse_duration(text, expected):
    assert config.parse_duration(text) == expected


@pytest.mark.parametrize("text", ["", "s", "-1s", "nan", "inf", "1 fortnight", True, None, -2])
def test_parse_duration_refuses(text):
    """Dask's parser reads "s" as one second and raises KeyError for an unknown unit:
    settings need a number, and every refusal is a ValueError."""
    with pytest.raises(ValueError, match="a duration such as"):
        config.parse_duration(text)


# ---------------------------------------------------------------- sources and precedence


def test_precedence_defaults_file_env_set_keyword(user_file, monkeypatch):
    assert config.get("executor") == DEFAULTS["executor"]  # default

    user_file.write_text("executor: numpy\narray:\n  chunk-size: 1MiB\n")
    config.refresh()
    assert config.get("executor") == "numpy"

    monkeypatch.setenv("LAZYARR_EXECUTOR", "dask")
    config.refresh()
    assert config.get("executor") == "dask"
    assert config.get("array.chunk-size") == "1MiB"  # layers merge key by key

    with config.set(executor="raise"):
        assert config.get("executor") == "raise"
        assert config.resolve("executor", None) == "raise"
        assert config.resolve("executor", "numba") == "numba"
    assert config.get("executor") == "dask"


def test_env_vars_nest_with_double_underscore(monkeypatch):
    monkeypatch.setenv("LAZYARR_ARRAY__CHUNK_SIZE", "128MiB")
    monkeypatch.setenv("LAZYARR_DASK__N_WORKERS", "3")
    monkeypatch.setenv("LAZYARR_PROGRESS", "false")
    monkeypatch.setenv("LAZYARR_MEMORY_LIMIT", "null")
    monkeypatch.setenv("LAZYARR_OPTIMIZE__PASSES", "[cse]")
    config.refresh()
    assert config.get("array.chunk-size") == "128MiB"
    assert config.get("dask.n-workers") == 3
    assert config.get("progress") is False
    assert config.get("memory-limit") is None
    assert config.get("optimize.passes") == ["cse"]


def test_env_and_file_are_read_at_import(tmp_path):
    path = tmp_path / "settings.yaml"
    path.write_text("executor: numba\ndask:\n  n_workers: 3\narray:\n  chunk-size: 1MiB\n")
    env = _clean_env(
        LAZYARR_CONFIG=str(path), LAZYARR_EXECUTOR="dask", LAZYARR_ARRAY__CHUNK_SIZE="128MiB"
    )
    code = (
        "import json; from lazyarr import config; "
        "print(json.dumps([config.get(k) for k in "
        "('executor', 'array.chunk-size', 'dask.n-workers', 'progress')]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert json.loads(out.stdout) == ["dask", "128MiB", 3, "auto"]


def test_bad_env_value_is_reported_then_raised_when_read(monkeypatch):
    """A bad value does not break ``import lazyarr``: it is reported when read from the
    environment, and reading that key (as a compute would) raises the same message."""
    monkeypatch.setenv("LAZYARR_PROGRESS", "sometimes")
    with pytest.warns(config.ConfigWarning, match=r"LAZYARR_.*'progress'"):
        config.refresh()
    with pytest.raises(ValueError, match=r"LAZYARR_.*'progress'"):
        config.get("progress")
    assert config.get("executor") == DEFAULTS["executor"]  # the other keys work
    assert "progress" in config.errors()
    with config.set(progress=False):  # a value given in Python replaces the bad one
        assert config.get("progress") is False


def test_bad_file_value_names_the_file(user_file):
    user_file.write_text("dask:\n  n-workers: none at all\n")
    with pytest.warns(config.ConfigWarning, match=f"{user_file.name}.*'dask.n-workers'"):
        config.refresh()
    with pytest.raises(ValueError, match=f"{user_file.name}.*'dask.n-workers'"):
        config.get("dask.n-workers")
    with pytest.raises(ValueError, match="n-workers"):
        config.get("dask")  # the section holds the bad key
    config.write_user("dask.n-workers", 3)  # `lazyarr config set` can fix it
    config.refresh()
    assert config.get("dask.n-workers") == 3 and not config.errors()


def test_malformed_file_names_the_file(user_file):
    user_file.write_text("executor: [unclosed\n")
    with pytest.warns(config.ConfigWarning, match=user_file.name):
        config.refresh()
    with pytest.raises(ValueError, match=user_file.name):
        config.get("executor")
    user_file.write_text("- a list\n")
    with pytest.warns(config.ConfigWarning, match="mapping"):
        config.refresh()


def test_a_file_that_is_not_utf8_is_named(user_file):
    user_file.write_bytes(b"executor: \xff\xfenumpy\n")
    with pytest.warns(config.ConfigWarning, match=f"{user_file.name} is not UTF-8"):
        config.refresh()
    with pytest.raises(ValueError, match="not UTF-8"):
        config.get("executor")


def test_a_config_path_whose_directory_is_missing_is_an_error(monkeypatch, tmp_path):
    monkeypatch.setenv("LAZYARR_CONFIG", str(tmp_path / "no-such-dir" / "lazyarr.yaml"))
    with pytest.warns(config.ConfigWarning, match="does not exist"):
        config.refresh()
    with pytest.raises(ValueError, match="does not exist"):
        config.get("executor")
    monkeypatch.setenv("LAZYARR_CONFIG", str(tmp_path / "new.yaml"))  # to be created: fine
    config.refresh()
    assert config.get("executor") == DEFAULTS["executor"]


@pytest.mark.parametrize("size", [0, "0B", "512B", 100])
def test_a_chunk_size_too_small_to_be_useful_is_refused(monkeypatch, size):
    """Before: ``array.chunk-size: 0`` made every auto-chunked array one-element blocks."""
    with pytest.raises(ValueError, match=r"'array.chunk-size': at least 1KiB"):
        config.set({"array.chunk-size": size})
    monkeypatch.setenv("LAZYARR_ARRAY__CHUNK_SIZE", str(size))
    with pytest.warns(config.ConfigWarning, match="LAZYARR_"):
        config.refresh()
    with pytest.raises(ValueError, match="at least 1KiB"):
        config.get("array.chunk-size")
    config.set({"array.chunk-size": "1KiB"})
    assert config.parse_bytes(config.get("array.chunk-size")) == 1024


def test_import_and_the_cli_survive_a_bad_setting(tmp_path):
    path = tmp_path / "lazyarr.yaml"
    path.write_text("dask:\n  n-workers: lots\n")
    env = _clean_env(LAZYARR_CONFIG=str(path))
    run = functools.partial(subprocess.run, capture_output=True, text=True, env=env, timeout=120)
    imported = run([sys.executable, "-c", "import lazyarr; print(lazyarr.ones(3).sum().compute())"])
    assert imported.returncode == 0, imported.stderr
    assert imported.stdout.strip() == "3.0"
    assert "'dask.n-workers'" in imported.stderr and str(path) in imported.stderr
    fixed = run([sys.executable, "-m", "lazyarr", "config", "set", "dask.n-workers", "3"])
    assert fixed.returncode == 0, fixed.stderr
    after = run([sys.executable, "-m", "lazyarr", "config", "get", "dask.n-workers"])
    assert after.stdout.strip() == "3" and "n-workers" not in after.stderr


def test_unknown_key_in_file_warns_and_is_ignored(user_file):
    user_file.write_text("executer: dask\n")
    with pytest.warns(UserWarning, match="did you mean 'executor'"):
        config.refresh()
    assert config.get("executor") == DEFAULTS["executor"]


def test_empty_file_and_empty_section_are_fine(user_file):
    user_file.write_text("")
    config.refresh()
    user_file.write_text("dask:\n")
    config.refresh()
    assert config.get("dask.n-workers") == 2


def test_user_path_from_env_file_or_directory(monkeypatch, tmp_path):
    monkeypatch.setenv("LAZYARR_CONFIG", str(tmp_path / "a.yaml"))
    assert config.user_path() == tmp_path / "a.yaml"
    monkeypatch.setenv("LAZYARR_CONFIG", str(tmp_path))
    assert config.user_path() == tmp_path / "lazyarr.yaml"
    monkeypatch.delenv("LAZYARR_CONFIG")
    expected = Path(platformdirs.user_config_dir("lazyarr")) / "lazyarr.yaml"
    assert config.user_path() == expected


# ---------------------------------------------------------------- write_user


def test_write_user_creates_and_updates_the_file(tmp_path, monkeypatch):
    nested = tmp_path / "new" / "dir" / "lazyarr.yaml"
    monkeypatch.setenv("LAZYARR_CONFIG", str(nested))
    assert config.write_user("dask.n_workers", 4) == nested
    assert config.write_user("executor", "dask") == nested
    assert yaml.safe_load(nested.read_text()) == {"dask": {"n-workers": 4}, "executor": "dask"}
    assert config.get("executor") == DEFAULTS["executor"]  # the process sees it after refresh()
    config.refresh()
    assert config.get("executor") == "dask"
    assert config.get("dask.n-workers") == 4


def test_write_user_keeps_the_spelling_already_in_the_file(user_file):
    user_file.write_text("dask:\n  n_workers: 3\n  address: tcp://here:8786\n")
    config.write_user("dask.n-workers", 5)
    assert yaml.safe_load(user_file.read_text()) == {
        "dask": {"n_workers": 5, "address": "tcp://here:8786"}
    }


def test_write_user_refuses_unknown_keys_and_bad_values(user_file):
    with pytest.raises(KeyError, match="did you mean"):
        config.write_user("executr", "dask")
    with pytest.raises(ValueError, match=r"'dask\.n-workers'"):
        config.write_user("dask.n-workers", "many")
    assert not user_file.exists()


# ---------------------------------------------------------------- resolve, show, digest


def test_resolve_keyword_wins_and_is_checked():
    assert config.resolve("executor", None) == DEFAULTS["executor"]
    assert config.resolve("executor", "dask") == "dask"
    assert config.resolve("progress", "true") is True
    with pytest.raises(ValueError):
        config.resolve("progress", "sometimes")
    with pytest.raises(KeyError, match="did you mean"):
        config.resolve("executr", "dask")


def test_show_is_yaml_of_the_effective_values():
    with config.set(numba__fastmath=True):
        shown = yaml.safe_load(config.show())
    assert shown["numba"]["fastmath"] is True
    assert shown["executor"] == DEFAULTS["executor"]


def test_digest_is_stable_and_follows_the_values():
    keys = ["numba.fastmath", "array.chunk-size"]
    first = config.digest(keys)
    assert config.digest(reversed(keys)) == first
    assert config.digest(["numba.fastmath", "array.chunk_size"]) == first
    with config.set(numba__fastmath=True):
        assert config.digest(keys) != first
    with config.set(array__chunk_size=64 * 2**20):  # same size, other spelling
        assert config.digest(keys) == first
    assert config.digest("numba.fastmath") == config.digest(["numba.fastmath"])
    with pytest.raises(KeyError):
        config.digest(["numba.fastmth"])


def test_digest_is_the_same_in_another_process():
    code = "from lazyarr import config; print(config.digest(['numba.fastmath', 'executor']))"
    env = _clean_env(LAZYARR_CONFIG=os.devnull)
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == config.digest(["numba.fastmath", "executor"])


# ---------------------------------------------------------------- a leaf module


def test_config_module_imports_nothing_of_lazyarr_nor_heavy_libraries():
    """dask.utils (the unit parsers) is allowed: it loads neither NumPy nor dask.array."""
    code = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('cfg', {str(CONFIG / '__init__.py')!r},\n"
        f"    submodule_search_locations=[{str(CONFIG)!r}])\n"
        "module = sys.modules['cfg'] = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(module)\n"
        "heavy = {'lazyarr', 'numpy', 'dask.array', 'distributed', 'numba', 'networkx'}\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy or m in heavy))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=_clean_env(), capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


def test_only_config_reads_the_environment():
    readers = [
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*.py")
        if CONFIG not in path.parents
        and any(s in path.read_text() for s in ("os.environ", "os.getenv", "getenv("))
    ]
    assert readers == []
