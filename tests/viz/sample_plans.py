"""Hand-made plans and run statistics for the viz tests, independent of the passes.

The plan ``sample_plan`` builds, drawn::

    src  ones (1000, 200) f8, chunks (250, 200): 4 blocks, 1.53 MiB
     |  1.53 MiB
    fmap fused map: add -> multiply -> sqrt (same grid)
     |  1.53 MiB
    total reduce sum(axis=0) -> (200,) f8, 1.56 kiB      [output]
"""

from __future__ import annotations

import numpy as np

import lazyarr as la
from lazyarr.optimize.plan import PassRecord, Placement, Plan, Stage


def sample_plan(placed: bool = False) -> Plan:
    x = la.ones((1000, 200), chunks=(250, 200))
    a = x + 1
    b = a * 2
    c = la.sqrt(b)
    s = c.sum(axis=0)
    xe, ae, be, ce, se = (v._expr for v in (x, a, b, c, s))
    stages = {
        "src": Stage("src", xe, ()),
        "fmap": Stage("fmap", ce, ("src",), members=(ae, be, ce), input_exprs=(xe,)),
        "total": Stage("total", se, ("fmap",), input_exprs=(ce,)),
    }
    notes = {
        "fuse": {
            ae.name: "fused into fmap",
            be.name: "fused into fmap",
            ce.name: "root of a fused stage of 3 ops",
            se.name: "not fused: a requested output is stored",
            xe.name: "not fused: full is not elementwise",
        }
    }
    plan = Plan(
        stages,
        ("total",),
        (PassRecord("cse", 1e-5, "5 -> 5 stages"), PassRecord("fuse", 2e-5, "5 -> 3 stages")),
        notes,
    )
    if placed:  # what the place pass writes: worker and predicted bytes moved per block
        for name, workers, moved in (
            ("src", [0, 0, 1, 1], [0, 0, 0, 0]),
            ("fmap", [0, 0, 1, 1], [0, 0, 0, 0]),
            ("total", [1], [800]),
        ):
            s = plan.stages[name]
            stages[name] = s.replace(
                worker=np.asarray(workers, dtype=np.int32).reshape(s.numblocks),
                est_bytes=np.asarray(moved, dtype=np.int64).reshape(s.numblocks),
                placement=Placement("tree" if name == "total" else "owner"),
            )
        plan = plan.with_stages(stages).replace(
            workers=("tcp://127.0.0.1:4001", "tcp://127.0.0.1:4002"),
            hosts=("127.0.0.1", "127.0.0.1"),
        )
        plan.notes["place"] = {
            "n_workers": 2,
            "workers": ["tcp://127.0.0.1:4001", "tcp://127.0.0.1:4002"],
            "hosts": ["127.0.0.1", "127.0.0.1"],
            "total_bytes": 800,
            "total_moves": 1,
            "per_worker": {
                "memory": [3_200_000, 1_700_000],
                "net_in": [0, 800],
                "net_out": [800, 0],
                "bytes_in": [0, 800],
            },
            "summary": "predicted 800 B moved between workers; max load 3.05 MiB on w0",
            "stages": {"total": "partials paired on their holders; final block on w1"},
        }
    return plan


def sample_stats() -> dict:
    """Measurements as a run's RunStats would hold them (a dict of the same fields)."""
    return {
        "executor": "dask",
        "seconds": 0.25,
        "stage_seconds": {"src": 0.01, "fmap": 0.123, "total": 0.004},
        "extra": {
            "workers": {
                "tcp://127.0.0.1:4001": {
                    "bytes_in": 0,
                    "bytes_out": 1600,
                    "peak_memory": 4_100_000,
                    "tasks": 5,
                },
                "tcp://127.0.0.1:4002": {
                    "bytes_in": 1600,
                    "bytes_out": 0,
                    "peak_memory": 1_900_000,
                    "tasks": 5,
                },
            }
        },
    }
