"""Sessions: `nox` runs lint, tests, one slim-<plugin> per backend, third-party, demo and conformance (the CI
command).

- tests:        every distribution installed editable in one venv; all tests.
- slim-<x>:     a fresh venv with tilelang-core and tilelang-<x> only (regular installs); core's and x's tests.
- third-party:  core + cpu + examples/third_party_backend (a backend published without touching core).
- lint:         ruff.
- demo:         core + cpu; runs the README quickstart kernel end to end.
- conformance:  every distribution (regular installs) in a fresh venv; the reference TileLang's own test suite
                (../shared/conformance, or TILELANG_CONFORMANCE_DIR) run against it, failing when a test of
                conformance/floor.txt stops passing. Skipped, saying so, when the kit is not there.
- docs:         the Sphinx site (guides + API reference of the full module tree), warnings as errors.
- bench:        benchmarks/ (not part of the default run).
- fuzz:         the program fuzzer's long profile (TILELANG_FUZZ_EXAMPLES, default 2000; not part of the default run).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile

import nox

PLUGINS = ("cpu", "cuda", "rocm", "metal", "webgpu")
TORCH = "torch==2.13.0"  # the CPU wheel this project's machines carry; metadata declares torch>=2.1
# system packages (Debian) some backends' deepest checks need; installed when we are root with apt-get
SYSTEM_PACKAGES = {"rocm": ["lld-22"], "webgpu": ["mesa-vulkan-drivers", "libvulkan1"], "metal": ["clang-22"]}
PYTEST = ("pytest", "-q", "-p", "no:cacheprovider", "-rs")

HERE = os.path.dirname(os.path.abspath(__file__))
CONFORMANCE_DIR = os.path.abspath(os.environ.get("TILELANG_CONFORMANCE_DIR")
                                  or os.path.join(HERE, "..", "shared", "conformance"))

nox.options.sessions = ["lint", "tests", *(f"slim-{p}" for p in PLUGINS), "third-party", "demo", "conformance"]
nox.options.reuse_existing_virtualenvs = False


def _system_packages(session: nox.Session, plugins: tuple[str, ...] | list[str]) -> None:
    wanted = [pkg for p in plugins for pkg in SYSTEM_PACKAGES.get(p, [])]
    if not wanted or shutil.which("apt-get") is None or os.geteuid() != 0:
        return
    missing = [p for p in wanted if not os.path.exists(f"/usr/share/doc/{p}")]
    if missing:
        session.run("apt-get", "update", "-qq", external=True, silent=True)
        session.run("apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing, external=True,
                    silent=True, env={"DEBIAN_FRONTEND": "noninteractive"})


def _install(session: nox.Session, *paths: str, editable: bool = False) -> None:
    session.install(TORCH, "pytest", "hypothesis")
    args = [a for p in paths for a in (("-e", p) if editable else (p,))]
    session.install(*args)


def _env(session: nox.Session) -> dict[str, str]:
    runtime = os.path.join(session.create_tmp(), "xdg-runtime")
    os.makedirs(runtime, mode=0o700, exist_ok=True)
    return {"TILELANG_CACHE_DIR": os.path.join(session.create_tmp(), "cache"), "XDG_RUNTIME_DIR": runtime}


@nox.session
def lint(session: nox.Session) -> None:
    """ruff over every distribution."""
    session.install("ruff")
    session.run("ruff", "check", ".")


@nox.session
def tests(session: nox.Session) -> None:
    """All distributions, editable, in one venv; every test: core's with every backend installed, then each
    backend's in a process of its own (one backend's tests must not see the state another's left behind: the
    WebGPU vector-global tests fail after the whole of the other plugins' suites in one process, not after any
    one of them — an isolation problem of the tests under investigation)."""
    _system_packages(session, PLUGINS)
    _install(session, "core[tools]", *(f"plugins/tilelang-{p}" for p in PLUGINS), editable=True)
    session.run(*PYTEST, "core/tests", *session.posargs, env=_env(session))
    for p in PLUGINS:
        session.run(*PYTEST, f"plugins/tilelang-{p}/tests", *session.posargs, env=_env(session))


def _slim(plugin: str):
    def session_func(session: nox.Session) -> None:
        _system_packages(session, [plugin])
        _install(session, "./core", f"./plugins/tilelang-{plugin}")
        # run from outside the checkout so the installed (not the source) packages are imported
        tests_dirs = [os.path.abspath("core/tests"), os.path.abspath(f"plugins/tilelang-{plugin}/tests")]
        with session.chdir(session.create_tmp()):
            session.run(*PYTEST, *tests_dirs, *session.posargs, env=_env(session))

    session_func.__doc__ = f"A fresh venv with tilelang-core and tilelang-{plugin} only."
    return session_func


for _plugin in PLUGINS:
    nox.session(name=f"slim-{_plugin}")(_slim(_plugin))


@nox.session
def fuzz(session: nox.Session) -> None:
    """The program fuzzer's long profile (core/tests/fuzz): every distribution, TILELANG_FUZZ_EXAMPLES programs
    (default 2000) per backend; not part of the default run."""
    _system_packages(session, PLUGINS)
    _install(session, "core[tools]", *(f"plugins/tilelang-{p}" for p in PLUGINS), editable=True)
    env = {**_env(session), "TILELANG_FUZZ_EXAMPLES": os.environ.get("TILELANG_FUZZ_EXAMPLES", "2000")}
    session.run(*PYTEST, "core/tests/fuzz", *session.posargs, env=env)


@nox.session(name="third-party")
def third_party(session: nox.Session) -> None:
    """A backend published outside this repository's core/ and plugins/, installed beside core + cpu."""
    _install(session, "./core", "./plugins/tilelang-cpu", "./examples/third_party_backend")
    tests_dir = os.path.abspath("examples/third_party_backend/tests")
    with session.chdir(session.create_tmp()):
        session.run(*PYTEST, tests_dir, *session.posargs, env=_env(session))


