"""Device helpers of the CUDA language dialect (``T.mbarrier_wait_parity``, ``T.tma_copy``, ``T.alloc_tmem``, ...).

Each entry is one ``__device__`` helper (inline PTX), included in a kernel's header only when its source calls
it (`snippets_for`), so a helper that needs sm_90a or sm_100a never reaches a compile for an older target. The
dialect lowering (`tilelang_cuda.tileops.dialect`) checks the architecture first and emits
``call_extern("tl_...")`` on these names.
"""

from __future__ import annotations

import re

# name -> (C source, helpers it calls). ``tl_smem_addr`` is in the common header.
HELPERS: dict[str, tuple[str, tuple[str, ...]]] = {}


def _helper(name: str, source: str, *deps: str) -> None:
    HELPERS[name] = (source.strip("\n") + "\n", deps)


# ------------------------------------------------------------------------------------------------ mbarriers
_helper("tl_mbarrier_init", r"""
__device__ __forceinline__ void tl_mbarrier_init(void* bar, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" :: "r"(tl_smem_addr(bar)), "r"(count) : "memory");
}""")
_helper("tl_fence_barrier_init", r"""
__device__ __forceinline__ void tl_fence_barrier_init() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#endif
}""")
_helper("tl_mbarrier_arrive", r"""
__device__ __forceinline__ void tl_mbarrier_arrive(void* bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" :: "r"(tl_smem_addr(bar)) : "memory");
#else
  asm volatile("{\n .reg .b64 state;\n mbarrier.arrive.shared.b64 state, [%0];\n}\n" :: "r"(tl_smem_addr(bar))
               : "memory");
#endif
}""")
_helper("tl_mbarrier_expect_tx", r"""
__device__ __forceinline__ void tl_mbarrier_expect_tx(void* bar, int bytes) {
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;\n"
               :: "r"(tl_smem_addr(bar)), "r"(bytes) : "memory");
}""")
_helper("tl_mbarrier_arrive_expect_tx", r"""
__device__ __forceinline__ void tl_mbarrier_arrive_expect_tx(void* bar, int bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n"
               :: "r"(tl_smem_addr(bar)), "r"(bytes) : "memory");
}""")
_helper("tl_mbarrier_wait_parity", r"""
__device__ __forceinline__ void tl_mbarrier_wait_parity(void* bar, int parity) {
  unsigned addr = tl_smem_addr(bar), done = 0;
  while (!done) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                 " selp.u32 %0, 1, 0, p;\n}\n" : "=r"(done) : "r"(addr), "r"(parity) : "memory");
#else
    asm volatile("{\n .reg .pred p;\n mbarrier.test_wait.parity.shared.b64 p, [%1], %2;\n"
                 " selp.u32 %0, 1, 0, p;\n}\n" : "=r"(done) : "r"(addr), "r"(parity) : "memory");
#endif
  }
}""")
_helper("tl_mbarrier_arrive_cluster", r"""
__device__ __forceinline__ void tl_mbarrier_arrive_cluster(void* bar, int cta) {
  unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(tl_smem_addr(bar)), "r"(cta));
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n" :: "r"(remote) : "memory");
}""")
_helper("tl_mbarrier_arrive_expect_tx_cluster", r"""
__device__ __forceinline__ void tl_mbarrier_arrive_expect_tx_cluster(void* bar, int cta, int bytes) {
  unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(tl_smem_addr(bar)), "r"(cta));
  asm volatile("mbarrier.arrive.expect_tx.release.cluster.shared::cluster.b64 _, [%0], %1;\n"
               :: "r"(remote), "r"(bytes) : "memory");
}""")
# CTA `cta`'s copy of `dst` gets `bytes` bytes of this CTA's `src`; they complete on that CTA's copy of `bar`
_helper("tl_bulk_copy_to_cluster", r"""
__device__ __forceinline__ void tl_bulk_copy_to_cluster(void* dst, const void* src, int bytes, void* bar, int cta) {
  unsigned rdst, rbar;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(rdst) : "r"(tl_smem_addr(dst)), "r"(cta));
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(rbar) : "r"(tl_smem_addr(bar)), "r"(cta));
  asm volatile("cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n"
               :: "r"(rdst), "r"(tl_smem_addr(src)), "r"(bytes), "r"(rbar) : "memory");
}""")
# one element stored into CTA `cta`'s copy of the shared location `dst` (distributed shared memory)
_helper("tl_st_cluster", r"""
template <typename T> __device__ __forceinline__ void tl_st_cluster(T* dst, T value, int cta) {
  unsigned long long remote;
  asm volatile("mapa.u64 %0, %1, %2;\n" : "=l"(remote)
               : "l"(reinterpret_cast<unsigned long long>(dst)), "r"(cta));
  *reinterpret_cast<T*>(remote) = value;
}""")
_helper("tl_cp_async_mbarrier_arrive_noinc", r"""
__device__ __forceinline__ void tl_cp_async_mbarrier_arrive_noinc(void* bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" :: "r"(tl_smem_addr(bar)) : "memory");
}""")
_helper("tl_named_barrier_sync", r"""
__device__ __forceinline__ void tl_named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" :: "r"(id), "r"(threads) : "memory");
}""")
_helper("tl_named_barrier_arrive", r"""
__device__ __forceinline__ void tl_named_barrier_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" :: "r"(id), "r"(threads) : "memory");
}""")

