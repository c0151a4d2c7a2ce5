"""Storage buffers read and written four elements at a time: ``array<vec4<T>>`` views of global memory.

TVM's WGSL codegen declares every storage buffer as a scalar array (``array<f32>``), so a 4-lane access of a
tensor is printed as four scalar accesses (``vec4<f32>(A[i + 0], ..., A[i + 3])``, four lane stores), which
WebGPU compilers (llvmpipe among them) do not merge. Two steps make such a buffer a ``vec4`` array:

1. `MarkVectorGlobals` (``device_module`` pass) proves, on the lowered IR, which buffer parameters qualify:
   element type f32/i32/u32/f16, a static element count that is a multiple of 4, at least one 4-lane access,
   every vector access a unit-stride 4-lane ``Ramp`` whose base is provably a multiple of 4 (no predicate), and
   no atomics or address-of on the buffer. Dynamic shapes, other vector widths or a misaligned access keep the
   buffer scalar. A qualifying parameter's data var is renamed ``<name>`` + `MARK`; the launch plan still maps
   it to its tensor through its ``DeclBuffer``.
2. `vectorize_storage_views` (the kernel-source hook) turns each marked ``array<T>`` binding into
   ``array<vec4<T>>``: 4-lane loads ``vec4<T>(X[b + 0], .., X[b + 3])`` become ``X[(b) >> 2u]``, the four lane
   stores ``X[b + k] = v[k];`` one ``X[(b) >> 2u] = v;``, and every other (scalar) access ``X[i]`` becomes
   ``X[(i) >> 2u][(i) & 3]``; the marker is then removed from the name. A binding the rewrite cannot read
   safely (e.g. ``&X``) stays scalar.

Element counts that are a multiple of 4 make the host's buffers (padded to 4 bytes, `tilelang_webgpu.buffers`)
whole ``vec4`` arrays; the host copies every tensor contiguously from its first element, so views and offset
tensors are aligned too. Off with the target kind's pipeline option ``webgpu_vector_globals = False``.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["MARK", "MarkVectorGlobals", "vector_global_params", "vectorize_storage_views"]

MARK = "_tlv4"
LANES = 4
_DTYPES = ("float32", "int32", "uint32", "float16")
_UNSAFE_CALLS = ("address_of", "access_ptr", "atomic", "tvm_ptr")


# ---------------------------------------------------------------------------------------------- on the IR
def _static_count(shape: Any) -> int | None:
    from tilelang.transform import utils as C

    total = 1
    for extent in shape:
        value = C.as_int(extent)
        if value is None:
            return None
        total *= value
    return total


def vector_global_params(func: Any) -> list[str]:
    """Names of `func`'s buffer parameters that qualify for a ``vec4`` view (see the module docstring)."""
    import tvm
    import tvm_ffi
    from tvm import tirx

    from tilelang.transform import utils as C

    params = {str(p.name): p for p in func.params if isinstance(p.ty, tvm.ir.PointerType)}
    ok = {name: str(p.ty.element_type.dtype) in _DTYPES for name, p in params.items()}
    vector_access = dict.fromkeys(params, False)
    views: dict[str, str] = {}  # buffer var name -> the parameter it declares
    ana = tvm.sym.Analyzer()

    def on_decl(node: Any) -> None:
        data, buf = node.data, node.buffer
        name = str(getattr(data, "name", ""))
        if name not in params:  # an offset or reinterpreted view of a parameter keeps that parameter scalar
            for pname, param in params.items():
                if C.uses_var(data, [param]):
                    ok[pname] = False
            return
        if views.setdefault(str(buf.name), name) != name:
            ok[name] = ok[views[str(buf.name)]] = False
        count = _static_count(buf.ty.shape)
        if count is None or count % LANES or not count or str(buf.ty.dtype) != str(params[name].ty.element_type.dtype):
            ok[name] = False

    def on_access(buf: Any, indices: Any, predicate: Any) -> None:
        name = views.get(str(getattr(buf, "name", "")))
        if name is None:
            return
        if predicate is not None or len(indices) != 1:
            ok[name] = False
            return
        index = indices[0]
        if isinstance(index, tirx.Ramp):
            stride = getattr(index.stride, "value", None)
            lanes = getattr(index.lanes, "value", index.lanes)
            if stride != 1 or lanes != LANES or not ana.can_prove(tirx.floormod(index.base, LANES) == 0):
                ok[name] = False
            else:
                vector_access[name] = True
        elif "x" in _dtype(index):  # any other vector index
            ok[name] = False

    def on_call(call: Any) -> None:
        op = str(getattr(call.op, "name", ""))
        if not any(word in op for word in _UNSAFE_CALLS):
            return
        for arg in call.args:
            for ld in _loads(arg):
                name = views.get(str(getattr(ld.source, "name", "")))
                if name is not None:
                    ok[name] = False
            for pname, param in params.items():
                if isinstance(arg, tvm.ir.Expr) and C.uses_var(arg, [param]):
                    ok[pname] = False

    tvm_ffi.structural_walk(func.body, [(tirx.DeclBuffer, on_decl)])
    tvm_ffi.structural_walk(func.body, [
        (tvm.ir.TensorLoad, lambda ld: on_access(ld.source, ld.indices, getattr(ld, "predicate", None))),
        (tirx.BufferStore, lambda st: on_access(st.buffer, st.indices, getattr(st, "predicate", None))),
        (tvm.ir.Call, on_call),
    ])
    return [name for name in params if ok[name] and vector_access[name]]


