"""One block of one stage: what it reads and how it is computed.

Pure functions every executor shares. ``reads`` lists the input regions a
block needs (the Dask executor turns them into task dependencies, local
executors into lookups); ``compute_block`` computes it with a
:class:`KernelSet`, which is where executors differ (NumPy reference
kernels, generated Numba code).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from lazyarr.graph.blockrules import contraction, n_contraction_parts, region_parts
from lazyarr.graph.chunks import block_slices
from lazyarr.graph.expr import Expr, Region
from lazyarr.graph.ops.reduction import reduce_block_inputs as reduce_inputs
from lazyarr.kernels.blocks import tree_combine
from lazyarr.kernels.fused import evaluate, external_regions, root_operands
from lazyarr.kernels.reference import ReduceKernel, kernel_for
from lazyarr.optimize.plan import Stage

__all__ = [
    "GetRegion",
    "KernelSet",
    "ReferenceKernels",
    "compute_block",
    "reads",
    "reduce_inputs",
]

GetRegion = Callable[[int, Region], np.ndarray]
"""``get_region(input_position, region)``: values of a stage input over a region."""

SourceFn = Callable[[Region], np.ndarray]
MapFn = Callable[[Region, GetRegion], np.ndarray]
PartialFn = Callable[[Region, GetRegion], Any]


class KernelSet(Protocol):
    """The code an executor runs for each kind of stage."""

    def source(self, stage: Stage) -> SourceFn: ...

    def map(self, stage: Stage) -> MapFn: ...

    def partial(self, stage: Stage) -> PartialFn: ...

    def reduction(self, stage: Stage) -> ReduceKernel: ...


def _body(stage: Stage) -> Expr:
    """The expression a reduce stage reduces (a member when fused, else its input)."""
    return stage.expr.inputs[0]


def reads(stage: Stage, index: tuple[int, ...]) -> list[tuple[int, Region]]:
    """Every (input position, region) that block ``index`` of ``stage`` reads."""
    expr = stage.expr
    kind = stage.kind
    if kind == "source":
        return []
    if kind == "map":
        out = block_slices(expr.chunks, index)
        if stage.fused:
            return external_regions(stage.members, stage.input_exprs, out)
        return [(i, tuple(r)) for i, r in enumerate(expr.op.regions(expr, out))]
    if kind == "reduce":
        body = _body(stage)
        result: list[tuple[int, Region]] = []
        for i in reduce_inputs(expr, index):
            region = block_slices(body.chunks, i)
            if stage.fused:
                result.extend(external_regions(stage.members[:-1], stage.input_exprs, region))
            else:
                result.append((0, region))
        return result
    raise NotImplementedError(f"stage kind {kind!r} has no block rule")


def compute_block(
    stage: Stage,
    index: tuple[int, ...],
    get_region: GetRegion,
    fns: tuple[Any, ...],
) -> np.ndarray:
    """Block ``index`` of ``stage``; ``fns`` comes from :func:`stage_functions`."""
    expr = stage.expr
    kind = stage.kind
    if kind == "source":
        return fns[0](block_slices(expr.chunks, index))
    if kind == "map":
        return fns[0](block_slices(expr.chunks, index), get_region)
    if kind == "reduce":
        partial, rk = fns
        body = _body(stage)
        parts = [
            partial(block_slices(body.chunks, i), get_region) for i in reduce_inputs(expr, index)
        ]
        state = tree_combine(parts, lambda a, b: rk.combine(expr.op, a, b))
        return rk.finalize(expr.op, expr, state)
    raise NotImplementedError(f"stage kind {kind!r} has no block rule")


def stage_functions(stage: Stage, kernels: KernelSet) -> tuple[Any, ...]:
    """The callables :func:`compute_block` needs for ``stage`` (looked up once per stage)."""
    kind = stage.kind
    if kind == "source":
        return (kernels.source(stage),)
    if kind == "map":
        return (kernels.map(stage),)
    if kind == "reduce":
        return (kernels.partial(stage), kernels.reduction(stage))
    raise NotImplementedError(f"stage kind {kind!r} has no block rule")


class ReferenceKernels:
    """NumPy kernels for every stage: the registered op kernels and the fused interpreter."""

    def source(self, stage: Stage) -> SourceFn:
        expr = stage.expr
        fn = kernel_for(expr.op)
        return lambda out: fn(expr.op, expr, out)

    def map(self, stage: Stage) -> MapFn:
        expr = stage.expr
        if contraction(expr) is not None and (stage.fused or n_contraction_parts(expr) > 1):
            return _contraction_by_parts(stage)
        if stage.fused:
            members, inputs = stage.members, stage.input_exprs
            return lambda out, get: evaluate(members, inputs, out, get)
        fn = kernel_for(expr.op)

        def run(out: Region, get: GetRegion) -> np.ndarray:
            regions = expr.op.regions(expr, out)
            return fn(expr.op, expr, out, *(get(i, tuple(r)) for i, r in enumerate(regions)))

        return run

    def partial(self, stage: Stage) -> PartialFn:
        expr = stage.expr
        rk: ReduceKernel = kernel_for(expr.op)
        body = _body(stage)
        if stage.fused:
            members, inputs = stage.members[:-1], stage.input_exprs

            def fused(region: Region, get: GetRegion) -> Any:
                value = evaluate(members, inputs, region, get)
                return rk.partial(expr.op, expr, value, region, body.shape)

            return fused
        return lambda region, get: rk.partial(expr.op, expr, get(0, region), region, body.shape)

    def reduction(self, stage: Stage) -> ReduceKernel:
        return kernel_for(stage.expr.op)


def _contraction_by_parts(stage: Stage) -> MapFn:
    """A contraction block as the sum of its partial products, one contracted range at a time.

    Each part reads (and, for operands folded into the stage, computes)
    only its own range, so no operand panel is assembled or stored whole.
    """
    expr = stage.expr
    fn = kernel_for(expr.op)
    members, inputs = stage.members, stage.input_exprs

    def run(out: Region, get: GetRegion) -> np.ndarray:
        acc: np.ndarray | None = None
        for regions in region_parts(expr, out) or [expr.op.regions(expr, out)]:
            if stage.fused:
                arrays = root_operands(members, inputs, regions, get)
            else:
                arrays = [get(i, tuple(r)) for i, r in enumerate(regions)]
            part = fn(expr.op, expr, out, *arrays)
            if acc is None:
                acc = part if part.flags.owndata and part.flags.writeable else part.copy()
            else:
                np.add(acc, part, out=acc)
        return acc

    return run