# ------------------------------------------------------------------------------------------------ cp.async
for _n in (4, 8, 16):
    _helper(f"tl_cp_async_{_n}", rf"""
__device__ __forceinline__ void tl_cp_async_{_n}(void* smem, const void* gmem, int src_bytes) {{
  asm volatile("cp.async.{'cg' if _n == 16 else 'ca'}.shared.global [%0], [%1], {_n}, %2;\n"
               :: "r"(tl_smem_addr(smem)), "l"(gmem), "r"(src_bytes) : "memory");
}}""")
_helper("tl_cp_async_commit_group", r"""
__device__ __forceinline__ void tl_cp_async_commit_group() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}""")
_helper("tl_cp_async_mbarrier_arrive", r"""
__device__ __forceinline__ void tl_cp_async_mbarrier_arrive(void* bar) {
  asm volatile("cp.async.mbarrier.arrive.shared::cta.b64 [%0];\n" :: "r"(tl_smem_addr(bar)) : "memory");
}""")

# ------------------------------------------------------------------------------------------------ fences, registers
_helper("tl_fence_proxy_async_all", r"""
__device__ __forceinline__ void tl_fence_proxy_async_all() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}""")
_helper("tl_set_max_nreg_inc", r"""
template <int N> __device__ __forceinline__ void tl_setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" :: "n"(N));
}
#define tl_set_max_nreg_inc(n) tl_setmaxnreg_inc<n>()""")
_helper("tl_set_max_nreg_dec", r"""
template <int N> __device__ __forceinline__ void tl_setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" :: "n"(N));
}
#define tl_set_max_nreg_dec(n) tl_setmaxnreg_dec<n>()""")

# ------------------------------------------------------------------------------------------------ PDL, clusters
_helper("tl_griddepcontrol_launch_dependents", r"""
__device__ __forceinline__ void tl_griddepcontrol_launch_dependents() {
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
}""")
_helper("tl_griddepcontrol_wait", r"""
__device__ __forceinline__ void tl_griddepcontrol_wait() { asm volatile("griddepcontrol.wait;\n" ::: "memory"); }""")
_helper("tl_cluster_ctarank", r"""
__device__ __forceinline__ int tl_cluster_ctarank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return (int)r;
}""")
_helper("tl_cluster_arrive", r"""
__device__ __forceinline__ void tl_cluster_arrive() {
  asm volatile("barrier.cluster.arrive.aligned;\n" ::: "memory");
}""")
_helper("tl_cluster_arrive_relaxed", r"""
__device__ __forceinline__ void tl_cluster_arrive_relaxed() {
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");
}""")
_helper("tl_cluster_wait", r"""
__device__ __forceinline__ void tl_cluster_wait() { asm volatile("barrier.cluster.wait.aligned;\n" ::: "memory"); }""")
_helper("tl_cluster_sync", r"""
__device__ __forceinline__ void tl_cluster_sync() {
  asm volatile("barrier.cluster.arrive.aligned;\nbarrier.cluster.wait.aligned;\n" ::: "memory");
}""")
_helper("tl_clc_try_cancel", r"""
__device__ __forceinline__ void tl_clc_try_cancel(void* result, void* bar) {
  asm volatile("clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.b128 [%0], [%1];\n"
               :: "r"(tl_smem_addr(result)), "r"(tl_smem_addr(bar)) : "memory");
}""")
_helper("tl_clc_try_cancel_multicast", r"""
__device__ __forceinline__ void tl_clc_try_cancel_multicast(void* result, void* bar) {
  asm volatile("clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.multicast::cluster::all"
               ".b128 [%0], [%1];\n" :: "r"(tl_smem_addr(result)), "r"(tl_smem_addr(bar)) : "memory");
}""")
_helper("tl_clc_is_canceled", r"""
__device__ __forceinline__ int tl_clc_is_canceled(const void* result) {
  unsigned ok;
  asm volatile("{\n .reg .b128 r;\n .reg .pred p;\n ld.shared.b128 r, [%1];\n"
               " clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 p, r;\n selp.u32 %0, 1, 0, p;\n}\n"
               : "=r"(ok) : "r"(tl_smem_addr(result)) : "memory");
  return (int)ok;
}""")
for _axis in "xyz":
    _helper(f"tl_clc_get_first_ctaid_{_axis}", rf"""
__device__ __forceinline__ int tl_clc_get_first_ctaid_{_axis}(const void* result) {{
  int v;
  asm volatile("{{\n .reg .b128 r;\n ld.shared.b128 r, [%1];\n"
               " clusterlaunchcontrol.query_cancel.get_first_ctaid::{_axis}.b32.b128 %0, r;\n}}\n"
               : "=r"(v) : "r"(tl_smem_addr(result)) : "memory");
  return v;
}}""")

