"""Counting XLA compilations: a test that a second call with new values (not new shapes)
compiles nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax

EVENT = "/jax/core/compile/backend_compile_duration"


def count_compiles(fn: Callable[[], Any]) -> tuple[int, Any]:
    """(backend compilations while ``fn()`` ran, what it returned)."""
    compiles = []

    def on_event(name: str, *_args: Any, **_kwargs: Any) -> None:
        if name == EVENT:
            compiles.append(name)

    jax.monitoring.register_event_duration_secs_listener(on_event)
    try:
        out = fn()
    finally:
        jax.monitoring.unregister_event_duration_listener(on_event)
    return len(compiles), out
