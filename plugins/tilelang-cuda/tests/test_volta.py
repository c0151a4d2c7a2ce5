"""Volta (sm_70): ``T.gemm`` of fp16 operands (fp16 / fp32 accumulators) runs ``mma.sync.m8n8k4`` there, other
dtypes run on CUDA cores; no kernel holds an instruction sm_70 lacks (ldmatrix, the m16n8 shapes). The sm_70
emitter (`TensorCoreIntrinEmitter` of ``mma_sm70_macro_generator``), `GemmMMASm70.lower` and
`make_volta_swizzled_layout` are real; emulated results are checked against torch (the emulator's m8n8k4
model: `test_volta_emulated`).

The sm_70 binary check needs a CUDA 12 toolchain (CUDA 13 dropped sm_70): set TILELANG_SM70_NVIDIA to the
``site-packages/nvidia`` folder of a venv with ``nvidia-cuda-nvcc-cu12 nvidia-cuda-nvrtc-cu12
nvidia-cuda-runtime-cu12 nvidia-cuda-cccl-cu12`` (NVRTC 12 makes compute_70 PTX, ptxas 12 the sm_70 cubin);
without it that check is skipped.
"""

from __future__ import annotations

import ctypes
import os
import re
import subprocess
import tempfile
import warnings

import pytest
import torch
from cuda_helpers import needs_nvcc
from tvm import tirx

import tilelang
import tilelang.language as T
from tilelang.errors import LoweringError
from tilelang.layout import make_volta_swizzled_layout

# inline-PTX tensor-core (and sm_75+ operand-load) instructions and this backend's helpers that issue them
TENSOR_CORE = re.compile(r"\b(mma|wgmma|ldmatrix|stmatrix|tcgen05)\.|tl_(mma|ldmatrix|wgmma|stmatrix)\w*")


def _sm70_toolchain() -> str | None:
    root = os.environ.get("TILELANG_SM70_NVIDIA", "").strip()
    needed = ("cuda_nvrtc/lib/libnvrtc.so.12", "cuda_nvcc/bin/ptxas", "cuda_runtime/include", "cuda_cccl/include")
    if root and all(os.path.exists(os.path.join(root, n)) for n in needed):
        return root
    return None


