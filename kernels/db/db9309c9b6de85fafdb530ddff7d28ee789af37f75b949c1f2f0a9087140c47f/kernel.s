	.amdgcn_target "amdgcn-amd-amdhsa-hcc-gfx90a"
	.amdhsa_code_object_version 6
	.text
	.globl	gemv_kernel
	.p2align	8
	.type	gemv_kernel,@function
gemv_kernel:
	s_load_dwordx4 s[0:3], s[4:5], 0x0
	s_load_dwordx2 s[8:9], s[4:5], 0x10
	s_lshl_b32 s4, s6, 16
	s_ashr_i32 s5, s4, 31
	s_lshl_b64 s[4:5], s[4:5], 1
	s_waitcnt lgkmcnt(0)
	s_add_u32 s2, s2, s4
	v_lshlrev_b32_e32 v1, 10, v0
	s_addc_u32 s3, s3, s5
	v_mov_b32_e32 v4, s3
	v_add_co_u32_e32 v2, vcc, s2, v1
	v_mov_b32_e32 v3, 0
	v_addc_co_u32_e32 v1, vcc, 0, v4, vcc
	s_mov_b64 s[2:3], 0
	v_mov_b32_e32 v4, 0
.LBB0_1:
	s_add_u32 s4, s0, s2
	v_mov_b32_e32 v5, s3
	v_add_co_u32_e32 v14, vcc, s2, v2
	s_addc_u32 s5, s1, s3
	v_addc_co_u32_e32 v15, vcc, v1, v5, vcc
	global_load_dwordx4 v[6:9], v3, s[4:5]
	global_load_dwordx4 v[10:13], v[14:15], off
	s_add_u32 s2, s2, 16
	s_addc_u32 s3, s3, 0
	s_cmpk_lg_i32 s2, 0x400
	s_waitcnt vmcnt(0)
	v_fma_mix_f32 v4, v6, v10, v4 op_sel_hi:[1,1,0]
	v_fma_mix_f32 v4, v6, v10, v4 op_sel:[1,1,0] op_sel_hi:[1,1,0]
	v_fma_mix_f32 v4, v7, v11, v4 op_sel_hi:[1,1,0]
	v_fma_mix_f32 v4, v7, v11, v4 op_sel:[1,1,0] op_sel_hi:[1,1,0]
	v_fma_mix_f32 v4, v8, v12, v4 op_sel_hi:[1,1,0]
	v_fma_mix_f32 v4, v8, v12, v4 op_sel:[1,1,0] op_sel_hi:[1,1,0]
	v_fma_mix_f32 v4, v9, v13, v4 op_sel_hi:[1,1,0]
	v_fma_mix_f32 v4, v9, v13, v4 op_sel:[1,1,0] op_sel_hi:[1,1,0]
	s_cbranch_scc1 .LBB0_1
	v_lshl_add_u32 v0, s6, 7, v0
	v_cvt_f16_f32_e32 v2, v4
	v_ashrrev_i32_e32 v1, 31, v0
	v_lshlrev_b64 v[0:1], 1, v[0:1]
	v_mov_b32_e32 v3, s9
	v_add_co_u32_e32 v0, vcc, s8, v0
	v_addc_co_u32_e32 v1, vcc, v3, v1, vcc
	global_store_short v[0:1], v2, off
	s_endpgm
	.section	.rodata,"a",@progbits
	.p2align	6, 0x0
	.amdhsa_kernel gemv_kernel
		.amdhsa_group_segment_fixed_size 0
		.amdhsa_private_segment_fixed_size 0
		.amdhsa_kernarg_size 24
		.amdhsa_user_sgpr_count 6
		.amdhsa_user_sgpr_private_segment_buffer 1
		.amdhsa_user_sgpr_dispatch_ptr 0
		.amdhsa_user_sgpr_queue_ptr 0
		.amdhsa_user_sgpr_kernarg_segment_ptr 1
		.amdhsa_user_sgpr_dispatch_id 0
		.amdhsa_user_sgpr_flat_scratch_init 0
		.amdhsa_user_sgpr_kernarg_preload_length 0
		.amdhsa_user_sgpr_kernarg_preload_offset 0
		.amdhsa_user_sgpr_private_segment_size 0
		.amdhsa_uses_dynamic_stack 0
		.amdhsa_system_sgpr_private_segment_wavefront_offset 0
		.amdhsa_system_sgpr_workgroup_id_x 1
		.amdhsa_system_sgpr_workgroup_id_y 0
		.amdhsa_system_sgpr_workgroup_id_z 0
		.amdhsa_system_sgpr_workgroup_info 0
		.amdhsa_system_vgpr_workitem_id 0
		.amdhsa_next_free_vgpr 16
		.amdhsa_next_free_sgpr 10
		.amdhsa_accum_offset 16
		.amdhsa_reserve_vcc 1
		.amdhsa_reserve_flat_scratch 0
		.amdhsa_float_round_mode_32 0
		.amdhsa_float_round_mode_16_64 0
		.amdhsa_float_denorm_mode_32 3
		.amdhsa_float_denorm_mode_16_64 3
		.amdhsa_dx10_clamp 1
		.amdhsa_ieee_mode 1
		.amdhsa_fp16_overflow 0
		.amdhsa_tg_split 0
		.amdhsa_exception_fp_ieee_invalid_op 0
		.amdhsa_exception_fp_denorm_src 0
		.amdhsa_exception_fp_ieee_div_zero 0
		.amdhsa_exception_fp_ieee_overflow 0
		.amdhsa_exception_fp_ieee_underflow 0
		.amdhsa_exception_fp_ieee_inexact 0
		.amdhsa_exception_int_div_zero 0
	.end_amdhsa_kernel
	.text