# ------------------------------------------------------------------------------------------------ warps, elect
_helper("tl_elect_one", r"""
__device__ __forceinline__ bool tl_elect_one() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  unsigned pred;
  asm volatile("{\n .reg .pred p;\n elect.sync _|p, 0xffffffff;\n selp.u32 %0, 1, 0, p;\n}\n" : "=r"(pred));
  return pred != 0;
#else
  return (threadIdx.x % 32) == 0;
#endif
}""")
_helper("tl_shuffle_elect_n", r"""
// one thread per group of `Extent` consecutive threads (0: the whole block): an elected lane of the group's first
// warp (groups narrower than a warp elect their first thread)
template <int Extent> __device__ __forceinline__ bool tl_shuffle_elect(int linear_tid) {
  if (Extent > 0 && Extent < 32) return linear_tid % Extent == 0;
  int warp = __shfl_sync(0xffffffffu, linear_tid / 32, 0);
  bool first = Extent == 0 ? warp == 0 : warp % (Extent / 32) == 0;
  return first && tl_elect_one();
}
#define tl_shuffle_elect_n(extent, tid) tl_shuffle_elect<extent>(tid)""", "tl_elect_one")
_helper("tl_fns", r"""
__device__ __forceinline__ unsigned tl_fns(unsigned mask, unsigned base, int offset) {
  return __fns(mask, base, offset);
}""")

# ------------------------------------------------------------------------------------------------ ld / st
_LD_TYPES = {32: ("unsigned", "r", ".b32", 1), 64: ("uint2", "r", ".v2.b32", 2), 128: ("uint4", "r", ".v4.b32", 4),
             256: ("ulonglong4", "l", ".v4.b64", 4)}
_FIELDS = ("x", "y", "z", "w")


def _ld_outs(bits: int) -> tuple[str, str]:
    _, c, _, n = _LD_TYPES[bits]
    if n == 1:
        return "{%0}", '"+r"(v)'
    return "{" + ", ".join(f"%{i}" for i in range(n)) + "}", ", ".join(f'"+{c}"(v.{f})' for f in _FIELDS[:n])


def _st_ins(bits: int, first: int) -> tuple[str, str]:
    _, c, _, n = _LD_TYPES[bits]
    if n == 1:
        return f"{{%{first}}}", '"r"(v)'
    return ("{" + ", ".join(f"%{first + i}" for i in range(n)) + "}",
            ", ".join(f'"{c}"(v.{f})' for f in _FIELDS[:n]))


for _bits, (_ctype, _c, _suffix, _n) in _LD_TYPES.items():
    _outs, _cons = _ld_outs(_bits)
    _vec = _suffix if _bits != 32 else ".b32"
    _helper(f"tl_ldg{_bits}", rf"""
__device__ __forceinline__ {_ctype} tl_ldg{_bits}(const void* p, bool pred) {{
  {_ctype} v{{}};
  asm volatile("{{\n .reg .pred p;\n setp.ne.b32 p, %{_n}, 0;\n @p ld.global.nc{_vec} {_outs}, [%{_n + 1}];\n}}\n"
               : {_cons} : "r"((int)pred), "l"(p) : "memory");
  return v;
}}""")
    _ins, _icons = _st_ins(_bits, 2)
    _helper(f"tl_stg{_bits}", rf"""
__device__ __forceinline__ void tl_stg{_bits}(void* p, {_ctype} v, bool pred) {{
  asm volatile("{{\n .reg .pred p;\n setp.ne.b32 p, %0, 0;\n @p st.global{_vec} [%1], {_ins};\n}}\n"
               :: "r"((int)pred), "l"(p), {_icons} : "memory");
}}""")
    if _bits <= 128:
        _helper(f"tl_lds{_bits}", rf"""
__device__ __forceinline__ {_ctype} tl_lds{_bits}(const void* p) {{
  {_ctype} v{{}};
  asm volatile("ld.shared{_vec} {_outs}, [%{_n}];\n" : {_cons} : "r"(tl_smem_addr(p)) : "memory");
  return v;
}}""")
        _ins1, _icons1 = _st_ins(_bits, 1)
        _helper(f"tl_sts{_bits}", rf"""
__device__ __forceinline__ void tl_sts{_bits}(void* p, {_ctype} v) {{
  asm volatile("st.shared{_vec} [%0], {_ins1};\n" :: "r"(tl_smem_addr(p)), {_icons1} : "memory");
}}""")

# the loads into a register array (what the lowering emits: TVM prints vector-typed calls lane by lane)
for _bits, (_ctype, _c, _suffix, _n) in _LD_TYPES.items():
    for _space in ("ldg", "lds") if _bits <= 128 else ("ldg",):
        _args = "const void* p, bool pred" if _space == "ldg" else "const void* p"
        _call = "p, pred" if _space == "ldg" else "p"
        _helper(f"tl_{_space}{_bits}_to", rf"""
__device__ __forceinline__ void tl_{_space}{_bits}_to(void* dst, {_args}) {{
  *reinterpret_cast<{_ctype}*>(dst) = tl_{_space}{_bits}({_call});
}}""", f"tl_{_space}{_bits}")

