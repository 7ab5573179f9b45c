"""A Plan as Graphviz DOT text: a pure function, tested on its text.

One box per stage listing the ops it computes (several when fused),
coloured by kind, edges labelled with the bytes they carry, a red border and
a warning line where the estimated peak memory of one block exceeds the
memory limit, and a tooltip with shape, chunks, blocks, bytes and
estimated flops. Rendering the text to SVG/PNG is ``viz.render``'s job.
"""

from __future__ import annotations

from lazyarr.optimize.plan import Plan
from lazyarr.viz.facts import (
    Measured,
    StageFacts,
    edges,
    fmt_bytes,
    fmt_count,
    fmt_seconds,
    plan_facts,
)

__all__ = ["COLOURS", "stage_lines", "to_dot", "tooltip"]

COLOURS = {
    "source": "#dbeafe",
    "map": "#dcfce7",
    "reduce": "#fef3c7",
    "fused": "#ede9fe",
}
OVER_LIMIT = "#dc2626"
MAX_OPS_SHOWN = 12


def _quote(text: str) -> str:
    """A DOT double-quoted string (newlines become ``\\n`` line breaks)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def stage_lines(
    f: StageFacts, memory_limit: int | None = None, seconds: float | None = None
) -> list[str]:
    """The text lines of a stage's box (shared by the DOT and SVG pictures)."""
    kind = f"fused {f.kind}, {len(f.ops)} ops" if f.style == "fused" else f.kind
    lines = [f.title, f"[{kind}]"]
    ops = list(f.ops)
    if len(ops) > MAX_OPS_SHOWN:
        ops = [*ops[: MAX_OPS_SHOWN - 2], f"... {len(f.ops) - MAX_OPS_SHOWN + 1} more", ops[-1]]
    if f.style == "fused" or f.ops[-1] != f.name.split("-")[0]:
        lines += ops
    lines.append(f"{f.grid} blocks, {fmt_bytes(f.out_bytes)}")
    if f.over_limit:
        lines.append(f"! peak {fmt_bytes(f.peak_bytes)} > limit {fmt_bytes(memory_limit)}")
    if seconds is not None:
        lines.append(f"measured {fmt_seconds(seconds)}")
    return lines


def tooltip(f: StageFacts) -> str:
    """Shape, chunks, blocks, bytes and flops of a stage, one fact per line."""
    lines = [
        f"{f.title} ({f.kind}{', fused' if f.style == 'fused' else ''})",
        f"ops: {' -> '.join(f.ops)}",
        f"shape: {f.shape} {f.dtype}",
        f"chunks: {f.chunksize}",
        f"blocks: {f.grid}",
        f"bytes: out {fmt_bytes(f.out_bytes)}, in {fmt_bytes(f.in_bytes)}, "
        f"block {fmt_bytes(f.block_bytes)}",
        f"est peak memory per block: {fmt_bytes(f.peak_bytes)}",
        f"est flops: {fmt_count(f.flops)}",
    ]
    if f.workers:
        spread = ", ".join(f"w{w}: {n}" for w, n in sorted(f.workers.items()))
        lines.append(f"blocks per worker: {spread}")
    return "\n".join(lines)


def to_dot(
    plan: Plan,
    memory_limit: int | None = None,
    measured: Measured | None = None,
    title: str | None = None,
) -> str:
    """The DOT text of ``plan`` (deterministic: same plan, same text)."""
    facts = plan_facts(plan, memory_limit)
    seconds = measured.stage_seconds if measured else {}
    out = [
        "digraph lazyarr_plan {",
        '  graph [rankdir=TB, fontname="Helvetica", fontsize=11, nodesep=0.3, ranksep=0.45'
        + (f", labelloc=t, label={_quote(title)}" if title else "")
        + "];",
        '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10, '
        'color="#555555"];',
        '  edge [fontname="Helvetica", fontsize=9, color="#777777"];',
    ]
    for name, f in facts.items():
        attrs = [
            f"label={_quote(chr(10).join(stage_lines(f, memory_limit, seconds.get(name))))}",
            f'fillcolor="{COLOURS[f.style]}"',
            f"tooltip={_quote(tooltip(f))}",
            f'class="stage {f.style}"',
        ]
        if f.output:
            attrs.append("peripheries=2")
        if f.over_limit:
            attrs += [f'color="{OVER_LIMIT}"', "penwidth=3", f'fontcolor="{OVER_LIMIT}"']
        out.append(f"  {_quote(name)} [{', '.join(attrs)}];")
    for src, dst, nbytes in edges(plan):
        out.append(
            f"  {_quote(src)} -> {_quote(dst)} [label={_quote(fmt_bytes(nbytes))}, "
            f"tooltip={_quote(f'{src} -> {dst}: {fmt_bytes(nbytes)}')}];"
        )
    out.append("}")
    return "\n".join(out) + "\n"
