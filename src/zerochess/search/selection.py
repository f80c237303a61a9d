"""Child selection for one tree (vmapped over the batch by the search step)."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import chex
import jax
import jax.numpy as jnp
import numpy as np

from zerochess.search.config import SELECTION_NAMES
from zerochess.search.contempt import hybrid_ratio, sample_cumulative, tempered_weights
from zerochess.search.filter_keys import excluded_edges
from zerochess.search.params import SearchParams
from zerochess.search.tree import NodeEdges, Tree, node_edges, proven_lost

_NEG_INF = -jnp.inf


def simulation_bits(key: chex.Array, simulation: chex.Array) -> chex.Array:
    """32 random bits of one tree's simulation (one threefry draw per simulation)."""
    k = jax.random.fold_in(jax.random.wrap_key_data(key), simulation)
    return jax.random.bits(k, (), jnp.uint32)


def uniform_at_depth(bits: chex.Array, depth: chex.Array) -> chex.Array:
    """A uniform in [0, 1) for ``depth`` from a simulation's bits (murmur3's finaliser)."""
    x = bits ^ (depth.astype(jnp.uint32) * jnp.uint32(0x9E3779B9))
    x = (x ^ (x >> 16)) * jnp.uint32(0x85EBCA6B)
    x = (x ^ (x >> 13)) * jnp.uint32(0xC2B2AE35)
    x = x ^ (x >> 16)
    return (x >> 8).astype(jnp.float32) * jnp.float32(2.0**-24)


def contempt_uniform(key: chex.Array, simulation: chex.Array, depth: chex.Array) -> chex.Array:
    """The uniform draw used to sample a frozen node at ``depth`` in ``simulation``.

    A pure function of the tree's key, so a reference implementation can replay it.
    """
    return uniform_at_depth(simulation_bits(key, simulation), jnp.asarray(depth))


def sample_frozen(frozen: chex.Array, u: chex.Array) -> chex.Array:
    """Slot sampled with probability frozen[a] / sum(frozen): first a with cum[a] > u * total."""
    cum = jnp.cumsum(frozen)  # [K]
    target = u * cum[-1].astype(jnp.float32)
    return jnp.argmax(cum.astype(jnp.float32) > target).astype(jnp.int32)


class ChildStats(NamedTuple):
    """Per-slot statistics of a node's children. All arrays [K]."""

    valid: chex.Array  # bool: slot < num_legal
    visits: chex.Array  # int32 completed visits (lc0 N), 0 for children not created
    started: chex.Array  # int32 visits + visits in flight (lc0 GetNStarted), used in U
    wl: chex.Array  # float32 mean W - L from the child's mover's side, 0 if unvisited
    d: chex.Array  # float32 mean D, 0 if unvisited
    m: chex.Array  # float32 mean moves left (lc0's M), 0 if unvisited
    prior: chex.Array  # float32 the search prior; 0 for a child proven lost for its mover


def child_stats(tree: Tree, node: chex.Array, edges: NodeEdges) -> ChildStats:
    """The statistics of ``node``'s children in one tree (``edges = node_edges(tree, node)``).

    Q uses completed visits only; visits in flight count in U (lc0's virtual loss is
    N-in-flight in U's denominator, never a value). A child proven lost for the player
    who moves into it has prior 0: lc0's ``MakeTerminal`` clears that edge's P, so no U
    term keeps drawing visits to a move known to lose."""
    children = edges.child
    safe = jnp.maximum(children, 0)
    exists = children >= 0
    visits = jnp.where(exists, tree.visits[safe], 0)
    lost = proven_lost(tree, children)
    started = visits + jnp.where(exists, tree.in_flight[safe], 0)
    n = jnp.maximum(visits, 1).astype(jnp.float32)
    return ChildStats(
        valid=edges.valid,
        visits=visits,
        started=started,
        wl=jnp.where(visits > 0, tree.wl_sum[safe] / n, 0.0),
        d=jnp.where(visits > 0, tree.d_sum[safe] / n, 0.0),
        m=jnp.where(visits > 0, tree.m_sum[safe] / n, 0.0),
        prior=jnp.where(lost, 0.0, edges.prior),
    )


