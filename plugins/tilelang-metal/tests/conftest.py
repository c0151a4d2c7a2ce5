import shutil

import pytest


@pytest.fixture(scope="session")
def clang22():
    """clang-22, which the project's CI installs for the metal session; tests that need it skip without it."""
    path = shutil.which("clang-22")
    if path is None:
        pytest.skip("clang-22 is not installed (apt-get install clang-22); the MSL check needs it")
    return path
