"""Predicted against measured seconds per stage, for ``bench/distributed_placement.py``.

Each lazyarr compute of a phase records its measured seconds per stage
(``RunStats.stage_seconds``: on dask the span from a stage's first task's
start to its last task's end) and the cost model's prediction at the
cluster's measured speeds (``la.last_run().predicted()``); the table also
shows what the executor has measured on the cluster after the rounds
(network bandwidth, the scheduler's seconds per task and per round trip,
the seconds per task besides its work). Per workload the
table gives, over every stage of every measured round, the median and the
spread of predicted / measured; the goal (issue 27): the median within 2x
(0.5 to 2).
"""

from __future__ import annotations

import statistics
from typing import Any

__all__ = ["COLUMNS", "GOAL", "timing_row"]

GOAL = 2.0
"""Predicted stage seconds within this factor of measured (median over stages)."""
COLUMNS = [
    "workload",
    "stages",
    "median_ratio",
    "min_ratio",
    "max_ratio",
    "predicted_s",
    "measured_s",
    "within_2x",
    "network_MBps",
    "task_ms",
    "hop_ms",
    "call_ms",
]


def _pairs(reps: list[dict]) -> list[tuple[str, float, float]]:
    """(stage, predicted, measured) of every timed stage of every round."""
    out = []
    for rep in reps:
        for measured, predicted in zip(rep.get("stage_s", []), rep.get("stage_pred", [])):
            for name, secs in (measured or {}).items():
                guess = (predicted or {}).get(name)
                if guess and secs > 0:
                    out.append((name, float(guess), float(secs)))
    return out


def timing_row(workload: str, reps: list[dict]) -> dict[str, Any] | None:
    """One table row for ``workload`` from the ``lazyarr`` system's rounds (None: no stage
    was both predicted and measured)."""
    pairs = _pairs(reps)
    if not pairs:
        return None
    ratios = [p / m for _, p, m in pairs]
    med = statistics.median(ratios)
    cal = [r["calibration"] for r in reps if r.get("calibration")]

    def of(key: str, scale: float) -> float | str:
        values = [c[key] for c in cal if c.get(key) is not None]
        return statistics.median(values) * scale if values else ""

    return {
        "workload": workload,
        "stages": len(pairs),
        "median_ratio": med,
        "min_ratio": min(ratios),
        "max_ratio": max(ratios),
        "predicted_s": sum(p for _, p, _ in pairs),
        "measured_s": sum(m for _, _, m in pairs),
        "within_2x": 1 / GOAL <= med <= GOAL,
        "network_MBps": of("network_Bps", 1e-6),
        "task_ms": of("task_s", 1e3),
        "hop_ms": of("hop_s", 1e3),
        "call_ms": of("call_s", 1e3),
        "pairs": pairs,
    }


def overall(rows: list[dict]) -> float | None:
    """The median ratio over the stages of every workload's rounds."""
    ratios = [p / m for r in rows for _, p, m in r["pairs"]]
    return statistics.median(ratios) if ratios else None
