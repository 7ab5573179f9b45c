"""lazyarr's own layered SVG drawing of a plan, so pictures need no Graphviz.

Stages are placed in rows by ``networkx.topological_generations`` (inputs
above readers), ordered within a row by the mean position of their inputs
(one barycentre sweep, which removes most crossings in array plans), and
joined by curved edges labelled with bytes. Boxes carry the same lines,
colours, red over-limit mark and tooltips (SVG ``<title>``) as the DOT text.
"""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Sequence

import networkx as nx

from lazyarr.optimize.plan import Plan
from lazyarr.viz.dot import COLOURS, OVER_LIMIT, stage_lines, tooltip
from lazyarr.viz.facts import Measured, edges, fmt_bytes, plan_facts

__all__ = ["EdgeLayout", "PlanLayout", "layout", "overlaps", "place_label", "to_svg"]

CHAR_W = 6.3  # average glyph width of 11px Helvetica
BOLD_CHAR_W = 7.6  # of the bold title line, in the widest common fallback (DejaVu Sans Bold)
LINE_H = 15
PAD = 8
GAP_X = 28
GAP_Y = 46
MARGIN = 14
MAX_ROW = 8  # stages per row before a generation wraps
MIN_W, MAX_W = 150, 300

Box = tuple[float, float, float, float]
"""x, y, width, height."""

LABEL_CHAR_W = 5.6  # a generous average glyph width of 9px Helvetica
LABEL_H = 11.0
# where along an edge its label may sit, most preferred first (0: source, 1: target)
LABEL_TS = tuple(sorted((k / 20 for k in range(1, 20)), key=lambda t: (abs(t - 0.5), t)))


def _rows(g: nx.DiGraph, order: dict[str, int]) -> list[list[str]]:
    rows: list[list[str]] = []
    x: dict[str, float] = {}
    for gen in nx.topological_generations(g):
        names = sorted(gen, key=order.__getitem__)
        if rows:

            def centre(n: str) -> float:
                preds = [x[p] for p in g.predecessors(n) if p in x]
                return sum(preds) / len(preds) if preds else float(order[n])

            names.sort(key=lambda n: (centre(n), order[n]))
        for k in range(0, len(names), MAX_ROW):
            row = names[k : k + MAX_ROW]
            for i, n in enumerate(row):
                x[n] = i - (len(row) - 1) / 2
            rows.append(row)
    return rows


def _fit(line: str, width: float, char_w: float = CHAR_W) -> str:
    most = max(int((width - 2 * PAD) / char_w), 4)
    return line if len(line) <= most else line[: most - 1] + "…"


def _line_width(lines: Sequence[str]) -> float:
    """The widest line of a box; the first (the stage's title) is drawn bold."""
    return max(len(t) * (BOLD_CHAR_W if i == 0 else CHAR_W) for i, t in enumerate(lines))


@dataclasses.dataclass(frozen=True)
class PlanLayout:
    """Where everything of the picture goes: a stage's text lines and box, every edge."""

    width: float
    height: float
    lines: dict[str, list[str]]
    boxes: dict[str, Box]
    edges: list[EdgeLayout]


def layout(
    plan: Plan,
    memory_limit: int | None = None,
    measured: Measured | None = None,
    title: str | None = None,
) -> PlanLayout:
    """The picture's geometry (tests check it: no edge label covers a box)."""
    facts = plan_facts(plan, memory_limit)
    seconds = measured.stage_seconds if measured else {}
    lines = {n: stage_lines(f, memory_limit, seconds.get(n)) for n, f in facts.items()}
    size = {
        n: (
            min(max(_line_width(ls) + 2 * PAD, MIN_W), MAX_W),
            len(ls) * LINE_H + 2 * PAD - 3,
        )
        for n, ls in lines.items()
    }
    g = plan.to_graph()
    order = {n: i for i, n in enumerate(plan.stages)}
    rows = _rows(g, order)

    widths = [sum(size[n][0] for n in row) + GAP_X * (len(row) - 1) for row in rows]
    total_w = max(widths, default=MIN_W) + 2 * MARGIN
    head = 24 if title else 0
    pos: dict[str, tuple[float, float]] = {}
    y = MARGIN + head
    for row, row_w in zip(rows, widths):
        x = (total_w - row_w) / 2
        for n in row:
            pos[n] = (x, y)
            x += size[n][0] + GAP_X
        y += max(size[n][1] for n in row) + GAP_Y
    total_h = y - GAP_Y + MARGIN if rows else 2 * MARGIN + head
    boxes = {n: (*pos[n], *size[n]) for n in pos}
    return PlanLayout(total_w, total_h, lines, boxes, _edges(plan, pos, size))


