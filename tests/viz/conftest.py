"""Fixtures for the viz tests: the hand-made plans of ``sample_plans``."""

from __future__ import annotations

import pytest
from sample_plans import sample_plan

from lazyarr.optimize.plan import Plan


@pytest.fixture
def plan() -> Plan:
    return sample_plan()


@pytest.fixture
def placed_plan() -> Plan:
    return sample_plan(placed=True)
