"""The search step's device programs (roots, gather with the stoppers, evaluate, back up);
``drivers`` runs them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import chex
import jax
import jax.numpy as jnp

from zerochess.chess.keys import position_hash
from zerochess.chess.types import Expansion, PositionArrays, RootHistory
from zerochess.search import step
from zerochess.search.cache import EvalCache
from zerochess.search.gather import ExpandRequest, Leaves, expand_request, gather
from zerochess.search.history import root_input_history
from zerochess.search.params import SearchParams
from zerochess.search.reroot import root_noise
from zerochess.search.step import (
    LeafInputs,
    LeafOutputs,
    NetInputs,
    Prepared,
)
from zerochess.search.tree import PRIOR_DTYPE, K, Tree, empty_stats, empty_tree, node_edges


@chex.dataclass(frozen=True)
class SearchState:
    """A resumable batch of searches: the trees plus what the results need."""

    tree: Tree
    params: SearchParams
    root_policy: chex.Array  # float32 [B, K] raw network policy at the root, softmax T=1
    stopped: chex.Array  # bool [B] the tree takes no more simulations (a stopper decided)
    # the KLD-gain stopper's last check (lc0 KldGainStopper's prev_visits_ and
    # prev_child_nodes_; 0 nodes: no check recorded yet)
    kld_visits: chex.Array  # int32 [B, K] root child visits at the last check
    kld_nodes: chex.Array  # int32 [B] root child nodes (root visits - 1) at the last check


@chex.dataclass(frozen=True)
class RootInputs:
    """Host-prepared root data, [B, ...]."""

    position: PositionArrays  # fields [B] / board [B, 64]
    legal: chex.Array  # int16 [B, K]
    num_legal: chex.Array  # int16 [B]
    status: chex.Array  # int8 [B] GameStatus: only checkmate/stalemate end a game at a root
    history: RootHistory  # [B, ...] the game before each root
    rng_key: chex.Array  # uint32 [B, 2]
    mate_slot: chex.Array  # int16 [B] the mate check's move: mates in one, else the check
    #                        that starts a mate in two; -1 if none (or no check asked)


def empty_state(params: SearchParams, num_nodes: int, edges_per_node: int) -> SearchState:
    """A batch of empty trees (``params`` [B] gives B); ``write_roots`` fills the roots."""
    batch = params.cpuct.shape[0]
    return SearchState(tree=empty_tree(batch, num_nodes, edges_per_node), params=params,
                       root_policy=jnp.zeros((batch, K), jnp.float32),
                       stopped=jnp.zeros((batch,), jnp.bool_),
                       kld_visits=jnp.zeros((batch, K), jnp.int32),
                       kld_nodes=jnp.zeros((batch,), jnp.int32))


def _dirichlet_noise(priors: chex.Array, roots: RootInputs, params: SearchParams) -> chex.Array:
    """lc0 / AlphaZero root noise of each root (``reroot.root_noise``, vmapped)."""
    return jax.vmap(root_noise)(priors, roots.num_legal, roots.rng_key, params.dirichlet_alpha,
                                params.dirichlet_epsilon)


def root_net_inputs(roots: RootInputs, params: SearchParams, count: chex.Array,
                    rows: int) -> NetInputs:
    """The roots [B] as an evaluation batch of ``rows`` (static, >= B) rows, the first
    ``count`` of them in use."""
    pos = roots.position
    boards, repeated = root_input_history(pos.board, roots.history)
    inputs = LeafInputs(boards=boards, repeated=repeated, turn=pos.turn, castling=pos.castling,
                        rule50=pos.rule50, legal=roots.legal, num_legal=roots.num_legal)
    pad = rows - pos.board.shape[0]
    padded = jax.tree.map(lambda a: jnp.concatenate([a, jnp.zeros((pad, *a.shape[1:]), a.dtype)]),
                          (inputs, params.policy_temperature))
    return NetInputs(inputs=padded[0], temperature=jnp.where(
        jnp.arange(rows) < count, padded[1], 1.0), count=count)


def write_roots(state: SearchState, slots: chex.Array, roots: RootInputs, params: SearchParams,
                outputs: LeafOutputs) -> SearchState:
    """Start new searches in tree slots ``slots`` [B] (int32; B or more: unused row).

    Row i of ``roots`` / ``params`` / ``outputs`` (the network on the roots, at least B
    rows) goes to slot ``slots[i]``. The tree holds only its evaluated root (visits = 1;
    Dirichlet noise applied); what other slots hold is not touched. Nodes past
    ``node_count`` and pool entries past ``edge_count`` of a reset tree keep stale values
    that nothing reads: a node is written when it is allocated.
    """
    batch = slots.shape[0]
    wdl = outputs.wdl[:batch]
    policy = outputs.policy[:batch]
    priors = _dirichlet_noise(outputs.priors[:batch], roots, params)
    # the mate check: a root with a mating move searches it first (one-hot search priors)
    mate = roots.mate_slot[:, None] >= 0
    priors = jnp.where(mate, (jnp.arange(K)[None, :] == roots.mate_slot[:, None]).astype(
        priors.dtype), priors)
    pos = roots.position
    tree = state.tree

    def node0(arr, value):
        return arr.at[slots, 0].set(value, mode="drop")

    def row(arr, value):
        return arr.at[slots].set(value, mode="drop")

    def pool(arr, value):
        return arr.at[slots[:, None], jnp.arange(K)[None, :]].set(value, mode="drop")

    tree = tree.replace(
        parent=node0(tree.parent, -1), depth=node0(tree.depth, 0),
        position=jax.tree.map(node0, tree.position, pos),
        key=node0(tree.key, position_hash(jnp, pos.board, pos.turn, pos.castling, pos.ep)),
        repetitions=node0(tree.repetitions, roots.history.repetitions),
        status=node0(tree.status, roots.status), lower=node0(tree.lower, -1),
        upper=node0(tree.upper, 1), plies=node0(tree.plies, 0),
        num_legal=node0(tree.num_legal, roots.num_legal),
        edge_start=node0(tree.edge_start, 0), visits=node0(tree.visits, 1),
        in_flight=node0(tree.in_flight, 0),
        # the root's own evaluation is its first visit (mover-into-root perspective: -(W - L))
        wl_sum=node0(tree.wl_sum, wdl[:, 2] - wdl[:, 0]), d_sum=node0(tree.d_sum, wdl[:, 1]),
        m_sum=node0(tree.m_sum, outputs.m[:batch]),
        raw_wdl=node0(tree.raw_wdl, wdl),
        edges=tree.edges.replace(
            move=pool(tree.edges.move, roots.legal),
            prior=pool(tree.edges.prior, priors.astype(PRIOR_DTYPE)),
            child=pool(tree.edges.child, -1), frozen=pool(tree.edges.frozen, 0)),
        root_prior=row(tree.root_prior, priors), node_count=row(tree.node_count, 1),
        edge_count=row(tree.edge_count, roots.num_legal),
        full=row(tree.full, False), has_frozen=row(tree.has_frozen, False),
        dropped=row(tree.dropped, 0),
        simulations=row(tree.simulations, 0), draws=row(tree.draws, 0),
        rng_key=row(tree.rng_key, roots.rng_key),
        root_history=jax.tree.map(row, tree.root_history, roots.history),
        stats=jax.tree.map(row, tree.stats, empty_stats(batch).replace(
            playouts=jnp.ones(batch, jnp.int32), depth_sum=jnp.ones(batch, jnp.int32),
            max_depth=jnp.ones(batch, jnp.int32), nn_evals=jnp.ones(batch, jnp.int32))))
    return state.replace(tree=tree, params=jax.tree.map(row, state.params, params),
                         root_policy=row(state.root_policy, policy),
                         stopped=row(state.stopped, False),
                         kld_visits=row(state.kld_visits, 0), kld_nodes=row(state.kld_nodes, 0))


class RootRace(NamedTuple):
    """What ``smart_pruning_stop`` reads of one tree's root moves (scalars)."""

    first: chex.Array  # int32 the most visited root move's visits
    second: chex.Array  # int32 the runner-up's (a tie gives the same count twice)
    win: chex.Array  # bool a root move is proven won
    losing: chex.Array  # int32 root moves proven lost
    num_legal: chex.Array  # int16 the root's legal moves


