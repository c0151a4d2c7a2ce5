"""Compiler instrumentation shared by TileLang's developer tools.

`events` turns TVM's pass-instrument callbacks into nested, numbered pass events; `session` gives each
compilation its own set of tools (lower trace, pass timing, ...) and runs code generators through them. The
core pipeline (`tilelang.engine.lower`, `tilelang.transform.pipeline`) opens a session per compilation, labels
the pipeline with `pass_pipeline` and runs codegen through `run_codegen_with_instrumentation`.
"""

from tilelang.instrumentation.events import (
    CapturePredicate,
    IncompletePass,
    PassEvent,
    PassEventObserver,
    SequenceAllocator,
    StackedPassInstrument,
    active_stacked_pass_instruments,
    current_pass_phase,
    pass_phase,
)
from tilelang.instrumentation.session import (
    CodegenEvent,
    CompilePassInstrumentationSession,
    PassInstrumentationTool,
    compile_pass_instrumentation,
    create_pass_instruments,
    current_compile_pass_instrumentation,
    current_pass_instrument_context,
    instrument_current_pass_context,
    pass_pipeline,
    register_pass_instrumentation_tool,
    run_codegen_with_instrumentation,
    unregister_pass_instrumentation_tool,
)

__all__ = [
    "CapturePredicate", "CodegenEvent", "CompilePassInstrumentationSession", "IncompletePass", "PassEvent",
    "PassEventObserver", "PassInstrumentationTool", "SequenceAllocator", "StackedPassInstrument",
    "active_stacked_pass_instruments", "compile_pass_instrumentation", "create_pass_instruments",
    "current_compile_pass_instrumentation", "current_pass_instrument_context", "current_pass_phase",
    "instrument_current_pass_context", "pass_phase", "pass_pipeline", "register_pass_instrumentation_tool",
    "run_codegen_with_instrumentation", "unregister_pass_instrumentation_tool",
]
