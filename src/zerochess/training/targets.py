"""Training targets from RL arrays: value targets from ``Env`` rewards, and the two layouts of
policy targets (dense ``[..., 1858]`` / 218 legal-move slots) and of input planes (full
``[..., 112, 8, 8]`` / packed bits and values), each way (jittable unless noted)."""

from __future__ import annotations

from typing import Any

import chex
import jax
import jax.numpy as jnp
import numpy as np

from zerochess.chess.policy_map import MAX_LEGAL_MOVES, NUM_MOVES
from zerochess.errors import UserError
from zerochess.training.examples import NUM_PLANES, compact_planes, dense_policy, expand_planes

# --- value targets -------------------------------------------------------------------------


def returns(rewards: chex.Array, done: chex.Array | None = None) -> chex.Array:
    """Each player's sum of the rewards from step t to the end of its game.

    Args:
      rewards: float [T, B, 2] ``State.rewards`` after step t (by player, as ``Env`` and
        pgx give them: only a game's last step is non-zero, +1/-1, or 0 for a draw).
      done: bool [T, B] step t ended its game (``terminated | truncated`` after it); needed
        only when games restart within the trajectory (``env.auto_reset``), so that a
        reward does not flow back into the game before. None: one game per slot.

    Returns:
      float [T, B, 2]: G[t, b, p] = rewards[t, b, p] + (G[t + 1, b, p] unless done[t, b]).
    """
    rewards = jnp.asarray(rewards, jnp.float32)
    if rewards.ndim != 3 or rewards.shape[-1] != 2:
        raise UserError(f"rewards must be float [T, B, 2], got shape {rewards.shape}")
    done = (jnp.zeros(rewards.shape[:2], bool) if done is None
            else jnp.asarray(done, bool))
    if done.shape != rewards.shape[:2]:
        raise UserError(f"done must be bool [T, B] = {rewards.shape[:2]}, got {done.shape}")

    def back(later, step):
        r, d = step
        g = r + jnp.where(d[:, None], 0.0, later)
        return g, g

    _, out = jax.lax.scan(back, jnp.zeros_like(rewards[0]), (rewards, done), reverse=True)
    return out


def value_targets(rewards: chex.Array, current_player: chex.Array,
                  done: chex.Array | None = None) -> chex.Array:
    """The game's outcome from the view of the player to move at each position: AlphaZero's
    value target z (+1 won, -1 lost, 0 drawn or not finished within the trajectory).

    Args:
      rewards: float [T, B, 2] (``returns``).
      current_player: int [T, B] the player to move in the position searched at step t
        (``State.current_player`` before the step).
      done: bool [T, B] or None (``returns``).

    Returns:
      float [T, B]. Positions after a game's end (a finished, not restarted slot) get 0:
      mask them with ``~(terminated | truncated)`` of the state before the step. For
      targets by colour (white's view) instead: ``returns(...)`` indexed by
      ``State.player_order[..., 0]``, the player of white.
    """
    g = returns(rewards, done)
    player = jnp.asarray(current_player, jnp.int32)
    if player.shape != g.shape[:2]:
        raise UserError(f"current_player must be int [T, B] = {g.shape[:2]}, got "
                        f"{player.shape}")
    return jnp.take_along_axis(g, player[..., None], axis=-1)[..., 0]


def value_to_wdl(z: chex.Array) -> chex.Array:
    """float [..., 3] W/D/L one-hot of outcomes z in {+1, 0, -1} (what ``Batch.result`` and
    the WDL losses take): ``(z > 0, z == 0, z < 0)``."""
    z = jnp.asarray(z, jnp.float32)
    return jnp.stack([z > 0, z == 0, z < 0], axis=-1).astype(jnp.float32)


# --- policy targets: dense <-> 218 slots -----------------------------------------------------


def legal_indices(legal_action_mask: chex.Array) -> chex.Array:
    """int16 [..., 218]: the 1858 indices of the legal moves in ascending order, -1 padded
    (a slot layout for ``State.legal_action_mask`` [..., 1858]; ``search()``'s own
    ``SearchOutput.legal`` is another valid one, in move-generation order)."""
    mask = jnp.asarray(legal_action_mask, bool)
    if mask.shape[-1:] != (NUM_MOVES,):
        raise UserError(f"legal_action_mask must be bool [..., {NUM_MOVES}], got {mask.shape}")
    flat = mask.reshape(-1, NUM_MOVES)
    idx = jax.vmap(lambda m: jnp.nonzero(m, size=MAX_LEGAL_MOVES, fill_value=-1)[0])(flat)
    return idx.astype(jnp.int16).reshape(*mask.shape[:-1], MAX_LEGAL_MOVES)