def root_race(tree: Tree) -> RootRace:
    """The root moves' completed visits and proofs of one tree. A gather leaves them as
    they are (it gives only new children, which have no visits, and no proof counts
    without visits), so one reading serves before and after it."""
    edges = node_edges(tree, jnp.int32(0))
    safe = jnp.maximum(edges.child, 0)
    visits = jnp.where(edges.child >= 0, tree.visits[safe], 0)
    proven = (visits > 0) & (tree.lower[safe] == tree.upper[safe])
    # the two largest counts (a tie gives the same count twice), without a sort
    best = jnp.argmax(visits)
    return RootRace(first=visits[best],
                    second=jnp.max(jnp.where(jnp.arange(visits.shape[0]) == best, -1, visits)),
                    win=jnp.any(proven & (tree.lower[safe] == 1)),
                    losing=jnp.sum(proven & (tree.lower[safe] == -1)),
                    num_legal=tree.num_legal[0])


def _no_race(tree: Tree) -> RootRace:
    """Zeros in the shape of ``vmap(root_race)(tree)`` (no tree uses smart pruning)."""
    return jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype),
                        jax.eval_shape(jax.vmap(root_race), tree))


def smart_pruning_stop(tree: Tree, params: SearchParams, limit: chex.Array,
                       race: RootRace | None = None) -> chex.Array:
    """lc0's ``SmartPruningStopper`` on one tree's node budget (bool scalar; never with
    ``smart_pruning`` 0): at most one non-losing root move, a root move proven won, or
    the most visited root move ahead of the runner-up by more than the simulations left
    divided by the factor (lc0's ``remaining playouts / SmartPruningFactor``); ``race``:
    ``root_race(tree)`` if already read."""
    race = root_race(tree) if race is None else race
    factor = params.smart_pruning
    remaining = (limit - tree.simulations).astype(jnp.float32) / jnp.maximum(factor, 1e-6)
    decided = ((race.num_legal <= race.losing + 1) | race.win
               | ((race.first - race.second).astype(jnp.float32) > remaining))
    return (factor > 0) & (race.num_legal > 0) & decided


