"""Array-level expressions: node types, shape/dtype/chunk rules, the networkx DAG."""

from lazyarr.graph.build import build
from lazyarr.graph.expr import Expr, MapOp, Op, ReduceOp, SourceOp

__all__ = ["Expr", "MapOp", "Op", "ReduceOp", "SourceOp", "build"]
