"""Tall-skinny QR (TSQR; Demmel et al., "Communication-avoiding parallel and
sequential QR factorizations"; dask's ``tsqr``) as block-local map stages.

For ``x`` (``m x n``, ``m >= n``) in row blocks ``x_i`` (each at least ``n``
rows) and one column block:

1. ``factor``: each row block is factored on its own, ``x_i = Q1_i R1_i``,
   by a TSQR of its own: the block is cut into ``k_i`` row panels of about
   :data:`PANEL_BYTES` (:func:`panel_count`, :func:`panel_bounds`), each
   panel ``p`` factored ``x_ip = P_ip S_ip``, and the stacked ``S_ip``
   (``k_i * n x n``) factored ``F_i R1_i``. Then ``Q1_i`` is
   ``diag(P_i1, ..., P_ik) @ F_i`` and is never formed. A panel fits in the
   CPU cache, where LAPACK's Householder QR (memory-bound on a tall narrow
   matrix) runs several times faster than on the whole block. Block ``i``
   of the result holds ``P_i`` (the panels' ``Q``, ``r_i`` rows) over
   ``F_i`` over ``R1_i``: ``r_i + (k_i + 1) * n`` rows.
2. ``r``: block ``i`` of the R stack is ``R1_i`` (``n`` rows), cut from
   block ``i`` of the factors.
3. The stack (``nb * n x n``, small) is factored again, ``stack = Q2 R``:
   in one piece when it has at most ``fan_in`` blocks, else by TSQR of the
   stack regrouped into ``fan_in`` blocks per row block: a tree of depth
   ``log_fan_in(nb)``.
4. ``q``: ``Q_i = Q1_i @ Q2_i`` (``Q2_i = Q2[i*n:(i+1)*n]``), computed as
   ``P_ip @ (F_i @ Q2_i)[p*n:(p+1)*n]`` panel by panel: one pass over the
   block instead of two (forming ``Q1_i``, then the product).

Every stage but 3 is a map over the row blocks, so each block's work runs
where the block lives and only the ``n x n`` factors travel; ``Q`` has the
input's row blocks. :class:`TSQRStage` is the one op of stages 1, 2 and 4
(``part``); its rows map block for block, so its reads are bounding boxes
of whole blocks.
"""

from __future__ import annotations

import dataclasses
from itertools import accumulate

import numpy as np

from lazyarr.graph.chunks import blocks_in_range
from lazyarr.graph.expr import Expr, MapOp, Region
from lazyarr.graph.ops.linalg import core_map
from lazyarr.graph.ops.rechunk import rechunk

__all__ = [
    "FAN_IN",
    "PANEL_BYTES",
    "TSQRStage",
    "check_tall_skinny",
    "panel_bounds",
    "panel_count",
    "qr_dtype",
    "tsqr",
]

FAN_IN = 16
"""R factors of at most this many row blocks are factored in one piece (one tree level)."""

PANEL_BYTES = 1 << 20
"""Bytes of one row panel of a block's own TSQR: about a core's L2 cache.

Measured on one 62,500 x 50 float64 block (one BLAS thread, SkylakeX):
``numpy.linalg.qr`` of the whole block 230-270 ms, panels of 2,000-2,600
rows 80-90 ms with the ``q`` product included, 4 MiB panels 130 ms.

Panels make many more, smaller BLAS calls: where each is itself
multithreaded while other kernels run beside it (the numba executor's
thread pool with OpenBLAS's default threads, 2 cores), the thread hand-offs
eat the gain: ``tsqr`` of 2e6 x 50 in 32 blocks took 10.2-11.5 s there,
against 7.4-8.4 s with one QR per block and 5.8-6.2 s with
``OPENBLAS_NUM_THREADS=1``. Dask's workers run one BLAS thread each."""

PANEL_MIN = 8
"""A panel has at least this many times as many rows as columns, so the stacked
panel R's stay much smaller than the block (best measured for 200 and 400 columns)."""


@dataclasses.dataclass(frozen=True)
class TSQRStage(MapOp):
    """One block-local stage of TSQR over row blocks ``rows`` of an ``n``-column array.

    * ``factor`` (input ``x``): block ``i`` is ``P_i`` over ``F_i`` over ``R1_i``;
    * ``r`` (input: the factors): block ``i`` is ``R1_i``;
    * ``q`` (inputs: the factors, ``Q2``): block ``i`` is ``Q1_i @ Q2_i``.
    """

    name = "tsqr"
    part: str = "factor"
    rows: tuple[int, ...] = ()
    n: int = 0
    panels: tuple[int, ...] = ()
    """Row panels of each block's own TSQR (:func:`panel_count`; 1: one QR)."""

    def label(self) -> str:
        return f"tsqr.{self.part}"

    def out_sizes(self) -> tuple[int, ...]:
        """Rows of each output block."""
        if self.part == "factor":
            return self.factor_sizes()
        if self.part == "r":
            return (self.n,) * len(self.rows)
        return self.rows

    def factor_sizes(self) -> tuple[int, ...]:
        """Rows of each block of the factors: ``P_i`` over ``F_i`` over ``R1_i``."""
        return tuple(r + (k + 1) * self.n for r, k in zip(self.rows, self.panels))

    def blocks(self, out: Region) -> range:
        """The row blocks that the output rows ``out[0]`` touch."""
        return blocks_in_range(self.out_sizes(), out[0].start, out[0].stop)

    def regions(self, expr: Expr, out: Region) -> tuple[Region, ...]:
        blocks = self.blocks(out)
        first, last = blocks[0], blocks[-1] + 1
        cols = slice(0, self.n)
        if self.part == "factor":
            starts = _starts(self.rows)
            return ((slice(starts[first], starts[last]), cols),)
        fstarts = _starts(self.factor_sizes())
        factors = (slice(fstarts[first], fstarts[last]), cols)
        if self.part == "r":
            return (factors,)
        return (factors, (slice(first * self.n, last * self.n), cols))