# ------------------------------------------------------------------------------------------------ wgmma batches
_helper("tl_warpgroup_arrive", r"""
__device__ __forceinline__ void tl_warpgroup_arrive() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }""")
_helper("tl_warpgroup_commit_batch", r"""
__device__ __forceinline__ void tl_warpgroup_commit_batch() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}""")
_helper("tl_warpgroup_wait_n", r"""
template <int N> __device__ __forceinline__ void tl_warpgroup_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" :: "n"(N) : "memory");
}
#define tl_warpgroup_wait_n(n) tl_warpgroup_wait<n>()""")
_helper("tl_warpgroup_fence_operand", r"""
// each register of the accumulator as an operand of an empty asm: no use of it moves across the wgmma batch
template <typename T> __device__ __forceinline__ void tl_warpgroup_fence_operand(T* regs, int count) {
  unsigned* r = reinterpret_cast<unsigned*>(regs);
#pragma unroll
  for (int i = 0; i < count; ++i) asm volatile("" : "+r"(r[i]) :: "memory");
}""")

_helper("tl_wgmma_desc_user", r"""
// a wgmma matrix descriptor of a tile whose (bank-swizzled) layout the kernel chose itself: start, LBO, SBO in
// bytes, swizzle mode (0 none, 1 128B, 2 64B, 3 32B); base offset 0 (the tile starts on a swizzle repeat)
__device__ __forceinline__ unsigned long long tl_wgmma_desc_user(const void* smem, int lbo, int sbo, int mode) {
  unsigned long long d = 0;
  d |= (unsigned long long)((tl_smem_addr(smem) & 0x3FFFF) >> 4);
  d |= (unsigned long long)((lbo & 0x3FFFF) >> 4) << 16;
  d |= (unsigned long long)((sbo & 0x3FFFF) >> 4) << 32;
  d |= (unsigned long long)(mode & 3) << 62;
  return d;
}""")

# ------------------------------------------------------------------------------------------------ TMA (user barriers)
for _r in range(1, 6):
    _coords = ", ".join(f"int c{i}" for i in range(_r))
    _slots = ", ".join(f"%{i + 2}" for i in range(_r))
    _cvals = ", ".join(f'"r"(c{i})' for i in range(_r))
    # one tiled bulk copy of a box into shared memory, completing its bytes on the user's mbarrier
    _helper(f"tl_tma_copy_load_{_r}d", rf"""
__device__ __forceinline__ void tl_tma_copy_load_{_r}d(const void* map, void* dst, void* bar, {_coords}) {{
  asm volatile("cp.async.bulk.tensor.{_r}d.shared::cluster.global.mbarrier::complete_tx::bytes "
               "[%0], [%1, {{{_slots}}}], [%{_r + 2}];\n"
               :: "r"(tl_smem_addr(dst)), "l"(reinterpret_cast<unsigned long long>(map)), {_cvals},
               "r"(tl_smem_addr(bar)) : "memory");
}}""")
    _sslots = ", ".join(f"%{i + 1}" for i in range(_r))
    # one tiled bulk copy of a shared box to global memory, in the current bulk group
    _helper(f"tl_tma_copy_store_{_r}d", rf"""
__device__ __forceinline__ void tl_tma_copy_store_{_r}d(const void* map, const void* src, {_coords}) {{
  asm volatile("cp.async.bulk.tensor.{_r}d.global.shared::cta.bulk_group [%0, {{{_sslots}}}], [%{_r + 1}];\n"
               :: "l"(reinterpret_cast<unsigned long long>(map)), {_cvals}, "r"(tl_smem_addr(src)) : "memory");
}}""")
    _cslots = ", ".join(f"%{i + 3}" for i in range(_r))
    # the same copy issued by each CTA of a pair (cta_group::2): the bytes complete on the even (leader) CTA's copy
    # of `bar` (the peer bit of its shared::cluster address cleared)
    _helper(f"tl_tma_copy_load_2sm_{_r}d", rf"""
__device__ __forceinline__ void tl_tma_copy_load_2sm_{_r}d(const void* map, void* dst, void* bar, {_coords}) {{
  asm volatile("cp.async.bulk.tensor.{_r}d.cta_group::2.shared::cluster.global.mbarrier::complete_tx::bytes "
               "[%0], [%1, {{{_cslots}}}], [%2];\n"
               :: "r"(tl_smem_addr(dst)), "l"(reinterpret_cast<unsigned long long>(map)),
               "r"(tl_smem_addr(bar) & 0xFEFFFFFFu), {_cvals} : "memory");
}}""")
_helper("tl_tma_load_multicast", r"""
// a 2-D box multicast to the CTAs of `mask` in the cluster (each completes `bytes` on its own copy of `bar`)
__device__ __forceinline__ void tl_tma_load_multicast(const void* map, void* dst, void* bar, unsigned short mask,
                                                      int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster "
               "[%0], [%1, {%2, %3}], [%4], %5;\n"
               :: "r"(tl_smem_addr(dst)), "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1),
                  "r"(tl_smem_addr(bar)), "h"(mask) : "memory");
}""")
_helper("tl_tma_store_arrive", r"""
__device__ __forceinline__ void tl_tma_store_arrive() {
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}""")
_helper("tl_tma_store_wait_n", r"""
template <int N, bool Read> __device__ __forceinline__ void tl_tma_store_wait() {
  if (Read)
    asm volatile("cp.async.bulk.wait_group.read %0;\n" :: "n"(N) : "memory");
  else
    asm volatile("cp.async.bulk.wait_group %0;\n" :: "n"(N) : "memory");
}
#define tl_tma_store_wait_n(n, read) tl_tma_store_wait<n, read>()""")
_helper("tl_prefetch_tma_descriptor", r"""
__device__ __forceinline__ void tl_prefetch_tma_descriptor(const void* map) {
  asm volatile("prefetch.tensormap [%0];\n" :: "l"(reinterpret_cast<unsigned long long>(map)) : "memory");
}""")
_helper("tl_tma_gather4", r"""
// four rows (r0..r3) of a 2-D tensor, `cols` wide from column c0, into a (4, cols) shared tile (sm_100a)
__device__ __forceinline__ void tl_tma_gather4(const void* map, void* dst, void* bar, int c0, int r0, int r1, int r2,
                                               int r3) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile::gather4.mbarrier::complete_tx::bytes "
               "[%0], [%1, {%2, %3, %4, %5, %6}], [%7];\n"
               :: "r"(tl_smem_addr(dst)), "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(r0),
                  "r"(r1), "r"(r2), "r"(r3), "r"(tl_smem_addr(bar)) : "memory");
}""")
_helper("tl_tma_scatter4", r"""
__device__ __forceinline__ void tl_tma_scatter4(const void* map, const void* src, int c0, int r0, int r1, int r2,
                                                int r3) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile::scatter4.bulk_group [%0, {%1, %2, %3, %4, %5}], "
               "[%6];\n" :: "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(r0), "r"(r1), "r"(r2),
               "r"(r3), "r"(tl_smem_addr(src)) : "memory");
}""")

