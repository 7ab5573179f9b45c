"""Deterministic structural tokens: the canonical text of an op parameter.

Equal parameters give equal text, so expressions built twice hash the same
(common subexpressions are found by key) and plans are reproducible across
processes (no ``id()`` or ``hash()`` randomisation is involved).
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import uuid
from typing import Any

import numpy as np

__all__ = ["ArrayData", "ByToken", "Hole", "HOLE", "canonical", "digest"]

# Arrays up to this size are hashed by content; larger ones get a random
# token at wrap time (hashing 1 GB costs about a second, a uuid costs nothing).
CONTENT_HASH_LIMIT = 1 << 20


class Hole:
    """Marks where an input array goes in an op's argument template."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "HOLE"

    def __reduce__(self) -> str:
        return "HOLE"


HOLE = Hole()


class ArrayData:
    """A NumPy array held by a source op, compared and hashed by its token."""

    __slots__ = ("array", "token")

    def __init__(self, array: np.ndarray, token: str | None = None) -> None:
        self.array = array
        if token is None:
            if array.nbytes <= CONTENT_HASH_LIMIT and not array.dtype.hasobject:
                h = hashlib.blake2b(digest_size=16)
                h.update(str((array.dtype.str, array.shape)).encode())
                h.update(np.ascontiguousarray(array).view(np.uint8).data)
                token = h.hexdigest()
            else:
                token = uuid.uuid4().hex
        self.token = token

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ArrayData) and other.token == self.token

    def __hash__(self) -> int:
        return hash(self.token)

    def __repr__(self) -> str:
        return f"ArrayData({self.array.shape}, {self.array.dtype}, {self.token[:8]})"


class ByToken:
    """Stands for data by name: compared, hashed and keyed (``__lazyarr_token__``) by
    ``self.token`` (persisted blocks, stored arrays, write targets)."""

    __slots__ = ()
    token: str

    @property
    def __lazyarr_token__(self) -> str:
        return self.token

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.token == self.token  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self.token)


def _float_text(x: float) -> str:
    if math.isnan(x):
        return "nan"
    return repr(float(x))


def canonical(value: Any) -> str:
    """Return the canonical text of a parameter value (recursively)."""
    if value is None or isinstance(value, (bool, str)):
        return repr(value)
    if isinstance(value, Hole):
        return "HOLE"
    if isinstance(value, (np.datetime64, np.timedelta64)):  # unit and int64 count, NaT the minimum
        return f"{value.dtype.str}:{int(value.view(np.int64))}"
    if isinstance(value, (int, np.integer)) and not isinstance(value, np.bool_):
        return f"{type(value).__name__}:{int(value)}"
    if isinstance(value, (float, np.floating)):
        return f"{type(value).__name__}:{_float_text(float(value))}"
    if isinstance(value, (complex, np.complexfloating)):
        c = complex(value)
        return f"{type(value).__name__}:{_float_text(c.real)},{_float_text(c.imag)}"
    if isinstance(value, np.bool_):
        return f"np.bool:{bool(value)}"
    if isinstance(value, np.dtype):
        return f"dtype:{value.str}"
    if isinstance(value, type) and issubclass(value, np.generic):
        return f"dtype:{np.dtype(value).str}"
    if isinstance(value, slice):
        return f"slice({canonical(value.start)},{canonical(value.stop)},{canonical(value.step)})"
    if value is Ellipsis:
        return "..."
    if isinstance(value, ArrayData):
        return f"array:{value.token}"
    if isinstance(value, np.ndarray):
        return f"array:{ArrayData(value).token}"
    if isinstance(value, (tuple, list)):
        inner = ",".join(canonical(v) for v in value)
        return f"({inner})" if isinstance(value, tuple) else f"[{inner}]"
    if isinstance(value, frozenset):
        return "{" + ",".join(sorted(canonical(v) for v in value)) + "}"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = ",".join(
            f"{f.name}={canonical(getattr(value, f.name))}" for f in dataclasses.fields(value)
        )
        return f"{type(value).__name__}({fields})"
    token = getattr(value, "__lazyarr_token__", None)
    if token is not None:
        return f"{type(value).__name__}:{token}"
    raise TypeError(f"cannot make a structural token of {type(value).__name__!r}")


def digest(*parts: str) -> str:
    """Hash canonical texts into a short hexadecimal key."""
    h = hashlib.blake2b(digest_size=12)
    for p in parts:
        h.update(p.encode())
        h.update(b"\x00")
    return h.hexdigest()
