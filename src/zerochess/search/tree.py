"""The search tree: fixed-size node arrays [B, N] and a per-tree edge pool [B, E]."""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import chex
import jax
import jax.numpy as jnp

from zerochess.chess.types import (
    MAX_LEGAL_MOVES,
    PAST_POSITIONS,
    REPETITION_WINDOW,
    GameStatus,
    PositionArrays,
    RootHistory,
    empty_positions,
)

K = MAX_LEGAL_MOVES
DEFAULT_EDGES_PER_NODE = 40
PRIOR_DTYPE = jnp.float16  # edge priors: ~3 decimal digits, as lc0 prints them


def edge_capacity(num_nodes: int, edges_per_node: int = DEFAULT_EDGES_PER_NODE) -> int:
    """Edges a tree of ``num_nodes`` nodes can hold: the root's K (any position fits)
    plus ``edges_per_node`` for every further node."""
    return K + edges_per_node * (num_nodes - 1)


@chex.dataclass(frozen=True)
class EdgePool:
    """The edges of a batch of trees, [B, E + K] (the last K entries are padding)."""

    move: chex.Array  # int16 lc0 1858 index
    prior: chex.Array  # float16 policy (root: after Dirichlet noise)
    child: chex.Array  # int32 child node index, -1 if not created
    frozen: chex.Array  # int32 search-contempt frozen child visits (0 unless frozen)


@chex.dataclass(frozen=True)
class TreeStats:
    """Per-tree counters of the current search, [B] (lc0 names where lc0 has them)."""

    playouts: chex.Array  # int32 visits backed up (new nodes, terminal visits, the root's own)
    depth_sum: chex.Array  # int32 sum of playout depths (lc0: root = 1, its children = 2)
    max_depth: chex.Array  # int32 lc0's seldepth
    nn_evals: chex.Array  # int32 positions evaluated by the network
    cache_hits: chex.Array  # int32 positions answered by the evaluation cache
    collisions: chex.Array  # int32 gathered visits that reached a leaf already in flight
    reused_visits: chex.Array  # int32 root visits kept from the last search (tree reuse)


@chex.dataclass(frozen=True)
class Tree:
    """A batch of search trees. Shapes: B trees, N nodes, E (+ K padding) pool edges."""

    # topology and per-node position state, [B, N]
    parent: chex.Array  # int32, -1 for the root
    depth: chex.Array  # int16, root = 0
    position: PositionArrays  # board int8 [B, N, 64]; turn ... fullmove [B, N]
    key: chex.Array  # uint32 [B, N, 2] position_hash (repetition identity)
    repetitions: chex.Array  # int8, earlier occurrences in game + path (capped at 2)
    status: chex.Array  # int8 GameStatus
    lower: chex.Array  # int8 value lower bound (-1, 0, +1), mover-into-node perspective
    upper: chex.Array  # int8 value upper bound
    plies: chex.Array  # int16 plies to the game's end of a proven node (lc0 M)
    num_legal: chex.Array  # int16 legal moves (edges owned only by ongoing nodes)
    edge_start: chex.Array  # int32 first pool entry of the node's edges
    # statistics, [B, N]
    visits: chex.Array  # int32 completed visits, including the node's own evaluation
    in_flight: chex.Array  # int32 visits gathered and not yet backed up
    wl_sum: chex.Array  # float32, W - L sums, mover-into-node perspective
    d_sum: chex.Array  # float32
    m_sum: chex.Array  # float32 sums of moves left (plies; lc0's node M = m_sum / visits)
    raw_wdl: chex.Array  # float32 [B, N, 3] network WDL for the side to move at the node
    edges: EdgePool  # [B, E + K]
    # per tree, [B, ...]
    root_prior: chex.Array  # float32 [B, K] the root's priors (the pool holds float16 copies)
    node_count: chex.Array  # int32 [B] nodes allocated
    edge_count: chex.Array  # int32 [B] pool entries used
    full: chex.Array  # bool [B] the edge pool could not take a node's edges: no new nodes
    has_frozen: chex.Array  # bool [B] some edge holds a frozen count (search-contempt), so
    #                         selection must look for frozen nodes (a per-step scan of
    #                         the pool would cost as much as the rest of a large tree's step)
    dropped: chex.Array  # int32 [B] simulations skipped because the tree was full
    simulations: chex.Array  # int32 [B] simulations started (collisions excluded)
    draws: chex.Array  # int32 [B] descents started, collisions included (random stream index)
    rng_key: chex.Array  # uint32 [B, 2]
    root_history: RootHistory  # the game before each root, [B, ...]
    stats: TreeStats  # [B]

    @property
    def batch_size(self) -> int:
        return self.visits.shape[0]

    @property
    def num_nodes(self) -> int:
        return self.visits.shape[-1]

    @property
    def edge_capacity(self) -> int:
        """Usable pool entries E (the array has K more, as padding)."""
        return self.edges.child.shape[-1] - K

    # Dense [B, N, K] views of the edges (for inspection and tests; O(B N K) memory):
    # slot s of node n is the node's s-th legal move; -1 / 0 where it has none.
    def _dense(self, field: str, fill: Any) -> chex.Array:
        slots = self.edge_start[..., None] + jnp.arange(K)  # [B, N, K]
        valid = ((jnp.arange(K) < self.num_legal[..., None])
                 & (self.status == GameStatus.ONGOING)[..., None])
        values = jnp.take_along_axis(getattr(self.edges, field),
                                     slots.reshape(slots.shape[0], -1), axis=1)
        return jnp.where(valid, values.reshape(slots.shape), fill)

    @property
    def edge_child(self) -> chex.Array:
        return self._dense("child", -1)

    @property
    def edge_move(self) -> chex.Array:
        return self._dense("move", -1)

    @property
    def frozen(self) -> chex.Array:
        return self._dense("frozen", 0)