def kld_gain(prev_visits: chex.Array, prev_nodes: chex.Array, visits: chex.Array,
             nodes: chex.Array) -> chex.Array:
    """lc0's KL divergence gained between two root visit distributions (stoppers.cc
    ``KldGainStopper``): sum over moves with prev visits of o * log(o / n), o = prev
    visits / prev child nodes, n = visits / child nodes (float32 scalar)."""
    old = prev_visits.astype(jnp.float32) / jnp.maximum(prev_nodes, 1).astype(jnp.float32)
    new = visits.astype(jnp.float32) / jnp.maximum(nodes, 1).astype(jnp.float32)
    seen = prev_visits != 0
    terms = old * (jnp.log(jnp.where(seen, old, 1.0)) - jnp.log(jnp.where(seen, new, 1.0)))
    return jnp.sum(jnp.where(seen, terms, 0.0))


def kld_gain_stop(tree: Tree, params: SearchParams, prev_visits: chex.Array,
                  prev_nodes: chex.Array) -> tuple[chex.Array, chex.Array, chex.Array]:
    """lc0's ``KldGainStopper`` on one tree (never with ``kld_min_gain`` 0): once the root
    has ``kld_interval`` more child nodes than at the last check, the KL gain since then
    per new node is compared with the minimum (stop when below), else this check is
    recorded. Returns (stop, visits, nodes) with the record to keep."""
    edges = node_edges(tree, jnp.int32(0))
    safe = jnp.maximum(edges.child, 0)
    visits = jnp.where(edges.child >= 0, tree.visits[safe], 0)
    nodes = tree.visits[0] - 1
    due = (params.kld_min_gain > 0) & (nodes >= prev_nodes + params.kld_interval)
    gain = kld_gain(prev_visits, prev_nodes, visits, nodes)
    per_node = gain / jnp.maximum(nodes - prev_nodes, 1).astype(jnp.float32)
    stop = due & (prev_nodes > 0) & (per_node < params.kld_min_gain)
    record = due & ~stop
    return (stop, jnp.where(record, visits, prev_visits),
            jnp.where(record, nodes, prev_nodes))


