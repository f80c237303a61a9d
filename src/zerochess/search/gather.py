"""Gathering: the leaves of one search step, up to L per tree, as lc0 gathers a minibatch."""

from __future__ import annotations

from typing import NamedTuple

import chex
import jax
import jax.numpy as jnp

from zerochess.chess.types import PositionArrays
from zerochess.search.params import SearchParams
from zerochess.search.selection import (
    NO_FROZEN,
    BatchShortcuts,
    batch_shortcuts,
    select_child,
    simulation_bits,
    uniform_at_depth,
)
from zerochess.search.tree import Tree, is_terminal, node_edges

EMPTY, NEW, TERMINAL, DROPPED = 0, 1, 2, 3  # Leaves.kind


class Leaves(NamedTuple):
    """The simulations of one step, [B, L]: row j of tree b is its j-th non-colliding descent."""

    kind: chex.Array  # int8 EMPTY (no simulation), NEW, TERMINAL or DROPPED
    node: chex.Array  # int32 the new node (NEW) or the terminal node (TERMINAL), else -1
    parent: chex.Array  # int32 NEW: the node the new leaf hangs from
    slot: chex.Array  # int32 NEW: the pool index of its edge
    move: chex.Array  # int16 NEW: the edge's lc0 1858 move index
    depth: chex.Array  # int32 depth of ``node`` (root 0)


class ExpandRequest(NamedTuple):
    """What the host needs to expand the new leaves, [B, L]."""

    parent: PositionArrays  # the positions the new leaves' moves are played in
    move: chex.Array  # int16 lc0 1858 index of the move to play
    mask: chex.Array  # bool, rows to expand; the others come back as ``Expansion.empty`` rows
    mate_check: chex.Array  # bool, rows whose child is checked for a mate in one


class _Descent(NamedTuple):
    node: chex.Array  # int32
    slot: chex.Array  # int32 pool index of the chosen edge, -1 at a terminal node
    child: chex.Array  # int32 the chosen edge's child (-1: none; meaningless at a terminal)
    depth: chex.Array  # int32
    done: chex.Array  # bool


class _Gather(NamedTuple):
    in_flight: chex.Array  # int32 [B, N]
    held: chex.Array  # int32 [B, N] in-flight visits of collisions, released at the end
    visits: chex.Array  # int32 [B, N]
    child: chex.Array  # int32 [B, E + K] pool children
    parent: chex.Array  # int32 [B, N]
    depth: chex.Array  # int16 [B, N]
    node_count: chex.Array  # int32 [B]
    draws: chex.Array  # int32 [B]
    count: chex.Array  # int32 [B] simulations gathered (rows used)
    collisions: chex.Array  # int32 [B]
    dropped: chex.Array  # int32 [B]
    leaves: Leaves  # [B, L]


def collision_budget(params: SearchParams, root_visits: chex.Array) -> chex.Array:
    """Collisions one tree may have in one step (lc0 ``CalculateCollisionsLeft``), [B]."""
    n = root_visits.astype(jnp.float32)
    start, end = params.collision_scaling_start, params.collision_scaling_end
    high = params.max_collision_visits.astype(jnp.float32)
    ratio = jnp.clip((n - start) / jnp.maximum(end - start, 1.0), 0.0, 1.0)
    mixed = jnp.round(1.0 + (high - 1.0) * ratio ** params.collision_scaling_power)
    budget = jnp.where(n >= end, high, jnp.where(n <= start, 1.0, mixed))
    return jnp.minimum(budget, params.max_collision_events.astype(jnp.float32)).astype(jnp.int32)


