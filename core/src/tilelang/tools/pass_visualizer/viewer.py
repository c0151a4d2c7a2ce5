"""Pass browser: a kernel's structure tree after every pass of the CUDA pipeline, as one self-contained HTML page.

::

    python -m tilelang.tools.pass_visualizer.viewer kernel.py --set M=1024 --set N=1024 --set K=1024 \\
        --set block_M=128 --set block_N=128 --set block_K=32 --out kernel_passes.html
    tilelang visualize kernel.py --set M=1024 ...            # the same

The left pane lists the stages (the source, the pipeline input, then each pass, marked changed / no-op); the
right pane shows the selected stage's tree with the lines that pass added in green and those it removed struck
through in red; tile operators, barriers and lowered intrinsics are highlighted. A ``.txt`` dump of the same
trees is written next to the HTML. The pipeline observed is the one `tilelang.lower` runs for the target (core
passes plus the CUDA backend's); lowering to CUDA source needs no GPU.
"""

from __future__ import annotations

import argparse
import difflib
import html
import json
import os
import re
from typing import Any

from tilelang.tools.pass_visualizer import core as M

__all__ = ["CUDAPassPipelineBodyPrologue", "build_pass_data", "emit_html", "emit_txt", "main"]

_TILE_OPS = ("gemm", "copy", "fill", "clear", "reduce", "cumsum", "atomic", "atomic_add", "transpose")
_SYNC_OPS = ("tvm_storage_sync", "sync_threads", "ptx_arrive_barrier", "mbarrier_wait_parity", "barrier_wait",
             "ptx_commit_group", "ptx_wait_group", "fence_proxy_async")
_HW_OPS = ("ptx_mma", "ptx_ldmatrix", "ptx_cp_async", "tvm_access_ptr", "address_of", "call_extern",
           "ptx_wgmma_ss", "ptx_wgmma_rs", "tma_load")
_TILE_RE = re.compile(r"\bT\.(" + "|".join(_TILE_OPS) + r")\b")
_SYNC_RE = re.compile(r"\bT\.(" + "|".join(_SYNC_OPS) + r")\b")
_HW_RE = re.compile(r"\b(" + "|".join(_HW_OPS) + r")\b")
_NODE_RE = re.compile(r"\b(PrimFunc|AttrStmt|AllocBuffer|For|IfThenElse|Evaluate|BufferStore|Bind|SeqStmt)\b")


def CUDAPassPipelineBodyPrologue(mod: Any, target: Any) -> Any:
    """The pipeline the viewer observes: `tilelang.transform.pipeline.lower_tile_program` for `target`."""
    from tilelang.transform.pipeline import lower_tile_program

    host = target.host if getattr(target, "host", None) is not None else target
    return lower_tile_program(mod, target, host)


def _highlight(line: str) -> str:
    """One tree line as HTML with the operator classes marked."""
    s = html.escape(line)
    s = _TILE_RE.sub(r'<span class="op-tile">T.\1</span>', s)
    s = _SYNC_RE.sub(r'<span class="op-sync">T.\1</span>', s)
    s = _HW_RE.sub(r'<span class="op-hw">\1</span>', s)
    return _NODE_RE.sub(r'<span class="node">\1</span>', s)


def _diff_rows(prev: list[str], cur: list[str]) -> list[dict[str, Any]]:
    """`cur` as display rows: ``t`` is ``equal``, ``add`` (new in cur) or ``del`` (gone from prev)."""
    rows: list[dict[str, Any]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=prev, b=cur, autojunk=False).get_opcodes():
        if tag == "equal":
            rows += [{"t": "equal", "s": s} for s in cur[j1:j2]]
            continue
        rows += [{"t": "del", "s": s} for s in prev[i1:i2]]
        rows += [{"t": "add", "s": s} for s in cur[j1:j2]]
    for r in rows:
        r["h"] = _highlight(r["s"])
        r["op"] = bool(_TILE_RE.search(r["s"]))
    return rows


