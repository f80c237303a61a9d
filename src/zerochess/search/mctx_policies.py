"""mctx's policies (``muzero_policy``, ``gumbel_muzero_policy``) as comparators, on the
same K edge slots, host expansion and evaluator as our own search."""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import chess
import chex
import jax
import jax.numpy as jnp
import mctx
import numpy as np

from zerochess.chess.history import MAX_REPETITIONS, REPETITION_WINDOW, RootHistory
from zerochess.chess.policy_map import index_to_move, legal_move_indices
from zerochess.chess.rules import GameStatus
from zerochess.chess.state import PositionArrays, position_hash
from zerochess.errors import ConfigError, PositionError, quote
from zerochess.search.api import Searcher, batch_keys, tree_key
from zerochess.search.config import SearchConfig
from zerochess.search.gather import ExpandRequest
from zerochess.search.history import earlier_occurrences, root_input_history
from zerochess.search.loop import RootInputs
from zerochess.search.params import SearchParams, stack_configs
from zerochess.search.results import SearchResult, decode_line
from zerochess.search.step import (
    HostExpand,
    LeafInputs,
    LeafOutputs,
    evaluate_leaves,
    expand,
)
from zerochess.search.tree import K

POLICIES = ("muzero", "gumbel")


class _Node(NamedTuple):
    """mctx's embedding of a batch of nodes [B, ...]."""

    position: PositionArrays
    legal: chex.Array  # int16 [B, K]
    num_legal: chex.Array  # int16 [B]
    status: chex.Array  # int8 [B] GameStatus (STALEMATE for an action past num_legal)
    key: chex.Array  # uint32 [B, 2]
    history: RootHistory  # [B, ...] the game before the node, as for a search root
    depth: chex.Array  # int32 [B]


def _evaluate(apply_fn: Callable, model_params: Any, node: _Node,
              temperature: chex.Array) -> LeafOutputs:
    boards, repeated = root_input_history(node.position.board, node.history)
    pos = node.position
    return evaluate_leaves(
        apply_fn, model_params,
        LeafInputs(boards=boards, repeated=repeated, turn=pos.turn, castling=pos.castling,
                   rule50=pos.rule50, legal=node.legal, num_legal=node.num_legal),
        temperature)


def _prior_logits(priors: chex.Array, num_legal: chex.Array) -> chex.Array:
    valid = jnp.arange(K)[None, :] < num_legal[:, None]
    return jnp.where(valid, jnp.log(jnp.maximum(priors, 1e-30)), -1e9)


def _window_occurrences(key: chex.Array, keys: chex.Array, num_keys: chex.Array,
                        rule50: chex.Array) -> tuple[chex.Array, chex.Array]:
    """``earlier_occurrences`` of one position over the keys [W, 2] before it."""
    limit = jnp.minimum(rule50.astype(jnp.int32), num_keys)
    return earlier_occurrences(key, limit, None, lambda ply, cursor: (keys[ply - 1], cursor))


