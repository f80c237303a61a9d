"""One search step after the gather: the host expands the new leaves, then ``prepare``,
``network`` and ``finish`` run on the device (inputs and cache; the network; write, backup,
certainty)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import chex
import jax
import jax.numpy as jnp
import numpy as np

from zerochess.chess.keys import position_hash
from zerochess.chess.planes import planes_from_arrays
from zerochess.chess.types import MAX_REPETITIONS, Expansion, GameStatus, PositionArrays
from zerochess.search import cache as eval_cache
from zerochess.search import net_outputs
from zerochess.search.cache import EvalCache
from zerochess.search.config import INFINITE_NSCL
from zerochess.search.gather import NEW, TERMINAL, ExpandRequest, Leaves
from zerochess.search.history import input_history, path_occurrences
from zerochess.search.params import SearchParams
from zerochess.search.tree import (
    PRIOR_DTYPE,
    K,
    Tree,
    node_edges,
    proven_value,
    status_bounds,
    write_nodes,
)

# --- network evaluation of a batch of positions ---------------------------------------------


class LeafInputs(NamedTuple):
    """What the network and the policy need of B positions."""

    boards: chex.Array  # int8 [B, 8, 64] the position, then the 7 before it (absolute frame)
    repeated: chex.Array  # bool [B, 8] "occurred before" flag of each of those
    turn: chex.Array  # int8 [B]
    castling: chex.Array  # int8 [B]
    rule50: chex.Array  # int16 [B]
    legal: chex.Array  # int16 [B, K] legal moves as 1858 indices, -1 padded
    num_legal: chex.Array  # int16 [B]


class LeafOutputs(NamedTuple):
    """The network's view of B positions."""

    priors: chex.Array  # float32 [B, K] policy over the legal moves at the search temperature
    policy: chex.Array  # float32 [B, K] the same at temperature 1
    wdl: chex.Array  # float32 [B, 3] for the side to move
    m: chex.Array  # float32 [B] moves left (plies; 0 without a moves-left head)


def evaluate_leaves(apply_fn: Callable, model_params: Any, inputs: LeafInputs,
                    temperature: chex.Array) -> LeafOutputs:
    """The network on B positions.

    Args:
      apply_fn: ``Model.apply``, or any function returning what ``net_outputs`` reads.
      model_params: its parameters.
      inputs: the positions.
      temperature: float32 [B] policy softmax temperature per position.

    Returns:
      ``LeafOutputs``; priors and policy are 0 past ``num_legal``; non-finite network
      outputs made safe (``net_outputs``; ``evaluate_checked`` reports them).
    """
    return evaluate_checked(apply_fn, model_params, inputs, temperature)[0]


def evaluate_checked(apply_fn: Callable, model_params: Any, inputs: LeafInputs,
                     temperature: chex.Array) -> tuple[LeafOutputs, chex.Array]:
    """``evaluate_leaves`` and bool [B]: the network's outputs for the position were not
    all finite (``net_outputs``: made safe, lc0's way)."""
    planes = planes_from_arrays(jnp, inputs.boards, inputs.repeated, inputs.turn,
                                inputs.castling, inputs.rule50)
    out = net_outputs.read_outputs(apply_fn(model_params, planes), planes.shape[0])
    valid = jnp.arange(K)[None, :] < inputs.num_legal[:, None]
    logits = jnp.take_along_axis(out.policy_logits,
                                 jnp.maximum(inputs.legal, 0).astype(jnp.int32), axis=1)
    priors, policy, bad_policy = net_outputs.policy_priors(logits, valid, temperature)
    wdl, bad_wdl = net_outputs.wdl_probabilities(out.wdl_logits)
    m, bad_m = net_outputs.moves_left(out.moves_left, wdl.shape[0])
    return (LeafOutputs(priors=priors, policy=policy, wdl=wdl, m=m),
            bad_policy | bad_wdl | bad_m)


# --- expand (host) --------------------------------------------------------------------------

HostExpand = Callable[[ExpandRequest], Expansion]


