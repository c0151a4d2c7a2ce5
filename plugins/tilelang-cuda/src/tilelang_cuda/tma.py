"""TMA (Tensor Memory Accelerator) copies for sm_90a: kernel-source rewriting and host tensor maps.

Device side: the ``tl.copy`` lowering (`tilelang_cuda.tileops.copy`, impl ``cuda_tma``) emits
``tl_tma_load_2d("A", box_rows, box_cols, dst, slot, bytes, col, row)`` issued by thread 0 and
``tl_tma_wait(slot)`` for every thread. `rewrite_source` (run by the source hook) turns the buffer name into a
``const __grid_constant__ tl_tensor_map_t tl_tmap_A`` kernel parameter, and opens the kernel with the mbarrier
initialisation and the per-thread phase register the waits use (bit ``slot`` = the parity the next wait on that
barrier expects; every thread runs every wait, so each keeps the phases itself). The device helpers and the
`SLOTS` barriers are ``tilelang_cuda/tma_copy.cuh``; the map type ``tilelang_cuda/tensor_map.cuh`` (included by the
kernel's helper prologue, `tilelang_cuda.intrinsics`).

Host side: `tensor_maps_of` lists the maps a kernel source takes (the artifact metadata ``tma_maps``), and
`encode_arguments` computes the ``cuTensorMapEncodeTiled`` arguments for a tensor (`tilelang_cuda.driver`
makes the call at launch).
"""

from __future__ import annotations

import re
from typing import Any

from tilelang.errors import TileLangError

MAX_BOX = 256
# slot 0: copies awaited at once; 1..: one per buffer version of pipelined copies (tl_tma_bar of tma_copy.cuh)
SLOTS = 16
DISABLE_KEY = "tl.disable_tma_lower"
ENABLE_KEY = "tl.cuda.enable_tma"
# Off until a GPU run has validated the TMA path (no GPU was available when it was written): opt in with
# pass_configs={"tl.cuda.enable_tma": True}; benchmarks/gpu_bench.py times both paths on sm_90a.
ENABLED_BY_DEFAULT = False

# CUtensorMapDataType (cuda.h)
DATA_TYPES = {"uint8": 0, "int8": 0, "bool": 0, "uint16": 1, "int16": 1, "uint32": 2, "int32": 3, "uint64": 4,
              "int64": 5, "float16": 6, "float32": 7, "float64": 8, "bfloat16": 9, "float8_e4m3fn": 0,
              "float8_e5m2": 0}
# CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B: packed 4-bit values of global memory, each 16 landing in shared memory as
# 8 bytes and an 8-byte gap (the unpacked FP4 operand of tcgen05.mma kind::mxf8f6f4). cuda.h: dims count 4-bit
# values (the innermost a multiple of 128), strides multiples of 32 bytes, the innermost box exactly 128 values,
# the global address 32-byte aligned, loads only, swizzle none / 128B / 128B_ATOM_32B.
DATA_TYPE_16U4_ALIGN16B = 14
PACKED_4BIT_TYPES = {DATA_TYPE_16U4_ALIGN16B}
INTERLEAVE_NONE = 0
SWIZZLE_NONE = 0
L2_PROMOTION_128B = 2
OOB_FILL_NONE = 0

_CALL = re.compile(r'\btl_tma_load_2d\("(\w+)", (\d+), (\d+), ')
_REWRITTEN = re.compile(r"\btl_tma_load_2d\(tl_tmap_(\w+), (\d+), (\d+), ")
_KERNEL = re.compile(r'(extern "C" __global__ void(?: __launch_bounds__\(\d+\))? (\w+)\()([^)]*)(\)\s*\{)')
_DECLARATION = r'(extern "C" __global__ void(?: __launch_bounds__\(\d+\))? {}\()([^)]*)(\)\s*;)'


def uses_tma(source: str) -> bool:
    return "tl_tma_load_2d(" in source


_TOKEN = re.compile(r'"tl_tmap:(\w+):([0-9x]+):(\d+)(?::t(\d+))?"')
_TOKEN_PARAM = re.compile(r"\btl_tensor_map_t (tl_tmap_(\w+?)_b([0-9x]+)_s(\d+)(?:_t(\d+))?)\b")


def token_param(name: str, box: str, swizzle: str, data_type: str | None = None) -> str:
    """The kernel parameter a ``"tl_tmap:<name>:<box>:<swizzle>[:t<data type>]"`` token becomes."""
    return f"tl_tmap_{name}_b{box}_s{swizzle}" + (f"_t{data_type}" if data_type else "")


