"""A node's past on the device: its path back to the root, then the game before the root
(``Tree.root_history``). Per tree: the search step vmaps these over the batch."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import chex
import jax
import jax.numpy as jnp

from zerochess.chess.types import PAST_POSITIONS, RootHistory
from zerochess.search.tree import Tree

# (ply, cursor) -> (uint32 [2] key of the position ``ply`` plies back, cursor for ply + 1)
ReadKey = Callable[[chex.Array, Any], tuple[chex.Array, Any]]


class _Walk(NamedTuple):
    ply: chex.Array  # int32, plies back from the position being checked
    cursor: Any  # where the walk is at ``ply`` (see ReadKey)
    count: chex.Array  # int32 occurrences found so far
    nearest: chex.Array  # int32 plies back to the nearest occurrence (0: none yet)


def earlier_occurrences(key: chex.Array, limit: chex.Array, cursor: Any,
                        read: ReadKey) -> tuple[chex.Array, chex.Array]:
    """How often a position occurred in the ``limit`` plies before it.

    Args:
      key: uint32 [2] the position's ``position_hash``.
      limit: int32 scalar, plies to look back: the halfmove clock (an irreversible move
        lies further back), capped by the history there is.
      cursor: the walk's start, 1 ply back (a pytree ``read`` understands).
      read: ``(ply, cursor) -> (key, next cursor)``, the position ``ply`` plies back.

    Returns:
      ``(count, nearest)`` int32 scalars: occurrences with the same side to move (an even
      number of plies back), and the plies back to the nearest one (0 if none).
    """

    def body(w: _Walk) -> _Walk:
        k, cursor = read(w.ply, w.cursor)
        hit = (w.ply % 2 == 0) & jnp.all(k == key)
        return _Walk(ply=w.ply + 1, cursor=cursor, count=w.count + hit.astype(jnp.int32),
                     nearest=jnp.where(hit & (w.count == 0), w.ply, w.nearest))

    start = _Walk(ply=jnp.int32(1), cursor=cursor, count=jnp.int32(0), nearest=jnp.int32(0))
    end = jax.lax.while_loop(lambda w: w.ply <= limit, body, start)
    return end.count, end.nearest


def path_occurrences(tree: Tree, parent: chex.Array, depth: chex.Array, key: chex.Array,
                     rule50: chex.Array) -> tuple[chex.Array, chex.Array]:
    """``earlier_occurrences`` of a new node of one tree.

    Args:
      tree: one (unbatched) tree.
      parent: int32 scalar, the new node's parent.
      depth: int32 scalar, the new node's depth.
      key: uint32 [2], its ``position_hash``.
      rule50: its halfmove clock.

    Returns:
      ``(count, nearest)`` over the path to the root, then the game before the root.
    """
    past = tree.root_history
    limit = jnp.minimum(rule50.astype(jnp.int32), depth + past.num_keys)

    def read(ply, node):
        in_tree = ply <= depth
        h = jnp.clip(ply - depth - 1, 0, past.keys.shape[0] - 1)
        safe = jnp.maximum(node, 0)
        k = jnp.where(in_tree, tree.key[safe], past.keys[h])
        return k, jnp.where(in_tree, tree.parent[safe], -1)

    return earlier_occurrences(key, limit, parent, read)


def input_history(tree: Tree, parent: chex.Array, depth: chex.Array, board: chex.Array,
                  repeated: chex.Array) -> tuple[chex.Array, chex.Array]:
    """The network input's positions of a node of one tree, newest first.

    Args:
      tree: one (unbatched) tree.
      parent: int32 scalar, the node's parent (-1 for the root).
      depth: int32 scalar, the node's depth.
      board: int8 [64], the node's board.
      repeated: bool scalar, the node's position occurred before.

    Returns:
      boards int8 [8, 64] and repeated flags bool [8]: the node, then its ancestors,
      then the game before the root.
    """
    boards, reps = [board], [repeated]
    past = tree.root_history
    cur = parent
    for i in range(1, PAST_POSITIONS + 1):
        in_tree = cur >= 0
        h = jnp.clip(i - depth - 1, 0, PAST_POSITIONS - 1)
        safe = jnp.maximum(cur, 0)
        boards.append(jnp.where(in_tree, tree.position.board[safe], past.boards[h]))
        reps.append(jnp.where(in_tree, tree.repetitions[safe] > 0, past.repeated[h]))
        cur = jnp.where(in_tree, tree.parent[safe], -1)
    return jnp.stack(boards), jnp.stack(reps)


def root_input_history(board: chex.Array, past: RootHistory) -> tuple[chex.Array, chex.Array]:
    """``input_history`` of a batch of roots: boards int8 [B, 8, 64], repeated bool [B, 8]
    from the roots' boards [B, 64] and their games ``past`` [B]."""
    boards = jnp.concatenate([board[:, None], past.boards], axis=1)
    repeated = jnp.concatenate([past.repetitions[:, None] > 0, past.repeated], axis=1)
    return boards, repeated
