"""mctx's policies (``muzero_policy``, ``gumbel_muzero_policy``) as comparators, on the
same K edge slots, host expansion and evaluator as our own search.

The mctx embedding of a node is its compact position, its legal moves (edge
slots), the 7 boards before it (for the 112 planes) and the repetition keys of
the positions before it; terminal states get discount 0 and their result as
reward, so mctx's values mean what ours do.
"""

from __future__ import annotations

from collections.abc import Sequence

import chess
import jax
import jax.numpy as jnp
import mctx
import numpy as np

from zerochess.chess.policy_map import index_to_move, legal_move_indices
from zerochess.chess.state import position_hash
from zerochess.search.api import Searcher, batch_keys, tree_key
from zerochess.search.config import SearchConfig, stack_configs
from zerochess.search.loop import evaluate_leaves, expansion_shapes, make_host_expand
from zerochess.search.results import SearchResult, decode_line
from zerochess.search.tree import (
    REPETITION_WINDOW,
    STATUS_CHECKMATE,
    STATUS_ONGOING,
    STATUS_REPETITION,
    STATUS_STALEMATE,
    K,
)

POLICIES = ("muzero", "gumbel")


def _keys_window(keys: jax.Array, new_key: jax.Array) -> jax.Array:
    return jnp.concatenate([new_key[:, None], keys[:, :-1]], axis=1)


def _make_recurrent_fn(apply_fn, host_expand, temperature):
    def recurrent_fn(model_params, rng, action, emb):
        del rng
        batch = action.shape[0]
        b = jnp.arange(batch)
        live = (emb["status"] == STATUS_ONGOING) & (action < emb["num_legal"])
        move = emb["legal"][b, action]
        out = jax.pure_callback(
            host_expand, expansion_shapes(batch), emb["board"], emb["turn"], emb["castling"],
            emb["ep"], emb["rule50"], emb["fullmove"], move, live)
        c_board, c_turn, c_castling, c_ep, c_rule50, c_fullmove, legal, num_legal, status = out
        depth = emb["depth"] + 1
        key = position_hash(jnp, c_board, c_turn, c_castling, c_ep)
        plies = jnp.arange(1, REPETITION_WINDOW + 1)[None, :]
        keys = _keys_window(emb["keys"], emb["key"])  # positions before the child, newest first
        hit = (jnp.all(keys == key[:, None], -1) & (plies % 2 == 0)
               & (plies <= c_rule50[:, None].astype(jnp.int32))
               & (plies <= emb["num_keys"][:, None] + 1))
        count = hit.sum(-1)
        nearest = jnp.where(hit.any(-1), jnp.argmax(hit, -1) + 1, 0)
        rep_draw = (count >= 2) | ((count == 1) & (nearest <= depth))
        status = jnp.where((status == STATUS_ONGOING) & rep_draw, STATUS_REPETITION, status)
        hist_boards = jnp.concatenate([emb["board"][:, None], emb["hist_boards"][:, :-1]], 1)
        hist_rep = jnp.concatenate([emb["repeated"][:, None], emb["hist_rep"][:, :-1]], 1)
        repeated = count > 0
        boards = jnp.concatenate([c_board[:, None], hist_boards], 1)
        reps = jnp.concatenate([repeated[:, None], hist_rep], 1)
        priors, _, wdl = evaluate_leaves(apply_fn, model_params, boards, reps, c_turn, c_castling,
                                   c_rule50, legal, num_legal, temperature)
        terminal = (status != STATUS_ONGOING) | ~live
        mate = status == STATUS_CHECKMATE
        reward = jnp.where(live & mate, 1.0, 0.0)
        value = jnp.where(terminal, 0.0, wdl[:, 0] - wdl[:, 2])
        discount = jnp.where(terminal, 0.0, -1.0)
        valid = jnp.arange(K)[None, :] < num_legal[:, None]
        logits = jnp.where(valid, jnp.log(jnp.maximum(priors, 1e-30)), -1e9)
        new_emb = dict(
            board=c_board, turn=c_turn, castling=c_castling, ep=c_ep, rule50=c_rule50,
            fullmove=c_fullmove, legal=legal, num_legal=num_legal,
            status=jnp.where(live, status, STATUS_STALEMATE).astype(jnp.int8),
            hist_boards=hist_boards, hist_rep=hist_rep, repeated=repeated, key=key, keys=keys,
            num_keys=emb["num_keys"] + 1, depth=depth)
        return mctx.RecurrentFnOutput(reward=reward, discount=discount, prior_logits=logits,
                                      value=value), new_emb

    return recurrent_fn


