"""The jitted search: init the roots, then simulate (select, expand on the host, evaluate,
back up), one new leaf per tree per step, inside ``lax.fori_loop``.

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
import numpy as np

from zerochess.chess.encoding import planes_from_arrays
from zerochess.chess.state import PositionArrays, position_hash
from zerochess.search.config import SearchParams
from zerochess.search.selection import select_child, simulation_bits, uniform_at_depth
from zerochess.search.tree import (
    HISTORY,
    STATUS_ONGOING,
    STATUS_REPETITION,
    K,
    Tree,
    empty_tree,
    is_terminal,
    terminal_value,
)

HostExpand = Callable[..., tuple[np.ndarray, ...]]


@chex.dataclass(frozen=True)
class SearchState:
    """A resumable batch of searches: the trees plus what the results need."""

    tree: Tree
    params: SearchParams
    root_policy: chex.Array  # float32 [B, K] raw network policy at the root, softmax T=1


@chex.dataclass(frozen=True)
class RootInputs:
    """Host-prepared root data, [B, ...]."""

    position: PositionArrays  # fields [B] / [B, 64]
    legal: chex.Array  # int16 [B, K]
    num_legal: chex.Array  # int16 [B]
    status: chex.Array  # int8 [B]
    hist_boards: chex.Array  # int8 [B, 7, 64]
    hist_repeated: chex.Array  # bool [B, 7]
    hist_keys: chex.Array  # uint32 [B, 100, 2]
    hist_len: chex.Array  # int32 [B]
    root_repetitions: chex.Array  # int8 [B]
    rng_key: chex.Array  # uint32 [B, 2]


def expansion_shapes(batch: int) -> tuple[jax.ShapeDtypeStruct, ...]:
    s = jax.ShapeDtypeStruct
    return (
        s((batch, 64), jnp.int8), s((batch,), jnp.int8), s((batch,), jnp.int8),
        s((batch,), jnp.int8), s((batch,), jnp.int16), s((batch,), jnp.int16),
        s((batch, K), jnp.int16), s((batch,), jnp.int16), s((batch,), jnp.int8),
    )


def make_host_expand(expander: Callable[[PositionArrays, np.ndarray], Any]) -> HostExpand:
    """Wrap an ``Expander`` into the callback: only rows with ``mask`` are expanded."""

    def host_expand(board, turn, castling, ep, rule50, fullmove, move, mask):
        mask = np.asarray(mask)
        n = mask.shape[0]
        out = [np.zeros((n, 64), np.int8), np.zeros(n, np.int8), np.zeros(n, np.int8),
               np.full(n, -1, np.int8), np.zeros(n, np.int16), np.ones(n, np.int16),
               np.full((n, K), -1, np.int16), np.zeros(n, np.int16), np.zeros(n, np.int8)]
        rows = np.nonzero(mask)[0]
        if rows.size:
            parent = PositionArrays(*(np.asarray(a)[rows] for a in
                                      (board, turn, castling, ep, rule50, fullmove)))
            exp = expander(parent, np.asarray(move)[rows].astype(np.int16))
            values = (*exp.child, exp.legal, exp.num_legal, exp.status)
            for dst, src in zip(out, values, strict=True):
                dst[rows] = src
        return tuple(out)

    return host_expand


# --- per-tree helpers (vmapped) ------------------------------------------------------------

def _history(tree: Tree, ancestor: chex.Array, depth: chex.Array, board0: chex.Array,
             rep0: chex.Array) -> tuple[chex.Array, chex.Array]:
    """Boards [8, 64] and repeated flags [8] of a node at ``depth`` whose parent is ``ancestor``
    (-1 for the root), newest first, continuing into the game history before the root."""
    boards, reps = [board0], [rep0]
    cur = ancestor
    for i in range(1, HISTORY + 1):
        in_tree = cur >= 0
        h = jnp.clip(i - depth - 1, 0, HISTORY - 1)
        safe = jnp.maximum(cur, 0)
        boards.append(jnp.where(in_tree, tree.board[safe], tree.root_hist_boards[h]))
        reps.append(jnp.where(in_tree, tree.repetitions[safe] > 0, tree.root_hist_repeated[h]))
        cur = jnp.where(in_tree, tree.parent[safe], -1)
    return jnp.stack(boards), jnp.stack(reps)


def _repetitions(tree: Tree, parent: chex.Array, depth: chex.Array, key: chex.Array,
                 rule50: chex.Array) -> tuple[chex.Array, chex.Array]:
    """Earlier occurrences of ``key`` (count, plies to the nearest) for a new node at ``depth``.

    Walks the path (then the game history) back ``rule50`` plies at most: an
    irreversible move lies further back.
    """
    limit = jnp.minimum(rule50.astype(jnp.int32), depth + tree.root_hist_len)

    def cond(c):
        return c[0] <= limit

    def body(c):
        j, cur, count, nearest = c
        in_tree = j <= depth
        h = jnp.clip(j - depth - 1, 0, tree.root_hist_keys.shape[0] - 1)
        k = jnp.where(in_tree, tree.key[jnp.maximum(cur, 0)], tree.root_hist_keys[h])
        hit = (j % 2 == 0) & jnp.all(k == key)
        nearest = jnp.where(hit & (count == 0), j, nearest)
        count = count + hit.astype(jnp.int32)
        nxt = jnp.where(in_tree, tree.parent[jnp.maximum(cur, 0)], -1)
        return j + 1, nxt, count, nearest

    init = (jnp.int32(1), parent, jnp.int32(0), jnp.int32(0))
    _, _, count, nearest = jax.lax.while_loop(cond, body, init)
    return count, nearest


def _select_leaf(tree: Tree, params: SearchParams) -> tuple[chex.Array, chex.Array, chex.Array]:
    """Descend from the root of one tree: (node, slot, depth). slot = -1: ``node`` is a
    terminal node visited again; else the edge (node, slot) leads to a new leaf."""

    bits = simulation_bits(tree.rng_key, tree.simulations)

    def cond(c):
        return ~c[3]

    def body(c):
        node, _, depth, _ = c
        term = is_terminal(tree.status[node], tree.num_legal[node], node == 0)
        u = uniform_at_depth(bits, depth)
        slot = select_child(tree, params, node, depth, u)
        child = tree.edge_child[node, slot]
        stop = term | (child < 0)
        return (jnp.where(stop, node, child), jnp.where(term, -1, slot),
                jnp.where(stop, depth, depth + 1), stop)

    node, slot, depth, _ = jax.lax.while_loop(
        cond, body, (jnp.int32(0), jnp.int32(-1), jnp.int32(0), jnp.bool_(False)))
    return node, slot, depth


def _backup(tree: Tree, params: SearchParams, leaf: chex.Array, wl: chex.Array, d: chex.Array,
            active: chex.Array) -> tuple[chex.Array, chex.Array, chex.Array, chex.Array]:
    """Add one visit with value (wl, d) from ``leaf`` up to the root of one tree.

    Returns new (visits, wl_sum, d_sum) [N] and the node to freeze (search-contempt:
    an odd-depth node whose children now hold exactly n_scl visits), or -1.
    """

    def cond(c):
        return c[0] >= 0

    def body(c):
        node, wl, visits, wl_sum, d_sum, freeze = c
        visits = visits.at[node].add(1)
        wl_sum = wl_sum.at[node].add(wl)
        d_sum = d_sum.at[node].add(d)
        hits = (tree.depth[node] % 2 == 1) & (visits[node] - 1 == params.n_scl)
        freeze = jnp.where(hits & (tree.num_legal[node] > 0), node, freeze)
        return tree.parent[node], -wl, visits, wl_sum, d_sum, freeze

    init = (jnp.where(active, leaf, -1), wl, tree.visits, tree.wl_sum, tree.d_sum, jnp.int32(-1))
    _, _, visits, wl_sum, d_sum, freeze = jax.lax.while_loop(cond, body, init)
    return visits, wl_sum, d_sum, freeze


# --- evaluation ----------------------------------------------------------------------------

def evaluate_leaves(apply_fn, model_params, boards, reps, turn, castling, rule50, legal, num_legal,
              temperature):
    """Network on [B] positions: priors [B, K] at ``temperature``, raw policy [B, K] at T=1,
    WDL [B, 3] for the side to move."""
    planes = planes_from_arrays(jnp, boards, reps, turn, castling, rule50)
    out = apply_fn(model_params, planes)
    valid = jnp.arange(K)[None, :] < num_legal[:, None]
    logits = jnp.take_along_axis(out.policy_logits, jnp.maximum(legal, 0).astype(jnp.int32),
                                 axis=1)
    logits = jnp.where(valid, logits, -jnp.inf)
    safe = jnp.where(valid.any(axis=1, keepdims=True), logits, 0.0)
    priors = jnp.where(valid, jax.nn.softmax(safe / temperature[:, None], axis=1), 0.0)
    raw = jnp.where(valid, jax.nn.softmax(safe, axis=1), 0.0)
    wdl = jax.nn.softmax(out.wdl_logits.astype(jnp.float32), axis=-1)
    return priors, raw, wdl


# --- init and step -------------------------------------------------------------------------

def init_search(apply_fn, model_params, params: SearchParams, roots: RootInputs,
                num_nodes: int) -> SearchState:
    """Trees holding only their evaluated roots (visits = 1), Dirichlet noise applied."""
    pos = roots.position
    batch = pos.board.shape[0]
    t = empty_tree(batch, num_nodes)
    key = position_hash(jnp, pos.board, pos.turn, pos.castling, pos.ep)
    t = t.replace(
        board=t.board.at[:, 0].set(pos.board), turn=t.turn.at[:, 0].set(pos.turn),
        castling=t.castling.at[:, 0].set(pos.castling), ep=t.ep.at[:, 0].set(pos.ep),
        rule50=t.rule50.at[:, 0].set(pos.rule50), fullmove=t.fullmove.at[:, 0].set(pos.fullmove),
        key=t.key.at[:, 0].set(key), status=t.status.at[:, 0].set(roots.status),
        repetitions=t.repetitions.at[:, 0].set(roots.root_repetitions),
        num_legal=t.num_legal.at[:, 0].set(roots.num_legal),
        edge_move=t.edge_move.at[:, 0].set(roots.legal),
        rng_key=roots.rng_key, root_hist_boards=roots.hist_boards,
        root_hist_repeated=roots.hist_repeated, root_hist_keys=roots.hist_keys,
        root_hist_len=roots.hist_len,
    )
    boards, reps = jax.vmap(_history, in_axes=(0, None, None, 0, 0))(
        t, jnp.int32(-1), jnp.int32(0), pos.board, roots.root_repetitions > 0)
    priors, raw, wdl = evaluate_leaves(apply_fn, model_params, boards, reps, pos.turn, pos.castling,
                                 pos.rule50, roots.legal, roots.num_legal,
                                 params.policy_temperature)
    # Dirichlet noise at the root only (lc0 / AlphaZero): p = (1 - eps) p + eps Dir(alpha)
    valid = jnp.arange(K)[None, :] < roots.num_legal[:, None]
    noise_keys = jax.vmap(lambda k: jax.random.fold_in(jax.random.wrap_key_data(k), 0x0D1))(
        roots.rng_key)
    gammas = jax.vmap(lambda k, a: jax.random.gamma(k, a, (K,)))(noise_keys,
                                                                 params.dirichlet_alpha)
    gammas = jnp.where(valid, gammas, 0.0)
    noise = gammas / jnp.maximum(gammas.sum(axis=1, keepdims=True), 1e-20)
    eps = params.dirichlet_epsilon[:, None]
    priors = jnp.where(eps > 0, (1 - eps) * priors + eps * noise, priors)
    # the root's own evaluation is its first visit (mover-into-root perspective: -(W - L))
    t = t.replace(
        edge_prior=t.edge_prior.at[:, 0].set(priors),
        raw_wdl=t.raw_wdl.at[:, 0].set(wdl),
        visits=t.visits.at[:, 0].set(1),
        wl_sum=t.wl_sum.at[:, 0].set(wdl[:, 2] - wdl[:, 0]),
        d_sum=t.d_sum.at[:, 0].set(wdl[:, 1]),
    )
    return SearchState(tree=t, params=params, root_policy=raw)


def simulate(apply_fn, host_expand: HostExpand, model_params, state: SearchState,
             limit: chex.Array) -> SearchState:
    """One simulation for every tree of the batch whose simulation count is below ``limit``."""
    tree, params = state.tree, state.params
    on = tree.simulations < limit  # [B]
    batch, num_nodes = tree.visits.shape
    b = jnp.arange(batch)
    node, slot, depth = jax.vmap(_select_leaf)(tree, params)
    is_new = (slot >= 0) & on
    room = tree.node_count < num_nodes
    expand = is_new & room
    revisit = (slot < 0) & on
    move = tree.edge_move[b, node, jnp.maximum(slot, 0)]
    out = jax.pure_callback(
        host_expand, expansion_shapes(batch),
        tree.board[b, node], tree.turn[b, node], tree.castling[b, node], tree.ep[b, node],
        tree.rule50[b, node], tree.fullmove[b, node], move, expand)
    c_board, c_turn, c_castling, c_ep, c_rule50, c_fullmove, legal, num_legal, status = out
    new = jnp.where(expand, tree.node_count, num_nodes)  # out of range -> writes dropped
    new_depth = depth + 1
    key = position_hash(jnp, c_board, c_turn, c_castling, c_ep)
    count, nearest = jax.vmap(_repetitions)(tree, node, new_depth, key, c_rule50)
    repeated_draw = (count >= 2) | ((count == 1) & (nearest <= new_depth))
    status = jnp.where((status == STATUS_ONGOING) & repeated_draw,
                       jnp.int8(STATUS_REPETITION), status)
    reps = jnp.minimum(count, 2).astype(jnp.int8)
    boards, rep_flags = jax.vmap(_history)(tree, node, new_depth, c_board, reps > 0)
    priors, _, wdl = evaluate_leaves(apply_fn, model_params, boards, rep_flags, c_turn, c_castling,
                               c_rule50, legal, num_legal, params.policy_temperature)
    term_wl, term_d = terminal_value(status)
    terminal = status != STATUS_ONGOING
    leaf_wl = jnp.where(terminal, term_wl, wdl[:, 2] - wdl[:, 0])
    leaf_d = jnp.where(terminal, term_d, wdl[:, 1])
    old_wl, old_d = terminal_value(tree.status[b, node])
    leaf_wl = jnp.where(revisit, old_wl, leaf_wl)
    leaf_d = jnp.where(revisit, old_d, leaf_d)

    def put(arr, value):
        return arr.at[b, new].set(value, mode="drop")

    tree = tree.replace(
        parent=put(tree.parent, node), depth=put(tree.depth, new_depth.astype(jnp.int16)),
        board=put(tree.board, c_board), turn=put(tree.turn, c_turn),
        castling=put(tree.castling, c_castling), ep=put(tree.ep, c_ep),
        rule50=put(tree.rule50, c_rule50), fullmove=put(tree.fullmove, c_fullmove),
        key=put(tree.key, key), repetitions=put(tree.repetitions, reps),
        status=put(tree.status, status), num_legal=put(tree.num_legal, num_legal),
        raw_wdl=put(tree.raw_wdl, wdl), edge_move=put(tree.edge_move, legal),
        edge_prior=put(tree.edge_prior, priors),
        edge_child=tree.edge_child.at[b, jnp.where(expand, node, num_nodes),
                                      jnp.maximum(slot, 0)].set(new, mode="drop"),
        node_count=tree.node_count + expand.astype(jnp.int32),
        dropped=tree.dropped + (is_new & ~room).astype(jnp.int32),
    )
    leaf = jnp.where(expand, new, node)
    visits, wl_sum, d_sum, freeze = jax.vmap(_backup)(tree, params, leaf, leaf_wl, leaf_d,
                                                      expand | revisit)
    safe_freeze = jnp.maximum(freeze, 0)
    children = tree.edge_child[b, safe_freeze]  # [B, K]
    child_visits = jnp.where(children >= 0,
                             jnp.take_along_axis(visits, jnp.maximum(children, 0), axis=1), 0)
    frozen = tree.frozen.at[b, jnp.where(freeze >= 0, freeze, num_nodes)].set(
        child_visits, mode="drop")
    tree = tree.replace(visits=visits, wl_sum=wl_sum, d_sum=d_sum, frozen=frozen,
                        simulations=tree.simulations + on.astype(jnp.int32))
    return state.replace(tree=tree)


def run_simulations(apply_fn, host_expand: HostExpand, model_params, state: SearchState,
                    limit: chex.Array, num_steps: chex.Array) -> SearchState:
    """Simulate until every tree has ``limit`` [B] simulations (``num_steps`` = the most
    any tree needs; both traced, so no recompilation)."""
    return jax.lax.fori_loop(
        0, num_steps,
        lambda _, s: simulate(apply_fn, host_expand, model_params, s, limit), state)
