"""Tree reuse: move a tree's root down the moves played and keep the subtree below them."""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import chex
import jax
import jax.numpy as jnp

from zerochess.chess.types import GameStatus, RootHistory
from zerochess.search.params import SearchParams
from zerochess.search.step import apart, rebound_paths
from zerochess.search.tree import PRIOR_DTYPE, K, Tree, node_edges

MAX_PLIES = 8  # moves one advance can follow; longer jumps start a new tree
ADVANCE_TAG = 0xADA  # folded into a tree's key at each advance: the next search's key
NOISE_TAG = 0x0D1  # the key's branch for root noise (shared with ``loop.write_roots``)

# Tree fields that are not per-node arrays (everything else in ``Tree`` is [N, ...]).
_TREE_LEVEL = frozenset({"edges", "root_prior", "node_count", "edge_count", "full",
                         "has_frozen", "dropped", "simulations", "draws", "rng_key",
                         "root_history", "stats"})


def next_key(key: chex.Array) -> chex.Array:
    """The raw key (uint32 [2]) of the search that follows an advance of a tree with
    ``key``: every advance moves a tree's random stream on to a fresh one."""
    return jax.random.key_data(jax.random.fold_in(jax.random.wrap_key_data(key), ADVANCE_TAG))


def root_noise(priors: chex.Array, num_legal: chex.Array, key: chex.Array, alpha: chex.Array,
               epsilon: chex.Array) -> chex.Array:
    """lc0 / AlphaZero root noise of one tree: (1 - eps) p + eps Dir(alpha) over the legal
    moves (``priors`` [K] float32), drawn from ``key``'s noise branch; eps 0: unchanged.

    Normalised in log space: float32 gamma samples of a small alpha underflow to 0 (7% of
    them at alpha 0.03), which would leave all-zero noise; softmax of log-gammas is the
    same Dirichlet sample without underflow.
    """
    valid = jnp.arange(K) < num_legal
    noise_key = jax.random.fold_in(jax.random.wrap_key_data(key), NOISE_TAG)
    log_gammas = jax.random.loggamma(noise_key, alpha, (K,))
    noise = jnp.where(valid, jax.nn.softmax(jnp.where(valid, log_gammas, -jnp.inf)), 0.0)
    return jnp.where(epsilon > 0, (1 - epsilon) * priors + epsilon * noise, priors)


def find_root(tree: Tree, moves: chex.Array, plies: chex.Array
              ) -> tuple[chex.Array, chex.Array, chex.Array]:
    """Follow ``moves`` (int16 [P] 1858 indices, the first ``plies`` used) from the root
    of one tree.

    Returns:
      ``(root, above, ok)``: the node reached (int32), the nodes left above it (int32
      [P]: the old root, then each node passed, -1 past ``plies``), and whether the
      new root is in the tree and searchable (evaluated, not a game end).
    """
    def ply(carry, xs):
        cur, ok = carry
        j, move = xs
        active = j < plies
        edges = node_edges(tree, cur)
        match = edges.valid & (edges.move == move)
        child = edges.child[jnp.argmax(match)]
        found = match.any() & (child >= 0) & (tree.visits[jnp.maximum(child, 0)] > 0)
        ok &= ~active | found
        return (jnp.where(active & found, child, cur), ok), jnp.where(active, cur, -1)

    steps = jnp.arange(moves.shape[0], dtype=jnp.int32)
    (cur, ok), above = jax.lax.scan(ply, (jnp.int32(0), jnp.bool_(True)), (steps, moves))
    ok &= ((tree.status[cur] == GameStatus.ONGOING) & (tree.num_legal[cur] > 0)
           & (tree.visits[cur] > 0))
    return cur, above.astype(jnp.int32), ok


