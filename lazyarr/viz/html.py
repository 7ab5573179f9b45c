"""A self-contained HTML report of a plan: inline SVG, tables, no network, no scripts.

The picture is lazyarr's own SVG (``viz.svg``), so the report needs no
Graphviz; per-worker bars and block maps appear when the plan is placed or
a run measured workers. :func:`to_html_fragment` is the notebook version
(no ``<html>`` wrapper).
"""

from __future__ import annotations

import html

from lazyarr.optimize.plan import Plan
from lazyarr.viz.dot import COLOURS
from lazyarr.viz.facts import Measured, fmt_bytes, fmt_count, fmt_seconds, plan_facts
from lazyarr.viz.svg import to_svg
from lazyarr.viz.text import explain_text, fusion_reasons
from lazyarr.viz.workers import METRICS, PALETTE, block_map_svg, worker_rows, workers_svg

__all__ = ["to_html", "to_html_fragment"]

STYLE = """
.lazyarr-report { font-family: Helvetica, Arial, sans-serif; font-size: 13px; color: #222; }
.lazyarr-report h1 { font-size: 18px; margin: 4px 0; }
.lazyarr-report h2 { font-size: 15px; margin: 18px 0 6px; }
.lazyarr-report table { border-collapse: collapse; margin: 4px 0; }
.lazyarr-report th, .lazyarr-report td { border: 1px solid #ddd; padding: 3px 7px;
  text-align: left; vertical-align: top; }
.lazyarr-report th { background: #f4f4f5; }
.lazyarr-report td.num { text-align: right; font-variant-numeric: tabular-nums;
  white-space: nowrap; }
.lazyarr-report td.name { white-space: nowrap; }
.lazyarr-report tr.over td { color: #b91c1c; font-weight: bold; }
.lazyarr-report .swatch { display: inline-block; width: 10px; height: 10px;
  border: 1px solid #888; margin-right: 4px; }
.lazyarr-report .plan-picture { overflow-x: auto; border: 1px solid #eee; padding: 4px; }
.lazyarr-report pre { background: #fafafa; border: 1px solid #eee; padding: 8px;
  overflow-x: auto; font-size: 12px; }
"""


def _e(x: object) -> str:
    return html.escape(str(x))


# Alignment is also written on each cell: a notebook that is not trusted (reopened, or
# shown by GitHub) drops the <style> block, and Jupyter's own table style right-aligns
# every cell and centres the table.
LEFT = "text-align:left"
RIGHT = "text-align:right"


def _table(head: list[str], rows: list[list[str]], classes: list[str] | None = None) -> str:
    cls = classes or [""] * len(rows)
    th = "".join(f'<th style="{LEFT}">{_e(h)}</th>' for h in head)
    body = "".join(f'<tr class="{c}">' + "".join(cells) + "</tr>" for cells, c in zip(rows, cls))
    return (
        f'<table style="margin-left:0;margin-right:auto"><thead><tr>{th}</tr></thead>'
        f"<tbody>{body}</tbody></table>"
    )


def _num(text: str) -> str:
    return f'<td class="num" style="{RIGHT}">{_e(text)}</td>'


def _td(text: str) -> str:
    return f'<td style="{LEFT}">{_e(text)}</td>'


def _stages_table(plan: Plan, memory_limit: int | None, measured: Measured | None) -> str:
    facts = plan_facts(plan, memory_limit)
    fuse = fusion_reasons(plan)
    head = ["#", "stage", "kind", "ops", "blocks", "in", "out", "est peak/block", "est flops"]
    if measured is not None:
        head.append("measured")
    head.append("why")
    rows, classes = [], []
    for k, (name, f) in enumerate(facts.items(), start=1):
        swatch = f'<span class="swatch" style="background:{COLOURS[f.style]}"></span>'
        why = "; ".join(
            f"{m.name}: {fuse[m.name]}" for m in plan.stages[name].members if m.name in fuse
        )
        cells = [
            _num(str(k)),
            f'<td class="name" style="{LEFT}">{swatch}{_e(f.title)}'
            f"{' (output)' if f.output else ''}</td>",
            _td(f.kind + (", fused" if f.style == "fused" else "")),
            _td(" → ".join(f.ops)),
            _num(f.grid),
            _num(fmt_bytes(f.in_bytes)),
            _num(fmt_bytes(f.out_bytes)),
            _num(fmt_bytes(f.peak_bytes) + (" !" if f.over_limit else "")),
            _num(fmt_count(f.flops)),
        ]
        if measured is not None:
            cells.append(_num(fmt_seconds(measured.stage_seconds.get(name))))
        cells.append(_td(why))
        rows.append(cells)
        classes.append("over" if f.over_limit else "")
    return _table(head, rows, classes)


