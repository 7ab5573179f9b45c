"""Block layouts: which worker owns each block (block-cyclic over a worker grid).

A :class:`Layout` maps a block grid onto a grid of workers: block ``g``
goes to worker-grid entry ``g mod grid`` (only the block axes mapped to a
worker-grid axis count), and that entry to a worker through ``order``.
``order`` lists workers hosts first (round robin over hosts), so
neighbouring entries land on different hosts before they share one
(as NumS's block-cyclic device grid does, arXiv:2206.14276), or host by
host (``host_major``), so neighbouring entries share a host; the ``layout``
pass tries both where workers share hosts and keeps the one the placement
search moves fewer bytes between hosts with.

The worker grid is chosen per block grid: the fewest blocks on the most
loaded worker, then the most workers used, then the squarest grid (4
workers -> 2x2 for a 4x4 block grid, 4x1 for row blocks).

Contraction alignment: when the larger operand of a ``matmul``/
``tensordot``/``einsum`` is split only along summed axes, the smaller
operand is laid out so that its summed block axes cycle over the same
worker-grid axes; then every partial product is local to one worker.

:func:`suggest_chunks` is NumS's block-shape rule (about one block per
worker, one block size per axis length), refined to keep the block count
a multiple of the worker count; the ``reblock`` pass uses it.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from lazyarr.graph.blockrules import contracted_pairs
from lazyarr.graph.chunks import Chunks, regular_chunks
from lazyarr.graph.expr import Expr
from lazyarr.graph.ops.elementwise import Elementwise
from lazyarr.graph.ops.manipulation import Transpose
from lazyarr.optimize.plan import Plan, Stage

__all__ = [
    "Layout",
    "default_layout",
    "device_order",
    "plan_layouts",
    "suggest_chunks",
    "worker_grid",
]


@dataclasses.dataclass(frozen=True)
class Layout:
    """Block-cyclic owners: ``grid`` (worker-grid shape), the worker-grid axis of
    each block axis (``None``: not spread), and the worker at each grid entry."""

    grid: tuple[int, ...]
    axes: tuple[int | None, ...]
    order: tuple[int, ...]

    def __post_init__(self) -> None:
        if len(self.order) != math.prod(self.grid):
            raise ValueError(f"order has {len(self.order)} workers for a {self.grid} grid")
        used = [g for g in self.axes if g is not None]
        if len(used) != len(set(used)) or any(not 0 <= g < len(self.grid) for g in used):
            raise ValueError(f"block axes {self.axes} do not map onto grid {self.grid}")

    def owner(self, index: Sequence[int]) -> int:
        """The worker owning block ``index``."""
        flat = 0
        coords = [0] * len(self.grid)
        for ax, i in enumerate(index):
            g = self.axes[ax]
            if g is not None:
                coords[g] = int(i) % self.grid[g]
        for g, n in enumerate(self.grid):
            flat = flat * n + coords[g]
        return self.order[flat]

    def owners(self, numblocks: Sequence[int]) -> np.ndarray:
        """Owners of every block of a grid (int32, shaped ``numblocks``)."""
        strides = [math.prod(self.grid[g + 1 :]) for g in range(len(self.grid))]
        flat = np.zeros(tuple(numblocks), dtype=np.int64)
        for ax, nb in enumerate(numblocks):
            g = self.axes[ax]
            if g is None:
                continue
            shape = [1] * len(numblocks)
            shape[ax] = nb
            flat = flat + ((np.arange(nb) % self.grid[g]) * strides[g]).reshape(shape)
        return np.asarray(self.order, dtype=np.int32)[flat]

    def describe(self) -> str:
        """A short text, e.g. ``2x2 block-cyclic``."""
        if not self.grid or math.prod(self.grid) == 1:
            return f"all on worker {self.order[0]}"
        return "x".join(map(str, self.grid)) + " block-cyclic"

    def to_json(self) -> dict[str, Any]:
        return {"grid": list(self.grid), "axes": list(self.axes), "order": list(self.order)}


def device_order(
    n_workers: int, hosts: Sequence[str] = (), host_major: bool = False
) -> tuple[int, ...]:
    """Workers in layout order: the k-th worker of every host before any (k+1)-th, or with
    ``host_major`` every worker of a host before the next host's (neighbouring blocks on
    one host: contiguous ranges of a reduction stay on their host)."""
    if not hosts:
        return tuple(range(n_workers))
    by_host: dict[str, list[int]] = {}
    for w, h in enumerate(hosts[:n_workers]):
        by_host.setdefault(h, []).append(w)
    if host_major:
        return tuple(w for ws in by_host.values() for w in ws)
    out: list[int] = []
    for k in range(max(len(ws) for ws in by_host.values())):
        out.extend(ws[k] for ws in by_host.values() if k < len(ws))
    return tuple(out)


@lru_cache(maxsize=2048)
def _best_grid(numblocks: tuple[int, ...], n: int) -> tuple[int, ...]:
    best: tuple[Any, ...] | None = None
    choice: tuple[int, ...] = (1,) * len(numblocks)

    def consider(g: tuple[int, ...]) -> None:
        nonlocal best, choice
        per_worker = math.prod(-(-nb // k) for nb, k in zip(numblocks, g))
        spread = [k for nb, k in zip(numblocks, g) if nb > 1]
        square = max(spread) / min(spread) if spread else 1.0
        key = (per_worker, -math.prod(g), square, tuple(-k for k in g))
        if best is None or key < best:
            best, choice = key, g

    def rec(ax: int, prefix: tuple[int, ...], used: int) -> None:
        if ax == len(numblocks):
            consider(prefix)
            return
        for k in range(1, min(numblocks[ax], n // used) + 1):
            rec(ax + 1, (*prefix, k), used * k)

    rec(0, (), 1)
    return choice


def worker_grid(numblocks: Sequence[int], n_workers: int) -> tuple[int, ...]:
    """The worker-grid shape for a block grid (one factor per block axis).

    Minimises the blocks on the most loaded worker, then uses the most
    workers, then prefers the squarest grid and larger leading factors.
    """
    nb = tuple(max(1, int(b)) for b in numblocks)
    return _best_grid(nb, max(1, int(n_workers)))


def default_layout(
    numblocks: Sequence[int], n_workers: int, hosts: Sequence[str] = (), host_major: bool = False
) -> Layout:
    """Block axis ``i`` cycles over worker-grid axis ``i`` of :func:`worker_grid`."""
    grid = worker_grid(numblocks, n_workers)
    order = device_order(n_workers, hosts, host_major)[: math.prod(grid)]
    return Layout(grid, tuple(range(len(grid))), order)


# ----------------------------------------------------------------- block shapes


def suggest_chunks(
    shape: Sequence[int],
    itemsize: int,
    n_workers: int,
    per_worker: int = 1,
    cluster_shape: Sequence[int] | None = None,
    min_bytes: int = 10**8,
    memo: dict[int, int] | None = None,
    max_block_bytes: int | None = None,
) -> Chunks:
    """Chunks with about ``per_worker`` blocks per worker (NumS's block-shape rule, refined).

    Arrays under ``min_bytes`` stay one block and leave ``memo`` alone.
    ``memo`` (axis length -> block length) keeps one block size per axis
    length across calls (and within one array), so operands of a matmul or
    an elementwise op get aligned blocks: axes whose length is in ``memo``
    take its block size, the others are chosen so that the whole grid has
    a multiple of ``n_workers`` blocks, at least ``n_workers * per_worker``
    and enough that no block exceeds ``max_block_bytes``, with the shortest
    longest block side (square blocks for square matrices, row blocks for
    tall-skinny ones). ``cluster_shape`` breaks ties (grids nearest to it).
    """
    shape = tuple(int(s) for s in shape)
    nbytes = math.prod(shape) * itemsize
    if nbytes < min_bytes or nbytes == 0 or n_workers < 1:
        return tuple((s,) for s in shape)
    memo = {} if memo is None else memo
    n = max(1, int(n_workers))
    target = n * max(1, int(per_worker))
    if max_block_bytes:
        need = -(-nbytes // int(max_block_bytes))
        target = max(target, -(-need // n) * n)
    fixed = 1
    free: dict[int, int] = {}  # axis length -> how many axes have it
    for s in shape:
        if s in memo:
            fixed *= -(-s // max(1, memo[s]))
        elif s > 1:
            free[s] = free.get(s, 0) + 1
    counts = _grid_counts(
        tuple(sorted(free.items(), reverse=True)),
        fixed,
        target,
        n,
        tuple(cluster_shape) if cluster_shape is not None else (),
    )
    for length, k in counts.items():
        memo[length] = -(-length // k)
    sizes = [memo.get(s, s) for s in shape]
    return tuple(regular_chunks(s, b) if s else (0,) for s, b in zip(shape, sizes))


_ENUMERATE_LIMIT = 512
"""Above this many blocks per grid, :func:`suggest_chunks` splits greedily (no search)."""


def _split_longest(groups: tuple[tuple[int, int], ...], fixed: int, target: int) -> dict[int, int]:
    """Blocks per axis length: split the longest block side again until ``target`` blocks."""
    counts = {length: 1 for length, _ in groups}
    total = fixed
    while total < target:
        open_ = [(length, m) for length, m in groups if counts[length] < length]
        if not open_:
            break
        length, m = max(open_, key=lambda g: (-(-g[0] // counts[g[0]]), g[1]))
        k = counts[length]
        size = -(-length // k)
        while -(-length // size) == k:  # the next count the axis can really have
            size -= 1
        new = -(-length // size)
        total = total // k**m * new**m
        counts[length] = new
    return counts


def _achievable(length: int, most: int) -> list[tuple[int, int]]:
    """(block count, block length) pairs for an axis, counts up to ``most`` (distinct)."""
    out: dict[int, int] = {}
    for k in range(1, min(length, max(1, most)) + 1):
        size = -(-length // k)
        out.setdefault(-(-length // size), size)
    return sorted(out.items())


@lru_cache(maxsize=1024)
def _grid_counts(
    groups: tuple[tuple[int, int], ...],
    fixed: int,
    target: int,
    n: int,
    cluster: tuple[int, ...],
) -> dict[int, int]:
    """Blocks per axis length (``groups``: (length, number of axes)) for :func:`suggest_chunks`.

    Candidates have fewer than ``2 * target`` blocks in all (``fixed`` of
    them from axes already sized), or the fewest past that per axis length
    (equal lengths split alike can jump past it). Best: at least ``target`` blocks, then
    the least work on the busiest of ``n`` workers, then the fewest blocks,
    then the shortest longest block side, then nearest ``cluster``. Past
    ``_ENUMERATE_LIMIT`` blocks, :func:`_split_longest` decides (no search).
    """
    bound = 2 * target
    if len(groups) > 1 and bound // max(1, fixed) > _ENUMERATE_LIMIT:
        return _split_longest(groups, fixed, target)
    options = [_achievable(length, bound // max(1, fixed) + 1) for length, _ in groups]
    best: tuple[Any, ...] | None = None
    choice: dict[int, int] = {length: 1 for length, _ in groups}

    def consider(picked: list[tuple[int, int]], total: int) -> None:
        nonlocal best, choice
        side = max((size for _, size in picked), default=0)
        grid = [k for (k, _), (_, m) in zip(picked, groups) for _ in range(m)]
        near = sum(abs(math.log(k) - math.log(max(1, c))) for k, c in zip(grid, cluster))
        short = total < target
        key = (
            short,
            -total if short else 0,
            math.ceil(total / n) / total,
            total,
            side,
            near,
            tuple(-k for k in grid),
        )
        if best is None or key < best:
            best, choice = key, {length: k for (length, _), (k, _) in zip(groups, picked)}

    def rec(i: int, picked: list[tuple[int, int]], total: int) -> None:
        if i == len(groups):
            consider(picked, total)
            return
        m = groups[i][1]
        for k, size in options[i]:
            t = total * k**m
            rec(i + 1, [*picked, (k, size)], t)
            if t >= bound:  # the first count past the bound is a candidate, larger ones not
                break

    rec(0, [], fixed)
    return choice


# ----------------------------------------------------------------- a plan's layouts


def plan_layouts(
    plan: Plan,
    n_workers: int,
    hosts: Sequence[str] = (),
    fixed: Sequence[str] = (),
    host_major: bool = False,
) -> tuple[dict[str, Layout], dict[str, str]]:
    """A layout for every stage not in ``fixed``, and why, with contraction alignment
    (workers in :func:`device_order`).

    Stages in ``fixed`` keep the owners they have (persisted blocks); they
    are never re-laid out and never serve as an alignment reference.
    """
    layouts = {
        n: default_layout(s.numblocks, n_workers, hosts, host_major)
        for n, s in plan.stages.items()
        if n not in fixed
    }
    why = {n: lay.describe() for n, lay in layouts.items()}
    pinned = set(fixed)
    for s in plan.stages.values():
        operands = _operand_stages(s)
        if operands is None:
            continue
        (a, ea, map_a), (b, eb, map_b) = operands
        if a == b:
            continue
        pairs = [
            (map_a[x], map_b[y])
            for x, y in contracted_pairs(s.expr)
            if map_a[x] is not None and map_b[y] is not None
        ]
        if not pairs:
            continue
        big, small, small_expr = a, b, eb
        if eb.nbytes > ea.nbytes:
            big, small, small_expr = b, a, ea
            pairs = [(y, x) for x, y in pairs]
        if big not in layouts or small in pinned:
            continue
        ref = layouts[big]
        split = {g for g, k in enumerate(ref.grid) if k > 1}
        through = {ref.axes[ax] for ax, _ in pairs}
        if not split or not split <= through:
            continue
        axes: list[int | None] = [None] * small_expr.ndim
        for ax_big, ax_small in pairs:
            axes[ax_small] = ref.axes[ax_big]
        reason = f"{ref.describe()}, summed axes aligned with {big} for {s.name}"
        _assign(plan, small, Layout(ref.grid, tuple(axes), ref.order), reason, layouts, why, pinned)
        pinned.add(big)
    return layouts, why


def _trace(stage: Stage, e: Expr) -> tuple[str, Expr, list[int | None]] | None:
    """The stage an operand of ``stage``'s root comes from, and its axis for each of ``e``'s.

    Follows members the contraction computes itself through transposes and
    elementwise ops over the same chunks; anything else ends the trace.
    """
    inside = {m.key: m for m in stage.members[:-1]}
    axes: list[int | None] = list(range(e.ndim))
    while e.key in inside:
        op = e.op
        if isinstance(op, Transpose):
            axes = [None if a is None else op.axes[a] for a in axes]
            e = e.inputs[0]
        elif isinstance(op, Elementwise):
            same = [i for i in e.inputs if i.shape == e.shape and i.chunks == e.chunks]
            if not same:
                return None
            e = same[0]
        else:
            return None
    for name, ie in zip(stage.inputs, stage.input_exprs):
        if ie.key == e.key:
            return name, ie, axes
    return None


def _operand_stages(stage: Stage) -> tuple[tuple[str, Expr, list[int | None]], ...] | None:
    """For a two-operand contraction stage: per operand, its source stage and axis map."""
    expr = stage.expr
    if stage.kind != "map" or len(expr.inputs) != 2:
        return None
    if not stage.fused:
        if len(stage.inputs) != 2:
            return None
        return tuple((n, e, list(range(e.ndim))) for n, e in zip(stage.inputs, stage.input_exprs))
    traced = [_trace(stage, e) for e in expr.inputs]
    if any(t is None for t in traced):
        return None
    return tuple(traced)  # type: ignore[arg-type]


def _assign(
    plan: Plan,
    name: str,
    layout: Layout,
    reason: str,
    layouts: dict[str, Layout],
    why: dict[str, str],
    pinned: set[str],
) -> None:
    """Give ``name`` the layout, and pass it up through same-grid elementwise stages."""
    layouts[name], why[name] = layout, reason
    pinned.add(name)
    stack = [name]
    while stack:
        s = plan.stages[stack.pop()]
        if s.kind != "map" or not all(isinstance(m.op, Elementwise) for m in s.members):
            continue
        for pos, inp in enumerate(s.inputs):
            if inp in pinned or s.input_exprs[pos].chunks != s.expr.chunks:
                continue
            layouts[inp], why[inp] = layout, f"{reason} (through {s.name})"
            pinned.add(inp)
            stack.append(inp)
