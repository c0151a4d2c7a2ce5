"""`NVRTCKernelCache`: an NVRTC kernel's cache entry holds its cubin (``kernel.cubin``) and the generated Python
launcher beside it (``kernel.py``, required to reload)."""

from __future__ import annotations

import os
from typing import Any

from tilelang.cache import KernelCache

__all__ = ["NVRTCKernelCache"]


class NVRTCKernelCache(KernelCache):
    """Kernel cache layout of NVRTC kernels."""

    kernel_lib_path = "kernel.cubin"
    kernel_py_path = "kernel.py"

    def _get_required_files(self, cache_path: str) -> list[str]:
        return [*super()._get_required_files(cache_path), os.path.join(cache_path, self.kernel_py_path)]

    def _save_so_cubin_to_disk(self, kernel: Any, cache_path: str, verbose: bool = False) -> None:
        """Keep the launcher written next to the cubin, then the cubin itself."""
        launcher = self._load_binary(kernel.adapter.libpath.replace(".cubin", ".py"))
        self._safe_write_file(os.path.join(cache_path, self.kernel_py_path), "wb", lambda f: f.write(launcher))
        super()._save_so_cubin_to_disk(kernel, cache_path, verbose)
