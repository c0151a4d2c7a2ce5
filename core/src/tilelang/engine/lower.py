"""`lower`: compile a tile program for one target into a `CompiledArtifact`.

The PrimFunc goes through core's pipeline (`tilelang.transform.pipeline`) with the backends' passes at each
extension point, is split into host and device halves, and each half is built by the codegen registered for
its target kind: device code by ``resolve_device_codegen(target)``; host code after the host-codegen hooks and
the ``tilelang_prepare_host_codegen`` hook chain, by ``resolve_host_codegen(target_host)``. For a target
whose code runs on the host (no device functions after the split) the device codegen builds the host module.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import Any

from tilelang.artifact import CompiledArtifact, ParamInfo
from tilelang.engine.request import CompileRequest
from tilelang.errors import LoweringError, TileLangError, surface_user_errors


def _plain(value: Any) -> Any:
    """A JSON-able copy of a target config (tvm_ffi containers -> dict / list / str)."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if hasattr(value, "items"):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)) or hasattr(value, "__iter__"):
        return [_plain(v) for v in value]
    if hasattr(value, "value"):
        return value.value
    return str(value)


def _dim(e: Any) -> int | str:
    from tilelang.transform.utils import as_int

    v = as_int(e)
    return v if v is not None else str(e)


def param_infos(func: Any) -> list[ParamInfo]:
    from tvm import tirx

    infos = []
    for p in func.params:
        if tirx.is_buffer_var(p):
            infos.append(ParamInfo(str(p.name), str(p.ty.dtype), tuple(_dim(s) for s in p.ty.shape)))
        else:
            dtype = str(p.ty.dtype) if hasattr(p.ty, "dtype") else str(p.dtype)
            infos.append(ParamInfo(str(p.name), dtype, (), is_tensor=False))
    return infos


def extrac_params(func: Any) -> list[Any]:
    """The reference's name: `func`'s parameters as `tilelang.engine.param.KernelParam` objects."""
    from tilelang.engine.param import KernelParam

    return [KernelParam.from_param_info(p) for p in param_infos(func)]


def launch_metadata(func: Any) -> dict[str, Any]:
    from tilelang.transform import utils as C

    ext = C.launch_extents(func)
    meta: dict[str, Any] = {
        "grid": [_dim(ext[t][1]) for t in C.BLOCK_TAGS if t in ext],
        "threads": [_dim(ext[t][1]) for t in C.THREAD_TAGS if t in ext],
    }
    return meta


def _as_module(func_or_mod: Any) -> tuple[Any, str, Any]:
    import tvm
    from tvm import tirx

    if isinstance(func_or_mod, tvm.IRModule):
        funcs = [(gv, f) for gv, f in func_or_mod.functions.items() if isinstance(f, tirx.PrimFunc)]
        if len(funcs) != 1:
            raise LoweringError(f"tilelang.lower expects one PrimFunc, the module holds {len(funcs)}")
        gv, func = funcs[0]
        name = str(func.attrs["global_symbol"]) if func.attrs and "global_symbol" in func.attrs else gv.name_hint
    elif isinstance(func_or_mod, tirx.PrimFunc):
        func = func_or_mod
        name = (str(func.attrs["global_symbol"]) if func.attrs and "global_symbol" in func.attrs
                else getattr(func, "__name__", "main"))
    else:
        inner = getattr(func_or_mod, "prim_func", None) or getattr(func_or_mod, "func", None)
        if isinstance(inner, (tirx.PrimFunc, tvm.IRModule)):
            return _as_module(inner)
        raise LoweringError(f"tilelang.lower expects a PrimFunc or an IRModule, got {type(func_or_mod).__name__}")
    func = func.with_attr("global_symbol", name)
    return tvm.IRModule({name: func}), name, func


def _inspect(rt_mod: Any, fmt: str) -> str:
    try:
        return str(rt_mod.inspect_source(fmt))
    except Exception:
        return ""


