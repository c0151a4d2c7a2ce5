"""float16 kernels without ``shader-f16``: f16 memory packed into u32 words, f32 arithmetic (`packed_f16`).

The rewrite is checked on WGSL text; kernels run with the emulation forced on the default adapter (compared with
torch and with the native f16 path where the adapter has it) and, in a subprocess, on the OpenGL adapter, which
has no ``shader-f16``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
import torch

import tilelang
import tilelang.language as T
from tilelang.jit import JITKernel
from tilelang.testing import corpus
from tilelang_webgpu.packed_f16 import F16EmulationError, for_device, legalize_f16, uses_f16

SHADER = """enable f16;

@group(0) @binding(0) var<storage, read> A_ptr : array<vec4<f16>>;
@group(0) @binding(1) var<storage, read_write> B_ptr : array<f16>;
@group(0) @binding(2) var<storage, read_write> C_ptr : array<vec4<f16>>;

struct PODArgs {
  packGridDimX: u32
}
@group(0) @binding(3) var<uniform> podArgs : PODArgs;

var<workgroup> S : array<f16, 256>;
var<workgroup> V : array<vec4<f16>, 64>;
@compute @workgroup_size(64, 1, 1)
fn k_kernel(@builtin(local_invocation_id) threadIdx : vec3<u32>) {
  var r : f16;
  let t : i32 = i32(threadIdx.x);
  S[t * 4i + 0] = A_ptr[t][0];
  S[t * 4i + 1] = A_ptr[t][1];
  S[t * 4i + 2] = A_ptr[t][2];
  S[t * 4i + 3] = A_ptr[t][3];
  V[t] = A_ptr[t];
  workgroupBarrier();
  r = max(S[t] * 2.500000e+00h, 0.000000e+00h);
  B_ptr[t] = r;
  C_ptr[t] = vec4<f16>(S[t + 0], S[t + 1], S[t + 2], S[t + 3]) + V[t];
}
"""


def test_rewrite_packs_memory_and_widens_registers():
    out = legalize_f16(SHADER)
    assert not uses_f16(out) and "enable f16" not in out
    decls = dict(re.findall(r"var<[^>]*>\s*(\w+)\s*:\s*([^;]+);", out))
    assert decls["A_ptr"] == "array<vec2<u32>>"  # read only: plain words, two per vec4<f16>
    assert decls["B_ptr"] == "array<atomic<u32>>"  # scalar half stores: atomic words
    assert decls["C_ptr"] == "array<vec2<u32>>"  # whole vec4 stores: plain words
    assert decls["S"] == "array<atomic<u32>, 128>" and decls["V"] == "array<vec2<u32>, 64>"
    assert "var r : f32;" in out and "2.500000e+00f" in out
    assert "V[t] = A_ptr[t];" in out  # a packed tile copy moves its words unconverted
    assert "tl_st4h_S(u32(t * 4i), vec4<f32>(" in out  # four lane stores: two whole words when aligned
    assert "tl_ld4h_S(u32(t))" in out
    assert "C_ptr[t] = tl_pack4(" in out and "tl_sth_B_ptr(u32(t), f32(r));" in out


def test_for_device_leaves_native_and_f16_free_shaders_alone():
    assert for_device(SHADER, has_shader_f16=True) == SHADER
    plain = SHADER.replace("enable f16;\n", "").replace("f16", "f32").replace("h,", ",").replace("h)", ")")
    assert for_device(plain, has_shader_f16=False) == plain


@pytest.mark.parametrize(("source", "pattern"), [
    ("var<workgroup> S : array<f16, 8>;\nfn f() { let p = &S[0]; }", "address of float16 array 'S'"),
    ("var<workgroup> S : array<f16, 8>;\nfn f() {\n  S[0] += 1.0h;\n}", "compound assignment"),
    ("var<private> P : array<f16, 8>;\nfn f() { let x = bitcast<f16>(1u); }", "bitcast"),
    ("struct H { a : f16 }\nvar<workgroup> S : H;\nfn f() {}", "struct H has float16 fields"),
    ("var<workgroup> S : array<array<f16, 4>, 8>;\nfn f() {}", "cannot be packed"),
])
def test_unsupported_uses_are_named(source, pattern):
    with pytest.raises(F16EmulationError, match=pattern):
        legalize_f16("enable f16;\n" + source)


@pytest.fixture
def emulated(monkeypatch):
    """Launch as on an adapter without shader-f16 (the launcher asks `has_feature`)."""
    import tilelang_webgpu.launch as launch

    real = launch.has_feature
    monkeypatch.setattr(launch, "has_feature", lambda name: name != "shader-f16" and real(name))


def _odd_scale(n: int = 255, block: int = 64):
    """``B = A * 1.5 + 1`` over an odd number of halves, one element per thread: half-word stores."""

    @T.prim_func
    def odd_scale(A: T.Tensor((n,), "float16"), B: T.Tensor((n,), "float16")):
        with T.Kernel(T.ceildiv(n, block), threads=block) as bx:
            for i in T.Parallel(block):
                if bx * block + i < n:
                    B[bx * block + i] = A[bx * block + i] * T.float16(1.5) + T.float16(1)

    return odd_scale


CASES = {
    "odd_scale": lambda: (_odd_scale(), lambda a: a * 1.5 + 1, [(255,)]),
    "gemm": lambda: _corpus(corpus.gemm(M=128, N=128, K=64)),
    "gemm_tn": lambda: _corpus(corpus.gemm(M=128, N=128, K=64, trans_A=True)),
    "gemm_fragment_a": lambda: _corpus(corpus.gemm_fragment_a()),
    "gemv": lambda: _corpus(corpus.gemv()),
    "flash_attention": lambda: _corpus(corpus.flash_attention()),
}


def _corpus(case):
    return case.func, case.ref, [a.shape for a in case.inputs]


@pytest.mark.parametrize("name", sorted(CASES))
def test_emulated_f16_matches_torch(wgpu_backend, emulated, name):
    func, ref, shapes = CASES[name]()
    torch.manual_seed(0)
    inputs = [torch.randn(s).half() for s in shapes]
    kernel = tilelang.compile(func, out_idx=-1, target="webgpu")
    out = kernel(*inputs)
    torch.testing.assert_close(out.float(), ref(*inputs).float(), atol=2e-2, rtol=2e-2)
    assert "enable f16" in kernel.get_kernel_source()  # the artifact keeps the native WGSL ...
    (shader,) = kernel._launcher.shaders  # ... the launcher ran it packed
    assert not uses_f16(shader) and "pack2x16float" in shader


def test_emulated_and_native_agree_within_f16_rounding(wgpu_backend, monkeypatch):
    """One kernel, both paths on this adapter (which must offer shader-f16 for the native one)."""
    import tilelang_webgpu.launch as launch
    from tilelang_webgpu.adapter import features

    if "shader-f16" not in features():
        pytest.skip("this adapter has no native f16 path to compare with")
    case = corpus.flash_attention()
    inputs = case.make_inputs()
    native_kernel = tilelang.compile(case.func, out_idx=case.out_idx, target="webgpu")
    native = native_kernel(*inputs)
    real = launch.has_feature
    monkeypatch.setattr(launch, "has_feature", lambda name: name != "shader-f16" and real(name))
    packed_kernel = JITKernel(native_kernel.artifact, case.out_idx)  # a fresh launcher for the same artifact
    assert "pack2x16float" in packed_kernel._launcher.shaders[0]
    assert "pack2x16float" not in native_kernel._launcher.shaders[0]
    packed = packed_kernel(*inputs)
    ulp = torch.finfo(torch.float16).eps * native.float().abs().clamp(min=1.0)
    assert bool(((packed.float() - native.float()).abs() <= 2 * ulp).all())


_GL_SCRIPT = """
import json, torch, tilelang
from tilelang.testing import corpus
from tilelang_webgpu.adapter import adapter_summary, features
results = {"adapter": adapter_summary(), "f16": "shader-f16" in features()}
for name in ("flash_attention", "gemm_nn", "gemm_tn", "gemv", "quickstart_eager"):
    case = corpus.CORPUS[name]()
    inputs = case.make_inputs()
    if case.eager:
        out = tilelang.jit(target="webgpu")(case.func)(*inputs)
    else:
        out = tilelang.compile(case.func, out_idx=case.out_idx, target="webgpu")(*inputs)
    err = (out.float() - case.ref(*inputs).float()).abs().max().item()
    results[name] = err <= case.atol + case.rtol * case.ref(*inputs).float().abs().max().item()
print(json.dumps(results))
"""


def test_f16_corpus_runs_on_the_gl_adapter(wgpu_backend):
    """The OpenGL adapter (llvmpipe through GL) has no shader-f16: fp16 flash attention and GEMMs run packed."""
    env = {**os.environ, "TILELANG_WGPU_BACKEND": "gl"}
    done = subprocess.run([sys.executable, "-c", _GL_SCRIPT], env=env, capture_output=True, text=True, timeout=900)
    if "wgpu found no adapter" in done.stderr or "asked for OpenGL" in done.stderr:
        pytest.skip("no OpenGL wgpu adapter here")
    assert done.returncode == 0, done.stderr[-3000:]
    import json

    results = json.loads(done.stdout.strip().splitlines()[-1])
    assert "OpenGL" in results.pop("adapter") and results.pop("f16") is False
    assert results == dict.fromkeys(results, True) and len(results) == 5
