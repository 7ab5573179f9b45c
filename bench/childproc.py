"""A benchmark child process measured from outside: peak RSS, bytes read and written.

The child prints ``READY`` when its setup (imports, a started cluster) is done
and ``RESULT <json>`` at the end; the parent samples, every 50 ms, the RSS of the
child and of every process it started (Dask's workers) and keeps the peak of the
sum, each process's ``/proc/<pid>/io`` counters and the largest size of a scratch
directory. Used by ``rechunk.py`` and ``pangeo.py``.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import time
from typing import Any

__all__ = ["du", "run_sampled", "tree"]


def tree(pid: int) -> list:
    """The process ``pid`` and every process it started ([] once it is gone)."""
    import psutil

    try:
        p = psutil.Process(pid)
        return [p, *p.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def du(path: str | None) -> int:
    """Bytes of the files under ``path`` (0 for None)."""
    total = 0
    for root, _, files in os.walk(path) if path else ():
        for f in files:
            with contextlib.suppress(OSError):
                total += os.path.getsize(os.path.join(root, f))
    return total


def run_sampled(cmd: list[str], timeout: float, scratch: str | None = None) -> dict[str, Any]:
    """Run ``cmd`` (a child speaking READY/RESULT), sampling it until it ends.

    Returns the child's RESULT fields with ``peak_MiB`` (the largest RSS sum after
    READY), ``base_MiB`` (the sum at READY), ``read_MiB``/``written_MiB`` and
    ``scratch_MiB``; or ``{"error": ...}`` (a timeout, or the child's last stderr line).
    """
    import psutil

    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    while True:  # the setup (imports, cluster start) is not measured
        line = p.stdout.readline()
        if not line or line.startswith("READY"):
            break
    peak, biggest, io = 0, 0, {}
    base = sum(q.memory_info().rss for q in tree(p.pid) if q.is_running())
    before = {}  # bytes each process read and wrote before READY (imports, warm-up)
    for q in tree(p.pid):
        with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
            c = q.io_counters()
            before[q.pid] = (c.read_chars, c.write_chars)
    t0 = time.monotonic()
    while p.poll() is None and time.monotonic() - t0 < timeout:
        rss = 0
        for q in tree(p.pid):
            try:
                rss += q.memory_info().rss
                c = q.io_counters()
                r0, w0 = before.get(q.pid, (0, 0))
                io[q.pid] = (c.read_chars - r0, c.write_chars - w0)
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                pass
        peak = max(peak, rss)
        biggest = max(biggest, du(scratch))
        time.sleep(0.05)
    if p.poll() is None:
        p.kill()
        p.wait()
        return {"error": f"over {timeout:.0f} s"}
    out, err = p.communicate()
    result = next((json.loads(x[7:]) for x in out.splitlines() if x.startswith("RESULT ")), None)
    if result is None:
        tail = (err.strip().splitlines() or ["no output"])[-1]
        return {"error": tail[:160]}
    return {
        **result,
        "peak_MiB": peak / 2**20,
        "base_MiB": base / 2**20,
        "read_MiB": sum(r for r, _ in io.values()) / 2**20,
        "written_MiB": sum(w for _, w in io.values()) / 2**20,
        "scratch_MiB": biggest / 2**20,
    }
