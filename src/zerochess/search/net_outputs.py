"""The network-output boundary: what ``apply_fn`` returns (``ModelOutputs``, a mapping or a
tuple), checked at trace time and made safe (lc0's way: a non-finite output never becomes a
move or a value) before it becomes priors and values."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

import chex
import jax
import jax.numpy as jnp
import numpy as np

from zerochess.chess.types import NUM_MOVES
from zerochess.errors import ConfigError

_FIELDS = ("policy_logits", "wdl_logits", "moves_left")


class Outputs(NamedTuple):
    """A network's outputs for B positions, float32 (``read_outputs``)."""

    policy_logits: chex.Array  # float32 [B, 1858]
    wdl_logits: chex.Array  # float32 [B, 3]
    moves_left: chex.Array | None  # float32 [B] or None


def _describe(value: Any) -> str:
    shape = getattr(value, "shape", None)
    dtype = getattr(value, "dtype", None)
    if shape is not None and dtype is not None:
        return f"{dtype}{list(shape)}"
    from zerochess.errors import quote

    return f"{type(value).__name__} {quote(value, 60)}"


def _array(value: Any, name: str, shape: tuple[int, ...], batch: int) -> chex.Array:
    """``value`` as float32 of ``shape`` (``[B, ...]``) or a ``ConfigError``."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "shape") and not isinstance(
            value, (list, tuple, int, float, np.number)):
        raise ConfigError(f"apply_fn's {name} must be an array of shape {list(shape)}, got "
                          f"{_describe(value)}")
    arr = jnp.asarray(value)
    if not (jnp.issubdtype(arr.dtype, jnp.floating) or jnp.issubdtype(arr.dtype, jnp.integer)):
        raise ConfigError(f"apply_fn's {name} must hold real numbers (float16, bfloat16 and "
                          f"float32 are read as float32), got {_describe(arr)}")
    if tuple(arr.shape) != shape:
        if name == "policy_logits" and arr.ndim == 2 and arr.shape[0] == batch:
            raise ConfigError(f"apply_fn's policy_logits must have lc0's {NUM_MOVES} moves "
                              f"per position (shape {list(shape)}), got {_describe(arr)}")
        raise ConfigError(f"apply_fn's {name} must have shape {list(shape)} for a batch of "
                          f"{batch} positions, got {_describe(arr)}")
    return arr.astype(jnp.float32)


def read_outputs(out: Any, batch: int) -> Outputs:
    """``apply_fn``'s return value for ``batch`` positions as float32 ``Outputs`` (trace
    time checks; see docs/DESIGN.md)."""
    if isinstance(out, Mapping):
        missing = [f for f in _FIELDS[:2] if f not in out]
        if missing:
            raise ConfigError(f"apply_fn returned a mapping without {', '.join(missing)}; "
                              f"expected keys {', '.join(_FIELDS)}, got {sorted(map(str, out))}")
        parts = [out[f] for f in _FIELDS[:2]] + [out.get("moves_left")]
    elif all(hasattr(out, f) for f in _FIELDS[:2]):
        parts = [getattr(out, f) for f in _FIELDS[:2]] + [getattr(out, "moves_left", None)]
    elif isinstance(out, (tuple, list)) and len(out) in (2, 3):
        parts = [*out, None][:3]
    else:
        kind = (f"a {type(out).__name__} of {len(out)} items"
                if isinstance(out, (tuple, list)) else _describe(out))
        raise ConfigError(f"apply_fn must return (policy_logits [B, {NUM_MOVES}], wdl_logits "
                          f"[B, 3], moves_left [B] or None) as a tuple or a NamedTuple, got "
                          f"{kind}")
    policy = _array(parts[0], "policy_logits", (batch, NUM_MOVES), batch)
    wdl = _array(parts[1], "wdl_logits", (batch, 3), batch)
    m = parts[2]
    if m is not None:
        m_arr = jnp.asarray(m) if hasattr(m, "shape") else m
        if hasattr(m_arr, "shape") and tuple(m_arr.shape) == (batch, 1):
            m_arr = m_arr.reshape(batch)
        m = _array(m_arr, "moves_left", (batch,), batch)
    return Outputs(policy_logits=policy, wdl_logits=wdl, moves_left=m)


def policy_priors(logits: chex.Array, valid: chex.Array, temperature: chex.Array
                  ) -> tuple[chex.Array, chex.Array, chex.Array]:
    """Priors at ``temperature`` and the policy at temperature 1 over each position's legal
    moves, with lc0's treatment of non-finite logits.

    Args:
      logits: float32 [B, K] the network's logits of each position's move slots.
      valid: bool [B, K] the slots that hold a legal move.
      temperature: float32 [B] the policy softmax temperature (> 0).

    Returns:
      priors, policy: float32 [B, K] (0 past the legal moves); bad: bool [B] a legal
      move's logit was not finite.
    """
    finite = jnp.isfinite(logits)
    bad = jnp.any(valid & ~finite, axis=1)  # [B]
    usable = valid & finite
    some = jnp.any(usable, axis=1, keepdims=True)
    # a non-finite logit: prior 0; no finite logit at all: uniform over the legal moves
    x = jnp.where(some, jnp.where(usable, logits, -jnp.inf), jnp.where(valid, 0.0, -jnp.inf))
    safe = jnp.where(valid.any(axis=1, keepdims=True), x, 0.0)
    t = temperature[:, None]
    priors = jax.nn.softmax(safe / t, axis=1)
    policy = jax.nn.softmax(safe, axis=1)
    # finite logits whose quotient by the temperature overflows: shift by the maximum
    # first (the same softmax; used only where the direct form is not finite)
    shifted = safe - jnp.max(safe, axis=1, keepdims=True)
    shifted = jnp.where(jnp.isnan(shifted), -jnp.inf, shifted)
    over_p = ~jnp.all(jnp.isfinite(priors), axis=1, keepdims=True)
    over_q = ~jnp.all(jnp.isfinite(policy), axis=1, keepdims=True)
    priors = jnp.where(over_p, jax.nn.softmax(shifted / t, axis=1), priors)
    policy = jnp.where(over_q, jax.nn.softmax(shifted, axis=1), policy)
    return jnp.where(valid, priors, 0.0), jnp.where(valid, policy, 0.0), bad


def wdl_probabilities(wdl_logits: chex.Array) -> tuple[chex.Array, chex.Array]:
    """float32 [B, 3] W/D/L from logits [B, 3] and bool [B]: the row had a non-finite logit
    (it becomes uniform)."""
    bad = ~jnp.all(jnp.isfinite(wdl_logits), axis=1)
    wdl = jax.nn.softmax(jnp.where(bad[:, None], 0.0, wdl_logits), axis=-1)
    return wdl, bad


def moves_left(m: chex.Array | None, batch: int) -> tuple[chex.Array, chex.Array]:
    """float32 [B] moves left (0 without the head) and bool [B]: it was not finite (0)."""
    if m is None:
        return jnp.zeros((batch,), jnp.float32), jnp.zeros((batch,), jnp.bool_)
    bad = ~jnp.isfinite(m)
    return jnp.where(bad, 0.0, m), bad


__all__ = ["Outputs", "moves_left", "policy_priors", "read_outputs", "wdl_probabilities"]