.Lfunc_end0:
	.size	gemv_kernel, .Lfunc_end0-gemv_kernel

	.set gemv_kernel.num_vgpr, 16
	.set gemv_kernel.num_agpr, 0
	.set gemv_kernel.numbered_sgpr, 10
	.set gemv_kernel.num_named_barrier, 0
	.set gemv_kernel.private_seg_size, 0
	.set gemv_kernel.uses_vcc, 1
	.set gemv_kernel.uses_flat_scratch, 0
	.set gemv_kernel.has_dyn_sized_stack, 0
	.set gemv_kernel.has_recursion, 0
	.set gemv_kernel.has_indirect_call, 0
	.section	.text.tvm.fp16.conv,"ax",@progbits
	.weak	__truncsfhf2
	.p2align	2
	.type	__truncsfhf2,@function
__truncsfhf2:
	s_waitcnt vmcnt(0) expcnt(0) lgkmcnt(0)
	v_and_b32_e32 v2, 0x7fffffff, v0
	v_add_u32_e32 v1, 0xc7800000, v2
	v_add_u32_e32 v3, 0xb8800000, v2
	v_cmp_ge_u32_e32 vcc, v1, v3
	s_and_saveexec_b64 s[4:5], vcc
	s_xor_b64 s[4:5], exec, s[4:5]
	s_cbranch_execz .LBB1_14
	s_mov_b32 s6, 0x7f800001
	v_cmp_gt_u32_e32 vcc, s6, v2
	s_and_saveexec_b64 s[6:7], vcc
	s_xor_b64 s[6:7], exec, s[6:7]
	s_cbranch_execz .LBB1_11
	s_mov_b32 s8, 0x47800000
	v_cmp_gt_u32_e32 vcc, s8, v2
	v_mov_b32_e32 v1, 0x7c00
	s_and_saveexec_b64 s[8:9], vcc
	s_cbranch_execz .LBB1_10
	s_mov_b32 s10, 0x2cffffff
	v_cmp_lt_u32_e32 vcc, s10, v2
	v_mov_b32_e32 v1, 0
	s_and_saveexec_b64 s[10:11], vcc
	s_cbranch_execz .LBB1_9
	v_lshrrev_b32_e32 v1, 23, v2
	v_and_b32_e32 v3, 0x7fffff, v0
	v_sub_u32_e32 v2, 0x71, v1
	v_or_b32_e32 v3, 0x800000, v3
	v_add_u32_e32 v1, 0xffffffaf, v1
	v_lshlrev_b32_e32 v1, v1, v3
	v_cmp_ne_u32_e32 vcc, 0, v1
	v_lshrrev_b32_e32 v3, v2, v3
	v_cndmask_b32_e64 v1, 0, 1, vcc
	s_movk_i32 s12, 0x1fff
	v_lshrrev_b32_e32 v2, 13, v3
	v_and_or_b32 v3, v3, s12, v1
	s_movk_i32 s12, 0x1001
	v_cmp_gt_u32_e32 vcc, s12, v3
	s_and_saveexec_b64 s[12:13], vcc
	s_xor_b64 s[12:13], exec, s[12:13]
	s_movk_i32 s14, 0x1000
	v_cmp_eq_u32_e32 vcc, s14, v3
	v_cndmask_b32_e64 v1, 0, 1, vcc
	v_and_b32_e32 v1, v1, v2
	v_add_u32_e32 v1, v1, v2
	s_andn2_saveexec_b64 s[12:13], s[12:13]
	v_add_u32_e32 v1, 1, v2
	s_or_b64 exec, exec, s[12:13]
