"""NumPy reference kernels: the semantics every other executor must match."""

from lazyarr.kernels.reference import creation, elementwise, reduction  # noqa: F401  (register)
from lazyarr.kernels.reference.registry import ReduceKernel, kernel_for, register

__all__ = ["ReduceKernel", "kernel_for", "register"]