class MctxSearcher:
    """Runs ``mctx.muzero_policy`` or ``mctx.gumbel_muzero_policy`` through our API.

    Uses the ``Searcher``'s host preparation (roots, legal moves, history) so both
    see identical inputs; ``search`` returns ``SearchResult``s like ``Searcher``.
    MuZero's constants come from the config (``pb_c_init``, ``pb_c_base``,
    ``dirichlet_*``, ``policy_temperature``); one config for the whole batch.
    """

    def __init__(self, searcher: Searcher, policy: str = "muzero",
                 max_num_considered_actions: int = 16):
        if policy not in POLICIES:
            raise ValueError(f"unknown mctx policy {policy!r}; choose from {POLICIES}")
        self.searcher = searcher
        self.policy = policy
        self.max_num_considered_actions = max_num_considered_actions
        self._jitted = jax.jit(self._search, static_argnames=("num_simulations",))

    def _search(self, model_params, roots, params, rng, num_simulations):
        apply_fn = self.searcher.model.apply
        host_expand = make_host_expand(self.searcher.expander)
        temperature = params.policy_temperature
        pos = roots.position
        boards = jnp.concatenate([pos.board[:, None], roots.hist_boards], 1)
        reps = jnp.concatenate([roots.root_repetitions[:, None] > 0, roots.hist_repeated], 1)
        priors, raw, wdl = evaluate_leaves(apply_fn, model_params, boards, reps, pos.turn,
                                     pos.castling, pos.rule50, roots.legal, roots.num_legal,
                                     temperature)
        valid = jnp.arange(K)[None, :] < roots.num_legal[:, None]
        key = position_hash(jnp, pos.board, pos.turn, pos.castling, pos.ep)
        emb = dict(
            board=pos.board, turn=pos.turn, castling=pos.castling, ep=pos.ep, rule50=pos.rule50,
            fullmove=pos.fullmove, legal=roots.legal, num_legal=roots.num_legal,
            status=jnp.where(roots.num_legal > 0, STATUS_ONGOING, STATUS_STALEMATE
                             ).astype(jnp.int8),
            hist_boards=roots.hist_boards, hist_rep=roots.hist_repeated,
            repeated=roots.root_repetitions > 0, key=key, keys=roots.hist_keys,
            num_keys=roots.hist_len, depth=jnp.zeros_like(roots.hist_len))
        root = mctx.RootFnOutput(
            prior_logits=jnp.where(valid, jnp.log(jnp.maximum(priors, 1e-30)), -1e9),
            value=wdl[:, 0] - wdl[:, 2], embedding=emb)
        recurrent_fn = _make_recurrent_fn(apply_fn, host_expand, temperature)
        if self.policy == "muzero":
            out = mctx.muzero_policy(
                model_params, rng, root, recurrent_fn, num_simulations, invalid_actions=~valid,
                dirichlet_fraction=params.dirichlet_epsilon[0],
                dirichlet_alpha=params.dirichlet_alpha[0], pb_c_init=params.pb_c_init[0],
                pb_c_base=params.pb_c_base[0])
        else:
            out = mctx.gumbel_muzero_policy(
                model_params, rng, root, recurrent_fn, num_simulations, invalid_actions=~valid,
                max_num_considered_actions=self.max_num_considered_actions)
        summary = out.search_tree.summary()
        tree = out.search_tree
        return dict(visits=summary.visit_counts, q=summary.qvalues, action=out.action,
                    prior=priors, raw=raw, raw_wdl=wdl, root_value=summary.value,
                    children_index=tree.children_index, children_visits=tree.children_visits,
                    legal=roots.legal, num_legal=roots.num_legal)

    def search(self, boards: Sequence[chess.Board],
               config: SearchConfig = SearchConfig(policy_temperature=1.0),
               num_simulations: int = 800, seed: int = 0) -> list[SearchResult]:
        boards = list(boards)
        if not boards:
            raise ValueError("no positions to search")
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


