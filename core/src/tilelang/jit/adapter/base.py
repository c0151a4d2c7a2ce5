"""`BaseKernelAdapter`: the reference TileLang's execution-adapter interface (``JITKernel.adapter``).

An adapter turns a compiled kernel into a torch-callable ``func`` (`_convert_torch_func`), keeps its host and
device sources (possibly as paths of cached files read on first use: `CachedTextSource`) and normalises the
output indices (`_legalize_result_idx`). In this project the execution backends (`tilelang.backend.ExecutionBackend`)
do the running; the adapters of `tilelang.jit.adapter` present them under the reference's interface.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["BaseKernelAdapter", "CachedTextSource", "CachedTextSourceLike"]


@dataclass(frozen=True)
class CachedTextSource:
    """A source text, or the path of a file holding it (read when first needed)."""

    text: str | None = None
    path: str | None = None


CachedTextSourceLike = CachedTextSource | str | None


class BaseKernelAdapter(ABC):
    """Common state of execution adapters: `params`, `result_idx` (normalised, non-negative) and `func`."""

    func: Callable[..., Any] | None = None

    def __init__(self, mod: Any, params: list[Any], result_idx: Any) -> None:
        self.mod = mod
        self.params = params
        self.result_idx = self._legalize_result_idx(result_idx)
        self._post_init()

    def _legalize_result_idx(self, result_idx: Any) -> list[int]:
        """`result_idx` (None, an int or a list; negative counts from the end) as a list of indices."""
        n = len(self.params)
        if result_idx is None:
            return []
        if isinstance(result_idx, int):
            result_idx = [result_idx]
        if not isinstance(result_idx, (list, tuple)):
            raise ValueError("result_idx should be a list of integers")
        out = []
        for idx in result_idx:
            if not -n <= int(idx) < n:
                raise ValueError(f"result_idx should be an integer between {-n} and {n - 1}, got {idx}")
            out.append(int(idx) % n)
        return out

    @abstractmethod
    def _convert_torch_func(self) -> Callable[..., Any]:
        """The callable taking the kernel's inputs as torch tensors and returning its outputs."""

    @staticmethod
    def get_current_stream_functor() -> Callable[[], int]:
        """A thunk giving torch's current CUDA stream handle at call time (0 without CUDA)."""
        import torch

        if torch.cuda.is_available():
            return lambda: int(torch.cuda.current_stream().cuda_stream)
        return lambda: 0

    @staticmethod
    def get_current_device_functor() -> Callable[[], Any]:
        """A thunk giving torch's current device at call time (the CPU without CUDA)."""
        import torch

        if torch.cuda.is_available():
            return lambda: torch.device("cuda", torch.cuda.current_device())
        return lambda: torch.device("cpu")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.func(*args, **kwargs)

    def _post_init(self) -> None:
        self.func = self._convert_torch_func()

    @staticmethod
    def _normalize_cached_text_source(source: CachedTextSourceLike) -> CachedTextSource:
        if isinstance(source, CachedTextSource):
            return source
        return CachedTextSource() if source is None else CachedTextSource(text=source)

    def _set_cached_text_source(self, source_attr: str, path_attr: str,
                                source: CachedTextSourceLike) -> CachedTextSource:
        source = self._normalize_cached_text_source(source)
        setattr(self, source_attr, source.text)
        setattr(self, path_attr, source.path)
        return source

    def _load_cached_text_source(self, source_attr: str, path_attr: str) -> str | None:
        """The text in `source_attr`, else the file at `path_attr` (cached into `source_attr`), else None."""
        text = getattr(self, source_attr, None)
        if text is not None:
            return text
        path = getattr(self, path_attr, None)
        if path is None:
            return None
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError:
            return None
        setattr(self, source_attr, text)
        return text
