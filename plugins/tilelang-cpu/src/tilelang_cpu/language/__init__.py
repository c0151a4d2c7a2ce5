"""The CPU dialect of the TileLang language (``tilelang.cpu.language``): exactly the common language.

The CPU backend adds no constructs of its own, so its dialect is ``tilelang.language.common`` under the name
``cpu``; names are resolved on first use (``import tilelang.cpu.language`` imports neither TVM nor torch).
"""

from tilelang.backend.sdk import common_language_dialect

__tilelang_dialect__ = "cpu"

__getattr__, __dir__ = common_language_dialect(__name__, "CPU")
