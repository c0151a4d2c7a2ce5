; tilelang-rocm device library: atomics LLVM has no TIR builtin for (linked by TVM's ROCm codegen).
; tl_atomic_<op>_<space>_<type>(ptr, value) returns the old value; relaxed (monotonic) ordering,
; agent scope. Spaces: global = addrspace(1), shared = addrspace(3).

define linkonce_odr float @tl_atomic_max_global_f32(ptr addrspace(1) %p, float %v) {
  %old = atomicrmw fmax ptr addrspace(1) %p, float %v syncscope("agent") monotonic, align 4
  ret float %old
}

define linkonce_odr float @tl_atomic_min_global_f32(ptr addrspace(1) %p, float %v) {
  %old = atomicrmw fmin ptr addrspace(1) %p, float %v syncscope("agent") monotonic, align 4
  ret float %old
}

define linkonce_odr float @tl_atomic_add_global_f32(ptr addrspace(1) %p, float %v) {
  %old = atomicrmw fadd ptr addrspace(1) %p, float %v syncscope("agent") monotonic, align 4
  ret float %old
}

define linkonce_odr i32 @tl_atomic_max_global_i32(ptr addrspace(1) %p, i32 %v) {
  %old = atomicrmw max ptr addrspace(1) %p, i32 %v syncscope("agent") monotonic, align 4
  ret i32 %old
}

define linkonce_odr i32 @tl_atomic_min_global_i32(ptr addrspace(1) %p, i32 %v) {
  %old = atomicrmw min ptr addrspace(1) %p, i32 %v syncscope("agent") monotonic, align 4
  ret i32 %old
}

define linkonce_odr i32 @tl_atomic_add_global_i32(ptr addrspace(1) %p, i32 %v) {
  %old = atomicrmw add ptr addrspace(1) %p, i32 %v syncscope("agent") monotonic, align 4
  ret i32 %old
}

define linkonce_odr i32 @tl_atomic_max_global_u32(ptr addrspace(1) %p, i32 %v) {
  %old = atomicrmw umax ptr addrspace(1) %p, i32 %v syncscope("agent") monotonic, align 4
  ret i32 %old
}

define linkonce_odr i32 @tl_atomic_min_global_u32(ptr addrspace(1) %p, i32 %v) {
  %old = atomicrmw umin ptr addrspace(1) %p, i32 %v syncscope("agent") monotonic, align 4
  ret i32 %old
}

define linkonce_odr i32 @tl_atomic_add_global_u32(ptr addrspace(1) %p, i32 %v) {
  %old = atomicrmw add ptr addrspace(1) %p, i32 %v syncscope("agent") monotonic, align 4
  ret i32 %old
}

define linkonce_odr float @tl_atomic_max_shared_f32(ptr addrspace(3) %p, float %v) {
  %old = atomicrmw fmax ptr addrspace(3) %p, float %v syncscope("agent") monotonic, align 4
  ret float %old
}

define linkonce_odr float @tl_atomic_min_shared_f32(ptr addrspace(3) %p, float %v) {
  %old = atomicrmw fmin ptr addrspace(3) %p, float %v syncscope("agent") monotonic, align 4
  ret float %old
}

define linkonce_odr float @tl_atomic_add_shared_f32(ptr addrspace(3) %p, float %v) {
  %old = atomicrmw fadd ptr addrspace(3) %p, float %v syncscope("agent") monotonic, align 4
  ret float %old
}

define linkonce_odr i32 @tl_atomic_max_shared_i32(ptr addrspace(3) %p, i32 %v) {
  %old = atomicrmw max ptr addrspace(3) %p, i32 %v syncscope("agent") monotonic, align 4
  ret i32 %old
}

define linkonce_odr i32 @tl_atomic_min_shared_i32(ptr addrspace(3) %p, i32 %v) {
  %old = atomicrmw min ptr addrspace(3) %p, i32 %v syncscope("agent") monotonic, align 4
  ret i32 %old
}

define linkonce_odr i32 @tl_atomic_add_shared_i32(ptr addrspace(3) %p, i32 %v) {
  %old = atomicrmw add ptr addrspace(3) %p, i32 %v syncscope("agent") monotonic, align 4
  ret i32 %old
}

define linkonce_odr i32 @tl_atomic_max_shared_u32(ptr addrspace(3) %p, i32 %v) {
  %old = atomicrmw umax ptr addrspace(3) %p, i32 %v syncscope("agent") monotonic, align 4
  ret i32 %old
}

define linkonce_odr i32 @tl_atomic_min_shared_u32(ptr addrspace(3) %p, i32 %v) {
  %old = atomicrmw umin ptr addrspace(3) %p, i32 %v syncscope("agent") monotonic, align 4
  ret i32 %old
}

define linkonce_odr i32 @tl_atomic_add_shared_u32(ptr addrspace(3) %p, i32 %v) {
  %old = atomicrmw add ptr addrspace(3) %p, i32 %v syncscope("agent") monotonic, align 4
  ret i32 %old
}
