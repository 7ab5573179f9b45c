"""``explain``: a plan as text, like a database EXPLAIN, saying what runs and why.

Stages in run order with their fused ops, block grid, bytes in and out,
estimated peak memory per block and flops; the executor and the placement
summary; which passes changed what (``plan.history``); and the reasons the
passes recorded: per graph node why it was or was not fused
(``plan.notes["fuse"]``), per stage why blocks went where
(``plan.notes["place"]``). With predicted seconds per stage (the cost
model at the executor's measured speeds), each stage shows them; with
measurements, the measured seconds per stage and per-worker bytes stand
beside the predictions.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from lazyarr.optimize.memory import MemoryEstimate, estimate
from lazyarr.optimize.plan import Plan
from lazyarr.viz.facts import (
    Measured,
    StageFacts,
    fmt_bytes,
    fmt_count,
    fmt_seconds,
    plan_facts,
)
from lazyarr.viz.workers import METRICS, worker_rows

__all__ = ["explain_text", "fusion_reasons", "placement_reasons"]

INDENT = "      "


def fusion_reasons(plan: Plan) -> dict[str, str]:
    """Graph node name -> why it was or was not fused (empty before the fuse pass)."""
    fuse = plan.notes.get("fuse", {})
    return {str(k): str(v) for k, v in fuse.items()} if isinstance(fuse, Mapping) else {}


def placement_reasons(plan: Plan) -> dict[str, str]:
    """Stage name -> why its blocks went where they did (from ``notes["place"]``)."""
    place = plan.notes.get("place", {})
    if not isinstance(place, Mapping):
        return {}
    out: dict[str, str] = {}
    for key in ("stages", "reasons"):
        table = place.get(key)
        if isinstance(table, Mapping):
            out.update({str(k): str(v) for k, v in table.items()})
    out.update({k: v for k, v in place.items() if k in plan.stages and isinstance(v, str)})
    for name, s in plan.stages.items():
        why = s.notes.get("place")
        if isinstance(why, str):
            out.setdefault(name, why)
    return out


def _placement_facts(plan: Plan) -> list[str]:
    """Scalar entries of ``notes["place"]`` as "key: value" lines (bytes formatted)."""
    place = plan.notes.get("place", {})
    if not isinstance(place, Mapping):
        return []
    lines = []
    if isinstance(place.get("summary"), str):
        lines.append(place["summary"])
    for k, v in place.items():
        if k == "summary" or k in plan.stages or isinstance(v, (Mapping, list, tuple)):
            continue
        if isinstance(v, (int, float)) and "bytes" in k:
            v = fmt_bytes(v)
        lines.append(f"{k}: {v}")
    return lines


def _reads(plan: Plan, name: str) -> str:
    s = plan.stages[name]
    seen: dict[str, int] = {}
    for src, e in zip(s.inputs, s.input_exprs):
        seen.setdefault(src, e.nbytes)
    return ", ".join(f"{src} ({fmt_bytes(n)})" for src, n in seen.items())


@dataclass(frozen=True)
class _Seconds:
    """Per stage: seconds predicted (None: not predicted) and measured (None: no run)."""

    predicted: Mapping[str, float] | None
    measured: Measured | None


def _time_lines(name: str, seconds: _Seconds) -> list[str]:
    lines = []
    guess = None if seconds.predicted is None else seconds.predicted.get(name)
    if seconds.predicted is not None:
        made = "made inside its reader's tasks" if guess is None else fmt_seconds(guess)
        lines.append(f"{INDENT}predicted {made}")
    if seconds.measured is not None:
        secs = seconds.measured.stage_seconds.get(name)
        cell = fmt_seconds(secs) if secs is not None else "not timed"
        if secs and guess:
            cell += f" (predicted / measured {guess / secs:.2g})"
        lines.append(f"{INDENT}measured  {cell}")
    return lines


def _stage(
    k: int,
    f: StageFacts,
    plan: Plan,
    fuse: dict[str, str],
    place: dict[str, str],
    memory_limit: int | None,
    seconds: _Seconds,
) -> list[str]:
    kind = f"{f.kind}, fused {len(f.ops)} ops" if f.style == "fused" else f.kind
    out_mark = "  [output]" if f.output else ""
    lines = [f"[{k}] {f.title}  ({kind}){out_mark}"]
    lines.append(f"{INDENT}ops       {' -> '.join(f.ops)}")
    lines.append(f"{INDENT}grid      {f.grid} blocks of {f.chunksize}, shape {f.shape} {f.dtype}")
    reads = _reads(plan, f.name)
    if reads:
        lines.append(f"{INDENT}reads     {reads}")
    peak = f"est peak/block {fmt_bytes(f.peak_bytes)}"
    if f.over_limit:
        peak += f"  ! OVER memory limit {fmt_bytes(memory_limit)}"
    lines.append(
        f"{INDENT}bytes     in {fmt_bytes(f.in_bytes)}, out {fmt_bytes(f.out_bytes)}, {peak}"
    )
    lines.append(f"{INDENT}flops     est {fmt_count(f.flops)}")
    if f.workers:
        spread = []
        for w, n in sorted(f.workers.items()):
            cell = f"w{w}: {n} blocks, {fmt_bytes((f.worker_bytes or {}).get(w))}"
            if f.moved_bytes is not None:
                cell += f" (+{fmt_bytes(f.moved_bytes.get(w))} in)"
            spread.append(cell)
        lines.append(f"{INDENT}placed    {'; '.join(spread)}")
        placement = plan.stages[f.name].placement
        if placement is not None:
            lines.append(f"{INDENT}strategy  {placement.strategy}")
    lines += _time_lines(f.name, seconds)
    s = plan.stages[f.name]
    whys = [(m.name, fuse[m.name]) for m in s.members if m.name in fuse]
    if f.name in fuse and all(n != f.name for n, _ in whys):
        whys.append((f.name, fuse[f.name]))
    for i, (node, why) in enumerate(whys):
        label = "why fuse" if i == 0 else ""
        lines.append(f"{INDENT}{label:<10}{node}: {why}")
    for group in plan.siblings:
        if f.name in group:
            others = ", ".join(n for n in group if n != f.name)
            lines.append(f"{INDENT}siblings  one pass over shared inputs with {others}")
    if f.name in place:
        lines.append(f"{INDENT}why place {place[f.name]}")
    lines += [f"{INDENT}blocks    {r}" for r in [plan.notes.get("reblock", {}).get(f.name)] if r]
    return lines


def _workers(plan: Plan, measured: Measured | None) -> list[str]:
    rows = worker_rows(plan, measured)
    if not rows:
        return []
    lines = ["", "Workers (planned" + (" | measured)" if measured else ")")]
    width = max(len(r.label) for r in rows)
    for r in rows:
        cells = []
        for metric, title in METRICS.items():
            p, m = r.planned.get(metric), r.measured.get(metric)
            if p is None and m is None:
                continue
            cell = f"{title} {fmt_bytes(p)}"
            if measured is not None:
                cell += f" | {fmt_bytes(m)}"
            cells.append(cell)
        if r.blocks:
            cells.append(f"{r.blocks} blocks")
        if r.tasks is not None:
            cells.append(f"{r.tasks} tasks run")
        lines.append(f"  {r.label:<{width}}  " + "; ".join(cells))
    return lines


def _predicted_peak(plan: Plan, memory_limit: int | None, est: MemoryEstimate | None) -> str:
    """One line: the predicted peak per process (or per worker) and its parts, as the memory
    check counts them (``est``; None: one task at a time), and what blocks kept for many
    readers add (rechunks, transposes in other chunks)."""
    workers = max(1, len(plan.workers))
    where = f"per worker of {workers}" if plan.workers else "per process"
    if est is None:
        est = estimate(plan, 1, workers, gathered=not plan.workers)
        line = f"predicted peak: {fmt_bytes(est.peak)} {where}, one task at a time"
    else:
        line = f"predicted peak: {fmt_bytes(est.peak)} {where} = {est.parts()}"
    if est.fanout:
        line += f" ({fmt_bytes(est.fanout)} kept for readers of many blocks)"
    if memory_limit is not None and est.peak > memory_limit:
        line += (
            "; over the limit: rechunks that gather from many blocks run through a scratch store"
            if est.fanout
            else "; over the limit: computing it raises MemoryLimitError, saying what would fit"
        )
    return line


def explain_text(
    plan: Plan,
    executor: str | None = None,
    memory_limit: int | None = None,
    measured: Measured | None = None,
    predicted: Mapping[str, float] | None = None,
    memory: MemoryEstimate | None = None,
) -> str:
    """The EXPLAIN text of ``plan``; ``measured`` adds a run's numbers beside the estimates,
    ``predicted`` the cost model's seconds per stage, ``memory`` the memory check's estimate
    for the executor (None: one task at a time)."""
    facts = plan_facts(plan, memory_limit)
    fuse = fusion_reasons(plan)
    place = placement_reasons(plan)
    n_fused = sum(f.style == "fused" for f in facts.values())
    blocks = sum(f.nblocks for f in facts.values())
    lines = [
        f"lazyarr plan: {len(facts)} stages ({n_fused} fused), {blocks} blocks, "
        f"outputs {', '.join(facts[o].title for o in plan.outputs)}",
        f"executor: {executor or (measured.executor if measured else '-')}; "
        f"memory limit: {fmt_bytes(memory_limit) if memory_limit is not None else 'none'}",
    ]
    if measured is not None and measured.seconds is not None:
        lines.append(f"measured: {fmt_seconds(measured.seconds)} in total on {measured.executor}")
    lines.append(_predicted_peak(plan, memory_limit, memory))
    over = [f.name for f in facts.values() if f.over_limit]
    if over:
        lines.append(f"! {len(over)} stage(s) may exceed the memory limit: {', '.join(over)}")
    if plan.history:
        lines += ["", "Passes"]
        for h in plan.history:
            lines.append(f"  {h.name:<10} {fmt_seconds(h.seconds):>9}  {h.summary}")
    else:
        lines += ["", "Passes: none run (the raw graph)"]
    lines += ["", "Stages (in run order)"]
    for k, f in enumerate(facts.values(), start=1):
        lines += _stage(k, f, plan, fuse, place, memory_limit, _Seconds(predicted, measured))
    placement = _placement_facts(plan)
    if placement:
        lines += ["", "Placement"] + [f"  {p}" for p in placement]
    lines += _workers(plan, measured)
    return "\n".join(lines) + "\n"
