"""The search tree: fixed-size node arrays [B, N] and edge-slot arrays [B, N, K].

Node 0 is the root. A node is created lazily when its edge is first selected (one
new node per tree per simulation), so N = simulations + 1 suffices. Per-edge
storage is only the move, its prior, the child index and the search-contempt
frozen count, over K = 218 slots (the most legal moves of any chess position):
no per-node array is dense over 1858 or 4672 actions.

Values follow lc0: a node's ``wl_sum``/``d_sum`` are from the perspective of the
player who made the move into the node, so a child's Q seen by its parent's side
to move is ``wl_sum / visits`` (+ draw score * ``d_sum / visits``).
"""

from __future__ import annotations

import functools
from typing import Any

import chex
import jax
import jax.numpy as jnp

from zerochess.chess.history import PAST_POSITIONS, REPETITION_WINDOW, RootHistory
from zerochess.chess.policy_map import MAX_LEGAL_MOVES
from zerochess.chess.rules import GameStatus
from zerochess.chess.state import PositionArrays, empty_positions

K = MAX_LEGAL_MOVES


@chex.dataclass(frozen=True)
class Tree:
    """A batch of search trees. Shapes: B trees, N nodes, K edge slots."""

    # topology and per-node position state, [B, N]
    parent: chex.Array  # int32, -1 for the root and unused nodes
    depth: chex.Array  # int16, root = 0
    position: PositionArrays  # board int8 [B, N, 64]; turn ... fullmove [B, N]
    key: chex.Array  # uint32 [B, N, 2] position_hash (repetition identity)
    repetitions: chex.Array  # int8, earlier occurrences in game + path (capped at 2)
    status: chex.Array  # int8 GameStatus
    num_legal: chex.Array  # int16
    # statistics, [B, N]
    visits: chex.Array  # int32, including the node's own evaluation
    wl_sum: chex.Array  # float32, W - L sums, mover-into-node perspective
    d_sum: chex.Array  # float32
    raw_wdl: chex.Array  # float32 [B, N, 3] network WDL for the side to move at the node
    # edges, [B, N, K]
    edge_move: chex.Array  # int16 lc0 1858 index, -1 past num_legal
    edge_prior: chex.Array  # float32 policy (root: after Dirichlet noise)
    edge_child: chex.Array  # int32 child node index, -1 if not created
    frozen: chex.Array  # int32 search-contempt frozen child visits (all 0 if not frozen)
    # per tree, [B, ...]
    node_count: chex.Array  # int32 [B]
    dropped: chex.Array  # int32 [B] simulations skipped because the tree was full
    simulations: chex.Array  # int32 [B] simulations done (indexes the random streams)
    rng_key: chex.Array  # uint32 [B, 2]
    root_history: RootHistory  # the game before each root, [B, ...]

    @property
    def batch_size(self) -> int:
        return self.visits.shape[0]

    @property
    def num_nodes(self) -> int:
        return self.visits.shape[1]


def empty_tree(batch_size: int, num_nodes: int) -> Tree:
    """An all-empty tree batch (the roots are written by the search init)."""
    b, n = batch_size, num_nodes

    def full(shape, value, dtype):
        return jnp.full(shape, value, dtype)

    return Tree(
        parent=full((b, n), -1, jnp.int32),
        depth=full((b, n), 0, jnp.int16),
        position=empty_positions(jnp, (b, n)),
        key=full((b, n, 2), 0, jnp.uint32),
        repetitions=full((b, n), 0, jnp.int8),
        status=full((b, n), GameStatus.ONGOING, jnp.int8),
        num_legal=full((b, n), 0, jnp.int16),
        visits=full((b, n), 0, jnp.int32),
        wl_sum=full((b, n), 0.0, jnp.float32),
        d_sum=full((b, n), 0.0, jnp.float32),
        raw_wdl=full((b, n, 3), 0.0, jnp.float32),
        edge_move=full((b, n, K), -1, jnp.int16),
        edge_prior=full((b, n, K), 0.0, jnp.float32),
        edge_child=full((b, n, K), -1, jnp.int32),
        frozen=full((b, n, K), 0, jnp.int32),
        node_count=full((b,), 1, jnp.int32),
        dropped=full((b,), 0, jnp.int32),
        simulations=full((b,), 0, jnp.int32),
        rng_key=full((b, 2), 0, jnp.uint32),
        root_history=RootHistory(
            boards=full((b, PAST_POSITIONS, 64), 0, jnp.int8),
            repeated=full((b, PAST_POSITIONS), False, jnp.bool_),
            keys=full((b, REPETITION_WINDOW, 2), 0, jnp.uint32),
            num_keys=full((b,), 0, jnp.int32),
            repetitions=full((b,), 0, jnp.int8),
        ),
    )


def write_nodes(tree: Tree, index: chex.Array, **fields: Any) -> Tree:
    """Set node ``index[b]`` of every tree b; an index >= N writes nothing (a full tree).

    Args:
      tree: the batch.
      index: int32 [B] node to write in each tree.
      fields: per-node ``Tree`` fields by name, each a pytree of the field's shape
        without the node axis ([B] or [B, ...], e.g. ``position=PositionArrays [B]``)
        or a scalar for all trees.

    Returns:
      The tree with those entries replaced.
    """
    b = jnp.arange(tree.batch_size)

    def put(arr, value):
        return arr.at[b, index].set(value, mode="drop")

    return tree.replace(**{name: jax.tree.map(put, getattr(tree, name), value)
                           for name, value in fields.items()})


def bytes_per_node() -> int:
    """Bytes of device memory per tree node (node arrays + its K edge slots)."""
    def size(num_nodes: int) -> int:
        shapes = jax.eval_shape(functools.partial(empty_tree, 1, num_nodes))
        return sum(x.size * x.dtype.itemsize for x in jax.tree.leaves(shapes))

    return size(2) - size(1)


def is_terminal(status: chex.Array, num_legal: chex.Array, is_root: chex.Array) -> chex.Array:
    """A node ends the game in-search. At the root only mate/stalemate count (as in lc0)."""
    return jnp.where(is_root, num_legal == 0, status != GameStatus.ONGOING)


def terminal_value(status: chex.Array) -> tuple[chex.Array, chex.Array]:
    """(W-L, D) of a terminal node from the perspective of the player who moved into it."""
    mate = status == GameStatus.CHECKMATE
    return jnp.where(mate, 1.0, 0.0), jnp.where(mate, 0.0, 1.0)
