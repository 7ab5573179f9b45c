"""What the latest compute did, as text and as an HTML table (``la.last_run()``'s reprs).

Executor, the wall time split into planning (building, optimizing and
lowering the plan into tasks), compiling (the Numba kernels, where the
executor compiles here) and running (the rest: tasks, scheduling, gathering), which
add up to the total; blocks; memory: what the run added to the resident set at
its peak (measured while it ran, per worker on a cluster) beside the memory
check's prediction, and the most bytes of blocks the executor held; one row per stage (its name, the
name the user gave it where known, the measured time (on one process its
tasks' time summed over threads, on a cluster the span from its first task's
start to its last task's end), the time the cost model predicted for it
where the executor measured the machine's speeds, and output bytes) and the
plan's shape (stages, fused groups).
Only formats what the run already recorded. Pure.
"""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Mapping
from typing import Any

from lazyarr.optimize.plan import Plan
from lazyarr.viz.facts import fmt_bytes, fmt_seconds, plan_facts

__all__ = ["RunRow", "RunSummary", "run_summary"]


@dataclasses.dataclass(frozen=True)
class RunRow:
    """One stage of the run."""

    stage: str
    label: str
    """The user's name for the stage (``x.rename``, script variables), or ``""``."""
    kind: str
    ops: int
    blocks: int
    seconds: float | None
    out_bytes: int
    predicted: float | None = None
    """Seconds the cost model predicted (:mod:`lazyarr.optimize.timing`), or None."""


@dataclasses.dataclass(frozen=True)
class RunSummary:
    """The numbers both reprs show."""

    executor: str
    seconds: float | None
    """Wall time of the whole compute (or of the executor's run, when that is all we know)."""
    planning: float | None
    compiling: float | None
    blocks: int | None
    peak_bytes: int | None
    stages: int
    fused: int
    rows: tuple[RunRow, ...]
    predicted_peak: int | None = None
    """The peak the memory check predicted (per process, or per worker on dask), when it
    ran (under ``memory-limit``), to read beside the measured one."""
    rss_growth: int | None = None
    """Measured: what the run added to the resident set at its peak (per process, or the
    worker that grew most on dask)."""
    per_worker: bool = False
    """The memory numbers are a worker's (a cluster), not this process's."""
    timed: bool = False
    """Whether the rows carry predicted seconds (the ``predicted`` column is shown)."""

    def text(self) -> str:
        """A plain-text report: a header line, the plan's shape, one line per stage."""
        head = [
            f"lazyarr last run on {self.executor}: {fmt_seconds(self.seconds)}{self._split()}, "
            f"{_count(self.blocks)} blocks, {self._memory()}",
            f"plan: {self.stages} stages, {self.fused} fused",
        ]
        if not self.rows:
            return "\n".join(head)
        names = [_name(r) for r in self.rows]
        width = max(len("stage"), *(len(n) for n in names))
        pred = f"  {'predicted':>9}" if self.timed else ""
        lines = [f"  {'stage':<{width}}  {'task time':>9}{pred}  {'blocks':>7}  {'bytes':>9}"]
        for r, name in zip(self.rows, names):
            cell = f"  {fmt_seconds(r.predicted):>9}" if self.timed else ""
            lines.append(
                f"  {name:<{width}}  {fmt_seconds(r.seconds):>9}{cell}  {r.blocks:>7}  "
                f"{fmt_bytes(r.out_bytes):>9}"
            )
        return "\n".join(head + lines)

    def html(self) -> str:
        """An HTML fragment: the same facts as :meth:`text`, every value escaped."""
        e = html.escape
        head = (
            f"<p><b>lazyarr last run</b> on <code>{e(self.executor)}</code>: "
            f"{e(fmt_seconds(self.seconds))}{e(self._split())}, {e(_count(self.blocks))} blocks, "
            f"{e(self._memory())}; "
            f"plan: {self.stages} stages, {self.fused} fused</p>"
        )
        right = "<td style='text-align:right'>"
        cells = "".join(
            "<tr>"
            f"<td style='text-align:left'><code>{e(_name(r))}</code></td>"
            f"<td style='text-align:left'>{e(r.kind)}{e(_ops(r))}</td>"
            f"{right}{e(fmt_seconds(r.seconds))}</td>"
            + (f"{right}{e(fmt_seconds(r.predicted))}</td>" if self.timed else "")
            + f"<td style='text-align:right'>{r.blocks}</td>"
            f"<td style='text-align:right'>{e(fmt_bytes(r.out_bytes))}</td>"
            "</tr>"
            for r in self.rows
        )
        table = (  # alignment on each cell: Jupyter right-aligns cells and centres tables
            "<table style='margin-left:0;margin-right:auto'><thead><tr>"
            "<th style='text-align:left'>stage</th><th style='text-align:left'>kind</th>"
            "<th style='text-align:right'>task time</th>"
            + ("<th style='text-align:right'>predicted</th>" if self.timed else "")
            + "<th style='text-align:right'>blocks</th>"
            f"<th style='text-align:right'>bytes</th></tr></thead><tbody>{cells}</tbody></table>"
        )
        return f'<div class="lazyarr-last-run">{head}{table}</div>'

    @property
    def running(self) -> float | None:
        """The wall time left after planning and compiling: tasks, scheduling, gathering."""
        if self.seconds is None:
            return None
        return max(0.0, self.seconds - (self.planning or 0.0) - (self.compiling or 0.0))

    def _memory(self) -> str:
        """``peak RSS +<measured> (predicted <peak>), blocks held <bytes>``: the parts known."""
        predicted = (
            "" if self.predicted_peak is None else f" (predicted {fmt_bytes(self.predicted_peak)})"
        )
        held = f"blocks held {fmt_bytes(self.peak_bytes)}"
        if self.rss_growth is None:
            return held + predicted
        where = " per worker" if self.per_worker else ""
        return f"peak RSS +{fmt_bytes(self.rss_growth)}{where}{predicted}, {held}"

    def _split(self) -> str:
        """`` = planning .. + compiling .. + running ..`` (the parts known), adding up."""
        if self.seconds is None or (self.planning is None and self.compiling is None):
            return ""
        parts = [("planning", self.planning), ("compiling", self.compiling)]
        parts.append(("running", self.running))
        return " = " + " + ".join(f"{k} {fmt_seconds(v)}" for k, v in parts if v is not None)


