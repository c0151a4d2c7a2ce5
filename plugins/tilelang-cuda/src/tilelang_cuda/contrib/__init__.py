"""The CUDA toolchain helpers of the reference TileLang: `nvcc`, `nvrtc` and the CuTe DSL device helpers
(`cutedsl`), reached as ``tilelang.contrib.<name>`` through core's module aliases."""
