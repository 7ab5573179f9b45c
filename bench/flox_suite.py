"""flox's own test suite, its Dask-parametrized tests run with lazyarr arrays.

flox tests its Dask path by making Dask arrays (``dask.array.from_array``,
``da.ones``...) and, in its xarray tests, by ``.chunk()``. Here each of those
makes a lazy array instead: the test module's ``dask.array`` is a stand-in whose
array constructors are lazyarr's, and xarray's default chunk manager is
``lazyarr``. flox then meets lazyarr arrays exactly as a user's code hands them
over (flox treats them as Dask collections). Only the tests parametrized for
Dask run (those marked ``requires_dask``); the others never see a chunked array.

flox's tests are not in its wheel: pass a checkout's ``tests`` folder
(``git clone https://github.com/xarray-contrib/flox``, the tag of the installed
version) with ``--tests`` or ``FLOX_TESTS``; without either, the tests of the
installed version's source distribution are fetched from the package index
(``PIP_INDEX_URL``, else PyPI; its sha256 checked) into the temporary directory
once (:func:`flox_tests`). Prints the pass count and the failures grouped by
their error; ``--json`` writes them.

    python bench/flox_suite.py --tests ~/src/flox/tests [-k groupby_reduce] [--json out.json]
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import copy
import hashlib
import io
import json
import os
import re
import shutil
import sys
import tarfile
import tempfile
import types
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dask.array
import numpy as np
import pytest

import lazyarr as la

__all__ = ["DASK_TEST_FILES", "LazyDaskArray", "LazyarrForDask", "flox_tests", "run"]

DASK_TEST_FILES = ("test_core.py", "test_xarray.py")
"""flox's test modules with Dask-parametrized tests (the others never make a Dask array)."""


def _lazy_from_array(x: Any, chunks: Any = "auto", **_: Any) -> la.LazyArray:
    """``dask.array.from_array``: arrays as they are (a sparse one is read densified, block
    by block), anything else through NumPy first."""
    return la.from_array(x if hasattr(x, "shape") else np.asarray(x), chunks=chunks)


def _creator(name: str) -> Any:
    """``dask.array.<name>`` (ones, zeros, ...) made with NumPy, then as a lazy array."""
    make = getattr(np, name)

    def create(*args: Any, chunks: Any = "auto", **kwargs: Any) -> la.LazyArray:
        kwargs.pop("name", None)
        return la.from_array(make(*args, **kwargs), chunks=chunks)

    return create


class LazyDaskArray(types.ModuleType):
    """``dask.array`` whose array constructors make lazy arrays; everything else is Dask's."""

    def __init__(self) -> None:
        super().__init__("dask.array")
        self.from_array = _lazy_from_array
        self.asarray = _lazy_from_array
        for name in ("ones", "zeros", "empty", "full", "arange"):
            setattr(self, name, _creator(name))

    def __getattr__(self, name: str) -> Any:
        return getattr(dask.array, name)


class _LazyDask(types.ModuleType):
    """``dask`` whose ``.array`` is :class:`LazyDaskArray`."""

    def __init__(self, array: LazyDaskArray) -> None:
        super().__init__("dask")
        self.array = array

    def __getattr__(self, name: str) -> Any:
        return getattr(sys.modules["dask"], name)


class LazyarrForDask:
    """pytest plugin: Dask-parametrized tests only, their Dask arrays made by lazyarr."""

    def __init__(self, every: int = 1, lazy: bool = True) -> None:
        self.every = every
        self.lazy = lazy
        self.outcomes: collections.Counter[str] = collections.Counter()
        self.failures: dict[str, list[str]] = collections.defaultdict(list)

    def pytest_collection_modifyitems(self, config: Any, items: list[Any]) -> None:
        keep, drop = [], []
        dasked = 0
        for item in items:
            reasons = [m.kwargs.get("reason", "") for m in item.iter_markers("skipif")]
            if "requires dask" in reasons:
                dasked += 1
                if (dasked - 1) % self.every == 0:  # every n-th: a sample spread over all
                    keep.append(item)
                    continue
            drop.append(item)
        self.outcomes["dask_parametrized"] = dasked
        if drop:
            config.hook.pytest_deselected(items=drop)
        items[:] = keep

    @pytest.fixture(autouse=True)
    def _lazyarr_arrays(self, request: Any, monkeypatch: Any) -> Any:
        import xarray as xr

        if not self.lazy:  # the baseline: flox's tests as they are, on Dask
            yield
            return
        array = LazyDaskArray()
        module = request.module
        for name, value in list(vars(module).items()):
            if value is dask.array:
                monkeypatch.setattr(module, name, array)
            elif value is sys.modules["dask"]:
                monkeypatch.setattr(module, name, _LazyDask(array))
            elif value is dask.array.from_array:
                monkeypatch.setattr(module, name, _lazy_from_array)
        with xr.set_options(chunk_manager="lazyarr"):
            yield

    def pytest_runtest_logreport(self, report: Any) -> None:
        if report.when == "call" or report.outcome != "passed":
            if report.when != "call" and report.outcome == "skipped":
                self.outcomes["skipped"] += 1
                return
            if report.when != "call" and report.outcome == "passed":
                return
            self.outcomes[report.outcome] += 1
            if report.outcome == "failed":
                crash = getattr(report.longrepr, "reprcrash", None)
                message = crash.message if crash is not None else str(report.longrepr)
                test = report.nodeid.rsplit("/", 1)[-1]  # the same id whatever the rootdir
                self.failures[message.splitlines()[0][:160]].append(test)


