// tilelang_cuda/cluster.cuh: proxy fences, register reallocation, programmatic dependent launch, clusters (sm_90+)
// and cluster launch control (sm_100+)
#ifndef TILELANG_CUDA_CLUSTER_CUH
#define TILELANG_CUDA_CLUSTER_CUH

#include "tilelang_cuda/common.cuh"

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
__device__ __forceinline__ void tl_fence_proxy_async_all() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
template <int N> __device__ __forceinline__ void tl_setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" :: "n"(N));
}
#define tl_set_max_nreg_inc(n) tl_setmaxnreg_inc<n>()
template <int N> __device__ __forceinline__ void tl_setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" :: "n"(N));
}
#define tl_set_max_nreg_dec(n) tl_setmaxnreg_dec<n>()
__device__ __forceinline__ void tl_griddepcontrol_launch_dependents() {
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
}
__device__ __forceinline__ void tl_griddepcontrol_wait() { asm volatile("griddepcontrol.wait;\n" ::: "memory"); }
__device__ __forceinline__ int tl_cluster_ctarank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return (int)r;
}
__device__ __forceinline__ void tl_cluster_arrive() {
  asm volatile("barrier.cluster.arrive.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void tl_cluster_arrive_relaxed() {
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void tl_cluster_wait() { asm volatile("barrier.cluster.wait.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void tl_cluster_sync() {
  asm volatile("barrier.cluster.arrive.aligned;\nbarrier.cluster.wait.aligned;\n" ::: "memory");
}
#endif  // sm_90+

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 1000
__device__ __forceinline__ void tl_clc_try_cancel(void* result, void* bar) {
  asm volatile("clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.b128 [%0], [%1];\n"
               :: "r"(tl_smem_addr(result)), "r"(tl_smem_addr(bar)) : "memory");
}
__device__ __forceinline__ void tl_clc_try_cancel_multicast(void* result, void* bar) {
  asm volatile("clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.multicast::cluster::all"
               ".b128 [%0], [%1];\n" :: "r"(tl_smem_addr(result)), "r"(tl_smem_addr(bar)) : "memory");
}
__device__ __forceinline__ int tl_clc_is_canceled(const void* result) {
  unsigned ok;
  asm volatile("{\n .reg .b128 r;\n .reg .pred p;\n ld.shared.b128 r, [%1];\n"
               " clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 p, r;\n selp.u32 %0, 1, 0, p;\n}\n"
               : "=r"(ok) : "r"(tl_smem_addr(result)) : "memory");
  return (int)ok;
}
__device__ __forceinline__ int tl_clc_get_first_ctaid_x(const void* result) {
  int v;
  asm volatile("{\n .reg .b128 r;\n ld.shared.b128 r, [%1];\n"
               " clusterlaunchcontrol.query_cancel.get_first_ctaid::x.b32.b128 %0, r;\n}\n"
               : "=r"(v) : "r"(tl_smem_addr(result)) : "memory");
  return v;
}
__device__ __forceinline__ int tl_clc_get_first_ctaid_y(const void* result) {
  int v;
  asm volatile("{\n .reg .b128 r;\n ld.shared.b128 r, [%1];\n"
               " clusterlaunchcontrol.query_cancel.get_first_ctaid::y.b32.b128 %0, r;\n}\n"
               : "=r"(v) : "r"(tl_smem_addr(result)) : "memory");
  return v;
}
__device__ __forceinline__ int tl_clc_get_first_ctaid_z(const void* result) {
  int v;
  asm volatile("{\n .reg .b128 r;\n ld.shared.b128 r, [%1];\n"
               " clusterlaunchcontrol.query_cancel.get_first_ctaid::z.b32.b128 %0, r;\n}\n"
               : "=r"(v) : "r"(tl_smem_addr(result)) : "memory");
  return v;
}
#endif  // sm_100+

#endif  // TILELANG_CUDA_CLUSTER_CUH
