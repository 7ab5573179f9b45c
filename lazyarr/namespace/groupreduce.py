"""Grouped reductions along one axis in a fixed number of stages (flox's ``groupby_reduce``).

xarray hands ``groupby(...).mean()`` and ``resample(...).mean()`` to flox,
which gives every array the integer code of its group along the reduced axis.
Reducing each group on its own (xarray's fallback) writes one selection, one
reduction and one reshape per group: 1,100 stages and a second of planning for
a daily climatology. Here the stages do not grow with the number of groups: a
rechunk to blocks that hold the whole axis (split along the other axes
instead), one task per block that sorts the block's positions by group and
reduces each run of rows, giving every group at once, and a rechunk of the
(smaller) result into the input's blocks. Codes already
in order (``resample``) need no gathering: where partial results per block
are smaller than the data (groups longer than a block, as months over 20-day
blocks), each input block reduces the parts of the groups it holds (sums,
counts) where it is, and only those partials are cut between runs and
combined (:func:`_runs_by_blocks`: no data moves between workers); otherwise
blocks are cut between runs, each near the input's block length (a rechunk
that reads neighbours only), and each block reduces its own runs.
Sums of float32 groups longer than :data:`SHORT_RUN` accumulate in float64;
results come back in the input's dtype, as flox's. No block of the result is
larger than the input's largest block.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lazyarr._array import LazyArray
from lazyarr._convert import as_expr, chunk_limit
from lazyarr.graph.chunks import normalize_chunks
from lazyarr.graph.ops._common import normalize_axis
from lazyarr.namespace.elementwise import where
from lazyarr.namespace.shuffle import packed_chunks
from lazyarr.namespace.userfuncs import map_blocks

__all__ = ["GROUP_FUNCS", "group_reduce"]

GROUP_FUNCS = (
    "sum",
    "nansum",
    "prod",
    "nanprod",
    "mean",
    "nanmean",
    "count",
    "max",
    "nanmax",
    "min",
    "nanmin",
)
"""The reductions :func:`group_reduce` computes (flox's names; ``nan`` ones skip NaN)."""

SHORT_RUN = 32
"""Groups of up to this many positions sum float32 in float32 (at most 32 roundings of half an
ulp each), longer ones in float64."""

_UFUNC = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}
_IDENTITY = {"sum": 0, "prod": 1, "count": 0}


def result_dtype(func: str, dtype: np.dtype) -> np.dtype:
    """NumPy's dtype of ``func`` over ``dtype`` (sums of small integers widen, means float)."""
    base = func.removeprefix("nan")
    if base == "count":
        return np.dtype(np.intp)
    if base in ("max", "min"):
        return dtype
    probe = np.zeros(1, dtype)
    return (np.mean(probe) if base == "mean" else getattr(np, base)(probe)).dtype


def group_reduce(
    x: Any,
    codes: Any,
    ngroups: int,
    func: str,
    axis: int = -1,
    fill_value: Any = None,
    min_count: int | None = None,
    dtype: Any = None,
) -> LazyArray:
    """``func`` over the positions of each group along ``axis``; the groups become the
    last axis, of length ``ngroups`` (flox's layout).

    ``codes``: one integer per position along ``axis``, the group it belongs to
    (negative: in none). A group with fewer than ``min_count`` valid values, or
    none at all, gets ``fill_value`` (default: the reduction's identity for sums
    and counts, NaN otherwise).
    """
    if func not in GROUP_FUNCS:
        raise NotImplementedError(f"group_reduce: {func!r} is not one of {GROUP_FUNCS}")
    xe = as_expr(x)
    axis = normalize_axis(int(axis), xe.ndim, "group_reduce")
    codes = np.asarray(codes).reshape(-1)
    if codes.size != xe.shape[axis]:
        raise ValueError(f"{codes.size} group codes for an axis of length {xe.shape[axis]}")
    codes = codes.astype(np.intp)
    base = func.removeprefix("nan")
    out_dtype = np.dtype(dtype) if dtype is not None else result_dtype(func, np.dtype(xe.dtype))
    counts = np.bincount(codes[codes >= 0], minlength=ngroups)[:ngroups]
    min_count = int(min_count or 0)
    missing = bool((counts == 0).any())
    if fill_value is None:
        fill_value = _IDENTITY.get(base, np.nan)
    if (missing or min_count) and not (base in _IDENTITY and fill_value == _IDENTITY[base]):
        out_dtype = np.result_type(out_dtype, fill_value)
    arr = LazyArray(xe) if not isinstance(x, LazyArray) else x
    moved = arr if axis == 0 else _moveaxis(arr, axis, 0)
    layout = (func, fill_value, min_count, out_dtype)
    if codes.size and codes[0] >= 0 and bool((np.diff(codes) >= 0).all()):
        reduced = _runs_by_blocks(moved, codes, counts, layout)
        if reduced is None:
            reduced = _runs_in_place(moved, codes, ngroups, layout)
    else:
        reduced = _gathered(moved, codes, counts, layout)
    return _moveaxis(reduced.rechunk(_like_input(moved, reduced)), 0, -1)


