"""The CUDA backend's pipeline passes (one per module); `tilelang_cuda.pipeline` lists them in order."""
