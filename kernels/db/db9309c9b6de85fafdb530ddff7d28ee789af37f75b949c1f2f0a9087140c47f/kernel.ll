; ModuleID = 'TVMAMDGPUModule'
source_filename = "TVMAMDGPUModule"
target datalayout = "e-m:e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128:128:48-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
target triple = "amdgcn-amd-amdhsa-hcc"

; Function Attrs: nofree norecurse nosync nounwind memory(argmem: readwrite)
define dllexport amdgpu_kernel void @gemv_kernel(ptr addrspace(1) noalias readonly captures(none) %A, ptr addrspace(1) noalias readonly captures(none) %B, ptr addrspace(1) noalias writeonly captures(none) %C) local_unnamed_addr #0 {
entry:
  %0 = tail call i32 @llvm.amdgcn.workgroup.id.x()
  %1 = tail call i32 @llvm.amdgcn.workitem.id.x()
  %2 = shl nuw nsw i32 %1, 9
  %3 = shl nsw i32 %0, 16
  %4 = add nsw i32 %3, %2
  br label %for_body_k

for_body_k:                                       ; preds = %for_body_k, %entry
  %k3 = phi i32 [ 0, %entry ], [ %92, %for_body_k ]
  %.02 = phi float [ 0.000000e+00, %entry ], [ %91, %for_body_k ]
  %5 = zext nneg i32 %k3 to i64
  %6 = getelementptr inbounds nuw half, ptr addrspace(1) %A, i64 %5
  %7 = load half, ptr addrspace(1) %6, align 2, !tbaa !0, !amdgpu.noclobber !3
  %8 = fpext half %7 to float
  %9 = add nuw nsw i32 %k3, %4
  %10 = sext i32 %9 to i64
  %11 = getelementptr inbounds half, ptr addrspace(1) %B, i64 %10
  %12 = load half, ptr addrspace(1) %11, align 2, !tbaa !4, !amdgpu.noclobber !3
  %13 = fpext half %12 to float
  %14 = tail call float @llvm.fmuladd.f32(float %8, float %13, float %.02)
  %15 = or disjoint i32 %k3, 1
  %16 = zext nneg i32 %15 to i64
  %17 = getelementptr inbounds nuw half, ptr addrspace(1) %A, i64 %16
  %18 = load half, ptr addrspace(1) %17, align 2, !tbaa !0, !amdgpu.noclobber !3
  %19 = fpext half %18 to float
  %20 = add nuw nsw i32 %15, %4
  %21 = sext i32 %20 to i64
  %22 = getelementptr inbounds half, ptr addrspace(1) %B, i64 %21
  %23 = load half, ptr addrspace(1) %22, align 2, !tbaa !4, !amdgpu.noclobber !3
  %24 = fpext half %23 to float
  %25 = tail call float @llvm.fmuladd.f32(float %19, float %24, float %14)
  %26 = or disjoint i32 %k3, 2
  %27 = zext nneg i32 %26 to i64
  %28 = getelementptr inbounds nuw half, ptr addrspace(1) %A, i64 %27
  %29 = load half, ptr addrspace(1) %28, align 2, !tbaa !0, !amdgpu.noclobber !3
  %30 = fpext half %29 to float
  %31 = add nuw nsw i32 %26, %4
  %32 = sext i32 %31 to i64
  %33 = getelementptr inbounds half, ptr addrspace(1) %B, i64 %32
  %34 = load half, ptr addrspace(1) %33, align 2, !tbaa !4, !amdgpu.noclobber !3
  %35 = fpext half %34 to float
  %36 = tail call float @llvm.fmuladd.f32(float %30, float %35, float %25)
  %37 = or disjoint i32 %k3, 3
  %38 = zext nneg i32 %37 to i64
  %39 = getelementptr inbounds nuw half, ptr addrspace(1) %A, i64 %38
  %40 = load half, ptr addrspace(1) %39, align 2, !tbaa !0, !amdgpu.noclobber !3
  %41 = fpext half %40 to float
  %42 = add nuw nsw i32 %37, %4
  %43 = sext i32 %42 to i64
  %44 = getelementptr inbounds half, ptr addrspace(1) %B, i64 %43
  %45 = load half, ptr addrspace(1) %44, align 2, !tbaa !4, !amdgpu.noclobber !3
  %46 = fpext half %45 to float
  %47 = tail call float @llvm.fmuladd.f32(float %41, float %46, float %36)
  %48 = or disjoint i32 %k3, 4
  %49 = zext nneg i32 %48 to i64
  %50 = getelementptr inbounds nuw half, ptr addrspace(1) %A, i64 %49
  %51 = load half, ptr addrspace(1) %50, align 2, !tbaa !0, !amdgpu.noclobber !3
  %52 = fpext half %51 to float
  %53 = add nuw nsw i32 %48, %4
  %54 = sext i32 %53 to i64
  %55 = getelementptr inbounds half, ptr addrspace(1) %B, i64 %54
  %56 = load half, ptr addrspace(1) %55, align 2, !tbaa !4, !amdgpu.noclobber !3
  %57 = fpext half %56 to float
  %58 = tail call float @llvm.fmuladd.f32(float %52, float %57, float %47)
  %59 = or disjoint i32 %k3, 5
  %60 = zext nneg i32 %59 to i64
  %61 = getelementptr inbounds nuw half, ptr addrspace(1) %A, i64 %60
  %62 = load half, ptr addrspace(1) %61, align 2, !tbaa !0, !amdgpu.noclobber !3
  %63 = fpext half %62 to float
  %64 = add nuw nsw i32 %59, %4
  %65 = sext i32 %64 to i64
  %66 = getelementptr inbounds half, ptr addrspace(1) %B, i64 %65
  %67 = load half, ptr addrspace(1) %66, align 2, !tbaa !4, !amdgpu.noclobber !3
  %68 = fpext half %67 to float
  %69 = tail call float @llvm.fmuladd.f32(float %63, float %68, float %58)
  %70 = or disjoint i32 %k3, 6
  %71 = zext nneg i32 %70 to i64
  %72 = getelementptr inbounds nuw half, ptr addrspace(1) %A, i64 %71
  %73 = load half, ptr addrspace(1) %72, align 2, !tbaa !0, !amdgpu.noclobber !3
  %74 = fpext half %73 to float
  %75 = add nuw nsw i32 %70, %4
  %76 = sext i32 %75 to i64
  %77 = getelementptr inbounds half, ptr addrspace(1) %B, i64 %76
  %78 = load half, ptr addrspace(1) %77, align 2, !tbaa !4, !amdgpu.noclobber !3
  %79 = fpext half %78 to float
  %80 = tail call float @llvm.fmuladd.f32(float %74, float %79, float %69)
  %81 = or disjoint i32 %k3, 7
  %82 = zext nneg i32 %81 to i64
  %83 = getelementptr inbounds nuw half, ptr addrspace(1) %A, i64 %82
  %84 = load half, ptr addrspace(1) %83, align 2, !tbaa !0, !amdgpu.noclobber !3
  %85 = fpext half %84 to float
  %86 = add nuw nsw i32 %81, %4
  %87 = sext i32 %86 to i64
  %88 = getelementptr inbounds half, ptr addrspace(1) %B, i64 %87
  %89 = load half, ptr addrspace(1) %88, align 2, !tbaa !4, !amdgpu.noclobber !3
  %90 = fpext half %89 to float
  %91 = tail call float @llvm.fmuladd.f32(float %85, float %90, float %80)
  %92 = add nuw nsw i32 %k3, 8
  %exitcond.not.7 = icmp eq i32 %92, 512
  br i1 %exitcond.not.7, label %for_end_k, label %for_body_k, !prof !6, !llvm.loop !7

