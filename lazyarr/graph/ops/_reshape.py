"""Index arithmetic of reshape: axis groups, flat ranges as boxes, output chunks.

A C-order reshape pairs groups of input axes with groups of output axes of
equal size (length-one axes belong to no group). Within a group an output
box covers a flat range, whose bounding box in the input is what a block
reads; the chunk rules below make that box exact (no extra elements) for
merges and splits. Pure functions of shapes and chunks, tested on their own.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from functools import lru_cache

from lazyarr.graph.chunks import Chunks, offsets, regular_chunks
from lazyarr.graph.expr import Region

__all__ = ["flat_box", "flat_index", "reshape_chunks", "reshape_groups", "reshape_region"]


def _prod(values: Sequence[int]) -> int:
    return math.prod(int(v) for v in values)


def _fit(chunks: Sequence[int], limit: int) -> tuple[int, ...]:
    """``chunks`` with neighbours merged while they fit in ``limit`` and bigger ones split evenly.

    Every input boundary stays a boundary, so each new block lies in one old block
    or covers whole old blocks.
    """
    out: list[int] = []
    acc = 0
    for c in chunks:
        if c > limit:
            if acc:
                out.append(acc)
                acc = 0
            k = -(-c // limit)
            out.extend(c // k + (1 if i < c % k else 0) for i in range(k))
        elif acc + c <= limit:
            acc += c
        else:
            out.append(acc)
            acc = c
    if acc or not out:
        out.append(acc)
    return tuple(out)


@lru_cache(maxsize=1024)
def reshape_groups(
    in_shape: tuple[int, ...], out_shape: tuple[int, ...]
) -> tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]:
    """Pairs (input axes, output axes) of equal size; length-one axes are left out.

    Only for non-empty arrays. ``(6, 4) -> (2, 3, 4)`` gives
    ``(((0,), (0, 1)), ((1,), (2,)))``.
    """
    ins = [a for a, n in enumerate(in_shape) if n != 1]
    outs = [a for a, n in enumerate(out_shape) if n != 1]
    groups = []
    i = j = 0
    while i < len(ins) and j < len(outs):
        gi, gj = [ins[i]], [outs[j]]
        pi, pj = in_shape[ins[i]], out_shape[outs[j]]
        i, j = i + 1, j + 1
        while pi != pj:
            if pi < pj:
                gi.append(ins[i])
                pi *= in_shape[ins[i]]
                i += 1
            else:
                gj.append(outs[j])
                pj *= out_shape[outs[j]]
                j += 1
        groups.append((tuple(gi), tuple(gj)))
    return tuple(groups)


def flat_index(index: Sequence[int], lens: Sequence[int]) -> int:
    """The C-order flat position of ``index`` in an array of shape ``lens``."""
    flat = 0
    for i, n in zip(index, lens, strict=True):
        flat = flat * n + i
    return flat


def _unravel(flat: int, lens: Sequence[int]) -> list[int]:
    out = []
    for n in reversed(lens):
        flat, r = divmod(flat, n)
        out.append(r)
    return out[::-1]


def flat_box(lo: int, hi: int, lens: Sequence[int]) -> tuple[slice, ...]:
    """The bounding box (C order over ``lens``) of the flat range ``[lo, hi)``, ``hi > lo``."""
    a = _unravel(lo, lens)
    b = _unravel(hi - 1, lens)
    box = []
    differ = False
    for ax, n in enumerate(lens):
        if differ:
            box.append(slice(0, n))
        elif a[ax] == b[ax]:
            box.append(slice(a[ax], a[ax] + 1))
        else:
            box.append(slice(a[ax], b[ax] + 1))
            differ = True
    return tuple(box)


def reshape_region(in_shape: tuple[int, ...], shape: tuple[int, ...], out: Region) -> Region:
    """The input box (of ``in_shape``) holding the elements of the output box ``out``."""
    if _prod(in_shape) == 0 or any(s.stop <= s.start for s in out):
        return (slice(0, 0),) * len(in_shape)
    region = [slice(0, 1)] * len(in_shape)
    for in_axes, out_axes in reshape_groups(in_shape, shape):
        out_lens = [shape[a] for a in out_axes]
        in_lens = [in_shape[a] for a in in_axes]
        lo = flat_index([out[a].start for a in out_axes], out_lens)
        hi = flat_index([out[a].stop - 1 for a in out_axes], out_lens) + 1
        for a, s in zip(in_axes, flat_box(lo, hi, in_lens), strict=True):
            region[a] = s
    return tuple(region)


def _merge_chunks(lens: list[int], chunks: list[tuple[int, ...]], target: int) -> tuple[int, ...]:
    """Chunks of the flattened ``lens``: each block is one box of the input (exact region).

    Axes after the cut axis ``d`` are whole in every block, axes before it
    have length one, and along ``d`` the input's chunks are merged or split
    to about ``target`` elements per block.
    """
    inner, d = 1, None
    for ax in range(len(lens) - 1, -1, -1):
        if inner * lens[ax] <= 2 * target:
            inner *= lens[ax]
        else:
            d = ax
            break
    if d is None:  # everything fits: cut the first axis
        d, inner = 0, _prod(lens[1:])
    along = _fit(chunks[d], max(1, target // inner))
    return tuple(c * inner for c in along) * _prod(lens[:d])


def _split_chunks(
    lens: list[int], target: int, in_chunks: tuple[int, ...] | None
) -> list[tuple[int, ...]]:
    """Chunks of axes ``lens`` that each cover one contiguous flat run.

    Trailing axes are whole, one axis is cut, leading axes get blocks of one.
    ``in_chunks`` are the chunks of a single input axis being split (aligned to when possible).
    """
    inner, d = 1, None
    for ax in range(len(lens) - 1, -1, -1):
        if inner * lens[ax] <= 2 * target:
            inner *= lens[ax]
        else:
            d = ax
            break
    if d is None:  # everything fits: cut the first axis
        d, inner = 0, _prod(lens[1:])
    limit = max(1, target // inner)
    along = regular_chunks(lens[d], limit)
    if in_chunks is not None:
        cell = lens[d] * inner
        if d == 0:
            bounds = sorted({o // inner for o in offsets(in_chunks) if o % inner == 0})
            along = _fit([b - a for a, b in itertools.pairwise(bounds)], limit)
        else:
            c = in_chunks[0]
            regular = all(b == c for b in in_chunks[:-1]) and in_chunks[-1] <= c
            if regular and c % inner == 0 and cell % c == 0:
                along = regular_chunks(lens[d], c // inner)
    return [(1,) * n for n in lens[:d]] + [along] + [(n,) for n in lens[d + 1 :]]


def reshape_chunks(in_shape: tuple[int, ...], chunks: Chunks, shape: tuple[int, ...]) -> Chunks:
    """Chunks for ``shape`` when reshaping an array of ``in_shape`` on the grid ``chunks``.

    Axes that stay as they are keep their chunks; merged axes get blocks
    that are each one box of the input; split axes get blocks that are each
    one contiguous run of the input (aligned to its chunks where possible).
    """
    if _prod(in_shape) == 0:
        return tuple((n,) for n in shape)
    out: list[tuple[int, ...]] = [(1,)] * len(shape)
    for in_axes, out_axes in reshape_groups(in_shape, shape):
        in_chunks = [chunks[a] for a in in_axes]
        if len(in_axes) == 1 and len(out_axes) == 1:
            out[out_axes[0]] = in_chunks[0]
            continue
        target = _prod([max(c) for c in in_chunks])
        in_lens = [in_shape[a] for a in in_axes]
        if len(out_axes) == 1:
            out[out_axes[0]] = _merge_chunks(in_lens, in_chunks, target)
        else:
            single = in_chunks[0] if len(in_axes) == 1 else None
            parts = _split_chunks([shape[a] for a in out_axes], target, single)
            for a, c in zip(out_axes, parts, strict=True):
                out[a] = c
    return tuple(out)