@surface_user_errors
def lower(func: Any, target: Any = None, target_host: Any = None,
          pass_configs: dict[str, Any] | None = None, *, runtime_only: bool = False,
          enable_host_codegen: bool = True, enable_device_compile: bool = True,
          request: CompileRequest | None = None) -> CompiledArtifact:
    """Compile `func` (a PrimFunc or a one-function IRModule) for `target` (``"auto"``/None: see
    `tilelang.backend.determine_target`; an enclosing ``with tvm.target.Target(...)`` sets the default).

    The reference's keywords: ``enable_host_codegen=False`` leaves the host half as IR (``host_mod``; no
    ``rt_mod`` to run, no ``host_source``) for targets with device code; ``enable_device_compile=False`` builds
    the device module through its codegen's source-only path (``DeviceCodegen.build_without_compile``) where it
    has one. Both default to True here (the reference defaults them to False because its JIT adapters build
    those halves themselves; this project's execution backends take them from the artifact). `runtime_only` is
    accepted for the reference's signature; parameter descriptions are always produced.
    """
    from tilelang.backend import hooks
    from tilelang.backend.host_codegen import apply_host_codegen_hooks, resolve_host_codegen
    from tilelang.engine.callback import apply_postproc
    from tilelang.transform import pipeline
    from tilelang.transform import utils as C
    from tilelang.transform.config import tl_configs

    if request is None:
        request = CompileRequest.create("auto" if target is None else target, target_host, pass_configs)
    elif target is not None or target_host is not None or pass_configs is not None:
        raise TypeError("tilelang.lower: give either request= or target/target_host/pass_configs, not both")
    device_config, host_config = request.targets.device, request.targets.host
    tgt, th = request.targets.tvm_device, request.targets.tvm_host  # built through each kind's to_tvm
    mod, name, prim = _as_module(func)
    configs = request.pass_configs

    C.take_pending_error()
    with compile_session(name, configs), pipeline.pass_context(configs, context=f"kernel={name}"):
        run_semantic_checks(mod, configs)  # inside the session (traced), outside the try: ValueError as is
        try:
            with pipeline.pipeline_scope(tgt):
                lowered = pipeline.lower_tile_program(mod, tgt, th)
                host_mod, device_mod = pipeline.split(lowered, tgt)
            host_mod = apply_host_codegen_hooks(host_mod, th, tgt)
            host_mod = hooks.chain("tilelang_prepare_host_codegen", host_mod, target_host=th, target=tgt)
            _check_imported_source(device_mod if device_mod is not None else host_mod, tgt, device_config.get("kind"))
            if device_mod is None:
                codegen, built = _device_codegen(host_mod, tgt, compile_device=enable_device_compile)
                rt_mod = built.rt_mod
                source = built.source or _inspect(rt_mod, "ll") or _inspect(rt_mod, "")
                host_source = None
            else:
                codegen, built = _device_codegen(device_mod, tgt, compile_device=enable_device_compile)
                source = built.source if built.source is not None else _inspect(built.rt_mod, "")
                rt_mod, host_source = None, None
                if enable_host_codegen:
                    rt_mod = resolve_host_codegen(th).lower(host_mod, th)
                    rt_mod.import_module(built.rt_mod)
                    host_source = _inspect(rt_mod, "ll") or None
            if codegen.postprocess is not None and source:
                source = codegen.postprocess(source, tgt)
            source = hooks.chain("tilelang_postprocess_kernel_source", source, target=tgt)
            source = apply_postproc(source, tgt)
        except TileLangError:
            raise
        except Exception as exc:
            pending = C.take_pending_error()
            if pending is not None:
                raise pending from None
            raise LoweringError(f"{name}: lowering for {device_config.get('kind')} failed: {C.short_error(exc)}",
                                location=C.source_location(prim)) from None

    if enable_device_compile and codegen.finalize is not None:  # binaries of the final source (its own errors)
        with tl_configs(configs):  # the device compiler's flags come from them
            built.merge(codegen.finalize(source, tgt))
    metadata = launch_metadata(prim)
    shared = _final_shared_bytes(device_mod) if device_mod is not None else None
    if shared is None:  # host-code kernels (their tiles are plain buffers) or symbolic sizes: the planned sum
        planned = [int(f.attrs["tl.shared_bytes"]) for f in lowered.functions.values()
                   if f.attrs is not None and "tl.shared_bytes" in f.attrs]
        shared = max(planned, default=0)
    if shared:
        metadata["shared_bytes"] = shared
    metadata["device_functions"] = [str(gv.name_hint) for gv in (device_mod or host_mod).functions.keys()]
    metadata["param_align"] = request.param_align(prim)
    metadata.update(built.metadata)
    params = param_infos(prim)
    plan = None
    if device_mod is not None:
        from tilelang.engine.launch_plan import build_launch_plan

        plan = build_launch_plan(device_mod, host_mod, params)
    artifact = CompiledArtifact(
        name=name, target=_plain(device_config), target_host=_plain(host_config), params=params,
        kernel_source=source, host_source=host_source, device_mod=device_mod if device_mod is not None else host_mod,
        host_mod=host_mod, rt_mod=rt_mod, files=dict(built.files), metadata=json.loads(json.dumps(metadata)),
        launch_plan=plan,
    )
    hooks.plugin_manager().hook.tilelang_artifact_built(artifact=artifact)
    return artifact


