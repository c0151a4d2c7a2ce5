"""The launch plan core builds at lowering time (`tilelang.engine.launch_plan`): device functions in launch
order, parameter binding, grid / block / dynamic shared bytes as safe expressions, the artifact JSON round
trip, `bind` and its errors, and that no plugin evaluates launch expressions with ``eval``.

Plans are built from core's own pipeline and TVM's host/device split (the `core_only` fixture), so these tests
need no backend.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

import tilelang.language as T
from tilelang.artifact import CompiledArtifact, ParamInfo
from tilelang.engine.launch_plan import (
    DeviceParam,
    KernelLaunch,
    LaunchPlan,
    LaunchPlanError,
    bind,
    build_launch_plan,
    evaluate,
    format_expr,
)

pytestmark = pytest.mark.usefixtures("core_only")

CUDA = {"kind": "cuda", "arch": "sm_80"}
WEBGPU = {"kind": "webgpu"}


def plan_of(func, target=CUDA):
    import tvm
    from tvm.target import Target

    from tilelang.engine.lower import param_infos
    from tilelang.transform import pipeline

    mod = tvm.IRModule({"main": func.with_attr("global_symbol", "main")})
    with pipeline.pass_context({}):
        lowered = pipeline.lower_tile_program(mod, Target(target), Target({"kind": "llvm"}))
        host, device = pipeline.split(lowered, Target(target))
    return build_launch_plan(device, host, param_infos(func))


def tensor(*shape):
    return SimpleNamespace(shape=shape)


def dynamic_scale(block=32):
    m = T.dynamic("m")

    @T.prim_func
    def main(A: T.Tensor((m, 64), "float32"), C: T.Tensor((m, 64), "float32"), alpha: T.float32):
        with T.Kernel(T.ceildiv(m, block), threads=128) as bx:
            for i, j in T.Parallel(block, 64):
                if bx * block + i < m:
                    C[bx * block + i, j] = A[bx * block + i, j] * alpha

    return main


def two_kernels():
    @T.prim_func
    def main(A: T.Tensor((256,), "float32"), B: T.Tensor((256,), "float32"), C: T.Tensor((64,), "float32")):
        with T.Kernel(4, threads=64) as bx:
            tx = T.get_thread_binding()
            B[bx * 64 + tx] = A[bx * 64 + tx] * 2.0
        with T.Kernel(2, threads=32) as by:
            ty = T.get_thread_binding()
            C[by * 32 + ty] = B[by * 32 + ty]

    return main


def shared_tile(M=128, N=128, bm=32):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(M // bm, threads=128) as bx:
            tile = T.alloc_shared((bm, N), "float32")
            T.copy(A[bx * bm, 0], tile)
            T.copy(tile, B[bx * bm, 0])

    return main


# ---------------------------------------------------------------------------------------------- building
def test_dynamic_grid_is_a_ceildiv_of_the_symbolic_dim():
    plan = plan_of(dynamic_scale())
    assert plan.param_names == ("A", "C", "alpha") and plan.tensor_params == (0, 1)
    (k,) = plan.kernels
    assert k.grid == (("ceildiv", ("dim", 0, 0), 32), 1, 1) and k.block == (128, 1, 1)
    assert format_expr(k.grid[0], plan.param_names) == "ceildiv(A.shape[0], 32)"
    pointers = [p.tensor for p in k.params if p.is_pointer]
    scalars = {p.name: p.value for p in k.params if not p.is_pointer}
    assert sorted(pointers) == [0, 1]
    assert scalars == {"alpha": ("arg", 2), "m": ("dim", 0, 0)}
    for rows, blocks in ((1, 1), (32, 1), (33, 2), (100, 4)):
        (launch,) = bind(plan, (tensor(rows, 64), tensor(rows, 64), 1.5))
        assert launch.grid == (blocks, 1, 1) and launch.block == (128, 1, 1)
        assert dict(zip([p.name for p in k.params], launch.args))["m"] == rows


def test_several_device_functions_in_launch_order():
    plan = plan_of(two_kernels(), WEBGPU)
    assert plan.kernel_names == ["main_kernel", "main_kernel_1"]
    first, second = bind(plan, (tensor(256), tensor(256), tensor(64)))
    assert (first.grid, first.block) == ((4, 1, 1), (64, 1, 1))
    assert (second.grid, second.block) == ((2, 1, 1), (32, 1, 1))
    assert sorted(p.tensor for p in first.kernel.params if p.is_pointer) == [0, 1]
    assert sorted(p.tensor for p in second.kernel.params if p.is_pointer) == [1, 2]


def test_dynamic_shared_bytes_of_a_shared_tile():
    plan = plan_of(shared_tile())
    (k,) = plan.kernels
    assert k.dynamic_shared_bytes == 32 * 128 * 4
    (launch,) = bind(plan, (tensor(128, 128), tensor(128, 128)))
    assert launch.dynamic_shared_bytes == 32 * 128 * 4 and launch.grid == (4, 1, 1)


def test_lower_stores_the_plan_in_the_artifact():
    import tilelang
    from tilelang.errors import BackendNotInstalled

    try:
        art = tilelang.lower(dynamic_scale(), target="webgpu")
    except BackendNotInstalled:
        pytest.skip("no backend for webgpu installed")
    assert art.launch_plan == plan_of(dynamic_scale(), WEBGPU)
    assert art.to_json()["launch_plan"] == art.launch_plan.to_json()


def test_the_plan_survives_the_artifact_json():
    plan = plan_of(dynamic_scale())
    art = CompiledArtifact("main", CUDA, [ParamInfo("A", "float32", ("m", 64)), ParamInfo("C", "float32", ("m", 64)),
                                         ParamInfo("alpha", "float32", (), False)], "", launch_plan=plan)
    again = CompiledArtifact.from_json(json.loads(json.dumps(art.to_json())), {})
    assert again.launch_plan == plan
    no_plan = CompiledArtifact("main", CUDA, [], "")
    assert CompiledArtifact.from_json(json.loads(json.dumps(no_plan.to_json())), {}).launch_plan is None


def test_plan_json_keeps_every_expression_form():
    expr = ("max", ("min", ("floormod", ("arg", 2), 7), ("div", ("dim", 0, 1), -3)),
            ("shl", ("sub", ("mul", ("arg", 2), 2), 1), ("shr", 64, 2)))
    k = KernelLaunch("k", (DeviceParam("A", "handle", True, 0), DeviceParam("x", "int32", False, None, expr),
                           DeviceParam("w", "handle", True, None)),
                     (("ceildiv", ("dim", 0, 0), 16), ("floordiv", ("arg", 2), 2), 1), (32, 4, 1),
                     ("mul", ("dim", 0, 1), 4))
    plan = LaunchPlan(("A", "B", "n"), (0, 1), (k,))
    assert LaunchPlan.from_json(json.loads(json.dumps(plan.to_json()))) == plan
    (launch,) = bind(plan, (tensor(40, 10), tensor(1), 9))
    # max(min(9 % 7, trunc(10 / -3)), ((9 * 2 - 1) << (64 >> 2)))
    assert launch.args == (launch.args[0], max(min(2, -3), 17 << 16), None)
    assert launch.grid == (3, 4, 1) and launch.block == (32, 4, 1) and launch.dynamic_shared_bytes == 40
    with pytest.raises(ValueError, match="launch plan version"):
        LaunchPlan.from_json({"version": 0, "params": [], "tensors": [], "kernels": []})


# ---------------------------------------------------------------------------------------------- bad calls
def _plan():
    return plan_of(dynamic_scale())


def test_bind_rejects_a_wrong_argument_count():
    with pytest.raises(LaunchPlanError, match=r"expected 3 arguments \(A, C, alpha\), got 1"):
        bind(_plan(), (tensor(10, 64),))


def test_bind_rejects_a_scalar_where_a_tensor_goes():
    with pytest.raises(LaunchPlanError, match="argument 'A' must be a tensor, got int"):
        bind(_plan(), (3, tensor(10, 64), 1.0))


def test_bind_rejects_a_tensor_with_too_few_dims_and_a_non_number_scalar():
    plan = LaunchPlan(("A",), (0,), (KernelLaunch("k", (), (("dim", 0, 2), 1, 1), (1, 1, 1)),))
    with pytest.raises(LaunchPlanError, match=r"'A' must be a tensor with at least 3 dims .* got shape \[4, 4\]"):
        bind(plan, (tensor(4, 4),))
    with pytest.raises(LaunchPlanError, match="argument 'alpha' must be a number"):
        bind(_plan(), (tensor(10, 64), tensor(10, 64), "fast"))


def test_unbound_and_unsupported_expressions_fail_at_bind_time_with_their_name():
    k = KernelLaunch("k", (), (("unbound", "workspace_rows"), 1, 1), (1, 1, 1))
    with pytest.raises(LaunchPlanError, match="reads 'workspace_rows', which is neither a scalar parameter"):
        bind(LaunchPlan((), (), (k,)), ())
    odd_pool = KernelLaunch("k", (), (1, 1, 1), (1, 1, 1), ("unsupported", "shared.dyn buffer of int4"))
    assert bind(LaunchPlan((), (), (odd_pool,)), ())[0].dynamic_shared_bytes is None
    with pytest.raises(LaunchPlanError, match="cannot be evaluated on the host"):
        evaluate(("unsupported", "T.Select(...)"), ())
    with pytest.raises(LaunchPlanError, match="divides by zero"):
        evaluate(("ceildiv", ("arg", 0), ("arg", 1)), (4, 0), ("n", "d"))
    with pytest.raises(LaunchPlanError, match="malformed"):
        evaluate(("pow", 2, 3), ())


# ---------------------------------------------------------------------------------------------- plugins
def test_no_plugin_evaluates_python_source():
    """Launch expressions are bound by `bind`; no plugin source calls ``eval`` / ``exec`` on text."""
    root = Path(__file__).resolve().parents[3] / "plugins"
    offenders = []
    for path in sorted(root.glob("*/src/**/*.py")):
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"(?<![\w.])(eval|exec)\(", line):
                offenders.append(f"{path.relative_to(root)}:{n}: {line.strip()}")
    assert root.is_dir() and not offenders, "\n".join(offenders)
