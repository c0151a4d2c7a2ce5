"""Sessions: `nox` runs lint, tests, one slim-<plugin> per backend, nvrtc, cutedsl, third-party, demo, conformance,
examples and docs (the CI command).

- tests:        every distribution installed editable in one venv; core's tests (those marked for a backend run
                against it).
- slim-<x>:     a fresh venv with tilelang-core and tilelang-<x> only (regular installs, from wheels built once a
                run); x's tests (slim-rocm: then the `lld` extra's linker tests).
- nvrtc:        core + tilelang-cuda[nvrtc] only, no nvcc on PATH, no CUDA_HOME: CUDA from pip wheels (NVRTC) builds
                the corpus to cubins for sm_80 and sm_90a.
- cutedsl:      core + tilelang-cuda[cutedsl] (NVIDIA's CuTe DSL, nvidia-cutlass-dsl): every helper of
                tilelang.contrib.cutedsl compiled in a small CuTe DSL kernel for sm_80 / sm_90a / sm_100a, its PTX
                checked for the instruction it stands for (no GPU needed), and the stand-ins' tests.
- third-party:  core + examples/third_party_backend only (a backend published without touching core): core's test
                corpus through tilelang.compile, @tilelang.jit and the autotuner on its `ccpu` target; then a
                backend scaffolded by `tilelang backend new demo` installed and its tests run.
- lint:         ruff.
- demo:         core + cpu; runs the README quickstart kernel end to end.
- conformance:  every distribution (regular installs) in a fresh venv; the reference TileLang's own test suite
                (../shared/conformance, or TILELANG_CONFORMANCE_DIR) run against it, failing when a test of
                conformance/floor.txt stops passing. Skipped, saying so, when the kit is not there.
- examples:     every distribution in a fresh venv; the kit's example scripts compiled for their folders'
                architectures (kernel builds reaching a cubin / hsaco, next to the reference TileLang's stored
                count; CI runs conformance/examples_ci.txt, `-- --full` all, `-- --reference` remeasures the
                reference), then the examples' own tests on the CPU. Skipped, saying so, without the kit.
- docs:         the Sphinx site (guides, tutorials, API reference of the public packages), warnings as errors, held
                to docs/public_modules.txt; then every Python block of the getting-started page, the tutorials and
                the user-facing READMEs runs on the CPU (docs/test_docs.py).
- torch-floor:  core + cpu with the oldest torch the metadata allows (torch>=2.1: 2.1.2), its tests and the
                quickstart (not part of the default run: PyPI's torch 2.1 for Linux is a CUDA build, ~2.6 GB of
                wheels, downloaded once into .nox/.cache/torch-floor-wheels).
- nvcc:         CUDA from pip's nvcc: core + tilelang-cuda[nvcc], no nvcc on PATH, no CUDA_HOME; the toolkit tests
                and the corpus compiled to cubins with the wheel's nvcc (not part of the default run).
- wheels:       sdist and wheel of every distribution (`python -m build`), failing on any deprecation warning.
- bench:        benchmarks/ (not part of the default run).
- sass:         benchmarks/sass_compare.py: the same DSL kernels compiled for sm_90a and sm_80 by this project and
                by the reference TileLang 0.1.15 (its venv's python in TILELANG_REFERENCE_PYTHON), registers,
                spills, shared memory and the main loop's SASS compared (no GPU; not part of the default run;
                skipped, saying so, without nvcc or the reference).
- fuzz:         the program fuzzer's long profile (TILELANG_FUZZ_EXAMPLES, default 2000; not part of the default run).
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile

import nox

PLUGINS = ("cpu", "cuda", "rocm", "metal", "webgpu")
TORCH = "torch==2.13.0"  # the CPU wheel this project's machines carry; metadata declares torch>=2.1
# system packages (Debian) some backends' deepest checks need; installed when we are root with apt-get
SYSTEM_PACKAGES = {"rocm": ["lld-22"], "webgpu": ["mesa-vulkan-drivers", "libvulkan1"], "metal": ["clang-22"]}
PYTEST = ("pytest", "-q", "-p", "no:cacheprovider", "-rs")
# the suites spread over two worker processes (CI's machines have two cores; in `tests` each worker runs core's
# tests of every installed backend, so a test leaking process state into another backend's tests still fails)
PARALLEL = ("-n", "2")

HERE = os.path.dirname(os.path.abspath(__file__))
CONFORMANCE_DIR = os.path.abspath(os.environ.get("TILELANG_CONFORMANCE_DIR")
                                  or os.path.join(HERE, "..", "shared", "conformance"))

# cutedsl: a fresh venv with the CuTe DSL wheels plus its tests took 65 s here (2026-12-06, wheels in pip's cache)
nox.options.sessions = ["lint", "tests", *(f"slim-{p}" for p in PLUGINS), "nvrtc", "cutedsl", "third-party", "demo",
                        "conformance", "examples", "docs"]
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


# this repository's distributions, built once a nox run (the sessions' regular installs share the wheels)
_BUILT: dict[str, str] = {}


def _wheel(session: nox.Session, requirement: str) -> str:
    """A local distribution (``./plugins/tilelang-cuda[nvrtc]``) as its wheel, built the first time a session of
    this nox run asks for it; anything else is returned as it is."""
    path, extras = re.fullmatch(r"(.*?)(\[[^\]]*\])?", requirement).groups()
    source = os.path.abspath(path)
    if not os.path.isfile(os.path.join(source, "pyproject.toml")):
        return requirement
    if source not in _BUILT:
        wheelhouse = os.path.join(session.cache_dir, "wheelhouse", os.path.relpath(source, HERE).replace(os.sep, "-"))
        shutil.rmtree(wheelhouse, ignore_errors=True)
        session.run("python", "-m", "pip", "wheel", "-q", "--no-deps", "--wheel-dir", wheelhouse, source)
        (built,) = [f for f in os.listdir(wheelhouse) if f.endswith(".whl")]
        _BUILT[source] = os.path.join(wheelhouse, built)
    return _BUILT[source] + (extras or "")


def _install_local(session: nox.Session, *requirements: str) -> None:
    """Regular installs of this repository's distributions (from this run's wheels) and anything else."""
    session.install(*(_wheel(session, r) for r in requirements))


def _install(session: nox.Session, *paths: str, editable: bool = False) -> None:
    session.install(TORCH, "pytest", "pytest-xdist", "hypothesis")
    if editable:
        session.install(*(a for p in paths for a in ("-e", p)))
    else:
        _install_local(session, *paths)


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
    """Every distribution installed editable in one venv (a developer's checkout); core's tests, so that each
    test marked for a backend runs against it. The backends' own tests run in their slim sessions."""
    _system_packages(session, PLUGINS)
    _install(session, "core[tools,ray,dask]", *(f"plugins/tilelang-{p}" for p in PLUGINS), editable=True)
    session.run(*PYTEST, *PARALLEL, "core/tests", *session.posargs, env=_env(session))


def _slim(plugin: str):
    def session_func(session: nox.Session) -> None:
        _system_packages(session, [plugin])
        _install(session, "./core", f"./plugins/tilelang-{plugin}")
        # run from outside the checkout so the installed (not the source) packages are imported; core's tests run
        # in `tests` (with every backend: a slim venv would repeat them), core without any of ours in `third-party`
        tests_dirs = [os.path.abspath(f"plugins/tilelang-{plugin}/tests")]
        with session.chdir(session.create_tmp()):
            session.run(*PYTEST, *PARALLEL, *tests_dirs, *session.posargs, env=_env(session))
        if plugin == "rocm" and not session.posargs:
            # the `lld` extra: ziglang's LLD links code objects where no system ld.lld is found
            _install_local(session, "./plugins/tilelang-rocm[lld]")
            linker_tests = os.path.abspath("plugins/tilelang-rocm/tests/test_rocm_linker.py")
            with session.chdir(session.create_tmp()):
                session.run(*PYTEST, linker_tests, env=_env(session))

    session_func.__doc__ = (f"A fresh venv with tilelang-core and tilelang-{plugin} only (regular installs): "
                            f"tilelang-{plugin}'s tests.")
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


@nox.session(name="nvrtc")
def nvrtc(session: nox.Session) -> None:
    """CUDA from pip alone: only tilelang-core and tilelang-cuda[nvrtc] (NVRTC, the runtime/crt/CCCL header wheels,
    cuda-bindings, cuda-pathfinder), no nvcc on PATH, no CUDA_HOME: the test corpus builds to cubins for sm_80 and
    sm_90a with NVRTC (no GPU or driver needed)."""
    session.install(TORCH, "pytest", "pytest-xdist")
    _install_local(session, "./core", "./plugins/tilelang-cuda[nvrtc]")
    path = os.pathsep.join(d for d in os.environ.get("PATH", "").split(os.pathsep)
                           if d and not os.path.exists(os.path.join(d, "nvcc")))
    env = {**_env(session), "PATH": path, "CUDA_HOME": None, "CUDA_PATH": None, "TILELANG_CUDA_COMPILER": "nvrtc"}
    # fail here, rather than skip in pytest, if the extra did not bring what NVRTC needs
    session.run("python", "-c", "from tilelang_cuda import toolkit; toolkit.load_nvrtc(); "
                "print(toolkit.nvrtc_status()[1])", env=env)
    session.run(*PYTEST, "-n", "2", "plugins/tilelang-cuda/tests/test_nvrtc_pip.py",
                "plugins/tilelang-cuda/tests/test_cuda_toolkit.py", "plugins/tilelang-cuda/tests/test_cuda_driver.py",
                "plugins/tilelang-cuda/tests/test_cuda_compiler_choice.py", *session.posargs, env=env)


@nox.session(name="cutedsl")
def cutedsl(session: nox.Session) -> None:
    """The CuTe DSL device helpers with NVIDIA's CuTe DSL installed (the `cutedsl` extra, ~95 MB of wheels): each
    compiled in a kernel, its PTX checked (test_cutedsl_helpers.py skips without the DSL, so it runs here)."""
    session.install(TORCH, "pytest")
    _install_local(session, "./core", "./plugins/tilelang-cuda[cutedsl]")
    session.run(*PYTEST, "plugins/tilelang-cuda/tests/test_cutedsl_helpers.py",
                "plugins/tilelang-cuda/tests/test_contrib_cutedsl.py", *session.posargs, env=_env(session))


@nox.session(name="third-party")
def third_party(session: nox.Session) -> None:
    """A backend published outside this repository's core/ and plugins/, installed with tilelang-core alone (no
    backend of this repository): core's test corpus compiled for it through tilelang.compile, @tilelang.jit and
    the autotuner, run, and compared with torch; then the same for a backend `tilelang backend new` writes."""
    _install(session, "./core", "./examples/third_party_backend")
    session.run("python", "-c", "import importlib.util as u; assert u.find_spec('tilelang_cpu') is None, "
                "'tilelang-cpu is installed'")
    tests_dir = os.path.abspath("examples/third_party_backend/tests")
    with session.chdir(session.create_tmp()):
        session.run(*PYTEST, *PARALLEL, tests_dir, *session.posargs, env=_env(session))
        # a backend scaffolded by `tilelang backend new` installs and passes its own tests (the same corpus)
        demo = os.path.join(os.path.abspath(session.create_tmp()), "tilelang-demo")
        shutil.rmtree(demo, ignore_errors=True)
        session.run("tilelang", "backend", "new", "demo", "--dir", demo)
        session.install(demo)
        session.run(*PYTEST, *PARALLEL, os.path.join(demo, "tests"), *session.posargs, env=_env(session))


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


# what the example scripts import besides TileLang and torch (triton and einops install on CPU-only machines)
EXAMPLE_DEPS = ("pytest", "pytest-timeout", "einops", "triton", "scipy")
REFERENCE_TILELANG = "tilelang==0.1.15"


@nox.session
def examples(session: nox.Session) -> None:
    """The reference TileLang's example scripts (the kit's examples/) against a fresh full install: kernel builds
    that reach a binary for each folder's architecture, next to the reference's count (stored in
    conformance/examples_reference.json), failing when a build of conformance/examples_floor.txt no longer
    reaches one; then the examples' own tests on the CPU (conformance/examples_cpu_floor.txt must keep passing;
    CI leaves out the slow ones of conformance/examples_cpu_slow.txt, which `-- --full` runs).
    CI runs the scripts of conformance/examples_ci.txt; `-- --full` runs every script; `-- --reference`
    remeasures the reference TileLang 0.1.15 (PyPI, in a venv of its own) and rewrites its file."""
    run_py = os.path.join(HERE, "conformance", "examples_run.py")
    if not os.path.isdir(os.path.join(CONFORMANCE_DIR, "examples")):
        session.skip(f"the conformance kit's examples/ is not in {CONFORMANCE_DIR} (set TILELANG_CONFORMANCE_DIR)")
    args = list(session.posargs)
    env = {**_env(session), "TMPDIR": tempfile.gettempdir()}
    common = ["--kit", CONFORMANCE_DIR, "--out", os.path.join(session.create_tmp(), "examples-out"), "--jobs", "2"]
    if "--reference" in args:
        args.remove("--reference")
        venv = os.path.join(session.create_tmp(), "reference-venv")
        session.run("python", "-m", "venv", "--clear", venv)
        session.run(os.path.join(venv, "bin", "pip"), "install", "-q", REFERENCE_TILELANG, TORCH, *EXAMPLE_DEPS,
                    external=True)
        session.run("python", run_py, "--python", os.path.join(venv, "bin", "python"), *common,
                    "--save", os.path.join(HERE, "conformance", "examples_reference.json"), *args, env=env)
        return
    _system_packages(session, PLUGINS)
    _install(session, "./core", *(f"./plugins/tilelang-{p}" for p in PLUGINS))
    session.install(*EXAMPLE_DEPS)
    python = os.path.join(session.virtualenv.location, "bin", "python")
    full = "--full" in args
    subset = [] if full else ["--subset", os.path.join(HERE, "conformance", "examples_ci.txt")]
    args = [a for a in args if a != "--full"]
    if shutil.which("nvcc") or os.environ.get("CUDA_HOME"):
        session.run("python", run_py, "--python", python, *common, *subset,
                    "--compare", os.path.join(HERE, "conformance", "examples_reference.json"),
                    "--floor", os.path.join(HERE, "conformance", "examples_floor.txt"), *args, env=env)
    else:
        session.log("no nvcc on PATH and no CUDA_HOME: the example builds are not counted here")
    ci = ["--only-floor", "--skip", os.path.join(HERE, "conformance", "examples_cpu_slow.txt")]
    session.run("python", run_py, "--cpu", "--python", python, *common,
                "--floor", os.path.join(HERE, "conformance", "examples_cpu_floor.txt"), *([] if full else ci), *args,
                env=env)


@nox.session
def docs(session: nox.Session) -> None:
    """The documentation site (Sphinx, sphinx-autoapi, furo), warnings as errors, with an API page for each public
    package (docs/public_modules.txt) and no other; then the pages' Python examples, run on the CPU."""
    session.install(TORCH, "pytest", "pytest-xdist", "sphinx>=8", "sphinx-autoapi>=3.4", "furo", "myst-parser>=4")
    _install_local(session, "./core", "./plugins/tilelang-cpu", "./plugins/tilelang-cuda")  # cuda: source-only examples
    tree = os.path.join(os.path.abspath(session.create_tmp()), "docs-src")  # conf.py resolves it from docs/
    session.run("python", "docs/stage_source_tree.py", tree)
    out = os.path.join("build", "docs", "html")
    shutil.rmtree(out, ignore_errors=True)  # pages of modules no longer documented must not linger
    # -E: read every page afresh; a saved environment keeps objects of the previous build's pages (seen as
    # duplicate descriptions when an object moves between pages)
    session.run("sphinx-build", "-E", "-W", "--keep-going", "-q", "-b", "html", "docs", out,
                env={"DOCS_SOURCE_TREE": os.path.join(tree, "tilelang")})
    session.run("python", "docs/check_api_pages.py", out)
    session.run(*PYTEST, "-n", "2", "docs/test_docs.py", *session.posargs, env=_env(session))


TORCH_FLOOR = "torch==2.1.2"  # the oldest torch `torch>=2.1` allows (2.1.2: its last bug-fix release)


@nox.session(name="torch-floor")
def torch_floor(session: nox.Session) -> None:
    """core + cpu with the oldest supported torch: the JIT, argument and profiler tests, the CPU backend's tests and
    the quickstart. PyPI's torch 2.1 for Linux is a CUDA build (~2.6 GB with its nvidia-* wheels; no CPU-only
    index is reachable here), so the wheels are downloaded once into a wheelhouse under .nox/.cache and installed
    from there; numpy stays below 2, which torch 2.1 was built against."""
    wheelhouse = os.path.join(session.cache_dir, "torch-floor-wheels")
    session.run("pip", "download", "-q", "-d", wheelhouse, TORCH_FLOOR, "numpy<2")
    session.install("--find-links", wheelhouse, TORCH_FLOOR, "numpy<2", "pytest", "hypothesis")
    session.install("--find-links", wheelhouse, "./core", "./plugins/tilelang-cpu", TORCH_FLOOR, "numpy<2")
    session.run("python", "-c", "import torch; assert torch.__version__.startswith('2.1.'), torch.__version__; "
                "print('torch', torch.__version__)")
    tests = [os.path.abspath(p) for p in ("core/tests/jit", "plugins/tilelang-cpu/tests")]
    quickstart = os.path.abspath("examples/quickstart.py")
    with session.chdir(session.create_tmp()):
        session.run(*PYTEST, *tests, *session.posargs, env=_env(session))
        session.run("python", quickstart, env=_env(session))


@nox.session(name="nvcc")
def nvcc_from_pip(session: nox.Session) -> None:
    """CUDA from pip's nvcc (the `nvcc` extra, as the reference's): core + tilelang-cuda[nvcc], no nvcc on PATH, no
    CUDA_HOME; the wheel's nvcc builds the test corpus to cubins for sm_80 and sm_90a (no GPU needed)."""
    session.install(TORCH, "pytest", "pytest-xdist")
    _install_local(session, "./core", "./plugins/tilelang-cuda[nvcc]")
    path = os.pathsep.join(d for d in os.environ.get("PATH", "").split(os.pathsep)
                           if d and not os.path.exists(os.path.join(d, "nvcc")))
    env = {**_env(session), "PATH": path, "CUDA_HOME": None, "CUDA_PATH": None, "TILELANG_CUDA_COMPILER": "nvcc"}
    # fail here if the nvcc found is not the wheel's
    session.run("python", "-c", "from tilelang_cuda import toolkit; p = toolkit.find_nvcc(); print(p); "
                "assert p and 'site-packages' in p, p", env=env)
    session.run(*PYTEST, "-n", "2", "plugins/tilelang-cuda/tests/test_corpus_cuda.py", "-k", "cubin", *session.posargs,
                env=env)


# every distribution this repository publishes: the meta-distribution `tilelang-suite` (the root), core, each backend
DISTRIBUTIONS = (".", "core", *(f"plugins/tilelang-{p}" for p in PLUGINS))
# a deprecation in a build's output: a Python warning class (SetuptoolsDeprecationWarning, DeprecationWarning,
# PendingDeprecationWarning, ...), pip's "DEPRECATION:" notices, or a "... is deprecated" sentence (setuptools'
# banners); a file called deprecated.py in the file lists is not one
DEPRECATION = re.compile(r"DeprecationWarning|\bDEPRECATION\b|\bdeprecated\b(?!\.py)", re.IGNORECASE)


def deprecations(output: str) -> list[str]:
    """The lines of a build's output that report a deprecation."""
    return [line.strip() for line in output.splitlines() if DEPRECATION.search(line)]


@nox.session
def wheels(session: nox.Session) -> None:
    """Build every distribution as users and indexes do (`python -m build`: the sdist, then the wheel from the
    sdist, each in a fresh isolated build environment with the newest setuptools the metadata allows) and fail on
    any deprecation in the output: setuptools' metadata and configuration deprecations, pip's notices and
    Python's DeprecationWarnings (made visible, they are hidden by default)."""
    session.install("build")
    dist = os.path.join(os.path.abspath(session.create_tmp()), "dist")
    shutil.rmtree(dist, ignore_errors=True)
    env = {"PYTHONWARNINGS": "always::DeprecationWarning,always::PendingDeprecationWarning"}
    found = []
    # from outside the checkout: its build/ folder would shadow the `build` package for `python -m build`
    with session.chdir(session.create_tmp()):
        for name in DISTRIBUTIONS:
            output = session.run("python", "-m", "build", "--outdir", dist, os.path.join(HERE, name), env=env,
                                 silent=True) or ""
            found += [f"{name}: {line}" for line in deprecations(output)]
    built = sorted(os.listdir(dist))
    session.log("built: " + ", ".join(built))
    if len([f for f in built if f.endswith(".whl")]) != len(DISTRIBUTIONS):
        session.error(f"expected {len(DISTRIBUTIONS)} wheels in {dist}, found {built}")
    if found:
        session.error("deprecation warnings while building:\n" + "\n".join(found))


# benchmarks that need no GPU; `nox -s bench -- gpu_bench.py` runs the CUDA one on a GPU machine
CPU_BENCHMARKS = ("jit_overhead.py", "startup.py", "cpu_gemm.py", "cpu_elementwise.py", "cpu_softmax.py",
                  "webgpu_bench.py")


@nox.session
def bench(session: nox.Session) -> None:
    """Benchmarks (ratios against baselines measured in the same run)."""
    _system_packages(session, ["webgpu"])
    _install(session, "./core", "./plugins/tilelang-cpu", "./plugins/tilelang-webgpu", "./plugins/tilelang-cuda")
    for script in session.posargs or CPU_BENCHMARKS:
        session.run("python", f"benchmarks/{script}", env=_env(session))



@nox.session
def sass(session: nox.Session) -> None:
    """SASS of this project's kernels next to the reference's (benchmarks/sass_compare.py; arguments after `--` go
    to it, e.g. `-- --kernels gemm_fp16 --archs sm_90a`)."""
    reference = os.environ.get("TILELANG_REFERENCE_PYTHON", "")
    if shutil.which("nvcc") is None:
        session.skip("sass: nvcc is not on PATH")
    if not reference or not os.access(reference, os.X_OK):
        session.skip("sass: set TILELANG_REFERENCE_PYTHON to the python of a venv with `pip install "
                     f"tilelang==0.1.15` (now {reference or 'unset'})")
    _install(session, "./core", "./plugins/tilelang-cuda")
    if shutil.which("cuobjdump") is None:
        session.install("nvidia-cuda-cuobjdump")
    if shutil.which("nvdisasm") is None:  # cuobjdump -sass runs it
        session.install("nvidia-cuda-nvdisasm")
    out = os.path.join(session.create_tmp(), "sass")
    session.run("python", "benchmarks/sass_compare.py", "--reference-python", reference, "--out", out,
                "--json", os.path.join(out, "sass_compare.json"), *session.posargs, env=_env(session))


if __name__ == "__main__":
    sys.exit("run me with `nox`")