def run(
    tests: Path, extra: list[str], every: int = 1, lazy: bool = True
) -> tuple[int, LazyarrForDask]:
    """Run flox's tests folder ``tests`` (copied, as flox lays it out) with the plugin,
    every ``every``-th Dask-parametrized test; ``lazy=False``: on Dask (the baseline)."""
    plugin = LazyarrForDask(every, lazy)
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / "tests"
        shutil.copytree(tests, copy, ignore=shutil.ignore_patterns("__pycache__"))
        files = [str(copy / name) for name in DASK_TEST_FILES]
        args = [*files, "-q", "-p", "no:cacheprovider", "-W", "ignore", *extra]
        before = set(sys.modules)
        try:
            with _settings_kept():
                code = pytest.main(args, plugins=[plugin])
        finally:  # flox's test package is imported afresh by the next run
            for name in set(sys.modules) - before:
                if name == "tests" or name.startswith("tests."):
                    del sys.modules[name]
    return int(code), plugin


@contextlib.contextmanager
def _settings_kept() -> Iterator[None]:
    """Put back xarray's options, Dask's config and NumPy's error handling as they were:
    flox's test_xarray.py sets ``use_flox=False`` (and a synchronous Dask scheduler) for
    the whole process when it is imported, which changed later tests' references."""
    import xarray as xr
    from xarray.core.options import OPTIONS

    options, config, errors = dict(OPTIONS), copy.deepcopy(dask.config.config), np.geterr()
    try:
        yield
    finally:
        changed = {k: v for k, v in options.items() if OPTIONS.get(k) != v}
        if changed:
            xr.set_options(**changed)
        dask.config.config.clear()
        dask.config.config.update(config)
        np.seterr(**errors)


def flox_tests(given: str | None = None) -> Path:
    """flox's tests folder: ``given`` (or ``FLOX_TESTS``) where it holds them, else those
    of the installed flox's source distribution, fetched from the package index once and
    kept under the temporary directory. ``OSError`` when it cannot be had."""
    given = given or os.environ.get("FLOX_TESTS")
    if given:
        if not (Path(given) / "test_core.py").exists():
            raise OSError(f"{given} is not flox's tests folder (no test_core.py)")
        return Path(given)
    import flox

    version = flox.__version__
    folder = Path(tempfile.gettempdir()) / f"lazyarr-flox-tests-{version}"
    if (folder / "tests" / "test_core.py").exists():
        return folder / "tests"
    index = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple").rstrip("/")
    name = f"flox-{version}.tar.gz"
    with urllib.request.urlopen(f"{index}/flox/", timeout=30) as page:
        links = re.findall(
            rf'href="([^"]*/{re.escape(name)}#sha256=([0-9a-f]+))"', page.read().decode()
        )
    if not links:
        raise OSError(f"{index}/flox/ lists no {name}")
    url, digest = links[0]
    with urllib.request.urlopen(urllib.parse.urljoin(f"{index}/flox/", url), timeout=120) as f:
        data = f.read()
    if hashlib.sha256(data).hexdigest() != digest:
        raise OSError(f"{name} from {index} does not match its sha256")
    staging = Path(tempfile.mkdtemp(prefix="lazyarr-flox-", dir=folder.parent))
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        members = [m for m in archive.getmembers() if m.name.startswith(f"flox-{version}/tests/")]
        archive.extractall(staging, members=members, filter="data")
    (staging / f"flox-{version}" / "tests").rename(staging / "tests")
    try:
        staging.rename(folder)  # whole or not at all; another process may have won
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
    return folder / "tests"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", help="flox's tests/ (default: FLOX_TESTS, else fetched)")
    parser.add_argument("--json", help="write the counts and grouped failures here")
    parser.add_argument("-k", help="pytest -k expression (a subset)")
    parser.add_argument(
        "--every", type=int, default=1, help="run every n-th Dask test (a spread-out sample)"
    )
    parser.add_argument(
        "--dask", action="store_true", help="the baseline: the same tests on Dask arrays"
    )
    args = parser.parse_args()
    try:
        tests = flox_tests(args.tests)
    except OSError as e:
        sys.exit(f"flox's tests: {e} (give a checkout's tests/ with --tests or FLOX_TESTS)")
    extra = ["-k", args.k] if args.k else []
    _, plugin = run(tests, extra, args.every, lazy=not args.dask)
    counts = dict(plugin.outcomes)
    ran = counts.get("passed", 0) + counts.get("failed", 0) + counts.get("error", 0)
    share = counts.get("passed", 0) / ran if ran else 0.0
    system = "dask" if args.dask else "lazyarr"
    print(f"\nflox suite on {system}: {counts}, {share:.1%} of the tests that ran passed")
    for message, ids in sorted(plugin.failures.items(), key=lambda kv: -len(kv[1])):
        print(f"  {len(ids):4d}  {message}\n        e.g. {ids[0]}")
    if args.json:
        report = {"counts": counts, "passed_share": share, "failures": plugin.failures}
        Path(args.json).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
