"""Stages named by what the user called them: ``rename``, ``name=``, script variables."""

from __future__ import annotations

import json

import lazyarr as la
from lazyarr import cli
from lazyarr.optimize.plan import Plan


def demo_arrays():
    x = la.random.random((400, 30), chunks=(100, 30), seed=1, name="x")
    y = ((x - x.mean(axis=0)) / x.std(axis=0)).rename("y")
    z = la.sqrt((y**2).sum(axis=1)).rename("z")
    return x, y, z


def test_rename_keeps_the_key_and_the_values():
    a = la.arange(10, chunks=5)
    b = a.rename("b")
    assert b._expr.key == a._expr.key and b._expr.user_name == "b"
    assert a._expr.user_name is None
    assert (b + 1).compute(executor="numpy").tolist() == list(range(1, 11))


def test_explain_shows_the_users_names():
    _, _, z = demo_arrays()
    text = str(la.explain(z))
    assert "x (random-" in text and "z (elementwise-" in text
    assert "y → … (" in text  # the fused stage computing y, then y ** 2 and its sum


def test_picture_json_and_svg_carry_the_names():
    _, _, z = demo_arrays()
    pic = la.visualize(z)
    labels = json.loads(pic.render("json"))["labels"]
    assert set(labels.values()) >= {"x", "y → …", "z"}
    assert Plan.from_json(pic.render("json")).labels == labels
    svg = pic.svg()
    assert ">z (elementwise-" in svg and ">x (random-" in svg
    assert '"z (elementwise-' in pic.dot()


def test_a_cached_unnamed_plan_still_gets_the_names():
    x = la.random.random((100, 4), chunks=(50, 4), seed=3)
    la.visualize(x + 1)  # plans and caches the unnamed expression
    labels = la.visualize(x.rename("x") + 1).plan.labels
    assert "x" in labels.values()


def test_names_keyword_labels_intermediate_arrays():
    a = la.ones((8,), chunks=4)
    b = a * 2
    c = b.sum()
    labels = la.visualize(c, names={"a": a, "b": b, "n": 3, "_hidden": b}).plan.labels
    assert set(labels.values()) >= {"a", "b → …"}  # b's stage computes b, then its sum
    assert not any("_hidden" in t for t in labels.values())


def test_a_fused_stage_lists_every_name_it_computes():
    a = la.ones((8,), chunks=4)
    b = (a + 1).rename("b")
    c = (b * 2).rename("c")
    labels = la.visualize(c, executor="numpy").plan.labels
    assert "b → c" in labels.values()


def test_name_keyword_on_creation_functions():
    for arr in (
        la.zeros(3, name="n"),
        la.ones(3, name="n"),
        la.full(3, 2.0, name="n"),
        la.empty(3, name="n"),
        la.arange(3, name="n"),
        la.asarray([1, 2, 3], name="n"),
        la.from_array([1, 2, 3], name="n"),
        la.random.random(3, name="n"),
        la.random.normal(size=3, name="n"),
        la.random.uniform(size=3, name="n"),
        la.random.standard_normal(3, name="n"),
        la.random.integers(5, size=3, name="n"),
    ):
        assert arr._expr.user_name == "n"
        assert "n (" in str(la.explain(arr))


def test_last_run_keeps_the_names():
    _, _, z = demo_arrays()
    z.compute(executor="numpy")
    assert {"x", "z"} <= set(la.last_run().plan.labels.values())
    assert "z (elementwise-" in str(la.explain(z, measured=True))


SCRIPT = """
import lazyarr as la

data = la.random.random((400, 30), chunks=(100, 30), seed=1)
centred = data - data.mean(axis=0)
norms = la.sqrt((centred ** 2).sum(axis=1))
"""


def test_lazyarr_plan_names_stages_by_the_scripts_variables(tmp_path, capsys):
    script = tmp_path / "work.py"
    script.write_text(SCRIPT)
    out = tmp_path / "p.json"
    assert cli.main(["plan", str(script), "--var", "norms", "-o", str(out)]) == 0
    labels = Plan.from_json(out.read_text()).labels
    assert {"data", "norms"} <= set(labels.values())
    capsys.readouterr()
    assert cli.main(["explain", str(script), "--var", "norms"]) == 0
    text = capsys.readouterr().out
    assert "data (random-" in text and "norms (" in text


def test_the_pictures_header_and_table_use_the_users_names():
    """Before: the HTML header said ``outputs elementwise-…`` after ``.rename("z")``, and
    the stage table was right-aligned and centred by Jupyter's own table style."""
    _, _, z = demo_arrays()
    pic = la.visualize(z, executor="numpy")
    out = pic._repr_html_()
    assert "outputs z</p>" in out and "outputs reduce-" not in out
    assert "<td>" not in out and "<th>" not in out  # each cell says its alignment
    assert "outputs z" in repr(pic)


def test_an_output_box_is_wide_enough_for_its_bold_title():
    """Before: the title line is bold but the box was sized for regular glyphs, so a title
    such as ``z (reduce-1a2b3c4d5e)`` ran past the box's edge."""
    from lazyarr.viz.svg import BOLD_CHAR_W, PAD, layout

    _, _, z = demo_arrays()
    plan, _, _ = la.planview.plan_of(z, executor="numpy")
    lay = layout(plan)
    for name, lines in lay.lines.items():
        width = lay.boxes[name][2]
        assert len(lines[0]) * BOLD_CHAR_W + 2 * PAD <= width, (lines[0], width)