def moves_left_utility(params: SearchParams, parent_wl: chex.Array, parent_m: chex.Array,
                       child_m: chex.Array, q: chex.Array) -> chex.Array:
    """lc0's moves-left utility (search.cc ``MEvaluator::GetMUtility``) of visited children.

    Args:
      params: one tree's hyperparameters (``ml_*``; ``moves_left`` False: all 0).
      parent_wl: scalar mean W - L of the parent (either perspective: only |.| is used).
      parent_m: scalar mean moves left of the parent (lc0 ``parent->GetM()``).
      child_m: [K] mean moves left of each child.
      q: [K] each child's Q from the parent's side to move (draw score included).

    Returns:
      [K] the utility to add to each visited child's Q (lc0 adds 0 for unvisited ones).
    """
    thr = params.ml_threshold
    within = params.moves_left & (jnp.abs(parent_wl) > thr)
    m = jnp.clip(params.ml_slope * (child_m - parent_m), -params.ml_max_effect,
                 params.ml_max_effect)
    m = m * jnp.copysign(1.0, -q)  # lc0 FastSign(-q)
    scaled = jnp.where((thr > 0) & (thr < 1),
                       jnp.maximum(0.0, jnp.abs(q) - thr) / jnp.maximum(1.0 - thr, 1e-12), q)
    m = m * (params.ml_constant + params.ml_scaled * jnp.abs(scaled)
             + params.ml_quadratic * scaled * scaled)
    return jnp.where(within, m, 0.0)


class PuctTerms(NamedTuple):
    """The terms of lc0's PUCT score of a node's children (all [K] but ``fpu``)."""

    q: chex.Array  # float32 W - L + draw score * D from the chooser's side (0 if unvisited)
    fpu: chex.Array  # float32 scalar: the first-play urgency, the Q of unvisited children
    u: chex.Array  # float32 lc0's U: cpuct(N) sqrt(max(N - 1, 1)) P / (1 + N-started)
    utility: chex.Array  # float32 the moves-left utility of each child (0 without a head)
    visited: chex.Array  # bool: the child has completed visits


def lc0_puct_terms(tree: Tree, params: SearchParams, node: chex.Array, depth: chex.Array,
                   stats: ChildStats) -> PuctTerms:
    """The parts of lc0's PUCT score (search.cc ``GetUCT``, ``GetFpu``, ``GetMUtility``):
    lc0's VerboseMoveStats prints them as Q, U and S = Q + U + M utility."""
    is_root = node == 0
    n_parent = tree.visits[node].astype(jnp.float32)
    c_init = jnp.where(is_root, params.cpuct_root, params.cpuct)
    c_base = jnp.where(is_root, params.cpuct_base_root, params.cpuct_base)
    c_factor = jnp.where(is_root, params.cpuct_factor_root, params.cpuct_factor)
    cpuct = c_init + c_factor * jnp.log((n_parent + c_base) / c_base)
    puct_mult = cpuct * jnp.sqrt(jnp.maximum(n_parent - 1.0, 1.0))
    u = puct_mult * stats.prior / (1.0 + stats.started.astype(jnp.float32))
    # draw score from the chooser's side: +draw_score for the root player, - for the opponent
    ds = jnp.where(depth % 2 == 0, params.draw_score, -params.draw_score)
    q = stats.wl + ds * stats.d
    node_n = jnp.maximum(n_parent, 1.0)
    parent_q = -tree.wl_sum[node] / node_n + ds * tree.d_sum[node] / node_n
    visited_policy = jnp.sum(jnp.where(stats.visits > 0, stats.prior, 0.0))
    fpu_value = jnp.where(is_root, params.fpu_value_root, params.fpu_value)
    fpu_absolute = jnp.where(is_root, params.fpu_absolute_root, params.fpu_absolute)
    fpu = jnp.where(fpu_absolute, fpu_value, parent_q - fpu_value * jnp.sqrt(visited_policy))
    utility = moves_left_utility(params, tree.wl_sum[node] / node_n,
                                 tree.m_sum[node] / node_n, stats.m, q)
    return PuctTerms(q=q, fpu=fpu, u=u, utility=jnp.where(params.moves_left, utility, 0.0),
                     visited=stats.visits > 0)


