"""The reference's NVRTC and CuTeDSL execution adapters, reached as ``tilelang.jit.adapter.nvrtc`` and
``tilelang.jit.adapter.cutedsl`` through core's module aliases."""
