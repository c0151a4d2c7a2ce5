// tilelang_cuda/tma.cuh: TMA bulk tensor copies on user mbarriers (sm_90+; the CTA-pair and gather / scatter forms
// sm_100+)
#ifndef TILELANG_CUDA_TMA_CUH
#define TILELANG_CUDA_TMA_CUH

#include "tilelang_cuda/common.cuh"

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
// tl_tma_copy_load_<r>d: one tiled bulk copy of a box into shared memory, completing its bytes on the user's
// mbarrier; tl_tma_copy_store_<r>d: one tiled bulk copy of a shared box to global memory, in the current bulk group
__device__ __forceinline__ void tl_tma_copy_load_1d(const void* map, void* dst, void* bar, int c0) {
  asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes "
               "[%0], [%1, {%2}], [%3];\n"
               :: "r"(tl_smem_addr(dst)), "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0),
               "r"(tl_smem_addr(bar)) : "memory");
}
__device__ __forceinline__ void tl_tma_copy_store_1d(const void* map, const void* src, int c0) {
  asm volatile("cp.async.bulk.tensor.1d.global.shared::cta.bulk_group [%0, {%1}], [%2];\n"
               :: "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(tl_smem_addr(src)) : "memory");
}
__device__ __forceinline__ void tl_tma_copy_load_2d(const void* map, void* dst, void* bar, int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes "
               "[%0], [%1, {%2, %3}], [%4];\n"
               :: "r"(tl_smem_addr(dst)), "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1),
               "r"(tl_smem_addr(bar)) : "memory");
}
__device__ __forceinline__ void tl_tma_copy_store_2d(const void* map, const void* src, int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n"
               :: "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(tl_smem_addr(src)) : "memory");
}
__device__ __forceinline__ void tl_tma_copy_load_3d(const void* map, void* dst, void* bar, int c0, int c1, int c2) {
  asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes "
               "[%0], [%1, {%2, %3, %4}], [%5];\n"
               :: "r"(tl_smem_addr(dst)), "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(c2),
               "r"(tl_smem_addr(bar)) : "memory");
}
__device__ __forceinline__ void tl_tma_copy_store_3d(const void* map, const void* src, int c0, int c1, int c2) {
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%1, %2, %3}], [%4];\n"
               :: "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(tl_smem_addr(src))
               : "memory");
}
__device__ __forceinline__ void tl_tma_copy_load_4d(const void* map, void* dst, void* bar, int c0, int c1, int c2,
    int c3) {
  asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes "
               "[%0], [%1, {%2, %3, %4, %5}], [%6];\n"
               :: "r"(tl_smem_addr(dst)), "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(c2),
               "r"(c3), "r"(tl_smem_addr(bar)) : "memory");
}
__device__ __forceinline__ void tl_tma_copy_store_4d(const void* map, const void* src, int c0, int c1, int c2, int c3) {
  asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.bulk_group [%0, {%1, %2, %3, %4}], [%5];\n"
               :: "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3),
               "r"(tl_smem_addr(src)) : "memory");
}
__device__ __forceinline__ void tl_tma_copy_load_5d(const void* map, void* dst, void* bar, int c0, int c1, int c2,
    int c3, int c4) {
  asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::bytes "
               "[%0], [%1, {%2, %3, %4, %5, %6}], [%7];\n"
               :: "r"(tl_smem_addr(dst)), "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(c2),
               "r"(c3), "r"(c4), "r"(tl_smem_addr(bar)) : "memory");
}
__device__ __forceinline__ void tl_tma_copy_store_5d(const void* map, const void* src, int c0, int c1, int c2,
    int c3, int c4) {
  asm volatile("cp.async.bulk.tensor.5d.global.shared::cta.bulk_group [%0, {%1, %2, %3, %4, %5}], [%6];\n"
               :: "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4),
               "r"(tl_smem_addr(src)) : "memory");
}
// a 2-D box multicast to the CTAs of `mask` in the cluster (each completes `bytes` on its own copy of `bar`)
__device__ __forceinline__ void tl_tma_load_multicast(const void* map, void* dst, void* bar, unsigned short mask,
                                                      int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster "
               "[%0], [%1, {%2, %3}], [%4], %5;\n"
               :: "r"(tl_smem_addr(dst)), "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1),
                  "r"(tl_smem_addr(bar)), "h"(mask) : "memory");
}
__device__ __forceinline__ void tl_tma_store_arrive() {
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}
template <int N, bool Read> __device__ __forceinline__ void tl_tma_store_wait() {
  if (Read)
    asm volatile("cp.async.bulk.wait_group.read %0;\n" :: "n"(N) : "memory");
  else
    asm volatile("cp.async.bulk.wait_group %0;\n" :: "n"(N) : "memory");
}
#define tl_tma_store_wait_n(n, read) tl_tma_store_wait<n, read>()
__device__ __forceinline__ void tl_prefetch_tma_descriptor(const void* map) {
  asm volatile("prefetch.tensormap [%0];\n" :: "l"(reinterpret_cast<unsigned long long>(map)) : "memory");
}
#endif  // sm_90+

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 1000
// the same copy issued by each CTA of a pair (cta_group::2): the bytes complete on the even (leader) CTA's copy
// of `bar` (the peer bit of its shared::cluster address cleared)
__device__ __forceinline__ void tl_tma_copy_load_2sm_1d(const void* map, void* dst, void* bar, int c0) {
  asm volatile("cp.async.bulk.tensor.1d.cta_group::2.shared::cluster.global.mbarrier::complete_tx::bytes "
               "[%0], [%1, {%3}], [%2];\n"
               :: "r"(tl_smem_addr(dst)), "l"(reinterpret_cast<unsigned long long>(map)),
               "r"(tl_smem_addr(bar) & 0xFEFFFFFFu), "r"(c0) : "memory");
}
__device__ __forceinline__ void tl_tma_copy_load_2sm_2d(const void* map, void* dst, void* bar, int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.cta_group::2.shared::cluster.global.mbarrier::complete_tx::bytes "
               "[%0], [%1, {%3, %4}], [%2];\n"
               :: "r"(tl_smem_addr(dst)), "l"(reinterpret_cast<unsigned long long>(map)),
               "r"(tl_smem_addr(bar) & 0xFEFFFFFFu), "r"(c0), "r"(c1) : "memory");
}
__device__ __forceinline__ void tl_tma_copy_load_2sm_3d(const void* map, void* dst, void* bar, int c0, int c1, int c2) {
  asm volatile("cp.async.bulk.tensor.3d.cta_group::2.shared::cluster.global.mbarrier::complete_tx::bytes "
               "[%0], [%1, {%3, %4, %5}], [%2];\n"
               :: "r"(tl_smem_addr(dst)), "l"(reinterpret_cast<unsigned long long>(map)),
               "r"(tl_smem_addr(bar) & 0xFEFFFFFFu), "r"(c0), "r"(c1), "r"(c2) : "memory");
}
__device__ __forceinline__ void tl_tma_copy_load_2sm_4d(const void* map, void* dst, void* bar, int c0, int c1,
    int c2, int c3) {
  asm volatile("cp.async.bulk.tensor.4d.cta_group::2.shared::cluster.global.mbarrier::complete_tx::bytes "
               "[%0], [%1, {%3, %4, %5, %6}], [%2];\n"
               :: "r"(tl_smem_addr(dst)), "l"(reinterpret_cast<unsigned long long>(map)),
               "r"(tl_smem_addr(bar) & 0xFEFFFFFFu), "r"(c0), "r"(c1), "r"(c2), "r"(c3) : "memory");
}
__device__ __forceinline__ void tl_tma_copy_load_2sm_5d(const void* map, void* dst, void* bar, int c0, int c1,
    int c2, int c3, int c4) {
  asm volatile("cp.async.bulk.tensor.5d.cta_group::2.shared::cluster.global.mbarrier::complete_tx::bytes "
               "[%0], [%1, {%3, %4, %5, %6, %7}], [%2];\n"
               :: "r"(tl_smem_addr(dst)), "l"(reinterpret_cast<unsigned long long>(map)),
               "r"(tl_smem_addr(bar) & 0xFEFFFFFFu), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4) : "memory");
}
// four rows (r0..r3) of a 2-D tensor, `cols` wide from column c0, into a (4, cols) shared tile (sm_100a)
__device__ __forceinline__ void tl_tma_gather4(const void* map, void* dst, void* bar, int c0, int r0, int r1, int r2,
                                               int r3) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile::gather4.mbarrier::complete_tx::bytes "
               "[%0], [%1, {%2, %3, %4, %5, %6}], [%7];\n"
               :: "r"(tl_smem_addr(dst)), "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(r0),
                  "r"(r1), "r"(r2), "r"(r3), "r"(tl_smem_addr(bar)) : "memory");
}
__device__ __forceinline__ void tl_tma_scatter4(const void* map, const void* src, int c0, int r0, int r1, int r2,
                                                int r3) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile::scatter4.bulk_group [%0, {%1, %2, %3, %4, %5}], "
               "[%6];\n" :: "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(r0), "r"(r1), "r"(r2),
               "r"(r3), "r"(tl_smem_addr(src)) : "memory");
}
#endif  // sm_100+

#endif  // TILELANG_CUDA_TMA_CUH