def _check_slots(legal: Any, values: Any | None = None) -> None:
    if legal.shape[-1:] != (MAX_LEGAL_MOVES,):
        raise UserError(f"legal must be int [..., {MAX_LEGAL_MOVES}] (1858 indices, -1 "
                        f"padded), got {legal.shape}")
    if values is not None and values.shape != legal.shape:
        raise UserError(f"slot values must match legal's shape {legal.shape}, got "
                        f"{values.shape}")


def dense_to_slots(dense: chex.Array, legal: chex.Array, xp: Any = jnp) -> chex.Array:
    """float [..., 218]: ``dense[..., legal[k]]`` per slot k, 0 in padding slots.

    Args:
      dense: float [..., 1858] (e.g. ``SearchOutput.action_weights``).
      legal: int [..., 218] the slots' moves (``SearchOutput.legal``, ``legal_indices`` or
        ``Examples.policy_index``), -1 padded.
      xp: ``jnp`` (default) or ``np`` (host).
    """
    dense = xp.asarray(dense, xp.float32)
    legal = xp.asarray(legal).astype(xp.int32)
    _check_slots(legal)
    if dense.shape[-1:] != (NUM_MOVES,) or dense.shape[:-1] != legal.shape[:-1]:
        raise UserError(f"dense must be float [..., {NUM_MOVES}] with legal's leading shape "
                        f"{legal.shape[:-1]}, got {dense.shape}")
    taken = xp.take_along_axis(dense, xp.maximum(legal, 0), axis=-1)
    return xp.where(legal >= 0, taken, 0.0).astype(xp.float32)


def slots_to_dense(legal: chex.Array, values: chex.Array, illegal: float = 0.0,
                   xp: Any = jnp) -> chex.Array:
    """float [..., 1858]: each slot's value at its move, ``illegal`` everywhere else.

    ``illegal=0.0`` gives ``search()``'s ``action_weights`` form; ``illegal=-1.0`` lc0's
    training form (``training.dense_policy``, what ``to_batch`` and the policy loss use).
    ``dense_to_slots(slots_to_dense(legal, v), legal) == v`` on the legal slots.
    """
    legal = xp.asarray(legal).astype(xp.int32)
    values = xp.asarray(values, xp.float32)
    _check_slots(legal, values)
    lc0 = dense_policy(legal, values, xp)  # lc0's form: -1 off the legal moves
    if illegal == -1.0:
        return lc0
    on = dense_policy(legal, xp.ones_like(values), xp) > 0
    return xp.where(on, lc0, xp.float32(illegal)).astype(xp.float32)


# --- input planes: full <-> packed -----------------------------------------------------------


def pack_planes(planes: chex.Array, xp: Any = np) -> tuple[Any, Any]:
    """float [..., 112, 8, 8] planes -> (bits uint8 [..., 112, 8], values float32 [..., 112]).

    ``xp=np`` (default, host) is ``training.compact_planes`` and checks that each plane is
    one value on its set squares (lc0 input); ``xp=jnp`` packs inside ``jit`` without the
    check (a plane's value is its first non-zero square's).
    """
    if xp is np:
        return compact_planes(planes)
    planes = jnp.asarray(planes, jnp.float32)
    if planes.shape[-3:] != (NUM_PLANES, 8, 8):
        raise UserError(f"planes must be [..., 112, 8, 8], got {planes.shape}")
    flat = planes.reshape(*planes.shape[:-2], 64)
    mask = flat != 0
    first = jnp.take_along_axis(flat, jnp.argmax(mask, -1)[..., None], -1)[..., 0]
    return (jnp.packbits(mask, axis=-1, bitorder="little"),
            jnp.where(mask.any(-1), first, 0.0).astype(jnp.float32))


def unpack_planes(bits: chex.Array, values: chex.Array, xp: Any = jnp) -> chex.Array:
    """(bits [..., 112, 8], values [..., 112]) -> float32 [..., 112, 8, 8]
    (``training.expand_planes``; ``Examples.plane_bits``/``plane_values`` to network input)."""
    return expand_planes(bits, values, xp)


__all__ = ["dense_to_slots", "legal_indices", "pack_planes", "returns", "slots_to_dense",
           "unpack_planes", "value_targets", "value_to_wdl"]
