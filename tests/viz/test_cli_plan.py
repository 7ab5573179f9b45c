"""``lazyarr plan | viz | explain`` and the demo's plan picture."""

from __future__ import annotations

import html
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from lazyarr import cli
from lazyarr.optimize.plan import Plan
from lazyarr.viz import render as render_mod

SCRIPT = """
import lazyarr as la
from pathlib import Path

x = la.random.random((400, 30), chunks=(100, 30), seed=1)
y = (x - x.mean(axis=0)) / x.std(axis=0)
z = la.sqrt((y ** 2).sum(axis=1))
n_rows = 400

if __name__ == "__main__":
    Path({marker!r}).write_text("ran")
    print(z.compute())
"""


@pytest.fixture
def script(tmp_path) -> Path:
    path = tmp_path / "work.py"
    path.write_text(SCRIPT.format(marker=str(tmp_path / "main-ran")))
    return path


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_help_lists_the_plan_commands(capsys):
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    out = capsys.readouterr().out
    for command in ("plan", "viz", "explain", "demo"):
        assert command in out


def test_plan_writes_each_format_without_running_main(capsys, script, tmp_path):
    code, out, err = run(capsys, "plan", script, "--var", "z", "-o", tmp_path / "p.json")
    assert code == 0, err
    assert "wrote" in out and "p.json" in out
    plan = Plan.from_json((tmp_path / "p.json").read_text())
    assert plan.stages[plan.outputs[0]].expr.shape == (400,)
    assert any(s.fused for s in plan.stages.values()) or "fuse" not in plan.notes
    for ext in ("html", "svg", "dot"):
        code, _, err = run(capsys, "plan", script, "--var", "z", "-o", tmp_path / f"p.{ext}")
        assert code == 0, err
        text = html.unescape((tmp_path / f"p.{ext}").read_text())  # Graphviz writes &#45;
        for name in plan.stages:
            assert name in text, (ext, name)
    assert not (tmp_path / "main-ran").exists()


def test_viz_renders_a_saved_plan(capsys, script, tmp_path):
    assert run(capsys, "plan", script, "--var", "y", "-o", tmp_path / "y.json")[0] == 0
    plan = Plan.from_json((tmp_path / "y.json").read_text())
    code, _, err = run(capsys, "viz", tmp_path / "y.json", "-o", tmp_path / "y.dot")
    assert code == 0, err
    dot = (tmp_path / "y.dot").read_text()
    assert dot.startswith("digraph")
    for s in plan.stages.values():
        assert f'"{s.name}" [' in dot
        for src in s.inputs:
            assert f'"{src}" -> "{s.name}"' in dot
    code, _, err = run(capsys, "viz", tmp_path / "y.dot", "-o", tmp_path / "again.html")
    assert code == 1 and "lazyarr viz: error:" in err


def test_explain_prints_stages_and_reasons(capsys, script):
    code, out, err = run(capsys, "explain", script, "--var", "z")
    assert code == 0, err
    assert out.startswith("lazyarr plan: ")
    assert "Stages (in run order)" in out and "random.random" in out
    raw = run(capsys, "explain", script, "--var", "z", "--stage", "raw")[1]
    assert "Passes: none run (the raw graph)" in raw
    assert raw.count("\n[") > out.count("\n[") or "fused" not in out


def test_user_errors_are_one_line(capsys, script, tmp_path):
    code, _, err = run(capsys, "plan", script, "-o", tmp_path / "p.html")
    assert code == 1 and "--var NAME; lazy arrays it defines: x, y, z" in err
    code, _, err = run(capsys, "plan", script, "--var", "w", "-o", tmp_path / "p.html")
    assert code == 1 and "defines no variable 'w'" in err
    code, _, err = run(capsys, "plan", script, "--var", "n_rows", "-o", tmp_path / "p.html")
    assert code == 1 and "is a int, not a lazy array" in err
    code, _, err = run(capsys, "plan", script, "--var", "z", "-o", tmp_path / "p.txt")
    assert code == 1 and "cannot tell the format" in err
    code, _, err = run(capsys, "plan", tmp_path / "missing.py", "-o", tmp_path / "p.html")
    assert code == 1 and "no such script" in err
    code, _, err = run(capsys, "plan", script, "--var", "z", "--stage", "bogus")
    assert code == 1 and "unknown stage 'bogus'" in err
    assert "Traceback" not in err