def to_svg(
    plan: Plan,
    memory_limit: int | None = None,
    measured: Measured | None = None,
    title: str | None = None,
) -> str:
    """An SVG document (text) of ``plan``; embeddable inline in HTML."""
    facts = plan_facts(plan, memory_limit)
    lay = layout(plan, memory_limit, measured, title)
    total_w, total_h = lay.width, lay.height
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="lazyarr-plan" width="{total_w:.0f}" '
        f'height="{total_h:.0f}" viewBox="0 0 {total_w:.0f} {total_h:.0f}" '
        'font-family="Helvetica, Arial, sans-serif" font-size="11">',
        '<defs><marker id="lazyarr-arrow" viewBox="0 0 10 10" refX="9" refY="5" '
        'markerWidth="7" markerHeight="7" orient="auto-start-reverse">'
        '<path d="M 0 0 L 10 5 L 0 10 z" fill="#777"/></marker></defs>',
    ]
    if title:
        out.append(
            f'<text x="{total_w / 2:.0f}" y="{MARGIN + 12}" text-anchor="middle" '
            f'font-size="13" font-weight="bold">{html.escape(title)}</text>'
        )
    drawn = [_edge_svg(e) for e in lay.edges]
    out += [path for path, _ in drawn]
    for n, f in facts.items():
        x, y, w, h = lay.boxes[n]
        out += _box(n, lay.lines[n], (x, y), (w, h), f.style, f.output, f.over_limit, tooltip(f))
    out += [label for _, label in drawn]
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _bezier(p: tuple[float, float, float, float, float], t: float) -> tuple[float, float]:
    """Point ``t`` of the edge curve from (x1, y1) to (x2, y2) with vertical tangents."""
    x1, y1, x2, y2, bend = p
    u = 1 - t
    a, b, c, d = u**3, 3 * u * u * t, 3 * u * t * t, t**3
    return a * x1 + b * x1 + c * x2 + d * x2, a * y1 + b * (y1 + bend) + c * (y2 - bend) + d * y2


def overlaps(a: Box, b: Box, margin: float = 0.0) -> bool:
    """Whether two boxes overlap (``margin`` widens ``b`` on every side)."""
    return (
        a[0] < b[0] + b[2] + margin
        and b[0] - margin < a[0] + a[2]
        and a[1] < b[1] + b[3] + margin
        and b[1] - margin < a[1] + a[3]
    )


def place_label(
    curve: tuple[float, float, float, float, float],
    text: str,
    boxes: Sequence[Box],
    taken: Sequence[Box],
) -> Box:
    """The box of an edge label beside its curve, clear of every stage box and earlier label.

    Tries points along the curve (middle first), right of the curve then left;
    an edge that passes behind a box of a row it skips gets its label in a gap
    between rows. Falls back to the middle when nothing is free.
    """
    w = len(text) * LABEL_CHAR_W + 4
    x1, y1, x2, y2, bend = curve
    # only what lies near the curve (inside its control points' hull) can be in the way
    top, bottom = min(y1, y2 - bend), max(y2, y1 + bend)
    left, right = min(x1, x2) - 3 * w - 12, max(x1, x2) + 3 * w + 12
    reach = (left, top - LABEL_H, right - left, bottom - top + 2 * LABEL_H)
    near = [b for b in boxes if overlaps(b, reach)]
    near_labels = [b for b in taken if overlaps(b, reach)]
    for shift in (0.0, 1.0, 2.0):  # beside the curve, then a label width further out
        for t in LABEL_TS:
            x, y = _bezier(curve, t)
            for lx in (x + 4 + shift * w, x - 4 - w - shift * w):
                box = (lx, y - LABEL_H / 2, w, LABEL_H)
                if not any(overlaps(box, b, 2.0) for b in near) and not any(
                    overlaps(box, b) for b in near_labels
                ):
                    return box
    x, y = _bezier(curve, 0.5)
    return (x + 4, y - LABEL_H / 2, w, LABEL_H)


