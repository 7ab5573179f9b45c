"""The differential test helpers: lazyarr against NumPy, on every executor.

``assert_eq(lazy, expected)`` computes ``lazy`` on each registered executor
(except the test-only ``raise``), with the optimization pipeline on and off,
and checks shape, dtype and values against ``expected``.
``assert_same_error(numpy_call, lazy_call)`` checks that lazyarr raises
NumPy's exception type, and raises it while the expression is written.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lazyarr import api, config
from lazyarr.executors import registry
from lazyarr.executors.testing import ComputeRefused

__all__ = ["assert_eq", "assert_same_error", "executors_under_test", "tolerance"]

_SKIP = {"raise"}


def executors_under_test(everything: bool = False) -> list[str]:
    """Registered executors that can run here (all but the test-only ``raise``).

    Executors marked ``differential_tests = False`` (a cluster: seconds per
    compute) are left out unless ``everything``; they run the conformance
    suite and a sample of every op instead.
    """
    names = []
    for n, (ok, _) in registry.available().items():
        if not ok or n in _SKIP:
            continue
        if everything or getattr(registry.get(n), "differential_tests", True):
            names.append(n)
    return names


def tolerance(dtype: np.dtype) -> tuple[float, float]:
    """(rtol, atol) for comparing results of ``dtype`` (exact for ints and bools)."""
    dtype = np.dtype(dtype)
    if dtype.kind in "fc":
        eps = float(np.finfo(dtype).eps)
        return eps * 1e4, eps * 1e4
    return 0.0, 0.0


def _expr_of(value: Any) -> Any:
    from lazyarr._convert import as_expr

    return as_expr(value)


def _compare(
    got: np.ndarray, want: np.ndarray, rtol: float, atol: float, check_dtype: bool, where: str
) -> None:
    if got.shape != want.shape:
        raise AssertionError(f"{where}: shape {got.shape} != NumPy's {want.shape}")
    if check_dtype and got.dtype != want.dtype:
        raise AssertionError(f"{where}: dtype {got.dtype} != NumPy's {want.dtype}")
    if want.dtype.kind in "fc" or got.dtype.kind in "fc":
        with np.errstate(invalid="ignore"):
            ok = np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
        if not ok:
            diff = np.abs(got.astype(complex) - want.astype(complex))
            raise AssertionError(
                f"{where}: values differ from NumPy's "
                f"(max abs diff {np.nanmax(diff) if diff.size else 0}, "
                f"rtol={rtol}, atol={atol})\n got: {got!r}\nwant: {want!r}"
            )
    elif not np.array_equal(got, want, equal_nan=want.dtype.kind in "mM"):  # NaT == NaT
        raise AssertionError(f"{where}: values differ from NumPy's\n got: {got!r}\nwant: {want!r}")


def assert_eq(
    actual: Any,
    expected: Any,
    *,
    rtol: float | None = None,
    atol: float | None = None,
    check_dtype: bool = True,
    executors: Sequence[str] | None = None,
    passes: Sequence[bool] = (True, False),
) -> None:
    """``actual`` (lazy) equals ``expected`` (NumPy) on every executor, passes on and off."""
    want = np.asarray(expected)
    expr = _expr_of(actual)
    if expr.shape != want.shape:
        raise AssertionError(f"lazy shape {expr.shape} != NumPy's {want.shape} (before computing)")
    if check_dtype and expr.dtype != want.dtype:
        raise AssertionError(f"lazy dtype {expr.dtype} != NumPy's {want.dtype} (before computing)")
    r, a = tolerance(want.dtype if want.dtype.kind in "fc" else expr.dtype)
    rtol = r if rtol is None else rtol
    atol = a if atol is None else atol
    names = list(executors) if executors is not None else executors_under_test()
    if not names:
        raise AssertionError("no executor to test with")
    with config.set({"optimize.check": True}):
        for name in names:
            for enabled in passes:
                (got,) = api.compute_exprs([expr], executor=name, optimize=enabled, progress=False)
                where = f"executor={name!r}, passes={'on' if enabled else 'off'}"
                if not isinstance(got, np.ndarray):
                    raise AssertionError(f"{where}: result is {type(got).__name__}, not ndarray")
                _compare(got, want, rtol, atol, check_dtype, where)


def assert_same_error(
    numpy_call: Callable[[], Any], lazy_call: Callable[[], Any]
) -> type[BaseException]:
    """Both calls raise the same exception type; lazyarr's without computing anything.

    Returns the exception type. ``lazy_call`` runs under the ``raise``
    executor, so an error found only by computing fails the check.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            numpy_call()
        except Exception as e:
            want: type[BaseException] = type(e)
        else:
            raise AssertionError("NumPy did not raise; nothing to compare")
    with config.set(executor="raise"):
        try:
            lazy_call()
        except ComputeRefused as e:
            raise AssertionError(f"lazyarr computed instead of raising {want.__name__}: {e}") from e
        except Exception as e:
            if not isinstance(e, want) and not issubclass(want, type(e)):
                raise AssertionError(
                    f"lazyarr raised {type(e).__name__}({e}) where NumPy raises {want.__name__}"
                ) from e
            return want
    raise AssertionError(f"lazyarr did not raise; NumPy raises {want.__name__}")
