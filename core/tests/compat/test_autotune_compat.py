"""The reference's autotuner surface: CompileArgs / ProfileArgs, generate_cache_key, set_autotune_inputs."""

from __future__ import annotations

import inspect
from dataclasses import replace

import pytest

from tilelang.autotuner import AutoTuner, CompileArgs, ProfileArgs, get_autotune_inputs, set_autotune_inputs


def _kernel(block: int = 64):
    return block


def _key(compile_args=None, profile_args=None):
    tuner = AutoTuner(_kernel, configs=[{"block": 64}])
    tuner.compile_args = compile_args or CompileArgs()
    tuner.profile_args = profile_args or ProfileArgs()
    return tuner.generate_cache_key(inspect.signature(_kernel).parameters, {})


def test_cache_key_sees_every_argument():
    base = _key()
    assert base == _key()
    assert base != _key(compile_args=CompileArgs(out_idx=[0]))
    assert base != _key(profile_args=ProfileArgs(skip_check=True))
    assert base != _key(profile_args=replace(ProfileArgs(), cache_input_tensors=False))
    for name in ("ref_prog", "supply_prog", "manual_check_prog"):
        assert _key(profile_args=ProfileArgs(**{name: print})) is None


def test_args_hash_by_value():
    assert hash(CompileArgs(pass_configs={"a": [1]})) == hash(CompileArgs(pass_configs={"a": [1]}))
    assert hash(ProfileArgs(dims={"n": 4})) == hash(ProfileArgs(dims={"n": 4}))


def test_set_autotune_inputs_nests():
    assert get_autotune_inputs() is None
    with set_autotune_inputs([1, 2]):
        assert get_autotune_inputs() == [1, 2]
        with set_autotune_inputs(3, 4):
            assert get_autotune_inputs() == [3, 4]
        assert get_autotune_inputs() == [1, 2]
    assert get_autotune_inputs() is None


def test_unknown_profile_argument():
    with pytest.raises(TypeError, match="unknown profile argument"):
        AutoTuner(_kernel, configs=[{}]).set_profile_args(warmpu=1)