def _check_imported_source(mod: Any, target: Any, kind: Any) -> None:
    """A program with ``T.import_source`` code needs a device codegen that compiles it (`DeviceCodegen`'s
    ``imports_source``): without it the kernels would call functions that are not there."""
    from tilelang.backend.device_codegen import IMPORT_SOURCE_ATTR, resolve_device_codegen

    if mod.attrs is None or IMPORT_SOURCE_ATTR not in mod.attrs:
        return
    codegen = resolve_device_codegen(target)
    if not codegen.imports_source:
        raise LoweringError(f"T.import_source: the {kind!r} device codegen ({codegen.name}) does "
                            "not compile imported source; call such helpers on a target whose backend does (cuda)")


def _device_codegen(mod: Any, target: Any, *, compile_device: bool = True) -> tuple[Any, Any]:
    """Build `mod` with the target's device codegen, through the compile session's codegen middleware (which sees
    and may replace the runtime module); returns the codegen and its `DeviceBuild`."""
    from tilelang.backend.device_codegen import resolve_device_codegen
    from tilelang.instrumentation import run_codegen_with_instrumentation

    codegen = resolve_device_codegen(target)
    builds = []

    def build() -> Any:
        builds.append(codegen.build_device(mod, target, compile_device=compile_device))
        return builds[-1].rt_mod

    rt_mod = run_codegen_with_instrumentation(f"target.build.tilelang_{codegen.name}", mod, target, build)
    built = builds[-1]
    built.rt_mod = rt_mod
    return codegen, built


@contextlib.contextmanager
def compile_session(name: str, configs: dict[str, Any]) -> Iterator[Any]:
    """The instrumentation session of one compilation (`tilelang.instrumentation`).

    An enclosing session (a JIT compile, a tool) is reused. A new one gets the registered tools plus those the
    configuration asks for: pass timing (``tl.pass_profile`` / ``TILELANG_PASS_PROFILE``), the lower trace
    (``TL_LOWER_TRACE``, unless `tilelang.tools.lower_trace.enable` registered it) and the pass-diff hook
    (``TILELANG_PASS_DIFF``, installed once per process).
    """
    from tilelang.instrumentation import compile_pass_instrumentation, current_compile_pass_instrumentation

    if current_compile_pass_instrumentation() is not None:
        with compile_pass_instrumentation(name=name) as session:
            yield session
        return
    with compile_pass_instrumentation(name=name, tools=_configured_tools(configs)) as session:
        yield session


def _configured_tools(configs: dict[str, Any]) -> list[Any]:
    from tilelang.env import env

    tools: list[Any] = []
    from tilelang.jit.diagnostics import phase_timing_tool
    from tilelang.tools.pass_timing import create_pass_timing_tool

    phases = phase_timing_tool()  # DEBUG / TILELANG_JIT_DIAGNOSTICS: the pipeline and codegen phases, timed
    if phases is not None:
        tools.append(phases)

    timing = create_pass_timing_tool(configs)
    if timing is not None:
        tools.append(timing)
    if env.get_lower_trace_mode() is not None:
        from tilelang.tools.lower_trace import core as lower_trace

        if not lower_trace.is_registered():
            session = lower_trace.session_from_environment()
            if session is not None:
                tools.append(session)
    if env.get_pass_diff_mode() is not None:
        from tilelang.utils.pass_diff_hook import install_pass_diff_hook

        install_pass_diff_hook()
    return tools


def run_semantic_checks(mod: Any, configs: dict[str, Any]) -> None:
    """The reference's pre-lowering checks (`tilelang.analysis.semantic_check`): ValueError on misused loops."""
    from tilelang.analysis import semantic_check

    semantic_check(mod, configs)


def _final_shared_bytes(device_mod: Any) -> int | None:
    """Shared memory of the largest kernel of the final device module, or None when a size is symbolic.

    Counted after TVM's StorageRewrite / MergeSharedMemoryAllocations and every backend pass: tiles whose
    lifetimes do not overlap share storage, backend scratch is included (the plan before them overstates).
    """
    from tilelang.transform import utils as C
    from tilelang.transform.plan_shared_memory import dtype_bytes

    best = 0
    for func in device_mod.functions.values():
        if not hasattr(func, "body"):
            continue
        total = 0
        for alloc in C.allocations(func.body):
            if not C.scope_of(alloc.buffer).startswith("shared"):
                continue
            n = C.num_elements(alloc.buffer.ty.shape)
            if n is None:
                return None
            total += n * dtype_bytes(str(alloc.buffer.ty.dtype))
        best = max(best, total)
    return best
