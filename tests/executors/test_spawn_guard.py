"""A script that starts the dask executor's LocalCluster from unguarded top-level code.

With worker processes (``dask.processes: true``) every worker would run the
script again; lazyarr stops before starting any and prints one line of advice.
With ``dask.processes: false`` the workers are threads and the same script
computes. The scripts run in subprocesses, each of which closes its cluster
when it exits (and is killed at the timeout).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from lazyarr.executors import spawn_guard

SCRIPT = """\
import numpy as np
import lazyarr as la

x = la.asarray(np.arange(24.0).reshape(6, 4), chunks=(2, 4))
print(((x - x.mean(axis=0)) ** 2).sum(axis=0).compute().tolist())
"""


def expected() -> list[float]:
    a = np.arange(24.0).reshape(6, 4)
    return ((a - a.mean(axis=0)) ** 2).sum(axis=0).tolist()


def run_script(tmp_path: Path, source: str, **settings: str) -> subprocess.CompletedProcess:
    script = tmp_path / "script.py"
    script.write_text(source)
    env = {k: v for k, v in os.environ.items() if not k.startswith("LAZYARR_")}
    env.update(
        LAZYARR_CONFIG=os.devnull,
        LAZYARR_EXECUTOR="dask",
        LAZYARR_DASK__N_WORKERS="2",
        LAZYARR_NUMBA__CACHE_DIR=str(tmp_path / "numba-cache"),
        **settings,
    )
    return subprocess.run(
        [sys.executable, str(script)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_unguarded_script_gets_one_short_error(tmp_path):
    out = run_script(tmp_path, SCRIPT)
    assert out.returncode == 1
    assert out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) < 15, out.stderr
    assert "Traceback" not in out.stderr
    assert "line 5 of script.py" in out.stderr
    assert 'if __name__ == "__main__":' in out.stderr
    assert "dask.processes: false" in out.stderr


def test_unguarded_script_computes_with_thread_workers(tmp_path):
    out = run_script(tmp_path, SCRIPT, LAZYARR_DASK__PROCESSES="false")
    assert out.returncode == 0, out.stderr
    assert eval(out.stdout) == expected()


# -- the rule, without starting processes ------------------------------------------------


GUARDED = """\
import sys


def work():
    return 1


work()  # line 8: unguarded
if __name__ == "__main__":
    work()  # line 10
if "__main__" == __name__:
    work()  # line 12
if __name__ != "__main__":
    work()  # line 14
"""


@pytest.mark.parametrize(
    ("line", "guarded"), [(8, False), (10, True), (12, True), (14, False), (1, False)]
)
def test_a_line_is_guarded_only_inside_if_name_is_main(tmp_path, line, guarded):
    path = tmp_path / "script.py"
    path.write_text(GUARDED)
    assert spawn_guard._guarded(str(path), line) is guarded


def test_unreadable_script_counts_as_guarded(tmp_path):
    assert spawn_guard._guarded(str(tmp_path / "missing.py"), 3) is True
    bad = tmp_path / "bad.py"
    bad.write_text("def (:\n")
    assert spawn_guard._guarded(str(bad), 1) is True


def test_which_main_modules_spawned_workers_run_again(tmp_path):
    import types

    script = types.ModuleType("__main__")
    script.__file__ = str(tmp_path / "script.py")
    script.__spec__ = None
    assert spawn_guard._rerun_by_spawn(script) == script.__file__

    package_main = types.ModuleType("__main__")  # python -m lazyarr
    package_main.__file__ = str(tmp_path / "__main__.py")
    package_main.__spec__ = types.SimpleNamespace(name="lazyarr.__main__", origin="x")
    assert spawn_guard._rerun_by_spawn(package_main) is None

    repl = types.ModuleType("__main__")  # python -c / the REPL: no file
    repl.__spec__ = None
    assert spawn_guard._rerun_by_spawn(repl) is None


def test_fork_never_reruns_the_script():
    assert spawn_guard.unguarded_statement("fork") is None


def test_check_main_guard_raises_for_an_unguarded_caller(tmp_path, monkeypatch):
    """A fake ``__main__`` whose top-level code calls the check, as a script would."""
    import types

    path = tmp_path / "fake_main.py"
    source = textwrap.dedent(
        """\
        from lazyarr.executors.spawn_guard import check_main_guard
        check_main_guard("spawn")
        """
    )
    path.write_text(source)
    main = types.ModuleType("__main__")
    main.__file__ = str(path)
    main.__spec__ = None
    monkeypatch.setitem(sys.modules, "__main__", main)
    with pytest.raises(spawn_guard.UnguardedScriptError, match=r"line 2 of fake_main\.py"):
        exec(compile(source, str(path), "exec"), vars(main))
    call = 'check_main_guard("spawn")'
    guarded = source.replace(call, f'if __name__ == "__main__":\n    {call}')
    path.write_text(guarded)
    exec(compile(guarded, str(path), "exec"), vars(main))  # no error