for_end_k:                                        ; preds = %for_body_k
  %93 = fptrunc float %91 to half
  %94 = shl nsw i32 %0, 7
  %95 = add nsw i32 %94, %1
  %96 = sext i32 %95 to i64
  %97 = getelementptr inbounds half, ptr addrspace(1) %C, i64 %96
  store half %93, ptr addrspace(1) %97, align 2, !tbaa !9
  ret void
}

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.amdgcn.workgroup.id.x() #1

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef range(i32 0, 1024) i32 @llvm.amdgcn.workitem.id.x() #1

; Function Attrs: mustprogress nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none)
declare float @llvm.fmuladd.f32(float, float, float) #2

; Function Attrs: nofree nosync nounwind memory(none)
define weak dso_local i16 @__truncsfhf2(float %a0) local_unnamed_addr #3 section ".text.tvm.fp16.conv" {
b0:
  %v0 = bitcast float %a0 to i32
  %0 = tail call float @llvm.fabs.f32(float %a0)
  %v1 = bitcast float %0 to i32
  %v2 = add nsw i32 %v1, -947912704
  %v3 = add nsw i32 %v1, -1199570944
  %v4 = icmp ult i32 %v2, %v3
  br i1 %v4, label %b1, label %b5

b1:                                               ; preds = %b0
  %v5 = lshr i32 %v0, 13
  %v8 = and i32 %v0, 8191
  %v9 = icmp samesign ugt i32 %v8, 4096
  br i1 %v9, label %b2, label %b3