# ------------------------------------------------------------------------------------------------ TMEM, tcgen05
_helper("tl_tmem_alloc", r"""
// one warp: allocate `cols` TMEM columns (a power of two >= 32); the base address lands in *slot (shared)
__device__ __forceinline__ void tl_tmem_alloc(unsigned* slot, int cols) {
  asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;\n"
               :: "r"(tl_smem_addr(slot)), "r"(cols) : "memory");
}""")
_helper("tl_tmem_relinquish", r"""
// after the CTA's last allocation: give up the right to allocate, so other CTAs on the SM need not wait for it
__device__ __forceinline__ void tl_tmem_relinquish() {
  asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n" ::: "memory");
}""")
_helper("tl_tmem_dealloc", r"""
__device__ __forceinline__ void tl_tmem_dealloc(unsigned base, int cols) {
  asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;\n" :: "r"(base), "r"(cols) : "memory");
}""")
_helper("tl_tmem_alloc_2cta", r"""
// warp 0 of each CTA of a pair: allocate the same `cols` TMEM columns in both (cta_group::2)
__device__ __forceinline__ void tl_tmem_alloc_2cta(unsigned* slot, int cols) {
  asm volatile("tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%0], %1;\n"
               :: "r"(tl_smem_addr(slot)), "r"(cols) : "memory");
}""")
_helper("tl_tmem_relinquish_2cta", r"""
__device__ __forceinline__ void tl_tmem_relinquish_2cta() {
  asm volatile("tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;\n" ::: "memory");
}""")
_helper("tl_tmem_dealloc_2cta", r"""
__device__ __forceinline__ void tl_tmem_dealloc_2cta(unsigned base, int cols) {
  asm volatile("tcgen05.dealloc.cta_group::2.sync.aligned.b32 %0, %1;\n" :: "r"(base), "r"(cols) : "memory");
}""")
_helper("tl_tcgen05_before_thread_sync", r"""
__device__ __forceinline__ void tl_tcgen05_before_thread_sync() {
  asm volatile("tcgen05.fence::before_thread_sync;\n" ::: "memory");
}""")
_helper("tl_tcgen05_after_thread_sync", r"""
__device__ __forceinline__ void tl_tcgen05_after_thread_sync() {
  asm volatile("tcgen05.fence::after_thread_sync;\n" ::: "memory");
}""")
_helper("tl_tcgen05_commit", r"""
// the mbarrier tracks the completion of every tcgen05.mma this thread issued before
__device__ __forceinline__ void tl_tcgen05_commit(void* bar) {
  asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];\n"
               :: "r"(tl_smem_addr(bar)) : "memory");
}""")
_helper("tl_tcgen05_commit_2cta", r"""
__device__ __forceinline__ void tl_tcgen05_commit_2cta(void* bar) {
  asm volatile("tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%0], %1;\n"
               :: "r"(tl_smem_addr(bar)), "h"((unsigned short)3) : "memory");
}""")
_helper("tl_umma_desc", r"""
// a shared-memory matrix descriptor of tcgen05 (sm_100): start, leading / stride byte offsets, fixed 0b001 at
// bits 46-48, swizzle mode at bits 61-63 (0 none, 2 128B, 4 64B, 6 32B)
__device__ __forceinline__ unsigned long long tl_umma_desc(const void* smem, int lbo, int sbo, int swizzle) {
  unsigned long long d = 0;
  d |= (unsigned long long)((tl_smem_addr(smem) & 0x3FFFF) >> 4);
  d |= (unsigned long long)((lbo & 0x3FFFF) >> 4) << 16;
  d |= (unsigned long long)((sbo & 0x3FFFF) >> 4) << 32;
  d |= 1ull << 46;
  d |= (unsigned long long)(swizzle & 7) << 61;
  return d;
}""")
_helper("tl_umma_desc_based", r"""
// `tl_umma_desc` with the matrix base offset (bits 49-51) and the leading-dimension mode (bit 52: 1 = the leading
// field holds an absolute address)
__device__ __forceinline__ unsigned long long tl_umma_desc_based(const void* smem, int lbo, int sbo, int swizzle,
                                                                 int base_offset, int lbo_absolute) {
  return tl_umma_desc(smem, lbo, sbo, swizzle) | (unsigned long long)(base_offset & 7) << 49
         | (unsigned long long)(lbo_absolute & 1) << 52;
}""", "tl_umma_desc")
_helper("tl_umma_desc_sw", r"""
// the descriptor of a tile the kernel stores in a hardware-swizzled layout (`tl_umma_desc` under the name the
// swizzle pass looks for: the tile's storage follows the descriptor's swizzle)
__device__ __forceinline__ unsigned long long tl_umma_desc_sw(const void* smem, int lbo, int sbo, int swizzle) {
  return tl_umma_desc(smem, lbo, sbo, swizzle);
}""", "tl_umma_desc")
_helper("tl_tcgen05_mma_ss", r"""
// D[tmem] (+)= A[smem] * B[smem] for one instruction descriptor; issued by one thread
__device__ __forceinline__ void tl_tcgen05_mma_ss(unsigned d_tmem, unsigned long long a_desc,
                                                  unsigned long long b_desc, unsigned idesc, int accumulate) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
               " tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, p;\n}\n"
               :: "r"(d_tmem), "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(accumulate) : "memory");
}""")
_helper("tl_tcgen05_mma_ts", r"""
__device__ __forceinline__ void tl_tcgen05_mma_ts(unsigned d_tmem, unsigned a_tmem, unsigned long long b_desc,
                                                  unsigned idesc, int accumulate) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
               " tcgen05.mma.cta_group::1.kind::f16 [%0], [%1], %2, %3, p;\n}\n"
               :: "r"(d_tmem), "r"(a_tmem), "l"(b_desc), "r"(idesc), "r"(accumulate) : "memory");
}""")
for _g in (1, 2):
    for _kind in ("f16", "tf32", "f8f6f4", "i8"):
        # the same MMA for any kind and CTA group (cta_group::2: the pair's M = 2 x 128 rows, issued by the even CTA)
        _helper(f"tl_tcgen05_mma_ss_{_kind}_cg{_g}", rf"""
__device__ __forceinline__ void tl_tcgen05_mma_ss_{_kind}_cg{_g}(unsigned d_tmem, unsigned long long a_desc,
                                                        unsigned long long b_desc, unsigned idesc, int accumulate) {{
  asm volatile("{{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
               " tcgen05.mma.cta_group::{_g}.kind::{_kind} [%0], %1, %2, %3, p;\n}}\n"
               :: "r"(d_tmem), "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(accumulate) : "memory");
}}""")
        _helper(f"tl_tcgen05_mma_ts_{_kind}_cg{_g}", rf"""
__device__ __forceinline__ void tl_tcgen05_mma_ts_{_kind}_cg{_g}(unsigned d_tmem, unsigned a_tmem,
                                                        unsigned long long b_desc, unsigned idesc, int accumulate) {{
  asm volatile("{{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
               " tcgen05.mma.cta_group::{_g}.kind::{_kind} [%0], [%1], %2, %3, p;\n}}\n"
               :: "r"(d_tmem), "r"(a_tmem), "l"(b_desc), "r"(idesc), "r"(accumulate) : "memory");
}}""")
        if _g == 1:
            # the one-CTA form with its disable-output-lane masks (four 32-bit words over the 128 lanes)
            _helper(f"tl_tcgen05_mma_ss_{_kind}_masked", rf"""
__device__ __forceinline__ void tl_tcgen05_mma_ss_{_kind}_masked(unsigned d_tmem, unsigned long long a_desc,
    unsigned long long b_desc, unsigned idesc, int accumulate, unsigned m0, unsigned m1, unsigned m2, unsigned m3) {{
  asm volatile("{{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
               " tcgen05.mma.cta_group::1.kind::{_kind} [%0], %1, %2, %3, {{%5, %6, %7, %8}}, p;\n}}\n"
               :: "r"(d_tmem), "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(accumulate), "r"(m0), "r"(m1), "r"(m2),
                  "r"(m3) : "memory");
}}""")
            _helper(f"tl_tcgen05_mma_ts_{_kind}_masked", rf"""
__device__ __forceinline__ void tl_tcgen05_mma_ts_{_kind}_masked(unsigned d_tmem, unsigned a_tmem,
    unsigned long long b_desc, unsigned idesc, int accumulate, unsigned m0, unsigned m1, unsigned m2, unsigned m3) {{
  asm volatile("{{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
               " tcgen05.mma.cta_group::1.kind::{_kind} [%0], [%1], %2, %3, {{%5, %6, %7, %8}}, p;\n}}\n"
               :: "r"(d_tmem), "r"(a_tmem), "l"(b_desc), "r"(idesc), "r"(accumulate), "r"(m0), "r"(m1), "r"(m2),
                  "r"(m3) : "memory");
}}""")
            # the weight-stationary form (.ws: M 32 / 64 / 128, B kept in the collector buffer; one CTA only)
            _helper(f"tl_tcgen05_mma_ws_ss_{_kind}", rf"""
__device__ __forceinline__ void tl_tcgen05_mma_ws_ss_{_kind}(unsigned d_tmem, unsigned long long a_desc,
                                                         unsigned long long b_desc, unsigned idesc, int accumulate) {{
  asm volatile("{{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
               " tcgen05.mma.ws.cta_group::1.kind::{_kind} [%0], %1, %2, %3, p, 0;\n}}\n"
               :: "r"(d_tmem), "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(accumulate) : "memory");
}}""")
    # block-scaled MX formats: E8M0 scale factors of A and B in TMEM (the descriptor's SF ids pick their bytes)
    _helper(f"tl_tcgen05_mma_bs_mxf8f6f4_cg{_g}", rf"""
__device__ __forceinline__ void tl_tcgen05_mma_bs_mxf8f6f4_cg{_g}(unsigned d_tmem, unsigned long long a_desc,
    unsigned long long b_desc, unsigned idesc, int accumulate, unsigned sfa_tmem, unsigned sfb_tmem) {{
  asm volatile("{{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
               " tcgen05.mma.cta_group::{_g}.kind::mxf8f6f4.block_scale [%0], %1, %2, %3, [%5], [%6], p;\n}}\n"
               :: "r"(d_tmem), "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(accumulate), "r"(sfa_tmem),
                  "r"(sfb_tmem) : "memory");
}}""")
_helper("tl_tcgen05_cp_warpx4_2cta", r"""
// tl_tcgen05_cp_warpx4 for a CTA pair (cta_group::2): each CTA's chunk lands in its own TMEM; issued by the even CTA
__device__ __forceinline__ void tl_tcgen05_cp_warpx4_2cta(const void* smem, unsigned tmem) {
  unsigned long long desc = 0;
  desc |= (unsigned long long)((tl_smem_addr(smem) & 0x3FFFF) >> 4);
  desc |= (unsigned long long)(128 >> 4) << 16;
  desc |= 1ull << 46;
  asm volatile("tcgen05.cp.cta_group::2.32x128b.warpx4 [%0], %1;\n" :: "r"(tmem), "l"(desc) : "memory");
}""")
_helper("tl_tcgen05_ld_32x32b_n", r"""
// each thread of a warp reads `N` consecutive 32-bit columns of its datapath (warp w of the warpgroup: rows 32w..)
template <int N> __device__ __forceinline__ void tl_tcgen05_ld_32x32b(unsigned taddr, void* regs) {
  unsigned* r = reinterpret_cast<unsigned*>(regs);
#pragma unroll
  for (int i = 0; i < N; ++i)
    asm volatile("tcgen05.ld.sync.aligned.32x32b.x1.b32 {%0}, [%1];\n" : "=r"(r[i]) : "r"(taddr + i) : "memory");
  asm volatile("tcgen05.wait::ld.sync.aligned;\n" ::: "memory");
}
#define tl_tcgen05_ld_32x32b_n(n, taddr, regs) tl_tcgen05_ld_32x32b<n>(taddr, regs)""")
_helper("tl_tcgen05_st_32x32b_n", r"""
template <int N> __device__ __forceinline__ void tl_tcgen05_st_32x32b(unsigned taddr, const void* regs) {
  const unsigned* r = reinterpret_cast<const unsigned*>(regs);
#pragma unroll
  for (int i = 0; i < N; ++i)
    asm volatile("tcgen05.st.sync.aligned.32x32b.x1.b32 [%0], {%1};\n" :: "r"(taddr + i), "r"(r[i]) : "memory");
  asm volatile("tcgen05.wait::st.sync.aligned;\n" ::: "memory");
}
#define tl_tcgen05_st_32x32b_n(n, taddr, regs) tl_tcgen05_st_32x32b<n>(taddr, regs)""")
_helper("tl_tcgen05_cp_warpx4", r"""
// 128 words of packed scale factors: shared -> TMEM, four warps' datapaths (32x128b.warpx4)
__device__ __forceinline__ void tl_tcgen05_cp_warpx4(const void* smem, unsigned tmem) {
  unsigned long long desc = 0;
  desc |= (unsigned long long)((tl_smem_addr(smem) & 0x3FFFF) >> 4);
  desc |= (unsigned long long)(128 >> 4) << 16;
  desc |= 1ull << 46;
  asm volatile("tcgen05.cp.cta_group::1.32x128b.warpx4 [%0], %1;\n" :: "r"(tmem), "l"(desc) : "memory");
}""")
_helper("tl_tcgen05_sf_warp_transpose", r"""
// one warp: transpose a 128-word chunk of packed scale factors in shared memory (4 x 32 words -> 32 x 4)
__device__ __forceinline__ void tl_tcgen05_sf_warp_transpose(unsigned* chunk) {
  int lane = threadIdx.x % 32;
  unsigned v[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) v[i] = chunk[i * 32 + lane];
  __syncwarp();
#pragma unroll
  for (int i = 0; i < 4; ++i) chunk[lane * 4 + i] = v[i];
  __syncwarp();
}""")

