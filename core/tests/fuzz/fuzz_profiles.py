"""The fuzzer's two profiles: QUICK (the normal test run: fixed seed, a few dozen programs per backend, small
sizes) and LONG (``TILELANG_FUZZ_EXAMPLES=N``: N programs per backend, sizes up to 300, random seed unless
``TILELANG_FUZZ_SEED`` is set; run with ``nox -s fuzz``)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from hypothesis import HealthCheck, settings


@dataclass(frozen=True)
class Profile:
    name: str
    examples: dict[str, int]     # per backend check
    max_dim: int
    emulate_limit: int           # CUDA emulator: largest Program.elements it runs
    nvcc: bool
    seed: int | None

    def settings(self, backend: str) -> settings:
        return settings(max_examples=self.examples[backend], derandomize=self.seed is None and self.name == "quick",
                        deadline=None, database=None, print_blob=True,
                        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                               HealthCheck.filter_too_much])


QUICK = Profile("quick", {"cpu": 16, "webgpu": 10, "cuda": 4, "cuda_gpu": 16, "rocm": 4, "metal": 8}, max_dim=80,
                emulate_limit=2048, nvcc=True, seed=None)


def current() -> Profile:
    """LONG when ``TILELANG_FUZZ_EXAMPLES`` is set, else QUICK."""
    count = os.environ.get("TILELANG_FUZZ_EXAMPLES")
    if not count:
        return QUICK
    seed = os.environ.get("TILELANG_FUZZ_SEED")
    n = int(count)
    return Profile("long", dict.fromkeys(QUICK.examples, n), max_dim=300, emulate_limit=40_000, nvcc=True,
                   seed=int(seed) if seed else None)