def make_host_expand(expander: Callable[..., Expansion]) -> HostExpand:
    """The host expansion: an ``Expander`` (or ``rules.expand_batch``) applied to the masked
    rows of a request of any leading shape (numpy in, numpy ``Expansion`` of that shape out;
    rows not in the mask are ``Expansion.empty`` rows). The request's ``mate_check`` rows
    are passed on as the expander's third argument (only when there are any)."""

    def host_expand(request: ExpandRequest) -> Expansion:
        mask = np.asarray(request.mask)
        shape = mask.shape
        flat = mask.reshape(-1)
        out = Expansion.empty(flat.shape[0])
        rows = np.nonzero(flat)[0]
        if rows.size:
            parent = PositionArrays(*(np.asarray(f).reshape(flat.shape[0], *np.shape(f)[
                len(shape):])[rows] for f in request.parent))
            moves = np.asarray(request.move).reshape(-1)[rows].astype(np.int16)
            check = np.asarray(request.mate_check).reshape(-1)[rows]
            out.set_rows(rows, expander(parent, moves, check) if check.any()
                         else expander(parent, moves))
        return jax.tree.map(lambda a: a.reshape(*shape, *a.shape[1:]), out)

    return host_expand


def expand(host_expand: HostExpand, request: ExpandRequest) -> Expansion:
    """Run ``host_expand`` on a request from inside jitted code (one ``jax.pure_callback``
    for the whole batch; used by the mctx comparators). Returns device arrays."""
    shape = request.mask.shape
    empty = Expansion.empty(int(np.prod(shape)))
    shapes = jax.tree.map(lambda a: jax.ShapeDtypeStruct((*shape, *a.shape[1:]), a.dtype),
                          empty)
    return jax.pure_callback(host_expand, shapes, request)


# --- prepare --------------------------------------------------------------------------------


class NetInputs(NamedTuple):
    """The evaluation batch: the positions that need the network, compacted, [R]."""

    inputs: LeafInputs  # [R]; rows past ``count`` are padding
    temperature: chex.Array  # float32 [R]
    count: chex.Array  # int32 scalar, rows in use


class Prepared(NamedTuple):
    """What ``finish`` needs of each gathered row, [B, L, ...]."""

    child: PositionArrays  # the new leaf's position
    legal: chex.Array  # int16 [B, L, K]
    num_legal: chex.Array  # int16
    key: chex.Array  # uint32 [B, L, 2] position_hash
    repetitions: chex.Array  # int8 earlier occurrences in game + path (capped at 2)
    status: chex.Array  # int8 GameStatus, with REPETITION from the path
    cache_key: chex.Array  # uint32 [B, L, 2]
    hit: chex.Array  # bool, answered by the cache
    hit_priors: chex.Array  # float16 [B, L, K]
    hit_wdl: chex.Array  # float32 [B, L, 3]
    hit_m: chex.Array  # float32 [B, L] moves left
    mate: chex.Array  # bool [B, L] an ongoing new leaf whose side to move mates in one
    net_row: chex.Array  # int32 row in the evaluation batch, -1 if none


def _per_row(fn: Callable, tree: Tree, *rows: chex.Array) -> Any:
    """``fn(one_tree, *one_row)`` over [B, L] rows (trees vmapped, then rows)."""
    return jax.vmap(lambda t, *r: jax.vmap(lambda *x: fn(t, *x))(*r))(tree, *rows)


def prepare(tree: Tree, params: SearchParams, cache: EvalCache | None, leaves: Leaves,
            expansion: Expansion, history_length: int = eval_cache.FULL_HISTORY
            ) -> tuple[Prepared, NetInputs]:
    """``_prepare`` in the named scope ``prepare``."""
    with jax.named_scope("prepare"):
        return _prepare(tree, params, cache, leaves, expansion, history_length)


