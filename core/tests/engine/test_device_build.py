"""The device codegen contract: what `build` / `postprocess` / `finalize` return reaches the artifact, in order.

A codegen for the ``llvm`` kind that wraps the CPU plugin's (higher priority, so `tilelang.lower` picks it) returns a
`DeviceBuild` with a file and metadata, rewrites the source, and finalizes from the rewritten source.
"""

from __future__ import annotations

import engine_kernels as K
import pytest
import torch

import tilelang
from tilelang.backend import DeviceBuild, DeviceCodegen, _registry, hookimpl, register_device_codegen
from tilelang.backend.device_codegen import resolve_device_codegen

pytestmark = pytest.mark.backend("llvm")


class _SiteWideRewrite:
    """A cross-cutting `tilelang_postprocess_kernel_source` hook: it sees the codegen's postprocessed source."""

    seen: list[str] = []

    @hookimpl
    def tilelang_postprocess_kernel_source(self, source, target):
        self.seen.append(source)
        return source + "\n// site-wide\n"


@pytest.fixture
def wrapped_codegen(monkeypatch):
    from tilelang.backend import hooks

    monkeypatch.setenv("TILELANG_DISABLE_CACHE", "1")
    real = resolve_device_codegen({"kind": "llvm"})
    calls: list[tuple[str, object]] = []

    def build(mod, target):
        calls.append(("build", None))
        return DeviceBuild(rt_mod=real.lower(mod, target), files={"extra.bin": b"\x01\x02"},
                           metadata={"built_by": "wrapper"})

    def postprocess(source, target):
        calls.append(("postprocess", None))
        return source + "\n// postprocessed\n"

    def finalize(source, target):
        calls.append(("finalize", source))
        return DeviceBuild(files={"final.txt": source.encode()}, metadata={"final_length": len(source)})

    snapshot = _registry.snapshot_all()
    wrapped = DeviceCodegen("llvm-wrapped", build=build, postprocess=postprocess, finalize=finalize, priority=100)
    register_device_codegen("llvm", wrapped)
    hook = _SiteWideRewrite()
    hook.seen = []
    pm = hooks.plugin_manager()
    pm.register(hook, name="test-site-wide")
    try:
        yield calls, hook
    finally:
        pm.unregister(name="test-site-wide")
        _registry.restore_all(snapshot)


def test_build_postprocess_finalize_reach_the_artifact_in_order(wrapped_codegen):
    calls, hook = wrapped_codegen
    art = tilelang.lower(K.elementwise_add(), target="llvm")
    assert [step for step, _ in calls] == ["build", "postprocess", "finalize"]
    assert hook.seen and hook.seen[0].endswith("// postprocessed\n")  # the codegen's step runs before the hooks
    assert art.kernel_source.endswith("// postprocessed\n\n// site-wide\n")
    assert calls[-1][1] == art.kernel_source  # finalize sees the final source
    assert art.files["extra.bin"] == b"\x01\x02" and art.files["final.txt"] == art.kernel_source.encode()
    assert art.metadata["built_by"] == "wrapper" and art.metadata["final_length"] == len(art.kernel_source)
    a, b, c = torch.randn(256, 256), torch.randn(256, 256), torch.empty(256, 256)
    art.rt_mod[art.name](a, b, c)  # the wrapped runtime module still runs
    torch.testing.assert_close(c, a + b)


def test_finalize_is_skipped_without_device_compilation(wrapped_codegen):
    calls, _ = wrapped_codegen
    art = tilelang.lower(K.elementwise_add(), target="llvm", enable_device_compile=False)
    assert [step for step, _ in calls] == ["build", "postprocess"]
    assert "final.txt" not in art.files and art.files["extra.bin"] == b"\x01\x02"


def test_execution_backend_base_exports_the_codegen_files(wrapped_codegen):
    from tilelang.backend import ExecutionBackend

    class Minimal(ExecutionBackend):
        name = "minimal"

        def unavailable_reason(self):
            return None

        def load(self, artifact):
            return artifact.rt_mod[artifact.name]

    art = tilelang.lower(K.elementwise_add(), target="llvm")
    backend = Minimal()
    assert backend.torch_device_type == "cpu"
    assert backend.export_files(art) == art.files
