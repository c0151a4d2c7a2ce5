"""``T.import_source`` on the CPU: its LLVM codegen compiles no imported C, so the program is refused with the
reason, not built into a kernel that calls a function that is not there (tilelang-cuda compiles it:
test_import_source.py there)."""

from __future__ import annotations

import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import LoweringError


@pytest.mark.backend("cpu")
def test_a_backend_that_compiles_no_imported_source_refuses_the_program():
    @T.prim_func
    def main(A: T.Tensor((16,), "float32"), B: T.Tensor((16,), "float32")):
        with T.Kernel(1, is_cpu=True):
            T.import_source("static float tl_test_twice(float x) { return 2.0f * x; }")
            for i in T.serial(16):
                B[i] = T.call_extern("float32", "tl_test_twice", A[i])

    with pytest.raises(LoweringError, match=r"T.import_source: the '(cpu|llvm)' device codegen .* does not compile"):
        tilelang.lower(main, target="cpu")
