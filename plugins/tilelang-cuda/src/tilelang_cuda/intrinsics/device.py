"""The plugin's device-helper headers (``tilelang_cuda/*.cuh``, shipped in the wheel) and which ones a kernel needs.

The inline-PTX helpers that lowering and the CUDA dialect emit as ``call_extern("tl_...")`` (mbarriers, TMA,
tcgen05, cp.async, ldmatrix / mma.sync, warp reductions, ...) are C++ headers under `include_dir`, one per topic,
each self-contained (include guard, its own ``#include``s). A generated kernel includes only the headers whose
helpers its source calls (`headers_for`); inside a header, code a target lacks is under
``#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= ...`` (``__CUDA_ARCH_FEAT_SM90_ALL`` for wgmma), so a helper
for sm_90a or sm_100a never reaches a compile for an older target. nvcc and NVRTC get ``-I`` `include_dir`;
`headers_digest` enters the cache keys of compiled binaries.
"""

from __future__ import annotations

import functools
import hashlib
import re
from pathlib import Path

# a helper's name where a header defines it: a function (after its return type), a macro or a struct
_DEFINED = re.compile(r"^(?:template <[^>]*> )?(?:__host__ )?__device__ __forceinline__ [\w: ]+?[ *&](tl_\w+)\(|"
                      r"^#define (tl_\w+)|^struct (?:__align__\(\d+\) )?(tl_\w+)", re.M)
_CALLED = re.compile(r"\b(tl_[A-Za-z0-9_]+)\b")


def include_dir() -> Path:
    """The directory to pass as ``-I`` to nvcc / NVRTC: it holds ``tilelang_cuda/<topic>.cuh``."""
    return Path(__file__).resolve().parent.parent / "include"


def header_paths() -> list[Path]:
    """Every helper header, sorted by name."""
    return sorted((include_dir() / "tilelang_cuda").glob("*.cuh"))


@functools.cache
def _index() -> tuple[dict[str, str], str]:
    names: dict[str, str] = {}
    digest = hashlib.sha256()
    for path in header_paths():
        text = path.read_text()
        digest.update(path.name.encode() + b"\0" + text.encode() + b"\0")
        for match in _DEFINED.finditer(text):
            names.setdefault(next(g for g in match.groups() if g), path.stem)
    return names, digest.hexdigest()


def helper_headers() -> dict[str, str]:
    """helper name -> the topic (header stem) defining it."""
    return dict(_index()[0])


def headers_digest() -> str:
    """sha256 of the headers' names and contents (read once per process)."""
    return _index()[1]


def headers_for(source: str) -> list[str]:
    """The topics (``common``, ``barrier``, ``tma``, ...) whose helpers `source` calls, ``common`` first."""
    names = _index()[0]
    topics = {names[n] for n in _CALLED.findall(source) if n in names}
    return ["common", *sorted(topics - {"common"})]


def includes_for(source: str) -> str:
    """The ``#include "tilelang_cuda/<topic>.cuh"`` lines of `headers_for(source)`."""
    return "".join(f'#include "tilelang_cuda/{topic}.cuh"\n' for topic in headers_for(source))
