"""The whole search as one compiled program: gather, expand on the device, evaluate, back up,
in a ``jax.lax.while_loop`` with no host callback.

With device rules (``zerochess.chess.device``) a search step needs nothing from the host,
so ``run_steps`` runs many steps in one call; the host only checks the clock (or a stop
request) between calls. The steps are the host pipeline's with one group of leaves per
tree (``Searcher(groups=1)``): ``loop.select`` (the gather, with the stoppers), the rules'
``expand``, ``step.prepare``, the network on the smallest of the same evaluation-batch
sizes the host loop uses (``loop.network_buckets``, chosen on the device with
``lax.switch``: rows that need no network cost nothing), ``step.finish``. So for the same
seed the trees are the host's, visit for visit.

``search`` is the same loop as a pure function of arrays for RL code (mctx's shape): roots
from environment states, parameters and per-tree settings as data, composable with
``jax.jit``, ``jax.lax.scan`` and sharding.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import chex
import jax
import jax.numpy as jnp
import numpy as np

from zerochess.chess.types import NUM_MOVES, Expansion, GameStatus
from zerochess.search import loop, step
from zerochess.search.cache import EvalCache
from zerochess.search.gather import ExpandRequest, Leaves
from zerochess.search.loop import SearchState

# (parent PositionArrays [n], move [n], mate_check [n], mask [n]) -> Expansion [n]
DeviceExpand = Callable[..., Expansion]


class StepCounts(NamedTuple):
    """What a ``run_steps`` call did (the host pipeline's ``PipelineStats`` counters)."""

    steps: chex.Array  # int32 groups evaluated
    rows_used: chex.Array  # int32 new, ongoing leaves (the network's candidates)
    rows_available: chex.Array  # int32 rows of the evaluation batches the network ran on
    left: chex.Array  # int32 simulations the batch has left to start at the end


def _expand(expand_fn: DeviceExpand, request: ExpandRequest) -> Expansion:
    return expand_fn(request.parent, request.move, request.mate_check, request.mask)


def _evaluate(state: SearchState, cache: EvalCache | None, leaves: Leaves,
              expansion: Expansion, bound: chex.Array, model_params: Any, apply_fn: Callable,
              history_length: int, buckets: tuple[int, ...]
              ) -> tuple[step.Prepared, step.LeafOutputs]:
    """``step.prepare`` then the network on the smallest bucket that holds ``bound`` rows
    (none for 0), as the host loop picks it."""
    def prepare(state, cache, leaves, expansion):
        return step.prepare(state.tree, state.params, cache, leaves, expansion, history_length)

    # apart: the network inputs read the trees' positions, which ``finish`` then writes
    # (read in the loop body itself, XLA would copy the trees every step)
    prepared, net = step.apart(bound >= 0, prepare, state, cache, leaves, expansion)
    size = net.temperature.shape[0]
    branches = [lambda n: step.no_outputs(size)] + [
        (lambda n, rows=rows: step.network(apply_fn, model_params, n, rows)) for rows in buckets]
    branch = jnp.where(bound > 0, 1 + jnp.searchsorted(jnp.asarray(buckets), bound), 0)
    return prepared, jax.lax.switch(branch, branches, net)


def run_steps(state: SearchState, cache: EvalCache | None, limit: chex.Array,
              max_steps: chex.Array, model_params: Any, apply_fn: Callable, num_leaves: int,
              history_length: int, buckets: tuple[int, ...], expand_fn: DeviceExpand
              ) -> tuple[SearchState, EvalCache | None, StepCounts]:
    """Up to ``max_steps`` search steps of every tree towards ``limit`` simulations.

    Args:
      state: the batch [B] with no leaves in flight (as every call leaves it).
      cache: the evaluation cache, or None.
      limit: int32 [B] simulation count each tree should reach.
      max_steps: int32 scalar (data): steps of this call; the last finishes its group and
        gathers no new one, so the next call (or the results) find no visits in flight.
      model_params: the network's parameters (data).
      apply_fn, num_leaves, history_length, buckets, expand_fn: static (see the module
        docstring; ``buckets`` are the network sizes, ascending, the last B * L).

    Returns:
      The state, the cache and the ``StepCounts``.
    """
    zero = jnp.int32(0)

    def body(c):
        # one step as the host runs it: gather, expand, evaluate, back up; the host stops
        # after the step whose gather left no simulation to start
        state, cache, counts, _ = c
        state, leaves, request, left = loop.select(state, limit, num_leaves)
        expansion = _expand(expand_fn, request)
        bound = jnp.sum(request.mask & (expansion.status == GameStatus.ONGOING),
                        dtype=jnp.int32)
        prepared, outputs = _evaluate(state, cache, leaves, expansion, bound, model_params,
                                      apply_fn, history_length, buckets)
        tree, cache = step.finish(state.tree, state.params, cache, leaves, prepared, outputs)
        size = jnp.asarray(buckets)[jnp.minimum(jnp.searchsorted(jnp.asarray(buckets), bound),
                                                len(buckets) - 1)]
        counts = StepCounts(steps=counts.steps + 1, rows_used=counts.rows_used + bound,
                            rows_available=counts.rows_available + jnp.where(bound > 0, size, 0),
                            left=jnp.sum(left))
        going = jnp.any(left > 0) & (counts.steps < max_steps)
        return state.replace(tree=tree), cache, counts, going

    carry = (state, cache, StepCounts(zero, zero, zero, zero), max_steps > 0)
    state, cache, counts, _ = jax.lax.while_loop(lambda c: c[-1], body, carry)
    return state, cache, counts


# --- a pure search function for RL code ----------------------------------------------------------


class SearchOutput(NamedTuple):
    """The result of ``search`` for a batch [B] of roots."""

    action: chex.Array  # int32 [B] the best move (lc0 1858 index; lc0's choice rule)
    action_weights: chex.Array  # float32 [B, 1858] root child visits, normalised (policy target)
    visits: chex.Array  # int32 [B, 218] root child visits by legal-move slot
    legal: chex.Array  # int16 [B, 218] the root's legal moves (1858 indices, -1 padded)
    value: chex.Array  # float32 [B] root Q for the side to move (W - L + draw_score * D)
    wdl: chex.Array  # float32 [B, 3] root W/D/L for the side to move
    state: SearchState  # the trees (``zerochess.search.results`` reads them)


def roots_from_env(states: Any, rng_key: chex.Array) -> loop.RootInputs:
    """``RootInputs`` [B] from ``zerochess.env.State`` [B] (device, jittable): the position,
    its legal moves, the game before it (history planes and repetition keys), one key per
    tree from ``rng_key``. The mate check at the roots (a mate in one, else a check that
    forces a mate in two, found on the device) is looked for when the trees ask for it."""
    batch = states.position.turn.shape[0]
    keys = jax.random.key_data(jax.random.split(jax.random.wrap_key_data(rng_key), batch))
    return roots_with_keys(states, keys)


def roots_with_keys(states: Any, keys: chex.Array) -> loop.RootInputs:
    """``roots_from_env`` with each tree's raw key given (uint32 [B, 2])."""
    from zerochess.chess import device  # the rules backend of this entry point
    from zerochess.chess.types import REPETITION_WINDOW, RootHistory

    pos = states.position
    legal, num = jax.vmap(device.legal_moves)(pos)
    status = jnp.where(num == 0, jax.vmap(device.status)(pos), GameStatus.ONGOING)
    count = jax.vmap(device.repetitions)(states.keys[:, 0], states.keys[:, 1:],
                                         jnp.maximum(states.num_keys - 1, 0), pos.rule50)
    history = RootHistory(boards=states.boards[:, 1:], repeated=states.repeated[:, 1:],
                          keys=states.keys[:, 1:REPETITION_WINDOW + 1],
                          num_keys=jnp.maximum(states.num_keys - 1, 0).astype(jnp.int32),
                          repetitions=jnp.minimum(count, 2).astype(jnp.int8))
    return loop.RootInputs(position=pos, legal=legal.astype(jnp.int16),
                           num_legal=num.astype(jnp.int16), status=status.astype(jnp.int8),
                           history=history, rng_key=keys.astype(jnp.uint32),
                           mate_slot=jnp.full(num.shape, -1, jnp.int16))


def search(model_params: Any, roots: loop.RootInputs, params: Any, num_simulations: int,
           apply_fn: Callable, num_nodes: int | None = None, num_leaves: int = 1,
           edges_per_node: int | None = None, history_length: int = 7,
           limits: chex.Array | None = None) -> SearchOutput:
    """A batch of searches from ``roots`` as one pure function (jit it; scan or shard it).

    Args:
      model_params: the network's parameters (data: new weights do not recompile).
      roots: ``RootInputs`` [B] (``roots_from_env``).
      params: ``SearchParams`` [B] (``zerochess.search.stack_configs``): per-tree data.
      num_simulations: simulations per tree (static).
      apply_fn: the network (``Model.apply``; static).
      num_nodes: tree size N (static; default ``num_simulations + 1``).
      num_leaves: L, leaves per tree and step (static).
      edges_per_node: the edge pool per node (static; default K: a tree never fills).
      history_length: the evaluation cache's key history (no cache here; static).
      limits: int32 [B] simulations of each tree (data, at most ``num_simulations``;
        default ``num_simulations`` for every tree).

    Returns:
      ``SearchOutput``.
    """
    from zerochess.chess import device
    from zerochess.search.tree import K

    batch = roots.num_legal.shape[0]
    num_nodes = num_nodes or num_simulations + 1
    state = loop.empty_state(params, num_nodes, edges_per_node or K)
    rows = batch * num_leaves
    check = params.mate_check & (roots.mate_slot < 0)
    mate = device.root_mate_slots(roots.position, roots.legal, roots.num_legal,
                                  check & (roots.status == GameStatus.ONGOING))
    roots = roots.replace(mate_slot=jnp.where(roots.mate_slot >= 0, roots.mate_slot, mate))
    net = loop.root_net_inputs(roots, params, jnp.int32(batch), rows)
    outputs = step.network(apply_fn, model_params, net, rows)
    state = loop.write_roots(state, jnp.arange(batch, dtype=jnp.int32), roots, params, outputs)
    limit = jnp.full((batch,), num_simulations, jnp.int32)
    if limits is not None:
        limit = jnp.minimum(jnp.asarray(limits, jnp.int32), limit)
    state, _, _ = run_steps(state, None, limit, jnp.int32(np.iinfo(np.int32).max),
                            model_params, apply_fn, num_leaves, history_length,
                            loop.network_buckets(rows), device.expand)
    return _output(state, roots)


def _output(state: SearchState, roots: loop.RootInputs) -> SearchOutput:
    from zerochess.search.tree import node_edges
    from zerochess.search.view import best_child_slot, root_scores, root_values

    tree = state.tree

    def per_tree(tree, draw_score):
        edges = node_edges(tree, jnp.int32(0))
        visits = jnp.where(edges.child >= 0, tree.visits[jnp.maximum(edges.child, 0)], 0)
        return visits, best_child_slot(tree, jnp.int32(0), draw_score)

    visits, best_slot = jax.vmap(per_tree)(tree, state.params.draw_score)  # [B, K], [B]
    legal = roots.legal
    batch = legal.shape[0]
    total = jnp.maximum(jnp.sum(visits, axis=1, keepdims=True), 1).astype(jnp.float32)
    weights = jnp.zeros((batch, NUM_MOVES), jnp.float32).at[
        jnp.arange(batch)[:, None], jnp.where(legal >= 0, legal, NUM_MOVES)].set(
        visits / total, mode="drop")
    best = jnp.take_along_axis(legal, jnp.maximum(best_slot, 0)[:, None], axis=1)[:, 0]
    value, wdl = root_scores(*jax.vmap(root_values)(tree), state.params.draw_score)
    return SearchOutput(action=jnp.where(best_slot >= 0, best, -1).astype(jnp.int32),
                        action_weights=weights, visits=visits, legal=legal,
                        value=value, wdl=jnp.stack(wdl, axis=1), state=state)


__all__ = ["DeviceExpand", "SearchOutput", "StepCounts", "roots_from_env", "roots_with_keys",
           "run_steps", "search"]
