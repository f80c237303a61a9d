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

import chex
import jax.numpy as jnp
import numpy as np

from zerochess.chess.policy_map import MAX_LEGAL_MOVES

K = MAX_LEGAL_MOVES
HISTORY = 7  # positions before the root that the 112-plane input can see
REPETITION_WINDOW = 100  # game-history keys kept for repetition detection

STATUS_ONGOING = 0
STATUS_CHECKMATE = 1  # the side to move is mated
STATUS_STALEMATE = 2
STATUS_INSUFFICIENT = 3
STATUS_RULE50 = 4
STATUS_REPETITION = 5


@chex.dataclass(frozen=True)
class Tree:
    """A batch of search trees. Shapes: B trees, N nodes, K edge slots."""

    # topology and per-node position state, [B, N]
    parent: chex.Array  # int32, -1 for the root and unused nodes
    depth: chex.Array  # int16, root = 0
    board: chex.Array  # int8 [B, N, 64] piece codes, absolute frame
    turn: chex.Array  # int8
    castling: chex.Array  # int8
    ep: chex.Array  # int8
    rule50: chex.Array  # int16
    fullmove: chex.Array  # int16
    key: chex.Array  # uint32 [B, N, 2] repetition key
    repetitions: chex.Array  # int8, earlier occurrences in game + path (capped at 2)
    status: chex.Array  # int8 STATUS_*
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
    root_hist_boards: chex.Array  # int8 [B, 7, 64] positions before the root, newest first
    root_hist_repeated: chex.Array  # bool [B, 7]
    root_hist_keys: chex.Array  # uint32 [B, 100, 2] repetition keys before the root
    root_hist_len: chex.Array  # int32 [B] valid entries of root_hist_keys

    @property
    def batch_size(self) -> int:
        return self.visits.shape[0]

    @property
    def num_nodes(self) -> int:
        return self.visits.shape[1]


_NODE_FIELDS = ("parent", "depth", "board", "turn", "castling", "ep", "rule50", "fullmove",
                "key", "repetitions", "status", "num_legal", "visits", "wl_sum", "d_sum",
                "raw_wdl")
_EDGE_FIELDS = ("edge_move", "edge_prior", "edge_child", "frozen")


def empty_tree(batch_size: int, num_nodes: int) -> Tree:
    """An all-empty tree batch (root fields are written by the search init)."""
    b, n = batch_size, num_nodes

    def full(shape, value, dtype):
        return jnp.full(shape, value, dtype)

    return Tree(
        parent=full((b, n), -1, jnp.int32),
        depth=full((b, n), 0, jnp.int16),
        board=full((b, n, 64), 0, jnp.int8),
        turn=full((b, n), 0, jnp.int8),
        castling=full((b, n), 0, jnp.int8),
        ep=full((b, n), -1, jnp.int8),
        rule50=full((b, n), 0, jnp.int16),
        fullmove=full((b, n), 1, jnp.int16),
        key=full((b, n, 2), 0, jnp.uint32),
        repetitions=full((b, n), 0, jnp.int8),
        status=full((b, n), 0, jnp.int8),
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
        root_hist_boards=full((b, HISTORY, 64), 0, jnp.int8),
        root_hist_repeated=full((b, HISTORY), False, jnp.bool_),
        root_hist_keys=full((b, REPETITION_WINDOW, 2), 0, jnp.uint32),
        root_hist_len=full((b,), 0, jnp.int32),
    )


def bytes_per_node(tree: Tree | None = None) -> int:
    """Bytes of device memory per tree node (node arrays + its K edge slots)."""
    t = tree if tree is not None else empty_tree(1, 1)
    total = 0
    for name in _NODE_FIELDS + _EDGE_FIELDS:
        arr = getattr(t, name)
        total += int(np.prod(arr.shape[2:], dtype=np.int64)) * arr.dtype.itemsize
    return total


def is_terminal(status: chex.Array, num_legal: chex.Array, is_root: chex.Array) -> chex.Array:
    """A node ends the game in-search. At the root only mate/stalemate count (as in lc0)."""
    return jnp.where(is_root, num_legal == 0, status != STATUS_ONGOING)


def terminal_value(status: chex.Array) -> tuple[chex.Array, chex.Array]:
    """(W-L, D) of a terminal node from the perspective of the player who moved into it."""
    mate = status == STATUS_CHECKMATE
    return jnp.where(mate, 1.0, 0.0), jnp.where(mate, 0.0, 1.0)
