"""The CPU backend's passes, one module per pass, named as the pass is (``cpu.<module>``) in the pipeline
registry and in TVM; `tilelang_cpu.pipeline.PASSES` lists them in the order they run.

- ``elide_tile_copies`` (``pre_layout``): tiles that only mirror global memory are read and written in place;
- ``merge_gemm_k_steps`` (``pre_layout``): a K loop of small GEMM steps becomes one GEMM over the whole K (a
  clear before a single step folds into it, and its accumulator may then be the output itself);
- ``warp_groups`` (``post_storage``): a ``T.ws`` scope's block-collective work runs once, its per-thread part
  under the scope's guard;
- ``lower_launch`` (``post_storage``): the block grid becomes a parallel loop, threads become loops;
- ``vector_exp`` (``post_storage``, LLVM): float32 ``exp``/``exp2`` as arithmetic that LLVM vectorises;
- ``lower_loop_exits`` (``post_storage``, LLVM): ``break``/``continue`` of ``T.While`` loops;
- ``tighten_guarded_loops`` (``post_barriers``, LLVM): guarded loops run over the guard's range.
"""