def _runs_in_place(moved: LazyArray, codes: np.ndarray, ngroups: int, layout: tuple) -> LazyArray:
    """Codes in order (``resample``): blocks cut between runs, each reducing its own runs."""
    row = math.prod(moved.shape[1:]) * np.dtype(moved.dtype).itemsize
    target = max(float(np.mean(moved.chunks[0] or (1,))), chunk_limit() / 4 / max(1, row))
    cut, out_chunks = _run_blocks(codes, ngroups, target)
    aligned = moved.rechunk((cut, *moved.chunks[1:]))
    chunks = (out_chunks, *aligned.chunks[1:])
    return map_blocks(_RunsKernel(codes, *layout), aligned, dtype=layout[-1], chunks=chunks)


BLOCK_PART_FUNCS = ("sum", "nansum", "mean", "nanmean", "count")
"""The reductions :func:`_runs_by_blocks` computes from per-block partial sums and counts."""


def _part_fields(func: str, min_count: int) -> tuple[str, ...]:
    """What each block's partial holds per group: its sum (NaNs skipped for ``nan`` ones)
    and the count of its non-NaN values, where the result needs them (counts of every
    position are known from the codes)."""
    skip = func.startswith("nan")
    total = ("nansum",) if skip else ("sum",)
    if func == "count":
        return ("count",)
    if func == "nanmean" or (skip and min_count):
        return (*total, "count")
    return total


def _runs_by_blocks(
    moved: LazyArray, codes: np.ndarray, counts: np.ndarray, layout: tuple
) -> LazyArray | None:
    """Codes in order, reduced where the data lies: each input block's partial sums (and
    counts) of the groups it holds, in float64 along a new last axis, then those partials
    combined by group (cut between runs: a rechunk of the partials only) and finished
    (mean, fill, ``min_count``). None where the partials would not be under half the
    data's bytes (short groups: cutting the data between runs costs less) or the data is
    not floating."""
    func, fill, min_count, dtype = layout
    if func not in BLOCK_PART_FUNCS or np.dtype(moved.dtype).kind != "f" or moved.ndim < 1:
        return None
    fields = _part_fields(func, min_count)
    bounds = np.cumsum((0, *moved.chunks[0]))
    spans = tuple(
        int(codes[hi - 1] + 1 - codes[lo]) if hi > lo else 0
        for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist())
    )
    part_row = len(fields) * 8
    if sum(spans) * part_row * 2 > moved.shape[0] * np.dtype(moved.dtype).itemsize:
        return None
    ngroups = counts.size
    chunks = (spans, *moved.chunks[1:], (len(fields),))
    parts = map_blocks(
        _BlockPartsKernel(codes, fields),
        moved,
        dtype=np.float64,
        chunks=chunks,
        new_axis=moved.ndim,
    )
    part_codes = np.concatenate(
        [np.arange(codes[lo], codes[lo] + n) for lo, n in zip(bounds[:-1].tolist(), spans) if n]
        or [np.zeros(0, np.intp)]
    ).astype(np.intp)
    combined = _runs_in_place(parts, part_codes, ngroups, ("sum", 0, 0, np.dtype(np.float64)))
    by = {f: combined[..., k] for k, f in enumerate(fields)}
    static = counts.reshape(-1, *[1] * (moved.ndim - 1)).astype(np.float64)
    n = by.get("count", static)
    base = func.removeprefix("nan")
    if base == "count":
        got = by["count"]
    elif base == "mean":
        got = by[fields[0]] / where(n == 0, np.nan, n)
    else:
        got = by[fields[0]]
    if min_count:
        got = where(n < min_count, fill, got)
    if (counts == 0).any():
        got = where(static == 0, fill, got)
    return got.astype(dtype)


