"""The WebGPU dialect of the TileLang language (``tilelang.webgpu.language``): exactly the common language.

The WebGPU backend adds no constructs of its own, so its dialect is ``tilelang.language.common`` under the name
``webgpu``; names are resolved on first use (``import tilelang.webgpu.language`` imports neither TVM nor torch).
"""

from tilelang.backend.sdk import common_language_dialect

__tilelang_dialect__ = "webgpu"

__getattr__, __dir__ = common_language_dialect(__name__, "WebGPU")
