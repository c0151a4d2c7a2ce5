"""Every kernel of core's test corpus (`tilelang.testing.corpus`, the reference DSL) compiled for the third-party
``ccpu`` target the three ways a user compiles — ``tilelang.compile``, ``@tilelang.jit`` and the autotuner — run,
and compared with torch (`tilelang.testing.backend_suite`); with nothing but tilelang-core and this distribution
installed in the ``third-party`` nox session."""

from __future__ import annotations

import pytest

from tilelang.testing.backend_suite import CORPUS_NAMES, check_autotune, check_compile, check_jit

TARGET = "ccpu"


@pytest.mark.parametrize("name", CORPUS_NAMES)
def test_tilelang_compile(name):
    check_compile(name, TARGET)


@pytest.mark.parametrize("name", CORPUS_NAMES)
def test_jit(name):
    check_jit(name, TARGET)


@pytest.mark.parametrize("name", CORPUS_NAMES)
def test_autotune(name):
    check_autotune(name, TARGET)
