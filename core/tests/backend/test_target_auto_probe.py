"""``target="auto"`` probes the backends' devices best first and stops at the first one found."""

from __future__ import annotations

import tilelang.backend.target as registry


def test_auto_target_does_not_probe_the_devices_after_the_best(monkeypatch):
    probed = []

    def detector(name, found):
        def detect():
            probed.append(name)
            return found
        return registry.TargetDetectorSpec(name, detect, 0)

    specs = [detector("absent", None), detector("cpu", {"kind": "c"}), detector("webgpu", {"kind": "webgpu"})]
    monkeypatch.setattr(registry, "_ordered_detectors", lambda: specs)
    monkeypatch.delenv("TILELANG_DEFAULT_TARGET", raising=False)
    # the WebGPU probe (an adapter) loads Mesa's LLVM into the process, which crashed a later import of Triton
    assert registry.determine_target("auto")["kind"] == "c"
    assert probed == ["absent", "cpu"]
    assert registry.detect_target()["kind"] == "c"
    assert [c["kind"] for c in registry.detect_targets()] == ["c", "webgpu"]  # all of them, when asked
