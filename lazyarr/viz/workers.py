"""Per-worker loads: planned (placement pass) and measured (a run), as rows and SVG bars.

Planned loads come from ``plan.notes["place"]`` (the ``place`` pass), read tolerantly::

    {"workers": ["tcp://127.0.0.1:4001", ...],        # index = worker number
     "per_worker": {"memory": [...], "net_in": [...], "net_out": [...]},   # per worker
     "stages": {stage name: "why its blocks went there"}, ...}

The loads may also sit under ``"loads"``, be a list of per-worker dicts or a
dict keyed by address; ``bytes_in``/``bytes_out``/``peak_memory`` are
accepted for the three metrics. Without them, the planned memory of a worker
is the bytes of the blocks placed on it (``stage.worker``). Measured loads
come from the run's ``stats.extra["workers"]`` = {address: {"bytes_in",
"bytes_out", "peak_memory", "tasks"}}.
"""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from lazyarr.optimize.plan import Plan, Stage
from lazyarr.viz.facts import Measured, block_nbytes, fmt_bytes

__all__ = ["METRICS", "WorkerRow", "block_map_svg", "worker_rows", "workers_svg"]

METRICS = {"memory": "memory", "net_in": "network in", "net_out": "network out"}
_ALIASES = {
    "memory": ("memory", "peak_memory", "mem", "bytes"),
    # real bytes first: the placement simulator's net_in/net_out weigh same-host copies less
    "net_in": ("bytes_in", "net_in", "in"),
    "net_out": ("bytes_out", "net_out", "out"),
}
PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7")


@dataclasses.dataclass
class WorkerRow:
    """One worker: planned and measured memory and network bytes."""

    index: int | None
    address: str
    blocks: int = 0
    planned: dict[str, float] = dataclasses.field(default_factory=dict)
    measured: dict[str, float] = dataclasses.field(default_factory=dict)
    tasks: int | None = None

    @property
    def label(self) -> str:
        short = self.address.split("://")[-1]
        return f"w{self.index} {short}" if self.index is not None else short


def _metric(d: Mapping[str, Any], metric: str) -> float | None:
    for k in _ALIASES[metric]:
        v = d.get(k)
        if isinstance(v, (int, float, np.integer, np.floating)):
            return float(v)
    return None


def _planned_loads(place: Mapping[str, Any], addresses: list[str]) -> dict[int, dict[str, float]]:
    loads = place.get("per_worker", place.get("loads"))
    out: dict[int, dict[str, float]] = {}
    if isinstance(loads, Mapping) and any(
        isinstance(loads.get(k), Sequence) for keys in _ALIASES.values() for k in keys
    ):  # {"memory": [...], "net_in": [...]}
        for metric, keys in _ALIASES.items():
            for k in keys:
                seq = loads.get(k)
                if isinstance(seq, Sequence) and not isinstance(seq, str):
                    for i, v in enumerate(seq):
                        out.setdefault(i, {})[metric] = float(v)
                    break
    elif isinstance(loads, Mapping):  # {address: {...}}
        for addr, d in loads.items():
            if str(addr) not in addresses:
                addresses.append(str(addr))
            i = addresses.index(str(addr))
            out[i] = {m: v for m in _ALIASES if (v := _metric(d, m)) is not None}
    elif isinstance(loads, Sequence) and not isinstance(loads, str):  # [{...}, ...]
        for i, d in enumerate(loads):
            if isinstance(d, Mapping):
                out[i] = {m: v for m in _ALIASES if (v := _metric(d, m)) is not None}
    return out


def _placed_bytes(stage: Stage) -> dict[int, tuple[int, int]]:
    """Blocks and output bytes per worker for one placed stage."""
    w = np.asarray(stage.worker).ravel()
    b = block_nbytes(stage.expr).ravel()
    return {int(i): (int((w == i).sum()), int(b[w == i].sum())) for i in np.unique(w)}


