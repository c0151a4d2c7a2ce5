"""Draw a layout as a grid of cells: `plot_layout` (``T.Layout`` / ``T.Fragment``) and `plot_fragment_tv`.

- ``T.Fragment`` (2-D input): one cell per element, coloured by the thread that owns it and labelled with the
  thread (``T5``; replicas ``T5/T69``) and the register index inside that thread (``L3``).
- ``T.Layout``, ``view="input"`` (default): the input space as a grid (leading dims folded into rows, or
  `grid_shape`), each cell labelled with the flattened output position; ``view="output"``: the output space,
  each cell labelled with the input coordinate stored there.

Files are ``<save_directory>/<name>.<fmt>`` for each format of `formats` (``"png"``, ``"svg"``, ``"pdf"``,
``"all"`` or a comma list). Needs matplotlib: ``pip install "tilelang-core[tools]"``.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["plot_fragment_tv", "plot_layout"]

_FORMATS = ("pdf", "png", "svg")


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError as exc:
        raise ImportError("tilelang.tools.plot_layout needs matplotlib, which is not installed. Install it with "
                          "`pip install \"tilelang-core[tools]\"` (or `pip install matplotlib`).") from exc
    if "matplotlib.pyplot" not in __import__("sys").modules:
        matplotlib.use("Agg")  # files only: never open a window
    import matplotlib.pyplot as plt

    return plt


def _parse_formats(formats: Any) -> list[str]:
    """``"png"``, ``"png,svg"``, ``"all"`` or a list of those -> the list of formats (checked)."""
    if isinstance(formats, str):
        items = [f.strip().lower() for f in formats.split(",") if f.strip()]
    elif isinstance(formats, (list, tuple)):
        items = [str(f).strip().lower() for f in formats]
    else:
        raise TypeError(f"formats must be a string such as 'png', 'svg', 'pdf', 'all' or 'png,svg' (or a list of "
                        f"them), got {type(formats).__name__}")
    out: list[str] = []
    for f in items:
        for g in (_FORMATS if f == "all" else (f,)):
            if g not in _FORMATS:
                raise ValueError(f"unknown plot format {g!r}; use png, svg, pdf or all")
            if g not in out:
                out.append(g)
    if not out:
        raise ValueError("formats is empty; use png, svg, pdf or all")
    return out


def _save(plt: Any, fig: Any, save_directory: str, name: str, formats: Any) -> list[str]:
    os.makedirs(save_directory, exist_ok=True)
    paths = []
    for fmt in _parse_formats(formats):
        path = os.path.join(save_directory, f"{name}.{fmt}")
        fig.savefig(path, bbox_inches="tight", dpi=150 if fmt == "png" else None, format=fmt)
        print(f"Saved {fmt} format into {path}")
        paths.append(path)
    plt.close(fig)
    return paths


def _ints(shape: Sequence[Any], what: str) -> list[int]:
    out = []
    for s in shape:
        v = getattr(s, "value", s)
        if not isinstance(v, int):
            raise ValueError(f"plot_layout needs a constant {what}, got {list(shape)}")
        out.append(v)
    return out


def _text_colour(rgba: Sequence[float]) -> str:
    return "white" if 0.299 * rgba[0] + 0.587 * rgba[1] + 0.114 * rgba[2] < 0.5 else "black"


def _grid_figure(plt: Any, rows: int, cols: int) -> tuple[Any, Any, float]:
    cell = max(0.35, min(1.1, 14.0 / max(rows, cols, 1)))
    fig, ax = plt.subplots(figsize=(cell * cols + 1.4, cell * rows + 1.0))
    ax.set_xlim(-0.3, cols)
    ax.set_ylim(rows + 0.5, -0.6)
    ax.set_aspect("equal")
    ax.axis("off")
    return fig, ax, cell


def _draw_cells(ax: Any, colours: Any, labels: list[list[str]], cell: float, patches: Any) -> None:
    rows, cols = len(labels), len(labels[0]) if labels else 0
    longest = max((len(t) for row in labels for t in row), default=1)
    font = max(4.0, min(14.0, cell * 72 * 0.85 / max(1.0, 0.6 * longest)))
    for i, j in itertools.product(range(rows), range(cols)):
        colour = colours[i][j]
        ax.add_patch(patches.Rectangle((j, i), 1, 1, facecolor=colour, edgecolor="#999999", linewidth=0.6))
        if labels[i][j]:
            ax.text(j + 0.5, i + 0.5, labels[i][j], ha="center", va="center", fontsize=font,
                    color=_text_colour(colour), family="monospace")
    small = max(4.0, min(9.0, font))
    for i in range(rows):
        ax.text(-0.1, i + 0.5, str(i), ha="right", va="center", fontsize=small, color="#666666")
    for j in range(cols):
        ax.text(j + 0.5, -0.1, str(j), ha="center", va="bottom", fontsize=small, color="#666666")
    ax.add_patch(patches.Rectangle((0, 0), cols, rows, fill=False, edgecolor="#333333", linewidth=1.2))


def plot_layout(layout: Any, save_directory: str = "./tmp", name: str = "layout", colormap: str | None = None,
                verbose: bool = False, formats: str | list[str] = "pdf", view: str = "input",
                grid_shape: tuple[int, int] | None = None) -> None:
    """Draw `layout` (a ``T.Layout`` or ``T.Fragment``) into ``save_directory/name.<fmt>`` (module docstring)."""
    from tilelang.layout import Fragment, Layout

    if isinstance(layout, Fragment):
        _plot_fragment(layout, save_directory, name, colormap or "RdPu", verbose, formats)
    elif isinstance(layout, Layout):
        _plot_layout_map(layout, save_directory, name, colormap or "Spectral", verbose, formats, view, grid_shape)
    else:
        raise TypeError(f"Expected T.Layout or T.Fragment, but got {type(layout).__name__}.")


def _plot_fragment(frag: Any, save_directory: str, name: str, colormap: str, verbose: bool, formats: Any) -> None:
    shape = _ints(frag.get_input_shape(), "fragment shape")
    if len(shape) != 2:
        raise ValueError(f"plot_layout draws fragments over 2-D tiles; this one has shape {shape}")
    _parse_formats(formats)
    plt = _pyplot()
    import matplotlib.patches as patches

    replicas = int(getattr(frag.replicate_size, "value", frag.replicate_size))
    threads = int(getattr(frag.get_thread_size(), "value", frag.get_thread_size()))
    rows, cols = shape
    owner: list[list[list[int]]] = [[[] for _ in range(cols)] for _ in range(rows)]
    local: list[list[int]] = [[0] * cols for _ in range(rows)]
    for i, j in itertools.product(range(rows), range(cols)):
        for r in range(replicas):
            owner[i][j].append(int(frag.map_forward_thread([i, j], rep=r if replicas > 1 else None)))
        local[i][j] = int(frag.map_forward_index([i, j])[-1])
        if verbose:
            print(f"[{i}, {j}] -> threads {owner[i][j]}, local {local[i][j]}")
    if threads < 32:
        import warnings

        warnings.warn(f"the fragment spans {threads} threads, fewer than a warp (32): the colours of a warp's "
                      "lanes repeat less usefully", UserWarning, stacklevel=3)
    lanes = plt.get_cmap("hsv", 32 * 6)
    rest = plt.get_cmap(colormap, max(2, threads * 2 // max(replicas, 1)))
    colours = [[lanes(owner[i][j][0] * 6) if owner[i][j][0] < 32 else rest(owner[i][j][0]) for j in range(cols)]
               for i in range(rows)]
    labels = [["T" + "/".join(map(str, owner[i][j])) + f"\nL{local[i][j]}" for j in range(cols)] for i in range(rows)]
    fig, ax, cell = _grid_figure(plt, rows, cols)
    _draw_cells(ax, colours, labels, cell, patches)
    ax.set_title(f"{name}: [{rows}x{cols}] over {threads} threads (T: thread, L: register)", fontsize=10)
    _save(plt, fig, save_directory, name, formats)


def _fold(shape: Sequence[int]) -> tuple[int, int]:
    """A shape seen as 2-D: every dim but the last folded into rows."""
    if not shape:
        return 1, 1
    rows = 1
    for s in shape[:-1]:
        rows *= s
    return rows, shape[-1]


def _plot_layout_map(layout: Any, save_directory: str, name: str, colormap: str, verbose: bool, formats: Any,
                     view: str, grid_shape: tuple[int, int] | None) -> None:
    import numpy as np

    in_shape = _ints(layout.get_input_shape(), "layout shape")
    which = (view or "input").strip().lower()
    if which not in ("input", "in", "src", "output", "out", "dst"):
        raise ValueError(f"Unknown view '{view}'. Expected 'output' or 'input'.")
    total = int(np.prod(in_shape)) if in_shape else 1
    if grid_shape is not None:
        if which not in ("input", "in", "src"):
            raise ValueError("grid_shape applies to view='input' only")
        if len(grid_shape) != 2:
            raise ValueError(f"grid_shape must be a (rows, cols) tuple, got: {grid_shape}")
        if int(grid_shape[0]) <= 0 or int(grid_shape[1]) <= 0:
            raise ValueError(f"grid_shape values must be positive, got: {grid_shape}")
        if int(grid_shape[0]) * int(grid_shape[1]) != total:
            raise ValueError(f"grid_shape product must match total input elements ({total}), got "
                             f"{grid_shape[0]}x{grid_shape[1]}={int(grid_shape[0]) * int(grid_shape[1])}.")
    _parse_formats(formats)
    plt = _pyplot()
    import matplotlib.patches as patches

    coords = list(itertools.product(*(range(d) for d in in_shape)))
    outs = [tuple(int(v) for v in layout.map_forward_index(list(c))) for c in coords]
    out_shape = [max(o[k] for o in outs) + 1 for k in range(len(outs[0]))] if outs else []
    flat_out = [int(np.ravel_multi_index(o, out_shape)) for o in outs]
    if verbose:
        for c, o in zip(coords, outs):
            print(f"{list(c)} -> {list(o)}")
    if which in ("input", "in", "src"):
        rows, cols = (int(grid_shape[0]), int(grid_shape[1])) if grid_shape else _fold(in_shape)
        values = [[-1] * cols for _ in range(rows)]
        labels = [[""] * cols for _ in range(rows)]
        for k, f in enumerate(flat_out):  # coords are in row-major order: k is the flat input index
            i, j = divmod(k, cols)
            values[i][j], labels[i][j] = f, str(f)
        scale = max(max(flat_out, default=0), 1)
        title = f"[{'x'.join(map(str, in_shape))}] -> [{'x'.join(map(str, out_shape))}] (input view)"
    else:
        rows, cols = _fold(out_shape)
        values = [[-1] * cols for _ in range(rows)]
        labels = [[""] * cols for _ in range(rows)]
        for k, f in enumerate(flat_out):
            i, j = divmod(f, cols)
            values[i][j], labels[i][j] = k, "[" + ",".join(map(str, coords[k])) + "]"
        scale = max(total - 1, 1)
        title = f"[{'x'.join(map(str, in_shape))}] -> [{'x'.join(map(str, out_shape))}]"
    cmap = plt.get_cmap(colormap)
    colours = [[cmap(v / scale) if v >= 0 else (0.95, 0.95, 0.95, 1.0) for v in row] for row in values]
    fig, ax, cell = _grid_figure(plt, rows, cols)
    _draw_cells(ax, colours, labels, cell, patches)
    ax.set_title(title, fontsize=10)
    _save(plt, fig, save_directory, name, formats)


def plot_fragment_tv(frag: Any, save_directory: str | None = None, name: str = "layout",
                     apply_idx_fn: Callable[..., Sequence[Any]] = lambda *args: args, colormap: str = "RdPu",
                     item_scale: float = 0.75, formats: str | list[str] = "pdf", dpi: int = 80) -> Any:
    """The thread-value view of a fragment: columns are threads, rows registers, each cell the element it holds
    (labelled with ``apply_idx_fn(*index)``). Saved when `save_directory` is given; returns the figure."""
    import numpy as np

    plt = _pyplot()
    shape = _ints(frag.get_input_shape(), "fragment shape")
    locals_ = int(getattr(frag.get_output_shape()[-1], "value", frag.get_output_shape()[-1]))
    threads = int(getattr(frag.get_thread_size(), "value", frag.get_thread_size()))
    replicas = int(getattr(frag.replicate_size, "value", frag.replicate_size))
    flat = np.zeros((locals_, threads), dtype=np.int64)
    text = np.full((locals_, threads), "", dtype=object)
    for k, idx in enumerate(itertools.product(*(range(d) for d in shape))):
        reg = int(frag.map_forward_index(list(idx))[-1])
        for r in range(replicas):
            t = int(frag.map_forward_thread(list(idx), rep=r if replicas > 1 else None))
            flat[reg, t] = k
            text[reg, t] = "(" + ",".join(str(v) for v in apply_idx_fn(*idx)) + ")"
    fig = plt.figure(figsize=(item_scale * threads, item_scale * locals_))
    cmap = plt.get_cmap(colormap)
    plt.pcolormesh(flat, cmap=colormap, edgecolors="k", linewidth=0.5)
    top = max(int(flat.max()), 1)
    for i, j in itertools.product(range(locals_), range(threads)):
        plt.text(j + 0.5, i + 0.5, text[i, j], ha="center", va="center", fontsize=7,
                 color=_text_colour(cmap(flat[i, j] / top)))
    plt.xticks(np.arange(threads) + 0.5, [f"T{t}" for t in range(threads)])
    plt.yticks(np.arange(locals_) + 0.5, [f"I{r}" for r in range(locals_)])
    ax = plt.gca()
    ax.invert_yaxis()
    ax.xaxis.tick_top()
    if save_directory is not None:
        os.makedirs(save_directory, exist_ok=True)
        for fmt in _parse_formats(formats):
            fig.savefig(os.path.join(save_directory, f"{name}.{fmt}"), bbox_inches="tight", dpi=dpi)
        plt.close(fig)
    return fig