def rewrite_map_tokens(source: str) -> str:
    """Each kernel's ``"tl_tmap:..."`` tokens (`tilelang_cuda.tileops.dialect.tma.map_token`) become pointers to
    ``const __grid_constant__ tl_tensor_map_t`` parameters of that kernel."""
    if not _TOKEN.search(source):
        return source
    out, pos, extra = [], 0, {}
    kernels = list(_KERNEL.finditer(source))
    for i, m in enumerate(kernels):
        end = kernels[i + 1].start() if i + 1 < len(kernels) else len(source)
        body = source[m.end():end]
        params = list(dict.fromkeys(token_param(*t) for t in _TOKEN.findall(body)))
        out.append(source[pos:m.start()])
        if params:
            added = ", ".join(f"const __grid_constant__ tl_tensor_map_t {p}" for p in params)
            extra[m.group(2)] = (", " + added) if m.group(3).strip() else added
            out.append(m.group(1) + m.group(3) + extra[m.group(2)] + m.group(4))
            out.append(_TOKEN.sub(lambda t: f"(&{token_param(*t.groups())})", body))
        else:
            out.append(m.group(0) + body)
        pos = end
    out.append(source[pos:])
    text = "".join(out)
    for name, params in extra.items():  # forward declarations
        text = re.sub(_DECLARATION.format(name), lambda d, p=params: d.group(1) + d.group(2) + p + d.group(3), text)
    text = re.sub(r"extern __shared__ __align__\(\d+\) ", "extern __shared__ __align__(1024) ", text)
    return text


def rewrite_source(source: str) -> str:
    """Tensor-map parameters, barrier set-up and phase register for the kernels of `source` that use TMA."""
    source = rewrite_map_tokens(source)
    if not _CALL.search(source):
        return source
    out, pos, extra = [], 0, {}
    kernels = list(_KERNEL.finditer(source))
    for i, m in enumerate(kernels):
        end = kernels[i + 1].start() if i + 1 < len(kernels) else len(source)
        body = source[m.end():end]
        names = list(dict.fromkeys(n for n, _, _ in _CALL.findall(body)))
        out.append(source[pos:m.start()])
        if names:
            extra[m.group(2)] = "".join(f", const __grid_constant__ tl_tensor_map_t tl_tmap_{n}" for n in names)
            out.append(m.group(1) + m.group(3) + extra[m.group(2)] + m.group(4)
                       + "\n  unsigned tl_tma_phase = 0u;\n  tl_tma_init();\n")
            out.append(_CALL.sub(lambda c: f"tl_tma_load_2d(tl_tmap_{c.group(1)}, {c.group(2)}, {c.group(3)}, ",
                                 body))
        else:
            out.append(m.group(0) + body)
        pos = end
    out.append(source[pos:])
    text = "".join(out)
    for name, params in extra.items():  # forward declarations
        text = re.sub(_DECLARATION.format(name), lambda d, p=params: d.group(1) + d.group(2) + p + d.group(3), text)
    # TMA writes shared memory at 128-byte aligned addresses: align the dynamic pool beyond the static barriers
    text = re.sub(r"extern __shared__ __align__\(\d+\) ", "extern __shared__ __align__(1024) ", text)
    text = re.sub(r"(?<!extern )__shared__ __align__\((\d+)\) ",
                  lambda m: f"__shared__ __align__({max(128, int(m.group(1)))}) ", text)
    return text


def tensor_maps_of(source: str) -> dict[str, dict[str, Any]]:
    """``{parameter: {"buffer", "box", "swizzle"[, "data_type"]}}`` for the tensor maps a rewritten kernel source
    takes (``box`` in row-major order: rows, columns; ``data_type`` a ``CUtensorMapDataType`` to use instead of the
    one of the tensor's dtype)."""
    maps: dict[str, dict[str, Any]] = {}
    for param, name, box, swizzle, data_type in _TOKEN_PARAM.findall(source):
        maps[param] = {"buffer": name, "box": [int(b) for b in box.split("x")], "swizzle": int(swizzle)}
        if data_type:
            maps[param]["data_type"] = int(data_type)
    for name, rows, cols in _REWRITTEN.findall(source):
        box = [int(rows), int(cols)]
        prev = maps.setdefault(f"tl_tmap_{name}", {"buffer": name, "box": box, "swizzle": SWIZZLE_NONE})
        if prev["box"] != box:
            raise TileLangError(f"TMA copies of {name!r} use two box shapes {prev['box']} and {box}")
    return maps


