"""Core's intrinsics layer: what the backends' intrinsic emitters share (`warp_matrix`: the warp-level matrix
emitter that the CUDA ``mma.sync``, ROCm MFMA / WMMA and Metal simdgroup emitters subclass). Backends reach it
through `tilelang.backend.sdk`."""
