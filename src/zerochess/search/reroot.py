"""Tree reuse: move a tree's root down the moves played and keep the subtree below them.

``reroot`` is written for one tree and vmapped (``advance_state``). Given the lc0 1858
indices of the moves played from the current root (at most ``MAX_PLIES``; -1 padded), it

- finds the node they lead to (the new root); a move that is not in the tree, a child
  never evaluated, or a new root that is a game end in the tree (e.g. a two-fold draw
  there) make the tree unusable: ``ok`` is False and the caller starts it afresh;
- keeps the new root's subtree, compacted to the front of the fixed arrays: node ``i``
  keeps its relative order (so the new root is node 0 and a parent still comes before
  its children), parents re-indexed, depths shifted, every node's edges re-packed
  contiguously into the edge pool (the root's run starts at 0, as ``write_roots``
  writes it), child pointers re-indexed. The kept nodes' statistics (visits, sums,
  bounds, plies, the network WDL, repetition counts, positions) are copied unchanged;
- fixes two-fold draws (lc0 ``EnsureNodeTwoFoldCorrectForDepth``): a node that was a
  draw because its position already occurred *inside the tree* is no draw any more
  when that occurrence is now above the root (in the game history) and it is its only
  earlier occurrence (a third occurrence stays a draw). lc0 reverts the node's visits
  up to the new root and lets it be expanded again; here the node is removed (its
  edge is unlinked; the next visit to it is a new leaf, judged with the new game
  history) and its visits and values are taken off its ancestors. Its ancestors'
  bounds are derived again from their children (a proof that relied on the draw is
  withdrawn; the values a withdrawn proof had set are kept);
- re-applies the root's Dirichlet noise (``dirichlet_epsilon`` > 0) to the new root's
  priors, from the tree's next key (``next_key``). The new root's priors are its stored
  ones (float16, as lc0 packs them), and its raw policy at temperature 1 (the results'
  ``policy``) is recovered from them (p^T renormalised, T the policy temperature);
- search-contempt: frozen child-visit counts live at odd depths (the opponent's
  nodes). After an odd number of plies the parity flips: the counts of nodes now at
  even depth are cleared, and a node now at odd depth whose children already hold
  ``n_scl`` visits is frozen at once with its children's current counts (it will not
  cross the limit again). After an even number of plies the counts are kept.
- starts a new search on the kept tree: per-search counters (simulations, random
  draws, playouts, depth, evaluations, collisions, dropped) are zero, the pool is no
  longer full, and ``TreeStats.reused_visits`` holds the visits the root kept.

No move (``plies`` 0) keeps the tree as it is (same root, priors, noise and key) and
only starts a new search on it; ``plies`` -1 leaves the tree untouched. Shapes never
change: nothing recompiles.
"""

from __future__ import annotations

from typing import Any

import chex
import jax
import jax.numpy as jnp

from zerochess.chess.types import GameStatus, RootHistory
from zerochess.search.config import SearchParams
from zerochess.search.step import apart, rebound_path, rebound_paths
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


def subtree(tree: Tree, root: chex.Array) -> chex.Array:
    """bool [N]: the evaluated nodes of one tree below ``root`` (``root`` included).

    A node is below ``root`` when its ancestor at ``root``'s depth is ``root``: that
    ancestor is found by binary lifting (log2 of the depth range steps, each a gather),
    so the cost does not grow with the tree's depth."""
    n = tree.num_nodes
    index = jnp.arange(n, dtype=jnp.int32)
    used = (index < tree.node_count) & (tree.visits > 0)
    lift = tree.depth.astype(jnp.int32) - tree.depth[root].astype(jnp.int32)
    up = jnp.where(tree.parent >= 0, tree.parent, index)

    node = index
    for bit in range(16):  # depths are int16; unrolled: a loop would copy ``up`` each trip
        node = jnp.where((lift >> bit) & 1 == 1, up[node], node)
        up = up[up] if bit < 15 else up
    return used & (lift >= 0) & (node == root)


def stale_two_folds(tree: Tree, kept: chex.Array, above: chex.Array) -> chex.Array:
    """bool [N]: kept two-fold draws whose only earlier occurrence is now above the root
    (one of ``above``, the nodes the advance leaves behind)."""
    above_keys = tree.key[jnp.maximum(above, 0)]  # [P, 2]
    same = jnp.all(tree.key[:, None, :] == above_keys[None], axis=-1) & (above >= 0)[None]
    return (kept & (tree.status == GameStatus.REPETITION) & (tree.repetitions == 1)
            & same.any(axis=1))