def test_a_script_that_computes_is_refused(capsys, tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import lazyarr as la\nx = la.ones(10, chunks=5)\nprint(float(x.sum()))\n")
    code, _, err = run(capsys, "plan", bad, "--var", "x", "-o", tmp_path / "p.html")
    assert code == 1
    assert "computed something while it was being planned" in err
    assert 'if __name__ == "__main__":' in err
    assert not (tmp_path / "p.html").exists()


def test_png_needs_graphviz(capsys, script, tmp_path, monkeypatch):
    monkeypatch.setattr(render_mod.shutil, "which", lambda name: None)
    code, _, err = run(capsys, "plan", script, "--var", "z", "-o", tmp_path / "p.png")
    assert code == 1 and "Graphviz" in err and "apt-get install graphviz" in err


def test_demo_prints_explain_and_writes_the_picture(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "demo", "--size", "400", "--executor", "numpy")
    assert code == 0, err
    assert "Stages (in run order)" in out and "measured  " in out
    assert "same results as NumPy" in out
    html = (tmp_path / "plan.html").read_text()
    assert 'class="lazyarr-plan"' in html and "measured" in html
    code, out, err = run(capsys, "demo", "--size", "400", "--plan-out", tmp_path / "d.dot")
    assert code == 0, err
    assert (tmp_path / "d.dot").read_text().startswith("digraph")


def test_the_installed_command(script, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("LAZYARR_")}
    env["LAZYARR_CONFIG"] = str(tmp_path / "none.yaml")
    out = subprocess.run(
        [sys.executable, "-m", "lazyarr", "plan", str(script), "--var", "z", "-o", "p.html"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "p.html").read_text().startswith("<!DOCTYPE html>")
    assert not (tmp_path / "main-ran").exists()
    assert textwrap.dedent(out.stdout).startswith("wrote p.html")


VALUE_DEPENDENT = """
import lazyarr as la

x = la.random.random(2_000, chunks=500, seed=2)
kept = x[x > 0.5]
scaled = (kept - kept.mean()) / kept.std()
where = la.nonzero(x > 0.9)[0]
counts = la.bincount((x * 10).astype(int))
uniq, seen = la.unique_counts((x * 100).astype(int))
hist, edges = la.histogram(kept, bins=20)
"""


@pytest.mark.parametrize("var", ["scaled", "where", "counts", "uniq", "seen", "hist", "edges"])
def test_plan_and_explain_of_value_dependent_lengths_compute_nothing(
    capsys, tmp_path, var, monkeypatch
):
    from lazyarr import api

    def refuse(*args, **kwargs):
        raise AssertionError("lazyarr plan/explain computed something")

    monkeypatch.setattr(api, "compute_exprs", refuse)
    monkeypatch.setattr(api, "persist_exprs", refuse)
    path = tmp_path / "select.py"
    path.write_text(VALUE_DEPENDENT)
    code, out, err = run(capsys, "explain", path, "--var", var)
    assert code == 0, err
    assert "not counted yet" in out
    code, out, err = run(capsys, "plan", path, "--var", var, "-o", tmp_path / "p.json")
    assert code == 0, err
    assert "wrote" in out


@pytest.mark.parametrize(
    "text",
    [
        "[1, 2]",
        "null",
        '"a plan"',
        '{"format": "lazyarr-plan"}',
        '{"format": "lazyarr-plan", "exprs": {}, "stages": [3], "history": []}',
        '{"format": "lazyarr-plan", "exprs": {"k": 1}, "stages": []}',
    ],
)
def test_viz_of_json_that_is_not_a_plan_is_a_one_line_error(capsys, tmp_path, text):
    (tmp_path / "bad.json").write_text(text)
    code, _, err = run(capsys, "viz", tmp_path / "bad.json", "-o", tmp_path / "bad.svg")
    assert code == 1
    assert err.startswith("lazyarr viz: error: not a") and err.count("\n") == 1, err
    assert not (tmp_path / "bad.svg").exists()
