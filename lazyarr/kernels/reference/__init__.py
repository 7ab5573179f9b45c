"""NumPy reference kernels: the semantics every other executor must match.

Importing a kernel module registers its kernels; every op family's module
is listed here.
"""

from lazyarr.kernels.reference import (  # noqa: F401  (imported to register kernels)
    creation,
    cumreduction,
    elementwise,
    indexing,
    linalg,
    manipulation,
    reduction,
    samplesort,
    sorting,
    statistics,
    store,
    topk,
    tsqr,
    userfunc,
    userreduce,
)
from lazyarr.kernels.reference.registry import ReduceKernel, kernel_for, register

__all__ = ["ReduceKernel", "kernel_for", "register"]