@dataclasses.dataclass(frozen=True)
class EdgeLayout:
    """One edge: its ends, byte label text, curve and label box."""

    src: str
    dst: str
    text: str
    curve: tuple[float, float, float, float, float]
    """x1, y1, x2, y2, bend of the cubic curve."""
    label: Box


def _edges(
    plan: Plan,
    pos: dict[str, tuple[float, float]],
    size: dict[str, tuple[float, float]],
) -> list[EdgeLayout]:
    """Every edge's curve and the box of its byte label (clear of the stage boxes)."""
    boxes = [(*pos[n], *size[n]) for n in pos]
    out: list[EdgeLayout] = []
    for src, dst, nbytes in edges(plan):
        (sx, sy), (sw, sh) = pos[src], size[src]
        (dx, dy), (dw, _) = pos[dst], size[dst]
        x1, y1, x2, y2 = sx + sw / 2, sy + sh, dx + dw / 2, dy - 2
        curve = (x1, y1, x2, y2, max((y2 - y1) / 2, 20))
        text = fmt_bytes(nbytes)
        label = place_label(curve, text, boxes, [e.label for e in out])
        out.append(EdgeLayout(src, dst, text, curve, label))
    return out


def _edge_svg(e: EdgeLayout) -> tuple[str, str]:
    """An edge's path (drawn under the boxes) and its label (drawn over them)."""
    x1, y1, x2, y2, bend = e.curve
    tip = f"<title>{html.escape(f'{e.src} -> {e.dst}: {e.text}')}</title>"
    path = (
        f'<g class="edge" data-src="{html.escape(e.src)}" data-dst="{html.escape(e.dst)}">'
        f'{tip}<path d="M {x1:.1f} {y1:.1f} C {x1:.1f} {y1 + bend:.1f}, {x2:.1f} '
        f'{y2 - bend:.1f}, {x2:.1f} {y2:.1f}" fill="none" stroke="#777" '
        'stroke-width="1.2" marker-end="url(#lazyarr-arrow)"/></g>'
    )
    lx, ly, _, lh = e.label
    label = (
        f'<text class="edge-label" x="{lx + 2:.1f}" y="{ly + lh - 2.5:.1f}" font-size="9" '
        'fill="#444" stroke="#fff" stroke-width="3" paint-order="stroke">'
        f"{tip}{html.escape(e.text)}</text>"
    )
    return path, label


def _box(
    name: str,
    lines: Sequence[str],
    xy: tuple[float, float],
    wh: tuple[float, float],
    style: str,
    output: bool,
    over: bool,
    tip: str,
) -> list[str]:
    (x, y), (w, h) = xy, wh
    stroke, width = (OVER_LIMIT, 3) if over else ("#555", 1)
    cls = f"stage {style}" + (" over-limit" if over else "") + (" output" if output else "")
    out = [
        f'<g class="{cls}" data-stage="{html.escape(name)}">',
        f"<title>{html.escape(tip)}</title>",
    ]
    if output:
        out.append(
            f'<rect x="{x - 3:.1f}" y="{y - 3:.1f}" width="{w + 6:.1f}" height="{h + 6:.1f}" '
            f'rx="9" fill="none" stroke="{stroke}" stroke-width="1"/>'
        )
    out.append(
        f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" rx="6" '
        f'fill="{COLOURS[style]}" stroke="{stroke}" stroke-width="{width}"/>'
    )
    for i, line in enumerate(lines):
        weight = ' font-weight="bold"' if i == 0 else ""
        fill = OVER_LIMIT if line.startswith("! ") else "#222"
        text = _fit(line, w, BOLD_CHAR_W if i == 0 else CHAR_W)
        out.append(
            f'<text x="{x + w / 2:.1f}" y="{y + PAD + 8 + i * LINE_H:.1f}" text-anchor="middle" '
            f'fill="{fill}"{weight}>{html.escape(text)}</text>'
        )
    out.append("</g>")
    return out
