"""Scoped settings: ``with config.set(...)`` holds in its thread or asyncio task only and is
restored exactly; a plain ``config.set(...)`` is process-wide (issue 14).

Threads are real and their interleaving is forced with barriers and events.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading

import numpy as np
import pytest

import lazyarr as la
from lazyarr import config
from lazyarr.config import SCOPED

DEFAULT = "numba"  # config.yaml's executor


@pytest.fixture(autouse=True)
def _defaults():
    """Start from the process-wide values, without the conftest's scoped ones; and leave
    nothing behind (a plain set() in a test is dropped by refresh)."""
    token = SCOPED.set(None)
    config.refresh()
    assert config.get("executor") == DEFAULT
    yield
    SCOPED.reset(token)
    config.refresh()


def _run(*targets):
    """Run each target in a real thread; re-raise the first error; join all."""
    errors: list[BaseException] = []

    def guarded(target):
        def run():
            try:
                target()
            except BaseException as exc:  # reported in the test's thread
                errors.append(exc)

        return run

    threads = [threading.Thread(target=guarded(t), daemon=True) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
        assert not t.is_alive()
    if errors:
        raise errors[0]


def test_overlapping_blocks_in_two_threads_see_only_their_own_values():
    """Before: each thread saw the value of the block entered last, and a thread with no
    block saw both; after both blocks, executor kept the first block's value."""
    both_in = threading.Barrier(3, timeout=10)
    first_out = threading.Event()
    seen: dict[str, list] = {"a": [], "b": [], "observer": []}

    def a():
        with config.set(executor="numpy", array__chunk_size="1MiB"):
            both_in.wait()
            seen["a"].append((config.get("executor"), config.get("array.chunk-size")))
        first_out.set()

    def b():
        with config.set(executor="dask"):
            both_in.wait()
            first_out.wait(10)  # a's block has ended; b's is still running
            seen["b"].append((config.get("executor"), config.get("array.chunk-size")))

    def observer():
        both_in.wait()
        seen["observer"].append(config.get("executor"))

    _run(a, b, observer)
    assert seen == {"a": [("numpy", "1MiB")], "b": [("dask", "64MiB")], "observer": [DEFAULT]}
    assert config.get("executor") == DEFAULT  # restored exactly, whatever the exit order
    assert config.get("array.chunk-size") == "64MiB"


def test_blocks_left_in_the_order_they_were_entered_restore_the_defaults():
    """Before: thread 1 enters, thread 2 enters, thread 1 leaves, thread 2 leaves: the
    process kept thread 1's value ("numpy") for good."""
    entered = [threading.Event(), threading.Event()]
    left = threading.Event()

    def first():
        with config.set(executor="numpy"):
            entered[0].set()
            entered[1].wait(10)
        left.set()

    def second():
        entered[0].wait(10)
        with config.set(executor="dask"):
            entered[1].set()
            left.wait(10)
            assert config.get("executor") == "dask"

    _run(first, second)
    assert config.get("executor") == DEFAULT


def test_asyncio_tasks_have_their_own_scope():
    """Two tasks read while both of their blocks are open (before: both read the value of
    the block entered last)."""

    async def main() -> list[str]:
        opened, reads = [asyncio.Event(), asyncio.Event()], []
        all_read = asyncio.Event()

        async def task(me: int, value: str) -> None:
            with config.set(executor=value):
                opened[me].set()
                await opened[1 - me].wait()
                await asyncio.sleep(0)
                reads.append(f"{value}:{config.get('executor')}")
                if len(reads) == 2:
                    all_read.set()
                await all_read.wait()  # neither block ends before both have read

        await asyncio.gather(task(0, "numpy"), task(1, "dask"))
        return [*sorted(reads), config.get("executor")]

    assert asyncio.run(main()) == ["dask:dask", "numpy:numpy", DEFAULT]


def test_nested_blocks_restore_each_level_even_after_an_exception():
    with config.set(executor="numpy", numba__fastmath=True):
        with pytest.raises(RuntimeError), config.set(executor="dask"):
            assert config.get("executor") == "dask"
            assert config.get("numba.fastmath") is True  # the outer block's other key
            raise RuntimeError("inside")
        assert config.get("executor") == "numpy"
        assert config.get("numba")["fastmath"] is True  # a section read sees the scope
    assert config.get("executor") == DEFAULT
    assert config.get("numba.fastmath") is False
    assert "fastmath: false" in config.show()


def test_a_plain_set_is_seen_by_every_thread():
    seen: list[str] = []
    done = threading.Event()

    def setter():
        config.set(executor="numpy")
        done.set()

    def reader():
        done.wait(10)
        seen.append(config.get("executor"))

    _run(setter, reader)
    assert seen == ["numpy"] and config.get("executor") == "numpy"
    config.refresh()
    assert config.get("executor") == DEFAULT