.LBB1_9:
	s_or_b64 exec, exec, s[10:11]
.LBB1_10:
	s_or_b64 exec, exec, s[8:9]
.LBB1_11:
	s_andn2_saveexec_b64 s[6:7], s[6:7]
	v_bfe_u32 v1, v0, 13, 9
	v_or_b32_e32 v1, 0x7e00, v1
	s_or_b64 exec, exec, s[6:7]
.LBB1_14:
	s_andn2_saveexec_b64 s[4:5], s[4:5]
	s_cbranch_execz .LBB1_20
	v_and_b32_e32 v3, 0x1fff, v0
	s_movk_i32 s6, 0x1001
	v_lshrrev_b32_e32 v2, 13, v0
	v_cmp_gt_u32_e32 vcc, s6, v3
	s_and_saveexec_b64 s[6:7], vcc
	s_xor_b64 s[6:7], exec, s[6:7]
	s_movk_i32 s8, 0x1000
	v_cmp_eq_u32_e32 vcc, s8, v3
	v_cndmask_b32_e64 v1, 0, 1, vcc
	v_and_b32_e32 v1, v1, v2
	s_mov_b32 s8, 0xfffe4000
	v_add3_u32 v1, v2, v1, s8
	s_andn2_saveexec_b64 s[6:7], s[6:7]
	v_add_u32_e32 v1, 0xfffe4001, v2
	s_or_b64 exec, exec, s[6:7]
.LBB1_20:
	s_or_b64 exec, exec, s[4:5]
	v_lshrrev_b32_e32 v0, 16, v0
	s_mov_b32 s4, 0x8000
	v_and_or_b32 v0, v0, s4, v1
	s_setpc_b64 s[30:31]
.Lfunc_end1:
	.size	__truncsfhf2, .Lfunc_end1-__truncsfhf2

	.set __truncsfhf2.num_vgpr, 4
	.set __truncsfhf2.num_agpr, 0
	.set __truncsfhf2.numbered_sgpr, 32
	.set __truncsfhf2.num_named_barrier, 0
	.set __truncsfhf2.private_seg_size, 0
	.set __truncsfhf2.uses_vcc, 1
	.set __truncsfhf2.uses_flat_scratch, 0
	.set __truncsfhf2.has_dyn_sized_stack, 0
	.set __truncsfhf2.has_recursion, 0
	.set __truncsfhf2.has_indirect_call, 0
	.weak	__extendhfsf2
	.p2align	2
	.type	__extendhfsf2,@function
__extendhfsf2:
	s_waitcnt vmcnt(0) expcnt(0) lgkmcnt(0)
	v_and_b32_e32 v2, 0x7fff, v0
	v_and_b32_e32 v1, 0xffff, v2
	v_add_u16_e32 v2, 0xfc00, v2
	s_movk_i32 s4, 0x77ff
	v_cmp_lt_u16_e32 vcc, s4, v2
	s_and_saveexec_b64 s[4:5], vcc
	s_xor_b64 s[4:5], exec, s[4:5]
	s_cbranch_execz .LBB2_8
	s_movk_i32 s6, 0x7c00
	v_cmp_gt_u16_e32 vcc, s6, v1
	s_and_saveexec_b64 s[6:7], vcc
	s_xor_b64 s[6:7], exec, s[6:7]
	s_cbranch_execz .LBB2_5
	v_cmp_ne_u16_e32 vcc, 0, v1
	v_mov_b32_e32 v2, 0
	s_and_saveexec_b64 s[8:9], vcc
	s_cbranch_execz .LBB2_4
	s_movk_i32 s10, 0x100
	v_lshrrev_b32_e32 v2, 8, v1
	v_cmp_gt_u16_e32 vcc, s10, v1
	v_cndmask_b32_e32 v2, v2, v1, vcc
	v_cndmask_b32_e64 v3, 24, 32, vcc
	v_lshrrev_b32_e32 v4, 4, v2
	v_cmp_gt_u32_e32 vcc, 16, v2
	v_add_u32_e32 v5, -4, v3
	v_cndmask_b32_e32 v2, v4, v2, vcc
	v_cndmask_b32_e32 v3, v5, v3, vcc
	v_lshrrev_b32_e32 v4, 2, v2
	v_cmp_gt_u32_e32 vcc, 4, v2
	v_add_u32_e32 v5, -2, v3
	v_cndmask_b32_e32 v2, v4, v2, vcc
	v_cndmask_b32_e32 v3, v5, v3, vcc
	v_sub_u32_e32 v4, 0, v2
	v_cmp_gt_u32_e32 vcc, 2, v2
	v_cndmask_b32_e32 v2, -2, v4, vcc
	v_add_u32_e32 v2, v2, v3
	v_add_u32_e32 v3, -8, v2
	v_lshlrev_b32_e32 v1, v3, v1
	v_lshlrev_b32_e32 v2, 23, v2
	v_xor_b32_e32 v1, 0x800000, v1
	v_sub_u32_e32 v2, 0x43000000, v2
	v_or_b32_e32 v2, v1, v2