NODE_BLOCK = 512  # nodes planned / moved per loop iteration
EDGE_BLOCK = 2048  # pool entries re-packed per loop iteration
_ROUNDS = (NODE_BLOCK - 1).bit_length()  # pointer-jumping rounds that cross a block
_NO_END = jnp.iinfo(jnp.int32).max


class Plan(NamedTuple):
    """What the advance of one tree keeps and where it goes (``plan``). Arrays are [N],
    written up to the counts (past them: their initial values); "by old" arrays are
    indexed by the node's index before the advance, the others by its new index."""

    root: chex.Array  # int32 the new root (old index)
    ok: chex.Array  # bool the new root is in the tree and searchable, and the pool can be
    #                 re-packed in place (``in_place``)
    count: chex.Array  # int32 nodes kept
    edge_count: chex.Array  # int32 pool entries they own
    shift: chex.Array  # int32 plies the depths move up (the new root's old depth)
    new_index: chex.Array  # int32 by old: the kept node's new index, else -1
    source: chex.Array  # int32 the node's old index
    starts: chex.Array  # int32 the node's first pool entry after the advance
    ends: chex.Array  # int32 past its last one (past ``count``: int32 max)
    old_starts: chex.Array  # int32 its first pool entry before
    removed: chex.Array  # int32 by rank: the new index of a removed two-fold's parent, -1 past
    removed_values: tuple[chex.Array, ...]  # (visits, wl_sum, d_sum, m_sum) of those nodes


