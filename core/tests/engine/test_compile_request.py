"""`CompileRequest`: the user's target, host, pass configs and compile flags resolved once and handed down."""

from __future__ import annotations

import pytest

import tilelang
from tilelang.engine.request import CompileRequest
from tilelang.testing import corpus


def test_request_normalises_pass_configs_and_appends_compile_flags():
    request = CompileRequest.create("llvm", pass_configs={"tir.disable_assert": True,
                                                          tilelang.PassConfigKey.TL_DISABLE_VECTORIZE: True},
                                    compile_flags="-O1")
    assert request.pass_configs == {"tirx.disable_assert": True, "tl.disable_vectorize": True,
                                    "tl.device_compile_flags": ["-O1"]}
    assert request.compile_flags == ["-O1"] and request.on_host
    assert request.targets.host == request.targets.device == {"kind": "llvm"}


def test_lower_takes_a_request_or_arguments_not_both():
    prim = corpus.elementwise_add().func
    request = CompileRequest.create({"kind": "cuda", "arch": "sm_80"})
    artifact = tilelang.lower(prim, request=request)
    assert artifact.target == {"kind": "cuda", "arch": "sm_80"} and artifact.target_host == {"kind": "llvm"}
    assert set(artifact.metadata["param_align"].values()) == {64}  # set by lower, from the request
    with pytest.raises(TypeError, match="either request= or target"):
        tilelang.lower(prim, target="cuda", request=request)


def test_jit_compile_resolves_the_target_once(monkeypatch):
    from tilelang.backend import target as target_module

    calls = []
    real = target_module.determine_target
    monkeypatch.setattr(target_module, "determine_target", lambda *a, **k: calls.append(a) or real(*a, **k))
    case = corpus.elementwise_add()
    tilelang.compile(case.func, out_idx=case.out_idx, target="cpu",
                     pass_configs={"tl.disable_vectorize": True})  # a new key: not in the cache
    assert len(calls) == 1, calls