b2:                                               ; preds = %b1
  %v10 = add nsw i32 %v5, -114687
  br label %b13

b3:                                               ; preds = %b1
  %v7 = add nsw i32 %v5, -114688
  %v11 = icmp eq i32 %v8, 4096
  %v13 = and i32 %v5, 1
  %v14 = select i1 %v11, i32 %v13, i32 0
  %spec.select = add nsw i32 %v7, %v14
  br label %b13

b5:                                               ; preds = %b0
  %v15 = icmp samesign ugt i32 %v1, 2139095040
  br i1 %v15, label %b6, label %b7

b6:                                               ; preds = %b5
  %v16 = lshr i32 %v0, 13
  %v17 = and i32 %v16, 511
  %v18 = or disjoint i32 %v17, 32256
  br label %b13

b7:                                               ; preds = %b5
  %v19 = icmp samesign ugt i32 %v1, 1199570943
  br i1 %v19, label %b13, label %b8

b8:                                               ; preds = %b7
  %v20 = icmp samesign ult i32 %v1, 754974720
  br i1 %v20, label %b13, label %b9

b9:                                               ; preds = %b8
  %v21 = lshr i32 %v1, 23
  %v22 = sub nsw i32 113, %v21
  %v23 = and i32 %v0, 8388607
  %v24 = or disjoint i32 %v23, 8388608
  %v25 = add nsw i32 %v21, -81
  %v26 = shl i32 %v24, %v25
  %v27 = icmp ne i32 %v26, 0
  %v28 = lshr i32 %v24, %v22
  %v29 = zext i1 %v27 to i32
  %v30 = lshr i32 %v28, 13
  %v31 = and i32 %v28, 8191
  %v32 = or i32 %v31, %v29
  %v33 = icmp samesign ugt i32 %v32, 4096
  br i1 %v33, label %b10, label %b11

b10:                                              ; preds = %b9
  %v34 = add nuw nsw i32 %v30, 1
  br label %b13

b11:                                              ; preds = %b9
  %v35 = icmp eq i32 %v32, 4096
  %v36 = and i32 %v30, 1
  %v37 = select i1 %v35, i32 %v36, i32 0
  %spec.select1 = add nuw nsw i32 %v37, %v30
  br label %b13

b13:                                              ; preds = %b11, %b3, %b10, %b8, %b7, %b6, %b2
  %v38 = phi i32 [ %v18, %b6 ], [ %v10, %b2 ], [ %spec.select, %b3 ], [ %spec.select1, %b11 ], [ 31744, %b7 ], [ 0, %b8 ], [ %v34, %b10 ]
  %v39 = lshr i32 %v0, 16
  %v40 = and i32 %v39, 32768
  %v41 = or i32 %v38, %v40
  %vlast = trunc i32 %v41 to i16
  ret i16 %vlast
}

; Function Attrs: nofree nosync nounwind memory(none)
define weak dso_local float @__extendhfsf2(i16 %a0) local_unnamed_addr #3 section ".text.tvm.fp16.conv" {
b0:
  %v1 = and i16 %a0, 32767
  %v2 = zext nneg i16 %v1 to i32
  %v3 = add nsw i16 %v1, -1024
  %v4 = icmp ult i16 %v3, 30720
  br i1 %v4, label %b1, label %b2

b1:                                               ; preds = %b0
  %v5 = shl nuw nsw i32 %v2, 13
  %v6 = add nuw nsw i32 %v5, 939524096
  br label %b6

b2:                                               ; preds = %b0
  %v7 = icmp samesign ugt i16 %v1, 31743
  br i1 %v7, label %b3, label %b4

