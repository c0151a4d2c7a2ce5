"""Atomics on WGSL arrays that TVM declares without ``atomic<...>``.

TVM's WebGPU codegen prints ``atomicAdd((&(S[i])), v)`` on a buffer declared ``array<f32>``; WGSL only allows
atomics on ``atomic<i32>`` / ``atomic<u32>`` objects, and has no float atomics at all. `legalize_atomics`
rewrites the source of a kernel:

- every array an atomic touches is re-declared as ``array<atomic<u32|i32>>`` (storage arrays become
  ``read_write``); its plain reads become ``atomicLoad`` and its plain stores ``atomicStore`` (with a
  ``bitcast`` for f32);
- an f32 ``atomicAdd`` / ``atomicMax`` / ``atomicMin`` becomes a call of a generated helper that retries
  ``atomicCompareExchangeWeak`` on the value's bit pattern until it wins (it returns the old value, like the
  native atomics); i32 / u32 atomics stay native.
"""

from __future__ import annotations

import re

__all__ = ["legalize_atomics"]

_ATOMIC_CALL = re.compile(r"\batomic(Add|Max|Min|Sub|And|Or|Xor|Exchange)\(\s*\(?\s*&\s*\(?\s*(\w+)\s*\[")
_STORAGE_DECL = r"(var<storage,\s*)(read|read_write)(>\s*{name}\s*:\s*)array<(\w+)>"
_WORKGROUP_DECL = r"(var<workgroup>\s*{name}\s*:\s*)array<(\w+),"
_F32_OPS = {"Add": "bitcast<f32>(old) + v", "Max": "max(bitcast<f32>(old), v)", "Min": "min(bitcast<f32>(old), v)",
            "Sub": "bitcast<f32>(old) - v"}


def _close(src: str, start: int, open_ch: str, close_ch: str) -> int:
    """Index of the bracket closing the one opened just before `start`."""
    depth = 1
    i = start
    while i < len(src):
        ch = src[i]
        if ch == open_ch:
            depth += 1
        elif ch == close_ch:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise ValueError("unbalanced brackets in WGSL")


def _split_args(text: str) -> list[str]:
    """Top-level comma-separated arguments of a call's argument text."""
    out, depth, cur = [], 0, []
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur).strip())
    return out


def _elem_type(src: str, name: str) -> tuple[str, str] | None:
    """``(element type, "storage" | "workgroup")`` of array `name`, or None when it is not a plain array."""
    m = re.search(_STORAGE_DECL.format(name=re.escape(name)), src)
    if m:
        return m.group(4), "storage"
    m = re.search(_WORKGROUP_DECL.format(name=re.escape(name)), src)
    if m:
        return m.group(2), "workgroup"
    return None


def _rewrite_accesses(src: str, name: str, elem: str) -> str:
    """Plain ``name[i]`` reads / ``name[i] = v;`` stores of an atomic array become atomicLoad / atomicStore."""
    to_bits = "bitcast<u32>" if elem == "f32" else ""
    from_bits = "bitcast<f32>" if elem == "f32" else ""
    pattern = re.compile(rf"(?<![\w.])\b{re.escape(name)}\s*\[")
    out, pos = [], 0
    while True:
        m = pattern.search(src, pos)
        if m is None:
            out.append(src[pos:])
            return "".join(out)
        # skip the declaration and the pointers of atomic calls (`&(name[`, `&name[`)
        before = src[:m.start()].rstrip()
        if before.endswith("&") or before.endswith("&("):
            out.append(src[pos:m.end()])
            pos = m.end()
            continue
        end = _close(src, m.end(), "[", "]")
        index = _rewrite_accesses(src[m.end():end], name, elem)
        after = src[end + 1:]
        store = re.match(r"\s*=(?!=)", after)
        out.append(src[pos:m.start()])
        if store:
            stmt_end = src.index(";", end + 1 + store.end())
            value = _rewrite_accesses(src[end + 1 + store.end():stmt_end].strip(), name, elem)
            out.append(f"atomicStore(&{name}[{index}], {to_bits}({value}))")
            pos = stmt_end
        else:
            out.append(f"{from_bits}(atomicLoad(&{name}[{index}]))")
            pos = end + 1


def legalize_atomics(src: str) -> str:
    """`src` with its atomics on non-atomic arrays made valid WGSL (see the module docstring)."""
    calls = list(_ATOMIC_CALL.finditer(src))
    if not calls:
        return src
    targets: dict[str, str] = {}
    for m in calls:
        found = _elem_type(src, m.group(2))
        if found is not None and found[0] in ("f32", "i32", "u32"):
            targets[m.group(2)] = found[0]
    if not targets:
        return src
    helpers: dict[str, str] = {}
    # 1. atomic calls -> helpers (f32) or native calls on the atomic array (ints)
    out, pos = [], 0
    for m in _ATOMIC_CALL.finditer(src):
        op, name = m.group(1), m.group(2)
        if name not in targets:
            continue
        call_open = src.index("(", m.start())
        call_end = _close(src, call_open + 1, "(", ")")
        args = _split_args(src[call_open + 1:call_end])
        if len(args) != 2:
            continue
        idx_open = m.end()
        idx_end = _close(src, idx_open, "[", "]")
        index = src[idx_open:idx_end]
        value = args[1]
        out.append(src[pos:m.start()])
        if targets[name] == "f32":
            if op not in _F32_OPS:
                raise ValueError(f"atomic{op} on f32 has no WebGPU lowering")
            fn = f"tl_atomic_{op.lower()}_{name}"
            helpers[fn] = (f"fn {fn}(i : i32, v : f32) -> f32 {{\n"
                           f"  var old : u32 = atomicLoad(&{name}[i]);\n"
                           f"  loop {{\n"
                           f"    let r = atomicCompareExchangeWeak(&{name}[i], old, bitcast<u32>({_F32_OPS[op]}));\n"
                           f"    if (r.exchanged) {{ break; }}\n"
                           f"    old = r.old_value;\n"
                           f"  }}\n"
                           f"  return bitcast<f32>(old);\n}}\n")
            out.append(f"{fn}(i32({index}), {value})")
        else:
            out.append(f"atomic{op}(&{name}[{index}], {value})")
        pos = call_end + 1
    out.append(src[pos:])
    src = "".join(out)
    # 2. declarations and the other accesses
    for name, elem in targets.items():
        atomic_elem = "u32" if elem == "f32" else elem
        src = re.sub(_STORAGE_DECL.format(name=re.escape(name)),
                     lambda m, t=atomic_elem: f"{m.group(1)}read_write{m.group(3)}array<atomic<{t}>>", src, count=1)
        src = re.sub(_WORKGROUP_DECL.format(name=re.escape(name)),
                     lambda m, t=atomic_elem: f"{m.group(1)}array<atomic<{t}>,", src, count=1)
        src = _rewrite_accesses(src, name, elem)
    if helpers:
        at = src.find("@compute")
        at = at if at >= 0 else len(src)
        src = src[:at] + "".join(f"{h}\n" for h in helpers.values()) + src[at:]
    return src
