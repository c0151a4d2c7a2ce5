"""The reference TileLang's NVRTC execution adapter: CUDA C compiled in-process by NVRTC, launched through the
CUDA driver from a generated Python launcher (``cuda-python``).

`is_nvrtc_available` tells whether ``cuda-python`` is importable; without it `NVRTCKernelAdapter`,
`TLNVRTCSourceWrapper` and `NVRTCLibraryGenerator` are stand-ins whose construction raises ImportError saying
what to install (`check_nvrtc_available` raises the same). `include_paths` and `kernel_cache` work either way.
"""

from __future__ import annotations

import logging
from typing import Any, NoReturn

__all__ = ["NVRTCKernelAdapter", "TLNVRTCSourceWrapper", "NVRTCLibraryGenerator", "is_nvrtc_available",
           "check_nvrtc_available", "NVRTC_UNAVAILABLE_MESSAGE", "MissingCudaPython"]

logger = logging.getLogger(__name__)

NVRTC_UNAVAILABLE_MESSAGE = ("cuda-python is not available, NVRTC backend cannot be used. Please install it with "
                             "`pip install cuda-python nvidia-cuda-nvrtc` (or `pip install tilelang-cuda[nvrtc]`) if "
                             "you want to use the NVRTC backend.")

try:
    import cuda.bindings.driver
    import cuda.bindings.nvrtc  # noqa: F401

    is_nvrtc_available = True
except ImportError as exc:
    logger.debug("cuda-python import failed: %s", exc)
    is_nvrtc_available = False


class MissingCudaPython:
    """Stands for ``cuda.bindings.driver`` when cuda-python is absent: any use raises the ImportError."""

    def __getattr__(self, name: str) -> NoReturn:
        raise ImportError(NVRTC_UNAVAILABLE_MESSAGE)


def check_nvrtc_available() -> None:
    """Raise ImportError (saying what to install) unless cuda-python is importable."""
    if not is_nvrtc_available:
        raise ImportError(NVRTC_UNAVAILABLE_MESSAGE)


if is_nvrtc_available:
    from tilelang_cuda.adapters.nvrtc.adapter import NVRTCKernelAdapter
    from tilelang_cuda.adapters.nvrtc.libgen import NVRTCLibraryGenerator
    from tilelang_cuda.adapters.nvrtc.wrapper import TLNVRTCSourceWrapper
else:

    class _Unavailable:
        def __init__(self, *args: Any, **kwargs: Any) -> NoReturn:
            raise ImportError(NVRTC_UNAVAILABLE_MESSAGE)

    class NVRTCKernelAdapter(_Unavailable):  # type: ignore[no-redef]
        """Stand-in: cuda-python is not installed (constructing or restoring one raises ImportError)."""

        @classmethod
        def from_database(cls, *args: Any, **kwargs: Any) -> NoReturn:
            raise ImportError(NVRTC_UNAVAILABLE_MESSAGE)

    class TLNVRTCSourceWrapper(_Unavailable):  # type: ignore[no-redef]
        """Stand-in: cuda-python is not installed (constructing one raises ImportError)."""

    class NVRTCLibraryGenerator(_Unavailable):  # type: ignore[no-redef]
        """Stand-in: cuda-python is not installed (constructing one raises ImportError)."""
