"""``visualize`` and ``explain``: pictures and EXPLAIN text of the plan of some arrays.

This is the top-level glue: it builds the plan (optimized, or stopped after
a named pass), reads the memory limit from the config, finds the last run's
measurements, and hands a Plan to the pure renderers in ``lazyarr.viz``.

>>> import lazyarr as la
>>> x = la.ones((4, 4), chunks=2)
>>> pic = la.visualize(x + 1)           # doctest: +SKIP
>>> pic.save("plan.html")               # doctest: +SKIP
>>> print(la.explain(x + 1))            # doctest: +SKIP
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from lazyarr import api, config
from lazyarr._convert import as_expr
from lazyarr.executors.base import Traits
from lazyarr.graph import build
from lazyarr.graph.build import user_names as named_in
from lazyarr.graph.expr import Expr
from lazyarr.optimize.memory import MemoryEstimate
from lazyarr.optimize.pipeline import PASSES, PassContext, optimize_until
from lazyarr.optimize.plan import Plan
from lazyarr.viz import (
    Measured,
    explain_text,
    have_graphviz,
    measured_from,
    render_dot,
    to_dot,
    to_html,
    to_html_fragment,
    to_svg,
)

__all__ = [
    "FORMATS",
    "Explanation",
    "PlanPicture",
    "configured_memory_limit",
    "explain",
    "plan_of",
    "user_names",
    "visualize",
]

FORMATS = ("dot", "svg", "png", "html", "json")


def configured_memory_limit() -> int | None:
    """Config ``memory-limit`` in bytes (None: no limit)."""
    limit = config.get("memory-limit")
    return None if limit is None else config.parse_bytes(limit)


class PlanPicture:
    """A plan ready to draw: ``dot()``, ``svg()``, ``html()``, ``save(path)``; renders in notebooks.

    ``path`` is the file last written by :meth:`save` (or ``visualize(filename=...)``).
    """

    def __init__(
        self,
        plan: Plan,
        executor: str | None = None,
        memory_limit: int | None = None,
        measured: Measured | None = None,
        title: str | None = None,
    ) -> None:
        self.plan = plan
        self.executor = executor
        self.memory_limit = memory_limit
        self.measured = measured
        self.title = title or "lazyarr plan" + (f" ({executor})" if executor else "")
        self.path: Path | None = None

    def dot(self) -> str:
        """Graphviz DOT text."""
        return to_dot(self.plan, self.memory_limit, self.measured, self.title)

    def svg(self) -> str:
        """lazyarr's own SVG drawing (needs no Graphviz)."""
        return to_svg(self.plan, self.memory_limit, self.measured, self.title)

    def html(self) -> str:
        """A self-contained HTML report."""
        return to_html(self.plan, self.executor, self.memory_limit, self.measured, self.title)

    def explain(self) -> Explanation:
        return Explanation(explain_text(self.plan, self.executor, self.memory_limit, self.measured))

    def render(self, format: str) -> bytes:
        """The picture in ``format`` (one of :data:`FORMATS`) as bytes.

        ``svg`` uses Graphviz when installed, else lazyarr's own drawing;
        ``png`` needs Graphviz (an install hint otherwise).
        """
        fmt = format.lower().lstrip(".")
        if fmt == "dot":
            return self.dot().encode()
        if fmt == "svg":
            return render_dot(self.dot(), "svg") if have_graphviz() else self.svg().encode()
        if fmt == "png":
            return render_dot(self.dot(), "png")
        if fmt == "html":
            return self.html().encode()
        if fmt == "json":
            return self.plan.to_json().encode()
        raise ValueError(f"unknown picture format {format!r}; use one of {', '.join(FORMATS)}")

    def save(self, filename: str | Path, format: str | None = None) -> Path:
        """Write the picture to ``filename``; the format comes from ``format`` or the suffix."""
        path = Path(filename)
        fmt = format or path.suffix.lstrip(".")
        if not fmt:
            raise ValueError(
                f"cannot tell the format of {str(filename)!r}: give a suffix "
                f"({', '.join('.' + f for f in FORMATS)}) or format="
            )
        data = self.render(fmt)
        path.write_bytes(data)
        self.path = path
        return path

    def _repr_svg_(self) -> str:
        return self.svg()

    def _repr_html_(self) -> str:
        return to_html_fragment(
            self.plan, self.executor, self.memory_limit, self.measured, self.title, explain=False
        )

    def __repr__(self) -> str:
        where = f", written to {self.path}" if self.path else ""
        return (
            f"<lazyarr PlanPicture: {len(self.plan.stages)} stages, outputs "
            f"{', '.join(self.plan.labels.get(o, o) for o in self.plan.outputs)}{where}>"
        )


