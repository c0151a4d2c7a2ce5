"""Testing helpers: the reference TileLang's ``tilelang.testing`` surface, with this project's meaning.

- ``main()`` runs the calling test file under pytest.
- ``requires_*`` decorators skip a test when what it needs is absent here, and the skip names what is missing:
  ``requires_cuda`` / ``requires_rocm`` / ``requires_metal`` / ``requires_webgpu`` need the backend installed
  *and* a device of that kind; ``requires_llvm`` (and ``requires_cpu``) need an installed backend serving the
  ``llvm`` kind (the CPU backend; no device needed); ``requires_cuda_compute_version*`` compare the visible GPU's
  compute capability; ``requires_package`` needs importable packages.
- ``set_random_seed``, ``torch_assert_close`` (a tolerance on the share of mismatched elements).
- Submodules for this project's own tests: ``corpus`` (the reference kernels), ``tirx_kernels``, and the
  reference's ``perf_regression``.

Each decorator works on functions and classes, and as ``requires_x.marks()`` (a list of pytest marks) as in the
reference. Device probes run once per process.
"""

from __future__ import annotations

import functools
import inspect
import os
import random
import sys
from collections.abc import Callable
from typing import Any

from tilelang.utils.tensor import torch_assert_close

__all__ = [
    "main", "set_random_seed", "torch_assert_close", "Requirement", "requires_package", "requires_cuda",
    "requires_rocm", "requires_metal", "requires_webgpu", "requires_llvm", "requires_cpu", "requires_cdna",
    "requires_cuda_or_cdna", "requires_gfx950", "requires_cuda_compute_version", "process_func", "regression",
    *(f"requires_cuda_compute_version_{op}" for op in ("ge", "gt", "le", "lt", "eq")),
]


def main() -> None:
    """Run the calling test file with pytest (``if __name__ == "__main__": tilelang.testing.main()``)."""
    import pytest

    test_file = inspect.getsourcefile(sys._getframe(1))
    sys.exit(pytest.main([test_file, *sys.argv[1:]]))


def set_random_seed(seed: int = 42) -> None:
    """Seed Python's, numpy's and torch's generators (and every CUDA device's)."""
    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


# ------------------------------------------------------------------------------------------- requirements
class Requirement:
    """A skip condition usable as ``@requires_x``, ``@requires_x`` on a class, or ``requires_x.marks()``.

    `probe` returns None when the requirement holds, else the reason to skip; it runs once, lazily.
    """

    def __init__(self, name: str, probe: Callable[[], str | None], extra_marks: tuple[str, ...] = ()):
        self.name = name
        self._probe = probe
        self._extra_marks = extra_marks

    @functools.cached_property
    def reason(self) -> str | None:
        """None when the requirement holds here, else why the test is skipped."""
        try:
            return self._probe()
        except Exception as exc:  # a probe that breaks must skip, not error, the tests it guards
            return f"{self.name}: probing the requirement raised {type(exc).__name__}: {exc}"

    @property
    def holds(self) -> bool:
        return self.reason is None

    def marks(self) -> list[Any]:
        import pytest

        return [pytest.mark.skipif(self.reason is not None, reason=self.reason or "")]

    def __call__(self, func: Any) -> Any:
        return _compose(func, self.marks())

    def __bool__(self) -> bool:
        return self.holds

    def __repr__(self) -> str:
        return f"<Requirement {self.name}: {'holds' if self.holds else self.reason}>"


def _compose(func: Any, marks: list[Any]) -> Any:
    for mark in marks:
        func = mark(func)
    return func


def _backend_for_kind(kind: str) -> str | None:
    """None when an installed backend serves target kind `kind`, else the reason (with the install hint)."""
    from tilelang.backend import plugins
    from tilelang.errors import distribution_for

    if kind in plugins.installed_kinds():
        try:
            plugins.check_kind(kind)
        except Exception as exc:
            return f"the backend serving {kind!r} does not load: {exc}"
        return None
    return f"needs the {distribution_for(kind)} backend (not installed: pip install {distribution_for(kind)})"


def _detected(kind: str) -> dict[str, Any] | None:
    """The config that `kind`'s backend detects on this machine (None without a device)."""
    from tilelang.backend.target import target_kind_spec

    spec = target_kind_spec(kind)
    return spec.detect() if spec.detect is not None else None


def _device_probe(kind: str, what: str) -> Callable[[], str | None]:
    def probe() -> str | None:
        missing = _backend_for_kind(kind)
        if missing is not None:
            return missing
        if _detected(kind) is None:
            return f"needs {what} (none visible on this machine)"
        return None

    return probe


def _cuda_probe() -> str | None:
    if os.environ.get("CUDA_VISIBLE_DEVICES", None) == "":
        return "needs an NVIDIA GPU (CUDA_VISIBLE_DEVICES is empty)"
    return _device_probe("cuda", "an NVIDIA GPU")()


def _webgpu_probe() -> str | None:
    missing = _backend_for_kind("webgpu")
    if missing is not None:
        return missing
    try:
        import importlib

        importlib.import_module("tilelang.webgpu.adapter").adapter()
    except Exception as exc:
        return f"needs a WebGPU adapter: {exc}"
    return None


def _rocm_arch() -> str:
    found = _detected("rocm") or {}
    return str(found.get("mcpu", ""))