def _revert(tree: Tree, root: chex.Array, removed: chex.Array) -> Tree:
    """Take the visits and values of the ``removed`` nodes off their ancestors up to
    ``root`` (lc0 ``RevertTerminalVisits``; values flip sign each ply, moves left grow
    by one per ply up)."""
    n = tree.num_nodes
    visits = jnp.where(removed, tree.visits, 0)
    wl = jnp.where(removed, tree.wl_sum, 0.0)
    d = jnp.where(removed, tree.d_sum, 0.0)
    m = jnp.where(removed, tree.m_sum, 0.0)

    def body(c):
        cur, sign, plies, v, w, dd, mm = c
        idx = jnp.where(cur >= 0, cur, n)
        v = v.at[idx].add(-visits, mode="drop")
        w = w.at[idx].add(sign * wl, mode="drop")
        dd = dd.at[idx].add(-d, mode="drop")
        mm = mm.at[idx].add(-(m + plies * visits.astype(jnp.float32)), mode="drop")
        up = jnp.where((cur >= 0) & (cur != root), tree.parent[jnp.maximum(cur, 0)], -1)
        return up, -sign, plies + 1.0, v, w, dd, mm

    start = jnp.where(removed, tree.parent, -1)
    _, _, _, v, w, dd, mm = jax.lax.while_loop(
        lambda c: jnp.any(c[0] >= 0), body,
        (start, jnp.float32(1.0), jnp.float32(1.0), tree.visits, tree.wl_sum, tree.d_sum,
         tree.m_sum))
    return tree.replace(visits=v, wl_sum=w, d_sum=dd, m_sum=mm)


EDGE_BLOCK = 2048  # pool entries re-packed per loop iteration (see ``_compact``)


