"""Reading a search: the one path from a search's state to root views."""

from __future__ import annotations

from typing import Any

import chex
import jax
import jax.numpy as jnp
import numpy as np

from zerochess.chess.types import GameStatus
from zerochess.program_store import program
from zerochess.search.selection import child_stats, lc0_puct_terms
from zerochess.search.tree import K, Tree, node_edges

PV_LENGTH = 16  # plies of each continuation read (after the root move)


def best_child_slot(tree: Tree, node: chex.Array, draw_score: chex.Array) -> chex.Array:
    """lc0's best child slot of ``node`` of one tree (-1 where no child was visited):
    ``GetBestChildNoTemperature``.

    Order: proven wins first (the shortest), then the unproven and proven draws by most
    visits, then higher Q, then higher prior; proven losses last (the longest first).
    """
    edges = node_edges(tree, node)
    exists = edges.child >= 0
    safe = jnp.maximum(edges.child, 0)
    visits = jnp.where(exists, tree.visits[safe], 0)
    n = jnp.maximum(visits, 1).astype(jnp.float32)
    ds = jnp.where(tree.depth[node] % 2 == 0, draw_score, -draw_score)
    q = (tree.wl_sum[safe] + ds * tree.d_sum[safe]) / n
    prior = edges.prior
    proven = exists & (visits > 0) & (tree.lower[safe] == tree.upper[safe])
    win = proven & (tree.lower[safe] == 1)
    loss = proven & (tree.lower[safe] == -1)
    plies = tree.plies[safe].astype(jnp.int32)
    visited = visits > 0
    rest = visited & ~win & ~loss
    cand = jnp.where(win.any(), win, jnp.where(rest.any(), rest, loss))
    # wins: fewest plies; losses: most plies; the others: visits, Q, prior
    cand &= jnp.where(win.any(), plies == jnp.min(jnp.where(cand, plies, 2**30)), True)
    cand &= jnp.where(~win.any() & ~rest.any(),
                      plies == jnp.max(jnp.where(cand, plies, -1)), True)
    cand &= visits == jnp.max(jnp.where(cand, visits, -1))
    cand &= q == jnp.max(jnp.where(cand, q, -jnp.inf))
    cand &= prior == jnp.max(jnp.where(cand, prior, -jnp.inf))
    return jnp.where(cand.any(), jnp.argmax(cand), -1).astype(jnp.int32)


def _order(valid, visits, q, prior, win, loss, plies) -> chex.Array:
    """Slots best first (lc0's ranking, ``results.move_order``'s device twin); invalid
    slots last. All [K]."""
    rank = jnp.where(~valid, 3, jnp.where(win, 0, jnp.where(loss, 2, 1)))
    tie = jnp.where(win, plies, jnp.where(loss, -plies, 0))
    qq = jnp.where(visits > 0, q, -jnp.inf)
    return jnp.lexsort((-prior, -qq, -visits, tie, rank)).astype(jnp.int32)


def _lines(tree: Tree, starts: chex.Array, draw_score: chex.Array, length: int
           ) -> tuple[chex.Array, chex.Array]:
    """From each node of ``starts`` [R] (-1: none), lc0's best child ``length`` times:
    the moves ([R, length] 1858 indices, -1 padded) and the visits of the nodes reached."""
    def ply(cur, _):
        ok = cur >= 0
        safe = jnp.maximum(cur, 0)
        slot = jax.vmap(best_child_slot, in_axes=(None, 0, None))(tree, safe, draw_score)
        ok &= slot >= 0
        edges = jax.vmap(lambda n: node_edges(tree, n))(safe)
        take = jnp.maximum(slot, 0)[:, None]
        move = jnp.where(ok, jnp.take_along_axis(edges.move, take, 1)[:, 0], -1)
        nxt = jnp.where(ok, jnp.take_along_axis(edges.child, take, 1)[:, 0], -1)
        return nxt, (move, jnp.where(nxt >= 0, tree.visits[jnp.maximum(nxt, 0)], 0))

    # a loop, not ``length`` unrolled copies: a program much smaller to compile and load
    _, (moves, visits) = jax.lax.scan(ply, starts, None, length=length)
    return moves.T.astype(jnp.int32), visits.T.astype(jnp.int32)


