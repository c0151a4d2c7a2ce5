"""Running a generated program on each backend: execute (CPU, WebGPU, the CUDA emulator) and compare with torch,
or lower and build (CUDA cubin through nvcc, ROCm code object through ld.lld, Metal source through clang-22).

Every function raises (with the program's reproducer in the message) when the backend gets the program wrong;
`availability` says why a backend cannot be checked here, so the tests skip instead.
"""

from __future__ import annotations

import functools
import importlib
import shutil
import sys
import warnings
from pathlib import Path
from typing import Any

from fuzz_programs import Program

CUDA_TESTS = Path(__file__).resolve().parents[3] / "plugins" / "tilelang-cuda" / "tests"
EMULATE_LIMIT = 40_000  # work size (see Program.elements) the CUDA emulator runs within the quick profile's time


def _installed(kind: str) -> bool:
    from tilelang.backend import plugins

    return kind in plugins.installed_kinds()


@functools.cache
def availability(check: str) -> str | None:
    """None when `check` (``cpu``, ``webgpu``, ``cuda``, ``nvcc``, ``cuda_emulator``, ``cuda_gpu``, ``rocm``,
    ``rocm_link``, ``metal``, ``metal_clang``) can run here, else the reason it cannot."""
    kind = {"cpu": "llvm", "nvcc": "cuda", "cuda_emulator": "cuda", "cuda_gpu": "cuda", "rocm_link": "rocm",
            "metal_clang": "metal"}.get(check, check)
    if not _installed(kind):
        from tilelang.errors import distribution_for

        return f"the {kind} backend is not installed (install {distribution_for(kind)})"
    if check == "webgpu":
        from tilelang_webgpu.execution_backend import WgpuBackend

        reason = WgpuBackend().unavailable_reason()
        return None if reason is None else f"wgpu cannot run kernels here: {reason}"
    if check == "cuda_gpu":
        from tilelang_cuda.target import detect

        if detect() is None:
            return "needs an NVIDIA GPU visible to torch"
    if check == "nvcc" and shutil.which("nvcc") is None:
        return "nvcc is not on PATH"
    if check == "cuda_emulator" and not (CUDA_TESTS / "cuda_emulator.py").is_file():
        return f"the CUDA emulator is not at {CUDA_TESTS}"
    if check == "rocm_link":
        from tilelang_rocm.backend import LLD_MISSING, find_ld_lld

        if find_ld_lld() is None:
            return LLD_MISSING
    if check == "metal_clang" and shutil.which("clang-22") is None:
        return "clang-22 is not installed (the MSL check needs it)"
    return None


def _fail(program: Program, backend: str, what: str, exc: BaseException) -> AssertionError:
    return AssertionError(f"{backend}: {what} failed: {type(exc).__name__}: {exc}\n--- program ---\n"
                          f"{program.script()}")


def _lower(program: Program, target: Any, backend: str) -> Any:
    """`tilelang.lower`; a clear rejection of a program over the device's shared memory discards the example."""
    from hypothesis import reject

    import tilelang

    try:
        func = program.kernel()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return tilelang.lower(func, target=target)
    except Exception as exc:
        if _over_limit(exc):
            reject()
        raise _fail(program, backend, "lowering", exc) from exc


# clear rejections of a program over a device's shared-memory limit: a hardware limit, not a bug (discarded)
MEMORY_LIMITS = ("bytes of workgroup memory but this WebGPU target allows",
                 "bytes of threadgroup memory, Apple GPUs allow", "bytes of LDS (shared memory) but")


def _over_limit(exc: BaseException) -> bool:
    from tilelang.errors import LoweringError

    return isinstance(exc, LoweringError) and any(m in str(exc) for m in MEMORY_LIMITS)