def empty_stats(batch_size: int) -> TreeStats:
    zeros = jnp.zeros((batch_size,), jnp.int32)
    return TreeStats(playouts=zeros, depth_sum=zeros, max_depth=zeros, nn_evals=zeros,
                     cache_hits=zeros, collisions=zeros, reused_visits=zeros)


def empty_tree(batch_size: int, num_nodes: int,
               edges_per_node: int = DEFAULT_EDGES_PER_NODE) -> Tree:
    """An all-empty tree batch (the roots are written by the search init)."""
    b, n = batch_size, num_nodes
    e = edge_capacity(num_nodes, edges_per_node) + K

    def full(shape, value, dtype):
        return jnp.full(shape, value, dtype)

    return Tree(
        parent=full((b, n), -1, jnp.int32),
        depth=full((b, n), 0, jnp.int16),
        position=empty_positions(jnp, (b, n)),
        key=full((b, n, 2), 0, jnp.uint32),
        repetitions=full((b, n), 0, jnp.int8),
        status=full((b, n), GameStatus.ONGOING, jnp.int8),
        lower=full((b, n), -1, jnp.int8),
        upper=full((b, n), 1, jnp.int8),
        plies=full((b, n), 0, jnp.int16),
        num_legal=full((b, n), 0, jnp.int16),
        edge_start=full((b, n), 0, jnp.int32),
        visits=full((b, n), 0, jnp.int32),
        in_flight=full((b, n), 0, jnp.int32),
        wl_sum=full((b, n), 0.0, jnp.float32),
        d_sum=full((b, n), 0.0, jnp.float32),
        m_sum=full((b, n), 0.0, jnp.float32),
        raw_wdl=full((b, n, 3), 0.0, jnp.float32),
        edges=EdgePool(move=full((b, e), -1, jnp.int16), prior=full((b, e), 0.0, PRIOR_DTYPE),
                       child=full((b, e), -1, jnp.int32), frozen=full((b, e), 0, jnp.int32)),
        root_prior=full((b, K), 0.0, jnp.float32),
        node_count=full((b,), 1, jnp.int32),
        edge_count=full((b,), 0, jnp.int32),
        full=full((b,), False, jnp.bool_),
        has_frozen=full((b,), False, jnp.bool_),
        dropped=full((b,), 0, jnp.int32),
        simulations=full((b,), 0, jnp.int32),
        draws=full((b,), 0, jnp.int32),
        rng_key=full((b, 2), 0, jnp.uint32),
        root_history=RootHistory(
            boards=full((b, PAST_POSITIONS, 64), 0, jnp.int8),
            repeated=full((b, PAST_POSITIONS), False, jnp.bool_),
            keys=full((b, REPETITION_WINDOW, 2), 0, jnp.uint32),
            num_keys=full((b,), 0, jnp.int32),
            repetitions=full((b,), 0, jnp.int8),
        ),
        stats=empty_stats(b),
    )


