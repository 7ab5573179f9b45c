"""A small SVG of an array's block grid, drawn beside the notebook repr (as dask does).

A 1-d array is a bar, a 2-d array a rectangle, a 3-d array an oblique box;
arrays of more dimensions show their last three. Lines mark block
boundaries, at most :data:`MAX_LINES` + 1 per axis (a caption then says how
many blocks there are). Side lengths follow the shape, log-scaled when one
side is far longer than another so that a (10⁶, 3) array stays visible.
Pure: chunks in, SVG text out; no external resources.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import accumulate

__all__ = ["MAX_LINES", "axis_fractions", "chunk_grid_svg", "side_lengths"]

MAX_LINES = 20
"""Most block boundaries drawn along one axis (the two ends not counted)."""
SIZE = 120.0
"""Length in pixels of the longest side."""
MIN_SIDE = 14.0
EXTREME = 12.0
"""Above this ratio of longest to shortest side, sides are log-scaled."""
FILL = "#ede9fe"
STROKE = "#6d28d9"


def side_lengths(shape: Sequence[int], size: float = SIZE) -> list[float]:
    """Pixel length of each side: proportional, log-scaled when the ratio is extreme."""
    dims = [max(int(s), 1) for s in shape]
    longest = max(dims, default=1)
    if longest / min(dims, default=1) <= EXTREME:
        return [max(size * d / longest, MIN_SIDE) for d in dims]
    top = math.log10(longest) + 1
    return [max(size * (math.log10(d) + 1) / top, MIN_SIDE) for d in dims]


def axis_fractions(chunks: Sequence[int]) -> list[float]:
    """Positions (0 to 1) of the block boundaries drawn along one axis, ends included.

    At most ``MAX_LINES`` inner boundaries, chosen evenly among all of them.
    """
    total = sum(chunks)
    if total == 0 or not chunks:
        return [0.0, 1.0]
    inner = list(accumulate(chunks))[:-1]
    if len(inner) > MAX_LINES:
        step = len(inner) / MAX_LINES
        inner = [inner[int(i * step)] for i in range(MAX_LINES)]
    return [0.0, *(c / total for c in inner), 1.0]


def _line(x1: float, y1: float, x2: float, y2: float, axis: int | str) -> str:
    return (
        f'<line class="block-line" data-axis="{axis}" x1="{x1:.1f}" y1="{y1:.1f}" '
        f'x2="{x2:.1f}" y2="{y2:.1f}" stroke="{STROKE}" stroke-width="0.8"/>'
    )


def _poly(points: Sequence[tuple[float, float]]) -> str:
    pts = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
    return f'<polygon points="{pts}" fill="{FILL}" stroke="none"/>'


def _text(x: float, y: float, text: str, rotate: bool = False) -> str:
    turn = f' transform="rotate(-90 {x:.1f} {y:.1f})"' if rotate else ""
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="middle"{turn}>{text}</text>'


def _face(
    origin: tuple[float, float],
    u: tuple[float, float],
    v: tuple[float, float],
    fu: Sequence[float],
    fv: Sequence[float],
    axes: tuple[int | str, int | str],
) -> list[str]:
    """A parallelogram spanned by ``u`` and ``v`` with boundary lines at ``fu`` / ``fv``."""
    (ox, oy), (ux, uy), (vx, vy) = origin, u, v
    out = [_poly([(ox, oy), (ox + ux, oy + uy), (ox + ux + vx, oy + uy + vy), (ox + vx, oy + vy)])]
    for f in fu:  # lines across u: parallel to v
        x, y = ox + f * ux, oy + f * uy
        out.append(_line(x, y, x + vx, y + vy, axes[0]))
    for f in fv:
        x, y = ox + f * vx, oy + f * vy
        out.append(_line(x, y, x + ux, y + uy, axes[1]))
    return out


def chunk_grid_svg(chunks: Sequence[Sequence[int]]) -> str:
    """An inline ``<svg>`` of the block grid given by ``chunks`` (one tuple of sizes per axis)."""
    chunks = [tuple(int(c) for c in cs) for cs in chunks]
    nd = len(chunks)
    if nd == 0:
        chunks = [(1,)]
    shown = chunks[-3:]
    first = max(nd - 3, 0)  # axis number of shown[0]
    shape = [sum(c) for c in shown]
    sides = side_lengths(shape)
    fracs = [axis_fractions(c) for c in shown]
    m = 24.0  # margin for the side labels
    body: list[str] = []
    if len(shown) == 1:
        w, h = sides[0], MIN_SIDE
        body += _face((m, m), (w, 0), (0, h), fracs[0], [0.0, 1.0], (first, "edge"))
        body.append(_text(m + w / 2, m + h + 14, str(shape[0])))
        width, height = w + 2 * m, h + 2 * m
    elif len(shown) == 2:
        h, w = sides
        body += _face((m, m), (0, h), (w, 0), fracs[0], fracs[1], (first, first + 1))
        body.append(_text(m + w / 2, m + h + 14, str(shape[1])))
        body.append(_text(m + w + 12, m + h / 2, str(shape[0]), rotate=True))
        width, height = w + 2 * m, h + 2 * m
    else:
        d, h, w = sides
        dx, dy = d * 0.6, -d * 0.6  # depth drawn up and to the right
        ox, oy = m, m - dy
        # front (axes 1, 2), top (axes 0, 2), right side (axes 0, 1)
        body += _face((ox, oy), (0, h), (w, 0), fracs[1], fracs[2], (first + 1, first + 2))
        body += _face((ox, oy), (dx, dy), (w, 0), fracs[0], fracs[2], (first, first + 2))
        body += _face((ox + w, oy), (dx, dy), (0, h), fracs[0], fracs[1], (first, first + 1))
        body.append(_text(ox + w / 2, oy + h + 14, str(shape[2])))
        body.append(_text(ox - 10, oy + h / 2, str(shape[1]), rotate=True))
        body.append(_text(ox + w + dx / 2 + 10, oy + h + dy / 2 + 10, str(shape[0])))
        width, height = w + dx + 2 * m, h - dy + 2 * m
    caption = _caption(chunks)
    if caption:
        height += 14
        width = max(width, len(caption) * 5.6 + 8)  # 10px Helvetica fits in ~5.6px a glyph
        body.append(_text(width / 2, height - 6, caption))
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="lazyarr-chunks" width="{width:.0f}" '
        f'height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" '
        'font-family="Helvetica, Arial, sans-serif" font-size="10" fill="#333">'
        + "".join(body)
        + "</svg>"
    )


def _caption(chunks: Sequence[Sequence[int]]) -> str:
    """``"1,000 blocks (10 x 100)"`` when lines were left out or axes are not shown, else ``""``."""
    many = any(len(c) - 1 > MAX_LINES for c in chunks)
    if not many and len(chunks) <= 3:
        return ""
    grid = " x ".join(str(len(c)) for c in chunks)
    return f"{math.prod(len(c) for c in chunks):,} blocks ({grid})"
