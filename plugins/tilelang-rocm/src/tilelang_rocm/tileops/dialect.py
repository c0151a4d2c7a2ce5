"""Lowerings of the ROCm dialect's intrinsics (`tilelang_rocm.language.tir`) to LLVM AMDGPU intrinsics.

- ``tl.tvm_mfma`` -> ``llvm.amdgcn.mfma.<shape>`` (``f32_16x16x16f16`` -> ``llvm.amdgcn.mfma.f32.16x16x16f16``)
  on the register vectors: 8-bit operands travel as i32 / i64 / i32x4 words and the 16x16x16 bf16 ``.1k`` form
  as i16 lanes, as the intrinsics take them. Each shape is checked against the GPUs that have it (``16x16x16f16``:
  every CDNA GPU; ``bf16_1k``: gfx90a and later; fp8 / ``16x16x32_i8``: gfx942 and gfx950; the ``x32`` f16 / bf16
  and ``x64`` i8 shapes: gfx950).
- ``tl.tvm_rdna_wmma`` -> ``llvm.amdgcn.wmma.f32.16x16x16.{f16,bf16}`` (gfx11, gfx12).
- ``tl.ds_read_tr16_b64`` / ``tl.ds_read_tr8_b64`` -> ``llvm.amdgcn.ds.read.tr{16,8}.b64`` on the LDS address
  (gfx950).

A target that lacks a construct gets a LoweringError naming it, the target's GPU and the first GPU with it; a
target that is not ROCm gets one naming the construct as AMD's (registered by `tilelang_rocm.language`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tvm import tirx

from tilelang.backend import TileOpImpl
from tilelang.backend.sdk import Lowered

CDNA = ("gfx908", "gfx90a", "gfx940", "gfx941", "gfx942", "gfx950")
GFX90A_ON = CDNA[1:]
GFX94_ON = ("gfx940", "gfx941", "gfx942", "gfx950")
GFX950 = ("gfx950",)
OLD_I8 = ("gfx908", "gfx90a")
RDNA = ("gfx11", "gfx12")  # prefixes


def _is_rocm(target: Any) -> bool:
    kind = target.kind.name if hasattr(target, "kind") else str(target.get("kind") if isinstance(target, dict)
                                                                  else target)
    return str(kind) in ("rocm", "hip")


def _mcpu(target: Any) -> str:
    from tilelang_rocm.target import target_get_mcpu

    return target_get_mcpu(target) or ""


def _refuse(ctx: Any, feature: str, has: tuple[str, ...], mcpu: str) -> Exception:
    from tilelang_rocm.target import SUPPORTED_MCPUS

    # name the GPUs the backend targets (gfx908 / gfx940 / gfx941 are accepted, not advertised)
    named = tuple(g for g in SUPPORTED_MCPUS if g.startswith(has)) or has
    first = named[0]
    which = ", ".join(named) if len(named) > 1 else named[0]
    has = named
    return ctx.error(f"needs {feature}, which {which} {'have' if len(has) > 1 else 'has'}; target mcpu "
                     f"{mcpu or '(none)'} does not", f"compile for {{\"kind\": \"rocm\", \"mcpu\": \"{first}\"}}")


# ------------------------------------------------------------------------------------------------ MFMA
def mfma_gpus(shape: str) -> tuple[str, ...]:
    """The CDNA GPUs with ``v_mfma_<shape>``."""
    if shape in ("f32_16x16x32_f16", "f32_16x16x32_bf16", "f32_32x32x16_f16", "f32_32x32x16_bf16",
                 "i32_16x16x64_i8", "i32_32x32x32_i8") or shape.endswith(("x64_fp8_fp8", "x64_bf8_bf8")):
        return GFX950
    if "fp8" in shape or "bf8" in shape or shape in ("i32_16x16x32_i8", "i32_32x32x16_i8"):
        return GFX94_ON
    if shape.endswith("i8") and "_i8" not in shape:  # the gfx908 / gfx90a integer forms (16x16x16i8)
        return OLD_I8
    if "bf16_1k" in shape:
        return GFX90A_ON
    return CDNA


_BF16_HALVES = {"f32_16x16x32_bf16": "f32_16x16x16bf16_1k", "f32_32x32x16_bf16": "f32_32x32x8bf16_1k"}


def _lanes(dtype: str) -> tuple[str, int]:
    base, _, n = dtype.rpartition("x")
    return (base, int(n)) if base and n.isdigit() else (dtype, 1)


def _vector(load: Any, lanes: int) -> Any:
    """`lanes` consecutive elements of a register buffer from `load`'s index (a scalar for one lane)."""
    if lanes == 1:
        return load
    idx = list(load.indices)
    return tirx.BufferLoad(load.source, [*idx[:-1], tirx.Ramp(idx[-1], 1, lanes)])