def write_nodes(tree: Tree, index: chex.Array, **fields: Any) -> Tree:
    """Set node ``index[...]`` of the trees; an index >= N writes nothing.

    Args:
      tree: the batch.
      index: int32 [B] (one node per tree) or [B, L] (L nodes per tree).
      fields: per-node ``Tree`` fields by name, each a pytree of the field's shape with
        the node axis replaced by ``index``'s trailing shape (e.g. ``position=
        PositionArrays [B]`` or ``[B, L]``), or a scalar for all.

    Returns:
      The tree with those entries replaced.
    """
    b = jnp.arange(tree.batch_size).reshape((-1,) + (1,) * (index.ndim - 1))

    def put(arr, value):
        return arr.at[b, index].set(value, mode="drop")

    return tree.replace(**{name: jax.tree.map(put, getattr(tree, name), value)
                           for name, value in fields.items()})


class NodeEdges(NamedTuple):
    """One node's edges in one tree, all [K] (entries past ``num_legal`` masked)."""

    valid: chex.Array  # bool: slot < num_legal
    move: chex.Array  # int16
    prior: chex.Array  # float32
    child: chex.Array  # int32, -1 for no child (and for invalid slots)
    frozen: chex.Array  # int32, 0 for invalid slots
    start: chex.Array  # int32 scalar, the pool index of slot 0


def node_edges(tree: Tree, node: chex.Array) -> NodeEdges:
    """The edges of ``node`` of one (unbatched) tree."""
    start = tree.edge_start[node]
    # a game end keeps its legal-move count but owns no edges
    valid = (jnp.arange(K) < tree.num_legal[node]) & (tree.status[node] == GameStatus.ONGOING)

    def take(arr):
        return jax.lax.dynamic_slice_in_dim(arr, start, K)

    prior = jnp.where(node == 0, tree.root_prior, take(tree.edges.prior).astype(jnp.float32))
    return NodeEdges(valid=valid, move=take(tree.edges.move),
                     prior=jnp.where(valid, prior, 0.0),
                     child=jnp.where(valid, take(tree.edges.child), -1),
                     frozen=jnp.where(valid, take(tree.edges.frozen), 0), start=start)


def bytes_per_node(edges_per_node: int = DEFAULT_EDGES_PER_NODE) -> int:
    """Bytes of device memory per tree node: its node arrays and ``edges_per_node`` pool
    edges (the pool grows by that much per node)."""
    def size(num_nodes: int) -> int:
        shapes = jax.eval_shape(functools.partial(empty_tree, 1, num_nodes, edges_per_node))
        return sum(x.size * x.dtype.itemsize for x in jax.tree.leaves(shapes))

    return size(3) - size(2)


def is_terminal(lower: chex.Array, upper: chex.Array, num_legal: chex.Array,
                is_root: chex.Array) -> chex.Array:
    """A descent stops at the node: a game end or a proven node below the root; at the
    root only mate/stalemate (as in lc0)."""
    return jnp.where(is_root, num_legal == 0, lower == upper)


def status_bounds(status: chex.Array) -> tuple[chex.Array, chex.Array]:
    """(lower, upper) of a new node: its result for a game end, (-1, +1) otherwise."""
    ongoing = status == GameStatus.ONGOING
    mate = status == GameStatus.CHECKMATE
    value = jnp.where(mate, 1, 0)
    return (jnp.where(ongoing, -1, value).astype(jnp.int8),
            jnp.where(ongoing, 1, value).astype(jnp.int8))


def proven_value(lower: chex.Array) -> tuple[chex.Array, chex.Array]:
    """(W-L, D) of a proven node (``lower == upper``), mover-into-node perspective."""
    wl = lower.astype(jnp.float32)
    return wl, 1.0 - jnp.abs(wl)


def proven_lost(tree: Tree, children: chex.Array) -> chex.Array:
    """Children (node indices, -1: none; any shape) proven lost for the player who moves
    into them: visited, upper bound -1. lc0's ``MakeTerminal`` clears such an edge's P, so
    the search gives them prior 0 (an unvisited node's bounds are not yet set)."""
    safe = jnp.maximum(children, 0)
    return (children >= 0) & (tree.visits[safe] > 0) & (tree.upper[safe] == -1)
