"""Kernel sets: the code an executor runs for each kind of stage, and what each supports.

A kernel set turns a stage into callables (one lookup per stage; compiled
sets compile here):

* ``source(stage)``: ``region -> block``;
* ``map(stage)``: ``(region, get) -> block`` where ``get(input position,
  region)`` returns an input's values over a region;
* ``partial(stage)``: ``(body region, get) -> state`` of a reduction;
* ``reduction(stage)``: the reduction's ``ReduceKernel`` (``combine``,
  ``finalize``);
* ``product(stage)``: ``(region, part regions, get) -> array``, one partial
  product of a contraction.

``supports(expr)`` says whether the set has its own (fast) code for an op;
the ``fuse`` pass asks it so that no group mixes ops the set compiles with
ops it cannot (such a group would run entirely on the slower fallback).

:class:`ReferenceKernels` is the NumPy reference every other set must agree with.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from lazyarr.graph.blockrules import contraction, n_contraction_parts, region_parts
from lazyarr.graph.expr import Expr, Region
from lazyarr.graph.ops.indexing import GetItem
from lazyarr.kernels.fused import evaluate, root_operands
from lazyarr.kernels.gather_read import gather_map
from lazyarr.kernels.reference import ReduceKernel, kernel_for

__all__ = [
    "GetRegion",
    "KernelSet",
    "MapFn",
    "PartialFn",
    "ProductFn",
    "ReferenceKernels",
    "SourceFn",
    "op_map",
]

GetRegion = Callable[[int, Region], np.ndarray]
"""``get_region(input_position, region)``: values of a stage input over a region."""

SourceFn = Callable[[Region], np.ndarray]
MapFn = Callable[[Region, GetRegion], np.ndarray]
PartialFn = Callable[[Region, GetRegion], Any]
ProductFn = Callable[[Region, tuple[Region, ...], GetRegion], np.ndarray]


class KernelSet(Protocol):
    """The code an executor runs for each kind of stage (see the module docstring)."""

    def source(self, stage: Any) -> SourceFn: ...

    def generate(self, expr: Expr) -> SourceFn: ...

    def map(self, stage: Any) -> MapFn: ...

    def partial(self, stage: Any) -> PartialFn: ...

    def reduction(self, stage: Any) -> ReduceKernel: ...

    def product(self, stage: Any) -> ProductFn: ...

    def supports(self, expr: Expr) -> bool: ...


def op_map(expr: Expr, fn: Callable[..., np.ndarray]) -> MapFn:
    """The block function of a one-op map stage: ``fn(op, expr, out, *inputs)`` over the
    input regions the op's rule says block ``out`` reads."""
    op = expr.op

    def run(out: Region, get: GetRegion) -> np.ndarray:
        regions = op.regions(expr, out)
        return fn(op, expr, out, *(get(i, tuple(r)) for i, r in enumerate(regions)))

    return run


class ReferenceKernels:
    """NumPy kernels for every stage: the registered op kernels and the fused interpreter."""

    def supports(self, expr: Expr) -> bool:
        """Every op has a NumPy kernel."""
        return True

    def source(self, stage: Any) -> SourceFn:
        return self.generate(stage.expr)

    def generate(self, expr: Expr) -> SourceFn:
        """Regions of the source ``expr`` (a stage's, or one read in place by its readers)."""
        fn = kernel_for(expr.op)
        return lambda out: fn(expr.op, expr, out)

    def map(self, stage: Any) -> MapFn:
        expr = stage.expr
        if contraction(expr) is not None and (stage.fused or n_contraction_parts(expr) > 1):
            return _contraction_by_parts(stage, self.product(stage))
        if stage.fused:
            members, inputs = stage.members, stage.input_exprs
            return lambda out, get: evaluate(members, inputs, out, get)
        if isinstance(expr.op, GetItem):  # a sparse gather reads only the rows it takes
            return gather_map(expr, kernel_for(expr.op))
        return op_map(expr, kernel_for(expr.op))

    def partial(self, stage: Any) -> PartialFn:
        expr = stage.expr
        rk: ReduceKernel = kernel_for(expr.op)
        body = expr.inputs[0]
        if stage.fused:
            members, inputs = stage.members[:-1], stage.input_exprs

            def fused(region: Region, get: GetRegion) -> Any:
                value = evaluate(members, inputs, region, get)
                return rk.partial(expr.op, expr, value, region, body.shape)

            return fused
        op = expr.op
        if op.own_partials:  # the partial reads regions of several inputs

            def own(region: Region, get: GetRegion) -> Any:
                arrays = tuple(get(i, r) for i, r in enumerate(op.partial_regions(expr, region)))
                return rk.partial(op, expr, arrays, region, body.shape)

            return own
        return lambda region, get: rk.partial(expr.op, expr, get(0, region), region, body.shape)

    def reduction(self, stage: Any) -> ReduceKernel:
        return kernel_for(stage.expr.op)

    def product(self, stage: Any) -> ProductFn:
        """One partial product: the op's kernel over each input's region of one contracted range.

        Operands folded into the stage (a transpose, a scaled operand) are
        computed over just the regions this part reads.
        """
        expr = stage.expr
        fn = kernel_for(expr.op)
        members, inputs, fused = stage.members, stage.input_exprs, stage.fused

        def run(out: Region, regions: tuple[Region, ...], get: GetRegion) -> np.ndarray:
            if fused:
                arrays = root_operands(members, inputs, regions, get)
            else:
                arrays = [get(i, tuple(r)) for i, r in enumerate(regions)]
            return fn(expr.op, expr, out, *arrays)

        return run


def _contraction_by_parts(stage: Any, product: ProductFn) -> MapFn:
    """A contraction block as the sum of its partial products, one contracted range at a time.

    Each part reads (and, for operands folded into the stage, computes)
    only its own range, so no operand panel is assembled or stored whole.
    """
    expr = stage.expr

    def run(out: Region, get: GetRegion) -> np.ndarray:
        acc: np.ndarray | None = None
        for regions in region_parts(expr, out) or [expr.op.regions(expr, out)]:
            part = product(out, regions, get)
            if acc is None:
                acc = part if part.flags.owndata and part.flags.writeable else part.copy()
            else:
                np.add(acc, part, out=acc)
        return acc

    return run
