"""Data types and the Array API's type functions and inspection namespace."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from lazyarr._array import LazyArray
from lazyarr.namespace._register import implements

__all__ = [
    "__array_namespace_info__",
    "bool",
    "can_cast",
    "complex64",
    "complex128",
    "e",
    "finfo",
    "float32",
    "float64",
    "iinfo",
    "inf",
    "int8",
    "int16",
    "int32",
    "int64",
    "isdtype",
    "nan",
    "newaxis",
    "pi",
    "result_type",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
]

bool = np.dtype(np.bool_)
int8 = np.dtype(np.int8)
int16 = np.dtype(np.int16)
int32 = np.dtype(np.int32)
int64 = np.dtype(np.int64)
uint8 = np.dtype(np.uint8)
uint16 = np.dtype(np.uint16)
uint32 = np.dtype(np.uint32)
uint64 = np.dtype(np.uint64)
float32 = np.dtype(np.float32)
float64 = np.dtype(np.float64)
complex64 = np.dtype(np.complex64)
complex128 = np.dtype(np.complex128)

e = float(np.e)
pi = float(np.pi)
inf = float("inf")
nan = float("nan")
newaxis = None

_SUPPORTED = (
    bool,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
    float32,
    float64,
    complex64,
    complex128,
)
_KINDS = {
    "bool": lambda d: d.kind == "b",
    "signed integer": lambda d: d.kind == "i",
    "unsigned integer": lambda d: d.kind == "u",
    "integral": lambda d: d.kind in "iu",
    "real floating": lambda d: d.kind == "f",
    "complex floating": lambda d: d.kind == "c",
    "numeric": lambda d: d.kind in "iufc",
}


def _dtype_of(x: Any) -> Any:
    if isinstance(x, LazyArray):
        return x.dtype
    if isinstance(x, (int, float, complex)) and not isinstance(x, np.generic):
        return x  # weak Python scalar
    if isinstance(x, type) or not hasattr(x, "dtype"):  # np.float64 has a class attribute
        return np.dtype(x)
    return x.dtype


def isdtype(dtype: Any, kind: Any) -> Any:
    """Whether ``dtype`` is of ``kind`` (a dtype, a kind name, or a tuple of them)."""
    dtype = np.dtype(dtype)
    if isinstance(kind, tuple):
        return any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, str):
        if kind not in _KINDS:
            raise ValueError(f"unknown dtype kind {kind!r}; known: {sorted(_KINDS)}")
        return _KINDS[kind](dtype)
    return dtype == np.dtype(kind)


@implements("result_type")
def result_type(*arrays_and_dtypes: Any) -> np.dtype:
    """The dtype NumPy's promotion gives (Python scalars are weak, as in NEP 50)."""
    if not arrays_and_dtypes:
        raise ValueError("at least one array or dtype is required")
    return np.result_type(*(_dtype_of(x) for x in arrays_and_dtypes))


@implements("can_cast")
def can_cast(from_: Any, to: Any, /, casting: str = "safe") -> Any:
    """Whether ``from_`` (a dtype or array) casts to ``to`` (safely, or by NumPy's ``casting``)."""
    src = from_.dtype if isinstance(from_, LazyArray) else np.dtype(from_)
    return np.can_cast(src, np.dtype(to), casting=casting)


class FInfo(NamedTuple):
    """Machine limits of a floating dtype with the standard's attribute types: Python
    ``int``/``float`` and the real floating dtype (``finfo(complex64).dtype`` is float32)."""

    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: np.dtype
    resolution: float
    tiny: float
    precision: int


def finfo(type: Any, /) -> FInfo:
    """Machine limits of a floating dtype (NumPy's values, the Array API's types)."""
    f = np.finfo(type.dtype if isinstance(type, LazyArray) else type)
    return FInfo(
        int(f.bits),
        float(f.eps),
        float(f.max),
        float(f.min),
        float(f.smallest_normal),
        np.dtype(f.dtype),
        float(f.resolution),
        float(f.tiny),
        int(f.precision),
    )


def iinfo(type: Any, /) -> np.iinfo:
    """Machine limits of an integer dtype."""
    return np.iinfo(type.dtype if isinstance(type, LazyArray) else type)


class _Info:
    """The Array API inspection namespace (``__array_namespace_info__()``)."""

    def capabilities(self) -> dict[str, Any]:
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64}

    def default_device(self) -> str:
        return "cpu"

    def devices(self) -> list[str]:
        return ["cpu"]

    def default_dtypes(self, *, device: Any = None) -> dict[str, np.dtype]:
        return {
            "real floating": float64,
            "complex floating": complex128,
            "integral": int64,
            "indexing": int64,
        }

    def dtypes(self, *, device: Any = None, kind: Any = None) -> dict[str, np.dtype]:
        return {d.name: d for d in _SUPPORTED if kind is None or isdtype(d, kind)}


def __array_namespace_info__() -> _Info:
    """The inspection namespace of the Array API standard."""
    return _Info()