def _make_recurrent_fn(apply_fn: Callable, host_expand: HostExpand, temperature: chex.Array):
    def recurrent_fn(model_params, rng, action, node: _Node):
        del rng
        b = jnp.arange(action.shape[0])
        live = (node.status == GameStatus.ONGOING) & (action < node.num_legal)
        exp = expand(host_expand, ExpandRequest(parent=node.position,
                                                move=node.legal[b, action], mask=live,
                                                mate_check=jnp.zeros_like(live)))
        child = exp.child
        depth = node.depth + 1
        key = position_hash(jnp, child.board, child.turn, child.castling, child.ep)
        past = node.history
        keys = jnp.concatenate([node.key[:, None], past.keys[:, :-1]], axis=1)
        num_keys = jnp.minimum(past.num_keys + 1, REPETITION_WINDOW)
        count, nearest = jax.vmap(_window_occurrences)(key, keys, num_keys, child.rule50)
        rep_draw = (count >= 2) | ((count == 1) & (nearest <= depth))
        status = jnp.where((exp.status == GameStatus.ONGOING) & rep_draw,
                           GameStatus.REPETITION, exp.status)
        history = RootHistory(
            boards=jnp.concatenate([node.position.board[:, None], past.boards[:, :-1]], 1),
            repeated=jnp.concatenate([past.repetitions[:, None] > 0, past.repeated[:, :-1]], 1),
            keys=keys, num_keys=num_keys,
            repetitions=jnp.minimum(count, MAX_REPETITIONS).astype(jnp.int8))
        new = _Node(position=child, legal=exp.legal, num_legal=exp.num_legal,
                    status=jnp.where(live, status, GameStatus.STALEMATE).astype(jnp.int8),
                    key=key, history=history, depth=depth)
        net = _evaluate(apply_fn, model_params, new, temperature)
        terminal = (status != GameStatus.ONGOING) | ~live
        mate = status == GameStatus.CHECKMATE
        return mctx.RecurrentFnOutput(
            reward=jnp.where(live & mate, 1.0, 0.0),
            discount=jnp.where(terminal, 0.0, -1.0),
            prior_logits=_prior_logits(net.priors, exp.num_legal),
            value=jnp.where(terminal, 0.0, net.wdl[:, 0] - net.wdl[:, 2])), new

    return recurrent_fn


def _search(apply_fn: Callable, host_expand: HostExpand, policy: str,
            max_num_considered_actions: int, model_params: Any, roots: RootInputs,
            params: SearchParams, rng: jax.Array, num_simulations: int) -> dict[str, jax.Array]:
    """One mctx search of a batch of roots (jitted per Searcher and policy)."""
    temperature = params.policy_temperature
    pos = roots.position
    root = _Node(position=pos, legal=roots.legal, num_legal=roots.num_legal,
                 status=jnp.where(roots.num_legal > 0, GameStatus.ONGOING, GameStatus.STALEMATE
                                  ).astype(jnp.int8),
                 key=position_hash(jnp, pos.board, pos.turn, pos.castling, pos.ep),
                 history=roots.history, depth=jnp.zeros_like(roots.history.num_keys))
    net = _evaluate(apply_fn, model_params, root, temperature)
    invalid = jnp.arange(K)[None, :] >= roots.num_legal[:, None]
    root_out = mctx.RootFnOutput(prior_logits=_prior_logits(net.priors, roots.num_legal),
                                 value=net.wdl[:, 0] - net.wdl[:, 2], embedding=root)
    recurrent_fn = _make_recurrent_fn(apply_fn, host_expand, temperature)
    if policy == "muzero":
        out = mctx.muzero_policy(
            model_params, rng, root_out, recurrent_fn, num_simulations, invalid_actions=invalid,
            dirichlet_fraction=params.dirichlet_epsilon[0],
            dirichlet_alpha=params.dirichlet_alpha[0], pb_c_init=params.pb_c_init[0],
            pb_c_base=params.pb_c_base[0])
    else:
        out = mctx.gumbel_muzero_policy(
            model_params, rng, root_out, recurrent_fn, num_simulations, invalid_actions=invalid,
            max_num_considered_actions=max_num_considered_actions)
    summary = out.search_tree.summary()
    tree = out.search_tree
    return dict(visits=summary.visit_counts, q=summary.qvalues, action=out.action,
                prior=net.priors, raw=net.policy, raw_wdl=net.wdl, root_value=summary.value,
                children_index=tree.children_index, children_visits=tree.children_visits,
                legal=roots.legal, num_legal=roots.num_legal)


# Searcher -> {(policy, max_num_considered_actions): jitted _search}; an entry goes with
# its Searcher (the programs hold its model and expander, not the Searcher itself)
_PROGRAMS: weakref.WeakKeyDictionary[Searcher, dict[tuple[str, int], Callable]] = (
    weakref.WeakKeyDictionary())


def _program(searcher: Searcher, policy: str, max_num_considered_actions: int) -> Callable:
    programs = _PROGRAMS.setdefault(searcher, {})
    key = (policy, max_num_considered_actions)
    if key not in programs:
        programs[key] = jax.jit(
            functools.partial(_search, searcher.model.apply, searcher.host_expand, policy,
                              max_num_considered_actions),
            static_argnames=("num_simulations",))
    return programs[key]