def _starts(sizes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(accumulate(sizes, initial=0))


def panel_count(rows: int, n: int, itemsize: int, panel_bytes: int = PANEL_BYTES) -> int:
    """Row panels of a block of ``rows x n`` items of ``itemsize`` bytes in the ``factor`` stage.

    Panels of about ``panel_bytes`` and at least :data:`PANEL_MIN` ``* n``
    rows; 1 (one QR of the whole block) when the block holds fewer than two.
    """
    per = max(PANEL_MIN * n, panel_bytes // max(n * itemsize, 1), 1)
    return max(rows // per, 1)


def panel_bounds(rows: int, k: int) -> list[tuple[int, int]]:
    """``(start, stop)`` of ``k`` row panels of nearly equal size over ``rows`` rows."""
    step, extra = divmod(rows, k)
    stops = list(accumulate(step + (p < extra) for p in range(k)))
    return list(zip([0, *stops[:-1]], stops))


def qr_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype of ``numpy.linalg.qr``'s factors for an input of ``dtype``."""
    return np.linalg.qr(np.ones((1, 1), dtype=dtype))[1].dtype


def check_tall_skinny(x: Expr, op: str) -> None:
    """``ValueError`` unless ``x`` is 2-d in row blocks of at least as many rows as columns."""
    if x.ndim != 2:
        raise ValueError(f"{op}: the input must be 2-d (got shape {x.shape})")
    if x.numblocks[1] != 1:
        raise ValueError(
            f"{op}: the input must have one block of columns (got column chunks {x.chunks[1]}); "
            "rechunk it with chunks=(..., -1)"
        )
    n = x.shape[1]
    small = [(i, r) for i, r in enumerate(x.chunks[0]) if r < n]
    if small:
        i, r = small[0]
        raise ValueError(
            f"{op}: every row block needs at least as many rows as there are columns ({n}); "
            f"row block {i} has {r} (row chunks {x.chunks[0]}). Rechunk the rows into larger "
            "blocks."
        )


def tsqr(x: Expr, fan_in: int = FAN_IN, panel_bytes: int = PANEL_BYTES) -> tuple[Expr, Expr]:
    """``(Q, R)`` of ``x`` by TSQR (``mode='reduced'``); ``Q`` keeps ``x``'s row blocks.

    ``x`` must pass :func:`check_tall_skinny` (a clear ``ValueError`` otherwise).
    ``panel_bytes`` sizes the row panels of each block's own TSQR (tests
    make it small to get several panels from small blocks).
    """
    check_tall_skinny(x, "tsqr")
    if fan_in < 2:
        raise ValueError(f"tsqr: fan_in must be at least 2 (got {fan_in})")
    m, n = x.shape
    rows = x.chunks[0]
    nb = len(rows)
    dtype = qr_dtype(x.dtype)
    panels = tuple(panel_count(r, n, dtype.itemsize, panel_bytes) for r in rows)
    f_op = TSQRStage(part="factor", rows=rows, n=n, panels=panels)
    f_sizes = f_op.out_sizes()
    factors = Expr(f_op, (x,), (sum(f_sizes), n), dtype, (f_sizes, (n,)))
    r_op = TSQRStage(part="r", rows=rows, n=n, panels=panels)
    stack = Expr(r_op, (factors,), (nb * n, n), dtype, (r_op.out_sizes(), (n,)))
    if nb <= fan_in:
        kw = {"mode": "reduced"}
        q2 = core_map("linalg.qr", [stack], [(0, 1)], (0, 1), (nb * n, n), dtype, kw, 0)
        r = core_map("linalg.qr", [stack], [(0, 1)], (0, 1), (n, n), dtype, kw, 1)
    else:
        groups = tuple(
            n * min(fan_in, nb - start) for start in range(0, nb, fan_in)
        )  # fan_in R factors per row block of the next level
        q2, r = tsqr(rechunk(stack, (groups, (n,))), fan_in, panel_bytes)
    q_op = TSQRStage(part="q", rows=rows, n=n, panels=panels)
    q = Expr(q_op, (factors, q2), (m, n), dtype, (rows, (n,)))
    return q, r