def lc0_puct_scores(tree: Tree, params: SearchParams, node: chex.Array, depth: chex.Array,
                    stats: ChildStats) -> chex.Array:
    """lc0's PUCT score of every child slot [K] (search.cc ``GetUCT`` + FPU), with the
    moves-left utility on visited children when the network has a moves-left head."""
    t = lc0_puct_terms(tree, params, node, depth, stats)
    q = jnp.where(params.moves_left, t.q + t.utility, t.q)  # no head: exactly the plain PUCT
    return jnp.where(t.visited, q, t.fpu) + t.u


def alphazero_scores(tree: Tree, params: SearchParams, node: chex.Array, depth: chex.Array,
                     stats: ChildStats) -> chex.Array:
    """mctx.muzero_action_selection with qtransform_by_parent_and_siblings (no tie noise)."""
    del depth
    node_visit = tree.visits[node].astype(jnp.float32)
    pb_c = params.pb_c_init + jnp.log((node_visit + params.pb_c_base + 1.0) / params.pb_c_base)
    policy_score = jnp.sqrt(node_visit) * pb_c * stats.prior / (stats.started + 1.0)
    node_value = -tree.wl_sum[node] / jnp.maximum(node_visit, 1.0)  # node's side to move
    visited = stats.visits > 0
    qvalues = stats.wl
    safe_q = jnp.where(visited & stats.valid, qvalues, node_value)
    min_value = jnp.minimum(node_value, jnp.min(safe_q))
    max_value = jnp.maximum(node_value, jnp.max(safe_q))
    completed = jnp.where(visited, qvalues, min_value)
    normalized = (completed - min_value) / jnp.maximum(max_value - min_value, 1e-8)
    return normalized + policy_score


ScoreRule = Callable[[Tree, SearchParams, chex.Array, chex.Array, ChildStats], chex.Array]

# name (SearchConfig.selection) -> scores [K] of one node's child slots; the position of
# an entry is the rule's index in SearchParams.selection
SELECTION_RULES: dict[str, ScoreRule] = {
    "puct": lc0_puct_scores,
    "alphazero": alphazero_scores,
}
assert tuple(SELECTION_RULES) == SELECTION_NAMES, "config.SELECTION_NAMES names the rules"
_RULES = tuple(SELECTION_RULES.values())


PLAIN_SAMPLING, NO_FROZEN, ANY_SAMPLING = 0, 1, 2  # BatchShortcuts.frozen


class BatchShortcuts(NamedTuple):
    """Facts about a whole batch (unbatched scalars, ``batch_shortcuts``) that let
    ``select_child`` skip work whose result they already fix. Under ``vmap`` a
    ``lax.cond`` on an unbatched predicate stays a branch, so a tree pays only for the
    features some tree of its batch uses; the choices are the same bit for bit."""

    filters: chex.Array  # bool: some tree has a move filter
    frozen: chex.Array  # int32 NO_FROZEN (no frozen edge anywhere), PLAIN_SAMPLING (every
    #                     tree samples frozen nodes plainly: static ratio 1, ScTemperature
    #                     1) or ANY_SAMPLING


def batch_shortcuts(tree: Tree, params: SearchParams) -> BatchShortcuts:
    """The ``BatchShortcuts`` of a batch [B] of trees and their hyperparameters."""
    filters = jnp.any(params.move_avoid > 0) | jnp.any(params.move_allow_until > 0)
    plain = jnp.all((params.hybrid_mode == 0) & (params.hybrid_ratio == 1.0)
                    & (params.sc_temperature == 1.0))
    frozen = jnp.where(jnp.any(tree.has_frozen),
                       jnp.where(plain, PLAIN_SAMPLING, ANY_SAMPLING), NO_FROZEN)
    return BatchShortcuts(filters=filters, frozen=frozen.astype(jnp.int32))


