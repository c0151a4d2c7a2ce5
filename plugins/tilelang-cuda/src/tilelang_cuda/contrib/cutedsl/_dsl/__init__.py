"""The CuTe DSL implementations behind ``tilelang_cuda.contrib.cutedsl.*``; each module imports ``cutlass``.

Only `tilelang_cuda.contrib.cutedsl._unavailable.provide` imports these, and only where the CuTe DSL is installed.
"""
