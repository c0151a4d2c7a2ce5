"""Helpers for TileLang's own tests and for backend authors' tests (kernel corpus, hand-written tirx)."""
