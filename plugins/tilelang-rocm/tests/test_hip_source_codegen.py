"""The HIP C++ source printer (``target.build.tilelang_hip_without_compile``).

Checked three ways: the printed structure (vector selects scalarised lane by lane), clang's HIP front end
(``-x hip -fsyntax-only`` against the shipped ``tl_templates/hip/common.h`` and a stand-in HIP runtime header),
and execution: the same source compiled as host C++ runs one thread on the CPU and is compared with numpy.
"""

from __future__ import annotations

import ctypes
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).parent
CLANG = shutil.which("clang++-22") or shutil.which("clang++")
needs_clang = pytest.mark.skipif(CLANG is None, reason="clang++ is not installed")


@pytest.fixture(scope="module")
def T():
    from tilelang import tvm

    return tvm.tirx


def _source(*funcs):
    """The HIP source of `funcs`, through the TVM global function (as the reference's tests call it)."""
    from tilelang import tvm

    build = tvm.get_global_func("target.build.tilelang_hip_without_compile")
    mod = tvm.IRModule({str(f.attrs["global_symbol"]): f for f in funcs})
    return build(mod, tvm.target.Target({"kind": "rocm", "mcpu": "gfx942"})).inspect_source()


def _kernel(T, name, params, body):
    return T.PrimFunc(params, body).with_attr("global_symbol", name)


def _bcast(T, value, dtype, lanes):
    return T.Broadcast(T.const(value, dtype), lanes)


def _select_kernel(T, lanes=4):
    mask = T.decl_buffer((lanes,), "float32", name="mask")
    src = T.decl_buffer((lanes,), "float32", name="src")
    out = T.decl_buffer((lanes,), "float32", name="out")
    ramp = T.Ramp(0, 1, lanes)
    value = T.Select(T.BufferLoad(mask, [ramp]) > _bcast(T, 0, "float32", lanes), T.BufferLoad(src, [ramp]),
                     _bcast(T, -1, "float32", lanes))
    return _kernel(T, "masked", [mask, src, out], T.BufferStore(out, value, [ramp]))


