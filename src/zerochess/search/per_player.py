"""Per-tree search settings chosen by the player to move, inside ``jit`` (e.g. search-contempt
for one player, PUCT for the other, in one batch and one compiled program). Example::

    both = stack_players(stack_configs([SearchConfig(n_scl=5)] * B),
                         stack_configs([SearchConfig()] * B))    # [2, B, ...]
    params = for_player(both, states.current_player)            # [B, ...]: the mover's
"""

from __future__ import annotations

from collections.abc import Sequence

import chex
import jax
import jax.numpy as jnp

from zerochess.errors import ConfigError
from zerochess.search.params import SearchParams


def _batch(params: SearchParams, name: str) -> int:
    sizes = {tuple(a.shape[:1]) for a in jax.tree.leaves(params)}
    if len(sizes) != 1 or sizes == {()}:
        raise ConfigError(f"{name}: every SearchParams field must lead with the batch "
                          f"dimension B, got leading shapes {sorted(sizes)}")
    return next(iter(sizes))[0]


def stack_players(*players: SearchParams) -> SearchParams:
    """Stack per-tree settings of P players into one ``SearchParams`` [P, B, ...].

    Args:
      players: one ``SearchParams`` [B] per player (``stack_configs``), all of one batch
        B; player p's settings are ``players[p]`` (for ``zerochess.env``: player ids 0, 1).

    Returns:
      ``SearchParams`` whose every field is ``[P, B, *trailing]``.

    Raises:
      ConfigError: no players, or their batch sizes differ (the sizes are quoted).
    """
    if not players:
        raise ConfigError("stack_players needs at least one player's SearchParams")
    bad = [i for i, p in enumerate(players) if not isinstance(p, SearchParams)]
    if bad:
        raise ConfigError(f"stack_players: argument(s) {bad} are not SearchParams "
                          f"(got {[type(players[i]).__name__ for i in bad]}); build them "
                          "with zerochess.search.stack_configs")
    sizes = [_batch(p, f"player {i}") for i, p in enumerate(players)]
    if len(set(sizes)) != 1:
        raise ConfigError(f"stack_players: every player needs settings for the same batch "
                          f"of trees, got batch sizes {sizes}")
    return jax.tree.map(lambda *a: jnp.stack(a), *players)


def for_player(stacked: SearchParams, player: chex.Array) -> SearchParams:
    """Each tree's settings from the player to move (jittable; shapes are static).

    Args:
      stacked: ``SearchParams`` [P, B, ...] from ``stack_players``.
      player: int [B] the player to move in each tree (``State.current_player``; for
        settings by colour instead, ``1 - State.position.turn``: 0 white, 1 black).

    Returns:
      ``SearchParams`` [B, ...]: tree b gets ``stacked[player[b], b]`` on every field.

    Raises:
      ConfigError: ``player`` is not ``[B]`` for the stack's B (shapes quoted; checked
        when traced). Ids outside [0, P) are clipped, as jax indexing does.
    """
    leaves = jax.tree.leaves(stacked)
    shape = tuple(leaves[0].shape[:2]) if leaves and leaves[0].ndim >= 2 else ()
    if len(shape) != 2 or any(tuple(a.shape[:2]) != shape for a in leaves):
        raise ConfigError("for_player: expected SearchParams [P, B, ...] from stack_players, "
                          f"got leading shapes {sorted({tuple(a.shape[:2]) for a in leaves})}")
    player = jnp.asarray(player)
    if player.shape != shape[1:]:
        raise ConfigError(f"for_player: player must be int [B] = {shape[1:]} (one id per "
                          f"tree), got shape {player.shape}")
    trees = jnp.arange(shape[1])
    return jax.tree.map(lambda a: a[player.astype(jnp.int32), trees], stacked)


def player_settings(players: Sequence[SearchParams], player: chex.Array) -> SearchParams:
    """``for_player(stack_players(*players), player)`` in one call."""
    return for_player(stack_players(*players), player)


__all__ = ["for_player", "player_settings", "stack_players"]
