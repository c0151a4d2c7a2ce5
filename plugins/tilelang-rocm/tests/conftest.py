import shutil

import pytest


def corpus_func(kernel):
    """The PrimFunc of a corpus kernel (eager ones specialised to their argument specs)."""
    if not kernel.eager:
        return kernel.func
    from tilelang.frontend import TensorArg, parse_eager

    return parse_eager(kernel.func, *[TensorArg(a.shape, a.dtype) for a in kernel.args if a.role == "in"]).func


@pytest.fixture(scope="session")
def lld22():
    """ld.lld-22, which the project's CI installs for the rocm session; tests that link skip without it."""
    path = shutil.which("ld.lld-22")
    if path is None:
        pytest.skip("ld.lld-22 is not installed (apt-get install lld-22); linking AMDGPU code objects needs it")
    return path
