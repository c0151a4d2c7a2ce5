"""`tilelang.backend.sdk`: the versioned backend SDK, its names, and the manifest's ``sdk_version`` check."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tilelang.backend import Backend, plugins, sdk
from tilelang.backend.target import normalize_target
from tilelang.errors import BackendLoadError, InvalidManifestError

NEEDS = """
from tilelang.backend.sdk import Backend, TargetKind, register_target_kind

def register():
    register_target_kind(TargetKind("{kind}"))

BACKEND = Backend(name="{name}", target_kinds=("{kind}",), register=register, sdk_version="{version}")
"""


def test_every_sdk_name_resolves():
    for name in sdk.__all__:
        assert getattr(sdk, name) is not None, name
    with pytest.raises(AttributeError, match="tilelang.backend.sdk.__all__"):
        sdk.no_such_name  # noqa: B018


def test_the_sdk_exports_helper_modules_whole_and_generic_names_under_sdk_names():
    import tilelang.engine.launch_plan as launch_plan
    import tilelang.tileop.reduce as reduce
    import tilelang.tileop.utils as tileop_utils

    assert sdk.tileop_utils is tileop_utils and "tileop_utils" in dir(sdk)
    assert (sdk.bind_launch, sdk.LaunchExpr, sdk.reduce_combine) == (launch_plan.bind, launch_plan.Expr, reduce.combine)


def test_the_sdk_names_the_frontend_state_and_annotated_layouts():
    import tilelang.frontend.state as state
    import tilelang.transform.apply_layouts as apply_layouts

    assert (sdk.require_build_state, sdk.rebuild_layout) == (state.require, apply_layouts.rebuild)
    with pytest.raises(Exception, match="T.my_op can only be used inside a kernel"):
        sdk.require_build_state("T.my_op")


def test_importing_the_sdk_imports_nothing_heavy():
    code = ("import sys, tilelang.backend.sdk as s; s.SDK_VERSION; "
            "print(sorted(m for m in ('tvm', 'torch', 'tilelang.engine.launch_plan') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("required", ["1.0", sdk.SDK_VERSION])
def test_a_backend_for_this_sdk_loads(fake_plugins, required):
    fake_plugins.add("tl_sdk_ok", {"sdkok": "tl_sdk_ok.backend:BACKEND"},
                     NEEDS.format(name="sdkok", kind="sdkok", version=required))
    assert normalize_target("sdkok") == {"kind": "sdkok"}


@pytest.mark.parametrize("required, advice", [("1.99", "upgrade tilelang-core"), ("2.0", "upgrade tilelang-core"),
                                              ("0.9", "written for backend SDK 1.x")])
def test_a_backend_for_another_sdk_is_refused_naming_both_versions(fake_plugins, required, advice):
    fake_plugins.add("tl_sdk_new", {"sdknew": "tl_sdk_new.backend:BACKEND"},
                     NEEDS.format(name="sdknew", kind="sdknew", version=required))
    with pytest.warns(plugins.BackendLoadWarning, match=f"needs TileLang backend SDK {required}"):
        with pytest.raises(BackendLoadError):
            normalize_target("sdknew")
    error = plugins.states()[-1].error
    assert f"provides SDK {sdk.SDK_VERSION}" in str(error) and advice in str(error)


def test_manifest_sdk_version_must_be_major_minor():
    with pytest.raises(InvalidManifestError, match="sdk_version must be 'MAJOR.MINOR'"):
        Backend(name="x", target_kinds=("x",), register=lambda: None, sdk_version="1")
