"""The block-grid picture beside an array's notebook repr (``viz/chunkgrid.py``)."""

from __future__ import annotations

import re

import pytest

import lazyarr as la
from lazyarr.viz.chunkgrid import MAX_LINES, axis_fractions, chunk_grid_svg, side_lengths


def block_lines(svg: str, axis: int) -> int:
    return len(re.findall(rf'class="block-line" data-axis="{axis}"', svg))


def test_repr_html_shows_the_2d_grid_beside_the_table():
    x = la.ones((100, 40), chunks=(25, 20))
    out = x._repr_html_()
    assert "<table class='lazyarr-repr'" in out and out.count("<svg") == 1
    assert out.index("</table>") < out.index("<svg")  # the picture to the right
    # 4 row blocks: 5 horizontal lines; 2 column blocks: 3 vertical lines (ends included)
    assert block_lines(out, 0) == 5
    assert block_lines(out, 1) == 3
    assert ">100<" in out and ">40<" in out  # side lengths written along the sides


def test_1d_is_a_bar_with_a_line_per_block_boundary():
    svg = chunk_grid_svg(((3, 3, 3, 1),))
    assert block_lines(svg, 0) == 5
    assert 'data-axis="edge"' in svg  # the bar's long sides
    assert "blocks" not in svg  # every line drawn: no caption needed


def test_3d_is_an_oblique_box_of_three_faces():
    svg = la.ones((5, 6, 7), chunks=(5, 3, 7))._repr_html_()
    assert svg.count("<polygon") == 3
    # each axis' boundaries show on the two faces that contain it
    assert block_lines(svg, 0) == 2 * 2
    assert block_lines(svg, 1) == 2 * 3
    assert block_lines(svg, 2) == 2 * 2


def test_more_dims_draw_the_last_three_and_say_how_many_blocks():
    svg = chunk_grid_svg(((1, 1), (2, 2, 2), (4,), (5, 5)))
    assert svg.count("<polygon") == 3
    assert block_lines(svg, 0) == 0  # the first axis is not drawn
    assert "12 blocks (2 x 3 x 1 x 2)" in svg


def test_many_blocks_draw_at_most_max_lines_and_say_how_many():
    svg = la.ones((1000, 10), chunks=(1, 10))._repr_html_()
    assert block_lines(svg, 0) == MAX_LINES + 2
    assert "1,000 blocks (1000 x 1)" in svg
    fr = axis_fractions((1,) * 1000)
    assert fr[0] == 0 and fr[-1] == 1 and fr == sorted(fr)


def test_sides_are_proportional_then_log_scaled_when_extreme():
    w, h = side_lengths((100, 50))
    assert w == pytest.approx(2 * h)
    long, short = side_lengths((10**6, 3))
    assert long == pytest.approx(120) and 20 < short < 60  # visible, still shorter


def test_no_external_resources_and_numbers_only_in_the_picture():
    out = la.zeros((0, 3), chunks=(1, 3))._repr_html_()
    svg = out[out.index("<svg") :]
    assert "<script" not in out and "href" not in out
    assert re.sub(r'xmlns="http://www.w3.org/2000/svg"', "", svg).count("http") == 0


def test_table_cells_are_escaped():
    x = la.asarray([[1.0, 2.0]]).astype(">f8")
    out = x._repr_html_()
    assert "&gt;f8" in out or "float64" in out
    assert "<f8" not in out and ">f8<" not in out