def _compact(tree: Tree, root: chex.Array, kept: chex.Array, n_scl: chex.Array,
             blocks: chex.Array, write: chex.Array
             ) -> tuple[Tree, chex.Array, chex.Array]:
    """The ``kept`` nodes (``root``'s subtree) moved to the front, ``root`` first, their
    edges re-packed and their search-contempt frozen counts set for the new parity (the
    module docstring); returns the tree, the new root's pool priors as they were (float16
    [K], read in the re-packing: a read of the pool outside it would make XLA copy the
    pool), and whether the pool could be re-packed in place (else nothing of it was
    written).

    The pool is re-packed in place, block by block (``EDGE_BLOCK`` entries), up to the new
    ``edge_count`` only, so the cost follows the kept tree, not the pool's capacity (a
    16,384-node tree holds 655,578 pool entries; a search of a few hundred ms uses a few
    percent of them). Entries past ``edge_count`` keep stale values that nothing reads
    (``loop.write_roots``). In place is safe when no kept node's run moves up the pool: a
    block then reads only entries at or past its own, which no earlier block wrote. Runs
    are allocated in node order, so it always holds; where it would not, ``write`` is
    refused (the caller starts that tree afresh) rather than the pool read half written.
    Nothing is written where ``write`` is False.
    """
    n = tree.num_nodes
    pool = tree.edges.child.shape[0]
    count = jnp.sum(kept, dtype=jnp.int32)
    src = jnp.nonzero(kept, size=n, fill_value=0)[0].astype(jnp.int32)  # new j <- old src[j]
    new_index = jnp.where(kept, jnp.cumsum(kept, dtype=jnp.int32) - 1, -1)
    in_use = jnp.arange(n) < count
    shift = tree.depth[root]

    nodes = {name: jax.tree.map(lambda a: a[src], getattr(tree, name))
             for name in tree.keys() if name not in _TREE_LEVEL}
    old_parent = tree.parent[src]
    nodes["parent"] = jnp.where(in_use & (src != root),
                                new_index[jnp.maximum(old_parent, 0)], -1).astype(jnp.int32)
    nodes["depth"] = jnp.where(in_use, nodes["depth"] - shift, 0).astype(tree.depth.dtype)

    # the edges of the kept expanded nodes, one contiguous run each, in node order
    has_edges = in_use & (nodes["status"] == GameStatus.ONGOING) & (nodes["num_legal"] > 0)
    need = jnp.where(has_edges, nodes["num_legal"].astype(jnp.int32), 0)
    ends = jnp.cumsum(need)
    starts = ends - need
    edge_count = ends[-1]
    old_start = tree.edge_start[src]
    in_place = jnp.all(~has_edges | (starts <= old_start))
    write = write & in_place
    # search-contempt: frozen counts live at odd depths of the new tree
    flipped = shift.astype(jnp.int32) % 2 == 1
    over = ((nodes["visits"] - 1 >= n_scl) & (nodes["status"] == GameStatus.ONGOING)
            & (nodes["num_legal"] > 0))
    odd = nodes["depth"] % 2 == 1
    bound = jnp.minimum(blocks, -(-pool // EDGE_BLOCK))

    def block(b, carry):
        edges, has_frozen, first = carry
        p = b * EDGE_BLOCK + jnp.arange(EDGE_BLOCK, dtype=jnp.int32)
        owner = jnp.minimum(jnp.searchsorted(ends, p, side="right"), n - 1).astype(jnp.int32)
        live = p < edge_count
        old_p = jnp.where(live, old_start[owner] + p - starts[owner], 0)
        # all reads of the block before any write (``step.apart``; ``b < bound`` holds
        # inside the loop and is one value for a vmapped batch, so the conditional stays)
        old = apart(b < bound, lambda e: jax.tree.map(lambda a: a[old_p], e), edges)
        child_kept = (old.child >= 0) & kept[jnp.maximum(old.child, 0)]
        new_child = jnp.where(live & child_kept, new_index[jnp.maximum(old.child, 0)], -1)
        child_visits = jnp.where(new_child >= 0, nodes["visits"][jnp.maximum(new_child, 0)], 0)
        frozen = jnp.where(live & odd[owner], jnp.where(
            flipped, jnp.where(over[owner], child_visits, 0), old.frozen), 0)
        values = old.replace(child=new_child, frozen=frozen)
        target = jnp.where(live & write, p, pool)  # out of range: not written
        edges = jax.tree.map(lambda a, v: a.at[target].set(v.astype(a.dtype), mode="drop"),
                             edges, values)
        return edges, has_frozen | jnp.any(frozen > 0), jnp.where(b == 0, old.prior[:K], first)

    edges, has_frozen, first = jax.lax.fori_loop(
        0, bound, block, (tree.edges, jnp.bool_(False), jnp.zeros(K, tree.edges.prior.dtype)))
    nodes["edge_start"] = jnp.where(has_edges, starts, 0).astype(jnp.int32)
    tree = tree.replace(**nodes, edges=edges, node_count=count,
                        edge_count=edge_count.astype(jnp.int32), has_frozen=has_frozen)
    return tree, first, in_place


def _reroot(tree: Tree, params: SearchParams, root_policy: chex.Array, moves: chex.Array,
            plies: chex.Array, history: RootHistory, blocks: chex.Array | None
            ) -> tuple[Tree, chex.Array, chex.Array, chex.Array, chex.Array]:
    """``reroot`` without the certainty walks up from the removed two-folds: returns also
    where they start (int32 [N], -1 padded; -1 everywhere for a tree left as it was or
    without certainty), for the caller to walk (``rebound_path``, ``rebound_paths``)."""
    root, above, ok = find_root(tree, moves, plies)
    key = jnp.where(plies > 0, next_key(tree.rng_key), tree.rng_key).astype(jnp.uint32)
    kept = subtree(tree, root)
    stale = stale_two_folds(tree, kept, above)
    reverted = _revert(tree, root, stale)
    if blocks is None:
        blocks = (tree.edge_count + EDGE_BLOCK - 1) // EDGE_BLOCK
    new, root_edges, in_place = _compact(reverted, root, kept & ~stale, params.n_scl, blocks,
                                ok & (plies >= 0))
    ok &= in_place
    change = ok & (plies >= 0)

    # ancestors of the removed two-folds lose any proof that needed them
    parents = jnp.where(stale & change & params.certainty, tree.parent, -1)
    new_index = jnp.where(kept & ~stale, jnp.cumsum(kept & ~stale) - 1, -1)
    starts = jnp.where(parents >= 0, new_index[jnp.maximum(parents, 0)], -1)
    starts = jnp.sort(starts)[::-1].astype(jnp.int32)  # the nodes to re-bound first, then -1

    # the root: its priors (the pool's copy; noise again after a move), raw policy
    valid = jnp.arange(K) < new.num_legal[0]
    pool_prior = jnp.where(valid, root_edges.astype(jnp.float32), 0.0)
    noisy = root_noise(pool_prior, new.num_legal[0], key, params.dirichlet_alpha,
                       params.dirichlet_epsilon)
    moved = plies > 0
    prior = jnp.where(moved, noisy, tree.root_prior)
    # the raw policy is p^T renormalised (priors are the policy at temperature T)
    logp = jnp.where(valid & (pool_prior > 0), jnp.log(jnp.maximum(pool_prior, 1e-30)), -jnp.inf)
    raw = jnp.where(valid, jax.nn.softmax(params.policy_temperature * logp), 0.0)
    policy = jnp.where(moved, raw, root_policy)
    pool = new.edges.prior.shape[0]
    new = new.replace(
        edges=new.edges.replace(prior=new.edges.prior.at[
            jnp.where(valid & change, jnp.arange(K), pool)].set(
                prior.astype(PRIOR_DTYPE), mode="drop")),
        root_prior=prior, full=jnp.bool_(False), dropped=jnp.int32(0),
        simulations=jnp.int32(0), draws=jnp.int32(0), rng_key=key,
        root_history=jax.tree.map(lambda a, b: jnp.asarray(a, b.dtype), history,
                                  tree.root_history),
        stats=jax.tree.map(jnp.zeros_like, tree.stats).replace(reused_visits=new.visits[0]))
    # the pool was written only where ``change`` (a select of it would cost a pass over all
    # its entries); everything else is taken from the new tree where ``change``
    out = tree.replace(edges=new.edges, **{
        name: jax.tree.map(lambda a, b: jnp.where(change, a, b), getattr(new, name),
                           getattr(tree, name))
        for name in tree.keys() if name != "edges"})
    return (out, jnp.where(change, policy, root_policy), ok | (plies < 0), key, starts)


def reroot(tree: Tree, params: SearchParams, root_policy: chex.Array, moves: chex.Array,
           plies: chex.Array, history: RootHistory, blocks: chex.Array | None = None
           ) -> tuple[Tree, chex.Array, chex.Array, chex.Array]:
    """Advance one tree by ``moves`` (see the module docstring).

    Args:
      tree: one (unbatched) tree, no visits in flight.
      params: its hyperparameters (scalars).
      root_policy: float32 [K] the current root's raw policy (T = 1).
      moves: int16 [P] lc0 1858 indices of the moves played from the root, -1 padded.
      plies: int32 scalar, moves used (0..P; -1: leave the tree as it is).
      history: the new root's ``RootHistory`` (the host's, as ``init`` builds it).
      blocks: int32 scalar, pool blocks of ``EDGE_BLOCK`` entries to re-pack, at least
        this tree's ``edge_count`` (default: exactly those; ``advance_state`` passes the
        batch's largest, the same for every tree).

    Returns:
      ``(tree, root_policy, ok, key)``: the rerooted tree and its root's raw policy
      (the old ones where not ``ok``), whether it was kept, and the key the next search
      of this tree draws from (the tree's when ``plies`` is 0).
    """
    tree, policy, ok, key, starts = _reroot(tree, params, root_policy, moves, plies, history,
                                            blocks)
    tree = jax.lax.fori_loop(0, jnp.sum(starts >= 0),
                             lambda i, t: rebound_path(t, starts[i]), tree)
    return tree, policy, ok, key


def advance_state(state: Any, moves: chex.Array, plies: chex.Array, history: RootHistory
                  ) -> tuple[Any, chex.Array, chex.Array]:
    """``reroot`` of every tree of a ``loop.SearchState`` [B] (``moves`` int16 [B, P],
    ``plies`` int32 [B], ``history`` [B]); returns the state, ``ok`` bool [B] and the
    trees' next keys uint32 [B, 2] (for the trees to start afresh where not ``ok``).

    The pool is re-packed in place up to the batch's largest ``edge_count``, and the
    certainty walks of all trees go in lockstep (``step.rebound_paths``), so no loop
    carries the pool through a ``select``. The node arrays are still passed over whole (a
    few ms at 65,536 nodes on a CPU).
    """
    tree = state.tree
    blocks = (jnp.max(tree.edge_count) + EDGE_BLOCK - 1) // EDGE_BLOCK
    tree, policy, ok, key, starts = jax.vmap(_reroot, in_axes=(0, 0, 0, 0, 0, 0, None))(
        tree, state.params, state.root_policy, moves, plies, history, blocks)
    tree = jax.lax.fori_loop(0, jnp.max(jnp.sum(starts >= 0, axis=1)),
                             lambda i, t: rebound_paths(t, starts[:, i]), tree)
    moved = ok & (plies >= 0)  # a new search: the KLD-gain stopper starts over (lc0)
    return (state.replace(tree=tree, root_policy=policy,
                          stopped=jnp.where(moved, False, state.stopped),
                          kld_visits=jnp.where(moved[:, None], 0, state.kld_visits),
                          kld_nodes=jnp.where(moved, 0, state.kld_nodes)), ok, key)


__all__ = ["ADVANCE_TAG", "MAX_PLIES", "advance_state", "find_root", "next_key", "reroot",
           "root_noise", "stale_two_folds", "subtree"]
