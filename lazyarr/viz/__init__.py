"""Pictures and text of a Plan: DOT, our own SVG, an HTML report, EXPLAIN text, worker bars.

Every function here is a pure function of a :class:`~lazyarr.optimize.plan.Plan`
(plus optional measurements and a memory limit); reading settings, building
plans and finding the last run is the top level's job (``lazyarr.planview``).
"""

from lazyarr.viz.dot import to_dot
from lazyarr.viz.facts import Measured, StageFacts, measured_from, plan_facts
from lazyarr.viz.html import to_html, to_html_fragment
from lazyarr.viz.render import GraphvizMissing, have_graphviz, render_dot
from lazyarr.viz.svg import to_svg
from lazyarr.viz.text import explain_text
from lazyarr.viz.workers import WorkerRow, worker_rows, workers_svg

__all__ = [
    "GraphvizMissing",
    "Measured",
    "StageFacts",
    "WorkerRow",
    "explain_text",
    "have_graphviz",
    "measured_from",
    "plan_facts",
    "render_dot",
    "to_dot",
    "to_html",
    "to_html_fragment",
    "to_svg",
    "worker_rows",
    "workers_svg",
]