class MctxSearcher:
    """Runs ``mctx.muzero_policy`` or ``mctx.gumbel_muzero_policy`` through our API.

    Uses the ``Searcher``'s host preparation (roots, legal moves, history) so both
    see identical inputs; ``search`` returns ``SearchResult``s like ``Searcher``.
    MuZero's constants come from the config (``pb_c_init``, ``pb_c_base``,
    ``dirichlet_*``, ``policy_temperature``); one config for the whole batch.
    Cheap to create: the compiled search is shared by all ``MctxSearcher``s of one
    ``Searcher`` with the same policy and shapes.
    """

    def __init__(self, searcher: Searcher, policy: str = "muzero",
                 max_num_considered_actions: int = 16):
        if policy not in POLICIES:
            raise ConfigError(f"unknown mctx policy {quote(policy)}; choose from {POLICIES}")
        self.searcher = searcher
        self.policy = policy
        self.max_num_considered_actions = max_num_considered_actions
        self._jitted = _program(searcher, policy, max_num_considered_actions)

    def search(self, boards: Sequence[chess.Board],
               config: SearchConfig = SearchConfig(policy_temperature=1.0),
               num_simulations: int = 800, seed: int = 0) -> list[SearchResult]:
        boards = list(boards)
        if not boards:
            raise PositionError("no positions to search")
        roots = self.searcher.prepare_roots(boards, batch_keys(seed, len(boards)))
        params = stack_configs([config] * len(boards))
        rng = jax.random.wrap_key_data(jnp.asarray(tree_key(seed, 2**31 - 1)))
        out = jax.device_get(self._jitted(self.searcher.model.params, roots, params, rng,
                                          num_simulations=num_simulations))
        return [self._result(i, board, out, config) for i, board in enumerate(boards)]

    def _result(self, i: int, board: chess.Board, out, config) -> SearchResult:
        m = int(out["num_legal"][i])
        moves = [index_to_move(board, int(x)) for x in out["legal"][i, :m]]
        visits = out["visits"][i, :m].astype(np.int64)
        q = np.where(visits > 0, out["q"][i, :m], np.nan).astype(np.float32)
        best = int(out["action"][i]) if self.policy == "gumbel" else int(np.argmax(visits))
        pvs = []
        for s, move in enumerate(moves):
            after = board.copy(stack=False)
            after.push(move)
            pvs.append(decode_line(after, self._pv_indices(out, i, s, after)))
        root_q = float(out["root_value"][i])
        wdl = out["raw_wdl"][i]
        return SearchResult(
            board=board.copy(), moves=moves, visits=visits, q=q,
            wl=np.nan_to_num(q).astype(np.float32), d=np.zeros(m, np.float32),
            prior=out["prior"][i, :m].copy(), policy=out["raw"][i, :m].copy(), pvs=pvs,
            best_index=best, root_visits=int(visits.sum()) + 1, root_q=root_q,
            root_wdl=np.array([(1 + root_q) / 2, 0.0, (1 - root_q) / 2]), raw_wdl=wdl,
            nodes_used=int(visits.sum()) + 1, dropped_simulations=0,
            mates=np.zeros(m, bool))

    @staticmethod
    def _pv_indices(out, i: int, slot: int, board: chess.Board) -> np.ndarray:
        """Most-visited continuation in mctx's tree after root ``slot`` (as 1858 indices)."""
        node = int(out["children_index"][i, 0, slot])
        line, b = [], board.copy(stack=False)
        while node >= 0 and len(line) < 16:
            visits = out["children_visits"][i, node]
            if visits.max() <= 0:
                break
            s = int(np.argmax(visits))
            moves, idx = legal_move_indices(b)
            if s >= len(moves):
                break
            line.append(int(idx[s]))
            b.push(moves[s])
            node = int(out["children_index"][i, node, s])
        return np.array(line, np.int64)


__all__ = ["POLICIES", "MctxSearcher"]