def plan(tree: Tree, moves: chex.Array, plies: chex.Array, node_blocks: chex.Array) -> Plan:
    """The new root of one tree, its subtree (the evaluated nodes below it), the two-folds
    that subtree drops (a two-fold draw whose one earlier occurrence is a node the advance
    leaves above the root: docs/DESIGN.md), the kept nodes' new indices (their old
    order) and their edges' new runs (one contiguous run each, in node order, the root's
    at 0).

    One pass over the used nodes, ``NODE_BLOCK`` at a time (``node_blocks`` blocks,
    covering at least the tree's ``node_count``; one value for a vmapped batch). A node
    is below the root when its parent is (the root itself is): parents come before their
    children, so a parent in an earlier block is known, and one in the same block is
    found by pointer jumping inside the block.
    """
    n = tree.num_nodes

    def reads(tree, moves, plies):
        root, above, ok = find_root(tree, moves, plies)
        return root, above, ok, tree.key[jnp.maximum(above, 0)], tree.depth[root]

    # read before the loops that move the nodes in place (``step.apart``: a read fused into
    # a later op would make XLA copy the array read; ``node_blocks`` is one value for a
    # vmapped batch, so the conditional stays one)
    root, above, ok, above_keys, shift = apart(node_blocks >= 0, reads, tree, moves, plies)
    local = jnp.arange(NODE_BLOCK, dtype=jnp.int32)

    def block(k, c):
        (new_index, source, starts, ends, old_starts, removed, values, count, edges, dropped,
         in_place) = c
        base = k * NODE_BLOCK
        p = base + local
        at = jnp.minimum(p, n - 1)
        parent = tree.parent[at]
        used = (p < tree.node_count) & (tree.visits[at] > 0)
        earlier = (parent >= 0) & (parent < base)
        # the block's read of the array it writes, before its writes (``step.apart``); a
        # parent has children, so it is no game end (two-folds are): below the root means
        # kept, with a new index
        parent_new = apart(k < node_blocks, lambda a: a[jnp.maximum(parent, 0)], new_index)
        known = ~used | (p == root) | (parent < base)
        below = used & ((p == root) | (earlier & (parent_new >= 0)))
        up = jnp.where(known, 0, parent - base)
        for _ in range(_ROUNDS):
            up_known, up_below, up_up = known[up], below[up], up[up]
            below = jnp.where(known, below, up_below)
            up = jnp.where(known | up_known, up, up_up)
            known = known | up_known
        status = tree.status[at]
        two_fold = (below & (status == GameStatus.REPETITION) & (tree.repetitions[at] == 1)
                    & jnp.any(jnp.all(tree.key[at][:, None, :] == above_keys[None], axis=-1)
                              & (above >= 0)[None], axis=1))
        keep = below & ~two_fold
        new = jnp.where(keep, count + jnp.cumsum(keep, dtype=jnp.int32) - 1, -1)
        need = jnp.where(keep & (status == GameStatus.ONGOING) & (tree.num_legal[at] > 0),
                         tree.num_legal[at].astype(jnp.int32), 0)
        end = edges + jnp.cumsum(need, dtype=jnp.int32)
        start = end - need
        old_start = tree.edge_start[at]
        in_place &= jnp.all((need == 0) | (start <= old_start))
        to = jnp.where(keep, new, n)  # out of range: not written
        new_index = new_index.at[p].set(new, mode="drop")
        source = source.at[to].set(p, mode="drop")
        starts = starts.at[to].set(start, mode="drop")
        ends = ends.at[to].set(end, mode="drop")
        old_starts = old_starts.at[to].set(old_start, mode="drop")
        # a removed two-fold: its parent's new index (kept, before it) and its statistics
        parent_new = jnp.where(earlier, parent_new, new[jnp.clip(parent - base, 0, NODE_BLOCK - 1)])
        rank = jnp.where(two_fold, dropped + jnp.cumsum(two_fold, dtype=jnp.int32) - 1, n)
        removed = removed.at[rank].set(parent_new, mode="drop")
        values = tuple(v.at[rank].set(a[at], mode="drop") for v, a in zip(
            values, (tree.visits, tree.wl_sum, tree.d_sum, tree.m_sum), strict=True))
        return (new_index, source, starts, ends, old_starts, removed, values,
                count + jnp.sum(keep, dtype=jnp.int32), end[-1],
                dropped + jnp.sum(two_fold, dtype=jnp.int32), in_place)

    i32 = functools.partial(jnp.full, (n,), dtype=jnp.int32)
    start = (i32(-1), i32(0), i32(0), i32(_NO_END), i32(0), i32(-1),
             (i32(0), *(jnp.zeros(n, jnp.float32) for _ in range(3))),
             jnp.int32(0), jnp.int32(0), jnp.int32(0), jnp.bool_(True))
    (new_index, source, starts, ends, old_starts, removed, values, count, edge_count, _,
     in_place) = jax.lax.fori_loop(0, node_blocks, block, start)
    return Plan(root=root, ok=ok & in_place, count=count, edge_count=edge_count,
                shift=shift.astype(jnp.int32), new_index=new_index, source=source,
                starts=starts, ends=ends, old_starts=old_starts, removed=removed,
                removed_values=values)


def _move_nodes(tree: Tree, p: Plan, write: chex.Array, node_blocks: chex.Array) -> Tree:
    """The kept nodes of one tree moved to their new indices in place, ``NODE_BLOCK`` at a
    time: parents re-indexed, depths shifted, edge runs the new ones. A node only moves
    down (its new index is at most its old), so a block reads only nodes at or past its
    own, which no earlier block wrote. Nothing is written where ``write`` is False."""
    n = tree.num_nodes
    local = jnp.arange(NODE_BLOCK, dtype=jnp.int32)
    fields = {name: getattr(tree, name) for name in tree.keys() if name not in _TREE_LEVEL}

    def block(j, fields):
        q = j * NODE_BLOCK + local
        at = jnp.minimum(q, n - 1)
        src = p.source[at]
        old = apart(j < node_blocks, lambda f: jax.tree.map(lambda a: a[src], f), fields)
        old["parent"] = jnp.where(src == p.root, -1,
                                  p.new_index[jnp.maximum(old["parent"], 0)])
        old["depth"] = old["depth"] - p.shift
        old["edge_start"] = jnp.where(p.ends[at] > p.starts[at], p.starts[at], 0)
        to = jnp.where((q < p.count) & write, q, n)
        return jax.tree.map(lambda a, v: a.at[to].set(v.astype(a.dtype), mode="drop"),
                            fields, old)

    fields = jax.lax.fori_loop(0, node_blocks, block, fields)
    return tree.replace(**fields)


