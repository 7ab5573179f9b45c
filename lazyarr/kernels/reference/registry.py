"""Which NumPy kernel computes the blocks of each op type.

Per-op rules live with the layer that uses them: graph ops carry no code
to run; each kernel module registers its functions here by op type.

* source kernels: ``fn(op, expr, out_region) -> ndarray``
* map kernels: ``fn(op, expr, out_region, *input_regions) -> ndarray``
* reduce kernels: a :class:`ReduceKernel` (partial, combine, finalize)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from lazyarr.graph.expr import Op

__all__ = ["ReduceKernel", "kernel_for", "register"]

_KERNELS: dict[type, Any] = {}


@dataclasses.dataclass(frozen=True)
class ReduceKernel:
    """A tree reduction: per-block partial state, pairwise combine, finalize.

    ``partial(op, block, in_region, in_shape)`` sees the global region of
    the block (argmin/argmax need positions); states may be any objects.
    ``finalize_into(op, expr, state, out)``, where given, writes the block
    into ``out`` (a view of the output's final array) and returns it, so a
    large block is not made and then copied.
    """

    partial: Callable[..., Any]
    combine: Callable[[Any, Any, Any], Any]
    finalize: Callable[..., Any]
    finalize_into: Callable[..., Any] | None = None
    pairwise: Callable[[Any], Any] | None = None
    """``pairwise(op)``: the ufunc ``combine`` applies to two states that are plain
    arrays (None: the op's states are not), so a level of the tree is one call."""


def register(op_type: type[Op]) -> Callable[[Any], Any]:
    """Decorator: the NumPy kernel of ``op_type``."""

    def deco(fn: Any) -> Any:
        _KERNELS[op_type] = fn
        return fn

    return deco


def kernel_for(op: Op) -> Any:
    """The registered kernel of ``op``'s type; ``NotImplementedError`` if none."""
    try:
        return _KERNELS[type(op)]
    except KeyError:
        raise NotImplementedError(f"no NumPy kernel is registered for op {op.name!r}") from None
