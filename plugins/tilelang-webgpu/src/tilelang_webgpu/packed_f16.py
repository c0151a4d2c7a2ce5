"""float16 kernels on adapters without ``shader-f16``: f16 memory stored as packed ``u32``, arithmetic in f32.

Many WebGPU adapters (OpenGL ones such as Mesa llvmpipe through GL, many browsers, integrated GPUs) lack the
``shader-f16`` feature and reject ``enable f16;``. `legalize_f16` rewrites a kernel's WGSL so that it needs no
f16 type, keeping the tensors' bytes as they are (the host copies float16 tensors unchanged):

- every storage or workgroup array of ``f16`` / ``vec2<f16>`` / ``vec4<f16>`` becomes an array of 32-bit words
  holding two halves each (element ``2k`` in the low 16 bits, as ``unpack2x16float`` reads them): loads unpack
  to f32 (``unpack2x16float``), stores pack (``pack2x16float``, rounding to f16);
- a store of one half of a word (a scalar ``f16`` element, or one lane of a ``vec4<f16>`` element) must not
  disturb the other half, which another invocation may be writing: such arrays are ``array<atomic<u32>>`` and
  the store clears and sets its 16 bits with ``atomicAnd`` / ``atomicOr``; a store of four lanes starting at an
  even element writes two whole words instead. Arrays with whole-word stores only stay plain ``u32`` /
  ``vec2<u32>`` (a ``vec4<f16>`` tile copied from another packed array moves its words unconverted);
- every other ``f16`` (registers, local arrays, casts, literals ``1.5h``, scalar arguments) becomes ``f32``:
  arithmetic runs in f32 and values are rounded to f16 when stored, so results match the native path within
  f16 rounding.

`for_device` applies it when the device lacks the feature. A use it cannot express (the address of an f16
array, a compound assignment to one) raises `F16EmulationError` saying what to do.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tilelang.errors import LoweringError

__all__ = ["F16EmulationError", "uses_f16", "legalize_f16", "for_device"]

_F16 = re.compile(r"\bf16\b")
_ENABLE = re.compile(r"^\s*enable\s+f16\s*;\s*\n?", re.M)
_STORAGE = re.compile(r"(var<storage,\s*(\w+)>\s*)(\w+)(\s*:\s*)array<(f16|vec2<f16>|vec4<f16>)>;")
_WORKGROUP = re.compile(r"(var<workgroup>\s*)(\w+)(\s*:\s*)array<(f16|vec2<f16>|vec4<f16>),\s*(\d+)u?i?>;")
_MEMORY = re.compile(r"var<(?:storage|workgroup|uniform)[^>]*>\s*\w+\s*:[^;]*;")
_LITERAL = re.compile(r"\b(\d[\d.]*(?:e[+-]?\d+)?)h\b")
_QUAD_LOAD = re.compile(r"vec4<f(?:16|32)>\((\s*)(\w+)\[([^\[\]]+?) \+ 0\],\s*\2\[\3 \+ 1\],\s*\2\[\3 \+ 2\],"
                        r"\s*\2\[\3 \+ 3\]\)")
_HALVES = {"f16": 1, "vec2<f16>": 2, "vec4<f16>": 4}


class F16EmulationError(LoweringError):
    """A float16 kernel uses f16 in a way the packed-u32 emulation cannot express."""


@dataclass
class _Packed:
    """One f16 array: halves per element (1, 2, 4), and whether its words are atomics (half-word stores)."""

    name: str
    halves: int
    atomic: bool = False


def uses_f16(wgsl: str) -> bool:
    """Whether `wgsl` enables or uses the f16 type."""
    return bool(_F16.search(wgsl))


def for_device(wgsl: str, has_shader_f16: bool) -> str:
    """`wgsl` as the device can run it: unchanged with ``shader-f16`` (or without f16), else `legalize_f16`."""
    return wgsl if has_shader_f16 or not uses_f16(wgsl) else legalize_f16(wgsl)


# ---------------------------------------------------------------------------------------------- scanning
def _close(src: str, open_at: int) -> int:
    """Position of the ``]`` matching the ``[`` at `open_at`."""
    depth = 0
    for pos in range(open_at, len(src)):
        ch = src[pos]
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth == 0:
                return pos
    raise F16EmulationError(f"unbalanced brackets in the WGSL near {src[open_at:open_at + 60]!r}")


@dataclass
class _Access:
    start: int  # of the array name
    index: tuple[int, int]  # text span inside the brackets
    lane: tuple[int, int] | None  # span of a following ``[lane]`` on a store
    value: tuple[int, int] | None  # span of the stored expression (None: a load)
    end: int  # past the access (a load) or the statement's ``;`` (a store)


def _accesses(src: str, name: str, pos: int = 0) -> list[_Access]:
    """Every outermost access ``name[...]`` of `src` from `pos` on (loads and statement stores)."""
    found = []
    pattern = re.compile(rf"(?<![\w.])(&\s*)?{re.escape(name)}\[")
    while True:
        m = pattern.search(src, pos)
        if m is None:
            return found
        if m.group(1):
            raise F16EmulationError(f"the kernel takes the address of float16 array {name!r}")
        open_at = m.end() - 1
        close = _close(src, open_at)
        after, lane = close + 1, None
        before = src[:m.start()].rstrip(" \t")
        at_statement = not before or before[-1] in "\n{};"
        if at_statement and src.startswith("[", after):
            lane_close = _close(src, after)
            lane = (after + 1, lane_close)
            after = lane_close + 1
        rest = re.match(r"\s*([-+*/%&|^]?)=(?!=)", src[after:])
        if at_statement and rest is not None:
            if rest.group(1):
                raise F16EmulationError(f"compound assignment {rest.group(0).strip()!r} to float16 array {name!r}")
            value_start = after + rest.end()
            semi = src.index(";", value_start)
            found.append(_Access(m.start(), (open_at + 1, close), lane, (value_start, semi), semi + 1))
            pos = semi + 1
        else:
            found.append(_Access(m.start(), (open_at + 1, close), None, None, close + 1))
            pos = close + 1


# ---------------------------------------------------------------------------------------------- rewriting
def _word_copy(value: str, arrays: dict[str, _Packed], target: _Packed) -> str | None:
    """When stored `value` is one element load of another plain array packed like `target`: that load with its
    index rewritten (the words move unconverted); else None."""
    m = re.match(r"\s*(\w+)\[", value)
    if m is None or m.group(1) not in arrays:
        return None
    source = arrays[m.group(1)]
    if source.atomic or target.atomic or source.halves != target.halves or source.halves == 1:
        return None
    close = _close(value, m.end() - 1)
    if value[close + 1:].strip():
        return None
    return f"{source.name}[{_rewrite(value[m.end():close], arrays)}]"


def _lane_of(index: str) -> tuple[str, int] | None:
    """``"b + k"`` (k in 0..3) as (b, k)."""
    m = re.fullmatch(r"\s*(.+?) \+ ([0-3])\s*", index)
    return (m.group(1), int(m.group(2))) if m else None


def _four_lanes(src: str, first: _Access, name: str) -> tuple[str, list[str], int] | None:
    """TVM's 4-lane store to a scalar array, ``X[b + 0] = e0;`` .. ``X[b + 3] = e3;`` as consecutive statements
    starting with `first`: (b, [e0..e3], end of the last statement); None otherwise."""
    group, pos = [first], first.end
    while len(group) < 4:
        m = re.compile(rf"\s*{re.escape(name)}\[").match(src, pos)
        if m is None:
            return None
        following = _accesses(src[:_statement_end(src, m.end())], name, m.end() - len(name) - 1)
        if not following or following[0].value is None or following[0].lane is not None:
            return None
        group.append(following[0])
        pos = following[0].end
    base, values = None, []
    for k, acc in enumerate(group):
        lane = _lane_of(src[acc.index[0]:acc.index[1]])
        if lane is None or lane[1] != k or (base is not None and lane[0] != base):
            return None
        base = lane[0]
        values.append(src[acc.value[0]:acc.value[1]].strip())
    return base, values, group[3].end  # type: ignore[return-value]


def _statement_end(src: str, pos: int) -> int:
    semi = src.find(";", pos)
    return len(src) if semi < 0 else semi + 1


def _four_lane_loads(src: str, arrays: dict[str, _Packed]) -> str:
    """TVM's 4-lane load of a scalar array, ``vec4<f16>(X[b + 0], X[b + 1], X[b + 2], X[b + 3])``, as one call
    (two word loads when ``b`` is even)."""
    def load(m: re.Match[str]) -> str:
        arr = arrays.get(m.group(2))
        if arr is None or arr.halves != 1:
            return m.group(0)
        return f"tl_ld4h_{arr.name}(u32({m.group(3)}))"

    return _QUAD_LOAD.sub(load, src)


def _rewrite(src: str, arrays: dict[str, _Packed]) -> str:
    """`src` with every access of the packed arrays replaced by word accesses (nested accesses included)."""
    if not arrays or not any(name in src for name in arrays):
        return src
    src = _four_lane_loads(src, arrays)
    events: list[tuple[int, str, _Access]] = []
    for name in arrays:
        events.extend((a.start, name, a) for a in _accesses(src, name))
    events.sort(key=lambda e: e[0])
    out, pos, i = [], 0, 0
    while i < len(events):
        start, name, acc = events[i]
        i += 1
        if start < pos:  # inside an access already rewritten (its text was rewritten recursively)
            continue
        arr = arrays[name]
        out.append(src[pos:start])
        index = _rewrite(src[acc.index[0]:acc.index[1]], arrays)
        if acc.value is None:
            out.append(_load(arr, index))
            pos = acc.end
            continue
        quad = _four_lanes(src, acc, name) if arr.halves == 1 else None
        if quad is not None:
            base, values, pos = quad
            whole = {v[:-3] for v in values}
            if len(whole) == 1 and all(v.endswith(f"[{k}]") for k, v in enumerate(values)):
                vector = f"vec4<f32>({_rewrite(whole.pop(), arrays)})"  # the lanes of one vector, in order
            else:
                vector = f"vec4<f32>({', '.join(f'f32({_rewrite(v, arrays)})' for v in values)})"
            out.append(f"tl_st4h_{name}(u32({_rewrite(base, arrays)}), {vector});")
            continue
        value = src[acc.value[0]:acc.value[1]]
        lane = _rewrite(src[acc.lane[0]:acc.lane[1]], arrays) if acc.lane else None
        copied = _word_copy(value, arrays, arr) if lane is None else None
        out.append(_store(arr, index, lane, copied or _rewrite(value, arrays).strip(), raw=copied is not None))
        pos = acc.end
    out.append(src[pos:])
    return "".join(out)


def _load(arr: _Packed, index: str) -> str:
    if arr.atomic or arr.halves == 1:
        return f"tl_ld_{arr.name}(u32({index}))"
    if arr.halves == 4:
        return f"tl_unpack4({arr.name}[{index}])"
    return f"unpack2x16float({arr.name}[{index}])"


def _store(arr: _Packed, index: str, lane: str | None, value: str, raw: bool) -> str:
    name = arr.name
    if lane is not None:  # one lane of a vector element
        return f"tl_sth_{name}(u32({index}) * {arr.halves}u + u32({lane}), f32({value}));"
    if arr.halves == 1:
        return f"tl_sth_{name}(u32({index}), f32({value}));"
    if arr.atomic:
        return f"tl_st_{name}(u32({index}), {value});"
    if raw:
        return f"{name}[{index}] = {value};"
    if arr.halves == 4:
        return f"{name}[{index}] = tl_pack4({value});"
    return f"{name}[{index}] = pack2x16float({value});"


def _helpers(arr: _Packed) -> str:
    """The WGSL functions reading and writing packed array `arr`."""
    n, h = arr.name, arr.halves
    vec = "f32" if h == 1 else f"vec{h}<f32>"
    lines = []
    word = f"atomicLoad(&{n}[w])" if arr.atomic else f"{n}[w]"
    if arr.atomic or h == 1:
        if h == 1:
            lines.append(f"fn tl_ld_{n}(i: u32) -> f32 {{ let w = i >> 1u; "
                         f"return unpack2x16float({word})[i & 1u]; }}")
            pair = f"unpack2x16float({word.replace('[w]', '[w]')}), unpack2x16float({word.replace('[w]', '[w + 1u]')})"
            lines.append(f"fn tl_ld4h_{n}(i: u32) -> vec4<f32> {{ let w = i >> 1u; if ((i & 1u) == 0u) {{ "
                         f"return vec4<f32>({pair}); }} return vec4<f32>(tl_ld_{n}(i), tl_ld_{n}(i + 1u), "
                         f"tl_ld_{n}(i + 2u), tl_ld_{n}(i + 3u)); }}")
        else:
            words = ", ".join(f"unpack2x16float({word.replace('[w]', f'[i * {h // 2}u + {k}u]')})"
                              for k in range(h // 2))
            lines.append(f"fn tl_ld_{n}(i: u32) -> {vec} {{ return {vec}({words}); }}")
    if arr.atomic:
        lines.append(
            f"fn tl_sth_{n}(i: u32, v: f32) {{ let w = i >> 1u; let shift = (i & 1u) * 16u; "
            f"let bits = (pack2x16float(vec2<f32>(v, 0.0)) & 0xffffu) << shift; "
            f"atomicAnd(&{n}[w], ~(0xffffu << shift)); atomicOr(&{n}[w], bits); }}")
        if h > 1:
            stores = " ".join(f"atomicStore(&{n}[i * {h // 2}u + {k}u], pack2x16float(v.{'xyzw'[2 * k:2 * k + 2]}));"
                              for k in range(h // 2))
            lines.append(f"fn tl_st_{n}(i: u32, v: {vec}) {{ {stores} }}")
        else:
            lines.append(
                f"fn tl_st4h_{n}(i: u32, v: vec4<f32>) {{ if ((i & 1u) == 0u) {{ "
                f"atomicStore(&{n}[i >> 1u], pack2x16float(v.xy)); "
                f"atomicStore(&{n}[(i >> 1u) + 1u], pack2x16float(v.zw)); }} else {{ "
                f"tl_sth_{n}(i, v.x); tl_sth_{n}(i + 1u, v.y); tl_sth_{n}(i + 2u, v.z); tl_sth_{n}(i + 3u, v.w); }} }}")
    return "\n".join(lines)


_UNPACK4 = ("fn tl_unpack4(w: vec2<u32>) -> vec4<f32> { return vec4<f32>(unpack2x16float(w.x), "
            "unpack2x16float(w.y)); }\n"
            "fn tl_pack4(v: vec4<f32>) -> vec2<u32> { return vec2<u32>(pack2x16float(v.xy), pack2x16float(v.zw)); }")


def legalize_f16(wgsl: str) -> str:
    """`wgsl` without the f16 type (see the module docstring)."""
    src = _ENABLE.sub("", wgsl)
    if re.search(r"bitcast<(?:vec\d<)?f16", src):
        raise F16EmulationError("the kernel reinterprets bits as float16 (bitcast); it needs shader-f16")
    for m in re.finditer(r"struct\s+(\w+)\s*\{([^}]*)\}", src):
        if _F16.search(m.group(2)):
            raise F16EmulationError(f"struct {m.group(1)} has float16 fields, which cannot be packed into u32 "
                                    "words; it needs shader-f16")
    for m in _MEMORY.finditer(src):
        if _F16.search(m.group(0)) and not (_STORAGE.fullmatch(m.group(0)) or _WORKGROUP.fullmatch(m.group(0))):
            raise F16EmulationError(f"float16 memory declared as {m.group(0).strip()!r} cannot be packed into u32 "
                                    "words; it needs shader-f16")
    arrays: dict[str, _Packed] = {}
    for m in _STORAGE.finditer(src):
        arrays[m.group(3)] = _Packed(m.group(3), _HALVES[m.group(5)])
    for m in _WORKGROUP.finditer(src):
        arrays[m.group(2)] = _Packed(m.group(2), _HALVES[m.group(4)])
    for arr in arrays.values():  # half-word stores need atomic words
        for acc in _accesses(src, arr.name):
            if acc.value is not None and (acc.lane is not None or arr.halves == 1):
                arr.atomic = True
    # declarations
    def storage_decl(m: re.Match[str]) -> str:
        arr = arrays[m.group(3)]
        elem = "atomic<u32>" if arr.atomic else ("vec2<u32>" if arr.halves == 4 else "u32")
        return f"{m.group(1)}{m.group(3)}{m.group(4)}array<{elem}>;"

    def workgroup_decl(m: re.Match[str]) -> str:
        arr = arrays[m.group(2)]
        count = int(m.group(5))
        if arr.atomic:
            elem, words = "atomic<u32>", (count * arr.halves + 1) // 2
        else:
            elem, words = ("vec2<u32>", count) if arr.halves == 4 else ("u32", (count * arr.halves + 1) // 2)
        return f"{m.group(1)}{m.group(2)}{m.group(3)}array<{elem}, {words}>;"

    decl_end = 0
    for m in list(_STORAGE.finditer(src)) + list(_WORKGROUP.finditer(src)):
        decl_end = max(decl_end, m.end())
    body_at = src.find("\n", decl_end) + 1 if decl_end else 0
    head, body = src[:body_at], src[body_at:]
    head = _WORKGROUP.sub(workgroup_decl, _STORAGE.sub(storage_decl, head))
    body = _rewrite(body, arrays)
    helpers = [_helpers(a) for a in arrays.values()]
    if any(a.halves == 4 for a in arrays.values()):
        helpers.insert(0, _UNPACK4)
    out = head + "\n".join(h for h in helpers if h) + "\n" + body
    out = _LITERAL.sub(r"\1f", out)
    return _F16.sub("f32", out)
