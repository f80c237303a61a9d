"""Jitted programs that update a few leaves of a large state pytree in place."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Sequence
from typing import Any

import jax
from jax.extend import core as jax_core

from zerochess import program_store


@dataclasses.dataclass
class _Entry:
    changed: list[int]
    kept: list[int]
    compiled: Callable  # (changed leaves, kept leaves, *args) -> (new changed leaves, rest)


class StateProgram:
    """``fn(state, *args, **static) -> (state, *outs)`` (or just ``state``), compiled, and
    kept on disk between processes (``zerochess.program_store``: a new process loads it
    without tracing ``fn``).

    Args:
      fn: the function; it must return a state of the same structure.
      static_argnames: keyword arguments that are compile-time constants.
      donate: indices into ``args`` of further arguments to donate (e.g. a cache that
        ``fn`` returns updated).
      identity: for a function from outside zerochess (``program_store.Program``).
    """

    def __init__(self, fn: Callable, static_argnames: Sequence[str] = (),
                 donate: Sequence[int] = (), identity: str | None = None):
        self.fn = fn
        self.identity = identity
        self.name = (identity or program_store.function_name(fn)) + "/state"
        self.static_argnames = tuple(static_argnames)
        self.donate = tuple(donate)
        self._entries: dict[Any, _Entry] = {}
        self._lock = threading.Lock()
        program_store.register(self)

    def clear(self) -> None:
        self._entries.clear()

    def _cache_size(self) -> int:
        return len(self._entries)

    def _build(self, leaves: list, treedef: Any, args: tuple, static: dict[str, Any]
               ) -> tuple[list[int], list[int], Callable]:
        """Trace ``fn`` once: the leaves it changes, those it keeps, the jitted program."""
        changed: list[int] = []

        def probe(leaves_in, *a):
            program_store.STATS["traced"] += 1
            out = self.fn(treedef.unflatten(leaves_in), *a, **static)
            new = jax.tree.leaves(out[0] if isinstance(out, tuple) else out)
            changed.extend(i for i, (x, y) in enumerate(zip(leaves_in, new, strict=True))
                           if x is not y)
            return out

        # The probe's jaxpr is the program: the jitted function below evaluates it instead
        # of tracing ``fn`` a second time.
        closed, out_shape = jax.make_jaxpr(probe, return_shape=True)(leaves, *args)
        program = jax_core.jaxpr_as_fun(closed)
        out_tree = jax.tree.structure(out_shape)
        kept = [i for i in range(len(leaves)) if i not in set(changed)]
        has_rest = isinstance(out_shape, tuple)

        def core(mutable, fixed, *a):
            merged: list[Any] = [None] * (len(mutable) + len(fixed))
            for i, x in zip(changed, mutable, strict=True):
                merged[i] = x
            for i, x in zip(kept, fixed, strict=True):
                merged[i] = x
            flat = jax.tree.leaves((merged, *a))
            out = out_tree.unflatten(program(*flat))
            state, rest = (out[0], out[1:]) if has_rest else (out, None)
            new = jax.tree.leaves(state)
            return [new[i] for i in changed], rest

        donate = (0, *(2 + i for i in self.donate))
        return changed, kept, jax.jit(core, donate_argnums=donate)

    def _entry(self, state: Any, args: tuple, static: dict[str, Any]) -> _Entry:
        leaves, treedef = jax.tree.flatten(state)
        arg_leaves, arg_tree = jax.tree.flatten(args)
        static_items = tuple(sorted(static.items()))
        avals = tuple(program_store.aval_key(x) for x in leaves + arg_leaves)
        key = (treedef, arg_tree, static_items, avals)
        entry = self._entries.get(key)
        if entry is not None:
            return entry
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                entry = self._acquire(leaves, treedef, args, arg_tree, static, static_items,
                                      avals)
                self._entries[key] = entry
        return entry

    def _acquire(self, leaves: list, treedef: Any, args: tuple, arg_tree: Any,
                 static: dict[str, Any], static_items: tuple, avals: tuple) -> _Entry:
        def split(changed: list[int]) -> tuple[list, list]:
            kept = set(changed)
            return ([leaves[i] for i in changed],
                    [x for i, x in enumerate(leaves) if i not in kept])

        def compile_fn() -> tuple[Any, dict]:
            changed, _, jitted = self._build(leaves, treedef, args, static)
            return jitted.lower(*split(changed), *args).compile(), {"changed": changed}

        def in_tree(extra: dict) -> Any:
            changed = [int(i) for i in extra["changed"]]
            if any(not 0 <= i < len(leaves) for i in changed):
                raise ValueError("changed leaves out of range")
            return jax.tree.structure(((*split(changed), *args), {}))

        def key() -> str:
            own = (f"identity:{self.identity}" if self.identity
                   else program_store.fingerprint(self.fn))
            return program_store.program_key(self.name, (own, static_items),
                                             (treedef, arg_tree), avals, self.donate)

        compiled, extra = program_store.acquire(self.name, key, in_tree, compile_fn)
        changed = [int(i) for i in extra["changed"]]
        kept = [i for i in range(len(leaves)) if i not in set(changed)]
        return _Entry(changed, kept, compiled)

    def __call__(self, state: Any, *args: Any, **static: Any) -> Any:
        entry = self._entry(state, args, static)
        leaves, treedef = jax.tree.flatten(state)
        new, rest = entry.compiled([leaves[i] for i in entry.changed],
                                   [leaves[i] for i in entry.kept], *args)
        for i, x in zip(entry.changed, new, strict=True):
            leaves[i] = x
        state = treedef.unflatten(leaves)
        return state if rest is None else (state, *rest)

    def precompile(self, state: Any, *args: Any, **static: Any) -> None:
        """Compile (or load) the program a call with these arguments runs, without running
        it; arrays may be ``jax.ShapeDtypeStruct`` (``program_store.abstract``)."""
        self._entry(state, args, static)

    def lower(self, state: Any, *args: Any, **static: Any) -> Any:
        """The lowered program (for inspection; traced afresh)."""
        leaves, treedef = jax.tree.flatten(state)
        changed, kept, jitted = self._build(leaves, treedef, args, static)
        return jitted.lower([leaves[i] for i in changed], [leaves[i] for i in kept], *args)


__all__ = ["StateProgram"]
