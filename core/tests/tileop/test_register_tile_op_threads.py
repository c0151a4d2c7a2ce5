"""`tilelang.ir.ops.register_tile_op` from many threads at once (the autotuner compiles configurations in a thread
pool, and passes register their marker ops on first use): one registration, no "registered before" error."""

from __future__ import annotations

import threading
import uuid

from tilelang.ir.ops import register_tile_op


def _register_at_once(name: str, threads: int = 8) -> tuple[list, list]:
    """`threads` threads released together, each registering `name`: (the ops they got, the errors they hit)."""
    start = threading.Barrier(threads)
    got, errors = [], []

    def register() -> None:
        start.wait()
        try:
            got.append(register_tile_op(name, "a marker registered by several threads", effect="pure"))
        except Exception as exc:  # the bug: TVM's "Operator ... is registered before"
            errors.append(exc)

    workers = [threading.Thread(target=register) for _ in range(threads)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    return got, errors


def test_threads_registering_the_same_new_op_at_once_all_get_it():
    for _ in range(5):  # the race needs the threads to meet between the check and the registration: a few names
        name = f"tilelang.test_concurrent_{uuid.uuid4().hex[:8]}"
        got, errors = _register_at_once(name)
        assert not errors, errors[0]
        assert len(got) == 8 and all(op.same_as(got[0]) for op in got)
        assert str(got[0].name) == name
