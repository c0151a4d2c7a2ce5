"""The ROCm toolchain helpers of the reference TileLang: `hipcc`, `rocm` and `hip_resource_info`, reached as
``tilelang.contrib.<name>`` through core's module aliases."""