def _gathered(moved: LazyArray, codes: np.ndarray, counts: np.ndarray, layout: tuple) -> LazyArray:
    """Codes in any order: blocks holding the whole axis, each sorting its positions by group
    and reducing every group's run."""
    ngroups = counts.size
    order = np.argsort(codes, kind="stable")
    order = order[codes[order] >= 0]
    present = np.flatnonzero(counts)
    starts = np.concatenate([[0], np.cumsum(counts[present])[:-1]]).astype(np.intp)
    whole = moved.rechunk(_whole_axis_chunks(moved, max(1, ngroups)))
    in_order = not order.size or (order[0] == 0 and bool((np.diff(order) == 1).all()))
    kernel = _GroupKernel(
        None if in_order else order, int(order.size), starts, present, ngroups, *layout
    )
    chunks = ((ngroups,), *whole.chunks[1:])
    return map_blocks(kernel, whole, dtype=layout[-1], chunks=chunks)


def _run_blocks(
    codes: np.ndarray, ngroups: int, target: float
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """For codes in order: blocks of whole runs about ``target`` positions long (the input's
    blocks, or a quarter of ``array.chunk-size`` when that holds more: fewer, larger tasks),
    and each block's range of groups in the result (from its first group to the next
    block's; the first from 0, the last to ``ngroups``, so groups with no position have a
    block)."""
    starts = np.flatnonzero(np.diff(codes, prepend=codes[0] - 1))
    sizes = np.diff(np.append(starts, codes.size))
    cut = packed_chunks([int(n) for n in sizes], target)
    firsts = codes[np.cumsum((0, *cut[:-1]))]
    edges = [0, *[int(g) for g in firsts[1:]], ngroups]
    return cut, tuple(np.diff(edges).tolist())


def _whole_axis_chunks(x: LazyArray, ngroups: int) -> tuple[tuple[int, ...], ...]:
    """Blocks holding all of axis 0, split along the others so that each block's reduction
    (``ngroups`` long on axis 0) is no larger than ``x``'s largest block."""
    itemsize = np.dtype(x.dtype).itemsize
    largest = math.prod(max(c, default=0) for c in x.chunks) * itemsize
    limit = min(chunk_limit(), max(itemsize, largest * max(1, x.shape[0]) // ngroups))
    return normalize_chunks((-1, *["auto"] * (x.ndim - 1)), x.shape, itemsize, limit)


def _like_input(x: LazyArray, reduced: LazyArray) -> tuple[tuple[int, ...], ...]:
    """``x``'s blocks for the reduction: its blocks along the other axes, and as many groups
    per block as ``x`` has positions (no result block larger than ``x``'s, and a result that
    meets ``x`` again, as anomalies do, lines up with its blocks)."""
    per = max(1, max(x.chunks[0], default=1))
    return normalize_chunks((per, *x.chunks[1:]), reduced.shape, 1, chunk_limit())


def _moveaxis(a: LazyArray, source: int, dest: int) -> LazyArray:
    perm = [i for i in range(a.ndim) if i != source]
    perm.insert(dest % a.ndim, source)
    return a.transpose(perm)


class _GroupKernel:
    """Reduces each group's run of one block whose first axis holds every position."""

    def __init__(
        self,
        order: np.ndarray | None,
        n: int,
        starts: np.ndarray,
        present: np.ndarray,
        ngroups: int,
        func: str,
        fill_value: Any,
        min_count: int,
        dtype: np.dtype,
    ) -> None:
        self.order, self.n, self.starts, self.present = order, n, starts, present
        self.ngroups, self.func, self.fill = ngroups, func, fill_value
        self.min_count, self.dtype = min_count, dtype
        self.sizes = np.diff(np.append(starts, n))  # each present group's positions

    def __call__(self, block: np.ndarray) -> np.ndarray:
        out = np.empty((self.ngroups, *block.shape[1:]), self.dtype)
        if self.present.size < self.ngroups:  # groups with no member
            out[...] = self.fill
        if not self.present.size:
            return out
        owned = self.order is not None  # a gathered copy, free to overwrite
        v = np.take(block, self.order, axis=0) if owned else block[: self.n]
        base = self.func.removeprefix("nan")
        skip = self.func.startswith("nan") or base == "count"
        nan = np.isnan(v) if skip and v.dtype.kind in "fc" else None
        if nan is not None and not nan.any():
            nan = None
        if nan is None:  # every position counts
            n = np.broadcast_to(
                self.sizes.reshape(-1, *[1] * (v.ndim - 1)), (len(self.present), *v.shape[1:])
            )
        else:
            n = self.runs(np.add, ~nan, np.intp)
        if base == "count":
            got: np.ndarray = n
        elif base in ("max", "min"):
            ufunc = (np.fmax if base == "max" else np.fmin) if nan is not None else _UFUNC[base]
            got = self.runs(ufunc, v, v.dtype)
        else:
            if nan is not None:  # NaNs skipped: the identity in their place
                v = v if owned else v.copy()
                np.copyto(v, 1 if base == "prod" else 0, where=nan)
            ufunc = _UFUNC[base if base == "prod" else "sum"]
            got = self.runs(ufunc, v, self.accumulate(v.dtype) or v.dtype)
            if base == "mean":
                with np.errstate(invalid="ignore", divide="ignore"):
                    got = got / n
        if self.min_count:
            got = np.where(n < self.min_count, self.fill, got)
        out[self.present] = got
        return out

    def runs(self, ufunc: Any, v: np.ndarray, dtype: Any) -> np.ndarray:
        """``ufunc`` over each present group's run of positions of ``v`` (sorted by group).

        One ``ufunc.reduce`` per run over its contiguous rows: 5x faster than
        ``ufunc.reduceat``, which does not vectorise along the other axes.
        """
        got = np.empty((len(self.present), *v.shape[1:]), dtype)
        for i, (start, size) in enumerate(zip(self.starts.tolist(), self.sizes.tolist())):
            ufunc.reduce(v[start : start + size], axis=0, dtype=dtype, out=got[i])
        return got

    def accumulate(self, dtype: np.dtype) -> Any:
        """The dtype sums of ``dtype`` accumulate in: float64 for small floats when a group has
        more than :data:`SHORT_RUN` positions (a longer float32 sum drifts), else their own."""
        small = dtype.kind == "f" and dtype.itemsize < 8
        return np.float64 if small and self.sizes.max() > SHORT_RUN else None

    def __repr__(self) -> str:  # what plan pictures call the stage
        return f"group_{self.func}"


class _BlockPartsKernel:
    """Per group held by one block (codes in order): each field of :func:`_part_fields`
    over the group's positions in the block, float64, along a new last axis; one NaN
    test of the block and one sum per run and field (float32 in float32 up to
    :data:`SHORT_RUN` rows, as :class:`_GroupKernel` sums them)."""

    def __init__(self, codes: np.ndarray, fields: tuple[str, ...]) -> None:
        self.codes, self.fields = codes, fields

    def __call__(self, block: np.ndarray, block_info: Any = None) -> np.ndarray:
        lo, hi = block_info[0]["array-location"][0]
        out = np.zeros(block_info[None]["chunk-shape"], np.float64)  # groups with no row: 0
        if hi == lo:
            return out
        codes = self.codes[lo:hi]
        edges = np.flatnonzero(np.diff(codes)) + 1
        nan = np.isnan(block) if self.fields != ("sum",) else None
        has_nan = nan is not None and bool(nan.any())
        values = block
        if "nansum" in self.fields and has_nan:
            values = np.where(nan, block.dtype.type(0), block)
        small = block.dtype.itemsize < 8
        for a, b in zip((0, *edges.tolist()), (*edges.tolist(), hi - lo)):
            g = int(codes[a] - codes[0])
            for k, field in enumerate(self.fields):
                if field != "count":  # float32 runs longer than SHORT_RUN sum in float64
                    wide = np.float64 if small and b - a > SHORT_RUN else None
                    np.copyto(out[g, ..., k], np.add.reduce(values[a:b], axis=0, dtype=wide))
                elif has_nan:  # rows less the NaNs among them
                    tally = np.uint16 if b - a < 1 << 16 else np.intp
                    nans = np.add.reduce(nan[a:b].view(np.uint8), axis=0, dtype=tally)
                    np.subtract(b - a, nans, out=out[g, ..., k], casting="unsafe")
                else:
                    out[g, ..., k] = b - a
        return out

    def __repr__(self) -> str:
        return f"group_{'_'.join(self.fields)}_parts"


class _RunsKernel:
    """Reduces the runs of one block of positions whose codes are in order (whole runs)."""

    def __init__(self, codes: np.ndarray, func: str, fill: Any, min_count: int, dtype: Any) -> None:
        self.codes, self.func, self.fill = codes, func, fill
        self.min_count, self.dtype = min_count, dtype

    def __call__(self, block: np.ndarray, block_info: Any = None) -> np.ndarray:
        lo, hi = block_info[0]["array-location"][0]
        first, last = block_info[None]["array-location"][0]
        counts = np.bincount(self.codes[lo:hi] - first, minlength=last - first)
        present = np.flatnonzero(counts)
        starts = np.concatenate([[0], np.cumsum(counts[present])[:-1]]).astype(np.intp)
        args = (self.func, self.fill, self.min_count, self.dtype)
        return _GroupKernel(None, hi - lo, starts, present, last - first, *args)(block)

    def __repr__(self) -> str:
        return f"group_{self.func}"
