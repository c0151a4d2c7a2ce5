"""Volta (sm_70): ``T.gemm`` there never holds an instruction sm_70 lacks (it runs on CUDA cores), and the
m8n8k4 names this backend does not lower (`GemmMMASm70`, its emitter, `make_volta_swizzled_layout`) raise a
LoweringError naming the construct, the arch and the lowest archs that have tensor-core code here.

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
from cuda_helpers import needs_nvcc

import tilelang
import tilelang.language as T
from tilelang.errors import LoweringError

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


def _gemm(dtype: str, accum: str, trans_a: bool, trans_b: bool, a_in_registers: bool):
    a_shape = (32, 64) if trans_a else (64, 32)
    b_shape = (64, 32) if trans_b else (32, 64)

    @T.prim_func
    def gemm(a: T.Tensor(a_shape, dtype), b: T.Tensor(b_shape, dtype), c: T.Tensor((64, 64), accum)):
        with T.Kernel(1, threads=128):
            a_s = T.alloc_shared(a_shape, dtype)
            b_s = T.alloc_shared(b_shape, dtype)
            c_f = T.alloc_fragment((64, 64), accum)
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


def _kernel_body(source: str) -> str:
    return source[source.index("__global__"):]


@pytest.mark.parametrize("dtype,accum,trans_a,trans_b,a_in_registers", GEMMS)
@pytest.mark.parametrize("arch", ["sm_70", "sm_72"])
def test_gemm_on_volta_holds_no_tensor_core_instruction(dtype, accum, trans_a, trans_b, a_in_registers, arch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        art = tilelang.lower(_gemm(dtype, accum, trans_a, trans_b, a_in_registers),
                             target={"kind": "cuda", "arch": arch}, enable_device_compile=False)
    body = _kernel_body(str(art.kernel_source))
    assert not TENSOR_CORE.search(body), TENSOR_CORE.search(body).group(0)


@pytest.mark.skipif(_sm70_toolchain() is None, reason="no sm_70-capable CUDA 12 toolchain (TILELANG_SM70_NVIDIA)")
@pytest.mark.parametrize("dtype,accum,trans_a,trans_b,a_in_registers", GEMMS[:4])
def test_gemm_on_sm70_compiles_to_an_sm70_cubin(dtype, accum, trans_a, trans_b, a_in_registers):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        art = tilelang.lower(_gemm(dtype, accum, trans_a, trans_b, a_in_registers),
                             target={"kind": "cuda", "arch": "sm_70"}, enable_device_compile=False)
    ptx, cubin = _sm70_ptx_and_cubin(str(art.kernel_source), _sm70_toolchain())
    assert cubin[:4] == b"\x7fELF"
    assert not re.search(r"^\s*(mma|wgmma|ldmatrix)\.", ptx, re.M)
    assert re.search(r"^\s*(fma|mad|mul)\.", ptx, re.M)  # the CUDA-core GEMM


def _refusal(text: str, construct: str) -> None:
    assert construct in text, text
    assert "sm_70" in text and "sm_75 (m16n8k8)" in text and "sm_80 (m16n8k16" in text, text


def test_sm70_emitter_refuses_with_the_lowest_arch():
    from tilelang_cuda.intrinsics.macro.mma_sm70_macro_generator import TensorCoreIntrinEmitter

    emitter = TensorCoreIntrinEmitter(a_dtype="float16", b_dtype="float16", accum_dtype="float32",
                                      warp_row_tiles=32, warp_col_tiles=32, chunk=32)
    assert (emitter.M_DIM, emitter.n_dim, emitter.k_dim) == (16, 16, 4)  # the tiling it describes
    for method in (emitter.ldmatrix_a, emitter.ldmatrix_b, emitter.mma, emitter.stmatrix):
        with pytest.raises(LoweringError) as info:
            method()
        _refusal(str(info.value), "TensorCoreIntrinEmitter")


def test_gemm_mma_sm70_lower_refuses_with_the_lowest_arch():
    from tilelang_cuda.op.gemm import GemmMMASm70

    class Ctx:
        func = _gemm("float16", "float32", False, False, False)
        target = {"kind": "cuda", "arch": "sm_70"}

    assert GemmMMASm70.matches({"kind": "cuda", "arch": "sm_70"})
    with pytest.raises(LoweringError) as info:
        GemmMMASm70().lower(Ctx())
    _refusal(str(info.value), "T.gemm through GemmMMASm70")


def test_make_volta_swizzled_layout_refuses_with_the_lowest_arch():
    from tilelang.layout import make_volta_swizzled_layout

    @T.prim_func
    def holder(a: T.Tensor((64, 32), "float16")):
        with T.Kernel(1, threads=32):
            a_s = T.alloc_shared((64, 32), "float16")
            T.copy(a, a_s)

    buf = holder.buffer_map[holder.params[0]]
    with pytest.raises(LoweringError) as info:
        make_volta_swizzled_layout(buf)
    text = str(info.value)
    assert "make_volta_swizzled_layout" in text and "sm_75 (m16n8k8)" in text and "make_swizzled_layout" in text


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
