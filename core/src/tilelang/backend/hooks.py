"""The PluginManager that carries the hooks of `tilelang.backend.hookspecs`, created on first use."""

from __future__ import annotations

from typing import Any

import pluggy

hookimpl = pluggy.HookimplMarker("tilelang")
_pm: pluggy.PluginManager | None = None


def plugin_manager() -> pluggy.PluginManager:
    """The process-wide PluginManager (installed backends' hook modules are registered as they load)."""
    global _pm
    if _pm is None:
        from tilelang.backend import hookspecs

        pm = pluggy.PluginManager("tilelang")
        pm.add_hookspecs(hookspecs)
        _pm = pm
    return _pm


def register_hooks(obj: Any, name: str) -> None:
    """Register hook module/object `obj` under `name` (no-op when already registered)."""
    pm = plugin_manager()
    if pm.get_plugin(name) is None and not pm.is_registered(obj):
        pm.register(obj, name=name)


def chain(hook_name: str, value: Any, **kwargs: Any) -> Any:
    """Call hook `hook_name` implementation by implementation, feeding each result into the next.

    The first positional parameter of the spec receives `value`; None results leave it unchanged.
    """
    caller = getattr(plugin_manager().hook, hook_name)
    argname = next(iter(caller.spec.argnames))
    for impl in reversed(caller.get_hookimpls()):  # pluggy's call order: last registered first
        wanted = {k: v for k, v in {argname: value, **kwargs}.items() if k in impl.argnames}
        result = impl.function(**wanted)
        if result is not None:
            value = result
    return value