def _sm70_ptx_and_cubin(source: str, root: str) -> tuple[str, bytes]:
    """compute_70 PTX of `source` (NVRTC 12) and its sm_70 cubin (ptxas 12); AssertionError with the log on failure."""
    lib = ctypes.CDLL(os.path.join(root, "cuda_nvrtc/lib/libnvrtc.so.12"))
    prog = ctypes.c_void_p()
    assert lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), b"kernel.cu", 0, None, None) == 0
    opts = [b"--gpu-architecture=compute_70", b"-default-device", b"--std=c++17",
            *[f"-I{os.path.join(root, d)}".encode() for d in ("cuda_runtime/include", "cuda_cccl/include")]]
    try:
        rc = lib.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
        size = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetProgramLog(prog, log)
        assert rc == 0, log.value.decode(errors="replace")
        lib.nvrtcGetPTXSize(prog, ctypes.byref(size))
        ptx = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetPTX(prog, ptx)
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "k.ptx"), "w") as f:
            f.write(ptx.value.decode())
        done = subprocess.run([os.path.join(root, "cuda_nvcc/bin/ptxas"), "-arch=sm_70", "k.ptx", "-o", "k.cubin"],
                              cwd=tmp, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        with open(os.path.join(tmp, "k.cubin"), "rb") as f:
            return ptx.value.decode(), f.read()


def _gemm(dtype: str, accum: str, trans_a: bool, trans_b: bool, a_in_registers: bool, layouts: bool = False):
    a_shape = (32, 64) if trans_a else (64, 32)
    b_shape = (64, 32) if trans_b else (32, 64)

    @T.prim_func
    def gemm(a: T.Tensor(a_shape, dtype), b: T.Tensor(b_shape, dtype), c: T.Tensor((64, 64), accum)):
        with T.Kernel(1, threads=128):
            a_s = T.alloc_shared(a_shape, dtype)
            b_s = T.alloc_shared(b_shape, dtype)
            c_f = T.alloc_fragment((64, 64), accum)
            if layouts:
                T.annotate_layout({a_s: make_volta_swizzled_layout(a_s, is_a=True, k_inner=not trans_a),
                                   b_s: make_volta_swizzled_layout(b_s, is_a=False, k_inner=trans_b)})
            T.clear(c_f)
            T.copy(a, a_s)
            T.copy(b, b_s)
            if a_in_registers:
                a_f = T.alloc_fragment(a_shape, dtype)
                T.copy(a_s, a_f)
                T.gemm(a_f, b_s, c_f, transpose_A=trans_a, transpose_B=trans_b)
            else:
                T.gemm(a_s, b_s, c_f, transpose_A=trans_a, transpose_B=trans_b)
            T.copy(c_f, c)

    return gemm


GEMMS = [("float16", "float32", False, False, False), ("float16", "float16", False, True, False),
         ("float16", "float32", True, False, False), ("float16", "float32", False, True, True),
         ("bfloat16", "float32", False, True, False), ("int8", "int32", False, True, False),
         ("float32", "float32", False, True, False)]
M8N8K4_CALL = re.compile(r"tl_mma_m8n8k4_f16_(f32|f16)")


def _kernel_body(source: str) -> str:
    return source[source.index("__global__"):]


def _lower(func, arch: str = "sm_70"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tilelang.lower(func, target={"kind": "cuda", "arch": arch}, enable_device_compile=False)


@pytest.mark.parametrize("dtype,accum,trans_a,trans_b,a_in_registers", GEMMS)
@pytest.mark.parametrize("arch", ["sm_70", "sm_72"])
def test_gemm_on_volta_uses_m8n8k4_for_fp16_only(dtype, accum, trans_a, trans_b, a_in_registers, arch):
    body = _kernel_body(str(_lower(_gemm(dtype, accum, trans_a, trans_b, a_in_registers), arch).kernel_source))
    calls = set(M8N8K4_CALL.findall(body))
    if dtype == "float16":  # the Volta tensor-core path, with the accumulator's m8n8k4 variant
        assert calls == {"f32" if accum == "float32" else "f16"}, calls
    else:  # CUDA cores
        assert not calls
    rest = M8N8K4_CALL.sub("", body)
    assert not TENSOR_CORE.search(rest), TENSOR_CORE.search(rest).group(0)


@pytest.mark.skipif(_sm70_toolchain() is None, reason="no sm_70-capable CUDA 12 toolchain (TILELANG_SM70_NVIDIA)")
@pytest.mark.parametrize("dtype,accum,trans_a,trans_b,a_in_registers", GEMMS[:5])
def test_gemm_on_sm70_compiles_to_an_sm70_cubin(dtype, accum, trans_a, trans_b, a_in_registers):
    art = _lower(_gemm(dtype, accum, trans_a, trans_b, a_in_registers))
    ptx, cubin = _sm70_ptx_and_cubin(str(art.kernel_source), _sm70_toolchain())
    assert cubin[:4] == b"\x7fELF"
    assert not re.search(r"^\s*(wgmma|ldmatrix)\.", ptx, re.M)
    shapes = set(re.findall(r"^\s*mma\.sync\.aligned\.(\S+)", ptx, re.M))
    if dtype == "float16":
        c = "f32" if accum == "float32" else "f16"
        assert shapes == {f"m8n8k4.row.col.{c}.f16.f16.{c}"}, shapes
        assert "ld.local" not in ptx and "st.local" not in ptx  # fragments stay in registers
    else:
        assert not shapes
        assert re.search(r"^\s*(fma|mad|mul)\.", ptx, re.M)  # the CUDA-core GEMM


@pytest.mark.skipif(_sm70_toolchain() is None, reason="no sm_70-capable CUDA 12 toolchain (TILELANG_SM70_NVIDIA)")
@pytest.mark.parametrize("accum", ["float32", "float16"])
def test_sm70_emitter_kernel_compiles_to_an_sm70_cubin(accum):
    ptx, cubin = _sm70_ptx_and_cubin(str(_lower(_emitter_gemm(accum, False, True)[1]).kernel_source),
                                     _sm70_toolchain())
    c = "f32" if accum == "float32" else "f16"
    assert cubin[:4] == b"\x7fELF"
    assert set(re.findall(r"^\s*mma\.sync\.aligned\.(\S+)", ptx, re.M)) == {f"m8n8k4.row.col.{c}.f16.f16.{c}"}


def _emitter_gemm(accum: str, trans_a: bool, trans_b: bool, m: int = 64, n: int = 64, k: int = 32):
    from tilelang_cuda.intrinsics.macro.mma_sm70_macro_generator import TensorCoreIntrinEmitter

    e = TensorCoreIntrinEmitter(a_dtype="float16", b_dtype="float16", accum_dtype=accum, a_transposed=trans_a,
                                b_transposed=trans_b, block_row_warps=2, block_col_warps=2, warp_row_tiles=m // 2,
                                warp_col_tiles=n // 2, chunk=k)
    a_shape = (k, m) if trans_a else (m, k)
    b_shape = (n, k) if trans_b else (k, n)

    @T.prim_func
    def kern(A: T.Tensor(a_shape, "float16"), B: T.Tensor(b_shape, "float16"), C: T.Tensor((m, n), accum)):
        with T.Kernel(1, threads=128):
            A_s = T.alloc_shared(a_shape, "float16")
            B_s = T.alloc_shared(b_shape, "float16")
            A_l = T.alloc_local((e.warp_rows * e.local_size_a,), "float16")
            B_l = T.alloc_local((e.warp_cols * e.local_size_b,), "float16")
            C_l = T.alloc_local((e.warp_rows * e.warp_cols * e.local_size_out,), accum)
            for i in T.serial(e.warp_rows * e.warp_cols * e.local_size_out):
                C_l[i] = 0
            T.copy(A, A_s)
            T.copy(B, B_s)
            for ki in T.serial(k // 4):
                e.ldmatrix_a(A_l, A_s, ki)
                e.ldmatrix_b(B_l, B_s, ki)
                e.mma(A_l, B_l, C_l)
            e.stmatrix(C_l, C)

    return e, kern


@pytest.mark.parametrize("accum,trans_a,trans_b", [("float32", False, False), ("float32", False, True),
                                                   ("float32", True, False), ("float16", True, True),
                                                   ("float16", False, True)])
def test_sm70_emitter_gemm_emulated(accum, trans_a, trans_b):
    from cuda_emulator import emulate

    e, kern = _emitter_gemm(accum, trans_a, trans_b)
    assert (e.M_DIM, e.n_dim, e.k_dim, e.warp_rows, e.warp_cols) == (16, 16, 4, 2, 2)
    art = _lower(kern)
    body = _kernel_body(str(art.kernel_source))
    assert M8N8K4_CALL.search(body) and not TENSOR_CORE.search(M8N8K4_CALL.sub("", body))
    torch.manual_seed(2)
    a = torch.randn((32, 64) if trans_a else (64, 32)).half()
    b = torch.randn((64, 32) if trans_b else (32, 64)).half()
    c = torch.zeros(64, 64, dtype=getattr(torch, accum))
    assert emulate(art, a, b, c)["mma"] == 8 * 4
    ref = (a.T if trans_a else a).float() @ (b.T if trans_b else b).float()
    tol = 1e-3 if accum == "float32" else 3e-2
    torch.testing.assert_close(c.float(), ref, atol=tol * 8, rtol=tol)


def _ints(value) -> list[int]:
    return [int(x) for x in value] if isinstance(value, (list, tuple)) else [int(value)]


@pytest.mark.parametrize("accum", ["float32", "float16"])
def test_sm70_emitter_layouts_agree_with_its_loads_and_stores(accum):
    """make_mma_store_layout / make_mma_load_layout give, per tile element, the thread and register the emitter's
    stmatrix / loads use."""
    from tilelang_cuda.intrinsics.layout import mma_sm70_layout as L

    e, _ = _emitter_gemm(accum, False, True)
    frag = e.make_mma_store_layout(tirx.decl_buffer((64, 64), accum, scope="local.fragment"))
    store = e._store_map()
    for tid in range(128):
        lane, warp_m, warp_n = tid % 32, (tid // 32) % 2, tid // 64
        for r in range(e.warp_rows * e.warp_cols * 8):
            atom, v = r // 8, r % 8
            row, col = store(lane, v)
            i = (warp_m * e.warp_rows + atom // e.warp_cols) * 16 + row
            j = (warp_n * e.warp_cols + atom % e.warp_cols) * 16 + col
            assert _ints(frag.map_forward_thread([i, j])) == [tid]
            assert _ints(frag.map_forward_index([i, j])) == [r]
    for lane in range(32):
        for v in range(4):
            assert L.shared_16x4_to_mma_a_32x4_layout(*L.mma_load_a_32x4_to_shared_16x4_layout(lane, v),
                                                      (lane // 8) % 2) == (lane, v)
            assert L.shared_16x4_to_mma_b_32x4_layout_trans(*L.mma_load_b_32x4_to_shared_16x4_layout_trans(lane, v),
                                                            (lane // 4) % 2) == (lane, v)
    a_frag = e.make_mma_load_layout(tirx.decl_buffer((64, 32), "float16", scope="local.fragment"), "A")
    # A row 17 (atom 1 of warp_m 0), K 3: lanes 1 and 9 (quad-pairs 0 and 2) of the warps of either warp_n, value 7
    assert {_ints(a_frag.map_forward_thread([17, 3], rep))[0] for rep in range(4)} == {1, 9, 65, 73}
    assert _ints(a_frag.map_forward_index([17, 3])) == [7]


def test_sm70_emitter_names_the_dtypes_it_serves():
    from tilelang_cuda.intrinsics.macro.mma_sm70_macro_generator import TensorCoreIntrinEmitter

    with pytest.raises(ValueError, match="float16 operands with float16 or float32 accumulators, got A bfloat16"):
        TensorCoreIntrinEmitter(a_dtype="bfloat16", b_dtype="bfloat16", accum_dtype="float32",
                                warp_row_tiles=32, warp_col_tiles=32, chunk=32)
    with pytest.raises(ValueError, match="warp_col_tiles must be a positive multiple of 16"):
        TensorCoreIntrinEmitter(a_dtype="float16", b_dtype="float16", accum_dtype="float32",
                                warp_row_tiles=32, warp_col_tiles=8, chunk=32)


def test_gemm_mma_sm70_lower_emits_m8n8k4(monkeypatch):
    """GemmMMASm70.lower on the tile-op context of a real sm_70 lowering returns the m8n8k4 body; a context of a
    gemm the accumulator pass left to CUDA cores is refused with the reason."""
    import tilelang_cuda.tileops.gemm as gemm_impl
    from tilelang_cuda.op.gemm import GemmMMASm70

    seen = []
    real = gemm_impl.lower_volta_gemm

    def spy(ctx, layout):
        seen.append(ctx)
        return real(ctx, layout)

    monkeypatch.setattr(gemm_impl, "lower_volta_gemm", spy)
    _lower(_gemm("float16", "float32", False, True, False))
    assert GemmMMASm70.matches({"kind": "cuda", "arch": "sm_70"}) and len(seen) == 1
    assert set(M8N8K4_CALL.findall(str(GemmMMASm70().lower(seen[0])))) == {"f32"}

    class Ctx:  # a CUDA-core gemm: no accumulator layout arguments
        args = seen[0].args[:7]

    with pytest.raises(ValueError, match="not served by mma.m8n8k4"):
        GemmMMASm70().lower(Ctx())


def _holder(shape):
    @T.prim_func
    def holder(a: T.Tensor(shape, "float16")):
        with T.Kernel(1, threads=32):
            a_s = T.alloc_shared(shape, "float16")
            T.copy(a, a_s)

    return holder.buffer_map[holder.params[0]]


def _offsets(layout, shape) -> list[int]:
    storage = [int(x) for x in layout.storage_shape]
    out = []
    for i in range(shape[0]):
        for j in range(shape[1]):
            flat = 0
            for x, extent in zip(layout.map_forward_index([i, j]), storage):
                flat = flat * extent + int(x)
            out.append(flat)
    return out


# (shape, is_a, k_inner) -> {(row, col): storage offset}: the reference 0.1.15's values
VOLTA_LAYOUTS = [
    ((64, 32), True, True, {(0, 0): 0, (1, 0): 16, (5, 0): 20, (8, 4): 264, (17, 13): 861, (63, 31): 2043}),
    ((32, 64), True, False, {(0, 8): 32, (1, 8): 40, (2, 16): 88, (3, 63): 231, (5, 9): 297}),
    ((32, 64), False, False, {(0, 8): 72, (1, 8): 64, (2, 16): 128, (3, 63): 231, (5, 9): 321}),
    ((8, 16), True, True, {(1, 0): 24, (7, 15): 183}),  # padded by 8 elements
    ((4, 8), False, True, {(1, 0): 8, (3, 7): 31}),  # row-major
]


@pytest.mark.parametrize("shape,is_a,k_inner,spots", VOLTA_LAYOUTS)
def test_make_volta_swizzled_layout(shape, is_a, k_inner, spots):
    layout = make_volta_swizzled_layout(_holder(shape), is_a=is_a, k_inner=k_inner)
    offsets = _offsets(layout, shape)
    assert len(set(offsets)) == len(offsets)  # a permutation (of padded storage for the padded form)
    for (i, j), off in spots.items():
        assert offsets[i * shape[1] + j] == off, (i, j)


def test_make_volta_swizzled_layout_names_bad_arguments():
    with pytest.raises(TypeError, match="is_a: bool"):
        make_volta_swizzled_layout(_holder((32, 32)), is_a=1)


@pytest.mark.parametrize("trans_a,trans_b", [(False, False), (False, True), (True, False), (True, True)])
def test_gemm_on_volta_swizzled_tiles_emulated(trans_a, trans_b):
    from cuda_emulator import emulate

    art = _lower(_gemm("float16", "float32", trans_a, trans_b, False, layouts=True))
    torch.manual_seed(3)
    a = torch.randn((32, 64) if trans_a else (64, 32)).half()
    b = torch.randn((64, 32) if trans_b else (32, 64)).half()
    c = torch.zeros(64, 64)
    emulate(art, a, b, c)
    torch.testing.assert_close(c, (a.T if trans_a else a).float() @ (b.T if trans_b else b).float(),
                               atol=1e-3, rtol=1e-3)


def _ptx_mma_kernel(shape: str, a_type: str):
    @T.prim_func
    def k(out: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=32):
            a = T.alloc_local((8,), "float16")
            b = T.alloc_local((4,), "float16")
            c = T.alloc_local((4,), "float32")
            T.ptx_mma("float32", shape, "row", "col", a_type, a_type, "fp32", a.data, 0, b.data, 0, c.data, 0)
            for i in T.serial(4):
                out[T.get_thread_binding() * 4 + i] = c[i]

    return k


@pytest.mark.parametrize("shape,lowest", [("m16n8k16", "sm_80"), ("m16n8k8", "sm_75")])
def test_hand_written_mma_sync_on_sm70_names_its_lowest_arch(shape, lowest):
    """The sm_80 emitter's T.ptx_mma (sm_80) and sm_75's m16n8k8 (sm_75) on sm_70: a LoweringError naming the
    lowest arch with that shape, never PTX sm_70 lacks."""
    with pytest.raises(LoweringError) as info:
        tilelang.lower(_ptx_mma_kernel(shape, "fp16"), target={"kind": "cuda", "arch": "sm_70"},
                       enable_device_compile=False)
    text = str(info.value)
    assert "target arch sm_70" in text and f"{lowest} and newer" in text, text


def test_turing_mma_sync_shape_lowers_on_sm75():
    """m16n8k8 is Turing's: T.ptx_mma of it lowers for sm_75 (m16n8k16 there still names sm_80)."""
    art = tilelang.lower(_ptx_mma_kernel("m16n8k8", "fp16"), target={"kind": "cuda", "arch": "sm_75"},
                         enable_device_compile=False)
    assert "tl_mma" in _kernel_body(str(art.kernel_source))
    with pytest.raises(LoweringError, match="sm_80 and newer"):
        tilelang.lower(_ptx_mma_kernel("m16n8k16", "fp16"), target={"kind": "cuda", "arch": "sm_75"},
                       enable_device_compile=False)


@needs_nvcc
def test_turing_mma_sync_shape_compiles_for_sm75():
    from tilelang_cuda.compiler import compile_artifact

    ptx = compile_artifact(tilelang.lower(_ptx_mma_kernel("m16n8k8", "fp16"),
                                          target={"kind": "cuda", "arch": "sm_75"})).ptx
    assert "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32" in ptx
