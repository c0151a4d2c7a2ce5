"""`tilelang.env` (the Environment instance), the top-level names and `PassConfigKey`."""

from __future__ import annotations

import logging
import subprocess
import sys

import pytest

import tilelang


def test_import_is_cheap_and_names_resolve_lazily():
    code = ("import sys, tilelang; assert 'tvm' not in sys.modules and 'torch' not in sys.modules; "
            "print(tilelang.cdiv(7, 2), tilelang.next_power_of_2(5), tilelang.env.TILELANG_PRINT_ON_COMPILATION)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["4", "8", "1"]


def test_subpackages_are_attributes():
    assert tilelang.transform.PassConfigKey.TL_DISABLE_TMA_LOWER == "tl.disable_tma_lower"
    assert tilelang.autotuner.AutoTuner is tilelang.AutoTuner
    assert tilelang.math.cdiv(9, 4) == 3
    assert not hasattr(tilelang, "Target")
    with pytest.raises(AttributeError):
        tilelang.no_such_name  # noqa: B018


def test_forced_values_and_env_reads(monkeypatch):
    desc = type(tilelang.env).__dict__["TILELANG_COMPILE_TIMEOUT_SECONDS"]
    saved = desc._forced_value
    try:
        desc._forced_value = None
        monkeypatch.setenv("TILELANG_COMPILE_TIMEOUT_SECONDS", "2.5")
        assert tilelang.env.get_compile_timeout_seconds() == 2.5
        tilelang.env.TILELANG_COMPILE_TIMEOUT_SECONDS = "0"
        assert tilelang.env.get_compile_timeout_seconds() is None
        tilelang.env.TILELANG_COMPILE_TIMEOUT_SECONDS = "nan"
        with pytest.raises(ValueError, match="TILELANG_COMPILE_TIMEOUT_SECONDS"):
            tilelang.env.get_compile_timeout_seconds()
    finally:
        desc._forced_value = saved


def test_default_target_json(monkeypatch):
    monkeypatch.setenv("TILELANG_DEFAULT_TARGET", '{"kind": "llvm", "mcpu": "haswell"}')
    assert tilelang.env.get_default_target() == {"kind": "llvm", "mcpu": "haswell"}
    monkeypatch.setenv("TILELANG_DEFAULT_TARGET", "{kind: llvm}")
    with pytest.raises(ValueError, match="JSON syntax"):
        tilelang.env.get_default_target()


def test_tmp_dir_follows_cache_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.delenv("TILELANG_TMP_DIR", raising=False)
    assert tilelang.env.tmp_dir() == tmp_path / "c" / "tmp"


def test_set_log_level():
    logger = logging.getLogger("tilelang")
    before = logger.level
    try:
        tilelang.set_log_level("debug")
        assert logger.level == logging.DEBUG
        tilelang.set_log_level(logging.ERROR)
        assert logger.level == logging.ERROR
        with pytest.raises(ValueError, match="unknown log level"):
            tilelang.set_log_level("loud")
    finally:
        logger.setLevel(before)


def test_pass_config_keys():
    from tilelang.transform.config import normalize_pass_configs

    configs = normalize_pass_configs({tilelang.PassConfigKey.TL_DISABLE_SAFE_MEMORY_ACCESS: True,
                                      "tl.disable_safe_memory_access": True, "tir.disable_vectorize": True,
                                      "tl.cuda.enable_tma": True})
    assert configs == {"tl.disable_safe_memory_legalize": True, "tirx.disable_vectorize": True,
                       "tl.cuda.enable_tma": True}
    with pytest.raises(KeyError, match="did you mean 'tl.disable_tma_lower'"):
        normalize_pass_configs({"tl.disable_tma_lowr": True})
    assert str(tilelang.PassConfigKey.TL_ENABLE_FAST_MATH) == "tl.enable_fast_math"