def _prepare(tree: Tree, params: SearchParams, cache: EvalCache | None, leaves: Leaves,
             expansion: Expansion, history_length: int = eval_cache.FULL_HISTORY
             ) -> tuple[Prepared, NetInputs]:
    """Repetition draws, network inputs and cache lookups of the new leaves (device; the
    trees are only read).

    A repetition is a draw when the earlier occurrence is inside the tree (two-fold) or
    it is the third occurrence counting the game (lc0's TwoFoldDraws).

    Args:
      tree, params: the batch [B] after the gather.
      cache: the evaluation cache, or None.
      leaves: the gather's ``Leaves`` [B, L].
      expansion: the host's ``Expansion`` [B, L] (rows that are not new leaves ignored).
      history_length: the cache key's history (static; see ``cache``).

    Returns:
      ``Prepared`` [B, L] and the compacted ``NetInputs`` [B * L].
    """
    child = expansion.child
    new = leaves.kind == NEW
    key = position_hash(jnp, child.board, child.turn, child.castling, child.ep)
    parent = jnp.maximum(leaves.parent, 0)
    count, nearest = _per_row(path_occurrences, tree, parent, leaves.depth, key, child.rule50)
    repeated_draw = (count >= 2) | ((count == 1) & (nearest <= leaves.depth))
    ongoing = expansion.status == GameStatus.ONGOING
    status = jnp.where(ongoing & repeated_draw, jnp.int8(GameStatus.REPETITION),
                       expansion.status).astype(jnp.int8)
    reps = jnp.minimum(count, MAX_REPETITIONS).astype(jnp.int8)
    boards, repeated = _per_row(input_history, tree, parent, leaves.depth, child.board, reps > 0)
    inputs = LeafInputs(boards=boards, repeated=repeated, turn=child.turn,
                        castling=child.castling, rule50=child.rule50, legal=expansion.legal,
                        num_legal=expansion.num_legal)
    temperature = jnp.broadcast_to(params.policy_temperature[:, None], new.shape)
    need = new & (status == GameStatus.ONGOING)
    batch, width = new.shape
    if cache is not None:
        ckey = eval_cache.cache_key(key, boards, repeated, child.rule50, temperature,
                                    history_length)
        hit, hit_priors, hit_wdl, hit_m = eval_cache.lookup(cache, ckey.reshape(-1, 2))
        hit = hit.reshape(new.shape) & need
        hit_m = hit_m.reshape(batch, width)
        hit_priors = hit_priors.reshape(batch, width, K)
        hit_wdl = hit_wdl.reshape(batch, width, 3)
    else:
        ckey = jnp.zeros((batch, width, 2), jnp.uint32)
        hit = jnp.zeros_like(need)
        hit_priors = jnp.zeros((batch, width, K), PRIOR_DTYPE)
        hit_wdl = jnp.zeros((batch, width, 3), jnp.float32)
        hit_m = jnp.zeros((batch, width), jnp.float32)
    wants = (need & ~hit).reshape(-1)
    rows = batch * width
    index = jnp.nonzero(wants, size=rows, fill_value=0)[0]
    net_row = jnp.where(wants, jnp.cumsum(wants) - 1, -1).reshape(new.shape).astype(jnp.int32)
    flat = jax.tree.map(lambda a: a.reshape(rows, *a.shape[2:])[index],
                        (inputs, temperature))
    net = NetInputs(inputs=flat[0], temperature=flat[1], count=jnp.sum(wants, dtype=jnp.int32))
    prepared = Prepared(child=child, legal=expansion.legal, num_legal=expansion.num_legal,
                        key=key, repetitions=reps, status=status, cache_key=ckey, hit=hit,
                        hit_priors=hit_priors, hit_wdl=hit_wdl, hit_m=hit_m,
                        mate=(expansion.mate_slot >= 0) & need, net_row=net_row)
    return prepared, net


# --- network --------------------------------------------------------------------------------


def no_outputs(size: int) -> LeafOutputs:
    """Zero outputs for an evaluation batch of ``size`` rows that needs no network."""
    return LeafOutputs(priors=jnp.zeros((size, K), jnp.float32),
                       policy=jnp.zeros((size, K), jnp.float32),
                       wdl=jnp.zeros((size, 3), jnp.float32),
                       m=jnp.zeros((size,), jnp.float32))


def network(apply_fn: Callable, model_params: Any, net: NetInputs, rows: int) -> LeafOutputs:
    """The network on the first ``rows`` (static) rows of the evaluation batch; the outputs
    are padded with zeros to the batch's size R. ``rows`` 0 (no leaf of the step needs the
    network: a shard whose trees are all done, or only terminal or cached leaves) runs no
    network: a model cannot take an empty batch."""
    size = net.temperature.shape[0]
    if rows == 0:
        return no_outputs(size)
    with jax.named_scope("network"):
        part = jax.tree.map(lambda a: a[:rows], net.inputs)
        out = evaluate_leaves(apply_fn, model_params, part, net.temperature[:rows])
    return jax.tree.map(lambda a: jnp.zeros((size, *a.shape[1:]), a.dtype).at[:rows].set(a),
                        out)


# --- finish ---------------------------------------------------------------------------------


