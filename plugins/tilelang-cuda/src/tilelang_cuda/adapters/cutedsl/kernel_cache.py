"""`CuTeDSLKernelCache`: the files a CuTeDSL kernel keeps in the kernel cache.

Besides the common entries: the device source and host wrapper as Python (``device_kernel.py``,
``host_kernel.py``), the importable generated module (``kernel.py``), and when the kernel has one its C++
launcher library (``launcher_lib.so``, required to reload) and source (``launcher.cpp``). The cubin the CuTe DSL
compiles on first launch is copied in by the adapter (``_cache_path``).
"""

from __future__ import annotations

import os
from typing import Any

from tilelang.cache import KernelCache

__all__ = ["CuTeDSLKernelCache"]


class CuTeDSLKernelCache(KernelCache):
    """Kernel cache layout of CuTeDSL kernels (Python modules plus launcher artifacts)."""

    kernel_lib_path = "kernel.py"
    device_kernel_path = "device_kernel.py"
    host_kernel_path = "host_kernel.py"
    launcher_lib_path = "launcher_lib.so"
    launcher_cpp_path = "launcher.cpp"

    def _save_kernel_source_code_to_disk(self, kernel: Any, cache_path: str, verbose: bool = False) -> None:
        """Keep the CuTe DSL device source for inspection."""
        source = kernel.adapter.get_kernel_source(kernel_only=True)
        if source is not None:
            self._safe_write_file(os.path.join(cache_path, self.device_kernel_path), "w",
                                  lambda f: f.write(source))

    def _save_wrapper_kernel_code_to_disk(self, kernel: Any, cache_path: str, verbose: bool = False) -> None:
        """Keep the host wrapper source and the importable generated module."""
        host = kernel.adapter.get_host_source()
        if host is not None:
            self._safe_write_file(os.path.join(cache_path, self.host_kernel_path), "w", lambda f: f.write(host))
        module = kernel.adapter.get_generated_module_source()
        if module is None:
            module = self._load_binary(kernel.adapter.libpath).decode()
        self._safe_write_file(os.path.join(cache_path, self.kernel_lib_path), "w", lambda f: f.write(module))

    def _save_so_cubin_to_disk(self, kernel: Any, cache_path: str, verbose: bool = False) -> None:
        """Keep the C++ launcher library and its source when the kernel has them."""
        generator = getattr(kernel.adapter, "lib_generator", None)
        launcher = getattr(generator, "launcher_libpath", None)
        if launcher:
            data = self._load_binary(launcher)
            self._safe_write_file(os.path.join(cache_path, self.launcher_lib_path), "wb", lambda f: f.write(data))
        cpp = getattr(kernel.adapter, "launcher_cpp_code", None)
        if cpp:
            self._safe_write_file(os.path.join(cache_path, self.launcher_cpp_path), "w", lambda f: f.write(cpp))

    def _get_required_files(self, cache_path: str) -> list[str]:
        """The files a reload needs: the common ones and the launcher library."""
        return [*super()._get_required_files(cache_path), os.path.join(cache_path, self.launcher_lib_path)]

    def _set_adapter_cache_path(self, kernel: Any, cache_path: str) -> None:
        """Tell the adapter where its entry is, so the first launch can add the compiled cubin."""
        if hasattr(kernel, "adapter"):
            kernel.adapter._cache_path = cache_path
