"""The rechunker rows of ``bench/rechunk.py``: one child process under rechunker's own venv.

rechunker pins zarr < 3, so it cannot share lazyarr's environment; this
file runs under that venv's interpreter (``--rechunker-python``) and
imports neither lazyarr nor anything else of the benchmark. It speaks the
parent's protocol: ``READY`` once the plan is built (rechunker creates the
target and intermediate arrays while planning, not timed), then
``RESULT {json}`` with the seconds the plan took to execute and a note
with rechunker's plan (read, intermediate and write chunks, tasks per
stage).

Usage (by the parent): ``python _rechunker_child.py SYSTEM ARGS_JSON``, SYSTEM
``rechunker`` (dask's threaded scheduler with 2 threads, ``max_mem`` = half
the limit each: rechunker bounds one task, and the process runs two) or
``rechunker cluster`` (a 2-worker LocalCluster, ``max_mem`` = half the limit per
worker, each worker limited to that plus ``worker_baseline`` bytes, as the other
cluster rows).
"""

from __future__ import annotations

import json
import math
import sys
import time


def _plan_note(shape: tuple, source_chunks: tuple, target: tuple, itemsize: int, mem: int) -> str:
    """rechunker's plan for these arguments, in words: its chunks and tasks per stage."""
    from rechunker.algorithm import rechunking_plan

    read, inter, write = rechunking_plan(shape, source_chunks, target, itemsize, mem)

    def tasks(chunks: tuple) -> int:
        return math.prod(math.ceil(s / c) for s, c in zip(shape, chunks))

    if read in (write, inter):  # rechunker copies straight, one task per write chunk
        return f"one stage: read {read}, write {write}, {tasks(write)} tasks"
    return (
        f"read {read}, intermediate {inter} ({tasks(inter)} tasks), "
        f"write {write} ({tasks(write)} tasks)"
    )


def main(system: str, args: dict) -> None:
    import dask
    import rechunker
    import zarr
    from dask.utils import parse_bytes

    limit = parse_bytes(args["limit"])
    if system == "rechunker cluster":
        from distributed import Client, LocalCluster

        mem = limit // 2
        cluster = LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            memory_limit=mem + args["worker_baseline"],
            dashboard_address=None,
        )
        Client(cluster)
    else:  # two threads share the process's limit, as lazyarr's two numba threads do
        mem = limit // 2
        dask.config.set(scheduler="threads", num_workers=2)
    src = zarr.open_array(args["src_v2"], mode="r")
    target = tuple(args["target"])
    options = {"compressor": src.compressor}  # the source's codec (zstd), as zarr 3 writes
    plan = rechunker.rechunk(
        src,
        target,
        max_mem=mem,
        target_store=args["dst"],
        target_options=options,
        temp_store=args["scratch"] + "/rechunker-temp.zarr",
        temp_options=options,
    )
    note = _plan_note(src.shape, src.chunks, target, src.dtype.itemsize, mem)
    print("READY", flush=True)
    t0 = time.perf_counter()
    plan.execute()
    out = {"predicted": None, "seconds": time.perf_counter() - t0, "note": note}
    print("RESULT " + json.dumps(out), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], json.loads(sys.argv[2]))
