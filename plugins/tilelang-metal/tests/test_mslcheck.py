"""The MSL check rejects broken MSL: syntax, names, types, address spaces, attributes, Metal built-ins."""

from __future__ import annotations

import re

import pytest

from tilelang_metal.mslcheck import check_msl, strip_attributes

HEAD = "#include <metal_stdlib>\nusing namespace metal;\n"
GID = "uint gid [[thread_position_in_grid]]"

GOOD = HEAD + f"""
kernel void ok(device const half* a [[buffer(0)]], device float* c [[buffer(1)]], constant uint& n [[buffer(2)]],
               uint lane [[thread_index_in_simdgroup]], {GID}) {{
  threadgroup half tile[64];
  tile[lane] = a[gid];
  threadgroup_barrier(mem_flags::mem_threadgroup);
  simdgroup_half8x8 x;
  simdgroup_float8x8 acc = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
  simdgroup_load(x, tile, 8, 0, true);
  simdgroup_multiply_accumulate(acc, x, x, acc);
  simdgroup_store(acc, c, 8);
  float s = simd_sum(float(a[gid]));
  float4 v = float4(float2(s, 1.0f), 2.0f, 3.0f);
  atomic_fetch_add_explicit((device atomic_float*)c, v.x + as_type<float>(n), memory_order_relaxed);
}}
"""

BROKEN = {
    "syntax": (f"kernel void f(device float* a [[buffer(0)]], {GID}) {{ a[gid] = 1.0f }}", "expected ';'"),
    "undeclared": (f"kernel void f(device float* a [[buffer(0)]], {GID}) {{ a[gid] = b[gid]; }}", "undeclared"),
    "no_address_space": (f"kernel void f(float* a [[buffer(0)]], {GID}) {{ a[gid] = 1.0f; }}", "address space"),
    "threadgroup_to_device": (f"kernel void f(device float* a [[buffer(0)]], {GID}) {{ threadgroup float s[4]; "
                              "device float* p = s; p[0] = a[gid]; }", r"__global float.*__local float"),
    "write_constant": (f"kernel void f(constant float* a [[buffer(0)]], {GID}) {{ a[gid] = 1.0f; }}", "const"),
    "type_mismatch": (f"kernel void f(device float4* a [[buffer(0)]], device float2* b [[buffer(1)]], {GID}) "
                      "{ a[gid] = b[gid]; }", "incompatible|assigning"),
    "vector_arity": (f"kernel void f(device float4* a [[buffer(0)]], {GID}) {{ a[gid] = float4(1.0f, 2.0f); }}",
                     "component count"),
    "nested_threadgroup": (f"kernel void f(device float* a [[buffer(0)]], {GID}) {{ if (gid == 0) {{ "
                           "threadgroup float s[4]; s[0] = a[0]; } }", "outermost scope"),
    "attribute_typo": ("kernel void f(device float* a [[buffer(0)]], uint gid [[thread_position_in_grd]]) "
                       "{ a[gid] = 1.0f; }", "unknown Metal attribute"),
    "barrier_without_flags": (f"kernel void f(device float* a [[buffer(0)]], {GID}) {{ threadgroup_barrier(); }}",
                              "threadgroup_barrier"),
    "simdgroup_from_thread_memory": (f"kernel void f(device float* a [[buffer(0)]], {GID}) {{ float t[64]; "
                                     "simdgroup_float8x8 m; simdgroup_load(m, t, 8); }", "simdgroup_load"),
    "simdgroup_element_type": (f"kernel void f(device half* a [[buffer(0)]], {GID}) {{ simdgroup_float8x8 m; "
                               "simdgroup_load(m, a, 8); }", "simdgroup_load"),
}


def test_valid_msl_passes(clang22):
    result = check_msl(GOOD, clang=clang22)
    assert result.ok, result.diagnostics


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_broken_msl_is_rejected(case, clang22):
    body, expected = BROKEN[case]
    result = check_msl(HEAD + body + "\n", name=f"{case}.metal", clang=clang22)
    assert not result.ok
    assert re.search(expected, result.diagnostics), result.diagnostics
    assert f"{case}.metal:" in result.diagnostics


def test_generated_kernel_with_a_broken_address_space_is_rejected(clang22):
    """A real corpus GEMM whose threadgroup tile is made per-thread: simdgroup_load must refuse it."""
    import tilelang
    from tilelang.testing.corpus import CORPUS

    msl = tilelang.lower(CORPUS["gemm_nn"]().prim_func(), target="metal").kernel_source
    assert check_msl(msl, clang=clang22).ok
    # the tile is a typed alias into the kernel's threadgroup array: make it a per-thread pointer
    broken = msl.replace("threadgroup half* A_shared = (threadgroup half*)((threadgroup half*)",
                         "thread half* A_shared = (thread half*)((thread half*)")
    assert broken != msl
    result = check_msl(broken, clang=clang22)
    assert not result.ok and "address space" in result.diagnostics


def test_attributes_are_blanked_keeping_columns():
    text, errors = strip_attributes("device float* a [[buffer(0)]], uint g [[bogus]]")
    assert "[[" not in text and len(text) == len("device float* a [[buffer(0)]], uint g [[bogus]]")
    assert errors == ["kernel.metal:1: error: unknown Metal attribute [[bogus]]"]


def test_missing_clang_is_a_clear_error(monkeypatch):
    monkeypatch.setattr("tilelang_metal.mslcheck.find_clang", lambda: None)
    with pytest.raises(FileNotFoundError, match="apt-get install clang-22"):
        check_msl(GOOD)
