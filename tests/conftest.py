"""Test isolation: no user config file or LAZYARR_* variable reaches the tests."""

from __future__ import annotations

import os

for _k in [k for k in os.environ if k.startswith("LAZYARR_")]:
    del os.environ[_k]
os.environ["LAZYARR_CONFIG"] = os.devnull
# The differential suite runs on tiny arrays: compile them anyway, so the
# generated kernels are what the tests check (the default skips tiny stages).
os.environ["LAZYARR_NUMBA__COMPILE_THRESHOLD"] = "0"

import pytest  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

settings.register_profile(
    "ci", max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", max_examples=20, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(autouse=True)
def _check_plans():
    """Every plan built in a test goes through the invariant checker."""
    from lazyarr import config

    with config.set({"optimize.check": True}):
        yield


@pytest.fixture
def reblock_any_size():
    """The reblock pass re-blocks generated arrays of any size (tests use small ones)."""
    from lazyarr import config

    with config.set({"placement.reblock-min-bytes": 0}):
        yield


@pytest.fixture(autouse=True, scope="session")
def _numba_cache_dir(tmp_path_factory):
    """Compiled kernels go to one directory per test run (shared by xdist workers), not ~/.cache."""
    from lazyarr import config

    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    cache = root / "lazyarr-numba-cache"
    cache.mkdir(exist_ok=True)
    os.environ["LAZYARR_NUMBA__CACHE_DIR"] = str(cache)
    config.refresh()
    yield


@pytest.fixture(autouse=True)
def _blocks_as_written():
    """Tests run the blocks they write (tiny, uneven: the edge cases); the merging of tiny
    blocks (``array.min-chunk-size``) has its own tests that switch it back on."""
    from lazyarr import config

    with config.set({"array.min-chunk-size": 0}):
        yield


@pytest.fixture(autouse=True)
def _parts_as_written(monkeypatch):
    """Contractions of tiny blocks run one partial product per contracted block (the
    split and its trees are what tests check); merging small parts has its own tests."""
    from lazyarr.graph import blockrules

    monkeypatch.setattr(blockrules, "PART_MIN_BYTES", 0)


@pytest.fixture
def parts_merged(monkeypatch):
    """Set how many input bytes a partial product reads at least (returns the setter)."""
    from lazyarr import api
    from lazyarr.graph import blockrules

    def merge_up_to(nbytes: int) -> None:
        monkeypatch.setattr(blockrules, "PART_MIN_BYTES", nbytes)
        api.clear_plan_cache()

    yield merge_up_to
    api.clear_plan_cache()


@pytest.fixture(scope="module")
def dask_ex():
    """The ``dask`` executor on a LocalCluster (2 processes x 1 thread), one per module, closed."""
    from lazyarr import config
    from lazyarr.executors import registry

    ex = registry.get("dask")
    settings = {"dask.n-workers": 2, "dask.threads-per-worker": 1, "dask.address": None}
    with config.set(settings):
        ex.client()  # start the cluster once for the module
        try:
            yield ex
        finally:
            ex.close()


@pytest.fixture(autouse=True)
def _every_fallback_seen():
    """The numba executor warns once per reason and process; each test sees its own
    fallbacks (the test configuration makes ``FallbackWarning`` an error)."""
    from lazyarr.kernels import numba_set

    numba_set._WARNED.clear()
    yield
