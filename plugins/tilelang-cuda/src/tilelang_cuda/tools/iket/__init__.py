"""IKET: named events in TileLang CUDA kernels, for the external IKET profiler (traces viewable in Perfetto).

IKET is a CUDA tool, not part of ``tilelang.language``::

    from tilelang_cuda.tools import iket

    with iket.session(output_dir="/tmp/iket"):
        @T.prim_func
        def kernel(A: T.Tensor((n,), T.float32)):
            with T.Kernel(T.ceildiv(n, 128), threads=128) as bx:
                with iket.range("body"):
                    iket.mark("before_store")
                    ...
        tilelang.compile(kernel, target="cuda")

Inside the session the generated CUDA gets IKET's metadata and macros (`codegen`); building and compiling it
works without a GPU. Recording a trace needs an NVIDIA GPU and the external IKET runtime:
``iket.profile_command(["python", "app.py"], directory="/tmp/iket")`` builds the command, `require_iket`
explains what is missing.
"""

from tilelang_cuda.tools.iket.cli import (
    iket_available,
    output_dir,
    output_path,
    profile_command,
    require_iket,
    set_output_dir,
    trace_files,
)
from tilelang_cuda.tools.iket.frontend import (
    PayloadSpec,
    event_table,
    mark,
    payload,
    range,
    range_end,
    range_pop,
    range_push,
    range_start,
    reset,
)
from tilelang_cuda.tools.iket.session import (
    disable,
    disable_runtime_payloads,
    enable,
    enable_runtime_payloads,
    is_enabled,
    runtime_payloads_enabled,
    session,
)

__all__ = [
    "PayloadSpec", "disable", "disable_runtime_payloads", "enable", "enable_runtime_payloads", "event_table",
    "iket_available", "is_enabled", "mark", "output_dir", "output_path", "payload", "profile_command", "range",
    "range_end", "range_pop", "range_push", "range_start", "require_iket", "reset", "runtime_payloads_enabled",
    "session", "set_output_dir", "trace_files",
]

# The reference's module path, which its users and tests read as the package's name: `tilelang.tools.cuda.iket`
# resolves to this very module (entry-point group tilelang.module_aliases). Relative imports keep `__package__`.
__name__ = "tilelang.tools.cuda.iket"