def execute(program: Program, target: str, device: str = "cpu", tf32: bool = False, **compile_kw: Any) -> None:
    """Compile for `target`, run on random inputs with zero-filled outputs (tensors on torch `device`), compare
    with torch (``tf32``: float32 GEMMs run on TF32 tensor cores)."""
    from hypothesis import reject

    import tilelang

    inputs = [t.to(device) for t in program.make_inputs()]
    outputs = [t.to(device) for t in program.make_outputs()]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            kernel = tilelang.compile(program.kernel(), target=target, **compile_kw)
        kernel(*program.call_args(inputs, outputs))
    except Exception as exc:
        if _over_limit(exc):
            reject()
        raise _fail(program, target, "compile/run", exc) from exc
    program.check([t.cpu() for t in outputs], [t.cpu() for t in inputs], target, tf32=tf32)


def run_cpu(program: Program) -> None:
    execute(program, "cpu")


def run_webgpu(program: Program) -> None:
    execute(program, "webgpu", execution_backend="wgpu")


def run_cuda_gpu(program: Program) -> None:
    """Run on the local NVIDIA GPU (its own arch) through the CUDA driver backend."""
    execute(program, "cuda", device="cuda", tf32=True, execution_backend="cuda_driver")


@functools.cache
def _emulator() -> Any:
    if str(CUDA_TESTS) not in sys.path:  # the emulator imports its sibling modules
        sys.path.append(str(CUDA_TESTS))
    # under its own name: its sibling modules import `cuda_emulator`, and a second copy of it (another name) kept a
    # second registry of shared buffers, which took TMA-written tiles read by loads for overlapping pool members
    return importlib.import_module("cuda_emulator")


def check_cuda(program: Program, arch: str, *, nvcc: bool, emulate: bool) -> None:
    """Lower for ``cuda`` `arch`; build the cubin with nvcc; run the device IR in the SIMT emulator."""
    backend = f"cuda {arch}"
    artifact = _lower(program, {"kind": "cuda", "arch": arch}, backend)
    assert 'extern "C" __global__' in artifact.kernel_source, program.script()
    if nvcc:
        from tilelang_cuda.compiler import compile_artifact

        try:
            binary = compile_artifact(artifact)
        except Exception as exc:
            raise _fail(program, backend, "nvcc", exc) from exc
        assert binary.cubin[:4] == b"\x7fELF", program.script()
    if emulate:
        inputs, outputs = program.make_inputs(), program.make_outputs()
        try:
            _emulator().emulate(artifact, *program.call_args(inputs, outputs))
        except Exception as exc:
            raise _fail(program, backend, "emulation", exc) from exc
        # the emulator rounds float32 tensor-core operands to TF32 as the hardware does (as on a GPU run)
        program.check(outputs, inputs, f"{backend} (emulated)", tf32=True)


def check_rocm(program: Program, mcpu: str = "gfx942", *, link: bool) -> None:
    """Lower for ``rocm`` `mcpu` and link the code object with ld.lld. A program over the GPU's 64 KiB of LDS
    (bfloat16 tiles take twice their size there) is rejected with a clear LoweringError: discarded."""
    artifact = _lower(program, {"kind": "rocm", "mcpu": mcpu}, f"rocm {mcpu}")
    if link:
        from tilelang_rocm.compiler import ELF_MAGIC, finalize

        try:
            artifact = finalize(artifact)
        except Exception as exc:
            raise _fail(program, f"rocm {mcpu}", "linking", exc) from exc
        assert artifact.files["kernel.hsaco"][:4] == ELF_MAGIC, program.script()


def check_metal(program: Program, *, clang: bool) -> None:
    """Lower for ``metal`` and check the MSL with clang-22. A program over Apple's 32 KiB of threadgroup memory
    is rejected with a clear LoweringError: a hardware limit, not a bug (the example is discarded)."""
    from hypothesis import reject

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import tilelang

            artifact = tilelang.lower(program.kernel(), target="metal")
    except Exception as exc:
        if _over_limit(exc):
            reject()
        raise _fail(program, "metal", "lowering", exc) from exc
    assert "kernel void" in artifact.kernel_source, program.script()
    if clang:
        from tilelang_metal.mslcheck import check_msl

        result = check_msl(artifact.kernel_source, name="fuzz.metal", clang=shutil.which("clang-22"))
        assert result.ok, f"metal: the MSL check failed: {result.diagnostics}\n--- program ---\n{program.script()}"