def worker_rows(plan: Plan, measured: Measured | None = None) -> list[WorkerRow]:
    """One row per worker known to the plan's placement or to the measurements."""
    place = plan.notes.get("place", {})
    place = place if isinstance(place, Mapping) else {}
    addresses = [str(a) for a in place.get("workers", []) or []]
    planned = _planned_loads(place, addresses)
    blocks: dict[int, int] = {}
    produced: dict[int, float] = {}
    for s in plan.stages.values():
        if s.worker is None:
            continue
        for i, (n, b) in _placed_bytes(s).items():
            blocks[i] = blocks.get(i, 0) + n
            produced[i] = produced.get(i, 0) + b
    indices = sorted({*planned, *blocks, *range(len(addresses))})
    rows: dict[str, WorkerRow] = {}
    for i in indices:
        addr = addresses[i] if i < len(addresses) else f"worker {i}"
        load = dict(planned.get(i, {}))
        if "memory" not in load and i in produced:
            load["memory"] = produced[i]
        rows[addr] = WorkerRow(i, addr, blocks.get(i, 0), load)
    for addr, d in sorted((measured.workers if measured else {}).items()):
        row = rows.get(addr)
        if row is None:
            row = rows[addr] = WorkerRow(None, addr)
        row.measured = {m: v for m in _ALIASES if (v := _metric(d, m)) is not None}
        tasks = d.get("tasks")
        row.tasks = int(tasks) if isinstance(tasks, (int, float)) else None
    return list(rows.values())


def workers_svg(rows: Sequence[WorkerRow]) -> str:
    """Bars per worker and metric: planned (solid) above measured (light), one panel per metric."""
    if not rows:
        return ""
    label_w, panel_w, bar_h, gap, top = 190, 230, 9, 10, 34
    row_h = 2 * bar_h + gap
    width = label_w + panel_w * len(METRICS) + 10
    height = top + row_h * len(rows) + 26
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="lazyarr-workers" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" font-family="Helvetica, Arial, '
        'sans-serif" font-size="11">'
    ]
    for k, (metric, title) in enumerate(METRICS.items()):
        x0 = label_w + k * panel_w
        top_value = max(
            [r.planned.get(metric, 0) for r in rows] + [r.measured.get(metric, 0) for r in rows]
        )
        parts.append(f'<text x="{x0}" y="14" font-weight="bold">{title}</text>')
        parts.append(
            f'<text x="{x0}" y="27" fill="#666">max {html.escape(fmt_bytes(top_value))}</text>'
        )
        for j, r in enumerate(rows):
            y = top + j * row_h
            for m, (values, colour) in enumerate(((r.planned, "#4e79a7"), (r.measured, "#f28e2b"))):
                v = values.get(metric)
                if v is None:
                    continue
                w = 0 if top_value <= 0 else max(1.0, (panel_w - 70) * v / top_value)
                what = "planned" if m == 0 else "measured"
                yy = y + m * bar_h
                parts.append(
                    f'<rect class="bar {what}" x="{x0}" y="{yy}" width="{w:.1f}" '
                    f'height="{bar_h - 1}" fill="{colour}"><title>{html.escape(r.label)} '
                    f"{title} {what}: {html.escape(fmt_bytes(v))}</title></rect>"
                )
                parts.append(
                    f'<text x="{x0 + w + 3:.1f}" y="{yy + bar_h - 1}" font-size="9" '
                    f'fill="#333">{html.escape(fmt_bytes(v))}</text>'
                )
    for j, r in enumerate(rows):
        y = top + j * row_h + bar_h + 3
        text = r.label if len(r.label) <= 28 else r.label[:27] + "…"
        parts.append(f'<text x="4" y="{y}">{html.escape(text)}</text>')
    y = height - 8
    parts.append(f'<rect x="4" y="{y - 8}" width="10" height="8" fill="#4e79a7"/>')
    parts.append(f'<text x="18" y="{y}">planned</text>')
    parts.append(f'<rect x="80" y="{y - 8}" width="10" height="8" fill="#f28e2b"/>')
    parts.append(f'<text x="94" y="{y}">measured</text>')
    parts.append("</svg>")
    return "".join(parts)


def block_map_svg(stage: Stage, cell: int = 12, max_cells: int = 48) -> str:
    """Which worker computes each block of a placed stage (1-d and 2-d grids; else flattened)."""
    if stage.worker is None:
        return ""
    w = np.asarray(stage.worker)
    if w.ndim != 2:
        w = w.reshape(1, -1)
    w = w[:max_cells, :max_cells]
    rows, cols = w.shape
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="lazyarr-blockmap" '
        f'width="{cols * cell + 1}" height="{rows * cell + 1}">'
    ]
    for (i, j), v in np.ndenumerate(w):
        colour = PALETTE[int(v) % len(PALETTE)]
        parts.append(
            f'<rect x="{j * cell}" y="{i * cell}" width="{cell - 1}" height="{cell - 1}" '
            f'fill="{colour}"><title>block ({i}, {j}): worker {int(v)}</title></rect>'
        )
    parts.append("</svg>")
    return "".join(parts)