def _descend(tree: Tree, params: SearchParams, bits: chex.Array,
             rule: int | None = None, shortcuts: BatchShortcuts | None = None) -> _Descent:
    """One descent of one (unbatched) tree from its root (``tree`` holds the gather's
    current in-flight counts and children); ``rule``, ``shortcuts``: see
    ``select_child``."""

    def body(c: _Descent) -> _Descent:
        term = is_terminal(tree.lower[c.node], tree.upper[c.node], tree.num_legal[c.node],
                           c.node == 0)
        edges = node_edges(tree, c.node)
        slot = select_child(tree, params, c.node, c.depth, uniform_at_depth(bits, c.depth),
                            edges, rule, shortcuts)
        child = edges.child[slot]
        stop = term | (child < 0) | (tree.visits[jnp.maximum(child, 0)] == 0)
        return _Descent(node=jnp.where(stop, c.node, child),
                        slot=jnp.where(term, -1, edges.start + slot), child=child,
                        depth=jnp.where(stop, c.depth, c.depth + 1), done=stop)

    start = _Descent(node=jnp.int32(0), slot=jnp.int32(-1), child=jnp.int32(-1),
                     depth=jnp.int32(0),
                     done=jnp.bool_(False))
    return jax.lax.while_loop(lambda c: ~c.done, body, start)


def _add_paths(in_flight: chex.Array, held: chex.Array, parent: chex.Array, node: chex.Array,
               hold: chex.Array) -> tuple[chex.Array, chex.Array]:
    """One visit in flight on ``node`` [B] and each of its ancestors (``in_flight`` [B, N]),
    also in ``held`` where ``hold`` [B]; -1: nothing."""
    b = jnp.arange(node.shape[0])
    num_nodes = in_flight.shape[1]

    def body(c):
        node, in_flight, held = c
        idx = jnp.where(node >= 0, node, num_nodes)
        in_flight = in_flight.at[b, idx].add(1, mode="drop")
        held = held.at[b, jnp.where(hold, idx, num_nodes)].add(1, mode="drop")
        return jnp.where(node >= 0, parent[b, jnp.maximum(node, 0)], -1), in_flight, held

    _, in_flight, held = jax.lax.while_loop(lambda c: jnp.any(c[0] >= 0), body,
                                            (node, in_flight, held))
    return in_flight, held