def _dtype(expr: Any) -> str:
    ty = getattr(expr, "ty", None)
    return str(ty.dtype if ty is not None and hasattr(ty, "dtype") else getattr(expr, "dtype", ""))


def _loads(expr: Any) -> list[Any]:
    import tvm

    from tilelang.transform import utils as C

    return list(C.collect(expr, tvm.ir.TensorLoad)) if isinstance(expr, tvm.ir.Expr) else []


def MarkVectorGlobals(target: Any = None) -> Any:
    """Rename the data vars of buffer parameters that qualify for a ``vec4`` view (see the module docstring)."""
    import tvm
    import tvm_ffi
    from tvm import tirx

    from tilelang.transform import utils as C

    @tvm.transform.module_pass(opt_level=0, name="webgpu.mark_vector_globals")
    def mark(mod: Any, ctx: Any) -> Any:
        if not C.pipeline_options(target).get("webgpu_vector_globals", True):
            return mod
        updates = {}
        for gv, func in mod.functions.items():
            if not isinstance(func, tirx.PrimFunc):
                continue
            names = set(vector_global_params(func))
            if not names:
                continue
            renamed = {p: tirx.Var(str(p.name) + MARK, p.ty) for p in func.params if str(p.name) in names}

            def swap(var: Any, renamed: dict[Any, Any] = renamed) -> Any:
                return next((new for old, new in renamed.items() if var.same_as(old)), var)

            params = [swap(p) for p in func.params]
            body = tvm_ffi.structural_map(func.body, (tvm.ir.Var, swap))
            updates[gv] = tirx.PrimFunc(params, body, func.ret_type, func.attrs)
        for gv, func in updates.items():
            mod[gv] = func
        return mod

    return mark


# ---------------------------------------------------------------------------------------------- on the WGSL
_DECL = re.compile(rf"(var<storage,\s*\w+>\s*)(\w+){MARK}(\s*:\s*)array<(f32|i32|u32|f16)>;")


def _index_end(src: str, open_at: int) -> int:
    """The position of the ``]`` closing the ``[`` at `open_at` (-1 when unbalanced)."""
    depth = 0
    for pos in range(open_at, len(src)):
        ch = src[pos]
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth == 0:
                return pos
    return -1


def _rewrite_buffer(src: str, name: str, elem: str) -> str | None:
    """`src` with binding `name` (marked) read as ``array<vec4<elem>>``; None when an access is unreadable."""
    marked = re.escape(name + MARK)
    if re.search(rf"&\s*{marked}\b", src):
        return None
    vec = re.escape(f"vec4<{elem}>")
    base = r"([^\[\]\n,]+?|\w+\[[^\[\]\n]+\])"
    # four lane stores of one vector value on consecutive lines -> one vec4 store
    store = re.compile(rf"^([ \t]*){marked}\[{base} \+ 0\] = ([^;\n]+)\[0\];\n"
                       + "".join(rf"\1{marked}\[\2 \+ {k}\] = \3\[{k}\];\n" for k in range(1, LANES)), re.M)
    src = store.sub(lambda m: f"{m.group(1)}@@V4@@[({m.group(2)}) >> 2u] = {m.group(3)};\n", src)
    load = re.compile(rf"{vec}\({marked}\[{base} \+ 0\], "
                      + ", ".join(rf"{marked}\[\1 \+ {k}\]" for k in range(1, LANES)) + r"\)")
    src = load.sub(lambda m: f"@@V4@@[({m.group(1)}) >> 2u]", src)
    # what is left are scalar accesses: element i is lane i & 3 of vector i >> 2
    out, pos = [], 0
    pattern = re.compile(rf"\b{marked}\b")
    for m in pattern.finditer(src):
        if m.start() < pos:
            continue
        if src.startswith("[", m.end()):
            end = _index_end(src, m.end())
            if end < 0:
                return None
            index = src[m.end() + 1:end]
            if pattern.search(index):  # the buffer indexes itself: leave it scalar
                return None
            out.append(src[pos:m.start()] + f"@@V4@@[({index}) >> 2u][({index}) & 3]")
            pos = end + 1
        else:
            out.append(src[pos:m.end()])  # the declaration
            pos = m.end()
    out.append(src[pos:])
    return "".join(out).replace("@@V4@@", name + MARK)


def vectorize_storage_views(src: str) -> str:
    """`src` with each marked storage binding read through a ``vec4`` array (see the module docstring)."""
    if MARK not in src:
        return src
    for m in list(_DECL.finditer(src)):
        name, elem = m.group(2), m.group(4)
        rewritten = _rewrite_buffer(src, name, elem)
        if rewritten is not None:
            src = rewritten.replace(m.group(0), f"{m.group(1)}{name}{MARK}{m.group(3)}array<vec4<{elem}>>;", 1)
    return re.sub(rf"\b(\w+){MARK}\b", r"\1", src)
