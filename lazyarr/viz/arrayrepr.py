"""A lazy array's reprs: one line of text, and a notebook table beside its block grid.

Pure functions of an :class:`~lazyarr.graph.expr.Expr`: the shape, dtype,
blocks and how many array ops wait to run; the notebook form puts the
table next to the picture of the block grid (``chunkgrid.py``), as dask
does. Every value in the HTML is escaped.
"""

from __future__ import annotations

import math
from html import escape
from typing import Any

from lazyarr.graph import build
from lazyarr.graph.expr import Expr
from lazyarr.viz.chunkgrid import chunk_grid_svg
from lazyarr.viz.facts import fmt_bytes

__all__ = ["array_repr", "array_repr_html", "side_by_side"]


def _summary(e: Expr) -> dict[str, Any]:
    return {
        "op": e.op.label(),
        "shape": e.shape,
        "dtype": str(e.dtype),
        "chunksize": tuple(max(c) for c in e.chunks),
        "blocks": math.prod(e.numblocks),
        "ops": build([e]).number_of_nodes(),
        "nbytes": fmt_bytes(e.nbytes),
    }


def array_repr(e: Expr) -> str:
    """``lazyarr.array<op, shape=..., dtype=..., chunksize=..., blocks=..., ops=..., bytes>``."""
    s = _summary(e)
    return (
        f"lazyarr.array<{s['op']}, shape={s['shape']}, dtype={s['dtype']}, "
        f"chunksize={s['chunksize']}, blocks={s['blocks']}, ops={s['ops']}, {s['nbytes']}>"
    )


def array_repr_html(e: Expr) -> str:
    """The notebook repr: a table of array and block facts beside the block-grid picture."""
    s = _summary(e)
    chunk_bytes = fmt_bytes(math.prod(s["chunksize"]) * e.dtype.itemsize)
    rows = [
        ("Shape", f"{s['shape']}", f"{s['chunksize']}"),
        ("Bytes", s["nbytes"], chunk_bytes),
        ("Blocks", f"{s['blocks']} ({' x '.join(map(str, e.numblocks)) or '1'})", ""),
        ("Ops", f"{s['ops']} (last: {s['op']})", ""),
        ("Type", s["dtype"], "numpy.ndarray"),
    ]
    body = "".join(
        f"<tr><th style='text-align:left'>{a}</th><td>{escape(b)}</td><td>{escape(c)}</td></tr>"
        for a, b, c in rows
    )
    table = (
        "<table class='lazyarr-repr'><thead><tr><td></td><th>Array</th><th>Block</th>"
        f"</tr></thead><tbody>{body}</tbody></table>"
    )
    return side_by_side(table, chunk_grid_svg(e.chunks))


def side_by_side(table: str, svg: str) -> str:
    """The repr table with the block-grid picture to its right (as dask lays them out)."""
    return (
        '<div class="lazyarr-array" style="display:flex;align-items:center;gap:1.5em">'
        f"<div>{table}</div><div>{svg}</div></div>"
    )
