"""The memory limit: plans that cannot fit are refused before they run; large sources
read by two stages are made again by each reader; a run under the limit stays under it,
measured as the peak RSS of a child process."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from test_io_read import Recording

import lazyarr as la
from lazyarr import api
from lazyarr.executors import registry
from lazyarr.optimize.memory import MemoryLimitError, estimate

A = np.arange(400 * 30, dtype=np.float64).reshape(400, 30) % 17 - 8


def test_a_plan_that_cannot_fit_is_refused_before_anything_is_read():
    r = Recording(A)
    x = la.from_array(r, chunks=(100, 30))
    with la.config.set({"memory-limit": "20KiB"}), pytest.raises(MemoryLimitError) as err:
        (x * 2).compute()
    assert r.reads == []  # refused before any block ran
    msg = str(err.value)
    assert "predicted peak" in msg and "memory-limit 20.00 kiB" in msg and "held" in msg
    whole = la.from_array(r, chunks=(400, 30))
    with la.config.set({"memory-limit": "96KiB"}):
        with pytest.raises(MemoryLimitError, match=r"stage elementwise-\w+: .* would fit"):
            la.store(la.sin(whole) * 2, np.zeros_like(A))  # nothing gathered; blocks too big
        la.store(la.sin(x.rechunk((20, 30))) * 2, out := np.zeros_like(A))
        np.testing.assert_allclose(out, np.sin(A) * 2)


def test_the_numba_executor_runs_fewer_tasks_at_once_to_fit_the_limit():
    """A map task holds 1.9 MiB (its output block and the write's input): under 2 MiB one
    task runs at a time (the NumPy executor, which does not bound them, is refused), under
    1.5 MiB not even one fits and the plan is refused, saying which blocks would fit."""
    a = np.random.default_rng(0).random((2000, 500))
    x = la.from_array(a, chunks=(250, 500))
    out = np.zeros_like(a)
    with la.config.set({"numba.threads": 2, "numba.compile-threshold": 0}):
        la.store(la.sin(x) * 2, out)
        stats = la.last_run().stats
        assert stats.extra["threads"] == 2 and "in_flight_budget" not in stats.extra
        out[:] = 0
        with la.config.set({"memory-limit": "2MiB"}):
            la.store(la.sin(x) * 2, out)
            stats = la.last_run().stats
        assert stats.extra["threads"] == 2 and stats.extra["most_at_once"] == 1
        assert la.last_run().predicted_peak <= 2 * 2**20
        np.testing.assert_allclose(out, np.sin(a) * 2)
        with la.config.set({"memory-limit": "2MiB"}), pytest.raises(MemoryLimitError):
            la.store(la.sin(x) * 2, out, executor="numpy")  # runs two at once, unbounded
        too_small = la.config.set({"memory-limit": "1500KiB"})
        with too_small, pytest.raises(MemoryLimitError, match="at most about 748,544 bytes"):
            la.store(la.sin(x) * 2, out)


def test_the_numba_executor_takes_the_limit_from_the_plan_not_the_setting():
    """``memory-limit`` is read once, into the plan (``Plan.memory_limit``): a plan made
    under 3 MiB is run one task at a time even after the setting is gone."""
    a = np.random.default_rng(0).random((2000, 500))
    x = la.sin(la.from_array(a, chunks=(250, 500))) * 2
    with la.config.set({"numba.threads": 2, "numba.compile-threshold": 0}):
        with la.config.set({"memory-limit": "3MiB"}):
            plan = api.make_plan([x._expr], "numba", api.passes_for(None, None))
        unbounded = api.make_plan([x._expr], "numba", api.passes_for(None, None))
        assert plan.memory_limit == 3 * 2**20 and unbounded.memory_limit is None
        ex = registry.get("numba")
        (got,) = ex.execute(plan, plan.outputs)
        assert ex.last_stats.extra["most_at_once"] == 1
        np.testing.assert_allclose(got, np.sin(a) * 2)
        ex.execute(unbounded, unbounded.outputs)
        assert "in_flight_budget" not in ex.last_stats.extra


def test_explain_shows_an_over_limit_plan_without_refusing():
    x = la.random.random((1000, 100), chunks=(500, 100))
    with la.config.set({"memory-limit": "100KiB"}):
        assert "memory limit" in la.explain(x + 1)


@pytest.mark.parametrize("executor", ["numpy", "numba"])
def test_a_large_source_read_twice_is_read_again_not_held(executor):
    r = Recording(A)
    x = la.from_array(r, chunks=(50, 30))
    y = (x - x.mean(axis=0)) / x.std(axis=0)
    out = np.zeros_like(A)
    with la.config.set({"memory-limit": str(4 * 50 * 30 * 8 * 3)}):  # holding x: 96 kB > 18 kB
        la.store(y, out, executor=executor)
        plan = la.last_run().plan
    np.testing.assert_allclose(out, (A - A.mean(0)) / A.std(0), atol=1e-12)
    (src,) = [s for s in plan.stages.values() if s.regenerate]
    assert "readers" in plan.notes["memory"][src.name]
    # numba: once for mean and std (one joint pass), once to scale; numpy: one pass each
    assert r.elements_read() == (2 if executor == "numba" else 3) * A.size
    r.reads.clear()
    la.store(y, out, executor=executor)  # no limit: small enough to hold, read once
    assert r.elements_read() == A.size


def test_estimate_counts_held_stages_and_results():
    x = la.random.random((1000, 100), chunks=(100, 100))
    y = (x - x.mean(axis=0)) / x.std(axis=0)
    plan = la.plan(y, executor="numba")
    est = estimate(plan, tasks_at_once=2)
    assert est.held >= y.nbytes  # the result is gathered here
    assert est.tasks_at_once == 2 and est.block_bytes >= 100 * 100 * 8
    w = la.store(y, np.zeros(y.shape), compute=False)
    est_w = estimate(la.plan(w, executor="numba"), tasks_at_once=2)
    assert est_w.held < est.held  # a write gathers only counts


def test_auto_chunks_shrink_to_fit_the_limit():
    with la.config.set({"memory-limit": "16MiB"}):
        x = la.random.random((10_000, 1_000))
    assert max(x.chunks[0]) * 1_000 * 8 <= (16 << 20) // 16


_CHILD = textwrap.dedent(
    """
    import json, sys
    import lazyarr as la

    def status(field):  # kB lines of /proc/self/status
        with open("/proc/self/status") as f:
            return next(int(l.split()[1]) * 1024 for l in f if l.startswith(field))

    path, limit, passes, rows = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), int(sys.argv[4])
    settings = {"memory-limit": None if limit == "none" else limit}
    if passes is not None:
        settings["optimize.passes"] = passes
    la.config.set(settings)
    w = la.random.random((4_000, 500), chunks=(500, 500), seed=1)  # load kernels, warm up
    la.to_zarr((w - w.mean(0)) / w.std(0), path + "-warm", overwrite=True)
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # reset the peak RSS (VmHWM) to the RSS now
    before = status("VmRSS:")
    x = la.random.random((rows, 500), chunks=(2_500, 500), seed=2)  # 320 MB
    la.to_zarr((x - x.mean(0)) / x.std(0), path, overwrite=True)
    print(json.dumps({"grew": status("VmHWM:") - before}))
    """
)


def _grew(tmp_path, limit: str, passes=None, rows: int = 80_000) -> int:
    """How much a child's peak RSS grew over the run (its kernels compiled before)."""
    args = [str(tmp_path / "out.zarr"), limit, json.dumps(passes), str(rows)]
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])["grew"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_a_run_under_the_limit_stays_under_it_measured(tmp_path):
    """Peak RSS of a child, from the kernel's high-water mark (``VmHWM``), reset after the
    warm-up: ``getrusage``'s ``ru_maxrss`` would keep the peak of the forking test process."""
    limit = 128 << 20
    # compile both plans' kernels first (into the on-disk cache): compiling in a measured
    # child would raise its baseline peak and hide what the run itself holds
    _grew(tmp_path, "none", passes=["pushdown", "cse", "simplify", "fuse"], rows=10_000)
    _grew(tmp_path, str(limit), rows=10_000)
    held = _grew(tmp_path, "none", passes=["pushdown", "cse", "simplify", "fuse"])
    assert held > 2 * limit  # the control: holding the 320 MB source whole
    within = _grew(tmp_path, str(limit))
    assert within <= limit, f"peak RSS grew by {within / 2**20:.0f} MiB under a 128 MiB limit"
    x = la.from_zarr(str(tmp_path / "out.zarr"))
    assert abs(float(x[:, :3].mean().compute())) < 1e-9
    assert api.clear_plan_cache() is None


def test_a_refusal_names_the_stage_by_the_users_name():
    """Before: ``stage elementwise-…`` for an array renamed ``z``."""
    x = la.asarray(np.ones((1000, 1000)), chunks=(100, 1000))
    with pytest.raises(la.MemoryLimitError, match=r"^stage z \(elementwise-[0-9a-f]+\): "):
        (x * 2).rename("z").compute(executor="numpy", memory_limit="1MiB")


def test_a_refusal_without_a_task_says_the_results_not_an_empty_stage():
    """Before: ``stage : predicted peak … per task () …``: no task held blocks."""
    with pytest.raises(la.MemoryLimitError, match=r"^the results \(o\): ") as info:
        la.ones((1000, 1000), chunks=(100, 1000)).rename("o").compute(memory_limit="1MiB")
    assert "()" not in str(info.value)


def test_a_refused_reduction_names_the_size_of_the_blocks_it_reads():
    """The advice sizes the blocks the reduction reads (its body), not its small results:
    a mean over column blocks of 1 MiB, refused under 1 MiB, asks for smaller blocks, and
    blocks of half that size then fit."""
    a = np.random.default_rng(0).random((8192, 128))
    x = la.from_array(a, chunks=(8192, 16))  # 8 blocks of 1 MiB; results of 128 bytes
    limited = la.config.set({"memory-limit": "1MiB", "numba.threads": 1})
    with limited, pytest.raises(MemoryLimitError, match="would fit") as err:
        (x * 2).mean(axis=0).compute()
    said = re.search(r"blocks of at most about ([\d,]+) bytes \(now ([\d,]+)", str(err.value))
    now = int(said.group(2).replace(",", ""))
    assert now == 8192 * 16 * 8  # the body block read, not the 128-byte result block
    advised = int(said.group(1).replace(",", ""))
    assert 0 < advised < now
    y = la.from_array(a, chunks=(advised // (16 * 8) // 2, 16))  # half of it, to be sure
    with la.config.set({"memory-limit": "1MiB", "numba.threads": 1}):
        np.testing.assert_allclose((y * 2).mean(axis=0).compute(), (a * 2).mean(axis=0))


@pytest.mark.parametrize("executor", ["numpy", "numba"])
def test_a_scan_under_a_limit_holds_no_stage_of_scanned_blocks(executor):
    """``cumsum`` read its scanned blocks in two stages (totals, combine), which held them all:
    8 MB under a 4 MiB limit was refused. Each block is now scanned again by the combine."""
    x = la.random.random((2000, 500), chunks=(100, 500), seed=3)
    want = np.cumsum(x.compute(), axis=0)
    out = np.zeros(x.shape)
    with la.config.set({"memory-limit": "4MiB", "numba.compile-threshold": 0}):
        la.store(la.cumsum(x, axis=0), out, executor=executor)
        assert la.last_run().predicted_peak <= 4 * 2**20
    np.testing.assert_allclose(out, want, rtol=1e-12)


def test_a_refusal_for_stages_kept_whole_names_the_largest_and_what_one_task_needs():
    """A sort keeps its sorted blocks until the exchange has read them all: refused, the
    message names that stage and what the plan needs one task at a time, instead of telling
    the user to gather less (its result is 100 numbers)."""
    x = la.random.random(1_000_000, chunks=100_000, seed=3)
    y = la.sort(x)[::10_000]
    with la.config.set({"memory-limit": "9MiB"}), pytest.raises(MemoryLimitError) as info:
        y.compute(executor="numba")
    message = str(info.value)
    assert "kept whole until their last reader" in message
    assert "8,000,000 bytes" in message  # the sorted blocks: all of x
    assert "one task at a time needs" in message and "gather" not in message


def test_a_refusal_for_gathered_results_says_to_write_them():
    x = la.ones((4096, 4096), chunks=(256, 4096)) * 2
    with la.config.set({"memory-limit": "64MiB"}), pytest.raises(MemoryLimitError) as info:
        x.compute(executor="numba")
    assert "compute less at once" in str(info.value)