def _backup(tree: Tree, params: SearchParams, start: chex.Array, add: chex.Array,
            wl: chex.Array, d: chex.Array, m: chex.Array) -> Tree:
    """Walk every row's path from ``start`` [B, L] (-1: none) up to its root: release one
    visit in flight per node and, where ``add``, add one visit with value (wl, d) (sign
    flipping each ply) and moves left ``m`` (one more each ply up); then freeze the
    search-contempt nodes whose children's visits reached n_scl in this step."""
    batch = tree.batch_size
    num_nodes = tree.num_nodes
    b = jnp.arange(batch)[:, None]
    before = tree.visits

    def walk(c):
        cur, wl, m, visits, in_flight, wl_sum, d_sum, m_sum = c
        idx = jnp.where(cur >= 0, cur, num_nodes)
        visits = visits.at[b, idx].add(add, mode="drop")
        in_flight = in_flight.at[b, idx].add(-1, mode="drop")
        wl_sum = wl_sum.at[b, idx].add(jnp.where(add > 0, wl, 0.0), mode="drop")
        d_sum = d_sum.at[b, idx].add(jnp.where(add > 0, d, 0.0), mode="drop")
        m_sum = m_sum.at[b, idx].add(jnp.where(add > 0, m, 0.0), mode="drop")
        up = jnp.where(cur >= 0, tree.parent[b, jnp.maximum(cur, 0)], -1)
        return up, -wl, m + 1.0, visits, in_flight, wl_sum, d_sum, m_sum

    _, _, _, visits, in_flight, wl_sum, d_sum, m_sum = jax.lax.while_loop(
        lambda c: jnp.any(c[0] >= 0), walk,
        (start, wl, m, tree.visits, tree.in_flight, tree.wl_sum, tree.d_sum, tree.m_sum))
    tree = tree.replace(visits=visits, in_flight=in_flight, wl_sum=wl_sum, d_sum=d_sum,
                        m_sum=m_sum)

    # Search-contempt: an odd-depth node freezes at the backup that brings its children's
    # visits to n_scl (exactly n_scl with one leaf per step; with more, the frozen counts
    # may exceed it by the visits this step added below the node).
    n_scl = params.n_scl[:, None]
    edge_count = tree.edges.child.shape[1]

    def crossing(cur):
        safe = jnp.maximum(cur, 0)
        return ((cur >= 0) & (tree.depth[b, safe] % 2 == 1)
                & (before[b, safe] - 1 < n_scl) & (tree.visits[b, safe] - 1 >= n_scl)
                & (tree.status[b, safe] == GameStatus.ONGOING) & (tree.num_legal[b, safe] > 0))

    def freeze(frozen, cur, hits):
        safe = jnp.maximum(cur, 0)
        slots = tree.edge_start[b, safe][..., None] + jnp.arange(K)  # [B, L, K]
        valid = hits[..., None] & (jnp.arange(K) < tree.num_legal[b, safe][..., None])
        children = tree.edges.child[b[..., None], slots]
        counts = jnp.where(children >= 0,
                           tree.visits[b[..., None], jnp.maximum(children, 0)], 0)
        return frozen.at[b[..., None], jnp.where(valid, slots, edge_count)].set(
            counts, mode="drop")

    def freeze_walk(c):
        cur, frozen, has_frozen = c
        hits = crossing(cur)
        frozen = jax.lax.cond(hits.any(), freeze, lambda f, *_: f, frozen, cur, hits)
        return (jnp.where(cur >= 0, tree.parent[b, jnp.maximum(cur, 0)], -1), frozen,
                has_frozen | hits.any(axis=-1))

    frozen, has_frozen = jax.lax.cond(
        jnp.any(params.n_scl < INFINITE_NSCL),
        lambda f, h: jax.lax.while_loop(lambda c: jnp.any(c[0] >= 0), freeze_walk,
                                        (jnp.where(add > 0, start, -1), f, h))[1:],
        lambda f, h: (f, h), tree.edges.frozen, tree.has_frozen)
    return tree.replace(edges=tree.edges.replace(frozen=frozen), has_frozen=has_frozen)