def _rocm_family_probe(name: str, pred: Callable[[str], bool]) -> Callable[[], str | None]:
    def probe() -> str | None:
        missing = _device_probe("rocm", "an AMD GPU")()
        if missing is not None:
            return missing
        arch = _rocm_arch()
        return None if pred(arch) else f"needs a {name} GPU (this one is {arch or 'unknown'})"

    return probe


def _is_cdna(arch: str) -> bool:
    return arch.startswith(("gfx90", "gfx94", "gfx95"))


requires_cuda = Requirement("requires_cuda", _cuda_probe, ("gpu",))
requires_rocm = Requirement("requires_rocm", _device_probe("rocm", "an AMD GPU with ROCm"), ("gpu",))
requires_metal = Requirement("requires_metal", _device_probe("metal", "an Apple GPU (Metal)"), ("gpu",))
requires_webgpu = Requirement("requires_webgpu", _webgpu_probe)
requires_llvm = Requirement("requires_llvm", lambda: _backend_for_kind("llvm"))
requires_cpu = requires_llvm
requires_cdna = Requirement("requires_cdna", _rocm_family_probe("CDNA (gfx90a/gfx94x/gfx950)", _is_cdna), ("gpu",))
requires_gfx950 = Requirement("requires_gfx950", _rocm_family_probe("gfx950", lambda a: a.startswith("gfx950")),
                              ("gpu",))


def _check_is_gfx950() -> bool:
    """Whether the visible AMD GPU is a gfx950 (the reference's helper; False without one)."""
    return requires_gfx950.holds


def _check_is_cdna() -> bool:
    """Whether the visible AMD GPU is a CDNA part (gfx90a / gfx94x / gfx950); False without one."""
    return requires_cdna.holds


def _cuda_or_cdna() -> str | None:
    cuda, cdna = requires_cuda.reason, requires_cdna.reason
    return None if cuda is None or cdna is None else f"needs an NVIDIA GPU or a CDNA GPU ({cuda}; {cdna})"


requires_cuda_or_cdna = Requirement("requires_cuda_or_cdna", _cuda_or_cdna, ("gpu",))


def requires_package(*packages: str) -> Requirement:
    """Skip unless every package in `packages` imports."""
    import importlib.util

    def probe() -> str | None:
        missing = [p for p in packages if importlib.util.find_spec(p) is None]
        return f"needs the package(s) {', '.join(missing)} (pip install {' '.join(missing)})" if missing else None

    return Requirement(f"requires_package({', '.join(packages)})", probe)


def cuda_compute_version() -> tuple[int, int] | None:
    """The visible NVIDIA GPU's compute capability, or None without one."""
    if requires_cuda.reason is not None:
        return None
    arch = str(_detected("cuda")["arch"])  # "sm_90a"
    digits = arch.removeprefix("sm_").rstrip("abf")
    return int(digits[:-1]), int(digits[-1])


_COMPARE = {
    "ge": lambda have, want: have >= want, "gt": lambda have, want: have > want,
    "le": lambda have, want: have <= want, "lt": lambda have, want: have < want,
    "eq": lambda have, want: have == want,
}


def requires_cuda_compute_version(major_version: int, minor_version: int = 0, mode: str = "ge") -> Requirement:
    """Skip unless an NVIDIA GPU is visible and its compute capability compares `mode` (ge, gt, le, lt, eq) to
    ``(major_version, minor_version)``."""
    if mode not in _COMPARE:
        raise ValueError(f"Invalid mode: {mode!r}; use one of {', '.join(_COMPARE)}")
    want = (major_version, minor_version)

    def probe() -> str | None:
        if requires_cuda.reason is not None:
            return requires_cuda.reason
        have = cuda_compute_version()
        if have is None or not _COMPARE[mode](have, want):
            shown = ".".join(map(str, have)) if have else "none"
            return f"needs CUDA compute capability {mode} {major_version}.{minor_version}, this GPU has {shown}"
        return None

    return Requirement(f"requires_cuda_compute_version({major_version}, {minor_version}, {mode!r})", probe, ("gpu",))


def requires_cuda_compute_version_ge(major_version: int, minor_version: int = 0) -> Requirement:
    return requires_cuda_compute_version(major_version, minor_version, "ge")


def requires_cuda_compute_version_gt(major_version: int, minor_version: int = 0) -> Requirement:
    return requires_cuda_compute_version(major_version, minor_version, "gt")


def requires_cuda_compute_version_le(major_version: int, minor_version: int = 0) -> Requirement:
    return requires_cuda_compute_version(major_version, minor_version, "le")


def requires_cuda_compute_version_lt(major_version: int, minor_version: int = 0) -> Requirement:
    return requires_cuda_compute_version(major_version, minor_version, "lt")


def requires_cuda_compute_version_eq(major_version: int, minor_version: int = 0) -> Requirement:
    return requires_cuda_compute_version(major_version, minor_version, "eq")


def __getattr__(name: str) -> Any:
    # the reference's perf-regression helpers, imported on first use (they pull in nothing heavy, but keep
    # `import tilelang.testing` minimal)
    if name in ("process_func", "regression"):
        from tilelang.testing import perf_regression

        return getattr(perf_regression, name)
    raise AttributeError(f"module 'tilelang.testing' has no attribute {name!r}")
