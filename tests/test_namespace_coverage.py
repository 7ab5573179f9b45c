"""The Array API (2024.12) names all exist in ``lazyarr``, ``lazyarr.linalg``, ``lazyarr.fft``.

The list is the standard's, written out here (not read from a library), so a
name that disappears from lazyarr fails this test.
"""

from __future__ import annotations

import numpy as np
import pytest

import lazyarr as la

CONSTANTS = ["e", "inf", "nan", "newaxis", "pi"]
DTYPES = [
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float32",
    "float64",
    "complex64",
    "complex128",
]
FUNCTIONS = [
    "abs",
    "acos",
    "acosh",
    "add",
    "all",
    "any",
    "arange",
    "argmax",
    "argmin",
    "argsort",
    "asarray",
    "asin",
    "asinh",
    "astype",
    "atan",
    "atan2",
    "atanh",
    "bitwise_and",
    "bitwise_invert",
    "bitwise_left_shift",
    "bitwise_or",
    "bitwise_right_shift",
    "bitwise_xor",
    "broadcast_arrays",
    "broadcast_shapes",
    "broadcast_to",
    "can_cast",
    "ceil",
    "clip",
    "concat",
    "conj",
    "copysign",
    "cos",
    "cosh",
    "count_nonzero",
    "cumulative_prod",
    "cumulative_sum",
    "diff",
    "divide",
    "empty",
    "empty_like",
    "equal",
    "exp",
    "expand_dims",
    "expm1",
    "eye",
    "finfo",
    "flip",
    "floor",
    "floor_divide",
    "from_dlpack",
    "full",
    "full_like",
    "greater",
    "greater_equal",
    "hypot",
    "iinfo",
    "imag",
    "isdtype",
    "isfinite",
    "isin",
    "isinf",
    "isnan",
    "less",
    "less_equal",
    "linspace",
    "log",
    "log10",
    "log1p",
    "log2",
    "logaddexp",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "matmul",
    "matrix_transpose",
    "max",
    "maximum",
    "mean",
    "meshgrid",
    "min",
    "minimum",
    "moveaxis",
    "multiply",
    "negative",
    "nextafter",
    "nonzero",
    "not_equal",
    "ones",
    "ones_like",
    "permute_dims",
    "pow",
    "prod",
    "real",
    "reciprocal",
    "remainder",
    "repeat",
    "reshape",
    "result_type",
    "roll",
    "round",
    "searchsorted",
    "sign",
    "signbit",
    "sin",
    "sinh",
    "sort",
    "sqrt",
    "square",
    "squeeze",
    "stack",
    "std",
    "subtract",
    "sum",
    "take",
    "take_along_axis",
    "tan",
    "tanh",
    "tensordot",
    "tile",
    "tril",
    "triu",
    "trunc",
    "unique_all",
    "unique_counts",
    "unique_inverse",
    "unique_values",
    "unstack",
    "var",
    "vecdot",
    "where",
    "zeros",
    "zeros_like",
    "__array_namespace_info__",
]
LINALG = [
    "cholesky",
    "cross",
    "det",
    "diagonal",
    "eigh",
    "eigvalsh",
    "inv",
    "matmul",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "matrix_transpose",
    "outer",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "svd",
    "svdvals",
    "tensordot",
    "trace",
    "vecdot",
    "vector_norm",
]
FFT = [
    "fft",
    "ifft",
    "fftn",
    "ifftn",
    "rfft",
    "irfft",
    "rfftn",
    "irfftn",
    "hfft",
    "ihfft",
    "fftfreq",
    "rfftfreq",
    "fftshift",
    "ifftshift",
]


def missing(module, names):
    return [n for n in names if not hasattr(module, n)]


def test_constants_and_dtypes():
    assert missing(la, CONSTANTS + DTYPES) == []
    assert la.float64 == np.float64 and la.newaxis is None
    assert la.__array_api_version__ == "2024.12"


@pytest.mark.parametrize(("module", "names"), [(la, FUNCTIONS), (la.linalg, LINALG), (la.fft, FFT)])
def test_every_standard_function_exists_and_is_callable(module, names):
    assert missing(module, names) == []
    assert all(callable(getattr(module, n)) for n in names)


@pytest.mark.parametrize("module", [la.random, la.fft, la.linalg], ids=lambda m: m.__name__)
def test_submodules_show_and_export_only_their_public_names(module):
    public = sorted(module.__all__)
    assert [n for n in dir(module) if not n.startswith("_")] == public
    for hidden in ("np", "Expr", "wrap", "secrets", "LazyArray", "annotations", "Any"):
        assert hidden not in dir(module)
    namespace: dict = {}
    exec(f"from {module.__name__} import *", namespace)
    assert sorted(set(namespace) - {"__builtins__"}) == public
    # nothing public is hidden: every function or class the module defines is listed
    own = [
        n
        for n, v in vars(module).items()
        if not n.startswith("_") and getattr(v, "__module__", None) == module.__name__
    ]
    assert set(own) <= set(public), sorted(set(own) - set(public))
