"""A lock-step SIMT emulator of the final CUDA device TIR, for checking generated kernels without a GPU.

`emulate(artifact, *tensors)` runs every device PrimFunc of a lowered CUDA artifact on torch CPU tensors, in
place, like the real launch. Blocks run one after another; inside a block every thread runs in lock step:
expressions evaluate vectorised over the block's threads (numpy arrays of shape ``(T,)``; vectors are
``(lanes, T)``), thread-varying ``if`` runs masked, loop bounds must be uniform.

Memory is bytes: global = the tensors' storage, shared = one byte array per allocation (typed views at byte
offsets, so the merged ``buf_dyn_shmem`` pool and its casts work), local = ``(T, nbytes)`` per-thread bytes.
The plugin's inline-PTX helpers are modelled from the PTX ISA text (fragment layouts of ldmatrix and
mma.m16n8k16 / m16n8k8 / m16n8k32), not from our lowering. Checks that make a broken kernel fail loudly:

- out-of-bounds loads/stores of active threads raise `EmulationError`;
- ``__syncthreads`` under divergence raises;
- shared-memory races between two barriers (a thread reads/writes bytes another thread wrote, or writes bytes
  another thread read, in the same barrier interval) raise;
- cp.async is deferred: copies land at the ``cp.async.wait_group`` that retires their group, and touching
  their destination bytes before that raises (a missing or too-weak wait is caught);
- reading shared bytes no thread of the block wrote, or local bytes the thread never wrote, raises;
- a shared buffer reading bytes of the pool that were last written through another buffer raises (two tiles
  overlapping in the merged ``buf_dyn_shmem`` while both are live).

``patch={"helper_name": fn(emu, args)}`` replaces a helper (or ``tvm_storage_sync``) -- tests use it to break
kernels on purpose; ``emu.call_default(name, args)`` runs the built-in model from a patch.

Anything not modelled raises NotImplementedError naming the construct.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from tvm import tirx

__all__ = ["EmulationError", "Emulator", "emulate", "ldmatrix_x4", "mma_sync", "shfl_xor", "warp_butterfly"]


class EmulationError(RuntimeError):
    """The kernel did something a GPU would not do correctly (race, out-of-bounds, divergent barrier...)."""


# ------------------------------------------------------------------------------------------- dtypes
_NP = {"float16": np.float16, "float32": np.float32, "float64": np.float64, "int8": np.int8, "uint8": np.uint8,
       "int16": np.int16, "uint16": np.uint16, "int32": np.int32, "uint32": np.uint32, "int64": np.int64,
       "uint64": np.uint64, "bool": np.bool_, "bfloat16": np.float32}
_STORE_NP = dict(_NP, bfloat16=np.uint16, bool=np.uint8)


@dataclass(frozen=True)
class DType:
    base: str
    lanes: int

    @property
    def np(self) -> Any:
        """The numpy dtype values of this type are computed in (bfloat16 computes in float32)."""
        if self.base not in _NP:
            raise NotImplementedError(f"dtype {self.base}")
        return _NP[self.base]

    @property
    def store_np(self) -> Any:
        """The numpy dtype of one element in memory (bfloat16 is its uint16 bit pattern)."""
        if self.base not in _STORE_NP:
            raise NotImplementedError(f"dtype {self.base} in memory")
        return _STORE_NP[self.base]


def _parse_dtype(s: str) -> DType:
    if s == "handle" or s.startswith("handle"):
        return DType("handle", 1)
    base, _, lanes = s.partition("x")
    return DType(base, int(lanes) if lanes else 1)


def dtype_of(e: Any) -> DType:
    return _parse_dtype(str(e.ty))


def bf16_round(x: np.ndarray) -> np.ndarray:
    """float32 values rounded to bfloat16 precision (round to nearest even), kept as float32."""
    return bf16_decode(bf16_encode(x))


def bf16_encode(x: np.ndarray) -> np.ndarray:
    bits = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_decode(b: np.ndarray) -> np.ndarray:
    return (np.asarray(b).astype(np.uint32) << 16).view(np.float32)


def _cast(v: Any, dt: DType) -> np.ndarray:
    v = np.asarray(v)
    if dt.base == "bfloat16":
        return bf16_round(v.astype(np.float32))
    if dt.base == "bool":
        return v.astype(np.bool_)
    return v.astype(dt.np)


def _key(v: Any) -> int:
    """A stable identity for a Var / buffer Var (python wrappers differ between visits)."""
    return int(v.id_)


def _name(v: Any) -> str:
    return str(getattr(v, "name_hint", None) or v.name)


def _buffer_of(load: Any) -> Any:
    """The buffer a BufferLoad / TensorLoad reads (TensorLoad's source is the buffer itself)."""
    return load.buffer if hasattr(load, "buffer") else load.source


# ------------------------------------------------------------------------------------------- PTX models
_LANE = np.arange(32)
_G, _TG = _LANE >> 2, _LANE & 3


def _frag(rows: list[np.ndarray], cols: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    return np.stack(rows, 1), np.stack(cols, 1)  # (32 lanes, n elements)


# PTX ISA 9.7.14.5.8 "Matrix Fragments for mma.m16n8k16 with floating point type" (f16/bf16)
_F16_A = _frag([_G + 8 * ((i >> 1) & 1) for i in range(8)], [_TG * 2 + (i & 1) + 8 * (i >= 4) for i in range(8)])
_F16_B = _frag([_TG * 2 + (i & 1) + 8 * (i >= 2) for i in range(4)], [_G for _ in range(4)])
_ACC_C = _frag([_G + 8 * (i >= 2) for i in range(4)], [_TG * 2 + (i & 1) for i in range(4)])
# "Matrix Fragments for mma.m16n8k8" (.tf32): a0,a2 rows g / a1,a3 rows g+8; cols t / t+4; b rows t, t+4
_TF32_A = _frag([_G + 8 * (i & 1) for i in range(4)], [_TG + 4 * (i >= 2) for i in range(4)])
_TF32_B = _frag([_TG + 4 * i for i in range(2)], [_G for _ in range(2)])
# "Matrix Fragments for mma.m16n8k32" (.s8): a0..a15 in four .b32 registers, b0..b7 in two
_S8_A = _frag([_G + 8 * ((i >> 2) & 1) for i in range(16)], [_TG * 4 + (i & 3) + 16 * (i >= 8) for i in range(16)])
_S8_B = _frag([_TG * 4 + (i & 3) + 16 * (i >= 4) for i in range(8)], [_G for _ in range(8)])

MMA_SHAPES = {  # kind: (K, A layout, B layout)
    "f16": (16, _F16_A, _F16_B), "bf16": (16, _F16_A, _F16_B), "tf32": (8, _TF32_A, _TF32_B),
    "s8": (32, _S8_A, _S8_B),
}


def _unpack(regs: np.ndarray, kind: str) -> np.ndarray:
    """``(..., nregs)`` uint32 registers -> ``(..., nelems)`` element values (low bits first)."""
    regs = np.ascontiguousarray(regs, dtype=np.uint32)
    if kind == "f16":
        return regs.view(np.float16).astype(np.float64)
    if kind == "bf16":
        return bf16_decode(regs.view(np.uint16)).astype(np.float64)
    if kind == "tf32":  # tf32 operands: the fp32 pattern with the low 13 mantissa bits ignored
        return (regs & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64)
    if kind == "s8":
        return regs.view(np.int8).astype(np.int64)
    raise NotImplementedError(f"mma operand kind {kind}")


def mma_sync(kind: str, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """One ``mma.sync.aligned.m16n8kK.row.col`` per warp: ``a`` (T, 4) / ``b`` (T, 2) uint32 registers,
    ``c`` (T, 4) fp32 (int32 for s8) accumulators; returns D = A @ B + C in the same fragment layout."""
    K, (ra, ca), (rb, cb) = MMA_SHAPES[kind]
    T = a.shape[0]
    W = T // 32
    av = _unpack(a, kind).reshape(W, 32, -1)
    bv = _unpack(b, kind).reshape(W, 32, -1)
    A = np.zeros((W, 16, K), av.dtype)
    B = np.zeros((W, K, 8), bv.dtype)
    A[:, ra, ca] = av
    B[:, rb, cb] = bv
    acc_t = np.int32 if kind == "s8" else np.float32
    C = np.zeros((W, 16, 8), np.float64 if acc_t is np.float32 else np.int64)
    C[:, _ACC_C[0], _ACC_C[1]] = np.asarray(c).reshape(W, 32, 4)
    D = A @ B + C
    if kind == "s8":
        D = ((D + 2**31) % 2**32 - 2**31)  # s32 wrap-around
    return D[:, _ACC_C[0], _ACC_C[1]].reshape(T, 4).astype(acc_t)


def ldmatrix_x4(rows: np.ndarray, trans: bool) -> np.ndarray:
    """``ldmatrix.sync.aligned.m8n8.x4[.trans].b16``: ``rows`` (T, 8) uint16 = the 16-byte row each lane
    addresses (lanes 8j..8j+7 give rows 0..7 of matrix j); returns (T, 4) uint32, register j of lane l
    holding matrix j's elements (l/4, 2(l%4)), (l/4, 2(l%4)+1) -- or, with .trans, (2(l%4), l/4),
    (2(l%4)+1, l/4) -- low half first."""
    T = rows.shape[0]
    M = np.asarray(rows, np.uint16).reshape(T // 32, 4, 8, 8)  # warp, matrix, row, col
    j = np.arange(4)[None, :, None]
    r = (_LANE >> 2)[:, None, None]
    c = (2 * (_LANE & 3))[:, None, None] + np.arange(2)[None, None, :]
    halves = M[:, j, c, r] if trans else M[:, j, r, c]  # (W, 32, 4, 2)
    return np.ascontiguousarray(halves).view(np.uint32).reshape(T, 4)


def shfl_xor(v: np.ndarray, lane_mask: int) -> np.ndarray:
    """``__shfl_xor_sync(0xffffffff, v, lane_mask)`` over (T,) values: lane l reads lane l ^ lane_mask of its
    warp."""
    tid = np.arange(v.shape[0])
    return v[(tid & ~31) | ((tid & 31) ^ lane_mask)]


def warp_butterfly(v: np.ndarray, width: int, op: Callable) -> np.ndarray:
    """The plugin's tl_warp_sum/max/min: ``for m = width/2 .. 1: v = op(v, shfl_xor(v, m))`` in fp32."""
    v = np.asarray(v, np.float32)
    m = width >> 1
    while m > 0:
        v = op(v, shfl_xor(v, m)).astype(np.float32)
        m >>= 1
    return v


# ------------------------------------------------------------------------------------------- memory
_BUF_IDS: dict[str, int] = {}


def _buf_id(name: str) -> int:
    """A small id per buffer name (-1: unknown), for the shared-pool aliasing check."""
    return _BUF_IDS.setdefault(name, len(_BUF_IDS)) if name else -1


@dataclass
class Mem:
    """Bytes behind one data pointer: ``scope`` global / shared / local (local is (T, nbytes))."""

    name: str
    scope: str
    data: np.ndarray
    # shared only: race bookkeeping per byte
    w_tid: np.ndarray | None = None
    w_epoch: np.ndarray | None = None
    r_min: np.ndarray | None = None
    r_max: np.ndarray | None = None
    r_epoch: np.ndarray | None = None
    pending: np.ndarray | None = None
    w_buf: np.ndarray | None = None
    init: np.ndarray | None = None  # local only: which bytes each thread has written

    @classmethod
    def shared(cls, name: str, nbytes: int) -> Mem:
        n = nbytes
        return cls(name, "shared", np.zeros(n, np.uint8), np.full(n, -1, np.int32), np.full(n, -1, np.int64),
                   np.full(n, -1, np.int32), np.full(n, -1, np.int32), np.full(n, -1, np.int64),
                   np.zeros(n, np.bool_), np.full(n, -1, np.int32))


@dataclass
class Ptr:
    """A pointer value: memory + per-thread byte offset."""

    mem: Mem
    off: np.ndarray
    elem: DType
    buf: str = ""  # the buffer it points into ("" when unknown)


@dataclass
class _Copy:
    mem: Mem
    idx: np.ndarray   # flat byte indices
    data: np.ndarray  # bytes to land
    tids: np.ndarray  # issuing thread per byte
    buf: int          # destination buffer id


# ------------------------------------------------------------------------------------------- emulator
_BIN = {
    "Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Min": np.minimum, "Max": np.maximum,
    "EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal, "GT": np.greater,
    "GE": np.greater_equal, "And": np.logical_and, "Or": np.logical_or, "BitwiseAnd": np.bitwise_and,
    "BitwiseOr": np.bitwise_or, "BitwiseXor": np.bitwise_xor, "LShift": np.left_shift, "RShift": np.right_shift,
}


def _truncdiv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    b = np.where(b == 0, 1, b)
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q)


def _truncmod(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    b = np.where(b == 0, 1, b)
    return np.fmod(a, b)


def _floordiv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.floor_divide(a, np.where(b == 0, 1, b))


def _floormod(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.mod(a, np.where(b == 0, 1, b))


_MATH = {
    "exp2": np.exp2, "exp2f": np.exp2, "exp": np.exp, "expf": np.exp, "__expf": np.exp, "log": np.log,
    "logf": np.log, "log2": np.log2, "log2f": np.log2, "sqrt": np.sqrt, "sqrtf": np.sqrt, "fabs": np.abs,
    "fabsf": np.abs, "abs": np.abs, "tanh": np.tanh, "tanhf": np.tanh, "floor": np.floor, "floorf": np.floor,
    "ceil": np.ceil, "ceilf": np.ceil, "sin": np.sin, "sinf": np.sin, "cos": np.cos, "cosf": np.cos,
    "rsqrt": lambda x: 1 / np.sqrt(x), "rsqrtf": lambda x: 1 / np.sqrt(x), "__frsqrt_rn": lambda x: 1 / np.sqrt(x),
    "exp10": lambda x: np.power(10.0, x), "round": np.round, "trunc": np.trunc,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "fmaxf": np.fmax, "fminf": np.fmin, "fmax": np.fmax, "fmin": np.fmin, "pow": np.power, "powf": np.power,
    "hexp2": np.exp2, "hexp": np.exp,
}


class Emulator:
    """Runs one device PrimFunc over its grid. `args` maps parameter names to a global `Mem` (pointers) or a
    scalar; ``patch`` maps a helper name to ``fn(emu, args) -> value`` overriding it."""

    def __init__(self, func: tirx.PrimFunc, args: dict[str, Any], patch: dict[str, Callable] | None = None,
                 deferred_cp_async: bool = True):
        self.func = func
        self.patch = patch or {}
        self.deferred = deferred_cp_async
        self.env: dict[Any, Any] = {}
        self.mems: dict[int, Mem] = {}   # buffer var -> its bytes
        self.bases: dict[int, int] = {}  # buffer var -> byte offset of element 0 in those bytes
        for p in func.params:
            if _name(p) in args:
                v = args[_name(p)]
                if isinstance(v, Mem):
                    self.env[_key(p)] = Ptr(v, np.int64(0), DType("uint8", 1))
                else:
                    self.env[_key(p)] = np.asarray(v, dtype_of(p).np)
        self.block_dims, self.thread_dims = self._launch_dims(func.body)
        tx, ty, tz = self.thread_dims
        self.T = tx * ty * tz
        tid = np.arange(self.T, dtype=np.int32)
        self.tid = tid
        self.tidx = {"threadIdx.x": tid % tx, "threadIdx.y": (tid // tx) % ty, "threadIdx.z": tid // (tx * ty)}
        self.mask = np.ones(self.T, np.bool_)
        self.epoch = 0
        self.groups: list[list[_Copy]] = []
        self.open_group: list[_Copy] = []
        self.stats: dict[str, int] = {}

    # ---------------------------------------------------------------- launch
    def _launch_dims(self, body: Any) -> tuple[list[int], list[int]]:
        blocks, threads = [1, 1, 1], [1, 1, 1]

        def visit(s: Any) -> None:
            if isinstance(s, tirx.AttrStmt) and s.attr_key == "thread_extent":
                tag = s.node.thread_tag
                ext = self._const(s.value)
                axis = "xyz".index(tag[-1])
                (blocks if tag.startswith("blockIdx") else threads)[axis] = ext
            for k in ("body", "then_case", "else_case"):
                c = getattr(s, k, None)
                if c is not None:
                    visit(c)
            if isinstance(s, tirx.SeqStmt):
                for c in s.seq:
                    visit(c)

        visit(body)
        return blocks, threads

    def _const(self, e: Any) -> int:
        v = self.compile(e)(self)
        v = np.asarray(v)
        if v.ndim:
            raise EmulationError(f"launch extent {e} is not uniform")
        return int(v)

    def run(self) -> None:
        body = self.compile_stmt(self.func.body)
        with np.errstate(all="ignore"):
            for bz, by, bx in itertools.product(*(range(n) for n in self.block_dims[::-1])):
                self.block = {"blockIdx.x": bx, "blockIdx.y": by, "blockIdx.z": bz}
                self.mask = np.ones(self.T, np.bool_)
                self.epoch += 1
                body(self)
                self._wait_group(0)
                if self.open_group:
                    raise EmulationError("cp.async copies issued but never committed/waited")

    # ---------------------------------------------------------------- compile: statements
    def compile_stmt(self, s: Any) -> Callable[[Emulator], None]:
        kind = type(s).__name__
        fn = getattr(self, f"_s_{kind}", None)
        if fn is None:
            raise NotImplementedError(f"statement {kind}")
        return fn(s)

    def _s_SeqStmt(self, s: Any) -> Callable:
        parts = [self.compile_stmt(c) for c in s.seq]

        def run(emu: Emulator) -> None:
            for p in parts:
                p(emu)
        return run

    def _s_DeclBuffer(self, s: Any) -> Callable:
        data = self.compile(s.data) if s.data is not None else None
        key, name = _key(s.buffer), s.buffer.name

        def run(emu: Emulator) -> None:
            p = data(emu) if data is not None else None
            if not isinstance(p, Ptr):
                raise NotImplementedError(f"decl_buffer {name} without a pointer")
            if np.asarray(p.off).ndim:
                raise NotImplementedError(f"decl_buffer {name} at a thread-varying address")
            emu.mems[key] = p.mem
            emu.bases[key] = int(p.off)
        return run

    def _s_AllocBuffer(self, s: Any) -> Callable:
        buf = s.buffer
        scope = buf.scope()
        dt = _parse_dtype(str(buf.dtype))
        n = 1
        for d in buf.shape:
            n *= int(d)
        nbytes = n * np.dtype(dt.store_np).itemsize * dt.lanes
        var = buf.id_

        def run(emu: Emulator) -> None:
            emu.bases[var] = 0
            if scope.startswith("shared"):
                emu.mems[var] = Mem.shared(buf.name, nbytes)
            elif scope.startswith("local"):
                emu.mems[var] = Mem(buf.name, "local", np.zeros((emu.T, nbytes), np.uint8),
                                    init=np.zeros((emu.T, nbytes), np.bool_))
            else:
                raise NotImplementedError(f"allocation in scope {scope!r}")
        return run

    def _s_AttrStmt(self, s: Any) -> Callable:
        body = self.compile_stmt(s.body)
        if s.attr_key != "thread_extent":
            return body
        var, tag = _key(s.node.var), s.node.thread_tag

        def run(emu: Emulator) -> None:
            if tag.startswith("blockIdx"):
                emu.env[var] = np.int32(emu.block[tag])
            else:
                emu.env[var] = emu.tidx[tag]
            body(emu)
        return run

    def _s_Evaluate(self, s: Any) -> Callable:
        f = self.compile(s.value)
        return lambda emu: (f(emu), None)[1]

    def _s_BufferStore(self, s: Any) -> Callable:
        buf = s.buffer
        idx = self._flat_index(buf, s.indices)
        val = self.compile(s.value)
        dt = _parse_dtype(str(buf.dtype))
        var = buf.id_
        off0 = int(buf.elem_offset) if isinstance(buf.elem_offset, tirx.IntImm) else None
        if off0 is None:
            raise NotImplementedError(f"buffer {buf.name} with a symbolic elem_offset")

        def run(emu: Emulator) -> None:
            i = idx(emu) + off0
            emu._store(emu.mems[var], dt, i, val(emu), buf.name, emu.bases[var])
        return run

    def _s_For(self, s: Any) -> Callable:
        lo, ext = self.compile(s.min), self.compile(s.extent)
        body = self.compile_stmt(s.body)
        var = _key(s.loop_var)
        vt = dtype_of(s.loop_var).np
        if int(s.kind) == 4:  # thread binding
            raise NotImplementedError("thread-bound For loop")

        def run(emu: Emulator) -> None:
            a, n = emu._uniform(lo(emu), "loop min"), emu._uniform(ext(emu), "loop extent")
            for k in range(a, a + n):
                emu.env[var] = vt(k)
                body(emu)
        return run

    def _s_While(self, s: Any) -> Callable:
        cond, body = self.compile(s.condition), self.compile_stmt(s.body)

        def run(emu: Emulator) -> None:
            saved = emu.mask
            while True:
                c = np.broadcast_to(cond(emu), saved.shape)
                emu.mask = emu.mask & c
                if not emu.mask.any():
                    break
                body(emu)
            emu.mask = saved
        return run

    def _s_IfThenElse(self, s: Any) -> Callable:
        cond = self.compile(s.condition)
        then = self.compile_stmt(s.then_case)
        other = self.compile_stmt(s.else_case) if s.else_case is not None else None

        def run(emu: Emulator) -> None:
            c = np.asarray(cond(emu))
            saved = emu.mask
            if c.ndim == 0:
                if c:
                    then(emu)
                elif other is not None:
                    other(emu)
                return
            for m, branch in ((saved & c, then), (saved & ~c, other)):
                if branch is not None and m.any():
                    emu.mask = m
                    branch(emu)
            emu.mask = saved
        return run

    def _s_LetStmt(self, s: Any) -> Callable:
        val, body, var = self.compile(s.value), self.compile_stmt(s.body), _key(s.var)

        def run(emu: Emulator) -> None:
            emu.env[var] = val(emu)
            body(emu)
        return run

    def _s_Bind(self, s: Any) -> Callable:
        val, var = self.compile(s.value), _key(s.var)

        def run(emu: Emulator) -> None:
            emu.env[var] = val(emu)
        return run

    def _s_AssertStmt(self, s: Any) -> Callable:
        cond = self.compile(s.condition)

        def run(emu: Emulator) -> None:
            c = np.broadcast_to(cond(emu), emu.mask.shape)
            if not c[emu.mask].all():
                raise EmulationError(f"device assertion failed: {s.message}")
        return run

    # ---------------------------------------------------------------- compile: expressions
    def compile(self, e: Any) -> Callable[[Emulator], Any]:
        kind = type(e).__name__
        if kind in _BIN:
            return self._binary(e, _BIN[kind])
        fn = getattr(self, f"_e_{kind}", None)
        if fn is None:
            raise NotImplementedError(f"expression {kind}: {e}")
        return fn(e)

    def _binary(self, e: Any, op: Callable) -> Callable:
        a, b = self.compile(e.a), self.compile(e.b)
        dt = dtype_of(e)
        return lambda emu: _cast(op(a(emu), b(emu)), dt)

    def _arith(self, e: Any, int_op: Callable, float_op: Callable) -> Callable:
        a, b = self.compile(e.a), self.compile(e.b)
        dt = dtype_of(e)
        op = float_op if dt.base.startswith(("float", "bfloat")) else int_op
        return lambda emu: _cast(op(a(emu), b(emu)), dt)

    def _e_Div(self, e: Any) -> Callable:
        return self._arith(e, _truncdiv, np.divide)

    def _e_Mod(self, e: Any) -> Callable:
        return self._arith(e, _truncmod, np.fmod)

    def _e_FloorDiv(self, e: Any) -> Callable:
        return self._arith(e, _floordiv, lambda a, b: np.floor(a / b))

    def _e_FloorMod(self, e: Any) -> Callable:
        return self._arith(e, _floormod, lambda a, b: a - np.floor(a / b) * b)

    def _e_Not(self, e: Any) -> Callable:
        a = self.compile(e.a)
        return lambda emu: np.logical_not(a(emu))

    def _e_BitwiseNot(self, e: Any) -> Callable:
        a = self.compile(e.a)
        return lambda emu: np.invert(a(emu))

    def _e_IntImm(self, e: Any) -> Callable:
        v = _cast(int(e.value), dtype_of(e))
        return lambda emu: v

    def _e_FloatImm(self, e: Any) -> Callable:
        v = _cast(float(e.value), dtype_of(e))
        return lambda emu: v

    def _e_Var(self, e: Any) -> Callable:
        key = _key(e)

        def run(emu: Emulator) -> Any:
            if key in emu.env:
                return emu.env[key]
            if key in emu.mems:
                return Ptr(emu.mems[key], np.int64(emu.bases[key]), DType("uint8", 1), _name(e))
            raise EmulationError(f"unbound variable {e}")
        return run

    def _e_Cast(self, e: Any) -> Callable:
        v, dt = self.compile(e.value), dtype_of(e)
        return lambda emu: _cast(v(emu), dt)

    def _e_Ramp(self, e: Any) -> Callable:
        base, stride, lanes = self.compile(e.base), self.compile(e.stride), int(e.lanes)
        dt = dtype_of(e)

        def run(emu: Emulator) -> Any:
            b = np.asarray(base(emu))
            k = np.arange(lanes).reshape((lanes,) + (1,) * max(b.ndim, 1))
            return _cast(b[None] + k * stride(emu), dt)
        return run

    def _e_Broadcast(self, e: Any) -> Callable:
        v, lanes = self.compile(e.value), int(e.lanes)

        def run(emu: Emulator) -> Any:
            x = np.asarray(v(emu))
            x = x.reshape((1,) + (x.shape or (1,)))
            return np.broadcast_to(x, (lanes, *x.shape[1:]))
        return run

    def _e_Shuffle(self, e: Any) -> Callable:
        vecs = [self.compile(v) for v in e.vectors]
        idx = [int(i) for i in e.indices]

        def run(emu: Emulator) -> Any:
            parts = []
            for v in vecs:
                x = np.asarray(v(emu))
                parts.append(x if x.ndim == 2 else x.reshape((1,) + (x.shape or (1,))))
            width = max(p.shape[1] for p in parts)
            allv = np.concatenate([np.broadcast_to(p, (p.shape[0], width)) for p in parts], 0)
            out = allv[idx]
            return out[0] if len(idx) == 1 else out
        return run

    def _e_Select(self, e: Any) -> Callable:
        return self._select(e.condition, e.true_value, e.false_value, dtype_of(e))

    def _select(self, cond_e: Any, t_e: Any, f_e: Any, dt: DType) -> Callable:
        cond, t, f = self.compile(cond_e), self.compile(t_e), self.compile(f_e)

        def run(emu: Emulator) -> Any:
            c = np.asarray(cond(emu))
            if c.ndim == 0:
                return t(emu) if c else f(emu)
            saved = emu.mask
            cm = np.broadcast_to(c, c.shape[:-1] + saved.shape).any(axis=tuple(range(c.ndim - 1)))
            emu.mask = saved & cm
            tv = t(emu) if emu.mask.any() else np.zeros((), dt.np)
            emu.mask = saved & ~np.broadcast_to(c, c.shape[:-1] + saved.shape).all(axis=tuple(range(c.ndim - 1)))
            fv = f(emu) if emu.mask.any() else np.zeros((), dt.np)
            emu.mask = saved
            return _cast(np.where(c, tv, fv), dt)
        return run

    def _e_Let(self, e: Any) -> Callable:
        val, body, var = self.compile(e.value), self.compile(e.body), _key(e.var)

        def run(emu: Emulator) -> Any:
            emu.env[var] = val(emu)
            return body(emu)
        return run

    def _e_StringImm(self, e: Any) -> Callable:
        v = str(e.value)
        return lambda emu: v

    def _flat_index(self, buf: Any, indices: Any) -> Callable:
        idx = [self.compile(i) for i in indices]
        if len(idx) == 1:
            return lambda emu: np.asarray(idx[0](emu)).astype(np.int64)
        shape = [int(d) for d in buf.shape]

        def run(emu: Emulator) -> Any:
            flat = np.int64(0)
            for i, n in zip(idx, shape):
                flat = flat * n + np.asarray(i(emu)).astype(np.int64)
            return flat
        return run

    def _e_BufferLoad(self, e: Any) -> Callable:
        buf = _buffer_of(e)
        idx = self._flat_index(buf, e.indices)
        dt = _parse_dtype(str(buf.dtype))
        var = buf.id_
        off0 = int(buf.elem_offset)

        def run(emu: Emulator) -> Any:
            return emu._load(emu.mems[var], dt, idx(emu) + off0, buf.name, emu.bases[var])
        return run

    _e_TensorLoad = _e_BufferLoad

    def _e_Call(self, e: Any) -> Callable:
        op = e.op.name
        name = op.split(".", 1)[1] if "." in op else op
        dt = dtype_of(e)
        if name in ("call_extern", "call_pure_extern"):
            fname = str(e.args[0].value)
            args = [self.compile(a) for a in e.args[1:]]
            return self._extern(fname, args, e, dt)
        if name == "address_of":
            load = e.args[0]
            buf = _buffer_of(load)
            idx = self._flat_index(buf, load.indices)
            bdt = _parse_dtype(str(buf.dtype))
            size = np.dtype(bdt.store_np).itemsize
            off0 = int(buf.elem_offset)
            dvar = buf.id_
            bname = buf.name
            return lambda emu: Ptr(emu.mems[dvar], emu.bases[dvar] + (idx(emu) + off0) * size, bdt, bname)
        if name == "tvm_access_ptr":
            tdt = dtype_of(e.args[0])
            data, off = self.compile(e.args[1]), self.compile(e.args[2])

            def acc(emu: Emulator) -> Ptr:
                p = data(emu)
                size = np.dtype(tdt.store_np).itemsize if tdt.base != "handle" else 1
                return Ptr(p.mem, p.off + np.asarray(off(emu)).astype(np.int64) * size, tdt, p.buf)
            return acc
        if name == "if_then_else":
            return self._select(e.args[0], e.args[1], e.args[2], dt)
        if name == "reinterpret":
            v = self.compile(e.args[0])
            return lambda emu: np.ascontiguousarray(v(emu)).view(dt.store_np if dt.base != "bfloat16" else np.uint16)
        if name == "buffer_data":
            return self.compile(e.args[0])
        if name == "tvm_storage_sync":
            if name in self.patch:
                f = self.patch[name]
                return lambda emu: f(emu, [])
            return lambda emu: emu._barrier()
        if name in ("likely",):
            return self.compile(e.args[0])
        if name in _MATH:
            args = [self.compile(a) for a in e.args]
            f = _MATH[name]
            return lambda emu: _cast(f(*[a(emu) for a in args]), dt)
        if name in ("shift_right", "shift_left", "bitwise_and", "bitwise_or", "bitwise_xor"):
            a, b = self.compile(e.args[0]), self.compile(e.args[1])
            f = {"shift_right": np.right_shift, "shift_left": np.left_shift, "bitwise_and": np.bitwise_and,
                 "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor}[name]
            return lambda emu: _cast(f(a(emu), b(emu)), dt)
        raise NotImplementedError(f"intrinsic {op}")

    # ---------------------------------------------------------------- helpers: memory
    def _uniform(self, v: Any, what: str) -> int:
        v = np.asarray(v)
        if v.ndim == 0:
            return int(v)
        act = v[self.mask]
        if act.size and (act != act[0]).any():
            raise EmulationError(f"{what} differs between threads: loops must have thread-uniform bounds")
        return int(act[0]) if act.size else 0

    def _full(self, idx: Any) -> np.ndarray:
        """Index array broadcast to (..., T)."""
        idx = np.asarray(idx)
        if idx.ndim == 0:
            return np.broadcast_to(idx, (self.T,))
        return np.broadcast_to(idx, (*idx.shape[:-1], self.T))

    def _byte_idx(self, mem: Mem, dt: DType, idx: np.ndarray, what: str, base: int = 0
                  ) -> tuple[np.ndarray, np.ndarray]:
        """(byte index array (..., T, size), active mask (..., T)) with a bounds check on active threads."""
        size = np.dtype(dt.store_np).itemsize
        idx = self._full(idx)
        m = np.broadcast_to(self.mask, idx.shape)
        nbytes = mem.data.shape[-1]
        start = base + idx * size
        bad = m & ((start < 0) | (start + size > nbytes))
        if bad.any():
            i = np.argwhere(bad)[0]
            raise EmulationError(f"out-of-bounds {what} of {mem.name}: element {int(idx[tuple(i)])} "
                                 f"({nbytes // size} elements) by thread {int(i[-1])}")
        start = np.where(m, start, 0)
        return start[..., None] + np.arange(size), m

    def _read_bytes(self, mem: Mem, b: np.ndarray, m: np.ndarray, what: str, buf: str = "") -> np.ndarray:
        """Bytes at (..., T, n) byte indices; shared reads are race-checked for active threads."""
        if mem.scope == "local":
            rows = np.broadcast_to(self.tid[:, None], b.shape)
            if not mem.init[rows[m], b[m]].all():
                raise EmulationError(f"{what}: reads {mem.name} (local) bytes this thread never wrote")
            return mem.data[rows, b]
        if mem.scope == "shared":
            self._check_read(mem, b, m, what, buf)
        return mem.data[b]

    def _write_bytes(self, mem: Mem, b: np.ndarray, m: np.ndarray, val: np.ndarray, what: str, buf: str = ""
                     ) -> None:
        if mem.scope == "local":
            rows = np.broadcast_to(self.tid[:, None], b.shape)
            mem.data[rows[m], b[m]] = val[m]
            mem.init[rows[m], b[m]] = True
            return
        if mem.scope == "shared":
            self._check_write(mem, b, m, what, buf=buf)
        mem.data[b[m]] = val[m]

    def _tids(self, b: np.ndarray) -> np.ndarray:
        return np.broadcast_to(self.tid[:, None], b.shape[-2:])

    def _check_read(self, mem: Mem, b: np.ndarray, m: np.ndarray, what: str, buf: str = "") -> None:
        bm, tm = b[m], np.broadcast_to(self._tids(b), b.shape)[m]
        if mem.pending[bm].any():
            raise EmulationError(f"{what}: reads {mem.name} bytes an in-flight cp.async has not landed yet "
                                 "(missing cp.async.wait_group)")
        if (mem.w_epoch[bm] < 0).any():
            raise EmulationError(f"{what}: reads {mem.name} (shared) bytes no thread of the block wrote")
        bid = _buf_id(buf)
        if bid >= 0:
            wb = mem.w_buf[bm]
            other = (wb >= 0) & (wb != bid)
            if other.any():
                names = {v: k for k, v in _BUF_IDS.items()}
                raise EmulationError(
                    f"{what}: {buf} reads bytes of {mem.name} last written through {names[int(wb[other][0])]} -- the "
                    f"two buffers overlap in the shared pool while {buf} is still live (shared-memory planning bug)")
        if mem.pending[bm].any():
            raise EmulationError(f"{what}: reads {mem.name} bytes an in-flight cp.async has not landed yet "
                                 "(missing cp.async.wait_group)")
        racy = (mem.w_epoch[bm] == self.epoch) & (mem.w_tid[bm] != tm)
        if racy.any():
            k = np.argmax(racy)
            raise EmulationError(f"{what}: shared race on {mem.name} byte {int(bm.flat[k])}: thread {int(tm.flat[k])} "
                                 f"reads what thread {int(mem.w_tid[bm].flat[k])} wrote with no barrier between")
        fresh = mem.r_epoch[bm] != self.epoch
        mem.r_min[bm[fresh]] = 1 << 30
        mem.r_max[bm[fresh]] = -1
        mem.r_epoch[bm] = self.epoch
        np.minimum.at(mem.r_min, bm, tm)
        np.maximum.at(mem.r_max, bm, tm)

    def _check_write(self, mem: Mem, b: np.ndarray, m: np.ndarray, what: str, tids: np.ndarray | None = None,
                     buf: str = "") -> None:
        bm = b[m]
        tm = np.broadcast_to(self._tids(b), b.shape)[m] if tids is None else tids
        if mem.pending[bm].any():
            raise EmulationError(f"{what}: writes {mem.name} bytes an in-flight cp.async has not landed yet")
        same = mem.r_epoch[bm] == self.epoch
        racy = same & ~((mem.r_min[bm] == tm) & (mem.r_max[bm] == tm))
        racy |= (mem.w_epoch[bm] == self.epoch) & (mem.w_tid[bm] != tm)
        if racy.any():
            k = np.argmax(racy)
            raise EmulationError(f"{what}: shared race on {mem.name} byte {int(bm.flat[k])}: thread {int(tm.flat[k])} "
                                 "overwrites bytes another thread read or wrote with no barrier between")
        mem.w_epoch[bm] = self.epoch
        mem.w_tid[bm] = tm
        mem.w_buf[bm] = _buf_id(buf)

    def _load(self, mem: Mem, dt: DType, idx: Any, what: str, base: int = 0) -> np.ndarray:
        b, m = self._byte_idx(mem, dt, idx, f"load of {what}", base)
        raw = self._read_bytes(mem, b, m, f"load of {what}", what)
        vals = np.ascontiguousarray(raw).view(dt.store_np)[..., 0]
        vals = np.where(m, vals, 0).astype(dt.store_np)
        return bf16_decode(vals) if dt.base == "bfloat16" else vals.astype(dt.np)

    def _store(self, mem: Mem, dt: DType, idx: Any, val: Any, what: str, base: int = 0) -> None:
        b, m = self._byte_idx(mem, dt, idx, f"store to {what}", base)
        v = np.asarray(val)
        v = bf16_encode(v) if dt.base == "bfloat16" else v.astype(dt.store_np)
        v = np.broadcast_to(v, m.shape)
        raw = np.ascontiguousarray(v)[..., None].view(np.uint8)
        self._write_bytes(mem, b, m, raw, f"store to {what}", what)

    def ptr_read(self, p: Ptr, nbytes: int, what: str) -> np.ndarray:
        """(T, nbytes) bytes at each thread's pointer (inactive threads read offset 0)."""
        return self._read_bytes(p.mem, *self._ptr_bytes(p, nbytes, what), what, p.buf)

    def ptr_write(self, p: Ptr, data: np.ndarray, what: str) -> None:
        b, m = self._ptr_bytes(p, data.shape[-1], what)
        self._write_bytes(p.mem, b, m, data, what, p.buf)

    def _ptr_bytes(self, p: Ptr, nbytes: int, what: str) -> tuple[np.ndarray, np.ndarray]:
        off = np.asarray(self._full(p.off), np.int64)
        bad = self.mask & ((off < 0) | (off + nbytes > p.mem.data.shape[-1]))
        if bad.any():
            raise EmulationError(f"{what}: out-of-bounds access of {p.mem.name} at byte {int(off[bad][0])}")
        off = np.where(self.mask, off, 0)
        return off[:, None] + np.arange(nbytes), self.mask

    # ---------------------------------------------------------------- helpers: sync, warps, cp.async
    def _barrier(self) -> None:
        if not self.mask.all():
            raise EmulationError(f"__syncthreads reached by {int(self.mask.sum())} of {self.T} threads "
                                 "(barrier under divergence)")
        self.epoch += 1
        self.stats["barriers"] = self.stats.get("barriers", 0) + 1

    def _full_warps(self, what: str) -> None:
        if self.T % 32:
            raise NotImplementedError(f"{what} with a block of {self.T} threads (not whole warps)")
        w = self.mask.reshape(-1, 32)
        if (w.any(1) & ~w.all(1)).any():
            raise EmulationError(f"{what} executed by a partial warp (.sync.aligned needs all 32 lanes)")

    def shfl_xor(self, v: np.ndarray, lane_mask: int) -> np.ndarray:
        self._full_warps("shfl.sync")
        return shfl_xor(np.broadcast_to(np.asarray(v), (self.T,)), lane_mask)

    def _cp_async(self, dst: Ptr, src: Ptr, nbytes: int, fill: Any) -> None:
        fill = np.broadcast_to(np.asarray(fill, np.int64), (self.T,))
        data = self.ptr_read(src, nbytes, "cp.async source").copy()
        data[np.arange(nbytes)[None, :] >= fill[:, None]] = 0
        b, m = self._ptr_bytes(dst, nbytes, "cp.async destination")
        if dst.mem.scope != "shared":
            raise EmulationError("cp.async destination is not shared memory")
        tids = np.broadcast_to(self.tid[:, None], b.shape)[m]
        if not self.deferred:
            self._write_bytes(dst.mem, b, m, data, "cp.async", dst.buf)
            return
        self._check_write(dst.mem, b, m, "cp.async", tids, dst.buf)
        dst.mem.pending[b[m]] = True
        self.open_group.append(_Copy(dst.mem, b[m], data[m], tids, _buf_id(dst.buf)))

    def _commit(self) -> None:
        self.groups.append(self.open_group)
        self.open_group = []

    def _wait_group(self, n: int) -> None:
        while len(self.groups) > n:
            for c in self.groups.pop(0):
                c.mem.pending[c.idx] = False
                c.mem.data[c.idx] = c.data
                c.mem.w_epoch[c.idx] = self.epoch
                c.mem.w_tid[c.idx] = c.tids
                c.mem.w_buf[c.idx] = c.buf

    # ---------------------------------------------------------------- extern helpers
    def _extern(self, fname: str, args: list[Callable], e: Any, dt: DType) -> Callable:
        if fname in self.patch:
            f = self.patch[fname]
            return lambda emu: f(emu, [a(emu) for a in args])
        impl = getattr(self, f"_x_{fname}", None)
        if impl is not None:
            return lambda emu: impl([a(emu) for a in args], dt, e)
        if fname in _MATH:
            f = _MATH[fname]
            return lambda emu: _cast(f(*[a(emu) for a in args]), dt)
        raise NotImplementedError(f"device helper {fname}")

    def call_default(self, fname: str, args: list[Any], dt: DType | None = None) -> Any:
        """Run the built-in model of helper `fname` (for patches that wrap it)."""
        return getattr(self, f"_x_{fname}")(args, dt or DType("void", 1), None)

    def _x_tl_cp_async16(self, a: list, dt: DType, e: Any) -> None:
        self._cp_async(a[0], a[1], 16, a[2] if len(a) > 2 else 16)

    def _x_tl_cp_async_commit(self, a: list, dt: DType, e: Any) -> None:
        self._commit()

    def _x_tl_cp_async_wait_group(self, a: list, dt: DType, e: Any) -> None:
        self._wait_group(int(a[0]))

    _x_tl_cp_async_wait = _x_tl_cp_async_wait_group

    def _ldmatrix(self, a: list, trans: bool) -> None:
        self._full_warps("ldmatrix")
        regs, smem = a
        if smem.mem.scope != "shared":
            raise EmulationError("ldmatrix source is not shared memory")
        if (np.asarray(smem.off) % 16).any():
            raise EmulationError("ldmatrix row address not 16-byte aligned")
        rows = self.ptr_read(smem, 16, "ldmatrix").view(np.uint16)
        out = ldmatrix_x4(rows, trans)
        self.ptr_write(regs, np.ascontiguousarray(out).view(np.uint8).reshape(self.T, 16), "ldmatrix dest")

    def _x_tl_ldmatrix_x4(self, a: list, dt: DType, e: Any) -> None:
        self._ldmatrix(a, False)

    def _x_tl_ldmatrix_x4_trans(self, a: list, dt: DType, e: Any) -> None:
        self._ldmatrix(a, True)

    def _mma(self, a: list, kind: str) -> None:
        self._full_warps(f"mma.sync ({kind})")
        acc, ap, bp = a
        c = self.ptr_read(acc, 16, "mma C").view(np.int32 if kind == "s8" else np.float32)
        av = self.ptr_read(ap, 16, "mma A").view(np.uint32)
        bv = self.ptr_read(bp, 8, "mma B").view(np.uint32)
        d = mma_sync(kind, av, bv, c)
        self.ptr_write(acc, np.ascontiguousarray(d).view(np.uint8).reshape(self.T, 16), "mma D")
        self.stats["mma"] = self.stats.get("mma", 0) + 1

    def _x_tl_mma_f16_f32(self, a: list, dt: DType, e: Any) -> None:
        self._mma(a, "f16")

    def _x_tl_mma_bf16_f32(self, a: list, dt: DType, e: Any) -> None:
        self._mma(a, "bf16")

    def _x_tl_mma_tf32_f32(self, a: list, dt: DType, e: Any) -> None:
        self._mma(a, "tf32")

    def _x_tl_mma_s8_s32(self, a: list, dt: DType, e: Any) -> None:
        self._mma(a, "s8")

    def _x_tl_regs_copy16(self, a: list, dt: DType, e: Any) -> None:
        """Four 32-bit registers moved between per-thread arrays (an A fragment taken from registers)."""
        dst, src = a
        if dst.mem.scope != "local" or src.mem.scope != "local":
            raise EmulationError("tl_regs_copy16 moves registers: both pointers must be local arrays")
        self.ptr_write(dst, self.ptr_read(src, 16, "register A fragment").copy(), "register A fragment")

    def _x_tl_bits32(self, a: list, dt: DType, e: Any) -> np.ndarray:
        return np.ascontiguousarray(np.asarray(a[0], np.float32)).view(np.uint32)

    def _x_tl_shfl_xor(self, a: list, dt: DType, e: Any) -> np.ndarray:
        return self.shfl_xor(a[0], int(a[1]))

    def _warp_reduce(self, a: list, op: Callable) -> np.ndarray:
        self._full_warps("warp reduction (shfl.sync)")
        return warp_butterfly(np.broadcast_to(np.asarray(a[0], np.float32), (self.T,)), int(a[1]), op)

    def _x_tl_warp_sum(self, a: list, dt: DType, e: Any) -> np.ndarray:
        return self._warp_reduce(a, np.add)

    def _x_tl_warp_max(self, a: list, dt: DType, e: Any) -> np.ndarray:
        return self._warp_reduce(a, np.fmax)

    def _x_tl_warp_min(self, a: list, dt: DType, e: Any) -> np.ndarray:
        return self._warp_reduce(a, np.fmin)

    def _atomic(self, a: list, dt: DType, op: Any) -> np.ndarray:
        """Atomic read-modify-write, applied thread by thread in thread order; returns the old values."""
        p, v = a[0], np.broadcast_to(np.asarray(a[1]), (self.T,))
        size = np.dtype(p.elem.store_np).itemsize
        b, m = self._ptr_bytes(p, size, "atomic")
        view = p.mem.data.view(p.elem.store_np) if p.mem.scope != "local" else None
        if view is None:
            raise NotImplementedError("atomic on local memory")
        if p.mem.scope == "shared":
            self.stats["shared_atomics"] = self.stats.get("shared_atomics", 0) + 1
        idx = b[:, 0] // size
        old = np.zeros(self.T, p.elem.store_np)
        for t in np.nonzero(m)[0]:
            old[t] = view[idx[t]]
            view[idx[t]] = op(view[idx[t]], v[t].astype(p.elem.store_np))
        return old

    def _x_atomicAdd(self, a: list, dt: DType, e: Any) -> np.ndarray:
        return self._atomic(a, dt, lambda x, y: x + y)

    _x_tl_atomic_add = _x_atomicAdd

    def _x_tl_atomic_max(self, a: list, dt: DType, e: Any) -> np.ndarray:
        return self._atomic(a, dt, lambda x, y: max(x, y))

    def _x_tl_atomic_min(self, a: list, dt: DType, e: Any) -> np.ndarray:
        return self._atomic(a, dt, lambda x, y: min(x, y))

    _x_atomicMax = _x_tl_atomic_max
    _x_atomicMin = _x_tl_atomic_min


# ------------------------------------------------------------------------------------------- entry point
def _global_mem(name: str, t: Any) -> Mem:
    import torch

    if not t.is_contiguous():
        raise ValueError(f"{name}: emulate() needs contiguous tensors")
    if t.dtype == torch.bfloat16:
        t = t.view(torch.int16)
    return Mem(name, "global", t.detach().numpy().reshape(-1).view(np.uint8))


def emulate(artifact: Any, *tensors: Any, patch: dict[str, Callable] | None = None,
            deferred_cp_async: bool = True) -> dict[str, int]:
    """Run `artifact`'s device kernels on `tensors` (torch CPU tensors / scalars in the kernel's parameter
    order), in place. Returns counters (barriers, mma ops, ...) for tests."""
    params = artifact.params() if callable(artifact.params) else artifact.params
    if len(params) != len(tensors):
        raise ValueError(f"expected {len(params)} arguments ({[p.name for p in params]}), got {len(tensors)}")
    by_name: dict[str, Any] = {}
    sizes: dict[str, int] = {}
    for p, t in zip(params, tensors):
        if getattr(p, "is_tensor", True) and hasattr(t, "numpy"):
            by_name[p.name] = _global_mem(p.name, t)
            for d, n in zip(p.shape, t.shape):
                if not isinstance(d, int):
                    sizes[str(d)] = int(n)
        else:
            by_name[p.name] = t
    order = artifact.metadata.get("device_functions") or [gv.name_hint for gv in artifact.device_mod.functions]
    funcs = {gv.name_hint: f for gv, f in artifact.device_mod.functions.items()}
    stats: dict[str, int] = {}
    for fname in order:
        func = funcs[fname]
        args: dict[str, Any] = {}
        for v in func.params:
            nm = _name(v)
            key = nm[:-4] if nm.endswith("_ptr") and nm[:-4] in by_name else nm
            if key in by_name:
                args[nm] = by_name[key]
            elif nm in sizes:
                args[nm] = sizes[nm]
            else:
                raise NotImplementedError(f"device parameter {nm} of {fname}: no matching kernel argument")
        emu = Emulator(func, args, patch=patch, deferred_cp_async=deferred_cp_async)
        emu.run()
        for k, v in emu.stats.items():
            stats[k] = stats.get(k, 0) + v
    return stats