# ------------------------------------------------------------------------------------------------ random (Philox)
_helper("tl_philox", r"""
// Philox4x32-10 (Salmon et al., SC'11): counter (c0..c3) under key (k0, k1) -> four random words
// the state lives in a thread's local uint32[RNG_STATE_WORDS] (11 words)
struct tl_rng_state { unsigned key0, key1, ctr0, ctr1, ctr2, ctr3; unsigned buf[4]; int used; };
__device__ __forceinline__ void tl_philox_round(unsigned* c, unsigned k0, unsigned k1) {
  unsigned hi0 = __umulhi(0xD2511F53u, c[0]), lo0 = 0xD2511F53u * c[0];
  unsigned hi1 = __umulhi(0xCD9E8D57u, c[2]), lo1 = 0xCD9E8D57u * c[2];
  unsigned n0 = hi1 ^ c[1] ^ k0, n2 = hi0 ^ c[3] ^ k1;
  c[0] = n0; c[1] = lo1; c[2] = n2; c[3] = lo0;
}
__device__ __forceinline__ void tl_philox(tl_rng_state& s) {
  unsigned c[4] = {s.ctr0, s.ctr1, s.ctr2, s.ctr3};
  unsigned k0 = s.key0, k1 = s.key1;
#pragma unroll
  for (int r = 0; r < 10; ++r) {
    tl_philox_round(c, k0, k1);
    k0 += 0x9E3779B9u; k1 += 0xBB67AE85u;
  }
  s.buf[0] = c[0]; s.buf[1] = c[1]; s.buf[2] = c[2]; s.buf[3] = c[3];
  s.used = 0;
  if (++s.ctr0 == 0) if (++s.ctr1 == 0) if (++s.ctr2 == 0) ++s.ctr3;
}""")
_helper("tl_rng_init", r"""
__device__ __forceinline__ void tl_rng_init(void* state, unsigned long long seed, unsigned long long subsequence,
                                            unsigned long long offset) {
  tl_rng_state& s = *reinterpret_cast<tl_rng_state*>(state);
  s.key0 = (unsigned)seed; s.key1 = (unsigned)(seed >> 32);
  s.ctr0 = (unsigned)(offset / 4); s.ctr1 = (unsigned)((offset / 4) >> 32);
  s.ctr2 = (unsigned)subsequence; s.ctr3 = (unsigned)(subsequence >> 32);
  tl_philox(s);
  s.used = (int)(offset % 4);
}""", "tl_philox")
_helper("tl_rng_rand", r"""
__device__ __forceinline__ unsigned tl_rng_rand(void* state) {
  tl_rng_state& s = *reinterpret_cast<tl_rng_state*>(state);
  if (s.used == 4) tl_philox(s);
  return s.buf[s.used++];
}""", "tl_philox")
_helper("tl_rng_uniform_f32", r"""
// uniform in (0, 1] as curand_uniform: x * 2^-32 + 2^-33
__device__ __forceinline__ float tl_rng_uniform_f32(void* state) {
  return (float)tl_rng_rand(state) * 2.3283064e-10f + 1.1641532e-10f;
}""", "tl_rng_rand")
_helper("tl_rng_uniform_f64", r"""
// uniform in (0, 1] from two words (53 random bits), as curand_uniform_double
__device__ __forceinline__ double tl_rng_uniform_f64(void* state) {
  unsigned long long hi = tl_rng_rand(state), lo = tl_rng_rand(state);
  unsigned long long z = (hi << 21) ^ lo;
  return (double)(z & ((1ull << 53) - 1)) * 1.1102230246251565e-16 + 5.551115123125783e-17;
}""", "tl_rng_rand")
_helper("tl_rng_normal_f32", r"""
// standard normal by Box-Muller on two uniforms
__device__ __forceinline__ float tl_rng_normal_f32(void* state) {
  float u = tl_rng_uniform_f32(state), v = tl_rng_uniform_f32(state);
  return sqrtf(-2.0f * logf(u)) * cospif(2.0f * v);
}""", "tl_rng_uniform_f32")
_helper("tl_rng_normal_f64", r"""
__device__ __forceinline__ double tl_rng_normal_f64(void* state) {
  double u = tl_rng_uniform_f64(state), v = tl_rng_uniform_f64(state);
  return sqrt(-2.0 * log(u)) * cospi(2.0 * v);
}""", "tl_rng_uniform_f64")

_CALLED = re.compile(r"\b(tl_[A-Za-z0-9_]+)\b")


def snippets_for(source: str) -> str:
    """The helpers `source` calls (and the helpers those call), in dependency order."""
    wanted = [n for n in dict.fromkeys(_CALLED.findall(source)) if n in HELPERS]
    ordered: list[str] = []

    def add(name: str) -> None:
        if name in ordered:
            return
        for dep in HELPERS[name][1]:
            add(dep)
        ordered.append(name)

    for name in wanted:
        add(name)
    return "".join(HELPERS[n][0] for n in ordered)