class Explanation(str):
    """The EXPLAIN text; a ``str`` whose repr is the text itself (readable in notebooks)."""

    def __repr__(self) -> str:
        return str(self)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(str(self))

    def _repr_html_(self) -> str:
        return f'<pre class="lazyarr-explain">{html.escape(str(self))}</pre>'


def _planned(a: Any, measured: bool) -> Any:
    """A deferred array (lengths not counted yet) as it is drawn: its preview, each
    data-dependent selection at its largest; computing nothing. Others as they are."""
    preview = getattr(a, "preview", None)
    if preview is None or measured or getattr(a, "_resolved", None) is not None:
        return a
    return preview()


def _exprs(arrays: Sequence[Any]) -> list[Expr]:
    return [as_expr(a) for a in arrays]


def user_names(exprs: Sequence[Expr], names: Mapping[str, Any] | None = None) -> dict[str, str]:
    """Expression key -> the user's name, for every named array ``exprs`` read.

    Names come from ``x.rename(...)``/``name=`` (``Expr.user_name``) and from
    ``names`` (name -> lazy array, e.g. a script's variables; other values
    and names starting with ``_`` are skipped), which win.
    """
    found = named_in(exprs)
    for name, value in (names or {}).items():
        value = _planned(value, False)  # a deferred array is named by its preview
        expr = value if isinstance(value, Expr) else getattr(value, "_expr", None)
        if isinstance(expr, Expr) and not name.startswith("_"):
            found[expr.key] = name
    return found


def _last_run_for(exprs: list[Expr]) -> tuple[Plan, str, Measured | None]:
    run = api.last_run()
    if run is None:
        raise RuntimeError("measured=True shows the last compute, and nothing was computed yet")
    keys = {s.expr.key for s in run.plan.stages.values()}
    missing = [e for e in exprs if e.key not in keys]
    if missing:
        raise ValueError(
            "measured=True shows the last compute, which did not compute "
            f"{', '.join(e.name for e in missing)}; compute it first (x.compute() or "
            "la.compute(...))"
        )
    return run.plan, run.executor, measured_from(run.stats, run.executor)


def plan_of(
    *arrays: Any,
    stage: str | None = None,
    measured: bool = False,
    executor: str | None = None,
    names: Mapping[str, Any] | None = None,
) -> tuple[Plan, str | None, Measured | None]:
    """(plan, executor name, measurements) for the arguments of visualize/explain.

    ``arrays`` may be lazy arrays (or array-likes), or a single Plan. With
    ``measured=True`` and no arrays, the plan of the last compute. Stages
    are labelled with the user's names (see :func:`user_names`).
    """
    if stage is not None and measured:
        raise ValueError("stage= draws a plan before it runs; it cannot be combined with measured=")
    args = tuple(a if isinstance(a, Plan) else as_expr(_planned(a, measured)) for a in arrays)
    plan, ex, meas = _plan_of(*args, stage=stage, measured=measured, executor=executor)
    exprs = [a for a in args if isinstance(a, Expr)]
    return plan.with_labels(user_names(exprs, names)), ex, meas


def _plan_of(
    *arrays: Any,
    stage: str | None,
    measured: bool,
    executor: str | None,
) -> tuple[Plan, str | None, Measured | None]:
    if len(arrays) == 1 and isinstance(arrays[0], Plan):
        plan = arrays[0]
        if measured:
            run = api.last_run()
            if run is None or run.plan is not plan:
                raise ValueError("measured=True needs the plan of the last compute")
            return plan, run.executor, measured_from(run.stats, run.executor)
        return plan, executor, None
    if not arrays:
        if not measured:
            raise TypeError("give at least one array (or measured=True for the last compute)")
        run = api.last_run()
        if run is None:
            raise RuntimeError("measured=True shows the last compute, and nothing was computed yet")
        return run.plan, run.executor, measured_from(run.stats, run.executor)
    exprs = _exprs(arrays)
    if measured:
        return _last_run_for(exprs)
    ex = api.resolve_executor(executor)
    if stage is None:
        return api.plan_that_runs(exprs, ex.name), ex.name, None
    extra = api.planning_facts(ex)
    passes = api.passes_for(None, None)
    raw = Plan.from_graph(build(exprs))
    if stage == "raw":
        return raw, ex.name, None
    if stage not in PASSES:
        raise ValueError(f"unknown stage {stage!r}: use 'raw' or a pass name ({', '.join(PASSES)})")
    ctx = api.pass_context(ex.name, False, extra)
    return optimize_until(raw, stage, passes, ctx), ex.name, None