def build_pass_data(path: str, factory: str | None, target: str, kwargs: dict[str, Any],
                    source: str) -> tuple[str, list[dict[str, Any]]]:
    """Run the kernel of file `path` through the pipeline and return ``(kernel name, stages)``.

    `factory` names the kernel (default: the first ``@tilelang.jit`` of the file), `kwargs` specialise it.
    Stages are dicts ``{name, flag, rows}``: ``"source code"`` (flag ``source``), ``"(input)"`` (``input``),
    then ``"[NN] <pass>"`` (``changed`` / ``no-op``) with rows diffed against the tree before that pass.
    """
    import tvm

    from tilelang.analysis import semantic_check
    from tilelang.instrumentation import compile_pass_instrumentation, create_pass_instruments
    from tilelang.jit import JITImpl
    from tilelang.transform.config import normalize_pass_configs, tl_configs, tvm_pass_configs

    module = M.load_user_module(path)
    if factory is not None:
        if not hasattr(module, factory):
            raise SystemExit(f"Name {factory!r} not found in {path}.")
        kernels = {factory: getattr(module, factory)}
    else:
        kernels = M.discover_jit_kernels(module)
        if not kernels:
            raise SystemExit(f"No @tilelang.jit kernel found in {path}; name a @T.prim_func factory with --factory.")
    name, kernel = next(iter(kernels.items()))
    func = M.kernel_to_tir(kernel, **kwargs)
    mod, resolved = M.build_module(func, target=target)
    if str(resolved.kind.name) != "cuda":
        raise ValueError(f"Pass Visualizer currently supports only CUDA targets, got {str(resolved.kind.name)!r}.")

    configs: dict[Any, Any] = {}
    if func.attrs is not None and "tilelang_pass_configs" in func.attrs:
        configs.update(dict(func.attrs["tilelang_pass_configs"]))
    if isinstance(kernel, JITImpl) and getattr(kernel, "pass_configs", None):
        configs.update(kernel.pass_configs)
    configs = normalize_pass_configs(configs)
    semantic_check(mod, configs)

    tool = M.StructureTreePassTool()
    with compile_pass_instrumentation(name=f"pass-visualizer:{name}", tools=[tool], include_default_tools=False,
                                      reuse_existing=False), tl_configs(configs):
        with tvm.transform.PassContext(opt_level=3, config=tvm_pass_configs(configs),
                                       instruments=create_pass_instruments()), resolved:
            mod = CUDAPassPipelineBodyPrologue(mod, resolved)
    instrument = tool.instrument
    if instrument is None:
        raise RuntimeError("the structure-tree instrument was never created")

    stages: list[dict[str, Any]] = [{
        "name": "source code", "flag": "source",
        "rows": [{"t": "equal", "s": ln, "h": _highlight(ln), "op": bool(_TILE_RE.search(ln))}
                 for ln in source.split("\n")],
    }]
    first = instrument.input_lines if instrument.input_lines is not None else M.capture_structure(mod)
    stages.append({"name": "(input)", "flag": "input", "rows": _diff_rows([], first)})
    for n, rec in enumerate(instrument.ordered_records(), 1):
        stages.append({"name": f"[{n:02d}] {rec.name.rsplit('.', 1)[-1]}", "flag": "changed" if rec.changed else
                       "no-op", "rows": _diff_rows(rec.before_lines, rec.after_lines)})
    return name, stages


_CSS = """
body { height: 100vh; display: flex; flex-direction: column; }
main { flex: 1; display: flex; padding: 0; overflow: hidden; }
#left { width: 300px; overflow: auto; border-right: 1px solid var(--border); padding: 6px 0; }
#left div { padding: 2px 12px; cursor: pointer; white-space: nowrap; font-family: ui-monospace, monospace; }
#left div.sel { background: var(--hunk-bg); }
#left div.noop { color: var(--muted); }
#left .count { color: var(--muted); font-size: 11px; margin-left: 6px; }
#right { flex: 1; overflow: auto; padding: 8px 12px; font: 12px/1.5 ui-monospace, Menlo, Consolas, monospace; }
#right div { white-space: pre; }
#right .add { background: var(--add-bg); }
#right .del { background: var(--del-bg); color: var(--del-fg); text-decoration: line-through; opacity: .7; }
.op-tile { background: #ff9d3c; color: #1e1e1e; font-weight: 700; border-radius: 3px; padding: 0 3px; }
.op-sync { background: #9d7bff; color: #1e1e1e; font-weight: 700; border-radius: 3px; padding: 0 3px; }
.op-hw { background: #5fb3d4; color: #1e1e1e; border-radius: 3px; padding: 0 3px; }
.node { color: var(--accent); }
"""

