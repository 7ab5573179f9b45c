"""Load-aware placement: a simulated cluster, block layouts and the greedy search.

Pure Python, no cluster needed (after NumS's LSHS scheduler, arXiv:2206.14276):

* :mod:`.clustersim`: :class:`ClusterSim`, per-worker memory / network
  in / network out in bytes and the replicas of every block;
* :mod:`.layout`: block-cyclic owners on a worker grid, contraction
  alignment, NumS's block-shape rule;
* :mod:`.planner`: the search, and :func:`combine_schedule`, which the
  executors call to run a tree stage's combine steps as planned.

The passes ``layout`` and ``place`` (``optimize/passes``) drive these.
"""

from lazyarr.optimize.placement.clustersim import ClusterSim, SimOp, host_ids
from lazyarr.optimize.placement.layout import Layout, default_layout, plan_layouts, suggest_chunks
from lazyarr.optimize.placement.planner import Planner, StagePlacement, combine_schedule

__all__ = [
    "ClusterSim",
    "Layout",
    "Planner",
    "SimOp",
    "StagePlacement",
    "combine_schedule",
    "default_layout",
    "host_ids",
    "plan_layouts",
    "suggest_chunks",
]