def _workers_section(plan: Plan, measured: Measured | None) -> str:
    rows = worker_rows(plan, measured)
    if not rows:
        return ""
    head = ["worker", "blocks"]
    for title in METRICS.values():
        head += [f"{title} planned"] + ([f"{title} measured"] if measured else [])
    if measured:
        head.append("tasks")
    body = []
    for r in rows:
        cells = [_td(r.label), _num(str(r.blocks))]
        for metric in METRICS:
            cells.append(_num(fmt_bytes(r.planned.get(metric))))
            if measured:
                cells.append(_num(fmt_bytes(r.measured.get(metric))))
        if measured:
            cells.append(_num("-" if r.tasks is None else str(r.tasks)))
        body.append(cells)
    maps = "".join(
        f"<div><b>{_e(s.name)}</b><br>{block_map_svg(s)}</div>"
        for s in plan.stages.values()
        if s.worker is not None
    )
    out = f"<h2>Workers</h2>{workers_svg(rows)}{_table(head, body)}"
    if maps:
        legend = " ".join(
            f'<span class="swatch" style="background:{PALETTE[r.index % len(PALETTE)]}"></span>'
            f"{_e(r.label)}"
            for r in rows
            if r.index is not None
        )
        out += (
            f"<h2>Blocks per worker</h2><p>{legend}</p>"
            f"<div style='display:flex;flex-wrap:wrap;gap:14px'>{maps}</div>"
        )
    return out


def to_html_fragment(
    plan: Plan,
    executor: str | None = None,
    memory_limit: int | None = None,
    measured: Measured | None = None,
    title: str = "lazyarr plan",
    explain: bool = True,
) -> str:
    """The report as a ``<div>`` (for notebooks): picture, tables, explain text."""
    facts = plan_facts(plan, memory_limit)
    summary = (
        f"{len(facts)} stages, {sum(f.nblocks for f in facts.values())} blocks, "
        f"executor {executor or '-'}, outputs "
        f"{', '.join(plan.labels.get(o, o) for o in plan.outputs)}"
    )
    if measured is not None and measured.seconds is not None:
        summary += f"; measured {fmt_seconds(measured.seconds)}"
    legend = " ".join(
        f'<span class="swatch" style="background:{c}"></span>{_e(k)}' for k, c in COLOURS.items()
    )
    parts = [
        f'<div class="lazyarr-report"><style>{STYLE}</style>',
        f"<h1>{_e(title)}</h1><p>{_e(summary)}</p><p>{legend}"
        " &nbsp; red border: estimated peak memory over the limit; double border: output</p>",
        f'<div class="plan-picture">{to_svg(plan, memory_limit, measured)}</div>',
        "<h2>Stages</h2>",
        _stages_table(plan, memory_limit, measured),
        _workers_section(plan, measured),
    ]
    if plan.history:
        parts.append("<h2>Passes</h2>")
        parts.append(
            _table(
                ["pass", "time", "what changed"],
                [[_td(h.name), _num(fmt_seconds(h.seconds)), _td(h.summary)] for h in plan.history],
            )
        )
    if explain:
        text = explain_text(plan, executor, memory_limit, measured)
        parts.append(f"<h2>Explain</h2><pre>{_e(text)}</pre>")
    parts.append("</div>")
    return "\n".join(parts)


def to_html(
    plan: Plan,
    executor: str | None = None,
    memory_limit: int | None = None,
    measured: Measured | None = None,
    title: str = "lazyarr plan",
) -> str:
    """A complete HTML document; opens offline in any browser."""
    body = to_html_fragment(plan, executor, memory_limit, measured, title)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{_e(title)}</title>"
        '<link rel="icon" href="data:,">'
        f"</head><body>\n{body}\n</body></html>\n"
    )
