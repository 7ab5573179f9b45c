"""Sample sort along an axis of several blocks: the output keeps the input's chunks.

Described for a 1-d array; an N-d array is a batch of independent lines
along ``axis``: every stage puts its own axes (:data:`MID`) in place of
``axis`` and keeps the other axes and their blocks, and its kernels loop
over the lines of a block (``kernels/reference/samplesort.py``).

Every element has a unique key ``(value, block i, position p in the sorted
block)``: values compare as ``np.sort`` orders them (NaN last), ties by
block, then by position. Blocks are sorted stably, so for equal values the
key order is the input order: the sort is stable across blocks.

Stages (``b_i``: rows of block ``i``, ``nb`` blocks, ``n`` elements):

1. ``L = local``: each block sorted on its own (``arg``: the global indices
   of its elements in that order, ``LI``). Map, blocks kept.
2. ``S = samples``: block ``i`` keeps every ``g_i``-th element of ``L_i``
   (positions ``0, g_i, 2 g_i, ...``, ``g_i = ceil(b_i / k)``); so at most
   ``g_i`` elements of ``L_i`` lie from one of its samples to the next.
3. ``C = candidates``: the sample ids in key order (one small block).
4. ``N = counts``: row ``i`` (one block each) is, per candidate, how many
   elements of ``L_i`` have smaller keys (one ``searchsorted`` per
   candidate). Its column sums ``R = ranks`` (one small block) are the
   candidates' global ranks.
5. Output block ``j`` holds the ranks ``[start_j, stop_j)`` (the input's
   chunks). For a boundary rank ``r``, the candidates ``lo`` (the last with
   rank ``<= r``; the smallest candidate has rank 0) and ``hi`` (the next)
   bracket it; block ``i`` has ``N[i, hi] - N[i, lo] <= g_i`` elements
   between them (its own samples are candidates). ``E = brackets``: block
   ``(i, j)`` holds those elements, padded to ``cap = max g_i`` (static).
6. ``O = offsets``: column ``j`` (one block) merges the brackets of
   boundary ``j`` and counts, per block ``i``, how many of its elements
   rank below ``start_j``: ``O[i, j]``.
7. ``exchange``: a reduction whose partial ``(j, i)`` reads ``L_i`` where it
   lives (plus two small columns of ``O``) and keeps the slice
   ``L_i[O[i, j]:O[i, j + 1]]``; the finalize of block ``j`` merges the
   slices (a stable sort of runs in block order). So each element travels
   once, from the worker of its input block to the one of its output block.

A plain map cannot be the exchange: its regions are static, so each output
block would read every ``L_i`` whole. The reduction's partial states may be
of any size (:meth:`ReduceOp.partial_regions` lets a partial read the small
``O`` beside its body block). Small stages (2 to 6) move about
``nb * k`` samples, ``nb * nb * k`` counts and ``nb * (nb + 1) * cap``
bracket elements, ``~ n * nb / k``; ``k`` grows with the number of blocks
(:func:`samples_per_block`). Costs that grow with ``nb**2``: the counts
(``nb * nb * k``) and the bracket tasks (``nb * (nb + 1)``), fine for tens
of blocks along the axis, not for thousands.
"""

from __future__ import annotations

import dataclasses
import functools
from itertools import accumulate
from typing import ClassVar

import numpy as np

from lazyarr.graph.chunks import blocks_in_range, regular_chunks
from lazyarr.graph.expr import Expr, MapOp, ReduceOp, Region

__all__ = [
    "Exchange",
    "count_dtype",
    "SampleSortStage",
    "sample_positions",
    "samples_per_block",
    "samplesort",
    "sorted_values_of",
]