def select_child(tree: Tree, params: SearchParams, node: chex.Array, depth: chex.Array,
                 u: chex.Array, edges: NodeEdges | None = None,
                 rule: int | None = None,
                 shortcuts: BatchShortcuts | None = None) -> chex.Array:
    """The edge slot to follow from ``node`` of one tree.

    Args:
      tree: one (unbatched) tree.
      params: that tree's hyperparameters (scalars).
      node: scalar node index; must be expanded (num_legal > 0).
      depth: scalar depth of ``node`` (root 0).
      u: scalar uniform draw, used only at frozen search-contempt nodes (it decides
        between sampling and the rule there, and samples: ``frozen_slot``).
      edges: ``node_edges(tree, node)`` if already read.
      rule: static index of the one rule every tree of the batch uses (skips the
        dispatch on ``params.selection``, which under ``vmap`` evaluates every rule).
      shortcuts: the batch's ``BatchShortcuts`` (unbatched under ``vmap``), or None to
        compute every feature.

    Returns:
      int32 scalar slot in [0, num_legal).
    """
    edges = node_edges(tree, node) if edges is None else edges

    # move filters: excluded edges are never selected, as if absent (search.move_filter)
    def filtered() -> chex.Array:
        return excluded_edges(jnp, params.move_avoid, params.move_allowed,
                              params.move_allow_until, tree.position.board[node],
                              tree.position.turn[node], depth, edges.move, edges.valid)

    excluded = filtered() if shortcuts is None else jax.lax.cond(
        shortcuts.filters, filtered, lambda: jnp.zeros_like(edges.valid))
    edges = edges._replace(valid=edges.valid & ~excluded)
    stats = child_stats(tree, node, edges)
    if rule is None:
        scores = jax.lax.switch(params.selection, _RULES, tree, params, node, depth, stats)
    else:
        scores = _RULES[rule](tree, params, node, depth, stats)
    # ties go to the higher network prior, then the lower slot: lc0 keeps a node's edges
    # sorted by P from expansion on (before any P is cleared) and takes the first best
    scores = jnp.where(stats.valid, scores, _NEG_INF)
    tied = stats.valid & (scores == jnp.max(scores))
    puct_slot = jnp.argmax(jnp.where(tied, edges.prior, -1.0)).astype(jnp.int32)
    is_frozen = (depth % 2 == 1) & (jnp.sum(edges.frozen) > 0)

    def any_sampling() -> chex.Array:
        sampled, slot = frozen_slot(params, edges.frozen, tree.visits[node], u)
        return jnp.where(is_frozen & sampled, slot, puct_slot)

    def plain_sampling() -> chex.Array:  # frozen_slot with ratio 1 and temperature 1
        slot = sample_cumulative(jnp.cumsum(edges.frozen).astype(jnp.float32), u)
        return jnp.where(is_frozen, slot, puct_slot)

    if shortcuts is None:
        return any_sampling()
    return jax.lax.switch(shortcuts.frozen, (plain_sampling, lambda: puct_slot, any_sampling))


_BELOW_ONE = float(np.nextafter(np.float32(1.0), np.float32(0.0)))


def frozen_slot(params: SearchParams, frozen: chex.Array, node_visits: chex.Array,
                u: chex.Array) -> tuple[chex.Array, chex.Array]:
    """Whether a visit through a frozen node samples (else the selection rule picks) and
    the slot it samples (``search.contempt``: lc0's ScTemperature and HybridSamplingRatio).

    The visit samples when ``u < ratio``, then with ``u / ratio``, a uniform on [0, 1)
    given that; with ratio 1 and temperature 1 (the defaults) this is exactly
    ``sample_frozen(frozen, u)``, the paper's algorithm (``contempt.sample_cumulative``
    says why).

    Args:
      params: one tree's hyperparameters (scalars).
      frozen: int32 [K] the node's frozen child-visit counts.
      node_visits: the node's completed visits (the hybrid schedules' N).
      u: the visit's uniform draw in [0, 1).

    Returns:
      (bool scalar: the visit samples, int32 scalar: the sampled slot).
    """
    ratio = hybrid_ratio(params, node_visits)
    sampled = u < ratio
    u = jnp.where(ratio >= 1.0, u,
                  jnp.minimum(u / jnp.maximum(ratio, 1e-30), jnp.float32(_BELOW_ONE)))
    cum = jnp.where(params.sc_temperature == 1.0, jnp.cumsum(frozen).astype(jnp.float32),
                    jnp.cumsum(tempered_weights(frozen, params.sc_temperature)))
    return sampled, sample_cumulative(cum, u)
