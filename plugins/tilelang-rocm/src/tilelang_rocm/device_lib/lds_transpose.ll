; tilelang-rocm device library: gfx950's LDS transpose reads (T.ds_read_tr16_b64 / T.ds_read_tr8_b64), taking the
; LDS address as addrspace(3) as TVM passes a shared element's address; the 64 bits come back as <2 x i32>.

define linkonce_odr <2 x i32> @tl_ds_read_tr16_b64(ptr addrspace(3) %p) {
  %v = call <4 x i16> @llvm.amdgcn.ds.read.tr16.b64.v4i16(ptr addrspace(3) %p)
  %r = bitcast <4 x i16> %v to <2 x i32>
  ret <2 x i32> %r
}

define linkonce_odr <2 x i32> @tl_ds_read_tr8_b64(ptr addrspace(3) %p) {
  %v = call <2 x i32> @llvm.amdgcn.ds.read.tr8.b64.v2i32(ptr addrspace(3) %p)
  ret <2 x i32> %v
}

declare <4 x i16> @llvm.amdgcn.ds.read.tr16.b64.v4i16(ptr addrspace(3))
declare <2 x i32> @llvm.amdgcn.ds.read.tr8.b64.v2i32(ptr addrspace(3))
