"""Expressions to JSON and back (used by ``Plan.to_json``).

Op payloads are dataclasses, so each field is written with a small tagged
encoding (slices, dtypes, complex numbers, arrays as base64 ``.npy``).
Keys survive the round trip: a read-back expression has the same key.
"""

from __future__ import annotations

import base64
import dataclasses
import io
from collections.abc import Sequence
from typing import Any

import numpy as np

from lazyarr.graph.expr import Expr, op_types
from lazyarr.graph.token import HOLE, ArrayData, Hole
from lazyarr.graph.window import Window

__all__ = ["decode_value", "encode_value", "exprs_from_json", "exprs_to_json"]


def encode_value(v: Any) -> Any:
    """A JSON-able form of an op parameter."""
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, Hole):
        return {"__t": "hole"}
    if isinstance(v, (int, np.integer)) and not isinstance(v, np.bool_):
        return v if type(v) is int else {"__t": "npscalar", "dtype": v.dtype.str, "v": int(v)}
    if isinstance(v, (float, np.floating)):
        f = float(v)
        text = repr(f) if f == f and abs(f) != float("inf") else str(f)
        return (
            {"__t": "float", "v": text}
            if type(v) is float
            else {
                "__t": "npscalar",
                "dtype": v.dtype.str,
                "v": text,
            }
        )
    if isinstance(v, (complex, np.complexfloating)):
        c = complex(v)
        return {"__t": "complex", "re": repr(c.real), "im": repr(c.imag)}
    if isinstance(v, np.bool_):
        return {"__t": "npbool", "v": bool(v)}
    if isinstance(v, np.dtype):
        return {"__t": "dtype", "v": v.str}
    if isinstance(v, slice):
        return {
            "__t": "slice",
            "v": [encode_value(v.start), encode_value(v.stop), encode_value(v.step)],
        }
    if v is Ellipsis:
        return {"__t": "ellipsis"}
    if isinstance(v, tuple):
        return {"__t": "tuple", "v": [encode_value(x) for x in v]}
    if isinstance(v, list):
        return [encode_value(x) for x in v]
    if isinstance(v, ArrayData):
        buf = io.BytesIO()
        np.save(buf, v.array, allow_pickle=False)
        return {"__t": "array", "token": v.token, "npy": base64.b64encode(buf.getvalue()).decode()}
    if isinstance(v, np.ndarray):
        return encode_value(ArrayData(v))
    if isinstance(v, Window):  # a sliced generated source (arange(...)[2:5])
        return {"__t": "window", "base": encode_value(v.base), "axes": encode_value(v.axes)}
    token = getattr(v, "__lazyarr_token__", None)
    if token is not None:
        return {"__t": "opaque", "type": type(v).__name__, "token": token}
    raise TypeError(f"cannot write {type(v).__name__!r} to JSON")


class Opaque:
    """Stands for a parameter that cannot travel in JSON (persisted blocks)."""

    def __init__(self, type_name: str, token: str) -> None:
        self.type_name = type_name
        self.__lazyarr_token__ = token

    def __repr__(self) -> str:
        return f"<{self.type_name} not stored in the plan file>"


def decode_value(v: Any) -> Any:
    """Inverse of :func:`encode_value`."""
    if isinstance(v, list):
        return [decode_value(x) for x in v]
    if not isinstance(v, dict):
        return v
    t = v["__t"]
    if t == "hole":
        return HOLE
    if t == "float":
        return float(v["v"])
    if t == "npscalar":
        return np.dtype(v["dtype"]).type(v["v"])
    if t == "complex":
        return complex(float(v["re"]), float(v["im"]))
    if t == "npbool":
        return np.bool_(v["v"])
    if t == "dtype":
        return np.dtype(v["v"])
    if t == "slice":
        return slice(*(decode_value(x) for x in v["v"]))
    if t == "ellipsis":
        return Ellipsis
    if t == "tuple":
        return tuple(decode_value(x) for x in v["v"])
    if t == "array":
        arr = np.load(io.BytesIO(base64.b64decode(v["npy"])), allow_pickle=False)
        return ArrayData(arr, v["token"])
    if t == "opaque":
        return Opaque(v["type"], v["token"])
    if t == "window":
        return Window(decode_value(v["base"]), decode_value(v["axes"]))
    raise ValueError(f"unknown tag {t!r} in plan JSON")


def exprs_to_json(roots: Sequence[Expr]) -> tuple[dict[str, Any], list[str]]:
    """A table key -> encoded node for everything reachable from ``roots``."""
    table: dict[str, Any] = {}
    stack = list(roots)
    while stack:
        e = stack.pop()
        if e.key in table:
            continue
        table[e.key] = {
            "op": e.op.name,
            "params": {
                f.name: encode_value(getattr(e.op, f.name)) for f in dataclasses.fields(e.op)
            },
            "inputs": [i.key for i in e.inputs],
            "shape": list(e.shape),
            "dtype": e.dtype.str,
            "chunks": [list(c) for c in e.chunks],
        }
        stack.extend(e.inputs)
    return table, [r.key for r in roots]


def _check_loaded(e: Expr) -> None:
    """An embedded array has the shape and dtype its node declares (a plan file may be
    damaged or edited; ``Expr`` itself checks chunks against the shape)."""
    data = getattr(e.op, "data", None)
    if isinstance(data, ArrayData) and e.op.name == "array":
        arr = data.array
        if arr.shape != e.shape or arr.dtype != e.dtype:
            raise ValueError(
                f"plan JSON: node {e.key} declares shape {e.shape} and dtype {e.dtype}, "
                f"but its embedded array has shape {arr.shape} and dtype {arr.dtype}"
            )


def exprs_from_json(table: dict[str, Any]) -> dict[str, Expr]:
    """Rebuild every node of a table written by :func:`exprs_to_json`."""
    types = op_types()
    built: dict[str, Expr] = {}
    waiting = {k: set(d["inputs"]) for k, d in table.items()}
    readers: dict[str, list[str]] = {k: [] for k in table}
    for k, d in table.items():
        for i in set(d["inputs"]):
            readers[i].append(k)
    ready = sorted(k for k, deps in waiting.items() if not deps)
    while ready:
        k = ready.pop()
        d = table[k]
        op = types[d["op"]](**{n: decode_value(v) for n, v in d["params"].items()})
        e = Expr(op, [built[i] for i in d["inputs"]], d["shape"], d["dtype"], d["chunks"])
        if e.key != k:
            raise ValueError(f"plan JSON is inconsistent: node {k} reads back as {e.key}")
        _check_loaded(e)
        built[k] = e
        for r in readers[k]:
            waiting[r].discard(k)
            if not waiting[r]:
                ready.append(r)
    if len(built) != len(table):
        raise ValueError("plan JSON has a cycle or a missing input")
    return built
