import shutil

import pytest


def corpus_func(kernel):
    """The PrimFunc of a corpus kernel (eager ones specialised to their argument specs)."""
    if not kernel.eager:
        return kernel.func
    from tilelang.frontend import TensorArg, parse_eager

    return parse_eager(kernel.func, *[TensorArg(a.shape, a.dtype) for a in kernel.args if a.role == "in"]).func


@pytest.fixture(scope="session")
def clang22():
    """clang-22, which the project's CI installs for the metal session; tests that need it skip without it."""
    path = shutil.which("clang-22")
    if path is None:
        pytest.skip("clang-22 is not installed (apt-get install clang-22); the MSL check needs it")
    return path
