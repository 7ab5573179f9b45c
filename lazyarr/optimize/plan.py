"""The Plan: stages in dependency order, each over a block grid.

A stage is one unit an executor runs: for now one array op, after fusion a
group of them. Per-block facts (worker, estimated bytes) are NumPy arrays
shaped like the block grid, never graph nodes, so big grids stay cheap.
This module imports no pass.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Sequence
from functools import cached_property
from typing import Any

import networkx as nx
import numpy as np

from lazyarr.graph.expr import Expr
from lazyarr.graph.serialize import exprs_from_json, exprs_to_json

__all__ = ["PassRecord", "Plan", "Stage"]


@dataclasses.dataclass
class Stage:
    """One executable unit over the block grid of ``expr``.

    ``members`` lists the array ops the stage computes in dependency order,
    ``expr`` (the root) last: just ``(expr,)`` unless fusion grouped
    several. ``input_exprs`` are the expressions the stage reads from other
    stages and ``inputs`` the names of those stages, position by position
    (for an unfused stage, ``expr.inputs``).
    """

    name: str
    expr: Expr
    inputs: tuple[str, ...]
    members: tuple[Expr, ...] = ()
    input_exprs: tuple[Expr, ...] = ()
    worker: np.ndarray | None = None
    est_bytes: np.ndarray | None = None
    notes: dict[str, Any] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.members:
            self.members = (self.expr,)
        if not self.input_exprs and len(self.members) == 1:
            self.input_exprs = self.expr.inputs

    @property
    def fused(self) -> bool:
        """True when the stage computes several array ops in one pass."""
        return len(self.members) > 1

    @property
    def kind(self) -> str:
        return self.expr.op.kind

    @property
    def numblocks(self) -> tuple[int, ...]:
        return self.expr.numblocks

    @property
    def nblocks(self) -> int:
        return math.prod(self.expr.numblocks)

    def replace(self, **changes: Any) -> Stage:
        return dataclasses.replace(self, **changes)


@dataclasses.dataclass(frozen=True)
class PassRecord:
    """What one pass did: its name, seconds taken and a short summary."""

    name: str
    seconds: float
    summary: str


@dataclasses.dataclass
class Plan:
    """Stages in dependency order and the names of the requested outputs."""

    stages: dict[str, Stage]
    outputs: tuple[str, ...]
    history: tuple[PassRecord, ...] = ()
    notes: dict[str, Any] = dataclasses.field(default_factory=dict)
    """What passes decided and why, by pass name (``notes["fuse"]``, ``notes["place"]``)."""

    @classmethod
    def from_graph(cls, g: nx.DiGraph) -> Plan:
        """One stage per graph node, in a deterministic topological order."""
        stages: dict[str, Stage] = {}
        for n in nx.lexicographical_topological_sort(g):
            expr = g.nodes[n]["expr"]
            by_pos: dict[int, str] = {}
            for src in g.predecessors(n):
                for pos in g.edges[src, n]["positions"]:
                    by_pos[pos] = src
            stages[n] = Stage(n, expr, tuple(by_pos[i] for i in range(len(expr.inputs))))
        return cls(stages, tuple(g.graph["outputs"]))

    @cached_property
    def readers(self) -> dict[str, list[str]]:
        """For each stage, the stages that read it (computed once per plan)."""
        return self.consumers()

    def consumers(self) -> dict[str, list[str]]:
        """For each stage, the stages that read it (each listed once)."""
        out: dict[str, list[str]] = {n: [] for n in self.stages}
        for s in self.stages.values():
            for i in dict.fromkeys(s.inputs):
                out[i].append(s.name)
        return out

    def to_graph(self) -> nx.DiGraph:
        """The stage DAG (for pictures and structural tests)."""
        g = nx.DiGraph()
        for s in self.stages.values():
            g.add_node(s.name, op=s.expr.op.label(), kind=s.kind, nblocks=s.nblocks)
            for pos, i in enumerate(s.inputs):
                if g.has_edge(i, s.name):
                    g.edges[i, s.name]["positions"].append(pos)
                else:
                    g.add_edge(i, s.name, positions=[pos])
        g.graph["outputs"] = list(self.outputs)
        return g

    def with_stages(self, stages: dict[str, Stage], outputs: Sequence[str] | None = None) -> Plan:
        outs = tuple(outputs) if outputs is not None else self.outputs
        return Plan(stages, outs, self.history, dict(self.notes))

    @cached_property
    def total_blocks(self) -> int:
        return sum(s.nblocks for s in self.stages.values())

    # -- JSON ---------------------------------------------------------------
    def to_json(self) -> str:
        """A self-contained JSON text of the plan (expressions included)."""
        table, _ = exprs_to_json(
            [m for s in self.stages.values() for m in (*s.members, *s.input_exprs)]
        )
        doc = {
            "format": "lazyarr-plan",
            "version": 1,
            "exprs": table,
            "outputs": list(self.outputs),
            "history": [dataclasses.asdict(h) for h in self.history],
            "notes": self.notes,
            "stages": [
                {
                    "name": s.name,
                    "expr": s.expr.key,
                    "inputs": list(s.inputs),
                    "members": [m.key for m in s.members],
                    "input_exprs": [e.key for e in s.input_exprs],
                    "worker": None if s.worker is None else s.worker.tolist(),
                    "est_bytes": None if s.est_bytes is None else s.est_bytes.tolist(),
                    "notes": s.notes,
                }
                for s in self.stages.values()
            ],
        }
        return json.dumps(doc, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Plan:
        """Read a plan written by :meth:`to_json`."""
        doc = json.loads(text)
        if doc.get("format") != "lazyarr-plan":
            raise ValueError("not a lazyarr plan (missing format marker)")
        exprs = exprs_from_json(doc["exprs"])
        stages = {}
        for d in doc["stages"]:
            stages[d["name"]] = Stage(
                name=d["name"],
                expr=exprs[d["expr"]],
                inputs=tuple(d["inputs"]),
                members=tuple(exprs[k] for k in d["members"]),
                input_exprs=tuple(exprs[k] for k in d.get("input_exprs", [])),
                worker=None if d["worker"] is None else np.asarray(d["worker"], dtype=np.int32),
                est_bytes=None
                if d["est_bytes"] is None
                else np.asarray(d["est_bytes"], dtype=np.int64),
                notes=d["notes"],
            )
        history = tuple(PassRecord(**h) for h in doc["history"])
        return cls(stages, tuple(doc["outputs"]), history, doc.get("notes", {}))
