"""Every corpus program lowers for sm_80 and sm_90a and nvcc compiles it to a cubin whose PTX holds the
instructions we meant: mma.sync + ldmatrix (sm_80), wgmma (sm_90a), cp.async (TMA bulk copies where they
apply on sm_90a), shfl.sync."""

from __future__ import annotations

import pytest
from cuda_helpers import ARCHS, compiled, lowered, needs_nvcc

from tilelang.testing import corpus

TENSOR_CORE = {"gemm_nn", "gemm_nt", "gemm_tn", "gemm_relu", "gemm_fragment_a", "quickstart_lazy",
               "quickstart_eager", "flash_attention"}
CP_ASYNC = TENSOR_CORE | {"elementwise_add", "cumsum"}
SHUFFLE = {"row_sum", "row_max", "softmax", "atomic_colsum", "flash_attention"}
NAMES = sorted(corpus.CORPUS)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("name", NAMES)
def test_corpus_lowers_to_cuda_c(name, arch):
    artifact = lowered(name, arch)
    assert 'extern "C" __global__' in artifact.kernel_source
    assert "TILELANG_CUDA_INTRINSICS" in artifact.kernel_source
    if name in TENSOR_CORE:
        # sm_90a: RS wgmma (tl_wgmma_m64n..) or, for 16-bit shared operands, SS wgmma (tl_wgmma_ss_m64n..)
        assert ("tl_wgmma_" if arch == "sm_90a" else "tl_mma_") in artifact.kernel_source
        assert arch != "sm_90a" or "m64n" in artifact.kernel_source


@needs_nvcc
@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("name", NAMES)
def test_corpus_compiles_to_cubin(name, arch):
    artifact, binary = compiled(name, arch)
    assert binary.cubin[:4] == b"\x7fELF"
    assert artifact.files["kernel.cubin"] == binary.cubin
    assert artifact.metadata["registers"] > 0
    ptx = binary.ptx
    assert f".target {arch}" in ptx
    if name in TENSOR_CORE:
        # SS wgmma reads both operands through descriptors: no ldmatrix
        assert "ldmatrix.sync.aligned" in ptx or (arch == "sm_90a" and "tl_wgmma_ss_" in artifact.kernel_source)
        assert ("wgmma.mma_async" if arch == "sm_90a" else "mma.sync.aligned") in ptx
    if name in CP_ASYNC and ("tl_tma_load_2d(tl_tmap_" in artifact.kernel_source
                             or "tl_tma_copy_load_2d(" in artifact.kernel_source):  # sm_90a: TMA where it can
        assert arch == "sm_90a"  # tl.copy's TMA (opt-in) or a warp-specialised producer's (the default)
        assert "cp.async.bulk.tensor.2d" in ptx and "mbarrier.try_wait.parity" in ptx
    elif name in CP_ASYNC:
        assert "cp.async.cg.shared.global" in ptx and "cp.async.wait_group" in ptx
    if name in SHUFFLE:
        assert "shfl.sync.bfly" in ptx