def visualize(
    *arrays: Any,
    filename: str | Path | None = None,
    format: str | None = None,
    stage: str | None = None,
    measured: bool = False,
    executor: str | None = None,
    names: Mapping[str, Any] | None = None,
) -> PlanPicture:
    """A picture of the plan that computing ``arrays`` runs.

    ``filename`` writes it (format from ``format`` or the suffix: dot, svg,
    png, html, json); ``stage="raw"`` or a pass name draws the plan as it was
    after that pass; ``measured=True`` draws the last compute's plan with its
    measured seconds and per-worker bytes; ``executor`` picks whose plan
    (default: the configured one); ``names`` (name -> lazy array, e.g.
    ``locals()``) labels the stages computing those arrays, as
    ``x.rename(...)`` does. The result renders inline in notebooks.
    """
    plan, ex, meas = plan_of(
        *arrays, stage=stage, measured=measured, executor=executor, names=names
    )
    title = "lazyarr plan" + (f" ({ex})" if ex else "")
    if not measured and any(_planned(a, False) is not a for a in arrays):
        title += ", value-dependent lengths at their largest"
    if stage is not None:
        title += f", after {stage}" if stage != "raw" else ", raw graph (no passes)"
    if meas is not None:
        title += ", measured"
    pic = PlanPicture(plan, ex, configured_memory_limit(), meas, title)
    if filename is not None:
        pic.save(filename, format)
    elif format is not None and format.lower() not in FORMATS:
        raise ValueError(f"unknown picture format {format!r}; use one of {', '.join(FORMATS)}")
    return pic


def _context_of(executor: str | None) -> tuple[Any, PassContext]:
    """The executor and the passes' context it gives a plan (its threads, workers, speeds)."""
    ex = api.resolve_executor(executor)
    return ex, api.pass_context(ex.name, False, api.planning_facts(ex))


def _predicted(plan: Plan, executor: str | None, measured: bool) -> dict[str, float] | None:
    """Predicted seconds per stage: the last run's (``measured``), else at the speeds of
    ``executor`` (None: it measures none)."""
    if measured:
        run = api.last_run()
        return None if run is None else run.predicted()
    ex, ctx = _context_of(executor)
    return api.predicted_seconds(plan, ctx, getattr(ex, "traits", Traits()))


def _memory(plan: Plan, executor: str | None) -> MemoryEstimate | None:
    """The memory check's estimate of ``plan`` on ``executor`` (None: no executor known)."""
    if executor is None:
        return None
    ex, ctx = _context_of(executor)
    bounded = getattr(ex, "traits", Traits()).bounds_in_flight
    return api.fitted_estimate(plan, ctx, bounded)[0]


def explain(
    *arrays: Any,
    measured: bool = False,
    executor: str | None = None,
    stage: str | None = None,
    names: Mapping[str, Any] | None = None,
) -> Explanation:
    """The EXPLAIN text of the plan of ``arrays``: stages, bytes, memory, and why.

    Each stage shows the seconds the cost model predicts at the speeds the
    executor measured (a short probe at first contact: numba, dask).
    ``measured=True`` explains the last compute with its measured seconds
    per stage and per-worker bytes beside the predictions; ``names`` as in
    :func:`visualize`.
    """
    plan, ex, meas = plan_of(
        *arrays, stage=stage, measured=measured, executor=executor, names=names
    )
    predicted = _predicted(plan, ex, measured)
    text = explain_text(plan, ex, configured_memory_limit(), meas, predicted, _memory(plan, ex))
    if not measured and any(_planned(a, False) is not a for a in arrays):
        text += (
            "\nLengths that depend on values (x[mask], nonzero, unique, ...) are not counted "
            "yet: this plan keeps every element of those selections. Computing counts them "
            "first, then runs this plan with the exact lengths.\n"
        )
    return Explanation(text)
