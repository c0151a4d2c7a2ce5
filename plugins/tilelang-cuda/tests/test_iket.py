"""IKET: event metadata, the session's callback and cache handling, and instrumented CUDA that nvcc compiles."""

from __future__ import annotations

import re
import shutil
import warnings

import pytest
import tvm_ffi
from iket_kernels import marked_add

import tilelang
from tilelang.env import CacheState
from tilelang_cuda.tools import iket
from tilelang_cuda.tools.iket.codegen import inject_iket_cuda
from tilelang_cuda.tools.iket.metadata import Event, decode_event, encode_event

CALLBACK = "tilelang_callback_cuda_postproc"


@pytest.fixture(autouse=True)
def _clean():
    while iket.is_enabled():
        iket.disable(restore=False)
    previous = tvm_ffi.get_global_func(CALLBACK, allow_missing=True)
    if previous is not None:
        tvm_ffi.remove_global_func(CALLBACK)
    iket.reset()
    yield
    while iket.is_enabled():
        iket.disable(restore=False)
    iket.reset()
    iket.disable_runtime_payloads()
    if tvm_ffi.get_global_func(CALLBACK, allow_missing=True) is not None:
        tvm_ffi.remove_global_func(CALLBACK)
    if previous is not None:
        tvm_ffi.register_global_func(CALLBACK, f=previous, override=True)


def test_tokens_and_registry():
    event = Event("load", 3, "range", range_id=7, payload_type="float32", payload_iket_id=13)
    assert decode_event(encode_event(event)) == event
    with pytest.raises(ValueError, match="prefix"):
        decode_event("not_a_token")
    iket.mark("a")
    iket.range_push("r")
    iket.range_pop("r")
    iket.mark("a")  # the same event again
    assert [(e["name"], e["event_id"], e["kind"]) for e in iket.event_table()] == [("a", 1, "mark"), ("r", 2, "range")]
    with pytest.raises(ValueError, match="at most 32 UTF-8 bytes"):
        iket.mark("\u754c" * 11)
    with pytest.raises(ValueError, match="first registered with payload type 'NoPayload'"):
        iket.mark("a", payload=iket.payload(1, dtype="int32"))
    with pytest.raises(RuntimeError, match="without a matching"):
        iket.range_pop()
    with pytest.raises(ValueError, match="Unsupported IKET payload dtype"):
        iket.payload(1, dtype="float64")


def test_session_restores_callback_cache_and_payloads(tmp_path):
    previous = CacheState.is_enabled()
    CacheState.enable()
    try:
        with iket.session(output_dir=tmp_path, runtime_payloads=True):
            assert tvm_ffi.get_global_func(CALLBACK, allow_missing=True) is not None
            assert not CacheState.is_enabled() and iket.runtime_payloads_enabled()
            assert iket.output_path("x.trace.json") == tmp_path / "x.trace.json"
        assert tvm_ffi.get_global_func(CALLBACK, allow_missing=True) is None
        assert CacheState.is_enabled() and not iket.runtime_payloads_enabled()
        assert iket.output_dir() is None
    finally:
        (CacheState.enable if previous else CacheState.disable)()
    cmd = iket.profile_command(["python", "app.py"], directory=tmp_path)
    assert cmd.startswith("python -m iket.cli.main --output-dir") and cmd.endswith("-- python app.py")


def test_injection_renumbers_events_module_wide():
    def call(name, event_id):
        return f'TL_IKET_EVENT({event_id}, "{encode_event(Event(name, event_id, "mark"))}");'

    code = f'#include <x>\nextern "C" __global__ void k() {{\n  {call("first", 1)}\n  {call("second", 1)}\n}}\n'
    out = inject_iket_cuda(code, None, runtime_payloads=False)
    assert out.index("__tilelang_iket_tool__") < out.index('extern "C" __global__')
    assert "__iket_evt_decl_first_1_attrs[60]" in out and "__iket_evt_decl_second_2_attrs[60]" in out
    assert re.search(r"TL_IKET_EVENT\(2, ", out) and "mov.u32 r, 0;" in out  # no target: cluster rank 0
    assert inject_iket_cuda(out, None, runtime_payloads=False) == out
    meta = re.search(r"__iket_meta_info\[48\] = \{([^}]*)\}", out).group(1).split(", ")
    assert [int(x) for x in meta[24:28]] == [157, 241, 190, 186] and int(meta[32]) == 2


@pytest.mark.backend("cuda")
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not on PATH")
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_instrumented_kernel_compiles_with_nvcc(arch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with iket.session(runtime_payloads=True):
            artifact = tilelang.lower(marked_add(payload=True), target={"kind": "cuda", "arch": arch})
    src = artifact.kernel_source
    for decl in ("__iket_evt_decl_body_1_attrs", "__iket_evt_decl_load_2_attrs", "__iket_range_decl_body_",
                 "#define TL_IKET_EVENT_PAYLOAD_F32", "__iket_meta_info"):
        assert decl in src
    assert ("%cluster_ctarank" in src) == (arch == "sm_90a")
    assert "kernel.cubin" in artifact.files, artifact.metadata.get("cuda_compiler")
    ptx = artifact.files["kernel.ptx"]
    ptx = ptx.decode() if isinstance(ptx, bytes) else ptx
    assert "pmevent.mask" in ptx and "%globaltimer_lo" in ptx


def test_iket_keeps_the_reference_module_name():
    """The reference's tests read ``iket.__name__``; the alias and the plugin's module are one object."""
    import tilelang.tools.cuda.iket as by_reference_path
    import tilelang_cuda.tools.iket as by_plugin_path

    assert by_reference_path is by_plugin_path and by_reference_path.__name__ == "tilelang.tools.cuda.iket"