def test_a_plain_set_inside_a_block_is_process_wide_and_the_block_still_wins_in_it():
    with config.set(executor="numpy"):
        config.set(executor="dask")
        assert config.get("executor") == "numpy"
        seen: list[str] = []
        _run(lambda: seen.append(config.get("executor")))
        assert seen == ["dask"]
    assert config.get("executor") == "dask"


def test_a_setting_entered_later_is_scoped_and_leaves_others_plain_values():
    """``ExitStack.enter_context(config.set(...))`` after another plain set: the pending
    setting is applied by that set (call order), and entering takes it back (keeping
    the other's value)."""
    with contextlib.ExitStack() as stack:
        setting = config.set(executor="numpy", progress=False)
        config.set(progress=True)  # someone else's plain set between the two steps
        stack.enter_context(setting)
        assert config.get("executor") == "numpy" and config.get("progress") is False
        seen: list = []
        _run(lambda: seen.append((config.get("executor"), config.get("progress"))))
        assert seen == [(DEFAULT, True)]  # not ours; theirs kept
    assert config.get("executor") == DEFAULT and config.get("progress") is True


def test_a_block_built_by_a_helper_is_never_seen_by_another_thread():
    """Before: ``set`` read the caller's next bytecode to tell a with from a plain call;
    called from a helper that returns it, it was applied process-wide until entered."""
    seen: list[str] = []

    def scoped_numpy() -> config.Setting:
        setting = config.set(executor="numpy")
        _run(lambda: seen.append(config.get("executor")))  # another thread reads now
        return setting

    with scoped_numpy():
        assert config.get("executor") == "numpy"
        _run(lambda: seen.append(config.get("executor")))
    assert seen == [DEFAULT, DEFAULT]
    assert config.get("executor") == DEFAULT


def test_a_setting_kept_but_not_entered_applies_at_the_next_read():
    setting = config.set(executor="numpy")
    assert config.get("executor") == "numpy"
    seen: list[str] = []
    _run(lambda: seen.append(config.get("executor")))
    assert seen == ["numpy"]
    assert setting.values == {"executor": "numpy"}


def test_lazyarr_worker_threads_see_the_callers_scoped_settings():
    """User code run per block on the numba executor's thread pool reads the settings of
    the block that called compute, not another thread's."""
    x = np.arange(2**20, dtype=float)
    a = la.asarray(x, chunks=2**17)  # 8 blocks of 1 MiB: run on the pool's 2 threads
    seen: set = set()
    lock = threading.Lock()

    def probe(block):
        with lock:
            seen.add((threading.current_thread().name, config.get("array.chunk-size")))
        return block + 1

    with config.set({"array.chunk-size": "2MiB", "numba.threads": 2}):
        np.testing.assert_array_equal(la.map_blocks(probe, a).compute(executor="numba"), x + 1)
    assert {size for _, size in seen} == {"2MiB"}
    assert any(name.startswith("lazyarr-numba") for name, _ in seen), seen


def test_a_thread_run_in_a_copy_of_the_context_sees_the_scope():
    """What the README tells users: threads they start see the process-wide values;
    ``contextvars.copy_context().run`` carries a block's values into one."""
    seen: list[str] = []
    with config.set(executor="numpy"):
        context = contextvars.copy_context()
        _run(lambda: seen.append(config.get("executor")))
        _run(lambda: context.run(lambda: seen.append(config.get("executor"))))
    assert seen == [DEFAULT, "numpy"]


def test_a_lazy_array_computed_by_dask_workers_gets_the_callers_scoped_settings(dask_ex):
    """``client.compute(lazy)`` runs lazyarr in a Dask worker process, outside the caller's
    context: the values of the caller's ``with`` blocks travel with the task (before the
    task read the worker's own values)."""
    x = la.asarray(np.zeros(64), chunks=16)

    def probe(block):  # a local function: pickled by value for the workers
        return np.full_like(block, config.parse_bytes(config.get("array.chunk-size")))

    client = dask_ex.client()
    with config.set({"array.chunk-size": "2MiB"}):
        got = client.compute(la.map_blocks(probe, x)).result()
    np.testing.assert_array_equal(got, np.full(64, 2.0 * 2**20))
    other = la.asarray(np.zeros(48), chunks=16)  # another key: not Dask's cached result
    got = client.compute(la.map_blocks(probe, other)).result()
    np.testing.assert_array_equal(got, np.full(48, 64.0 * 2**20))  # the defaults there