# ---------------------------------------------------------------------------------------------- registration
def test_global_function_and_ops_exist_once_tvm_is_imported_without_importing_the_plugin():
    code = (
        "import sys, tilelang\n"
        "assert 'tvm' not in sys.modules\n"
        "from tilelang import tvm\n"
        "assert 'tilelang_rocm' not in sys.modules, 'the plugin was imported eagerly'\n"
        "assert tvm.get_global_func('target.build.tilelang_hip_without_compile', allow_missing=True) is not None\n"
        "for op in ('tl.abs2', 'tl.add2'):\n"
        "    tvm.ir.Op.get(op)\n"
        "print('ok')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith("ok")


def test_fork_argument_order_of_tirx_call(T):
    from tvm import ir

    x = T.Var("x", "float32x2")
    call = T.Call("float32x2", ir.Op.get("tl.abs2"), [x])
    assert isinstance(call, T.Call) and isinstance(call, ir.Call)
    assert str(call.dtype) == "float32x2" and call.op.name == "tl.abs2"


# ---------------------------------------------------------------------------------------------- structure
def test_vector_select_is_one_ternary_per_lane(T):
    source = _source(_select_kernel(T))
    lines = [ln for ln in source.splitlines() if "?" in ln]
    assert lines == [f"  out[{i}] = ((mask[{i}] > 0.000000e+00f) ? src[{i}] : -1.000000e+00f);" for i in range(4)]
    assert "float4" not in source


def test_packed_ops_print_per_lane(T):
    from tvm import ir

    a = T.decl_buffer((2,), "bfloat16", name="a")
    b = T.decl_buffer((2,), "bfloat16", name="b")
    ramp = T.Ramp(0, 1, 2)
    load = T.BufferLoad(a, [ramp])
    absolute = ir.Call(ir.Op.get("tl.abs2"), [load], ret_ty="bfloat16x2")
    total = ir.Call(ir.Op.get("tl.add2"), [absolute, load], ret_ty="bfloat16x2")
    source = _source(_kernel(T, "packed", [a, b], T.BufferStore(b, total, [ramp])))
    assert "  b[1] = (__habs(a[1]) + a[1]);" in source
    assert "tl::add2" not in source and "tl.add2" not in source


def test_sub_byte_buffer_access_is_a_clear_error(T):
    from tvm import ir

    from tilelang.errors import LoweringError
    from tilelang_rocm.hip_codegen import hip_source

    a = T.decl_buffer((8,), "int4", name="a")
    func = _kernel(T, "nibbles", [a], T.BufferStore(a, T.const(1, "int4"), [0]))
    with pytest.raises(LoweringError, match="'nibbles': element access to the buffer a of sub-byte type int4"):
        hip_source(ir.IRModule({"nibbles": func}))
    with pytest.raises(Exception, match="sub-byte type int4"):  # through the TVM global function
        _source(func)


# ---------------------------------------------------------------------------------------------- clang -x hip
def _narrow_select(T, dtype, lanes):
    on_true, on_false = T.Var("on_true", f"{dtype}x{lanes}"), T.Var("on_false", f"{dtype}x{lanes}")
    cond = T.Ramp(0, 1, lanes) < T.Broadcast(T.const(lanes // 2, "int32"), lanes)
    return _kernel(T, f"select_{dtype}_{lanes}", [on_true, on_false], T.Evaluate(T.Select(cond, on_true, on_false)))


@needs_clang
@pytest.mark.parametrize(("dtype", "lanes"), [
    ("float32", 4), ("int32", 2), ("float16", 2), ("bfloat16", 4), ("int8", 4), ("int8", 8), ("uint8", 16),
    ("float8_e4m3fn", 2), ("float8_e5m2", 8), ("float8_e4m3fn", 16), ("float4_e2m1fn", 2), ("float4_e2m1fn", 32),
    ("int4", 8), ("uint4", 4), ("bool", 8), ("bool", 32),
])
def test_printed_vector_carriers_pass_clangs_hip_front_end(T, tmp_path, dtype, lanes):
    source = _source(_narrow_select(T, dtype, lanes), _select_kernel(T))
    path = tmp_path / "kernel.hip"
    path.write_text(source)
    proc = subprocess.run([CLANG, "-x", "hip", "--offload-arch=gfx942", "--cuda-device-only", "-nogpuinc",
                           "-nogpulib", "-fsyntax-only", "-Werror", "-I", str(HERE / "hip_check"),
                           "-I", str(_include_dir()), str(path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr + source


def _include_dir() -> Path:
    from tilelang_rocm.hip_codegen import INCLUDE_DIR

    return INCLUDE_DIR


# ---------------------------------------------------------------------------------------------- run on the host
def _run(tmp_path, func, *arrays):
    """Compile the printed kernel as host C++ and run it once on `arrays` (modified in place)."""
    source = _source(func)
    path = tmp_path / "kernel.cc"
    path.write_text(source)
    lib = tmp_path / "kernel.so"
    proc = subprocess.run([CLANG, "-x", "c++", "-std=c++17", "-O1", "-shared", "-fPIC", "-I",
                           str(HERE / "hip_check" / "host"), "-I", str(_include_dir()), str(path), "-o", str(lib)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr + source
    kernel = getattr(ctypes.CDLL(str(lib)), str(func.attrs["global_symbol"]))
    kernel.argtypes = [ctypes.c_void_p] * len(arrays)
    kernel(*[a.ctypes.data for a in arrays])
    return source


@needs_clang
def test_masked_select_runs(T, tmp_path):
    mask = np.array([1.0, -2.0, 0.0, 3.0], dtype=np.float32)
    src = np.array([10.0, 20.0, 30.0, 40.0], dtype=np.float32)
    out = np.zeros(4, dtype=np.float32)
    _run(tmp_path, _select_kernel(T), mask, src, out)
    np.testing.assert_array_equal(out, np.where(mask > 0, src, -1.0))


@needs_clang
@pytest.mark.parametrize(("src_dtype", "src_lanes", "dst_dtype", "dst_lanes"),
                         [("uint8", 8, "uint16", 4), ("uint16", 4, "uint8", 8), ("float32", 2, "uint16", 4)])
def test_lane_changing_reinterpret_runs(T, tmp_path, src_dtype, src_lanes, dst_dtype, dst_lanes):
    a = T.decl_buffer((src_lanes,), src_dtype, name="a")
    b = T.decl_buffer((dst_lanes,), dst_dtype, name="b")
    value = T.reinterpret(f"{dst_dtype}x{dst_lanes}", T.BufferLoad(a, [T.Ramp(0, 1, src_lanes)]))
    func = _kernel(T, "bits", [a, b], T.BufferStore(b, value, [T.Ramp(0, 1, dst_lanes)]))
    src = np.arange(1, src_lanes + 1).astype(src_dtype) * np.array(37, dtype=src_dtype)
    out = np.zeros(dst_lanes, dtype=dst_dtype)
    _run(tmp_path, func, src, out)
    np.testing.assert_array_equal(out, src.view(dst_dtype))


@needs_clang
def test_packed_add2_and_abs2_run(T, tmp_path):
    from tvm import ir

    a = T.decl_buffer((2,), "float32", name="a")
    b = T.decl_buffer((2,), "float32", name="b")
    ramp = T.Ramp(0, 1, 2)
    load = T.BufferLoad(a, [ramp])
    absolute = ir.Call(ir.Op.get("tl.abs2"), [load], ret_ty="float32x2")
    value = ir.Call(ir.Op.get("tl.add2"), [absolute, _bcast(T, 0.5, "float32", 2)], ret_ty="float32x2")
    src = np.array([-3.0, 2.0], dtype=np.float32)
    out = np.zeros(2, dtype=np.float32)
    _run(tmp_path, _kernel(T, "packed", [a, b], T.BufferStore(b, value, [ramp])), src, out)
    np.testing.assert_array_equal(out, np.abs(src) + 0.5)


def _through_carrier(T, name, dtype, lanes, src_dtype):
    """out[i] = src[i] passed through a let-bound ``dtype x lanes`` vector (written and read lane by lane)."""
    src = T.decl_buffer((lanes,), src_dtype, name="src")
    out = T.decl_buffer((lanes,), src_dtype, name="out")
    ramp = T.Ramp(0, 1, lanes)
    v = T.Var("v", f"{dtype}x{lanes}")
    load = T.BufferLoad(src, [ramp])
    packed = load if dtype == src_dtype else T.Cast(f"{dtype}x{lanes}", load)
    unpacked = v if dtype == src_dtype else T.Cast(f"{src_dtype}x{lanes}", v)
    body = T.SeqStmt([T.LetStmt(v, packed), T.BufferStore(out, unpacked, [ramp])])
    return _kernel(T, name, [src, out], body)


@needs_clang
@pytest.mark.parametrize(("dtype", "lanes", "src_dtype", "expected"), [
    ("int8", 8, "int8", lambda x: x),
    ("uint8", 16, "uint8", lambda x: x),
    ("int4", 8, "int8", lambda x: ((x.astype(np.int16) & 0xF) ^ 8) - 8),  # wraps into [-8, 7], sign-extended
    ("uint4", 4, "uint8", lambda x: x & 0xF),
])
def test_packed_integer_carriers_round_trip(T, tmp_path, dtype, lanes, src_dtype, expected):
    rng = np.random.default_rng(lanes)
    info = np.iinfo(src_dtype)
    src = rng.integers(info.min, info.max + 1, size=lanes).astype(src_dtype)
    out = np.zeros(lanes, dtype=src_dtype)
    source = _run(tmp_path, _through_carrier(T, "carry", dtype, lanes, src_dtype), src, out)
    np.testing.assert_array_equal(out, expected(src).astype(src_dtype))
    if dtype in ("int4", "uint4"):
        assert "((unsigned char*)(&(v)))" in source  # packed nibbles, not one byte per lane


@needs_clang
@pytest.mark.parametrize("lanes", [8, 16, 32])
def test_bool_vector_bits_select(T, tmp_path, lanes):
    mask = T.decl_buffer((lanes,), "float32", name="mask")
    a = T.decl_buffer((lanes,), "int32", name="a")
    out = T.decl_buffer((lanes,), "int32", name="out")
    ramp = T.Ramp(0, 1, lanes)
    flags = T.Var("flags", f"boolx{lanes}")
    body = T.SeqStmt([
        T.LetStmt(flags, T.BufferLoad(mask, [ramp]) > _bcast(T, 0, "float32", lanes)),
        T.BufferStore(out, T.Select(flags, T.BufferLoad(a, [ramp]), _bcast(T, -7, "int32", lanes)), [ramp]),
    ])
    rng = np.random.default_rng(lanes)
    m = rng.standard_normal(lanes).astype(np.float32)
    src = np.arange(lanes, dtype=np.int32)
    res = np.zeros(lanes, dtype=np.int32)
    source = _run(tmp_path, _kernel(T, "flags", [mask, a, out], body), m, src, res)
    np.testing.assert_array_equal(res, np.where(m > 0, src, -7))
    carrier = {8: "uint8_t", 16: "uint16_t", 32: "uint"}[lanes]
    assert f"  {carrier} flags{{}};" in source


# ---------------------------------------------------------------------------------------------- tilelang.lower
CLANG_C = shutil.which("clang-22") or shutil.which("clang")


@pytest.mark.skipif(CLANG_C is None, reason="clang is not installed")
def test_lower_without_device_compile_gives_hip_that_builds_for_gfx942(tmp_path):
    import tilelang
    import tilelang.language as T

    @T.prim_func
    def scale(A: T.Tensor((256, 256), "float16"), C: T.Tensor((256, 256), "float16")):
        with T.Kernel(4, 4, threads=128) as (bx, by):
            S = T.alloc_shared((64, 64), "float16")
            F = T.alloc_fragment((64, 64), "float16")
            T.copy(A[by * 64, bx * 64], S)
            T.copy(S, F)
            for i, j in T.Parallel(64, 64):
                F[i, j] = F[i, j] * 2
            T.copy(F, C[by * 64, bx * 64])

    art = tilelang.lower(scale, target={"kind": "rocm", "mcpu": "gfx942"}, enable_device_compile=False)
    source = art.kernel_source
    assert 'extern "C" __global__ void __launch_bounds__(128) scale_kernel(' in source
    assert "__shared__ half S[4096];" in source and "__syncthreads();" in source
    path = tmp_path / "scale.hip"
    path.write_text(source)
    asm = tmp_path / "scale.s"
    proc = subprocess.run([CLANG_C, "-x", "hip", "--offload-arch=gfx942", "--cuda-device-only", "-nogpuinc",
                           "-nogpulib", "-O3", "-S", "-o", str(asm), "-I", str(HERE / "hip_check"),
                           "-I", str(_include_dir()), str(path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr + source
    isa = asm.read_text()
    for instruction in ("s_barrier", "ds_write_b16", "ds_read_u16", "global_load_ushort", "global_store_short"):
        assert instruction in isa, instruction


def test_lower_without_device_compile_names_what_hip_source_lacks():
    from tilelang import tvm
    from tilelang.errors import LoweringError
    from tilelang_rocm.codegen import ROCM_CODEGEN

    T = tvm.tirx
    a = T.decl_buffer((4,), "float32", name="a")
    body = T.Evaluate(tvm.ir.Call(tvm.ir.Op.get("tirx.call_llvm_pure_intrin"), [T.const(1, "uint32"),
                                                                                 T.const(0, "uint32")],
                                  ret_ty="float32"))
    mod = tvm.IRModule({"k": T.PrimFunc([a], body).with_attr("global_symbol", "k")})
    with pytest.raises(LoweringError, match="call_llvm_pure_intrin.*enable_device_compile=True"):
        ROCM_CODEGEN.lower(mod, {"kind": "rocm"}, compile_device=False)
