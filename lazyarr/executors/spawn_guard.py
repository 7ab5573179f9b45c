"""Refusing to start worker processes from a script's unguarded top-level code.

Dask's ``LocalCluster`` starts its workers with ``spawn``: each new process
imports the user's script again (as ``__mp_main__``) and so runs its
top-level code again. A script that computes on the ``dask`` executor
without ``if __name__ == "__main__":`` thus starts a cluster inside every
worker while it boots; Python refuses that, and the user gets hundreds of
lines of multiprocessing tracebacks from every process. Here the parent
sees it coming before any process starts: the statement of the main script
that is running now lies outside every ``if __name__ == "__main__":`` block,
and the workers would re-run the script (the same rule as
``multiprocessing.spawn``: not for ``python -m pkg`` runs of a package's
``__main__``, notebooks, ``python -c`` or the REPL).

The error is a ``SystemExit`` with the advice as its message, as argparse's
errors are: it is only raised from a script's own top-level code, whose
structure, not its data, is at fault, so there is nothing for a caller to
recover and a page of lazyarr and Dask frames would bury the one line that
matters (the script and line are in the message).
"""

from __future__ import annotations

import ast
import os
import sys
from pathlib import Path
from types import FrameType, ModuleType

__all__ = ["UnguardedScriptError", "check_main_guard", "unguarded_statement"]


class UnguardedScriptError(SystemExit):
    """Worker processes were to start from a script's top level without the main guard.

    A ``SystemExit``: uncaught, Python prints only the message and exits with status 1.
    """


def _rerun_by_spawn(main: ModuleType) -> str | None:
    """The file that spawned processes execute again, or None (``multiprocessing.spawn``'s rule)."""
    spec = getattr(main, "__spec__", None)
    name = getattr(spec, "name", None)
    if name is not None:
        if name == "__main__" or name.endswith(".__main__"):
            return None
        return getattr(spec, "origin", None) or getattr(main, "__file__", None)
    path = getattr(main, "__file__", None)
    if path is None or os.path.splitext(os.path.basename(path))[0] == "ipython":
        return None
    return path


def _top_level_frame(main: ModuleType, frame: FrameType | None) -> FrameType | None:
    """The frame running the main module's top-level code, if it is on the stack."""
    namespace = vars(main)
    while frame is not None:
        if frame.f_globals is namespace and frame.f_code.co_name == "<module>":
            return frame
        frame = frame.f_back
    return None


def _is_main_guard(node: ast.AST) -> bool:
    """``if __name__ == "__main__":`` (either side of the ``==``)."""
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare):
        return False
    test = node.test
    if len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq):
        return False
    sides = [test.left, test.comparators[0]]
    has_name = any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides)
    has_main = any(isinstance(s, ast.Constant) and s.value == "__main__" for s in sides)
    return has_name and has_main


def _guarded(path: str, line: int) -> bool:
    """Whether ``line`` of the script at ``path`` lies inside a main guard (True if unknown)."""
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"), path)
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        return True  # cannot tell: let the cluster start as before
    return any(
        _is_main_guard(node) and node.lineno <= line <= (node.end_lineno or node.lineno)
        for node in ast.walk(tree)
    )


def unguarded_statement(start_method: str) -> tuple[str, int] | None:
    """``(script, line)`` when processes started now by ``start_method`` would re-run this call.

    None when they would not: ``fork`` copies the process instead of
    re-running the script, the main module is not re-run, the main module's
    top-level code is not on the stack, or the running statement is guarded.
    """
    if start_method == "fork":
        return None
    main = sys.modules.get("__main__")
    path = _rerun_by_spawn(main) if main is not None else None
    if main is None or path is None:
        return None
    frame = _top_level_frame(main, sys._getframe(1))
    if frame is None or _guarded(path, frame.f_lineno):
        return None
    return path, frame.f_lineno


def check_main_guard(start_method: str) -> None:
    """Raise :class:`UnguardedScriptError` (one short message) instead of spawning workers
    that would each run the calling script again."""
    found = unguarded_statement(start_method)
    if found is None:
        return
    path, line = found
    raise UnguardedScriptError(
        "lazyarr: the dask executor cannot start LocalCluster worker processes from line "
        f"{line} of {os.path.basename(path)}: each worker process runs the script's top-level code "
        'again. Put that code under `if __name__ == "__main__":`, or set `dask.processes: '
        "false` (LAZYARR_DASK__PROCESSES=false, or "
        'la.config.set({"dask.processes": False})) for a LocalCluster of threads.'
    ) from None
