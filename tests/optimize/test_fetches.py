"""The task graph's own memory check for clusters: a task's inputs are fetched whole.

``largest_fetch`` on lowered graphs (no cluster needed), with closed-form answers, and
``api.check_fetches`` refusing a graph one of whose tasks cannot fit a worker thread's
share of the limit.
"""

from __future__ import annotations

import numpy as np
import pytest

import lazyarr as la
from lazyarr import api
from lazyarr.executors.base import Lowering
from lazyarr.optimize.context import PassContext
from lazyarr.optimize.fetches import largest_fetch
from lazyarr.optimize.memory import MemoryLimitError

ON_WORKERS = Lowering(joint=True, generate_in_place=True)


def _graph(y):
    plan = api.make_plan([y._expr], "numpy", ("cse", "simplify", "fuse"))
    return ON_WORKERS.lower(plan, plan.outputs, 1)


def test_a_column_strip_fetches_every_row_strip_whole():
    """Rows (8 strips of 64 x 256 float64: 128 KiB each) to columns of 8: each output block
    reads a piece of every row strip, and a worker fetches the 8 strips whole."""
    x = la.asarray(np.ones((512, 256)), chunks=(64, 256))
    worst = largest_fetch(_graph((x * 2).rechunk((512, 8))))
    assert worst.inputs == 8 * 64 * 256 * 8
    assert worst.output == 512 * 8 * 8


def test_an_elementwise_block_fetches_its_own_blocks_once():
    """``x + x`` reads one block at two positions: fetched once, counted once."""
    x = la.asarray(np.ones((400, 10)), chunks=(100, 10))
    y = la.sin(x) * 3
    worst = largest_fetch(_graph(y + y))
    assert worst.inputs == 100 * 10 * 8 and worst.output == 100 * 10 * 8


def test_a_graph_whose_task_exceeds_a_thread_share_is_refused():
    x = la.asarray(np.ones((512, 256)), chunks=(64, 256))
    graph = _graph((x * 2).rechunk((512, 8)))
    need = largest_fetch(graph).total  # 1 MiB of strips + 32 KiB out
    api.check_fetches(graph, PassContext(memory_limit=2 * need, threads=2))  # fits
    api.check_fetches(graph, PassContext(memory_limit=None, threads=2))  # no limit
    with pytest.raises(MemoryLimitError, match=r"stage rechunk-\w+: one task .* fetches 1\.00 MiB"):
        api.check_fetches(graph, PassContext(memory_limit=2 * need - 2, threads=2))
