"""The WebGPU backend's passes, one module per pass, named as the pass is (``webgpu.<module>``) in the pipeline
registry and in TVM; `tilelang_webgpu.pipeline.PASSES` lists them in the order they run. They rewrite what TVM's
WGSL codegen cannot emit:

- ``check_dtypes`` (``pre_layout``): tensors and tiles of a dtype WGSL cannot store are a clear `LoweringError`;
- ``debug_log`` (``post_layout``): ``T.print`` / ``T.device_assert`` become records in a hidden log buffer;
- ``fold_blockidx_z`` (``post_barriers``): a 3-D grid becomes 2-D;
- ``split_wide_vectors`` (``post_storage``): vectors of more than 4 lanes become 4- or 2-lane ones;
- ``hoist_gemm_accumulators`` (``post_storage``): the GEMM accumulator stays in registers across K tiles;
- ``unroll_register_loops`` (``post_storage``): short loops over a thread's registers are unrolled;
- ``check_workgroup_memory`` (``device_module``): workgroup arrays must fit the target's limit;
- ``legalize_float_literals`` (``device_module``): infinities and NaNs as bitcasts, NaN tests as bit tests;
- ``mark_vector_globals`` (``device_module``): buffers whose 4-lane accesses are aligned are read as ``vec4``.
"""
