"""The one way a test allows the numba executor's ``FallbackWarning`` (an error elsewhere).

A stage runs with NumPy's kernels where the compiled kernels do not support its op
or dtype; the warning says which. A test that computes such a stage on purpose marks
itself with :func:`numpy_kernels`, naming the op or dtype and why, so any other
fallback (an emitter bug included) still fails it.
"""

from __future__ import annotations

import pytest

__all__ = ["numpy_kernels"]


def numpy_kernels(match: str, why: str) -> pytest.MarkDecorator:
    """Allow the fallbacks whose message matches the regex ``match`` (after
    ``numba executor: a stage of``; no colon: it separates a filter's fields); ``why``
    says why the test expects them."""
    if not why or ":" in match:
        raise ValueError("say why the test expects the fallback, and match without a colon")
    return pytest.mark.filterwarnings(
        f"ignore:numba executor. a stage of .*{match}:lazyarr.kernels.numba_set.FallbackWarning"
    )
