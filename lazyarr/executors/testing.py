"""Executors for tests: one that refuses to compute, proving laziness."""

from __future__ import annotations

from collections.abc import Sequence

from lazyarr.optimize.plan import Plan

__all__ = ["ComputeRefused", "RaiseExecutor"]


class ComputeRefused(RuntimeError):
    """Raised when something tried to compute under the ``raise`` executor."""


class RaiseExecutor:
    """Raises on any compute: building expressions must never run anything."""

    name = "raise"

    def execute(self, plan: Plan, outputs: Sequence[str], progress: object = None) -> list:
        raise ComputeRefused(
            f"the 'raise' executor refuses to compute {len(plan.stages)} stage(s) "
            f"({', '.join(list(plan.stages)[:3])}...)"
        )

    persist = execute
