"""The reference's ``tilelang.language.builtin``: warp collectives, barriers, pointers and loop control."""

from tilelang.language.barriers import (
    barrier_arrive,
    barrier_wait,
    mbarrier_arrive,
    mbarrier_arrive_expect_tx,
    mbarrier_expect_tx,
    mbarrier_wait_parity,
    no_set_max_nreg,
)
from tilelang.language.kernel import sync_threads
from tilelang.language.misc import loop_break
from tilelang.language.views import access_ptr
from tilelang.language.warp import *  # noqa: F403
from tilelang.language.warp import __all__ as _warp_all

__all__ = [*_warp_all, "access_ptr", "barrier_arrive", "barrier_wait", "loop_break", "mbarrier_arrive",
           "mbarrier_arrive_expect_tx", "mbarrier_expect_tx", "mbarrier_wait_parity", "no_set_max_nreg",
           "sync_threads"]
