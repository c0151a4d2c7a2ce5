import engine_kernels as K
import pytest

import tilelang
from tilelang.backend.passes import EXTENSION_POINTS


@pytest.mark.backend("cpu")
def test_every_extension_point_is_consulted_in_order(monkeypatch):
    from tilelang.transform import pipeline

    seen = []
    real = pipeline.passes_at

    def spy(point, target):
        seen.append(point)
        return real(point, target)

    monkeypatch.setattr(pipeline, "passes_at", spy)
    tilelang.lower(K.gemm(), target="cpu")
    assert seen == [p for p in EXTENSION_POINTS if p != "device_module"]  # the CPU has no device half


@pytest.mark.backend("cpu")
def test_backend_pass_runs_at_its_point(monkeypatch):
    import tvm

    from tilelang.transform import pipeline

    names = []

    @tvm.transform.module_pass(opt_level=0, name="test.Probe")
    def probe(mod, ctx):
        names.append(sorted(str(gv.name_hint) for gv in mod.functions))
        return mod

    real = pipeline.passes_at
    monkeypatch.setattr(pipeline, "passes_at",
                        lambda point, target: real(point, target) + ([probe] if point == "post_layout" else []))
    tilelang.lower(K.elementwise_add(), target="cpu")
    assert names == [["add"]]
