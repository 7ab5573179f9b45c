"""Machine code of generated loops: vectorized, interleaved, folds in order (needs Numba).

Speed comes from LLVM vectorizing the contiguous loops. These tests look at
the optimized LLVM IR of compiled kernels (the count of vector operations)
and check that the tiled reduction loops fold values in exactly the order
of a plain sequential loop, so results stay the same bit for bit.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import lazyarr as la
from lazyarr.kernels.compile import Options, compile_kernel
from lazyarr.kernels.emit import emit_map, emit_reduce

# Kernels compiled in memory here, never cached: Numba cannot show IR of cached code.
MEMORY = Options(None, False, "tests.kernels.test_loops")


def chain(x, n_ops: int):
    """``n_ops`` dependent ops, a quarter of them multiplies (like bench/local.py's w4)."""
    v = x
    for i in range(n_ops):
        v = [v * 0.999, v + 0.5, abs(v), v - 0.25][i % 4]
    return v


def group(result) -> tuple[list, list]:
    """The elementwise ops ``result`` is made of (dependency order) and its other inputs."""
    members: dict[str, object] = {}
    inputs: dict[str, object] = {}

    def visit(e):
        if e.key in members or e.key in inputs:
            return
        if e.op.name == "elementwise":
            for i in e.inputs:
                visit(i)
            members[e.key] = e
        else:
            inputs[e.key] = e

    visit(result)
    return list(members.values()), list(inputs.values())


def llvm_ir(kernel) -> str:
    fn = compile_kernel(kernel, MEMORY)
    return fn.inspect_llvm(fn.signatures[0])


def test_a_long_chain_runs_as_several_vector_chains():
    x = la.asarray(np.ones(64))
    members, inputs = group(chain(x, 40)._expr)  # 10 multiplies per element
    ir = llvm_ir(emit_map(members, inputs))
    vector = len(re.findall(r"fmul <\d+ x double>", ir))
    if vector == 0:
        pytest.skip("this CPU target does not vectorize the loop at all")
    # one vector chain has 10 multiplies; the interleaved loop has several chains
    assert vector >= 2 * 10, f"{vector} vector multiplies: the loop is not interleaved"


def test_the_values_of_a_fold_are_computed_by_a_vector_loop():
    x = la.asarray(np.ones(64))
    y = la.asarray(np.ones(64))
    root = la.sum(la.sqrt(x * x / (1 + abs(y))))._expr
    members, inputs = group(root.inputs[0])
    ir = llvm_ir(emit_reduce(members, inputs, root))
    if not re.search(r"<\d+ x double>", ir):
        pytest.skip("this CPU target does not vectorize the loop at all")
    # the loop over state arrays (inner axis kept) has one vector sqrt and division; a
    # fold into registers in one loop keeps its values scalar (the sum must stay in
    # order), the tiled fold computes them in a vector loop of its own
    sqrt = re.findall(r"call <\d+ x double> @llvm\.sqrt\.v\d+f64", ir)
    div = re.findall(r"fdiv <\d+ x double>", ir)
    assert len(sqrt) >= 2 and len(div) >= 2, "the values of the fold are not vectorized"


def lane_sum(values: np.ndarray, tile: int = 512, lanes: int = 8) -> float:
    """The kernel's floating sum of one row, step by step: per tile, ``lanes`` partial
    sums over whole groups of ``lanes`` values, the rest into lane 0, summed pairwise
    into the total."""
    total = np.float64(0)
    for j0 in range(0, len(values), tile):
        t = values[j0 : j0 + tile]
        acc = [np.float64(0)] * lanes
        e = len(t) - len(t) % lanes
        for i in range(e):
            acc[i % lanes] = acc[i % lanes] + t[i]
        for i in range(e, len(t)):
            acc[0] = acc[0] + t[i]
        while len(acc) > 1:
            acc = [x + y for x, y in zip(acc[::2], acc[1::2])]
        total = total + acc[0]
    return total


@pytest.mark.parametrize("n", [1, 7, 511, 512, 513, 1537])
def test_a_tiled_sum_adds_in_lanes_in_a_fixed_order(n):
    rng = np.random.default_rng(n)
    a, b = rng.standard_normal(n) * 1e3, rng.standard_normal(n)
    values = a * 0.3 + b
    # one block: the result is the kernel's fold, lane by lane, deterministic to the bit
    got = la.sum(la.asarray(a) * 0.3 + la.asarray(b)).compute(executor="numba")
    assert got == lane_sum(values)
    assert abs(got - math.fsum(values)) <= 1e-12 * np.abs(values).sum()
    # a lone sum (no body) folds its input in lanes too
    assert la.sum(la.asarray(values)).compute(executor="numba") == lane_sum(values)
    # a row per output, over tiles: each row the same way
    rows = np.stack([values, values[::-1]])
    x = la.asarray(np.stack([a, a[::-1]])) * 0.3 + la.asarray(np.stack([b, b[::-1]]))
    got_rows = la.sum(x, axis=1).compute(executor="numba")
    np.testing.assert_array_equal(got_rows, [lane_sum(r) for r in rows])


def test_a_lane_sum_is_as_accurate_as_numpys_pairwise_sum():
    """Lanes are not a chain: a sum of many values that cancel keeps NumPy's accuracy."""
    rng = np.random.default_rng(3)
    v = np.concatenate([rng.standard_normal(200_000) * 1e8, rng.standard_normal(200_000)])
    rng.shuffle(v)
    exact = math.fsum(v)
    got = la.sum(la.asarray(v)).compute(executor="numba")
    assert abs(got - exact) <= 4 * abs(np.sum(v) - exact) + 1e-6


def test_positions_and_nans_in_later_tiles():
    n = 1600  # four tiles of 512 (the last partial)
    a = np.linspace(1, 2, n)
    a[700] = a[1300] = -5.0  # a tie across tiles: the first wins
    x = la.asarray(a)
    assert la.argmin(x * 1).compute(executor="numba") == np.argmin(a) == 700
    b = a.copy()
    b[1100] = np.nan
    b[1500] = np.nan
    y = la.asarray(b)
    assert la.argmax(y + 0).compute(executor="numba") == np.argmax(b) == 1100
    assert np.isnan(la.max(y * 2).compute(executor="numba"))
    assert la.nanmax(y * 2).compute(executor="numba") == np.nanmax(b * 2)
    assert la.nansum(y * 2).compute(executor="numba") == np.cumsum(np.nan_to_num(b * 2))[-1]
    c = np.stack([a, b[::-1], 1e6 + a])  # rows reduced through tiles (k: rank in the row)
    z = la.asarray(c)
    np.testing.assert_allclose(la.var(z * 1, axis=1).compute(), np.var(c, axis=1), rtol=1e-12)
    np.testing.assert_array_equal(la.argmin(z - 0, axis=1).compute(), np.argmin(c, axis=1))


def test_integer_division_by_zero_in_a_later_tile_is_reported():
    n = 1200
    a = np.arange(n, dtype=np.int64)
    d = np.ones(n, dtype=np.int64)
    d[1000] = 0
    x, y = la.asarray(a), la.asarray(d)
    with np.errstate(divide="raise"):
        with pytest.raises(FloatingPointError):
            np.sum(a // d)
        with pytest.raises(FloatingPointError):
            la.sum(x // y).compute(executor="numba")
    with np.errstate(divide="ignore"):
        assert la.sum(x // y).compute(executor="numba") == np.sum(a // d)
    # a NaN output sets only the kernel's private flag: no error is reported
    f = la.asarray(np.where(d == 0, np.nan, 1.0))
    with np.errstate(all="raise"):
        assert np.isnan(la.sum(f * 2).compute(executor="numba"))
        assert np.isnan((f * 2).compute(executor="numba")).sum() == 1
