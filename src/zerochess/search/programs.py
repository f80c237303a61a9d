"""Jitted programs that update a few leaves of a large state pytree in place.

A search state has ~70 arrays; a jitted call that takes and returns all of them
(donated) costs ~0.4 ms of host time on a CPU, ten times the cost of the arrays it
changes. ``StateProgram`` wraps ``fn(state, *args) -> (state, *outs)``: it finds once
(by tracing) which leaves of the state ``fn`` replaces, and compiles a program that
takes those donated and the others read-only, and returns only those.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np
from jax.extend import core as jax_core


@dataclasses.dataclass
class _Entry:
    changed: list[int]
    kept: list[int]
    jitted: Callable


class StateProgram:
    """``fn(state, *args, **static) -> (state, *outs)`` (or just ``state``), jitted.

    Args:
      fn: the function; it must return a state of the same structure.
      static_argnames: keyword arguments that are compile-time constants.
      donate: indices into ``args`` of further arguments to donate (e.g. a cache that
        ``fn`` returns updated).
    """

    def __init__(self, fn: Callable, static_argnames: Sequence[str] = (),
                 donate: Sequence[int] = ()):
        self.fn = fn
        self.static_argnames = tuple(static_argnames)
        self.donate = tuple(donate)
        self._entries: dict[Any, _Entry] = {}

    def _entry(self, state: Any, args: tuple, static: dict[str, Any]) -> _Entry:
        leaves, treedef = jax.tree.flatten(state)
        arg_leaves, arg_tree = jax.tree.flatten(args)
        key = (treedef, arg_tree, tuple(sorted(static.items())),
               tuple((np.shape(x), getattr(x, "dtype", type(x))) for x in leaves + arg_leaves))
        entry = self._entries.get(key)
        if entry is not None:
            return entry
        changed: list[int] = []

        def probe(leaves_in, *a):
            out = self.fn(treedef.unflatten(leaves_in), *a, **static)
            new = jax.tree.leaves(out[0] if isinstance(out, tuple) else out)
            changed.extend(i for i, (x, y) in enumerate(zip(leaves_in, new, strict=True))
                           if x is not y)
            return out

        # The probe's jaxpr is the program: the jitted function below evaluates it instead
        # of tracing ``fn`` a second time (tracing, vmaps included, is most of the cost of
        # a new process: jax's persistent cache skips compilation, not tracing).
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
        entry = _Entry(changed, kept, jax.jit(core, donate_argnums=donate))
        self._entries[key] = entry
        return entry

    def __call__(self, state: Any, *args: Any, **static: Any) -> Any:
        entry = self._entry(state, args, static)
        leaves, treedef = jax.tree.flatten(state)
        new, rest = entry.jitted([leaves[i] for i in entry.changed],
                                 [leaves[i] for i in entry.kept], *args)
        for i, x in zip(entry.changed, new, strict=True):
            leaves[i] = x
        state = treedef.unflatten(leaves)
        return state if rest is None else (state, *rest)

    def lower(self, state: Any, *args: Any, **static: Any) -> Any:
        """The lowered program (for inspection)."""
        entry = self._entry(state, args, static)
        leaves = jax.tree.leaves(state)
        return entry.jitted.lower([leaves[i] for i in entry.changed],
                                  [leaves[i] for i in entry.kept], *args)


__all__ = ["StateProgram"]