def _count(n: int | None) -> str:
    return "-" if n is None else f"{n:,}"


def _name(r: RunRow) -> str:
    return f"{r.label} ({r.stage})" if r.label else r.stage


def _ops(r: RunRow) -> str:
    return f", fused {r.ops} ops" if r.ops > 1 else ""


def _get(stats: Any, key: str) -> Any:
    if stats is None:
        return None
    if isinstance(stats, Mapping):
        return stats.get(key)
    return getattr(stats, key, None)


def run_summary(
    plan: Plan,
    executor: str,
    stats: Any = None,
    planning: float | None = None,
    total: float | None = None,
    predicted_peak: int | None = None,
    predicted: Mapping[str, float] | None = None,
) -> RunSummary:
    """The summary of a run of ``plan`` on ``executor`` with the executor's ``RunStats``.

    ``planning`` and ``total``: seconds the compute spent planning, and in all (None: only
    the executor's own measurement is known). ``stats`` may be None (an executor that
    measures nothing): its seconds are then unknown. ``predicted``: the cost model's
    seconds per stage (None: not predicted, no column).
    """
    facts = plan_facts(plan)
    stage_seconds = dict(_get(stats, "stage_seconds") or {})
    rows = tuple(
        RunRow(
            stage=n,
            label=plan.labels.get(n, ""),
            kind=f.kind,
            ops=len(f.ops),
            blocks=f.nblocks,
            seconds=stage_seconds.get(n),
            out_bytes=f.out_bytes,
            predicted=(predicted or {}).get(n),
        )
        for n, f in facts.items()
    )
    blocks = _get(stats, "blocks")
    peak = _get(stats, "peak_bytes")
    grown = _get(stats, "rss_growth")
    extra = _get(stats, "extra") or {}
    extra = extra if isinstance(extra, Mapping) else {}
    compiling = extra.get("compile_seconds")
    if planning is not None:  # the executor's lowering (plan -> tasks) is planning too
        planning += extra.get("lower_seconds") or 0.0
    ran = _get(stats, "seconds")
    if total is None and ran is not None and planning is not None:
        total = planning + ran
    return RunSummary(
        executor=executor,
        seconds=total if total is not None else ran,
        planning=planning,
        compiling=compiling if (total is not None or planning is not None) else None,
        blocks=int(blocks) if blocks else plan.total_blocks,
        peak_bytes=int(peak) if peak else None,
        stages=len(facts),
        fused=sum(f.style == "fused" for f in facts.values()),
        rows=rows,
        predicted_peak=predicted_peak,
        rss_growth=int(grown) if grown is not None else None,
        per_worker=bool(extra.get("workers")),
        timed=predicted is not None,
    )
