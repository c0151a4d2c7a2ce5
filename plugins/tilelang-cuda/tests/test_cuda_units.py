"""Unit checks of the CUDA plugin's pieces that need neither nvcc nor a GPU."""

from __future__ import annotations

import pytest

from tilelang_cuda.compiler import parse_ptxas, sass_of
from tilelang_cuda.execution_backend import device_signature
from tilelang_cuda.intrinsics import header_for, with_header
from tilelang_cuda.mma_layout import WGMMA, AccumulatorLayout, choose


@pytest.mark.parametrize("layout", [AccumulatorLayout(64, 64, 2, 2), AccumulatorLayout(128, 128, 2, 2),
                                    AccumulatorLayout(64, 128, 4, 1), AccumulatorLayout(128, 64, 4, 1, WGMMA),
                                    AccumulatorLayout(128, 256, 8, 1, WGMMA)])
def test_accumulator_layout_covers_the_tile_once(layout):
    seen = {}
    for tid in range(32 * layout.wm * layout.wn):
        for r in range(layout.regs):
            seen.setdefault(layout.position(tid, r), []).append((tid, r))
    assert len(seen) == layout.m * layout.n and all(len(v) == 1 for v in seen.values())
    assert {p[0] for p in seen} == set(range(layout.m)) and {p[1] for p in seen} == set(range(layout.n))


def test_wgmma_layout_gives_each_warpgroup_contiguous_64_rows():
    layout = AccumulatorLayout(128, 64, 8, 1, WGMMA)
    for group in range(2):
        rows = {layout.position(tid, r)[0] for tid in range(group * 128, group * 128 + 128)
                for r in range(layout.regs)}
        assert rows == {mi * 128 + group * 64 + x for mi in range(layout.mi) for x in range(64)}


def test_warp_grid_choice_follows_the_policy():
    assert (choose(64, 64, 4, 0).wm, choose(64, 64, 4, 0).wn) == (2, 2)
    assert choose(64, 64, 4, 1).wm == 4 and choose(64, 64, 4, 2).wn == 4
    assert choose(64, 64, 4, 0, wgmma=True).instr == WGMMA
    assert choose(16, 8, 4, 0) is None


def test_ptxas_report_is_parsed():
    log = ("ptxas info    : Used 64 registers, used 1 barriers, 384 bytes smem, 368 bytes cmem[0]\n"
           "ptxas info    : 16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads\n")
    assert parse_ptxas(log) == {"registers": 64, "static_shared_bytes": 384, "spill_stores": 8, "spill_loads": 4,
                                "stack_bytes": 16}


def test_header_is_added_once_with_the_wgmma_shapes_used():
    src = 'extern "C" __global__ void k() { tl_wgmma_m64n128k16_f16(0, 0, 0); }'
    out = with_header(src)
    assert with_header(out) == out
    assert "m64n128k16.f32.f16.f16" in out and "m64n64k16" not in out
    assert '#include "tilelang_cuda/common.cuh"' in header_for("")  # tl_smem_addr, which every helper takes
    assert '#include "tilelang_cuda/mma.cuh"' not in header_for("")
    assert '#include "tilelang_cuda/mma.cuh"' in header_for("tl_mma_f16_f32(c, a, b);")


def test_device_signature_names_pointers_and_scalars():
    src = 'extern "C" __global__ void __launch_bounds__(128) k_kernel(float* __restrict__ A_ptr, int m) {\n}'
    assert device_signature(src, "k") == [("k_kernel", ""), ("A_ptr", "float*"), ("m", "int")]


def test_sass_without_tools_names_the_pypi_package(monkeypatch):
    import tilelang_cuda.compiler as comp

    monkeypatch.setattr(comp.shutil, "which", lambda name: None)
    monkeypatch.setattr(comp, "_wheel_tool", lambda name: None)
    with pytest.raises(Exception, match="nvidia-cuda-cuobjdump"):
        sass_of(b"\x7fELF")


def test_legalize_vector_width_splits_wide_loops():
    import tvm
    from tvm import tirx

    from tilelang_cuda.passes.legalize_vector_width import LegalizeVectorWidth

    buf = tirx.decl_buffer((64,), "float32", name="A")
    i = tirx.Var("i", "int32")
    loop = tirx.For(i, 0, 64, tirx.ForKind.VECTORIZED, tirx.BufferStore(buf, tirx.const(1.0, "float32"), [i]))
    func = tirx.PrimFunc([buf], loop)
    out = LegalizeVectorWidth()(tvm.IRModule({"f": func}))["f"]
    assert out.body.kind == tirx.ForKind.SERIAL and int(out.body.extent) == 16
    assert out.body.body.kind == tirx.ForKind.VECTORIZED and int(out.body.body.extent) == 4