def root_view(tree: Tree, params: Any, root_policy: chex.Array, rows: chex.Array,
              length: int) -> dict[str, chex.Array]:
    """The root view of one (unbatched) tree (see docs/DESIGN.md).

    Args:
      tree: one tree.
      params: its ``SearchParams`` (scalars).
      root_policy: float32 [K] the root's raw network policy.
      rows: int32 [R]: the root moves to read continuations for: a slot (>= 0), or
        ``-r - 1`` for the move ranked r in lc0's order (-1 the best).
      length: plies of each continuation (static; 0: none).

    Returns:
      A dict of arrays ([K] per root move, [R, ...] per row, scalars).
    """
    root = jnp.int32(0)
    edges = node_edges(tree, root)
    stats = child_stats(tree, root, edges)
    terms = lc0_puct_terms(tree, params, root, jnp.int32(0), stats)
    children = edges.child
    exists = children >= 0
    safe = jnp.maximum(children, 0)
    visited = stats.visits > 0
    lower = jnp.where(exists, tree.lower[safe], -1)
    upper = jnp.where(exists, tree.upper[safe], 1)
    plies = jnp.where(exists, tree.plies[safe], 0).astype(jnp.int32)
    status = jnp.where(exists, tree.status[safe], GameStatus.ONGOING)
    proven = visited & (lower == upper)
    win = proven & (lower == 1)
    loss = proven & (lower == -1)
    q = terms.q
    order = _order(stats.valid, stats.visits, q, stats.prior, win, loss, plies)
    slots = jnp.where(rows >= 0, rows, order[jnp.clip(-rows - 1, 0, K - 1)])
    if length > 0:
        pv, pv_visits = _lines(tree, children[jnp.clip(slots, 0, K - 1)], params.draw_score,
                               length)
    else:
        pv = pv_visits = jnp.zeros((rows.shape[0], 0), jnp.int32)
    utility = jnp.where(visited, terms.utility, 0.0)
    q_shown = jnp.where(visited, q, terms.fpu)
    raw = jnp.where(exists[:, None], tree.raw_wdl[safe], jnp.nan)
    wl = stats.wl
    # V: the network's value of the child from the root side; a game end's exact value
    v = jnp.where(visited, raw[:, 2] - raw[:, 0], jnp.nan)
    v = jnp.where(visited & (status != GameStatus.ONGOING), wl + params.draw_score * stats.d, v)
    n_root = jnp.maximum(tree.visits[0], 1).astype(jnp.float32)
    root_wl, root_d = root_values(tree)
    moves_left = params.moves_left
    return dict(
        num_legal=tree.num_legal[0], moves=edges.move, valid=stats.valid,
        visits=stats.visits, in_flight=stats.started - stats.visits,
        prior=stats.prior, policy=root_policy,
        wl=wl, d=stats.d, m=jnp.where(visited & moves_left, stats.m, jnp.nan),
        q=jnp.where(visited, q, jnp.nan), q_shown=q_shown, fpu=terms.fpu, u=terms.u,
        utility=utility, s=q_shown + terms.u + utility, v=v, child_raw_wdl=raw,
        status=status, lower=lower, upper=upper, plies=plies, won=win, lost=loss,
        order=order, best_slot=best_child_slot(tree, root, params.draw_score), rows=slots,
        pv=pv, pv_visits=pv_visits,
        root_visits=tree.visits[0], root_in_flight=tree.in_flight[0],
        root_wl=root_wl, root_d=root_d,
        root_m=jnp.where(moves_left, tree.m_sum[0] / n_root, jnp.nan),
        raw_wdl=tree.raw_wdl[0], root_lower=-tree.upper[0], root_upper=-tree.lower[0],
        root_plies=tree.plies[0], node_count=tree.node_count, edge_count=tree.edge_count,
        full=tree.full, dropped=tree.dropped, simulations=tree.simulations,
        draw_score=params.draw_score, policy_temperature=params.policy_temperature,
        **{f"stat_{name}": value for name, value in tree.stats.items()})


def _read(state: Any, rows: jax.Array, length: int) -> dict[str, jax.Array]:
    out = jax.vmap(root_view, in_axes=(0, 0, 0, 0, None))(
        state.tree, state.params, state.root_policy, rows, length)
    out["stopped"] = state.stopped
    return out


@program(static_argnames="length")
def read_trees(state: Any, rows: jax.Array, length: int = PV_LENGTH) -> dict[str, jax.Array]:
    """``root_view`` of every tree of a ``loop.SearchState`` [B] (``rows`` int32 [B, R]);
    also each tree's ``stopped`` flag (a stopper ended it)."""
    return _read(state, rows, length)


@program(static_argnames="length")
def read_tree(state: Any, index: jax.Array, rows: jax.Array, length: int = PV_LENGTH
              ) -> dict[str, jax.Array]:
    """``read_trees`` of tree ``index`` alone (a batch of one: every array [1, ...])."""
    def take(x):
        return jax.lax.dynamic_index_in_dim(x, index, 0, keepdims=True)

    return _read(jax.tree.map(take, state), rows[None], length)


def all_rows(batch: int) -> np.ndarray:
    """``rows`` that read every root move's continuation (int32 [batch, K])."""
    return np.broadcast_to(np.arange(K, dtype=np.int32), (batch, K))


def root_values(tree: Tree) -> tuple[chex.Array, chex.Array]:
    """The root's mean W - L and D from its side to move (one tree; the root's sums are
    from the mover into it, so W - L flips)."""
    n_root = jnp.maximum(tree.visits[0], 1).astype(jnp.float32)
    return -tree.wl_sum[0] / n_root, tree.d_sum[0] / n_root


def best_or_prior(best_slot: Any, prior: Any, valid: Any, xp: Any = jnp) -> Any:
    """The slot to call best: ``best_slot`` (``best_child_slot``), or where no child was
    visited (-1) the highest prior's (int [...]; ``prior``, ``valid`` [..., K])."""
    return xp.where(best_slot >= 0, best_slot,
                    xp.argmax(xp.where(valid, prior, -xp.inf), axis=-1)).astype(xp.int32)


def root_scores(root_wl: Any, root_d: Any, draw_score: Any) -> tuple[Any, tuple[Any, Any, Any]]:
    """(Q, W/D/L) of a root from its W - L and D (side to move; host floats or arrays):
    Q = W - L + draw score x D, W = (1 + (W - L) - D) / 2, L = (1 - (W - L) - D) / 2."""
    return (root_wl + draw_score * root_d,
            ((1 + root_wl - root_d) / 2, root_d, (1 - root_wl - root_d) / 2))


def best_rows(batch: int, count: int) -> np.ndarray:
    """``rows`` that read the ``count`` best moves' continuations (int32 [batch, count])."""
    return np.broadcast_to(-np.arange(1, count + 1, dtype=np.int32), (batch, count))


__all__ = ["PV_LENGTH", "all_rows", "best_child_slot", "best_rows", "read_tree", "read_trees",
           "best_or_prior", "root_scores", "root_values", "root_view"]