.LBB2_4:
	s_or_b64 exec, exec, s[8:9]
.LBB2_5:
	s_andn2_saveexec_b64 s[6:7], s[6:7]
	v_mov_b32_e32 v2, 0x7f800000
	v_lshl_or_b32 v2, v1, 13, v2
	s_or_b64 exec, exec, s[6:7]
.LBB2_8:
	s_andn2_saveexec_b64 s[4:5], s[4:5]
	v_bfrev_b32_e32 v2, 28
	v_lshl_add_u32 v2, v1, 13, v2
	s_or_b64 exec, exec, s[4:5]
	s_movk_i32 s4, 0x8000
	v_and_b32_sdwa v0, v0, s4 dst_sel:WORD_1 dst_unused:UNUSED_PAD src0_sel:DWORD src1_sel:DWORD
	v_or_b32_e32 v0, v2, v0
	s_setpc_b64 s[30:31]
.Lfunc_end2:
	.size	__extendhfsf2, .Lfunc_end2-__extendhfsf2

	.set __extendhfsf2.num_vgpr, 6
	.set __extendhfsf2.num_agpr, 0
	.set __extendhfsf2.numbered_sgpr, 32
	.set __extendhfsf2.num_named_barrier, 0
	.set __extendhfsf2.private_seg_size, 0
	.set __extendhfsf2.uses_vcc, 1
	.set __extendhfsf2.uses_flat_scratch, 0
	.set __extendhfsf2.has_dyn_sized_stack, 0
	.set __extendhfsf2.has_recursion, 0
	.set __extendhfsf2.has_indirect_call, 0
	.text
	.p2alignl 6, 3212836864
	.fill 256, 4, 3212836864
	.section	.AMDGPU.gpr_maximums,"",@progbits
	.set amdgpu.max_num_vgpr, 6
	.set amdgpu.max_num_agpr, 0
	.set amdgpu.max_num_sgpr, 32
	.set amdgpu.max_num_named_barrier, 0
	.text
	.section	".note.GNU-stack","",@progbits
	.amdgpu_metadata
---
amdhsa.kernels:
  - .agpr_count:     0
    .args:
      - .actual_access:  read_only
        .address_space:  global
        .name:           A
        .offset:         0
        .size:           8
        .value_kind:     global_buffer
      - .actual_access:  read_only
        .address_space:  global
        .name:           B
        .offset:         8
        .size:           8
        .value_kind:     global_buffer
      - .actual_access:  write_only
        .address_space:  global
        .name:           C
        .offset:         16
        .size:           8
        .value_kind:     global_buffer
    .group_segment_fixed_size: 0
    .kernarg_segment_align: 8
    .kernarg_segment_size: 24
    .max_flat_workgroup_size: 256
    .name:           gemv_kernel
    .private_segment_fixed_size: 0
    .sgpr_count:     14
    .sgpr_spill_count: 0
    .symbol:         gemv_kernel.kd
    .uses_dynamic_stack: false
    .vgpr_count:     16
    .vgpr_spill_count: 0
    .wavefront_size: 64
amdhsa.target:   amdgcn-amd-amdhsa-hcc-gfx90a
amdhsa.version:
  - 1
  - 2
...

	.end_amdgpu_metadata
