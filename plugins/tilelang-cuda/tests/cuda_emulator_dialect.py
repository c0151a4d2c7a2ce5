"""Models of the CUDA dialect's device helpers (the plugin's ``tilelang_cuda/*.cuh`` headers) for `cuda_emulator`.

Mixed into `cuda_emulator.Emulator`; each ``_x_<helper>`` runs one helper over the active threads (lock step).

- mbarriers (``T.alloc_barrier``): objects in shared memory with an arrival count, a transaction count and a
  phase (PTX ISA "mbarrier"). A phase completes when its pending arrivals reach zero and the bytes its
  ``expect_tx`` announced have all arrived; ``mbarrier.try_wait.parity p`` returns once the phase of parity `p`
  has completed. In lock step a wait on a phase that has not completed can never return: a deadlock error. A
  completed wait orders what the arriving threads did before it (the race checks' epoch advances). Errors: an
  arrival beyond the count, more bytes landing than expected, a barrier used before its initialisation.
- TMA (``T.tma_copy`` / ``T.tma_load``): a load copies the box of the kernel tensor (out of bounds: zeros) in the
  32/64/128-byte swizzle of its tensor map (the address bits ``[4, 4+b)`` XOR ``[7, 7+b)`` of the 1024-byte
  aligned shared window) and completes its bytes on the barrier; the bytes land when the phase completes (reading
  them before raises). Stores write the box to the tensor at issue; ``cp.async.bulk.wait_group`` is checked for
  balance.
- wgmma with a scale-d operand (``T.ptx_wgmma_ss``, the wgmma emitter): scale-d 0 overwrites the accumulators.
- thread-block clusters: blocks run one after another, so a cluster barrier is checked like a block barrier and
  ``%cluster_ctarank`` follows ``__cluster_dims__``; cross-CTA data (DSMEM, multicast) is not modelled (a
  multicast load whose mask is only the issuing CTA is a unicast load).
- ``setmaxnreg`` / ``griddepcontrol`` / launch markers: checked for warpgroup convergence, otherwise no effect.
- explicit loads / stores (``ld.global.nc``, ``st.shared`` ...), ``elect.sync``, ``__ffs`` / ``__fns``,
  ``cp.async`` of 4/8/16 bytes with mbarrier arrivals, ``ldmatrix.x1/x2``, and the Philox4x32-10 generator of
  ``T.rng_*`` (numpy reimplementation of the algorithm).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

_SWIZZLE_BITS = {0: 0, 1: 1, 2: 2, 3: 3}  # CUtensorMapSwizzle: none, 32B, 64B, 128B -> XOR width in bits


@dataclass
class UserBarrier:
    """One mbarrier object of shared memory."""

    count: int
    pending: int
    tx: int = 0
    phase: int = 0  # completed phases
    copies: list = field(default_factory=list)


def swizzle_address(addr: np.ndarray, swizzle: int) -> np.ndarray:
    """A TMA / wgmma swizzled byte address: bits ``[4, 4+b)`` XOR bits ``[7, 7+b)`` (``b`` 1, 2, 3)."""
    b = _SWIZZLE_BITS[swizzle]
    if not b:
        return addr
    mask = (1 << b) - 1
    return addr ^ (((addr >> 7) & mask) << 4)


# ------------------------------------------------------------------------------------------- Philox4x32-10
_M0, _M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
_W0, _W1 = np.uint32(0x9E3779B9), np.uint32(0xBB67AE85)


def philox4x32_10(ctr: np.ndarray, key: np.ndarray) -> np.ndarray:
    """Philox4x32 with 10 rounds over (T, 4) uint32 counters and (T, 2) uint32 keys -> (T, 4) uint32."""
    c = ctr.astype(np.uint32).copy()
    k = key.astype(np.uint32).copy()
    for _ in range(10):
        p0 = _M0 * c[:, 0].astype(np.uint64)
        p1 = _M1 * c[:, 2].astype(np.uint64)
        hi0, lo0 = (p0 >> np.uint64(32)).astype(np.uint32), (p0 & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        hi1, lo1 = (p1 >> np.uint64(32)).astype(np.uint32), (p1 & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        c = np.stack([hi1 ^ c[:, 1] ^ k[:, 0], lo1, hi0 ^ c[:, 3] ^ k[:, 1], lo0], axis=1)
        with np.errstate(over="ignore"):
            k = np.stack([k[:, 0] + _W0, k[:, 1] + _W1], axis=1)
    return c


class DialectHelpers:
    """The dialect helper models (see the module docstring); mixed into `cuda_emulator.Emulator`."""

    # ---------------------------------------------------------------- state
    def _reset_dialect_state(self) -> None:
        self.user_bars: dict[tuple[int, int], UserBarrier] = {}
        self.bulk_open = 0
        self.bulk_groups: list[int] = []
        self.cluster_dims = [1, 1, 1]
        self.tmem = np.zeros((128, 512), np.uint32)  # tensor memory: 128 datapaths x 512 32-bit columns
        self.tmem_alloc: dict[int, int] = {}  # first column -> columns
        self.tmem_relinquished = False  # the block gave up its allocation permit

    def _bar_key(self, p: Any) -> tuple[int, int]:
        if p.mem.scope != "shared":
            from cuda_emulator import EmulationError

            raise EmulationError(f"mbarrier in {p.mem.scope} memory ({p.mem.name}); it must be in shared memory")
        off = np.asarray(p.off, np.int64)
        vals = np.unique(self._full(off)[self.mask])
        if vals.size != 1:
            from cuda_emulator import EmulationError

            raise EmulationError(f"threads address different mbarriers of {p.mem.name} in one call")
        return id(p.mem), int(vals[0])

    def _bar(self, p: Any, what: str) -> UserBarrier:
        from cuda_emulator import EmulationError

        key = self._bar_key(p)
        if key not in self.user_bars:
            raise EmulationError(f"{what}: mbarrier {p.buf}@{key[1]} used before mbarrier.init")
        return self.user_bars[key]

    def _complete(self, bar: UserBarrier) -> None:
        if bar.pending == 0 and bar.tx == 0:
            for c in bar.copies:
                c.mem.pending[c.idx] = False
                c.mem.data[c.idx] = c.data
                c.mem.w_epoch[c.idx] = self.epoch - 1
                c.mem.w_tid[c.idx] = c.tids
                c.mem.w_buf[c.idx] = c.buf
                c.mem.proxy_ok[c.idx] = True
            bar.copies = []
            bar.phase += 1
            bar.pending = bar.count
            self.stats["mbarrier_phases"] = self.stats.get("mbarrier_phases", 0) + 1

    def _arrive(self, bar: UserBarrier, n: int, what: str) -> None:
        from cuda_emulator import EmulationError

        if n > bar.pending:
            raise EmulationError(f"{what}: {n} arrivals on an mbarrier whose phase expects {bar.pending} more "
                                 f"(count {bar.count}): the arrivals overrun into the next phase")
        bar.pending -= n
        self._complete(bar)

    # ---------------------------------------------------------------- mbarrier helpers
    def _x_tl_mbarrier_init(self, a: list, dt: Any, e: Any) -> None:
        count = np.broadcast_to(np.asarray(a[1], np.int64), (self.T,))
        for t in np.nonzero(self.mask)[0]:
            p = a[0]
            off = int(self._full(np.asarray(p.off, np.int64))[t])
            self.user_bars[(id(p.mem), off)] = UserBarrier(int(count[t]), int(count[t]))
            # the barrier word is initialised (the race checks see a write by this thread)
            self._check_write(p.mem, off + np.arange(8), np.ones(8, np.bool_), "mbarrier.init", np.full(8, t),
                              p.buf)

    def _x_tl_fence_barrier_init(self, a: list, dt: Any, e: Any) -> None:
        return None

    def _x_tl_mbarrier_arrive(self, a: list, dt: Any, e: Any) -> None:
        bar = self._bar(a[0], "mbarrier.arrive")
        self._arrive(bar, int(self.mask.sum()), "mbarrier.arrive")

    def _x_tl_mbarrier_expect_tx(self, a: list, dt: Any, e: Any) -> None:
        bar = self._bar(a[0], "mbarrier.expect_tx")
        nbytes = np.broadcast_to(np.asarray(a[1], np.int64), (self.T,))
        bar.tx += int(nbytes[self.mask].sum())

    def _x_tl_mbarrier_arrive_expect_tx(self, a: list, dt: Any, e: Any) -> None:
        self._x_tl_mbarrier_expect_tx(a, dt, e)
        self._x_tl_mbarrier_arrive(a, dt, e)

    def _x_tl_mbarrier_wait_parity(self, a: list, dt: Any, e: Any) -> None:
        from cuda_emulator import EmulationError

        bar = self._bar(a[0], "mbarrier.try_wait.parity")
        parity = np.unique(np.broadcast_to(np.asarray(a[1], np.int64), (self.T,))[self.mask])
        if parity.size != 1:
            raise EmulationError("mbarrier.try_wait.parity: threads wait on different parities of one barrier")
        roles = getattr(self, "roles", None)
        if bar.phase % 2 == int(parity[0]) % 2 and roles is not None:  # another warp role may complete it
            roles.wait_until(lambda: bar.phase % 2 != int(parity[0]) % 2)
        if bar.phase % 2 == int(parity[0]) % 2:
            raise EmulationError(f"mbarrier.try_wait.parity {int(parity[0])}: the barrier's phase {bar.phase} "
                                 f"(parity {bar.phase % 2}) has {bar.pending} of {bar.count} arrivals and "
                                 f"{bar.tx} transaction bytes outstanding and nothing else can run: the wait never "
                                 "returns (deadlock)")
        self.epoch += 1  # the completed phase orders the arrivals' writes before what the waiters do next
        self.stats["mbarrier_waits"] = self.stats.get("mbarrier_waits", 0) + 1

    def _x_tl_cp_async_mbarrier_arrive_noinc(self, a: list, dt: Any, e: Any) -> None:
        """Arrive when this thread's earlier cp.async copies land: they land now (in lock step), then arrive."""
        self._land_cp_async_of(self.tid[self.mask])
        self._x_tl_mbarrier_arrive(a, dt, e)

    def _x_tl_cp_async_mbarrier_arrive(self, a: list, dt: Any, e: Any) -> None:
        """``cp.async.mbarrier.arrive`` (not noinc): the pending count grows by one per thread first."""
        bar = self._bar(a[0], "cp.async.mbarrier.arrive")
        n = int(self.mask.sum())
        bar.pending += n
        self._land_cp_async_of(self.tid[self.mask])
        self._arrive(bar, n, "cp.async.mbarrier.arrive")

    def _land_cp_async_of(self, tids: np.ndarray) -> None:
        for group in [*self.groups, self.open_group]:
            for c in list(group):
                if np.isin(c.tids, tids).all():
                    c.mem.pending[c.idx] = False
                    c.mem.data[c.idx] = c.data
                    c.mem.w_epoch[c.idx] = self.epoch
                    c.mem.w_tid[c.idx] = c.tids
                    c.mem.w_buf[c.idx] = c.buf
                    group.remove(c)

    # ---------------------------------------------------------------- cp.async of 4 / 8 / 16 bytes
    def _x_tl_cp_async_4(self, a: list, dt: Any, e: Any) -> None:
        self._cp_async(a[0], a[1], 4, a[2])

    def _x_tl_cp_async_8(self, a: list, dt: Any, e: Any) -> None:
        self._cp_async(a[0], a[1], 8, a[2])

    def _x_tl_cp_async_16(self, a: list, dt: Any, e: Any) -> None:
        self._cp_async(a[0], a[1], 16, a[2])

    # ---------------------------------------------------------------- TMA
    def _tensor_map(self, token: str, what: str) -> tuple[Any, tuple[int, ...], int, list[int], int]:
        from cuda_emulator import EmulationError

        m = re.fullmatch(r"tl_tmap:(\w+):([0-9x]+):(\d+)", token)
        if m is None:
            raise EmulationError(f"{what}: {token!r} is not a tensor-map token")
        name, box, swizzle = m.group(1), [int(b) for b in m.group(2).split("x")], int(m.group(3))
        if name not in self.tensors:
            raise EmulationError(f"{what}: no kernel tensor {name!r} for its tensor map")
        gmem, shape, size = self.tensors[name]
        if len(shape) != len(box):
            raise EmulationError(f"{what}: the {len(box)}-D box of tensor {name} of shape {shape}")
        if swizzle and box[-1] * size > {1: 32, 2: 64, 3: 128}[swizzle]:
            raise EmulationError(f"{what}: box rows of {box[-1] * size} bytes exceed the swizzle span")
        return gmem, shape, size, box, swizzle

    def _box_slices(self, shape: tuple[int, ...], box: list[int], origin: list[int]) -> tuple[Any, Any]:
        """(slices into the tensor, slices into the box) of the in-bounds part."""
        src, dst = [], []
        for o, b, n in zip(origin, box, shape):
            lo, hi = max(o, 0), min(o + b, n)
            if lo >= hi:
                return None, None
            src.append(slice(lo, hi))
            dst.append(slice(lo - o, hi - o))
        return tuple(src), tuple(dst)

    def _smem_window(self, p: Any, nbytes: int, what: str) -> np.ndarray:
        """Per-byte offsets into `p.mem` of the `nbytes` at `p` (one thread's uniform pointer), after the window's
        1024-byte aligned emulated address is known."""
        from cuda_emulator import EmulationError

        if p.mem.scope != "shared":
            raise EmulationError(f"{what}: the shared side is in {p.mem.scope} memory")
        off = np.unique(self._full(np.asarray(p.off, np.int64))[self.mask])
        if off.size != 1:
            raise EmulationError(f"{what}: threads give different shared addresses")
        b = int(off[0]) + np.arange(nbytes)
        if b[0] < 0 or b[-1] >= p.mem.data.shape[-1]:
            raise EmulationError(f"{what}: box of {nbytes} bytes out of bounds of {p.mem.name}")
        return b

    def _tma_load(self, a: list, rank: int) -> None:
        from cuda_emulator import EmulationError, _buf_id, _Copy

        what = f"cp.async.bulk.tensor.{rank}d (load)"
        token, dst, bar_p, *coords = a
        gmem, shape, size, box, swizzle = self._tensor_map(str(token), what)
        if len(coords) != rank or rank != len(box):
            raise EmulationError(f"{what}: {len(coords)} coordinates for a {len(box)}-D map")
        bar = self._bar(bar_p, what)
        if int(self.mask.sum()) != 1:
            raise EmulationError(f"{what} issued by {int(self.mask.sum())} threads; one thread issues a TMA copy "
                                 "(each would copy the box again)")
        t = int(np.nonzero(self.mask)[0][0])
        origin = [int(np.broadcast_to(np.asarray(c, np.int64), (self.T,))[t]) for c in reversed(coords)]
        tensor = gmem.data.reshape(*shape[:-1], shape[-1] * size)
        out = np.zeros((*box[:-1], box[-1] * size), np.uint8)
        src, dsl = self._box_slices(shape, box, origin)
        if src is not None:
            s = (*src[:-1], slice(src[-1].start * size, src[-1].stop * size))
            d = (*dsl[:-1], slice(dsl[-1].start * size, dsl[-1].stop * size))
            out[d] = tensor[s]
        flat = out.reshape(-1)
        b = self._smem_window(dst, flat.size, what)
        base = int(self._smem_address(dst)[t]) if np.ndim(self._smem_address(dst)) else int(self._smem_address(dst))
        if swizzle and base % {1: 256, 2: 512, 3: 1024}[swizzle]:
            raise EmulationError(f"{what}: swizzled destination {dst.buf} not aligned to the swizzle repeat")
        if base % 128:
            raise EmulationError(f"{what}: shared destination {dst.buf} not 128-byte aligned")
        rel = swizzle_address(base + np.arange(flat.size), swizzle) - base
        target = b[0] + rel
        self._check_write(dst.mem, target, np.ones(target.shape, np.bool_), what, np.full(target.shape, t), dst.buf)
        dst.mem.pending[target] = True
        bar.copies.append(_Copy(dst.mem, target, flat, np.full(target.shape, t, np.int32), _buf_id(dst.buf)))
        bar.tx -= flat.size
        if bar.tx < 0:
            raise EmulationError(f"{what}: {flat.size} bytes complete on an mbarrier that expects {bar.tx + flat.size} "
                                 "more (missing or short mbarrier.expect_tx)")
        self._complete(bar)
        self.stats["tma"] = self.stats.get("tma", 0) + 1

    def _x_tl_tma_load_multicast(self, a: list, dt: Any, e: Any) -> None:
        """``.multicast::cluster`` load: modelled when the mask names only the issuing CTA (a unicast load);
        cross-CTA data is not modelled, so a mask with other CTAs raises."""
        from cuda_emulator import EmulationError

        token, dst, bar_p, mask, *coords = a
        mask = int(np.asarray(mask).reshape(-1)[0])
        rank = int(self._x_tl_cluster_ctarank([], None, None)[0])
        if mask != 1 << rank:
            raise EmulationError(f"multicast TMA load to CTA mask {mask:#x} from rank {rank}: cross-CTA copies are "
                                 "not modelled")
        self._tma_load([token, dst, bar_p, *coords], len(coords))
        self.stats["tma_multicast"] = self.stats.get("tma_multicast", 0) + 1

    def _tma_store(self, a: list, rank: int) -> None:
        from cuda_emulator import EmulationError

        what = f"cp.async.bulk.tensor.{rank}d (store)"
        token, src_p, *coords = a
        gmem, shape, size, box, swizzle = self._tensor_map(str(token), what)
        if int(self.mask.sum()) != 1:
            raise EmulationError(f"{what} issued by {int(self.mask.sum())} threads; one thread issues a TMA copy")
        t = int(np.nonzero(self.mask)[0][0])
        origin = [int(np.broadcast_to(np.asarray(c, np.int64), (self.T,))[t]) for c in reversed(coords)]
        nbytes = int(np.prod(box)) * size
        b = self._smem_window(src_p, nbytes, what)
        base = int(np.asarray(self._smem_address(src_p)).reshape(-1)[0])
        rel = swizzle_address(base + np.arange(nbytes), swizzle) - base
        src_bytes = b[0] + rel
        mem = src_p.mem
        if mem.pending[src_bytes].any():
            raise EmulationError(f"{what}: reads {mem.name} bytes that have not landed")
        if self.check_proxy and not mem.proxy_ok[src_bytes].all():
            raise EmulationError(f"{what}: reads {mem.name} bytes written through the generic proxy with no "
                                 "fence.proxy.async between")
        data = mem.data[src_bytes].reshape(*box[:-1], box[-1] * size)
        tensor = gmem.data.reshape(*shape[:-1], shape[-1] * size)
        s, d = self._box_slices(shape, box, origin)
        if s is not None:
            tensor[(*s[:-1], slice(s[-1].start * size, s[-1].stop * size))] = \
                data[(*d[:-1], slice(d[-1].start * size, d[-1].stop * size))]
        self.bulk_open += 1
        self.stats["tma_store"] = self.stats.get("tma_store", 0) + 1

    def _x_tl_tma_store_arrive(self, a: list, dt: Any, e: Any) -> None:
        self.bulk_groups.append(self.bulk_open)
        self.bulk_open = 0

    def _x_tl_tma_store_wait_n(self, a: list, dt: Any, e: Any) -> None:
        n = int(np.asarray(a[0]).reshape(-1)[0])
        while len(self.bulk_groups) > n:
            self.bulk_groups.pop(0)

    def _x_tl_fence_proxy_async_all(self, a: list, dt: Any, e: Any) -> None:
        self._proxy_fence()

    # ---------------------------------------------------------------- wgmma (dialect forms)
    def _x_tl_wgmma_desc_user(self, a: list, dt: Any, e: Any) -> np.ndarray:
        return self._desc(a, int(np.asarray(a[3]).reshape(-1)[0]))

    _x_tl_warpgroup_arrive = property(lambda self: self._x_tl_wgmma_fence)
    _x_tl_warpgroup_commit_batch = property(lambda self: self._x_tl_wgmma_commit)
    _x_tl_warpgroup_wait_n = property(lambda self: self._x_tl_wgmma_wait)

    # ---------------------------------------------------------------- registers, PDL, clusters, markers
    def _x_tl_set_max_nreg_inc(self, a: list, dt: Any, e: Any) -> None:
        self._warpgroups("setmaxnreg.inc")
        self.stats["setmaxnreg"] = self.stats.get("setmaxnreg", 0) + 1

    def _x_tl_set_max_nreg_dec(self, a: list, dt: Any, e: Any) -> None:
        self._warpgroups("setmaxnreg.dec")
        self.stats["setmaxnreg"] = self.stats.get("setmaxnreg", 0) + 1

    def _x_tl_griddepcontrol_launch_dependents(self, a: list, dt: Any, e: Any) -> None:
        return None

    def _x_tl_griddepcontrol_wait(self, a: list, dt: Any, e: Any) -> None:
        return None

    def _x_tl_min_blocks_per_sm_marker(self, a: list, dt: Any, e: Any) -> None:
        return None

    def _x_tl_cluster_dims_marker(self, a: list, dt: Any, e: Any) -> None:
        self.cluster_dims = [int(np.asarray(x).reshape(-1)[0]) for x in a]
        for g, c in zip(self.block_dims, self.cluster_dims):
            if g % c:
                from cuda_emulator import EmulationError

                raise EmulationError(f"grid {self.block_dims} is not a whole number of clusters {self.cluster_dims}")

    def _x_tl_keep_int(self, a: list, dt: Any, e: Any) -> np.ndarray:
        return np.broadcast_to(np.asarray(a[0], np.int32), (self.T,)).copy()

    def _x_tl_cluster_ctarank(self, a: list, dt: Any, e: Any) -> np.ndarray:
        cx, cy, cz = self.cluster_dims
        b = self.block
        rank = (b["blockIdx.x"] % cx) + (b["blockIdx.y"] % cy) * cx + (b["blockIdx.z"] % cz) * cx * cy
        return np.full(self.T, rank, np.int32)

    def _cluster_barrier(self, what: str) -> None:
        self._barrier()
        self.stats["cluster_barriers"] = self.stats.get("cluster_barriers", 0) + 1

    def _x_tl_cluster_sync(self, a: list, dt: Any, e: Any) -> None:
        self._cluster_barrier("barrier.cluster")

    def _x_tl_cluster_arrive(self, a: list, dt: Any, e: Any) -> None:
        self._cluster_barrier("barrier.cluster.arrive")

    _x_tl_cluster_arrive_relaxed = _x_tl_cluster_arrive

    def _x_tl_cluster_wait(self, a: list, dt: Any, e: Any) -> None:
        return None

    # ---------------------------------------------------------------- warps
    def _x_tl_elect_one(self, a: list, dt: Any, e: Any) -> np.ndarray:
        """``elect.sync`` over a full warp: the lowest lane of each warp that runs it."""
        self._full_warps("elect.sync")
        return self.mask & (np.arange(self.T) % 32 == 0)

    def _x_tl_shuffle_elect_n(self, a: list, dt: Any, e: Any) -> np.ndarray:
        extent = int(np.asarray(a[0]).reshape(-1)[0])
        tid = np.broadcast_to(np.asarray(a[1], np.int64), (self.T,))
        if 0 < extent < 32:
            return (tid % extent == 0)
        self._full_warps("elect.sync")
        warp = tid // 32
        first = warp == 0 if extent == 0 else (warp % (extent // 32) == 0)
        return first & (tid % 32 == 0)  # elect.sync picks the lowest active lane

    # ---------------------------------------------------------------- explicit loads and stores
    def _ld(self, p: Any, nbytes: int, pred: Any, out_dt: Any) -> np.ndarray:
        pred = np.broadcast_to(np.asarray(pred, np.bool_), (self.T,))
        saved = self.mask
        self.mask = saved & pred
        try:
            raw = self.ptr_read(p, nbytes, f"ld ({nbytes * 8} bits)") if self.mask.any() else \
                np.zeros((self.T, nbytes), np.uint8)
        finally:
            self.mask = saved
        raw = np.where(pred[:, None], raw, 0).astype(np.uint8)
        words = np.ascontiguousarray(raw).view(np.uint32)
        return words[:, 0] if nbytes == 4 else words.T  # vectors are (lanes, T)

    def _ld_to(self, dst: Any, src: Any, nbytes: int, pred: Any) -> None:
        words = self._ld(src, nbytes, pred, None)
        data = np.ascontiguousarray(np.asarray(words, np.uint32).reshape(-1, self.T).T).view(np.uint8)
        self.ptr_write(dst, data.reshape(self.T, nbytes), f"ld ({nbytes * 8} bits) registers")

    def _st(self, p: Any, value: Any, nbytes: int, pred: Any) -> None:
        pred = np.broadcast_to(np.asarray(pred, np.bool_), (self.T,))
        v = np.asarray(value, np.uint32)
        words = np.broadcast_to(v, (self.T,)) if nbytes == 4 else np.broadcast_to(v, (nbytes // 4, self.T)).T
        data = np.ascontiguousarray(words.reshape(self.T, -1).astype(np.uint32)).view(np.uint8)
        saved = self.mask
        self.mask = saved & pred
        try:
            if self.mask.any():
                self.ptr_write(p, data, f"st ({nbytes * 8} bits)")
        finally:
            self.mask = saved

    def __getattr__(self, name: str) -> Any:
        """Helpers generated per width / rank: ``tl_ldg128``, ``tl_tma_copy_load_2d`` ..."""
        t = re.fullmatch(r"_x_tl_tma_copy_(load|store)_([1-5])d", name)
        if t is not None:
            rank = int(t.group(2))
            if t.group(1) == "load":
                return lambda a, dt, e: self._tma_load(a, rank)
            return lambda a, dt, e: self._tma_store(a, rank)
        m = re.fullmatch(r"_x_tl_(ldg|lds|stg|sts)(32|64|128|256)(_to)?", name)
        if m is None:
            raise AttributeError(name)
        kind, bits = m.group(1), int(m.group(2))
        nbytes = bits // 8
        if m.group(3):  # the load into a register array: (dst, src[, pred])
            return lambda a, dt, e: self._ld_to(a[0], a[1], nbytes, a[2] if len(a) > 2 else True)
        if kind in ("ldg", "lds"):
            return lambda a, dt, e: self._ld(a[0], nbytes, a[1] if len(a) > 1 else True, dt)
        return lambda a, dt, e: self._st(a[0], a[1], nbytes, a[2] if len(a) > 2 else True)

    def _x___ldg(self, a: list, dt: Any, e: Any) -> np.ndarray:
        p = a[0]
        size = np.dtype(p.elem.store_np).itemsize
        raw = self.ptr_read(p, size, "__ldg")
        vals = np.ascontiguousarray(raw).view(p.elem.store_np)[:, 0]
        return vals.astype(dt.np) if dt.base != "bfloat16" else vals

    def _x___ffs(self, a: list, dt: Any, e: Any) -> np.ndarray:
        v = np.broadcast_to(np.asarray(a[0]).astype(np.uint64), (self.T,))
        low = v & (~v + np.uint64(1))
        return np.where(v == 0, 0, np.log2(np.maximum(low, 1).astype(np.float64)).astype(np.int32) + 1)

    _x___ffsll = _x___ffs

    def _x___fns(self, a: list, dt: Any, e: Any) -> np.ndarray:
        mask = np.broadcast_to(np.asarray(a[0], np.uint64), (self.T,))
        base = np.broadcast_to(np.asarray(a[1], np.int64), (self.T,))
        offset = np.broadcast_to(np.asarray(a[2], np.int64), (self.T,))
        out = np.full(self.T, 0xFFFFFFFF, np.uint32)
        for t in range(self.T):
            bits = [i for i in range(32) if (int(mask[t]) >> i) & 1]
            n = int(offset[t])
            if n > 0:
                after = [i for i in bits if i >= int(base[t])]
                if len(after) >= n:
                    out[t] = after[n - 1]
            elif n < 0:
                before = [i for i in bits if i <= int(base[t])]
                if len(before) >= -n:
                    out[t] = before[n]
            elif (int(mask[t]) >> int(base[t])) & 1:
                out[t] = int(base[t])
        return out

    # ---------------------------------------------------------------- ldmatrix x1 / x2
    def _ldmatrix_n(self, a: list, num: int, trans: bool) -> None:
        from cuda_emulator import EmulationError, ldmatrix_x4

        self._full_warps("ldmatrix")
        regs, smem = a
        if smem.mem.scope != "shared":
            raise EmulationError("ldmatrix source is not shared memory")
        rows = self.ptr_read(smem, 16, "ldmatrix").view(np.uint16).reshape(self.T // 32, 32, 8)
        lanes = np.arange(32) % (8 * num)  # lanes beyond the first 8*num give no address; repeat to fill x4
        full = rows[:, lanes].reshape(self.T, 8)
        out = ldmatrix_x4(full, trans)[:, :num]
        self.ptr_write(regs, np.ascontiguousarray(out).view(np.uint8).reshape(self.T, 4 * num), "ldmatrix dest")

    def _x_tl_ldmatrix_x1(self, a: list, dt: Any, e: Any) -> None:
        self._ldmatrix_n(a, 1, False)

    def _x_tl_ldmatrix_x1_trans(self, a: list, dt: Any, e: Any) -> None:
        self._ldmatrix_n(a, 1, True)

    def _x_tl_ldmatrix_x2(self, a: list, dt: Any, e: Any) -> None:
        self._ldmatrix_n(a, 2, False)

    def _x_tl_ldmatrix_x2_trans(self, a: list, dt: Any, e: Any) -> None:
        self._ldmatrix_n(a, 2, True)

    # ---------------------------------------------------------------- tensor memory and tcgen05 (sm_100a)
    def _x_tl_tmem_alloc(self, a: list, dt: Any, e: Any) -> None:
        from cuda_emulator import EmulationError

        self._full_warps("tcgen05.alloc")
        if self.tmem_relinquished:
            raise EmulationError("tcgen05.alloc after tcgen05.relinquish_alloc_permit")
        slot, cols = a[0], int(np.asarray(a[1]).reshape(-1)[0])
        if cols < 32 or cols & (cols - 1) or cols > 512:
            raise EmulationError(f"tcgen05.alloc of {cols} columns (a power of two in [32, 512])")
        for warp in np.unique(self.tid[self.mask] // 32):
            start = next((c for c in range(0, 512, cols)
                          if all(not (s < c + cols and c < s + n) for s, n in self.tmem_alloc.items())), None)
            if start is None:
                raise EmulationError(f"tcgen05.alloc of {cols} columns: tensor memory is full")
            self.tmem_alloc[start] = cols
            t = int(warp) * 32
            off = int(self._full(np.asarray(slot.off, np.int64))[t])
            word = np.array([start], np.uint32).view(np.uint8)
            self._check_write(slot.mem, off + np.arange(4), np.ones(4, np.bool_), "tcgen05.alloc", np.full(4, t),
                              slot.buf)
            slot.mem.data[off:off + 4] = word
        self.stats["tmem_alloc"] = self.stats.get("tmem_alloc", 0) + 1

    def _x_tl_tmem_relinquish(self, a: list, dt: Any, e: Any) -> None:
        self._full_warps("tcgen05.relinquish_alloc_permit")
        self.tmem_relinquished = True

    def _x_tl_tmem_dealloc(self, a: list, dt: Any, e: Any) -> None:
        from cuda_emulator import EmulationError

        self._full_warps("tcgen05.dealloc")
        base = int(np.unique(np.broadcast_to(np.asarray(a[0], np.int64), (self.T,))[self.mask])[0])
        if self.tmem_alloc.pop(base & 0xFFFF, None) is None:
            raise EmulationError(f"tcgen05.dealloc of column {base & 0xFFFF}, which no tcgen05.alloc returned")

    def _x_tl_umma_desc(self, a: list, dt: Any, e: Any) -> np.ndarray:
        addr = self._full(self._smem_address(a[0]))
        for v in np.unique(addr[self.mask]):
            self.desc_bufs[int(v) & 0x3FFF0] = a[0].buf
        enc = [(np.asarray(x).astype(np.uint64) & np.uint64(0x3FFFF)) >> np.uint64(4) for x in (addr, a[1], a[2])]
        mode = np.uint64(int(np.asarray(a[3]).reshape(-1)[0]) & 7)
        return (enc[0] | (enc[1] << np.uint64(16)) | (enc[2] << np.uint64(32)) | (np.uint64(1) << np.uint64(46))
                | (mode << np.uint64(61)))

    _x_tl_umma_desc_sw = _x_tl_umma_desc

    def _x_tl_umma_desc_based(self, a: list, dt: Any, e: Any) -> np.ndarray:
        """`tl_umma_desc` plus the matrix base offset (bits 49-51) and the leading-address mode (bit 52)."""
        d = self._x_tl_umma_desc(a[:4], dt, e)
        base, absolute = (np.uint64(int(np.asarray(x).reshape(-1)[0])) for x in a[4:6])
        return d | ((base & np.uint64(7)) << np.uint64(49)) | ((absolute & np.uint64(1)) << np.uint64(52))

    def _umma_operand(self, d: int, k_major: bool, mn: int, kind: str, what: str) -> np.ndarray:
        """The (mn, 16) values an UMMA descriptor reads (SM100 descriptor: version bit 46, layout field 61-63)."""
        from cuda_emulator import Descriptor, EmulationError, _half_values, canonical_addresses

        if (d >> 46) & 7 != 1:
            raise EmulationError(f"tcgen05.mma {what}: descriptor lacks the SM100 version field (bits 46-48 = 1)")
        modes = {0: 0, 2: 1, 4: 2, 6: 3}  # UMMA layout -> the wgmma swizzle numbering canonical_addresses takes
        layout = (d >> 61) & 7
        if (d >> 49) & 0xF:
            raise EmulationError(f"tcgen05.mma {what}: descriptor base offset / absolute leading address (bits 49-52) "
                                 "are not modelled")
        if layout not in modes:
            raise EmulationError(f"tcgen05.mma {what}: descriptor layout {layout} is not modelled")
        desc = Descriptor((d & 0x3FFF) << 4, ((d >> 16) & 0x3FFF) << 4, ((d >> 32) & 0x3FFF) << 4, 0, modes[layout])
        addr = canonical_addresses(desc, k_major, mn)
        region = [(b, m) for b, m in self.smem_regions if b <= desc.start < b + m.data.shape[-1]]
        if not region:
            raise EmulationError(f"tcgen05.mma {what}: descriptor start {desc.start:#x} is outside shared memory")
        base, mem = region[0]
        idx = (addr - base)[..., None] + np.arange(2)
        if idx.min() < 0 or idx.max() >= mem.data.shape[-1]:
            raise EmulationError(f"tcgen05.mma {what} reads outside {mem.name}")
        flat = idx.reshape(-1)
        if mem.pending[flat].any():
            raise EmulationError(f"tcgen05.mma {what}: reads {mem.name} bytes a copy has not landed yet")
        if (mem.w_epoch[flat] < 0).any():
            raise EmulationError(f"tcgen05.mma {what}: reads {mem.name} bytes nothing wrote")
        if self.check_proxy and not mem.proxy_ok[flat].all():
            raise EmulationError(f"tcgen05.mma {what}: reads {mem.name} bytes written through the generic proxy with "
                                 "no fence.proxy.async between")
        raw = np.ascontiguousarray(mem.data[idx]).view(np.uint16)[..., 0]
        return _half_values(raw, kind)

    def _f16_mma_issue(self, a: list) -> tuple[list[int], int, int, str]:
        """``(the issuing thread's arguments, M, N, f16 | bf16)`` of a one-thread ``kind::f16`` MMA whose
        instruction descriptor is the fourth argument."""
        from cuda_emulator import EmulationError

        if int(self.mask.sum()) != 1:
            raise EmulationError(f"tcgen05.mma issued by {int(self.mask.sum())} threads; one thread issues it")
        t = int(np.nonzero(self.mask)[0][0])
        args = [int(np.broadcast_to(np.asarray(x).astype(np.uint64), (self.T,))[t]) for x in a]
        idesc = args[3]
        m, n = ((idesc >> 24) & 31) << 4, ((idesc >> 17) & 63) << 3
        fmt = (idesc >> 7) & 7
        if (idesc >> 4) & 3 != 1 or fmt not in (0, 1) or (idesc >> 10) & 7 != fmt:
            raise EmulationError(f"tcgen05.mma instruction descriptor {idesc:#x}: f16 / bf16 into f32 is modelled")
        return args, m, n, "f16" if fmt == 0 else "bf16"

    def _tmem_allocated(self, col: int, n: int) -> bool:
        """Whether TMEM columns ``col .. col + n - 1`` lie in one allocation."""
        return any(s <= col and col + n <= s + c for s, c in self.tmem_alloc.items())

    def _x_tl_tcgen05_mma_ss(self, a: list, dt: Any, e: Any) -> None:
        (d_addr, a_d, b_d, idesc, acc), m, n, kind = self._f16_mma_issue(a)
        A = self._umma_operand(a_d, not (idesc >> 15) & 1, m, kind, "A")
        B = self._umma_operand(b_d, not (idesc >> 16) & 1, n, kind, "B")
        self._tmem_accumulate(d_addr, A @ B.T, m, n, bool(acc))

    def _x_tl_tcgen05_commit(self, a: list, dt: Any, e: Any) -> None:
        """``tcgen05.commit ... arrive::one``: the barrier gets one arrival per issuing thread once its MMAs are
        done (they ran at issue in this model)."""
        bar = self._bar(a[0], "tcgen05.commit")
        self._arrive(bar, int(self.mask.sum()), "tcgen05.commit")

    def _x_tl_tcgen05_ld_32x32b_n(self, a: list, dt: Any, e: Any) -> None:
        n = int(np.asarray(a[0]).reshape(-1)[0])
        dp, cols = self._tmem_rows("tcgen05.ld", a[1], n)
        vals = self.tmem[dp[:, None], cols]
        self.ptr_write(a[2], np.ascontiguousarray(vals).view(np.uint8).reshape(self.T, 4 * n), "tcgen05.ld registers")

    def _tmem_rows(self, what: str, taddr: Any, n: int) -> tuple[np.ndarray, np.ndarray]:
        """``(datapath, columns)`` each thread of a warpgroup addresses with a ``.32x32b`` access of `n` columns."""
        from cuda_emulator import EmulationError

        self._full_warps(what)
        taddr = np.broadcast_to(np.asarray(taddr).astype(np.int64), (self.T,))
        lane, col = taddr >> 16, taddr & 0xFFFF
        warp = self.tid // 32
        if ((lane != 32 * (warp % 4)) & self.mask).any():
            raise EmulationError(f"{what}: warp w of a warpgroup addresses datapaths 32*(w%4).. only")
        cols = col[:, None] + np.arange(n)
        if (cols[self.mask] >= 512).any():
            raise EmulationError(f"{what} beyond the 512 TMEM columns")
        active = self.mask[:, None]  # inactive threads address datapath 0, column 0 (nothing is written for them)
        return np.where(self.mask, lane + self.tid % 32, 0), np.where(active, cols, 0)

    def _x_tl_tcgen05_st_32x32b_n(self, a: list, dt: Any, e: Any) -> None:
        """Each active thread writes `n` 32-bit registers to consecutive columns of its datapath."""
        n = int(np.asarray(a[0]).reshape(-1)[0])
        dp, cols = self._tmem_rows("tcgen05.st", a[1], n)
        words = np.ascontiguousarray(self.ptr_read(a[2], 4 * n, "tcgen05.st registers")).view(np.uint32)
        act = self.mask
        self.tmem[dp[act][:, None], cols[act]] = words.reshape(self.T, n)[act]

    def _x_tl_tcgen05_mma_ts(self, a: list, dt: Any, e: Any) -> None:
        """``tcgen05.mma.cta_group::1.kind::f16 [d], [a], b_desc``: A (M x 16, 16-bit) from TMEM, row i on datapath
        ``lane + i``, two elements a column (the even one in the low half)."""
        from cuda_emulator import EmulationError, _half_values

        (d_addr, a_addr, b_d, idesc, acc), m, n, kind = self._f16_mma_issue(a)
        if (idesc >> 15) & 1:
            raise EmulationError("tcgen05.mma with A in TMEM: the descriptor's transpose-A bit must be 0 (K-major)")
        a_lane, a_col = a_addr >> 16, a_addr & 0xFFFF
        if a_lane + m > 128 or a_col + 8 > 512:
            raise EmulationError(f"tcgen05.mma A {m}x16 at lane {a_lane} column {a_col} exceeds TMEM")
        if not self._tmem_allocated(a_col, 8):
            raise EmulationError(f"tcgen05.mma reads A from TMEM columns {a_col}..{a_col + 7} outside every allocation")
        raw = np.ascontiguousarray(self.tmem[a_lane:a_lane + m, a_col:a_col + 8]).view(np.uint16)
        A = _half_values(raw, kind)
        B = self._umma_operand(b_d, not (idesc >> 16) & 1, n, kind, "B")
        self._tmem_accumulate(d_addr, A @ B.T, m, n, bool(acc))

    def _tmem_accumulate(self, d_addr: int, D: np.ndarray, m: int, n: int, acc: bool) -> None:
        from cuda_emulator import EmulationError

        lane, col = d_addr >> 16, d_addr & 0xFFFF
        if lane + m > 128 or col + n > 512:
            raise EmulationError(f"tcgen05.mma accumulator {m}x{n} at lane {lane} column {col} exceeds TMEM")
        if not self._tmem_allocated(col, n):
            raise EmulationError(f"tcgen05.mma writes TMEM columns {col}..{col + n - 1} outside every allocation")
        if acc:
            D = D + self.tmem[lane:lane + m, col:col + n].view(np.float32)
        self.tmem[lane:lane + m, col:col + n] = D.astype(np.float32).view(np.uint32)
        self.stats["tcgen05_mma"] = self.stats.get("tcgen05_mma", 0) + 1

    def _x_tl_tcgen05_before_thread_sync(self, a: list, dt: Any, e: Any) -> None:
        return None

    def _x_tl_tcgen05_after_thread_sync(self, a: list, dt: Any, e: Any) -> None:
        return None

    # ---------------------------------------------------------------- Philox random numbers
    def _rng_state(self, p: Any) -> np.ndarray:
        return np.ascontiguousarray(self.ptr_read(p, 44, "rng state")).view(np.uint32).copy()

    def _x_tl_rng_init(self, a: list, dt: Any, e: Any) -> None:
        p, seed, seq, off = a
        seed = np.broadcast_to(np.asarray(seed, np.uint64), (self.T,))
        seq = np.broadcast_to(np.asarray(seq, np.uint64), (self.T,))
        off = np.broadcast_to(np.asarray(off, np.uint64), (self.T,))
        st = np.zeros((self.T, 11), np.uint32)
        st[:, 0], st[:, 1] = seed & np.uint64(0xFFFFFFFF), seed >> np.uint64(32)
        quarter = off // np.uint64(4)
        st[:, 2], st[:, 3] = quarter & np.uint64(0xFFFFFFFF), quarter >> np.uint64(32)
        st[:, 4], st[:, 5] = seq & np.uint64(0xFFFFFFFF), seq >> np.uint64(32)
        self._philox_refill(st)
        st[:, 10] = (off % np.uint64(4)).astype(np.uint32)
        self.ptr_write(p, np.ascontiguousarray(st).view(np.uint8), "rng state")

    @staticmethod
    def _philox_refill(st: np.ndarray) -> None:
        st[:, 6:10] = philox4x32_10(st[:, 2:6], st[:, 0:2])
        st[:, 10] = 0
        ctr = st[:, 2:6].astype(np.uint64)
        carry = np.ones(st.shape[0], np.uint64)
        for i in range(4):
            s = ctr[:, i] + carry
            st[:, 2 + i] = (s & np.uint64(0xFFFFFFFF)).astype(np.uint32)
            carry = s >> np.uint64(32)

    def _x_tl_rng_rand(self, a: list, dt: Any, e: Any) -> np.ndarray:
        p = a[0]
        st = self._rng_state(p)
        empty = st[:, 10] == 4
        if empty.any():
            sub = st[empty]
            self._philox_refill(sub)
            st[empty] = sub
        out = st[np.arange(self.T), 6 + np.minimum(st[:, 10], 3)]
        st[:, 10] += 1
        self.ptr_write(p, np.ascontiguousarray(st).view(np.uint8), "rng state")
        return out

    def _x_tl_rng_uniform_f32(self, a: list, dt: Any, e: Any) -> np.ndarray:
        x = self._x_tl_rng_rand(a, dt, e).astype(np.float32)
        return (x * np.float32(2.3283064e-10) + np.float32(1.1641532e-10)).astype(np.float32)

    def _x_tl_rng_normal_f32(self, a: list, dt: Any, e: Any) -> np.ndarray:
        u = self._x_tl_rng_uniform_f32(a, dt, e)
        v = self._x_tl_rng_uniform_f32(a, dt, e)
        return (np.sqrt(-2.0 * np.log(u.astype(np.float64))) * np.cos(2 * np.pi * v)).astype(np.float32)