@nox.session
def demo(session: nox.Session) -> None:
    """The README quickstart: install core + cpu, run a real kernel, compare with torch."""
    _install(session, "./core", "./plugins/tilelang-cpu")
    session.run("tilelang", "backends")
    session.run("python", "examples/quickstart.py", env=_env(session))


@nox.session
def conformance(session: nox.Session) -> None:
    """The reference TileLang's test suite against a fresh full install; the floor must keep passing."""
    run_py = os.path.join(CONFORMANCE_DIR, "run.py")
    if not os.path.isfile(run_py):
        session.skip(f"the conformance kit is not at {CONFORMANCE_DIR} (set TILELANG_CONFORMANCE_DIR to run it)")
    _system_packages(session, PLUGINS)
    _install(session, "./core", *(f"./plugins/tilelang-{p}" for p in PLUGINS))
    session.install("pytest-timeout", "cloudpickle", "z3-solver")  # the reference suite imports z3 itself
    out = os.path.join(session.create_tmp(), "conformance-out")
    python = os.path.join(session.virtualenv.location, "bin", "python")
    # one file a folder cannot import (several need the reference's examples/ tree, which the kit does not
    # carry) must not hide the rest of its folder: its own tests still count as not passing
    # TMPDIR outside this tree (nox points it at .nox/<session>/tmp): pytest would take this project's
    # pyproject.toml as the suite's rootdir and no test id would match the reference's
    env = {**_env(session), "PYTEST_ADDOPTS": "--continue-on-collection-errors", "TMPDIR": tempfile.gettempdir()}
    session.run("python", run_py, "--python", python, "--out", out,
                "--exclusions", os.path.join(HERE, "conformance", "exclusions.txt"),
                "--floor", os.path.join(HERE, "conformance", "floor.txt"), *session.posargs, env=env)


@nox.session
def docs(session: nox.Session) -> None:
    """The documentation site (Sphinx, sphinx-autoapi, furo), warnings as errors; every module path of TileLang's
    module map must have its API page."""
    session.install("sphinx>=8", "sphinx-autoapi>=3.4", "furo", "myst-parser>=4")
    tree = os.path.join(session.create_tmp(), "docs-src")
    session.run("python", "docs/stage_source_tree.py", tree)
    out = os.path.join("build", "docs", "html")
    session.run("sphinx-build", "-W", "--keep-going", "-q", "-b", "html", "docs", out,
                env={"DOCS_SOURCE_TREE": os.path.join(tree, "tilelang")})
    session.run("python", "docs/check_module_index.py", out)


# benchmarks that need no GPU; `nox -s bench -- gpu_bench.py` runs the CUDA one on a GPU machine
CPU_BENCHMARKS = ("jit_overhead.py", "cpu_gemm.py", "cpu_elementwise.py", "cpu_softmax.py", "webgpu_bench.py")


@nox.session
def bench(session: nox.Session) -> None:
    """Benchmarks (ratios against baselines measured in the same run)."""
    _system_packages(session, ["webgpu"])
    _install(session, "./core", "./plugins/tilelang-cpu", "./plugins/tilelang-webgpu", "./plugins/tilelang-cuda")
    for script in session.posargs or CPU_BENCHMARKS:
        session.run("python", f"benchmarks/{script}", env=_env(session))


if __name__ == "__main__":
    sys.exit("run me with `nox`")
