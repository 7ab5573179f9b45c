"""The typed context every pass gets: where the plan will run and the settings passes follow."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from lazyarr.graph.expr import Expr
from lazyarr.optimize.timing import Costs

__all__ = ["PassContext"]


@dataclasses.dataclass(frozen=True)
class PassContext:
    """Everything passes may know: where the plan will run and the settings they follow.

    The top level (``api``) fills it from the executor and the config; no
    pass reads settings itself. Frozen and hashable: it is part of the plan
    cache's key, so a plan made under other settings is never reused.
    """

    executor: str = "numpy"
    n_workers: int = 1
    workers: tuple[str, ...] = ()
    """Worker addresses, when the executor has workers (index = worker number)."""
    hosts: tuple[str, ...] = ()
    """The host of each worker (same index): same-host copies cost less, and where workers
    share hosts the placement keeps bytes on their host first (``dask.host-groups``)."""
    memory_limit: int | None = None
    """Bytes one process (numba, numpy) or worker (dask) may hold (``memory-limit``; on a
    cluster, by default, the workers' own limit)."""
    threads: int = 1
    """Tasks that run at once in one process or worker (numba threads, dask worker threads)."""
    joint: bool = False
    """The executor computes sibling sets as joint tasks (its ``Traits.lowering``): siblings
    read a shared input once, as one reader (the memory pass and estimate count them so)."""
    blocks_per_worker: int = 1
    """``placement.blocks-per-worker``: blocks the reblock pass aims at per worker."""
    reblock_min_bytes: int = 16 << 20
    """``placement.reblock-min-bytes``: generated sources smaller than this keep their blocks."""
    chunk_size: int = 128 << 20
    """``array.chunk-size``: no block the reblock pass chooses is bigger."""
    min_block_bytes: int = 0
    """``array.min-chunk-size``: the reblock pass merges smaller blocks of generated and
    in-memory sources (0: it keeps them)."""
    check: bool = False
    """Run the invariant checker after every pass."""
    costs: Costs | None = dataclasses.field(default=None, compare=False)
    """The machine's measured speeds (the executor's probe; None: the cost model's
    constants). Not part of the plan cache's key: they drift a little run to run, and a plan
    made under slightly other speeds is as good."""
    supports: Callable[[Expr], bool] | None = None
    """Whether the executor's kernels compile an op (None: all ops run alike). The ``fuse``
    pass keeps ops it compiles and ops it cannot out of one group: such a group would run
    entirely on the slower NumPy kernels."""
