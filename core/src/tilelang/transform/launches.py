"""Run the kernel-level passes on one launch at a time.

A PrimFunc may hold several ``T.Kernel`` launches (a split kernel and its combine kernel, through a global
scratch tensor). The kernel-level passes ask the function for *its* launch (`tilelang.transform.utils`:
``launch_extents``, ``block_threads``, ``linear_thread``), which is one launch's thread variable and thread count:
the other launches got code indexed by a variable they do not bind (``tx`` unbound) or sized for another block.
`each_launch` gives those passes a function with one launch: for each top-level launch, the function with the
other launches left out (statements outside the launches, such as ``T.alloc_global``, stay) goes through `run`
in a module of its own, and the launches' results are put back in their places.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import tvm
import tvm_ffi
from tvm import tirx

from tilelang.transform import utils as C

__all__ = ["each_launch", "top_level_launches"]


def _is_launch(stmt: Any) -> bool:
    return isinstance(stmt, tirx.AttrStmt) and str(stmt.attr_key) == "thread_extent"


def _flat(body: Any) -> list[Any]:
    return list(body.seq) if isinstance(body, tirx.SeqStmt) else [body]


def top_level_launches(func: tirx.PrimFunc) -> list[int]:
    """Positions of the launches among the top-level statements of `func`'s body."""
    return [i for i, s in enumerate(_flat(func.body)) if _is_launch(s)]


def each_launch(mod: tvm.IRModule, run: Callable[[tvm.IRModule], tvm.IRModule]) -> tvm.IRModule:
    """``run(mod)``, except that a PrimFunc with several top-level launches goes through `run` once per launch
    (see the module docstring); the other functions of `mod` go through the first of those runs."""
    split = {gv: f for gv, f in mod.functions.items()
             if isinstance(f, tirx.PrimFunc) and len(top_level_launches(f)) > 1}
    if not split:
        return run(mod)
    if len(split) > 1 or len(mod.functions) > 1:
        # one function a run: the passes see a module of one function, as without the split
        out = {}
        for gv, func in mod.functions.items():
            sub = each_launch(tvm.IRModule({gv: func}, attrs=mod.attrs), run)
            out.update(sub.functions.items())
        return tvm.IRModule(out, attrs=mod.attrs)
    (gv, func), = split.items()
    stmts = _flat(func.body)
    launches = top_level_launches(func)
    results = []
    for k in launches:
        part = C.with_body(func, C.seq(s for i, s in enumerate(stmts) if i == k or i not in launches))
        done = run(tvm.IRModule({gv: part}, attrs=mod.attrs))
        results.append(_only_prim_func(done, func))
    return tvm.IRModule({gv: _stitch(func, stmts, launches, results)}, attrs=mod.attrs)


def _only_prim_func(mod: tvm.IRModule, func: Any) -> tirx.PrimFunc:
    funcs = [f for f in mod.functions.values() if isinstance(f, tirx.PrimFunc)]
    if len(funcs) != 1:
        raise C.lowering_error(func, f"a pass left {len(funcs)} functions for one launch of the kernel")
    return funcs[0]


def _stitch(func: Any, stmts: list[Any], launches: list[int], results: list[Any]) -> tirx.PrimFunc:
    """One function: the first run's statements outside the launches, each launch as its own run left it."""
    others = len(stmts) - len(launches)
    first = results[0]
    canon: list[Any] = []  # the statements outside the launches, as the first run left them
    pieces: list[list[Any]] = []
    attrs = _merge_attrs(func, first.attrs, None)
    for n, (k, res) in enumerate(zip(launches, results)):
        before = sum(1 for i in range(k) if i not in launches)
        out = _flat(res.body)
        if len(out) < others:
            raise C.lowering_error(func, "a pass removed statements outside the kernel's launches")
        end = len(out) - (others - before)
        mine, launch = out[:before] + out[end:], out[before:end]
        if n == 0:
            canon = mine
        else:  # this run's copies of the parameters and top-level buffers are the first run's
            vmap = _pairs(res.params, first.params)
            for a, b in zip(mine, canon):
                if type(a) is not type(b):
                    raise C.lowering_error(func, "the statements outside the kernel's launches came out of the "
                                                 "launches' lowering differently")
                vmap.update(_pairs(_defined(a), _defined(b)))
            launch = [C.substitute(s, vmap) for s in launch]
            attrs = _merge_attrs(func, attrs, _remapped(res.attrs, vmap))
        pieces.append(launch)
    body: list[Any] = []
    rest = iter(canon)
    for i in range(len(stmts)):
        body.extend(pieces[launches.index(i)] if i in launches else [next(rest)])
    out = tirx.PrimFunc(first.params, C.seq(body), first.ret_type)
    return out.with_attrs(attrs) if attrs else out


def _defined(stmt: Any) -> list[Any]:
    """What a top-level statement defines for the statements after it (a buffer, a bound variable)."""
    if isinstance(stmt, tirx.AllocBuffer):
        return [stmt.buffer]
    var = getattr(stmt, "var", None)
    return [var] if isinstance(var, tvm.ir.Var) else []


def _pairs(a: Any, b: Any) -> dict[Any, Any]:
    return {x: y for x, y in zip(a, b) if not x.same_as(y)}


def _remapped(attrs: Any, vmap: dict[Any, Any]) -> dict[str, Any]:
    """`attrs` with the variables of `vmap` replaced in its maps and lists (e.g. layouts keyed by buffer)."""
    return {str(k): C.substitute(v, vmap) if vmap and isinstance(v, (tvm_ffi.Map, tvm_ffi.Array)) else v
            for k, v in (attrs.items() if attrs is not None else ())}


def _merge_attrs(func: Any, a: Any, b: Any) -> dict[str, Any]:
    """Function attributes of two launches' runs: a count is the larger one (``tl.shared_bytes`` is per block),
    maps and lists are joined, JSON lists in strings are concatenated; anything else must agree."""
    out = {str(k): v for k, v in (a.items() if a is not None else ())}
    for key, value in (b.items() if b is not None else ()):
        key = str(key)
        have = out.get(key)
        if have is None or _same(have, value):
            out[key] = value if have is None else have
        elif isinstance(have, int) and isinstance(value, int) and not isinstance(have, bool):
            out[key] = max(have, value)
        elif isinstance(have, tvm_ffi.Map) and isinstance(value, tvm_ffi.Map):
            out[key] = {**dict(have.items()), **dict(value.items())}
        elif isinstance(have, tvm_ffi.Array) and isinstance(value, tvm_ffi.Array):
            out[key] = [*have, *(v for v in value if not any(_same(v, h) for h in have))]
        elif isinstance(have, str) and isinstance(value, str) and _json_list(have) and _json_list(value):
            out[key] = json.dumps(json.loads(have) + json.loads(value))
        else:
            raise C.lowering_error(func, f"the kernel's launches disagree on the function attribute {key}: "
                                         f"{have!r} and {value!r}")
    return out


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (str, int, float)) or isinstance(b, (str, int, float)):
        return type(a) is type(b) and a == b
    return a.same_as(b) or tvm_ffi.structural_equal(a, b)


def _json_list(text: str) -> bool:
    try:
        return isinstance(json.loads(text), list)
    except ValueError:
        return False
