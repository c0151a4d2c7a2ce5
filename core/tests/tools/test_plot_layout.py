"""plot_layout writes real images: PNG size follows the grid, SVG/PDF are well formed, errors are clear."""

from __future__ import annotations

import struct
import sys

import pytest

import tilelang.language as T
from tilelang.tools import plot_layout

pytest.importorskip("matplotlib")


def _png_size(path):
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_layout_views_and_formats(tmp_path, capsys):
    transpose = T.Layout([4, 8], lambda i, j: (j, i))
    plot_layout(transpose, save_directory=str(tmp_path), name="t", formats="all")
    for ext, magic in (("png", b"\x89PNG"), ("pdf", b"%PDF"), ("svg", b"<?xml")):
        assert (tmp_path / f"t.{ext}").read_bytes().startswith(magic)
    w, h = _png_size(tmp_path / "t.png")
    assert w > h > 100  # 4 rows x 8 columns: wider than tall
    svg = (tmp_path / "t.svg").read_text()
    # matplotlib keeps each label as a comment: input (i, j) -> output (j, i), flat index j * 4 + i
    labels = [int(x) for x in __import__("re").findall(r"<!-- (\d+) -->", svg)]
    assert labels[:32] == [j * 4 + i for i in range(4) for j in range(8)]
    plot_layout(transpose, save_directory=str(tmp_path), name="t_out", formats="png", view="output")
    w2, h2 = _png_size(tmp_path / "t_out.png")
    assert h2 > w2  # the output space is 8 x 4
    assert "Saved png format into" in capsys.readouterr().out


def test_fragment_is_drawn_per_thread(tmp_path):
    frag = T.Fragment([8, 8], forward_thread_fn=lambda i, j: (i * 8 + j) // 2, forward_index_fn=lambda i, j: j % 2)
    plot_layout(frag, save_directory=str(tmp_path), name="frag", formats="svg")
    svg = (tmp_path / "frag.svg").read_text()
    labels = __import__("re").findall(r"<!-- (\w+) -->", svg)
    cells = list(zip(labels[0:128:2], labels[1:128:2]))  # (thread, register) per cell, row-major
    assert cells[:4] == [("T0", "L0"), ("T0", "L1"), ("T1", "L0"), ("T1", "L1")] and cells[63] == ("T31", "L1")


def test_bad_input(tmp_path, monkeypatch):
    with pytest.raises(TypeError, match="Expected T.Layout or T.Fragment"):
        plot_layout("not a layout")
    with pytest.raises(ValueError, match="unknown plot format 'gif'"):
        plot_layout(T.Layout([2, 2], lambda i, j: (i, j)), save_directory=str(tmp_path), formats="gif")
    with pytest.raises(ValueError, match="grid_shape product must match"):
        plot_layout(T.Layout([2, 2], lambda i, j: (i, j)), save_directory=str(tmp_path), grid_shape=(3, 3))
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if it were not installed
    with pytest.raises(ImportError, match=r"tilelang-core\[tools\]"):
        plot_layout(T.Layout([2, 2], lambda i, j: (i, j)), save_directory=str(tmp_path), formats="png")