_JS = """
const STAGES = __DATA__;
let current = 0;
function show(i) {
  current = Math.max(0, Math.min(STAGES.length - 1, i));
  document.querySelectorAll('#left div').forEach((d, k) => d.classList.toggle('sel', k === current));
  const st = STAGES[current];
  document.getElementById('right').innerHTML = st.rows.map(
    r => '<div class="' + (r.t === 'equal' ? '' : r.t) + '">' + (r.h || '&nbsp;') + '</div>').join('');
  const first = document.querySelector('#right .add, #right .del');
  if (first) first.scrollIntoView({block: 'center'});
}
const left = document.getElementById('left');
STAGES.forEach((st, i) => {
  const d = document.createElement('div');
  const adds = st.rows.filter(r => r.t === 'add').length, dels = st.rows.filter(r => r.t === 'del').length;
  d.className = st.flag === 'no-op' ? 'noop' : '';
  d.innerHTML = st.name.replace(/&/g, '&amp;').replace(/</g, '&lt;') +
    (st.flag === 'changed' ? '<span class="count">+' + adds + ' \\u2212' + dels + '</span>' : '') +
    (st.flag === 'no-op' ? '<span class="count">no-op</span>' : '');
  d.onclick = () => show(i);
  left.appendChild(d);
});
document.addEventListener('keydown', e => {
  if (e.key === 'ArrowDown' || e.key === 'j') { show(current + 1); e.preventDefault(); }
  if (e.key === 'ArrowUp' || e.key === 'k') { show(current - 1); e.preventDefault(); }
});
show(STAGES.length > 2 ? 2 : 0);
"""


def emit_html(title: str, stages: list[dict[str, Any]]) -> str:
    """The pass browser page for `stages` (from `build_pass_data`)."""
    from tilelang.tools._report import page, script_json

    changed = sum(1 for s in stages if s["flag"] == "changed")
    body = '<div id="left"></div><div id="right"></div>'
    return page(f"Pass browser \u2014 {title}", body, storage_key="pass-visualizer-theme",
                stats=f"{len(stages)} stages, {changed} changed (\u2191/\u2193 to step)", extra_css=_CSS,
                extra_js=_JS.replace("__DATA__", script_json(stages)))


def emit_txt(title: str, stages: list[dict[str, Any]]) -> str:
    """The same trees as text: every stage in order, ``+`` / ``-`` marking the lines a pass added / removed."""
    out = [f"########## kernel: {title} ##########", ""]
    for st in stages:
        out.append(f"===== {st['name']}  [{st['flag']}] =====")
        out += [f"{'+' if r['t'] == 'add' else '-' if r['t'] == 'del' else ' '} {r['s']}" for r in st["rows"]]
        out.append("")
    return "\n".join(out)


def _write_outputs(name: str, stages: list[dict[str, Any]], html_path: str) -> str:
    """Write the HTML page and a ``.txt`` dump next to it; returns the dump's path."""
    os.makedirs(os.path.dirname(os.path.abspath(html_path)), exist_ok=True)
    with open(html_path, "w", encoding="utf-8") as f:
        f.write(emit_html(name, stages))
    txt = os.path.splitext(html_path)[0] + ".txt"
    with open(txt, "w", encoding="utf-8") as f:
        f.write(emit_txt(name, stages))
    return txt


def run(args: argparse.Namespace) -> int:
    """Build and write the browser for parsed `args`."""
    with open(args.path, encoding="utf-8") as f:
        source = f.read()
    target: Any = args.target
    if isinstance(target, str) and target.strip().startswith("{"):
        target = json.loads(target)
    name, stages = build_pass_data(args.path, args.factory, target, M._parse_kv(args.kwargs), source)
    out = args.out or os.path.join(os.path.dirname(os.path.abspath(args.path)),
                                   f"{os.path.splitext(os.path.basename(args.path))[0]}_passes.html")
    txt = _write_outputs(name, stages, out)
    print(f"Wrote interactive pass browser ({len(stages)} stages) -> {out}")
    print(f"Wrote text dump -> {txt}")
    return 0


def main(argv: list[str] | None = None) -> int:
    from tilelang.tools._commands import add_visualize_arguments

    parser = argparse.ArgumentParser(prog="python -m tilelang.tools.pass_visualizer.viewer",
                                     description="Build an interactive HTML browser of a kernel's passes.")
    add_visualize_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