def child_bounds(tree: Tree, node: chex.Array) -> tuple[chex.Array, chex.Array, chex.Array]:
    """lc0's ``MaybeSetBounds`` for one node of one tree: its (lower, upper) from its
    children's bounds (an edge without an evaluated child: (-1, +1)), and its M if that
    proves it.

    The side to move at ``node`` gets the best of its children: lower = max of their
    lower bounds, upper = max of their upper bounds (children's bounds are already from
    its perspective); the node's own bounds are those negated and swapped. M: 1 + the
    shortest proven win, else 1 + the longest of the children with the proven value.
    """
    edges = node_edges(tree, node)
    safe = jnp.maximum(edges.child, 0)
    has = (edges.child >= 0) & (tree.visits[safe] > 0)  # allocated nodes hold stale bounds
    c_lo = jnp.where(has, tree.lower[safe], -1)
    c_hi = jnp.where(has, tree.upper[safe], 1)
    c_m = tree.plies[safe].astype(jnp.int32)
    lo = jnp.max(jnp.where(edges.valid, c_lo, -1))
    hi = jnp.max(jnp.where(edges.valid, c_hi, -1))
    proven = edges.valid & has & (c_lo == c_hi)
    win_m = jnp.min(jnp.where(proven & (c_lo == 1), c_m, 2**15 - 2))
    other_m = jnp.max(jnp.where(proven & (c_lo == lo), c_m, 0))
    m = jnp.where(lo == 1, win_m, other_m) + 1
    return (-hi).astype(jnp.int8), (-lo).astype(jnp.int8), m.astype(jnp.int16)


def apart(pred: chex.Array, fn: Callable, *operands: Any) -> Any:
    """``fn(*operands)`` as a computation of its own: an XLA conditional on ``pred``, which
    must be true (both branches are ``fn``; a constant would be folded away).

    XLA fuses a read of a loop-carried array into each op that uses the value read. When
    one of those ops writes another array in place, XLA cannot order it before the write
    of the array read, and copies that array whole at every trip of the loop. Reads made
    inside a conditional stay there, and its results are ready before any later write.
    """
    return jax.lax.cond(pred, fn, fn, *operands)


class _Rebound(NamedTuple):
    """``rebound_paths``' loop carry: the walks up one path per tree and the arrays they
    rewrite, [B]."""

    node: chex.Array  # int32 [B] the node being re-bounded (-1: past the root)
    wl: chex.Array  # float32 [B] change of the W-L sum to add at ``node``
    d: chex.Array  # float32 [B] change of the draw sum
    m: chex.Array  # float32 [B] change of the moves-left sum
    lower: chex.Array  # int8 [B, N]
    upper: chex.Array  # int8 [B, N]
    plies: chex.Array  # int16 [B, N]
    wl_sum: chex.Array  # float32 [B, N]
    d_sum: chex.Array  # float32 [B, N]
    m_sum: chex.Array  # float32 [B, N]


def rebound_paths(tree: Tree, start: chex.Array) -> Tree:
    """Re-bound the nodes from ``start`` [B] (-1: none) up to the root of each tree [B].

    A node that becomes proven takes its exact value for all its visits (lc0's
    ``MakeTerminal``; its M becomes its ``plies``), and the change is added to its
    ancestors (lc0's ``AdjustForTerminal``), so their Q and M stay the means of their
    subtrees' values.

    The trees walk in lockstep (a tree past its root writes nothing): a ``vmap``-ed
    walk per tree would carry every tree's arrays through ``select`` at each level."""
    b = jnp.arange(tree.batch_size)
    num_nodes = tree.num_nodes

    def reads(c: _Rebound) -> tuple[chex.Array, ...]:
        safe = jnp.maximum(c.node, 0)
        view = tree.replace(lower=c.lower, upper=c.upper, plies=c.plies)
        lo, hi, m = jax.vmap(child_bounds)(view, safe)
        return (c.wl_sum[b, safe], c.d_sum[b, safe], c.m_sum[b, safe], lo, hi, m,
                c.lower[b, safe] != c.upper[b, safe], c.plies[b, safe])

    def body(c: _Rebound) -> _Rebound:
        cur, cwl, cd, cm, lower, upper, plies, wl_sum, d_sum, m_sum = c
        safe = jnp.maximum(cur, 0)
        idx = jnp.where(cur >= 0, cur, num_nodes)  # out of range: nothing written
        # the loop runs while some tree walks, so ``apart`` reads
        old_wl, old_d, old_m, lo, hi, m, open_, old_plies = apart(jnp.any(cur >= 0), reads, c)
        here_wl, here_d, here_m = old_wl + cwl, old_d + cd, old_m + cm
        newly = (lo == hi) & open_
        visits = tree.visits[b, safe].astype(jnp.float32)
        value_wl, value_d = proven_value(lo)
        dwl = jnp.where(newly, value_wl * visits - here_wl, 0.0)
        dd = jnp.where(newly, value_d * visits - here_d, 0.0)
        dm = jnp.where(newly, m.astype(jnp.float32) * visits - here_m, 0.0)
        wl_sum = wl_sum.at[b, idx].set(here_wl + dwl, mode="drop")
        d_sum = d_sum.at[b, idx].set(here_d + dd, mode="drop")
        m_sum = m_sum.at[b, idx].set(here_m + dm, mode="drop")
        lower = lower.at[b, idx].set(lo, mode="drop")
        upper = upper.at[b, idx].set(hi, mode="drop")
        plies = plies.at[b, idx].set(jnp.where(lo == hi, m, old_plies), mode="drop")
        up = jnp.where(cur >= 0, tree.parent[b, safe], -1)
        return _Rebound(up, -(cwl + dwl), cd + dd, cm + dm, lower, upper, plies,
                        wl_sum, d_sum, m_sum)

    zero = jnp.zeros(tree.batch_size, jnp.float32)
    init = _Rebound(start, zero, zero, zero, tree.lower, tree.upper, tree.plies, tree.wl_sum,
                    tree.d_sum, tree.m_sum)
    out = jax.lax.while_loop(lambda c: jnp.any(c.node >= 0), body, init)
    return tree.replace(lower=out.lower, upper=out.upper, plies=out.plies, wl_sum=out.wl_sum,
                        d_sum=out.d_sum, m_sum=out.m_sum)


