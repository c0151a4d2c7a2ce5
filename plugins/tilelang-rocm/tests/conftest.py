import shutil

import pytest


@pytest.fixture(scope="session")
def lld22():
    """ld.lld-22, which the project's CI installs for the rocm session; tests that link skip without it."""
    path = shutil.which("ld.lld-22")
    if path is None:
        pytest.skip("ld.lld-22 is not installed (apt-get install lld-22); linking AMDGPU code objects needs it")
    return path
