"""``T.CUDASourceCodeKernel``: a hand-written CUDA kernel launched from a TileLang program.

Without a GPU: the generated source carries the user's kernel under the generated kernel's name, nvcc compiles
it to a cubin whose PTX is that kernel, the launch arguments are the tensors' data pointers then their symbolic
sizes, and each misuse is reported. The launch itself runs where a GPU is (``gpu`` marker).
"""

from __future__ import annotations

import re
import warnings

import pytest
import torch
from cuda_helpers import needs_nvcc

import tilelang
import tilelang.language as T
from tilelang.errors import LoweringError
from tilelang_cuda.source_kernels import apply, global_kernels

SM80 = {"kind": "cuda", "arch": "sm_80"}
SOURCE = """
__device__ __forceinline__ float twice(float x) { return 2.0f * x; }

extern "C" __global__ void external_scale(float* A, float* B, int n) {
    int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n) {
        B[i] = twice(A[i]);
    }
}
"""


def source_kernel(source, entry_name="external_scale", **kw):
    N = T.dynamic("N")

    @T.prim_func
    def main(A: T.Tensor((N,), T.float32), B: T.Tensor((N,), T.float32)):
        T.CUDASourceCodeKernel(T.ceildiv(N, 128), threads=128, source_code_or_path=source, entry_name=entry_name,
                               **kw)

    return main


def lower(func, target=SM80):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tilelang.lower(func, target=target)


def device_name(artifact) -> str:
    (gv,) = list(artifact.device_mod.functions)
    return gv.name_hint


def test_the_generated_source_is_the_users_kernel_under_the_launched_name():
    art = lower(source_kernel(SOURCE))
    name = device_name(art)
    assert re.search(rf'extern "C" __global__ void {name}\(float\* A, float\* B, int n\)', art.kernel_source)
    assert "B[i] = twice(A[i]);" in art.kernel_source
    assert "tl_source_kernel_marker" not in art.kernel_source
    assert "external_scale" not in art.kernel_source  # renamed: the host launches the generated name
    # the launch passes the tensors' data pointers, then their symbolic sizes
    params = [p.name for p in art.device_mod[name].params]
    assert len(params) == 3 and params[-1] == "N"


@needs_nvcc
def test_nvcc_compiles_it_to_a_cubin_whose_ptx_is_the_users_kernel():
    from tilelang_cuda.compiler import compile_artifact

    art = lower(source_kernel(SOURCE))
    binary = compile_artifact(art)
    assert binary.cubin[:4] == b"\x7fELF"
    entry = re.search(r"\.visible \.entry (\w+)\(", binary.ptx)
    assert entry is not None and entry.group(1) == device_name(art)
    assert "mul.f32" in binary.ptx or "add.f32" in binary.ptx  # 2.0f * x (or x + x)
    assert "ld.global" in binary.ptx and "st.global" in binary.ptx


def test_source_from_a_file_and_a_prelude(tmp_path):
    path = tmp_path / "scale.cu"
    path.write_text(SOURCE.replace("2.0f * x", "SCALE * x"))
    for given in (path, str(path)):
        art = lower(source_kernel(given, prelude="#define SCALE 2.0f"))
        assert "#define SCALE 2.0f" in art.kernel_source and "SCALE * x" in art.kernel_source


def test_an_entry_the_source_does_not_declare_is_reported_when_lowering():
    func = source_kernel(SOURCE, entry_name="main_kernel")  # building the program does not compile the source
    expected = r"test_source_kernel.py:\d+.*'main_kernel'.*Available entries: external_scale"
    with pytest.raises(LoweringError, match=expected):
        lower(func)


def test_a_missing_source_file_is_reported():
    with pytest.raises(FileNotFoundError, match="not found: .*nowhere.cu"):
        source_kernel("/nowhere/nowhere.cu")
    with pytest.raises(tilelang.errors.KernelTypeError, match="entry_name"):
        source_kernel(SOURCE, entry_name="")


def test_cluster_dims_reach_the_kernel_declaration():
    art = lower(source_kernel(SOURCE, cluster_dims=2), target={"kind": "cuda", "arch": "sm_90a"})
    name = device_name(art)
    assert re.search(rf"__global__ void __cluster_dims__\(2, 1, 1\) {name}\(float\* A", art.kernel_source)


def test_other_backends_refuse_it_by_name():
    pytest.importorskip("tilelang_cpu", reason="needs another backend (tilelang-cpu) to refuse it")
    with pytest.raises(LoweringError, match="source_kernel"):
        lower(source_kernel(SOURCE), target="llvm")


def test_global_kernels_and_apply_units():
    assert global_kernels(SOURCE + '\n__global__ void __launch_bounds__(64) other(int* x) {}') == [
        "external_scale", "other"]
    assert apply("no marker here") == "no marker here"


@pytest.mark.gpu
def test_the_launch_runs_the_users_kernel():
    kernel = tilelang.compile(source_kernel(SOURCE), target="cuda")
    a = torch.randn(1000, device="cuda")
    b = torch.empty_like(a)
    kernel(a, b)
    torch.testing.assert_close(b, 2 * a)