b3:                                               ; preds = %b2
  %v8 = shl nuw nsw i32 %v2, 13
  %v9 = or i32 %v8, 2139095040
  br label %b6

b4:                                               ; preds = %b2
  %v10 = icmp eq i16 %v1, 0
  br i1 %v10, label %b6, label %b5

b5:                                               ; preds = %b4
  %v11 = icmp samesign ult i16 %v1, 256
  %v12 = lshr i32 %v2, 8
  %v13 = select i1 %v11, i32 %v2, i32 %v12
  %v14 = select i1 %v11, i32 32, i32 24
  %v15 = icmp samesign ult i32 %v13, 16
  %v16 = lshr i32 %v13, 4
  %v17 = add nsw i32 %v14, -4
  %v18 = select i1 %v15, i32 %v13, i32 %v16
  %v19 = select i1 %v15, i32 %v14, i32 %v17
  %v20 = icmp samesign ult i32 %v18, 4
  %v21 = lshr i32 %v18, 2
  %v22 = add nsw i32 %v19, -2
  %v23 = select i1 %v20, i32 %v18, i32 %v21
  %v24 = select i1 %v20, i32 %v19, i32 %v22
  %v25 = icmp samesign ult i32 %v23, 2
  %v26 = sub nsw i32 0, %v23
  %v27 = select i1 %v25, i32 %v26, i32 -2
  %v28 = add nsw i32 %v27, %v24
  %v29 = add nsw i32 %v28, -8
  %v30 = shl i32 %v2, %v29
  %v31 = xor i32 %v30, 8388608
  %v32 = shl i32 %v28, 23
  %v33 = sub i32 1124073472, %v32
  %v34 = or i32 %v31, %v33
  br label %b6

b6:                                               ; preds = %b5, %b4, %b3, %b1
  %v35 = phi i32 [ %v6, %b1 ], [ %v9, %b3 ], [ %v34, %b5 ], [ 0, %b4 ]
  %v36 = and i16 %a0, -32768
  %v37 = zext i16 %v36 to i32
  %v38 = shl nuw i32 %v37, 16
  %v39 = or i32 %v35, %v38
  %v40 = bitcast i32 %v39 to float
  ret float %v40
}

; Function Attrs: nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none)
declare float @llvm.fabs.f32(float) #4

attributes #0 = { nofree norecurse nosync nounwind memory(argmem: readwrite) "amdgpu-agpr-alloc"="0" "amdgpu-flat-work-group-size"="1,256" "amdgpu-no-cluster-id-x" "amdgpu-no-cluster-id-y" "amdgpu-no-cluster-id-z" "amdgpu-no-completion-action" "amdgpu-no-default-queue" "amdgpu-no-dispatch-id" "amdgpu-no-dispatch-ptr" "amdgpu-no-flat-scratch-init" "amdgpu-no-heap-ptr" "amdgpu-no-hostcall-ptr" "amdgpu-no-implicitarg-ptr" "amdgpu-no-lds-kernel-id" "amdgpu-no-multigrid-sync-arg" "amdgpu-no-queue-ptr" "amdgpu-no-workgroup-id-x" "amdgpu-no-workgroup-id-y" "amdgpu-no-workgroup-id-z" "amdgpu-no-workitem-id-x" "amdgpu-no-workitem-id-y" "amdgpu-no-workitem-id-z" "target-cpu"="gfx90a" "uniform-work-group-size"="false" }
attributes #1 = { mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none) }
attributes #2 = { mustprogress nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none) }
attributes #3 = { nofree nosync nounwind memory(none) "target-cpu"="gfx90a" "target-features" "uniform-work-group-size"="false" }
attributes #4 = { nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none) }

!0 = !{!1, !1, i64 0}
!1 = !{!"0x55879cd8dff0", !2, i64 0}
!2 = !{!"tvm-tbaa"}
!3 = !{}
!4 = !{!5, !5, i64 0}
!5 = !{!"0x55879cd8d470", !2, i64 0}
!6 = !{!"branch_weights", i32 1, i32 1048575}
!7 = distinct !{!7, !8}
!8 = !{!"llvm.loop.estimated_trip_count", i32 131072}
!9 = !{!10, !10, i64 0}
!10 = !{!"0x55879cc3de40", !2, i64 0}
