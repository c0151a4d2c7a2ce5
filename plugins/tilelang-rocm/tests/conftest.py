import pytest


@pytest.fixture(scope="session")
def lld22():
    """The ld.lld command the plugin links with (ROCm's, a system one, or ziglang's LLD 22: see
    `tilelang_rocm.backend.find_ld_lld`); tests that link skip without one."""
    from tilelang_rocm.backend import LLD_MISSING, find_ld_lld

    command = find_ld_lld()
    if command is None:
        pytest.skip(LLD_MISSING)
    return command
