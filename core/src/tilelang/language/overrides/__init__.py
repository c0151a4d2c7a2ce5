"""The reference's ``tilelang.language.overrides`` module path.

The reference patches TVM's TIR-script parser and ``Buffer.__getitem__`` here (clearer index-count errors).
TileLang's own front end checks buffer indexing itself (`tilelang.frontend.rewrite`), so nothing of TVM is
patched; `buffer` documents the check.
"""

from tilelang.language.overrides import buffer  # noqa: F401
