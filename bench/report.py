"""The common writer of every benchmark: a printed table, JSON and a PNG chart.

Each benchmark script builds one :class:`Report`, adds rows (one per tool
and workload) and calls :meth:`Report.write`; results land in
``bench/results/<name>.json`` and ``<name>.png`` with the versions used. A run
with other sizes or a subset of systems is named apart (:func:`run_name`), so it
does not overwrite the default run's table.
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import statistics
import sys
import time
from collections.abc import Callable, Iterable
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"


def run_name(
    base: str, parser: argparse.ArgumentParser, args: argparse.Namespace, keys: Iterable[str]
) -> str:
    """``base`` followed by each of ``keys`` given a value other than its default
    (``rechunk-gb-17-systems-cubed``): a resized or partial run keeps its own results."""
    parts = [base]
    for key in keys:
        value = getattr(args, key)
        if value != parser.get_default(key):
            parts += [key, str(value)]
    return re.sub(r"[^A-Za-z0-9._]+", "-", "-".join(parts)).strip("-")


def versions(*packages: str) -> dict[str, str]:
    """Installed versions of ``packages`` (and Python), for the record."""
    out = {"python": platform.python_version()}
    for p in packages:
        try:
            out[p] = version(p)
        except PackageNotFoundError:
            out[p] = "not installed"
    return out


def timeit(fn: Callable[[], Any], repeat: int = 5, number: int = 1) -> dict[str, float]:
    """Median, min and max seconds per call of ``fn`` over ``repeat`` rounds."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number)
    return {"median": statistics.median(times), "min": min(times), "max": max(times)}


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        if v == 0:
            return "0"
        if abs(v) >= 100:
            return f"{v:.0f}"
        if abs(v) >= 1:
            return f"{v:.2f}"
        return f"{v:.3g}"
    return str(v)


class Report:
    """Rows of measurements with a fixed column order."""

    def __init__(self, name: str, columns: list[str], meta: dict[str, Any] | None = None) -> None:
        self.name = name
        self.columns = columns
        self.rows: list[dict[str, Any]] = []
        self.meta = {"argv": sys.argv, "platform": platform.platform(), **(meta or {})}

    def add(self, **row: Any) -> None:
        self.rows.append(row)
        print("  " + "  ".join(f"{c}={_fmt(row.get(c, ''))}" for c in self.columns), flush=True)

    def markdown(self) -> str:
        head = "| " + " | ".join(self.columns) + " |"
        sep = "|" + "|".join("---" for _ in self.columns) + "|"
        body = [
            "| " + " | ".join(_fmt(r.get(c, "")) for c in self.columns) + " |" for r in self.rows
        ]
        return "\n".join([head, sep, *body])

    def write(self, plot: tuple[str, str, str] | None = None) -> Path:
        """Print the table, write JSON, and a bar chart of ``plot = (x, y, group)``."""
        RESULTS.mkdir(parents=True, exist_ok=True)
        print()
        print(self.markdown())
        path = RESULTS / f"{self.name}.json"
        path.write_text(json.dumps({"meta": self.meta, "rows": self.rows}, indent=2, default=str))
        print(f"\nwrote {path}")
        if plot is not None:
            self._plot(*plot)
        return path

    def _plot(self, x: str, y: str, group: str) -> None:
        try:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            print("matplotlib is not installed: no chart (pip install -e '.[bench]')")
            return
        xs = list(dict.fromkeys(r[x] for r in self.rows))
        groups = list(dict.fromkeys(r[group] for r in self.rows))
        width = 0.8 / max(len(groups), 1)
        fig, ax = plt.subplots(figsize=(max(6, 1.2 * len(xs) * len(groups) / 2), 4))
        for gi, g in enumerate(groups):
            vals = [next((r[y] for r in self.rows if r[x] == xv and r[group] == g), 0) for xv in xs]
            ax.bar([i + gi * width for i in range(len(xs))], vals, width, label=str(g))
        ax.set_xticks([i + width * (len(groups) - 1) / 2 for i in range(len(xs))], xs, rotation=15)
        ax.set_ylabel(y)
        ax.set_yscale("log")
        ax.set_title(self.name)
        ax.legend()
        save_figure(fig, self.name)


def save_figure(fig: Any, name: str) -> Path:
    """Lay out ``fig``, write it to ``bench/results/<name>.png``, close it, say where."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    png = RESULTS / f"{name}.png"
    fig.savefig(png, dpi=110)
    plt.close(fig)
    print(f"wrote {png}")
    return png