def gather(tree: Tree, params: SearchParams, quota: chex.Array,
           num_leaves: int) -> tuple[Tree, Leaves]:
    """Gather the leaves of one step of every tree.

    Args:
      tree: the batch [B].
      params: per-tree hyperparameters [B].
      quota: int32 [B] simulations each tree may start in this step (0: none), at most
        ``num_leaves``.
      num_leaves: L, the rows per tree (static).

    Returns:
      The trees with the new leaves allocated and linked, visits in flight added,
      ``simulations``, ``draws``, ``dropped`` and the collision counter advanced; and the
      ``Leaves`` [B, L].

    The trees descend in lockstep (descent k of every tree that is still gathering),
    so the loops carry no per-tree copies of the tree arrays.
    """
    batch, num_nodes = tree.batch_size, tree.num_nodes
    b = jnp.arange(batch)
    pool = tree.edges.child.shape[1]
    budget = collision_budget(params, tree.visits[:, 0])
    shortcuts = batch_shortcuts(tree, params)  # frozen counts change only in the backup
    room = ~tree.full
    shape = (batch, num_leaves)
    empty = Leaves(kind=jnp.zeros(shape, jnp.int8), node=jnp.full(shape, -1, jnp.int32),
                   parent=jnp.full(shape, -1, jnp.int32), slot=jnp.full(shape, -1, jnp.int32),
                   move=jnp.full(shape, -1, jnp.int16), depth=jnp.zeros(shape, jnp.int32))

    def going(g: _Gather) -> chex.Array:
        return (g.count < quota) & (g.collisions < budget)

    def body(g: _Gather) -> _Gather:
        active = going(g)
        view = tree.replace(in_flight=g.in_flight, visits=g.visits, parent=g.parent,
                            edges=tree.edges.replace(child=g.child))
        # the random bits serve only frozen search-contempt nodes (``select_child``)
        bits = jax.lax.cond(shortcuts.frozen == NO_FROZEN,
                            lambda: jnp.zeros(batch, jnp.uint32),
                            lambda: jax.vmap(simulation_bits)(tree.rng_key, g.draws))
        # a batch of lc0 PUCT trees (the usual case) skips the other rules
        d = jax.lax.cond(jnp.all(params.selection == 0),
                         lambda: jax.vmap(lambda t, p, x: _descend(t, p, x, 0, shortcuts))(
                             view, params, bits),
                         lambda: jax.vmap(lambda t, p, x: _descend(t, p, x, None, shortcuts))(
                             view, params, bits))
        term = d.slot < 0
        # the descent's own read of the child (read here from ``g.child``, XLA would copy
        # the pool at every descent: ``step.apart``)
        child = d.child
        collision = active & ~term & (child >= 0)
        new = active & ~term & (child < 0)
        term = active & term
        make = new & room & (g.node_count < num_nodes)
        index = jnp.where(make, g.node_count, num_nodes)  # out of range: nothing written
        kind = jnp.where(term, TERMINAL, jnp.where(make, NEW, DROPPED)).astype(jnp.int8)
        leaf = jnp.where(term, d.node, jnp.where(make, index, -1))
        parent = g.parent.at[b, index].set(d.node, mode="drop")
        # the path of a leaf gets one visit in flight, the leaf included; a collision's
        # path stops at the collided node's parent and is released after the gather
        in_flight = g.in_flight.at[b, index].set(0, mode="drop")
        path_end = jnp.where(collision, d.node, jnp.where(make | term, leaf, -1))
        in_flight, held = _add_paths(in_flight, g.held, parent, path_end, collision)
        row = jnp.where(active & ~collision, g.count, num_leaves)  # collisions take no row

        def put(arr, value):
            return arr.at[b, row].set(value.astype(arr.dtype), mode="drop")

        leaves = Leaves(
            kind=put(g.leaves.kind, kind), node=put(g.leaves.node, leaf),
            parent=put(g.leaves.parent, jnp.where(term, -1, d.node)),
            slot=put(g.leaves.slot, jnp.where(term, -1, d.slot)),
            move=put(g.leaves.move, jnp.where(
                term, -1, tree.edges.move[b, jnp.maximum(d.slot, 0)])),
            depth=put(g.leaves.depth, d.depth + new.astype(jnp.int32)))
        return _Gather(
            in_flight=in_flight, held=held, visits=g.visits.at[b, index].set(0, mode="drop"),
            child=g.child.at[b, jnp.where(make, d.slot, pool)].set(index, mode="drop"),
            parent=parent,
            depth=g.depth.at[b, index].set((d.depth + 1).astype(jnp.int16), mode="drop"),
            node_count=g.node_count + make.astype(jnp.int32),
            draws=g.draws + active.astype(jnp.int32),
            count=g.count + (active & ~collision).astype(jnp.int32),
            collisions=g.collisions + collision.astype(jnp.int32),
            dropped=g.dropped + (new & ~make).astype(jnp.int32), leaves=leaves)

    zeros = jnp.zeros(batch, jnp.int32)
    start = _Gather(in_flight=tree.in_flight, held=jnp.zeros_like(tree.in_flight),
                    visits=tree.visits, child=tree.edges.child, parent=tree.parent,
                    depth=tree.depth, node_count=tree.node_count, draws=tree.draws,
                    count=zeros, collisions=zeros, dropped=zeros, leaves=empty)
    g = jax.lax.while_loop(lambda g: jnp.any(going(g)), body, start)
    tree = tree.replace(
        in_flight=g.in_flight - g.held, visits=g.visits, parent=g.parent, depth=g.depth,
        edges=tree.edges.replace(child=g.child), node_count=g.node_count, draws=g.draws,
        simulations=tree.simulations + g.count, dropped=tree.dropped + g.dropped,
        stats=tree.stats.replace(collisions=tree.stats.collisions + g.collisions))
    return tree, g.leaves


def expand_request(tree: Tree, leaves: Leaves, mate_check: chex.Array | None = None
                   ) -> ExpandRequest:
    """The new leaves' parent positions and moves, [B, L] (device); ``mate_check`` bool [B]
    (``SearchParams.mate_check``): the trees whose new leaves are checked for a mate in one."""
    b = jnp.arange(tree.batch_size)[:, None]
    parent = jax.tree.map(lambda field: field[b, jnp.maximum(leaves.parent, 0)], tree.position)
    mask = leaves.kind == NEW
    check = mask & (False if mate_check is None else mate_check[:, None])
    return ExpandRequest(parent=parent, move=leaves.move, mask=mask, mate_check=check)