def select(state: SearchState, limit: chex.Array, num_leaves: int
           ) -> tuple[SearchState, Leaves, ExpandRequest, chex.Array]:
    """``_select`` in the named scope ``select``."""
    with jax.named_scope("select"):
        return _select(state, limit, num_leaves)


def _select(state: SearchState, limit: chex.Array, num_leaves: int
            ) -> tuple[SearchState, Leaves, ExpandRequest, chex.Array]:
    """Gather the next group of leaves of every tree that has simulations left.

    Args:
      state: the batch [B].
      limit: int32 [B] simulation count each tree should reach.
      num_leaves: L (static).

    Returns:
      The state, the ``Leaves`` [B, L], the host's ``ExpandRequest`` [B, L], and the
      simulations each tree has left to start after this group (int32 [B], 0 when stopped).
    """
    tree, params = state.tree, state.params
    width = jnp.where(params.minibatch_size > 0, jnp.minimum(params.minibatch_size, num_leaves),
                      num_leaves)
    # the KLD-gain stopper reads every root edge: skipped when no tree of the batch uses it
    kld_stop, kld_visits, kld_nodes = jax.lax.cond(
        jnp.any(params.kld_min_gain > 0),
        lambda: jax.vmap(kld_gain_stop)(tree, params, state.kld_visits, state.kld_nodes),
        lambda: (jnp.zeros_like(state.stopped), state.kld_visits, state.kld_nodes))
    state = state.replace(stopped=state.stopped | kld_stop, kld_visits=kld_visits,
                          kld_nodes=kld_nodes)
    # the root race is read once, before the gather, inside a conditional (read after it,
    # or fused into the check after it, it would make XLA copy the trees at every step of
    # the device search's loop), and only when some tree uses smart pruning, its only
    # reader (every root edge of every tree: skipped by default)
    race = jax.lax.cond(jnp.any(params.smart_pruning > 0), jax.vmap(root_race),
                        _no_race, tree)
    stop = state.stopped | jax.vmap(smart_pruning_stop)(tree, params, limit, race)
    left = jnp.where(stop, 0, limit - tree.simulations)
    tree, leaves = gather(tree, params, jnp.clip(left, 0, width), num_leaves)
    stop = state.stopped | jax.vmap(smart_pruning_stop)(tree, params, limit, race)
    left = jnp.where(stop, 0, jnp.maximum(limit - tree.simulations, 0))
    return (state.replace(tree=tree), leaves, expand_request(tree, leaves, params.mate_check),
            left)


def finish_select(state: SearchState, cache: EvalCache | None, leaves: Leaves,
                  prepared: Prepared, outputs: LeafOutputs, limit: chex.Array, num_leaves: int
                  ) -> tuple[SearchState, EvalCache | None, Leaves, ExpandRequest, chex.Array]:
    """``step.finish`` of one group, then ``select`` of its next group (one program)."""
    tree, cache = step.finish(state.tree, state.params, cache, leaves, prepared, outputs)
    state, leaves, request, left = select(state.replace(tree=tree), limit, num_leaves)
    return state, cache, leaves, request, left


def finish_only(state: SearchState, cache: EvalCache | None, leaves: Leaves,
                prepared: Prepared, outputs: LeafOutputs) -> tuple[SearchState, EvalCache | None]:
    tree, cache = step.finish(state.tree, state.params, cache, leaves, prepared, outputs)
    return state.replace(tree=tree), cache


def evaluate(state: SearchState, cache: EvalCache | None, leaves: Leaves, expansion: Expansion,
             model_params: Any, apply_fn: Callable, rows: int, history_length: int
             ) -> tuple[Prepared, LeafOutputs]:
    """``step.prepare`` then the network on the first ``rows`` rows (0: no network)."""
    prepared, net = step.prepare(state.tree, state.params, cache, leaves, expansion,
                                 history_length)
    return prepared, step.network(apply_fn, model_params, net, rows)


def network_buckets(rows: int, factor: int = 4) -> tuple[int, ...]:
    """Evaluation batch sizes compiled for the network: R, R / 4, R / 16, ... >= 1."""
    sizes = {rows}
    size = rows
    while size > 1:
        size = max(1, -(-size // factor))
        sizes.add(size)
    return tuple(sorted(sizes))