def encode_arguments(shape: tuple[int, ...] | list[int], strides: tuple[int, ...] | list[int], dtype: str,
                     element_bytes: int, box: list[int], swizzle: int = SWIZZLE_NONE,
                     data_type: int | None = None) -> dict[str, Any]:
    """The ``cuTensorMapEncodeTiled`` arguments for a row-major 1..5-D tensor (`shape`, `strides` in elements, as
    torch gives them) and a `box` in the same order (outermost first): dims and boxes innermost first, strides
    of the outer dims in bytes. `data_type`: a packed 4-bit map (`PACKED_4BIT_TYPES`, `packed_4bit_arguments`)."""
    rank = len(shape)
    if not 1 <= rank <= 5 or len(box) != rank:
        raise TileLangError(f"TMA maps a 1-5-D tensor with a box of the same rank; got shape {list(shape)}, box {box}")
    if data_type is not None:
        return packed_4bit_arguments(shape, strides, dtype, element_bytes, box, swizzle, data_type)
    if dtype not in DATA_TYPES:
        raise TileLangError(f"TMA cannot copy dtype {dtype!r}; supported: {', '.join(sorted(DATA_TYPES))}")
    if int(strides[-1]) != 1:
        raise TileLangError(f"TMA needs a contiguous last dimension; the tensor's strides are {list(strides)}")
    outer = [int(st) * element_bytes for st in strides[:-1]]
    if any(b % 16 for b in outer):
        raise TileLangError(f"TMA needs 16-byte aligned row strides; this tensor's are {outer} bytes")
    if not all(1 <= b <= MAX_BOX for b in box) or (box[-1] * element_bytes) % 16:
        raise TileLangError(f"TMA box {box} must have dims in 1..{MAX_BOX} and rows of a multiple of 16 bytes")
    return {"data_type": DATA_TYPES[dtype], "rank": rank, "global_dim": [int(d) for d in reversed(shape)],
            "global_strides": list(reversed(outer)), "box_dim": [int(b) for b in reversed(box)],
            "element_strides": [1] * rank, "interleave": INTERLEAVE_NONE, "swizzle": swizzle,
            "l2_promotion": L2_PROMOTION_128B, "oob_fill": OOB_FILL_NONE}


# torch dtypes that hold packed FP4 (two 4-bit values a byte; the byte types as the FP4 examples pass them)
_PACKED_FP4_HOLDERS = {"int8": 2, "uint8": 2, "float4_e2m1fn_x2": 2}


def packed_4bit_arguments(shape: tuple[int, ...] | list[int], strides: tuple[int, ...] | list[int], dtype: str,
                          element_bytes: int, box: list[int], swizzle: int, data_type: int) -> dict[str, Any]:
    """`encode_arguments` of a ``CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B`` map over a tensor of packed FP4 as torch
    holds it (`_PACKED_FP4_HOLDERS`: a byte per two values, `shape` / `strides` in those bytes): the innermost
    dim in 4-bit values, the outer strides in bytes, the box (`box`, in 4-bit values) as the kernel copies it."""
    if data_type not in PACKED_4BIT_TYPES:
        raise TileLangError(f"tensor-map data type {data_type} is not one this backend encodes for packed 4-bit "
                            f"values ({sorted(PACKED_4BIT_TYPES)})")
    per_unit = _PACKED_FP4_HOLDERS.get(dtype)
    if per_unit is None or element_bytes != 1:
        holders = ", ".join(sorted(_PACKED_FP4_HOLDERS))
        raise TileLangError(f"an unpacking FP4 TMA load reads a tensor of packed FP4 bytes (torch {holders}); "
                            f"got {dtype}")
    rank = len(shape)
    if int(strides[-1]) != 1:
        raise TileLangError(f"TMA needs a contiguous last dimension; the tensor's strides are {list(strides)}")
    values = int(shape[-1]) * per_unit
    outer = [int(st) * element_bytes for st in strides[:-1]]
    if values % 128:
        raise TileLangError(f"16U4_ALIGN16B maps need the innermost dim a multiple of 128 values; got {values}")
    if any(b % 32 for b in outer):
        raise TileLangError(f"16U4_ALIGN16B maps need 32-byte aligned row strides; this tensor's are {outer} bytes")
    if box[-1] != 128 or not all(1 <= b <= MAX_BOX for b in box):
        raise TileLangError(f"16U4_ALIGN16B maps copy boxes exactly 128 values wide (outer dims 1..{MAX_BOX}); "
                            f"got {box}")
    if swizzle not in (SWIZZLE_NONE, 3, 4):
        raise TileLangError(f"16U4_ALIGN16B loads swizzle none, 128B or 128B_ATOM_32B; got swizzle mode {swizzle}")
    dims = [*[int(d) for d in shape[:-1]], values]
    return {"data_type": data_type, "rank": rank, "global_dim": list(reversed(dims)),
            "global_strides": list(reversed(outer)), "box_dim": [int(b) for b in reversed(box)],
            "element_strides": [1] * rank, "interleave": INTERLEAVE_NONE, "swizzle": swizzle,
            "l2_promotion": L2_PROMOTION_128B, "oob_fill": OOB_FILL_NONE}