def samples_per_block(nb: int, largest: int) -> int:
    """Samples ``k`` per block of ``nb`` blocks, the largest of ``largest`` elements.

    Brackets (``~ n nb / k`` elements) and samples (``nb k``, gathered into
    one task) stay small shares of the data, and so do the counts
    (``nb * nb * k``, summed in one task): ``32 nb`` up to 4096, at most an
    eighth of the largest block.
    """
    return max(1, min(32 * nb, 4096, largest // 8))


def count_dtype(rows: tuple[int, ...]) -> np.dtype:
    """The counts stage's dtype: int32 while every block's rows fit it (half the bytes of
    the counts, which the ranks and every offsets task read whole), else intp."""
    return np.dtype(np.int32 if max(rows, default=0) < 2**31 else np.intp)


def _gap(b: int, k: int) -> int:
    return max(1, -(-b // k))


@functools.lru_cache(maxsize=64)
def _sample_counts(rows: tuple[int, ...], k: int) -> tuple[int, ...]:
    """Samples of each block (asked for by every task's regions: cached)."""
    return tuple(-(-b // _gap(b, k)) for b in rows)


@functools.lru_cache(maxsize=64)
def sample_positions(rows: tuple[int, ...], k: int) -> tuple[np.ndarray, np.ndarray]:
    """The block and the position in its sorted block of every sample, in that order.

    Cached (read-only arrays): every counts task of a sort asks for the same ones.
    """
    gaps = np.array([_gap(b, k) for b in rows], dtype=np.intp)
    counts = -(-np.asarray(rows, dtype=np.intp) // gaps)
    block = np.repeat(np.arange(len(rows), dtype=np.intp), counts)
    first = np.repeat(np.cumsum(counts) - counts, counts)
    pos = (np.arange(block.size, dtype=np.intp) - first) * gaps[block]
    block.setflags(write=False)
    pos.setflags(write=False)
    return block, pos


def boundary_groups(rows: tuple[int, ...], cap: int) -> tuple[int, ...]:
    """Chunks of the ``nb + 1`` output boundaries for the brackets and offsets stages.

    A brackets task makes one block's brackets of a group of boundaries, an offsets
    task merges a group's brackets of every block: groups as large as about one
    input block's worth of brackets (``nb * cap`` elements per boundary), so tasks
    are few (one group for tens of blocks) and none holds much more than a block.
    Groups are of even sizes: 32 blocks of 625,000 made groups of 31 and 2
    boundaries, and the offsets task of 31 (14 ms) ran alone on 2 threads.
    """
    nb = len(rows)
    per = max(1, max(rows) // max(1, nb * cap))
    groups = -(-(nb + 1) // min(per, nb + 1))
    return regular_chunks(nb + 1, -(-(nb + 1) // groups))


def _starts(sizes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(accumulate(sizes, initial=0))


MID = {
    "local": 1,
    "samples": 1,
    "candidates": 1,
    "counts": 2,
    "ranks": 1,
    "brackets": 3,
    "offsets": 2,
}
"""How many axes each stage has in place of the sorted axis (the others keep their blocks)."""


@dataclasses.dataclass(frozen=True)
class SampleSortStage(MapOp):
    """One map stage of the sample sort along ``axis``, whose blocks are ``rows``.

    ``part``: ``local`` (input x; or x and its sorting indices), ``samples``
    (L), ``candidates`` (S), ``counts`` (L, S, C), ``ranks`` (N),
    ``brackets`` (L, N, R: row ``i`` of N; a group of boundaries, see
    :func:`boundary_groups`), ``offsets`` (E, N, R; a group of boundaries). Each has
    :data:`MID` axes in place of ``axis``; every other axis is a batch of
    independent lines, its region passed through. See the module docstring.
    """

    name = "samplesort"
    part: str = "local"
    rows: tuple[int, ...] = ()
    k: int = 4
    arg: bool = False
    axis: int = 0

    def label(self) -> str:
        return f"samplesort.{self.part}"

    @property
    def nb(self) -> int:
        return len(self.rows)

    @property
    def n(self) -> int:
        return sum(self.rows)

    def sample_counts(self) -> tuple[int, ...]:
        return _sample_counts(self.rows, self.k)

    def cap(self) -> int:
        return max(_gap(b, self.k) for b in self.rows)

    def _rows_of(self, sizes: tuple[int, ...], s: slice) -> slice:
        """The region of ``L`` under output blocks ``sizes`` that ``s`` touches."""
        blocks = blocks_in_range(sizes, s.start, s.stop)
        st = _starts(self.rows)
        return slice(st[blocks[0]], st[blocks[-1] + 1])

    def regions(self, expr: Expr, out: Region) -> tuple[Region, ...]:
        ax = self.axis
        lead, tail = out[:ax], out[ax + MID[self.part] :]
        mid = out[ax : ax + MID[self.part]]
        m = sum(self.sample_counts())

        def at(*middle: slice) -> Region:
            return (*lead, *middle, *tail)

        samples = at(slice(0, m))
        if self.part == "local":  # x, or x and its sorting indices
            return (out,) * len(expr.inputs)
        if self.part == "samples":
            return (at(self._rows_of(self.sample_counts(), mid[0])),)
        if self.part == "candidates":
            return (samples,)
        if self.part == "ranks":
            return (at(slice(0, self.nb), slice(0, m)),)
        if self.part == "counts":
            return (at(self._rows_of((1,) * self.nb, mid[0])), samples, samples)
        if self.part == "brackets":  # its block of L, its row of N, the ranks
            row = at(mid[0], slice(0, m))
            return (at(self._rows_of((1,) * self.nb, mid[0])), row, samples)
        # offsets: the brackets of the boundaries asked for, all counts, the ranks
        e = at(slice(0, self.nb), mid[1], slice(0, self.cap()))
        return (e, at(slice(0, self.nb), slice(0, m)), samples)


def _stage(
    part: str,
    x: Expr,
    inputs: tuple[Expr, ...],
    mid: tuple[tuple[int, ...], ...],
    dtype: np.dtype,
    ax: int,
    k: int,
    **kw: bool,
) -> Expr:
    """A stage whose axes in place of ``ax`` have the chunks ``mid`` (the others: ``x``'s)."""
    op = SampleSortStage(part=part, rows=x.chunks[ax], k=k, axis=ax, **kw)
    chunks = (*x.chunks[:ax], *mid, *x.chunks[ax + 1 :])
    shape = tuple(sum(c) for c in chunks)
    return Expr(op, inputs, shape, dtype, chunks)


@dataclasses.dataclass(frozen=True)
class Exchange(ReduceOp):
    """Output block ``j``: the slices ``L_i[O[i, j]:O[i, j + 1]]`` merged (inputs L[, LI], O).

    The partials tile a virtual grid with two axes in place of ``axis``:
    body block ``(j, i)`` is the slice of ``L_i`` for output block ``j``; it
    reads ``L_i`` (and ``LI_i``) and columns ``j, j + 1`` of ``O`` (the other
    axes: the same region). ``arg``: the output is the global indices ``LI``
    carried along.
    """

    name = "samplesort.exchange"
    own_partials: ClassVar[bool] = True
    gathers: ClassVar[bool] = True
    partials_wait_for: ClassVar[int | None] = -1  # the offsets: a few integers per block
    serial_finalizes: ClassVar[bool] = True
    rows: tuple[int, ...] = ()
    arg: bool = False
    axis: int = 0
    axes: tuple[int, ...] = (1,)

    def label(self) -> str:
        return "samplesort.exchange"

    def body_chunks(self, expr: Expr) -> tuple[tuple[int, ...], ...]:
        ax, chunks = self.axis, expr.chunks
        return (*chunks[:ax], (1,) * len(self.rows), self.rows, *chunks[ax + 1 :])

    def partial_regions(self, expr: Expr, body: Region) -> tuple[Region, ...]:
        ax = self.axis
        j = body[ax].start
        lead, tail = body[:ax], body[ax + 2 :]
        rows = (*lead, body[ax + 1], *tail)
        o = (*lead, slice(0, len(self.rows)), slice(j, j + 2), *tail)
        return (rows, rows, o) if self.arg else (rows, o)

    def partial_nbytes(self, expr: Expr, body_sizes: np.ndarray) -> np.ndarray:
        per = expr.inputs[0].dtype.itemsize + (8 if self.arg else 0)
        return -(-body_sizes * per // max(1, len(self.rows)))  # a 1/nb share, on average


def samplesort(x: Expr, arg: bool = False, k: int | None = None, axis: int = 0) -> Expr:
    """Ascending stable sort (``arg``: argsort) of ``x`` along ``axis``, keeping its chunks.

    ``x`` needs at least one element. ``k``: samples per block (default
    :func:`samples_per_block`). Every line along ``axis`` is sorted on its
    own; the other axes keep their blocks.
    """
    if x.ndim == 0 or x.size == 0:
        raise ValueError(f"samplesort: a non-empty array is needed (got shape {x.shape})")
    ax = axis % x.ndim
    rows = x.chunks[ax]
    nb = len(rows)
    k = samples_per_block(nb, max(rows)) if k is None else int(k)
    intp = np.dtype(np.intp)
    if arg:  # the sorted values are taken by the indices: one sort per block
        idx = _stage("local", x, (x,), (rows,), intp, ax, k, arg=True)
        local = _stage("local", x, (x, idx), (rows,), x.dtype, ax, k)
        values = [local, idx]
    else:
        local = _stage("local", x, (x,), (rows,), x.dtype, ax, k)
        values = [local]
    probe = SampleSortStage(rows=rows, k=k)
    counts_per = probe.sample_counts()
    m = sum(counts_per)
    s = _stage("samples", x, (local,), (counts_per,), x.dtype, ax, k)
    c = _stage("candidates", x, (s,), ((m,),), intp, ax, k)
    ncount = _stage("counts", x, (local, s, c), ((1,) * nb, (m,)), count_dtype(rows), ax, k)
    ranks = _stage("ranks", x, (ncount,), ((m,),), intp, ax, k)
    groups = boundary_groups(rows, probe.cap())
    e_mid = ((1,) * nb, groups, (probe.cap(),))
    e = _stage("brackets", x, (local, ncount, ranks), e_mid, x.dtype, ax, k)
    o = _stage("offsets", x, (e, ncount, ranks), ((nb,), groups), intp, ax, k)
    ex = Exchange(rows=rows, arg=bool(arg), axis=ax, axes=(ax + 1,))
    return Expr(ex, (*values, o), x.shape, intp if arg else x.dtype, x.chunks)


def sorted_values_of(indices: Expr) -> Expr:
    """The sorted values beside an argsort built by :func:`samplesort` (``arg=True``).

    Its stages already hold every block's values in sorted order (``local``): a
    second exchange of those, with the same offsets, gives the sort without
    sorting again (a stable ``sort`` and ``argsort`` of one array for the cost of one).
    """
    ex = indices.op
    if not (isinstance(ex, Exchange) and ex.arg):
        raise ValueError("sorted_values_of: an argsort built by samplesort(arg=True) is needed")
    local, _, offsets = indices.inputs
    op = dataclasses.replace(ex, arg=False)
    return Expr(op, (local, offsets), indices.shape, local.dtype, indices.chunks)
