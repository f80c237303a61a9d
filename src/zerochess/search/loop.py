"""The jitted search: init the roots, then simulate (``step``'s select, expand on the host,
evaluate, backup), one new leaf per tree per step, inside ``lax.fori_loop``.

The host expansion (python-chess) runs through one ``jax.pure_callback`` per step
for the whole batch: ~120 us per call amortised over B leaves, and it keeps the
whole simulation loop in one compiled program (no Python dispatch per step).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import chex
import jax
import jax.numpy as jnp

from zerochess.chess.history import RootHistory
from zerochess.chess.state import PositionArrays, position_hash
from zerochess.search.config import SearchParams
from zerochess.search.history import root_input_history
from zerochess.search.step import (
    HostExpand,
    LeafInputs,
    backup,
    evaluate,
    evaluate_leaves,
    expand,
    expand_request,
    select,
)
from zerochess.search.tree import K, Tree, empty_tree, write_nodes


@chex.dataclass(frozen=True)
class SearchState:
    """A resumable batch of searches: the trees plus what the results need."""

    tree: Tree
    params: SearchParams
    root_policy: chex.Array  # float32 [B, K] raw network policy at the root, softmax T=1


@chex.dataclass(frozen=True)
class RootInputs:
    """Host-prepared root data, [B, ...]."""

    position: PositionArrays  # fields [B] / board [B, 64]
    legal: chex.Array  # int16 [B, K]
    num_legal: chex.Array  # int16 [B]
    status: chex.Array  # int8 [B] GameStatus: only checkmate/stalemate end a game at a root
    history: RootHistory  # [B, ...] the game before each root
    rng_key: chex.Array  # uint32 [B, 2]


def _dirichlet_noise(priors: chex.Array, roots: RootInputs, params: SearchParams) -> chex.Array:
    """lc0 / AlphaZero root noise: p = (1 - eps) p + eps Dir(alpha), over the legal moves."""
    valid = jnp.arange(K)[None, :] < roots.num_legal[:, None]
    noise_keys = jax.vmap(lambda k: jax.random.fold_in(jax.random.wrap_key_data(k), 0x0D1))(
        roots.rng_key)
    gammas = jax.vmap(lambda k, a: jax.random.gamma(k, a, (K,)))(noise_keys,
                                                                 params.dirichlet_alpha)
    gammas = jnp.where(valid, gammas, 0.0)
    noise = gammas / jnp.maximum(gammas.sum(axis=1, keepdims=True), 1e-20)
    eps = params.dirichlet_epsilon[:, None]
    return jnp.where(eps > 0, (1 - eps) * priors + eps * noise, priors)


def init_search(apply_fn: Callable, model_params: Any, params: SearchParams, roots: RootInputs,
                num_nodes: int) -> SearchState:
    """Trees holding only their evaluated roots (visits = 1), Dirichlet noise applied."""
    pos = roots.position
    batch = pos.board.shape[0]
    boards, repeated = root_input_history(pos.board, roots.history)
    net = evaluate_leaves(
        apply_fn, model_params,
        LeafInputs(boards=boards, repeated=repeated, turn=pos.turn, castling=pos.castling,
                   rule50=pos.rule50, legal=roots.legal, num_legal=roots.num_legal),
        params.policy_temperature)
    wdl = net.wdl
    tree = empty_tree(batch, num_nodes).replace(rng_key=roots.rng_key,
                                                root_history=roots.history)
    # the root's own evaluation is its first visit (mover-into-root perspective: -(W - L))
    tree = write_nodes(
        tree, jnp.zeros(batch, jnp.int32), position=pos,
        key=position_hash(jnp, pos.board, pos.turn, pos.castling, pos.ep),
        repetitions=roots.history.repetitions, status=roots.status, num_legal=roots.num_legal,
        edge_move=roots.legal, edge_prior=_dirichlet_noise(net.priors, roots, params),
        raw_wdl=wdl, visits=1, wl_sum=wdl[:, 2] - wdl[:, 0], d_sum=wdl[:, 1])
    return SearchState(tree=tree, params=params, root_policy=net.policy)


def simulate(apply_fn: Callable, host_expand: HostExpand, model_params: Any, state: SearchState,
             limit: chex.Array) -> SearchState:
    """One simulation for every tree of the batch whose simulation count is below ``limit``."""
    tree, params = state.tree, state.params
    leaves = select(tree, params, active=tree.simulations < limit)
    expansion = expand(host_expand, expand_request(tree, leaves))
    evaluation = evaluate(apply_fn, model_params, tree, params, leaves, expansion)
    return state.replace(tree=backup(tree, params, leaves, expansion, evaluation))


def run_simulations(apply_fn: Callable, host_expand: HostExpand, model_params: Any,
                    state: SearchState, limit: chex.Array, num_steps: chex.Array) -> SearchState:
    """Simulate until every tree has ``limit`` [B] simulations (``num_steps`` = the most
    any tree needs; both traced, so no recompilation)."""
    return jax.lax.fori_loop(
        0, num_steps,
        lambda _, s: simulate(apply_fn, host_expand, model_params, s, limit), state)