def propagate_bounds(tree: Tree, start: chex.Array) -> Tree:
    """Certainty propagation after a step: re-bound every path from ``start`` [B, L]
    (the parents of the step's new game ends; -1: none) to the root, one row at a time
    (so a node changed by one row is read by the next)."""
    return jax.lax.fori_loop(0, start.shape[1],
                             lambda i, t: rebound_paths(t, start[:, i]), tree)


def finish(tree: Tree, params: SearchParams, cache: EvalCache | None, leaves: Leaves,
           prepared: Prepared, outputs: LeafOutputs) -> tuple[Tree, EvalCache | None]:
    """``_finish`` in the named scope ``finish``."""
    with jax.named_scope("finish"):
        return _finish(tree, params, cache, leaves, prepared, outputs)


def _finish(tree: Tree, params: SearchParams, cache: EvalCache | None, leaves: Leaves,
            prepared: Prepared, outputs: LeafOutputs) -> tuple[Tree, EvalCache | None]:
    """Write the new leaves, back every simulation of the step up, update the cache.

    Args:
      tree, params: the batch [B] (after the gather; other groups may have been finished
        since).
      cache: the evaluation cache, or None.
      leaves: the gather's ``Leaves`` [B, L].
      prepared: ``prepare``'s result [B, L].
      outputs: ``network``'s result [R] (ignored where no row needs the network).

    Returns:
      The trees and the cache. A new leaf whose edges do not fit in its tree's edge pool
      is unlinked and counted as dropped, and its tree takes no new node after it.
    """
    batch, width = leaves.kind.shape
    b = jnp.arange(batch)[:, None]
    num_nodes = tree.num_nodes
    pool = tree.edges.child.shape[1]
    new = leaves.kind == NEW
    term = leaves.kind == TERMINAL
    ongoing = new & (prepared.status == GameStatus.ONGOING)
    row = jnp.maximum(prepared.net_row, 0)
    from_net = prepared.net_row >= 0
    priors = jnp.where(prepared.hit[..., None], prepared.hit_priors,
                       outputs.priors[row].astype(PRIOR_DTYPE))
    wdl = jnp.where(prepared.hit[..., None], prepared.hit_wdl, outputs.wdl[row])
    net_m = jnp.where(prepared.hit, prepared.hit_m, outputs.m[row])

    # edges: a contiguous run per new ongoing node, in row order
    need = jnp.where(ongoing, prepared.num_legal.astype(jnp.int32), 0)
    end = tree.edge_count[:, None] + jnp.cumsum(need, axis=1)
    start = end - need
    overflow = ongoing & (end > tree.edge_capacity)
    kept = new & ~overflow
    has_edges = ongoing & ~overflow
    child = tree.edges.child.at[b, jnp.where(overflow, leaves.slot, pool)].set(-1, mode="drop")
    tree = tree.replace(
        edge_count=tree.edge_count + jnp.sum(jnp.where(has_edges, need, 0), axis=1),
        full=tree.full | overflow.any(axis=1),
        dropped=tree.dropped + jnp.sum(overflow, axis=1, dtype=jnp.int32),
        edges=tree.edges.replace(child=child))

    # the new nodes; one whose side to move mates in one (the mate check) is a proven loss
    # for the player who moved into it, one ply from the game's end
    mate = prepared.mate & kept
    lower, upper = status_bounds(prepared.status)
    lower = jnp.where(mate, jnp.int8(-1), lower)
    upper = jnp.where(mate, jnp.int8(-1), upper)
    tree = write_nodes(
        tree, jnp.where(kept, leaves.node, num_nodes), position=prepared.child,
        key=prepared.key, repetitions=prepared.repetitions, status=prepared.status,
        lower=lower, upper=upper, plies=jnp.where(mate, 1, 0).astype(jnp.int16),
        num_legal=prepared.num_legal, edge_start=jnp.where(has_edges, start, 0),
        raw_wdl=jnp.where(ongoing[..., None], wdl, jnp.nan), visits=0, wl_sum=0.0, d_sum=0.0,
        m_sum=0.0)
    slots = start[..., None] + jnp.arange(K)  # [B, L, K]
    slots = jnp.where(has_edges[..., None] & (jnp.arange(K) < need[..., None]), slots, pool)
    b3 = b[..., None]
    tree = tree.replace(edges=tree.edges.replace(
        move=tree.edges.move.at[b3, slots].set(prepared.legal, mode="drop"),
        prior=tree.edges.prior.at[b3, slots].set(priors, mode="drop"),
        child=tree.edges.child.at[b3, slots].set(-1, mode="drop"),
        frozen=tree.edges.frozen.at[b3, slots].set(0, mode="drop")))

    # values: the network's (or the cache's) for a new ongoing leaf, the result of a
    # terminal one (or one proven by the mate check), the stored result of a terminal node
    # visited again
    new_wl, new_d = proven_value(lower)
    old_wl, old_d = proven_value(tree.lower[b, jnp.maximum(leaves.node, 0)])
    valued = ongoing & ~mate
    wl = jnp.where(term, old_wl, jnp.where(valued, wdl[..., 2] - wdl[..., 0], new_wl))
    d = jnp.where(term, old_d, jnp.where(valued, wdl[..., 1], new_d))
    # moves left: the network's for a new ongoing leaf, 0 at a game end, a proven
    # node's plies when visited again (lc0 backs up a terminal's M)
    old_m = tree.plies[b, jnp.maximum(leaves.node, 0)].astype(jnp.float32)
    m = jnp.where(term, old_m, jnp.where(valued, net_m, jnp.where(mate, 1.0, 0.0)))
    backed = kept | term
    walk_from = jnp.where(backed | overflow, leaves.node, -1)
    with jax.named_scope("backup"):
        tree = _backup(tree, params, walk_from, backed.astype(jnp.int32), wl, d, m)
    ended = kept & ((prepared.status != GameStatus.ONGOING) | mate) & params.certainty[:, None]
    with jax.named_scope("certainty"):
        tree = jax.lax.cond(ended.any(), propagate_bounds, lambda t, _: t, tree,
                            jnp.where(ended, tree.parent[b, jnp.maximum(leaves.node, 0)], -1))

    depth = jnp.where(backed, leaves.depth + 1, 0)  # lc0: the root is depth 1
    stats = tree.stats
    tree = tree.replace(stats=stats.replace(
        playouts=stats.playouts + jnp.sum(backed, axis=1, dtype=jnp.int32),
        depth_sum=stats.depth_sum + jnp.sum(depth, axis=1, dtype=jnp.int32),
        max_depth=jnp.maximum(stats.max_depth, jnp.max(depth, axis=1)),
        nn_evals=stats.nn_evals + jnp.sum(from_net, axis=1, dtype=jnp.int32),
        cache_hits=stats.cache_hits + jnp.sum(prepared.hit, axis=1, dtype=jnp.int32)))
    if cache is not None:
        cache = eval_cache.insert(cache, prepared.cache_key.reshape(-1, 2),
                                  priors.reshape(-1, K), wdl.reshape(-1, 3),
                                  from_net.reshape(-1), net_m.reshape(-1))
    return tree, cache
