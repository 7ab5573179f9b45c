"""The numbers every plan picture shows, computed once from a Plan.

Bytes, estimated flops, block grids, the estimated peak memory of one block
and where blocks were placed, per stage; what a run measured, normalized
from the executor's statistics. Renderers (DOT, SVG, HTML, text) only
format these facts, so they all agree. Pure: no executor, no config.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np
from dask.utils import format_bytes

from lazyarr.graph.chunks import Grid
from lazyarr.graph.expr import Expr
from lazyarr.optimize.cost import contraction_flops, expr_flops
from lazyarr.optimize.memory import block_peak_bytes, largest_block, region_size
from lazyarr.optimize.plan import Plan, Stage

__all__ = [
    "Measured",
    "StageFacts",
    "block_nbytes",
    "edges",
    "fmt_bytes",
    "fmt_count",
    "fmt_seconds",
    "measured_from",
    "plan_facts",
    "stage_facts",
]


def fmt_bytes(n: float | None) -> str:
    """``1234567`` -> ``"1.18 MiB"`` (dask's binary units, as every message of lazyarr);
    ``"-"`` for None."""
    return "-" if n is None else format_bytes(int(n))


def fmt_count(n: float | None) -> str:
    """``1.5e6`` -> ``"1.5 M"``: flops and element counts."""
    if n is None:
        return "-"
    for unit, scale in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(n) >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n:.0f}"


def fmt_seconds(s: float | None) -> str:
    if s is None:
        return "-"
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.1f} ms"
    return f"{s * 1e6:.0f} us"


# ------------------------------------------------------------------ per stage


@dataclasses.dataclass(frozen=True)
class StageFacts:
    """What a picture says about one stage."""

    name: str
    kind: str
    """Root op kind: ``source``, ``map`` or ``reduce``."""
    style: str
    """Colour class: the kind, or ``fused`` for a stage of several ops."""
    ops: tuple[str, ...]
    """Labels of the ops computed, in order (one unless fused)."""
    shape: tuple[int, ...]
    dtype: str
    chunksize: tuple[int, ...]
    numblocks: tuple[int, ...]
    nblocks: int
    out_bytes: int
    in_bytes: int
    """Bytes of the arrays read from other stages (each counted once)."""
    block_bytes: int
    """Bytes of the largest output block."""
    peak_bytes: int
    """Estimated memory held while computing the largest block."""
    flops: float
    over_limit: bool
    workers: dict[int, int] | None
    """Blocks per worker index, when the placement pass assigned them."""
    worker_bytes: dict[int, int] | None
    """Output bytes each worker produces and holds (block sizes summed per worker)."""
    moved_bytes: dict[int, int] | None
    """Predicted bytes copied into each worker for this stage (``est_bytes`` summed)."""
    output: bool
    label: str = ""
    """What the user called the arrays of this stage (``Plan.labels``), or ``""``."""

    @property
    def title(self) -> str:
        """``"z (sqrt-1a2b3c4d5e)"`` for a stage the user named, else the stage name."""
        return f"{self.label} ({self.name})" if self.label else self.name

    @property
    def grid(self) -> str:
        """``"4 (2x2)"``: block count and grid."""
        return f"{self.nblocks} ({'x'.join(map(str, self.numblocks)) or '1'})"


def _flops(e: Expr) -> float:
    """Estimated flops of one op: contractions count 2 per multiply-add."""
    matrix = contraction_flops(e)
    if matrix:
        return matrix
    if e.op.kind == "source":
        return 0.0
    return float(expr_flops(e))


def block_nbytes(expr: Expr) -> np.ndarray:
    """Bytes of every block of ``expr``, shaped like its block grid."""
    return Grid(expr.chunks).block_sizes() * expr.dtype.itemsize


def _per_worker(stage: Stage) -> tuple[dict[int, int], dict[int, int], dict[int, int] | None]:
    """Blocks, output bytes and predicted bytes moved in, per worker of a placed stage."""
    w = np.asarray(stage.worker).ravel()
    ids, counts = np.unique(w, return_counts=True)
    blocks = {int(i): int(c) for i, c in zip(ids, counts)}
    sizes = block_nbytes(stage.expr).ravel()
    held = {int(i): int(sizes[w == i].sum()) for i in ids}
    if stage.est_bytes is None:
        return blocks, held, None
    b = np.asarray(stage.est_bytes, dtype=np.int64).ravel()
    return blocks, held, {int(i): int(b[w == i].sum()) for i in ids}


def stage_facts(
    stage: Stage, memory_limit: int | None = None, output: bool = False, label: str = ""
) -> StageFacts:
    """The facts of one stage; ``over_limit`` when its peak exceeds ``memory_limit``."""
    expr = stage.expr
    peak = stage.notes.get("est_peak_bytes")
    peak = int(peak) if isinstance(peak, (int, float)) else block_peak_bytes(stage)
    _, out = largest_block(expr)
    workers, worker_bytes, moved = (
        _per_worker(stage) if stage.worker is not None else (None, None, None)
    )
    seen: dict[str, Expr] = {e.key: e for e in stage.input_exprs}
    return StageFacts(
        name=stage.name,
        kind=stage.kind,
        style="fused" if stage.fused else stage.kind,
        ops=tuple(m.op.label() for m in stage.members),
        shape=expr.shape,
        dtype=str(expr.dtype),
        chunksize=tuple(max(c) if c else 0 for c in expr.chunks),
        numblocks=expr.numblocks,
        nblocks=stage.nblocks,
        out_bytes=expr.nbytes,
        in_bytes=sum(e.nbytes for e in seen.values()),
        block_bytes=region_size(out) * expr.dtype.itemsize,
        peak_bytes=peak,
        flops=sum(_flops(m) for m in stage.members),
        over_limit=memory_limit is not None and peak > memory_limit,
        workers=workers,
        worker_bytes=worker_bytes,
        moved_bytes=moved,
        output=output,
        label=label,
    )


def plan_facts(plan: Plan, memory_limit: int | None = None) -> dict[str, StageFacts]:
    """Facts of every stage, in plan order."""
    outs = set(plan.outputs)
    return {
        n: stage_facts(s, memory_limit, n in outs, plan.labels.get(n, ""))
        for n, s in plan.stages.items()
    }


def edges(plan: Plan) -> list[tuple[str, str, int]]:
    """(producer, consumer, bytes of the producer's array read) for each stage edge."""
    out: dict[tuple[str, str], int] = {}
    for s in plan.stages.values():
        for src, e in zip(s.inputs, s.input_exprs):
            out.setdefault((src, s.name), e.nbytes)
    return [(a, b, n) for (a, b), n in out.items()]


# ------------------------------------------------------------------ measurements


@dataclasses.dataclass(frozen=True)
class Measured:
    """What one run measured, in the shape the renderers read."""

    executor: str
    seconds: float | None
    stage_seconds: dict[str, float]
    workers: dict[str, dict[str, float]]
    """Per worker address: ``bytes_in``, ``bytes_out``, ``peak_memory``, ``tasks``."""


def measured_from(stats: Any, executor: str = "") -> Measured | None:
    """Normalize an executor's ``RunStats`` (or a dict of the same fields); None stays None."""
    if stats is None:
        return None
    get = stats.get if isinstance(stats, Mapping) else lambda k, d=None: getattr(stats, k, d)
    extra = get("extra") or {}
    workers = extra.get("workers") if isinstance(extra, Mapping) else None
    return Measured(
        executor=str(get("executor") or executor),
        seconds=get("seconds"),
        stage_seconds=dict(get("stage_seconds") or {}),
        workers={str(k): dict(v) for k, v in (workers or {}).items()},
    )