def _revert(tree: Tree, removed: chex.Array, values: tuple[chex.Array, ...]) -> Tree:
    """Take the removed two-folds' visits and values off their ancestors, in the moved
    trees [B] (``removed`` [B, N]: each one's parent, -1 padded; lc0
    ``RevertTerminalVisits``: values flip sign each ply, moves left grow by one per ply
    up). All walks go up in lockstep; without a removed node, none runs."""
    n = tree.num_nodes
    b = jnp.arange(tree.batch_size)[:, None]
    visits, wl, d, m = values

    def body(c):
        cur, sign, plies, v, w, dd, mm = c
        idx = jnp.where(cur >= 0, cur, n)
        v = v.at[b, idx].add(-visits, mode="drop")
        w = w.at[b, idx].add(sign * wl, mode="drop")
        dd = dd.at[b, idx].add(-d, mode="drop")
        mm = mm.at[b, idx].add(-(m + plies * visits.astype(jnp.float32)), mode="drop")
        up = jnp.where(cur >= 0, tree.parent[b, jnp.maximum(cur, 0)], -1)
        return up, -sign, plies + 1.0, v, w, dd, mm

    _, _, _, v, w, dd, mm = jax.lax.while_loop(
        lambda c: jnp.any(c[0] >= 0), body,
        (removed, jnp.float32(1.0), jnp.float32(1.0), tree.visits, tree.wl_sum, tree.d_sum,
         tree.m_sum))
    return tree.replace(visits=v, wl_sum=w, d_sum=dd, m_sum=mm)


def _move_edges(tree: Tree, p: Plan, n_scl: chex.Array, write: chex.Array,
                edge_blocks: chex.Array) -> tuple[Tree, chex.Array]:
    """The kept nodes' edges of one tree (its nodes already moved) re-packed in place, up
    to the new ``edge_count`` only, ``EDGE_BLOCK`` entries at a time; child links
    re-indexed (unlinked where the child was not kept); search-contempt frozen counts
    for the new parity (docs/DESIGN.md). Returns the tree and the new root's pool
    priors as they were (float16 [K]: read in the loop, as a read of the pool outside it
    would make XLA copy the pool).

    Entries past ``edge_count`` keep stale values that nothing reads
    (``loop.write_roots``). A run only moves down the pool (``Plan.ok`` requires it), so
    a block reads only entries at or past its own, which no earlier block wrote.
    """
    n = tree.num_nodes
    pool = tree.edges.child.shape[0]
    flipped = p.shift % 2 == 1

    def block(b, carry):
        edges, has_frozen, first = carry
        e = b * EDGE_BLOCK + jnp.arange(EDGE_BLOCK, dtype=jnp.int32)
        owner = jnp.minimum(jnp.searchsorted(p.ends, e, side="right"), n - 1).astype(jnp.int32)
        live = e < p.edge_count
        old_e = jnp.where(live, p.old_starts[owner] + e - p.starts[owner], 0)
        # all reads of the block before any write (``b < edge_blocks`` holds inside the loop)
        old = apart(b < edge_blocks, lambda x: jax.tree.map(lambda a: a[old_e], x), edges)
        child = jnp.where(live & (old.child >= 0), p.new_index[jnp.maximum(old.child, 0)], -1)
        child_visits = jnp.where(child >= 0, tree.visits[jnp.maximum(child, 0)], 0)
        over = ((tree.visits[owner] - 1 >= n_scl) & (tree.status[owner] == GameStatus.ONGOING)
                & (tree.num_legal[owner] > 0))
        frozen = jnp.where(live & (tree.depth[owner] % 2 == 1), jnp.where(
            flipped, jnp.where(over, child_visits, 0), old.frozen), 0)
        to = jnp.where(live & write, e, pool)  # out of range: not written
        edges = jax.tree.map(lambda a, v: a.at[to].set(v.astype(a.dtype), mode="drop"),
                             edges, old.replace(child=child, frozen=frozen))
        return edges, has_frozen | jnp.any(frozen > 0), jnp.where(b == 0, old.prior[:K], first)

    edges, has_frozen, first = jax.lax.fori_loop(
        0, edge_blocks, block, (tree.edges, jnp.bool_(False), jnp.zeros(K, tree.edges.prior.dtype)))
    return tree.replace(edges=edges, has_frozen=jnp.where(write, has_frozen, tree.has_frozen)
                        ), first


