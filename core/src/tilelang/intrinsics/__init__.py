"""Core's intrinsics layer: what the backends' intrinsic emitters share (`warp_matrix`: the warp-level matrix
emitter that the CUDA ``mma.sync`` and ROCm MFMA / WMMA emitters subclass; Metal's simdgroup emitter works on
whole simdgroup matrices, not per-lane registers, and stands alone). Backends reach it
through `tilelang.backend.sdk`."""
