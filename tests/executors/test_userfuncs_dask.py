"""User functions per block on the dask executor (a LocalCluster of 2 processes): lambdas and
closures travel to the workers by value, numba functions compile there inside the fused kernel."""

from __future__ import annotations

import os
import subprocess
import sys

import numba
import numpy as np
import pytest
import scipy.ndimage as ndi

import lazyarr as la
from lazyarr.testing import assert_eq


@numba.vectorize
def twice_plus(v):
    return v * 2 + 0.5


def test_map_blocks_blockwise_and_gufunc_on_dask(dask_ex):
    x = np.random.default_rng(0).random((7, 5))
    a = la.asarray(x, chunks=((3, 4), (2, 3)))
    k = 3.0
    assert_eq(la.map_blocks(lambda b: b * k, a), x * k, executors=["dask"])
    assert_eq(
        la.map_blocks(lambda b: b.sum(axis=1), a, drop_axis=1), x.sum(axis=1), executors=["dask"]
    )
    assert_eq(
        la.blockwise(np.dot, "ik", a, "ij", a.T, "jk", concatenate=True),
        x @ x.T,
        executors=["dask"],
    )
    assert_eq(
        la.apply_gufunc(lambda v: v.max(-1), "(i)->()", a.rechunk((3, 5))),
        x.max(-1),
        executors=["dask"],
    )
    assert_eq(la.apply_along_axis(np.cumsum, 0, a), np.cumsum(x, axis=0), executors=["dask"])


def test_map_overlap_every_mode_on_dask(dask_ex):
    x = np.random.default_rng(1).random((9, 8))
    a = la.asarray(x, chunks=((4, 2, 3), (3, 5)))
    for mode, scipy_mode in (
        ("reflect", "reflect"),
        ("periodic", "grid-wrap"),
        ("nearest", "nearest"),
        (0.25, "constant"),
    ):
        got = la.map_overlap(
            lambda b: ndi.uniform_filter(b, 3, mode="constant"), a, depth=1, boundary=mode
        )
        want = ndi.uniform_filter(
            x, 3, mode=scipy_mode, cval=0.25 if scipy_mode == "constant" else 0
        )
        assert_eq(got, want, executors=["dask"])


def test_fused_numba_ufunc_on_dask(dask_ex):
    x = np.random.default_rng(2).random(40)
    a = la.asarray(x, chunks=15)
    assert_eq(twice_plus(a) * 3 + 1, (x * 2 + 0.5) * 3 + 1, executors=["dask"])


SCRIPT = """
import numpy as np
import lazyarr as la


def triple(b):
    return b * 3


x = la.asarray(np.arange(10.0), chunks=3)
print(la.map_blocks(triple, x).compute(executor="dask").tolist())
"""


def test_a_function_of_a_scripts_main_reaches_the_workers(dask_ex, tmp_path):
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    env = {
        **os.environ,
        "LAZYARR_DASK__ADDRESS": dask_ex.client().scheduler.address,
        "PYTHONPATH": os.pathsep.join(sys.path),
    }
    out = subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == str([v * 3 for v in np.arange(10.0).tolist()])


def test_a_wrong_block_and_an_error_inside_are_named_on_dask(dask_ex):
    """The shape check and the block's note travel back from the workers (issue 24, row 3)."""
    a = la.arange(8, chunks=4)

    def fails_on_second(b, block_id=None):
        if block_id == (1,):
            raise ZeroDivisionError("boom")
        return b

    with pytest.raises(ZeroDivisionError) as info:
        la.map_blocks(fails_on_second, a, dtype="i8").compute(executor="dask")
    assert "while computing block (1,) of fails_on_second" in info.value.__notes__
    shifted = la.map_overlap(lambda b: b[1:], a, depth=1, boundary="reflect", dtype="i8")
    with pytest.raises(ValueError, match=r"block \(\d,\) \(with its halo\) where \(6,\)"):
        shifted.compute(executor="dask")