def advance_trees(tree: Tree, params: SearchParams, root_policy: chex.Array,
                  moves: chex.Array, plies: chex.Array, history: RootHistory
                  ) -> tuple[Tree, chex.Array, chex.Array, chex.Array]:
    """Advance every tree of a batch by its moves (see docs/DESIGN.md).

    Args:
      tree: the trees [B], no visits in flight.
      params: their hyperparameters [B].
      root_policy: float32 [B, K] each root's raw policy (T = 1).
      moves: int16 [B, P] lc0 1858 indices of the moves played from each root, -1 padded.
      plies: int32 [B], moves used (0..P; -1: leave the tree as it is).
      history: the new roots' ``RootHistory`` [B] (the host's, as ``init`` builds it).

    Returns:
      ``(tree, root_policy, ok, key)``: the rerooted trees and their roots' raw policies
      (a tree not kept is left as it was), whether each was kept, and the key each
      tree's next search draws from (the tree's own when ``plies`` is 0).

    The work follows the nodes and edges the trees use, not their capacity: each loop
    runs to the batch's largest ``node_count`` or ``edge_count`` (one bound for the
    batch, so that under ``vmap`` no loop carries the trees through ``select``), and
    everything is moved in place.
    """
    node_blocks = -(-jnp.max(tree.node_count) // NODE_BLOCK)
    edge_blocks = -(-jnp.max(tree.edge_count) // EDGE_BLOCK)
    over_trees = functools.partial(jax.vmap, in_axes=(0, 0, 0, None))
    plans = over_trees(plan)(tree, moves, plies, node_blocks)
    change = plans.ok & (plies >= 0)
    key = jnp.where((plies > 0)[:, None], jax.vmap(next_key)(tree.rng_key),
                    tree.rng_key).astype(jnp.uint32)
    new = over_trees(_move_nodes)(tree, plans, change, node_blocks)
    new = _revert(new, jnp.where(change[:, None], plans.removed, -1), plans.removed_values)
    new, first = jax.vmap(_move_edges, in_axes=(0, 0, 0, 0, None))(
        new, plans, params.n_scl, change, edge_blocks)

    # the roots: their priors (the pool's copy; noise again after a move), raw policies
    def root(first, num_legal, key, params, moved, old_prior):
        valid = jnp.arange(K) < num_legal
        pool_prior = jnp.where(valid, first.astype(jnp.float32), 0.0)
        noisy = root_noise(pool_prior, num_legal, key, params.dirichlet_alpha,
                           params.dirichlet_epsilon)
        prior = jnp.where(moved, noisy, old_prior)
        # the raw policy is p^T renormalised (priors are the policy at temperature T)
        logp = jnp.where(valid & (pool_prior > 0), jnp.log(jnp.maximum(pool_prior, 1e-30)),
                         -jnp.inf)
        raw = jnp.where(valid, jax.nn.softmax(params.policy_temperature * logp), 0.0)
        return prior, raw, valid

    prior, raw, valid = jax.vmap(root)(first, new.num_legal[:, 0], key,
                                       params, plies > 0, tree.root_prior)
    pool = new.edges.prior.shape[1]
    slots = jnp.where(valid & change[:, None], jnp.arange(K), pool)
    b = jnp.arange(tree.batch_size)[:, None]
    new = new.replace(edges=new.edges.replace(prior=new.edges.prior.at[b, slots].set(
        prior.astype(PRIOR_DTYPE), mode="drop")))

    def pick(a, old):
        return jnp.where(change.reshape(change.shape + (1,) * (a.ndim - 1)), a, old)

    zeros = jax.tree.map(jnp.zeros_like, tree.stats)
    new = new.replace(
        root_prior=pick(prior, tree.root_prior), node_count=pick(plans.count, tree.node_count),
        edge_count=pick(plans.edge_count, tree.edge_count),
        full=pick(jnp.zeros_like(tree.full), tree.full),
        dropped=pick(jnp.zeros_like(tree.dropped), tree.dropped),
        simulations=pick(jnp.zeros_like(tree.simulations), tree.simulations),
        draws=pick(jnp.zeros_like(tree.draws), tree.draws), rng_key=pick(key, tree.rng_key),
        root_history=jax.tree.map(lambda a, o: pick(jnp.asarray(a, o.dtype), o), history,
                                  tree.root_history),
        stats=jax.tree.map(pick, zeros.replace(reused_visits=new.visits[:, 0]), tree.stats))

    # certainty: the ancestors of the removed two-folds lose any proof that needed them,
    # deepest first (a sort only when some tree removed one)
    starts = jnp.where((change & params.certainty)[:, None], plans.removed, -1)
    starts = jax.lax.cond(jnp.any(starts >= 0), lambda s: -jnp.sort(-s, axis=1),
                          lambda s: s, starts)
    new = jax.lax.fori_loop(0, jnp.max(jnp.sum(starts >= 0, axis=1)),
                            lambda i, t: rebound_paths(t, starts[:, i]), new)
    policy = jnp.where(change[:, None], jnp.where((plies > 0)[:, None], raw, root_policy),
                       root_policy)
    return new, policy, plans.ok | (plies < 0), key


def reroot(tree: Tree, params: SearchParams, root_policy: chex.Array, moves: chex.Array,
           plies: chex.Array, history: RootHistory
           ) -> tuple[Tree, chex.Array, chex.Array, chex.Array]:
    """``advance_trees`` of one (unbatched) tree: ``params`` scalars, ``root_policy``
    [K], ``moves`` [P], ``plies`` a scalar."""
    one = jax.tree.map(lambda x: jnp.asarray(x)[None],
                       (tree, params, root_policy, moves, plies, history))
    return jax.tree.map(lambda x: x[0], advance_trees(*one))


def advance_state(state: Any, moves: chex.Array, plies: chex.Array, history: RootHistory
                  ) -> tuple[Any, chex.Array, chex.Array]:
    """``advance_trees`` of a ``loop.SearchState`` [B] (``moves`` int16 [B, P], ``plies``
    int32 [B], ``history`` [B]); returns the state, ``ok`` bool [B] and the trees' next
    keys uint32 [B, 2] (for the trees to start afresh where not ``ok``)."""
    tree, policy, ok, key = advance_trees(state.tree, state.params, state.root_policy, moves,
                                          plies, history)
    moved = ok & (plies >= 0)  # a new search: the KLD-gain stopper starts over (lc0)
    return (state.replace(tree=tree, root_policy=policy,
                          stopped=jnp.where(moved, False, state.stopped),
                          kld_visits=jnp.where(moved[:, None], 0, state.kld_visits),
                          kld_nodes=jnp.where(moved, 0, state.kld_nodes)), ok, key)


__all__ = ["ADVANCE_TAG", "MAX_PLIES", "Plan", "advance_state", "advance_trees", "find_root",
           "next_key", "plan", "reroot", "root_noise"]