def _as_intrinsic_operand(value: Any, elem: str, lanes: int, shape: str) -> Any:
    """The operand in the type the LLVM intrinsic takes: 8-bit lanes packed into i32 / i64 words, bf16 of the
    ``.1k`` forms as i16 lanes."""
    bits = 8 if elem in ("int8", "uint8") or elem.startswith("float8") else None
    if bits is not None:
        total = lanes * 8
        if total in (32, 64):
            return tirx.reinterpret(f"int{total}", value)
        return tirx.reinterpret(f"int32x{total // 32}", value)
    if elem == "bfloat16":
        # TVM's bf16 legalization widens bf16 registers to fp32 (exactly): the bits are the fp32 value's high half
        vec = (lambda t: f"{t}x{lanes}") if lanes > 1 else (lambda t: t)
        wide = tirx.reinterpret(vec("uint32"), tirx.Cast(vec("float32"), value))
        sixteen = tirx.const(16, "uint32")
        return tirx.Cast(vec("int16"), tirx.shift_right(wide, tirx.Broadcast(sixteen, lanes) if lanes > 1
                                                        else sixteen))
    return value


def _matrix_call(ctx: Any, family: str, gpus: tuple[str, ...], feature: str) -> Any:
    shape, a_t, b_t, c_t = (str(ctx.args[i].value) for i in (0, 3, 4, 5))
    load_a, load_b, load_c = ctx.args[6], ctx.args[7], ctx.args[8]
    mcpu = _mcpu(ctx.target)
    if not any(mcpu.startswith(g) for g in gpus):
        raise _refuse(ctx, feature, gpus, mcpu)
    (ae, al), (be, bl), (_, cl) = _lanes(a_t), _lanes(b_t), _lanes(c_t)
    idx = list(load_c.indices)
    at = [*idx[:-1], tirx.Ramp(idx[-1], 1, cl)] if cl > 1 else idx
    if family == "mfma" and shape in _BF16_HALVES:
        # gfx950's x32 bf16 MFMAs take <8 x bfloat>, which TVM's LLVM codegen cannot form (bf16 registers are
        # legalized to fp32): two x16 ``.1k`` MFMAs over the lanes' halves sum the same products (A and B hold
        # the same K of each lane, so the K order within the step does not matter)
        half = _BF16_HALVES[shape]
        name = "llvm.amdgcn.mfma." + half.replace("_", ".")
        acc: Any = _vector(load_c, cl)
        for h in range(2):
            def part(load: Any, lanes: int, h: int = h) -> Any:
                i = list(load.indices)
                return tirx.BufferLoad(load.source, [*i[:-1], tirx.Ramp(i[-1] + h * (lanes // 2), 1, lanes // 2)])
            a = _as_intrinsic_operand(part(load_a, al), ae, al // 2, half)
            b = _as_intrinsic_operand(part(load_b, bl), be, bl // 2, half)
            acc = tirx.call_llvm_pure_intrin(c_t, name, a, b, acc, *[tirx.const(0, "int32")] * 3)
        return Lowered(None, [tirx.BufferStore(load_c.source, acc, at)])
    if family == "mfma":
        name = "llvm.amdgcn.mfma." + shape.replace("_", ".")
        extra = [tirx.const(0, "int32")] * 3  # cbsz, abid, blgp
    else:
        dtype_in = "bf16" if "bf16" in shape else "f16"
        name = f"llvm.amdgcn.wmma.f32.16x16x16.{dtype_in}"
        extra = []
    a = _as_intrinsic_operand(_vector(load_a, al), ae, al, shape)
    b = _as_intrinsic_operand(_vector(load_b, bl), be, bl, shape)
    acc = _vector(load_c, cl)
    out = tirx.call_llvm_pure_intrin(c_t, name, a, b, acc, *extra)
    return Lowered(None, [tirx.BufferStore(load_c.source, out, at)])


def _mfma(ctx: Any) -> Any:
    shape = str(ctx.args[0].value)
    return _matrix_call(ctx, "mfma", mfma_gpus(shape), f"the MFMA instruction v_mfma_{shape}")


def _wmma(ctx: Any) -> Any:
    shape = str(ctx.args[0].value)
    return _matrix_call(ctx, "wmma", RDNA, f"the WMMA instruction v_wmma_{shape} (RDNA3 / RDNA4)")


def _store(ctx: Any) -> Any:
    raise ctx.error("is not lowered by the tilelang-rocm backend",
                    "store accumulators with the emitter's stmatrix (plain per-lane stores)")


# ------------------------------------------------------------------------------------------------ LDS
def _ds_read_tr(bits: int) -> Callable[[Any], Any]:
    def lower(ctx: Any) -> Any:
        mcpu = _mcpu(ctx.target)
        if not mcpu.startswith(GFX950):
            raise _refuse(ctx, f"the LDS transpose read ds_read_b64_tr_b{bits}", GFX950, mcpu)
        load = ctx.args[0]
        from tilelang.transform import utils as C

        if C.scope_of(load.source) not in ("shared", "shared.dyn"):
            raise ctx.error(f"reads LDS (shared memory); {load.source.name} is {C.scope_of(load.source)}")
        # device_lib/lds_transpose.ll wraps llvm.amdgcn.ds.read.tr{16,8}.b64 (TVM cannot declare the overloaded
        # intrinsic on an LDS pointer itself)
        return tirx.call_extern("uint32x2", f"tl_ds_read_tr{bits}_b64", tirx.address_of(load))

    return lower


# ------------------------------------------------------------------------------------------------ registration
_LOWER: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "tl.tvm_mfma": ("MFMA (CDNA: gfx908, gfx90a, gfx942, gfx950)", _mfma),
    "tl.tvm_rdna_wmma": ("WMMA (RDNA3 / RDNA4: gfx11, gfx12)", _wmma),
    "tl.tvm_mfma_store": ("MFMA (CDNA)", _store),
    "tl.tvm_rdna_wmma_store": ("WMMA (RDNA3 / RDNA4)", _store),
    "tl.ds_read_tr16_b64": ("LDS transpose reads (gfx950)", _ds_read_tr(16)),
    "tl.ds_read_tr8_b64": ("LDS transpose reads (gfx950)", _ds_read_tr(8)),
}


def _ensure_ops() -> None:
    from tilelang.ir import register_intrinsic

    for op in _LOWER:
        register_intrinsic(op, "opaque", f"ROCm dialect: T.{op[3:]}")


def rocm_impls() -> tuple[TileOpImpl, ...]:
    _ensure_ops()
    return tuple(TileOpImpl(op, "rocm_dialect", fn, supports_target=_is_rocm, priority=10)
                 for op, (_, fn) in sorted(_LOWER.items()))


def elsewhere_impls() -> tuple[TileOpImpl, ...]:
    """For targets other than ROCm: a LoweringError naming the construct as AMD's."""
    out = []
    for op, (feature, _) in sorted(_LOWER.items()):
        def lower(ctx: Any, feature: str = feature) -> Any:
            raise ctx.error(f"is an AMD construct ({feature}); target kind {ctx.target_kind!r} does not have it",
                            "use a ROCm target (kind \"rocm\") or the common language (T.gemm)")

        out.append(TileOpImpl(op, "rocm_dialect_elsewhere", lower, supports_target=lambda t: not _is_rocm(t),
                              priority=-1))
    return tuple(out)


_elsewhere_registered = False


def register_elsewhere() -> None:
    """Register `elsewhere_impls` for every target kind (once)."""
    global _elsewhere_registered
    if _elsewhere_registered:
        return
    from tilelang.backend import ANY_TARGET, register_tile_op_impl

    _ensure_ops()
    for impl in elsewhere_impls():
        register_tile_op_impl(impl, target_kind=ANY_TARGET)
    _elsewhere_registered = True


IMPLS = rocm_impls()

