"""The process's state that outlives a request, reset in one call: `@on_reset` registers each."""

from __future__ import annotations

from collections.abc import Callable

_RESETS: dict[str, Callable[[], None]] = {}


def on_reset(fn: Callable[[], None]) -> Callable[[], None]:
    """Register fn (keyed by its module and name: a reloaded module replaces its own)."""
    _RESETS[f"{fn.__module__}.{fn.__qualname__}"] = fn
    return fn


def reset() -> list[str]:
    """Empty every registered piece of process-wide state; the names of what was reset."""
    for fn in list(_RESETS.values()):
        fn()
    return sorted(_RESETS)
