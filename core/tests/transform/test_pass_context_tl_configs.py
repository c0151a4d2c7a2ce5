"""``tl.*`` keys in ``tvm.transform.PassContext`` (as the reference registers them): accepted, checked, shown by
``PassContext.config``, seen by the passes of a build run inside, and deprecated keys warn."""

from __future__ import annotations

import warnings

import pytest

import tilelang
from tilelang.errors import ExecutionBackendUnavailable
from tilelang.transform.config import current_tl_config

tvm = pytest.importorskip("tvm")


def test_tl_keys_are_accepted_and_shown_with_tvms_own():
    with tvm.transform.PassContext(config={tilelang.PassConfigKey.TL_DISABLE_TMA_LOWER: True,
                                           "tirx.disable_vectorize": True}):
        config = tvm.transform.PassContext.current().config
        assert bool(config["tl.disable_tma_lower"]) and bool(config["tirx.disable_vectorize"])
    assert "tl.disable_tma_lower" not in tvm.transform.PassContext.current().config


def test_an_unknown_tl_key_names_the_closest_known_one():
    with pytest.raises(KeyError, match="did you mean 'tl.disable_vectorize'"):
        tvm.transform.PassContext(config={"tl.disable_vectorise": True})


def test_the_passes_of_a_build_inside_see_the_users_keys():
    from tilelang.transform.pipeline import pass_context

    with tvm.transform.PassContext(config={"tl.disable_software_pipeline": True}):
        assert current_tl_config("tl.disable_software_pipeline") is True
        with pass_context({"tl.disable_vectorize": True}):  # what lowering enters
            assert current_tl_config("tl.disable_software_pipeline") is True
            assert current_tl_config("tl.disable_vectorize") is True
        with pass_context({"tl.disable_software_pipeline": False}):  # the kernel's own pass_configs win
            assert current_tl_config("tl.disable_software_pipeline") is False
    assert current_tl_config("tl.disable_software_pipeline") is None


def test_a_context_made_again_at_a_reused_address_holds_only_its_own_keys():
    for _ in range(50):
        with tvm.transform.PassContext(config={"tl.disable_vectorize": True}):
            pass
        with tvm.transform.PassContext(config={}):
            assert "tl.disable_vectorize" not in tvm.transform.PassContext.current().config


def test_deprecated_key_warns_when_a_kernel_is_made_and_a_shell_kernel_says_it_is_empty():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DeprecationWarning)
        kernel = tilelang.JITKernel(from_database=True, target="c",
                                    pass_configs={tilelang.PassConfigKey.TL_DISABLE_TMA_LOWER: True})
    assert any("tl.disable_tma_lower" in str(w.message) and "v0.1.10" in str(w.message) for w in caught)
    with pytest.raises(ExecutionBackendUnavailable, match="from_database=True"):
        kernel()
    with pytest.raises(TypeError, match="compiled artifact"):
        tilelang.JITKernel()
