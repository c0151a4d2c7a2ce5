"""The Metal backend's passes, one module per pass, named as the pass is (``metal.<module>``) in the pipeline
registry and in TVM; `tilelang_metal.pipeline.PASSES` lists them in the order they run:

- ``mlx_swizzle`` (``pre_layout``): ``T.use_swizzle(order="mlx")`` kept as a marker for the codegen;
- ``simdgroup_accumulators`` (``pre_layout``): GEMM accumulators live in simdgroup matrices for the whole kernel;
- ``cooperative_tensor_storage`` (``post_tile_lowering``): ``metal.cooperative_tensor`` buffers become lane registers;
- ``limit_vector_width`` (``post_parallel``): vectorized loops fit Metal's 4-lane vectors;
- ``legalize_scopes`` (``post_storage``): every allocation gets a scope the Metal codegen can declare;
- ``pack_half_vectors`` (``post_barriers``): 16-bit vectors move as packed ``uint`` vectors;
- ``alias_threadgroup_tiles`` (``post_barriers``): one threadgroup allocation per kernel, tiles alias into it
  (tiles whose lifetimes never overlap share bytes, `tilelang_metal.threadgroup_liveness`);
- ``mlx_block_indices`` (``device_module``): an MLX-swizzled kernel written in logical block indices;
- ``legalize_bf16_casts`` (``device_module``): ``bfloat16`` <-> ``float16`` casts go through ``float32``;
- ``legalize_nan_tests`` (``device_module``): NaN tests read the bits (fast math may fold ``x != x``).

(`tilelang_metal.transform` holds the reference TileLang's Metal pass names, kept for its users.)
"""
