"""Test isolation: no user config file or LAZYARR_* variable reaches the tests."""

from __future__ import annotations

import os

for _k in [k for k in os.environ if k.startswith("LAZYARR_")]:
    del os.environ[_k]
os.environ["LAZYARR_CONFIG"] = os.devnull

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
