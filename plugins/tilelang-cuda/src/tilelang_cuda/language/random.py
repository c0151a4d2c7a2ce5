"""Per-thread random numbers: a counter-based Philox4x32-10 generator (the algorithm of curand's
``curandStatePhilox4_32_10_t``) whose state lives in the thread's registers.

``T.rng_init(seed, seq, off)`` starts the stream of subsequence `seq` (default: the thread's global index) at
word `off`; ``T.rng_rand()`` returns its next 32-bit word, ``T.rng_rand_float()`` a uniform float in (0, 1] (or a
normal one).
"""

from __future__ import annotations

import weakref
from typing import Any

from tilelang.errors import KernelSyntaxError
from tilelang_cuda.language._emit import call, expr, public

__all__ = ["rng_init", "rng_rand", "rng_rand_float"]

RNG_STATE_WORDS = 11  # key (2) + counter (4) + four buffered outputs (4) + the next one's index (1)
GENERATOR = "curandStatePhilox4_32_10_t"
_states: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # build state -> the kernel's state buffer


def _state(what: str) -> Any:
    from tilelang.backend.sdk import require_build_state

    st = require_build_state(what)
    buf = _states.get(st)
    if buf is None:
        raise KernelSyntaxError(f"{what} needs a generator: call T.rng_init(seed) first in this kernel")
    return buf


@public
def rng_init(seed: Any, seq: Any = None, off: Any = 0, generator: str = GENERATOR) -> Any:
    """Start this thread's generator: key `seed`, subsequence `seq` (default ``tx + bx * threads``), skipping
    `off` words."""
    from tvm import tirx

    from tilelang.backend.sdk import require_build_state
    from tilelang.language import alloc_local

    if generator != GENERATOR:
        raise ValueError(f"T.rng_init: this backend implements the {GENERATOR} generator only, got {generator!r}")
    st = require_build_state("T.rng_init")
    # the default subsequence (the thread's global x index) is made at lowering, where the launch is known
    seq = "thread" if seq is None else expr(seq, "uint64")
    buf = _states.get(st)
    if buf is None:
        buf = alloc_local((RNG_STATE_WORDS,), "uint32")
        _states[st] = buf
    load = tirx.BufferLoad(buf, [tirx.IntImm("int32", 0)])
    return call("rng_init", "handle", [load, expr(seed, "uint64"), seq, expr(off, "uint64")])


@public
def rng_rand() -> Any:
    """The next 32-bit random word of this thread's generator."""
    from tvm import tirx

    buf = _state("T.rng_rand")
    return call("rng_rand", "uint32", [tirx.BufferLoad(buf, [tirx.IntImm("int32", 0)])])


@public
def rng_rand_float(bit: int = 32, dist: str = "uniform") -> Any:
    """A random float32 / float64: uniform in (0, 1], or standard normal (Box-Muller on two uniforms)."""
    from tvm import tirx

    if bit not in (32, 64):
        raise ValueError(f"T.rng_rand_float: bit must be 32 or 64, got {bit}")
    if dist not in ("uniform", "normal"):
        raise ValueError(f"T.rng_rand_float: dist must be 'uniform' or 'normal', got {dist!r}")
    buf = _state("T.rng_rand_float")
    return call("rng_rand_float", f"float{bit}", [tirx.BufferLoad(buf, [tirx.IntImm("int32", 0)]), dist])
