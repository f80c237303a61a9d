"""One simulation of every tree of a batch, in four parts:

- ``select`` (device): descend each tree to the edge of a new leaf, or to a terminal node;
- ``expand`` (host): python-chess plays each new leaf's move (``ExpandRequest`` in,
  ``zerochess.chess.rules.Expansion`` out);
- ``evaluate`` (device): draws by repetition along the path, the network on the leaves;
- ``backup`` (device): write the new leaves into the trees, add their values up to the roots.

``select``, ``evaluate`` and ``backup`` are pure functions of the tree pytree, each
jittable on its own; ``expand`` calls the host through ``jax.pure_callback`` so
that ``loop.simulate`` can chain all four inside one compiled program.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import chex
import jax
import jax.numpy as jnp
import numpy as np

from zerochess.chess.encoding import planes_from_arrays
from zerochess.chess.history import MAX_REPETITIONS
from zerochess.chess.rules import Expansion, GameStatus
from zerochess.chess.state import PositionArrays, position_hash
from zerochess.search.config import SearchParams
from zerochess.search.history import input_history, path_occurrences
from zerochess.search.selection import select_child, simulation_bits, uniform_at_depth
from zerochess.search.tree import K, Tree, is_terminal, terminal_value, write_nodes

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


def evaluate_leaves(apply_fn: Callable, model_params: Any, inputs: LeafInputs,
                    temperature: chex.Array) -> LeafOutputs:
    """The network on B positions.

    Args:
      apply_fn: ``Model.apply``.
      model_params: its parameters.
      inputs: the positions.
      temperature: float32 [B] policy softmax temperature per position.

    Returns:
      ``LeafOutputs``; priors and policy are 0 past ``num_legal``.
    """
    planes = planes_from_arrays(jnp, inputs.boards, inputs.repeated, inputs.turn,
                                inputs.castling, inputs.rule50)
    out = apply_fn(model_params, planes)
    valid = jnp.arange(K)[None, :] < inputs.num_legal[:, None]
    logits = jnp.take_along_axis(out.policy_logits,
                                 jnp.maximum(inputs.legal, 0).astype(jnp.int32), axis=1)
    logits = jnp.where(valid, logits, -jnp.inf)
    safe = jnp.where(valid.any(axis=1, keepdims=True), logits, 0.0)
    priors = jnp.where(valid, jax.nn.softmax(safe / temperature[:, None], axis=1), 0.0)
    policy = jnp.where(valid, jax.nn.softmax(safe, axis=1), 0.0)
    wdl = jax.nn.softmax(out.wdl_logits.astype(jnp.float32), axis=-1)
    return LeafOutputs(priors=priors, policy=policy, wdl=wdl)


# --- select ---------------------------------------------------------------------------------


class Leaves(NamedTuple):
    """Where this simulation of each tree ends. All [B]."""

    node: chex.Array  # int32, the deepest existing node of the path
    slot: chex.Array  # int32, the edge of ``node`` to the new leaf; -1: ``node`` is terminal
    depth: chex.Array  # int32, the depth of ``node``
    active: chex.Array  # bool, the tree simulates in this step
    new: chex.Array  # bool, a new node is created at edge (node, slot)
    revisit: chex.Array  # bool, ``node`` is terminal: its result is backed up again
    dropped: chex.Array  # bool, a new node was needed but the tree is full: no backup


class _Descent(NamedTuple):
    node: chex.Array  # int32
    slot: chex.Array  # int32
    depth: chex.Array  # int32
    done: chex.Array  # bool


def _descend(tree: Tree, params: SearchParams) -> tuple[chex.Array, chex.Array, chex.Array]:
    """(node, slot, depth) scalars of one tree's descent from its root (see ``Leaves``)."""
    bits = simulation_bits(tree.rng_key, tree.simulations)

    def body(c: _Descent) -> _Descent:
        term = is_terminal(tree.status[c.node], tree.num_legal[c.node], c.node == 0)
        u = uniform_at_depth(bits, c.depth)
        slot = select_child(tree, params, c.node, c.depth, u)
        child = tree.edge_child[c.node, slot]
        stop = term | (child < 0)
        return _Descent(node=jnp.where(stop, c.node, child), slot=jnp.where(term, -1, slot),
                        depth=jnp.where(stop, c.depth, c.depth + 1), done=stop)

    start = _Descent(node=jnp.int32(0), slot=jnp.int32(-1), depth=jnp.int32(0),
                     done=jnp.bool_(False))
    end = jax.lax.while_loop(lambda c: ~c.done, body, start)
    return end.node, end.slot, end.depth


def select(tree: Tree, params: SearchParams, active: chex.Array) -> Leaves:
    """Descend every tree from its root by its selection rule.

    Args:
      tree: the batch [B].
      params: per-tree hyperparameters [B].
      active: bool [B], the trees that simulate in this step.

    Returns:
      ``Leaves`` [B].
    """
    node, slot, depth = jax.vmap(_descend)(tree, params)
    room = tree.node_count < tree.num_nodes
    wants_node = (slot >= 0) & active
    return Leaves(node=node, slot=slot, depth=depth, active=active, new=wants_node & room,
                  revisit=(slot < 0) & active, dropped=wants_node & ~room)


# --- expand ---------------------------------------------------------------------------------


class ExpandRequest(NamedTuple):
    """What the host needs to expand the new leaves. All [B]."""

    parent: PositionArrays  # the positions at ``Leaves.node``
    move: chex.Array  # int16 1858 index of the edge (node, slot) to play
    mask: chex.Array  # bool, rows to expand; the others come back as ``Expansion.empty`` rows


HostExpand = Callable[[ExpandRequest], Expansion]


def expand_request(tree: Tree, leaves: Leaves) -> ExpandRequest:
    """Gather the new leaves' parents and moves [B] (device)."""
    b = jnp.arange(tree.batch_size)
    parent = jax.tree.map(lambda field: field[b, leaves.node], tree.position)
    move = tree.edge_move[b, leaves.node, jnp.maximum(leaves.slot, 0)]
    return ExpandRequest(parent=parent, move=move, mask=leaves.new)


def make_host_expand(expander: Callable[[PositionArrays, np.ndarray], Expansion]) -> HostExpand:
    """The host part of ``expand``: an ``Expander`` (or ``rules.expand_batch``) applied to
    the masked rows of a request (numpy in, numpy ``Expansion`` [B] out)."""

    def host_expand(request: ExpandRequest) -> Expansion:
        mask = np.asarray(request.mask)
        out = Expansion.empty(mask.shape[0])
        rows = np.nonzero(mask)[0]
        if rows.size:
            parent = PositionArrays(*(np.asarray(f)[rows] for f in request.parent))
            out.set_rows(rows, expander(parent, np.asarray(request.move)[rows].astype(np.int16)))
        return out

    return host_expand


def expand(host_expand: HostExpand, request: ExpandRequest) -> Expansion:
    """Run ``host_expand`` on a request from inside jitted code (one ``jax.pure_callback``
    for the whole batch). Returns the ``Expansion`` [B] as device arrays."""
    shapes = jax.tree.map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype),
                          Expansion.empty(request.move.shape[0]))
    return jax.pure_callback(host_expand, shapes, request)


# --- evaluate -------------------------------------------------------------------------------


class Evaluation(NamedTuple):
    """What the device adds to the host's expansion of each new leaf. All [B, ...]."""

    key: chex.Array  # uint32 [B, 2] position_hash of the leaf
    repetitions: chex.Array  # int8 [B] earlier occurrences in game + path (capped at 2)
    status: chex.Array  # int8 [B] the expansion's GameStatus, or REPETITION
    priors: chex.Array  # float32 [B, K] at the tree's policy temperature
    wdl: chex.Array  # float32 [B, 3] network WDL for the side to move at the leaf
    wl: chex.Array  # float32 [B] W - L to back up, mover-into-leaf perspective
    d: chex.Array  # float32 [B] D to back up


def evaluate(apply_fn: Callable, model_params: Any, tree: Tree, params: SearchParams,
             leaves: Leaves, expansion: Expansion) -> Evaluation:
    """Repetition draws and the network on the new leaves.

    A repetition is a draw when the earlier occurrence is inside the tree (two-fold)
    or it is the third occurrence counting the game (lc0's TwoFoldDraws).

    Args:
      apply_fn, model_params: the network.
      tree, params: the batch [B] as selected from (before ``backup``).
      leaves: ``select``'s result.
      expansion: ``expand``'s result, [B] (rows not in ``leaves.new`` are ignored).

    Returns:
      ``Evaluation`` [B]; ``wl``/``d`` are the terminal result for a terminal leaf and
      for a revisited terminal node, else the network's value.
    """
    child = expansion.child
    depth = leaves.depth + 1
    key = position_hash(jnp, child.board, child.turn, child.castling, child.ep)
    count, nearest = jax.vmap(path_occurrences)(tree, leaves.node, depth, key, child.rule50)
    repeated_draw = (count >= 2) | ((count == 1) & (nearest <= depth))
    status = jnp.where((expansion.status == GameStatus.ONGOING) & repeated_draw,
                       jnp.int8(GameStatus.REPETITION), expansion.status)
    reps = jnp.minimum(count, MAX_REPETITIONS).astype(jnp.int8)
    boards, repeated = jax.vmap(input_history)(tree, leaves.node, depth, child.board, reps > 0)
    net = evaluate_leaves(
        apply_fn, model_params,
        LeafInputs(boards=boards, repeated=repeated, turn=child.turn, castling=child.castling,
                   rule50=child.rule50, legal=expansion.legal, num_legal=expansion.num_legal),
        params.policy_temperature)
    term_wl, term_d = terminal_value(status)
    terminal = status != GameStatus.ONGOING
    wl = jnp.where(terminal, term_wl, net.wdl[:, 2] - net.wdl[:, 0])
    d = jnp.where(terminal, term_d, net.wdl[:, 1])
    old_wl, old_d = terminal_value(tree.status[jnp.arange(tree.batch_size), leaves.node])
    return Evaluation(key=key, repetitions=reps, status=status, priors=net.priors, wdl=net.wdl,
                      wl=jnp.where(leaves.revisit, old_wl, wl),
                      d=jnp.where(leaves.revisit, old_d, d))


# --- backup ---------------------------------------------------------------------------------


class _Ascent(NamedTuple):
    node: chex.Array  # int32, -1 past the root
    wl: chex.Array  # float32, W - L from the side of the player who moved into ``node``
    visits: chex.Array  # int32 [N]
    wl_sum: chex.Array  # float32 [N]
    d_sum: chex.Array  # float32 [N]
    freeze: chex.Array  # int32, node to freeze or -1


def _add_value(tree: Tree, params: SearchParams, leaf: chex.Array, wl: chex.Array,
               d: chex.Array, active: chex.Array) -> _Ascent:
    """Add one visit with value (wl, d) from ``leaf`` up to the root of one tree.

    Returns the final carry: new visits, wl_sum, d_sum [N] and the node to freeze
    (search-contempt: an odd-depth node whose children now hold exactly n_scl visits), or -1.
    """

    def body(c: _Ascent) -> _Ascent:
        visits = c.visits.at[c.node].add(1)
        hits = (tree.depth[c.node] % 2 == 1) & (visits[c.node] - 1 == params.n_scl)
        return _Ascent(node=tree.parent[c.node], wl=-c.wl, visits=visits,
                       wl_sum=c.wl_sum.at[c.node].add(c.wl), d_sum=c.d_sum.at[c.node].add(d),
                       freeze=jnp.where(hits & (tree.num_legal[c.node] > 0), c.node, c.freeze))

    start = _Ascent(node=jnp.where(active, leaf, -1), wl=wl, visits=tree.visits,
                    wl_sum=tree.wl_sum, d_sum=tree.d_sum, freeze=jnp.int32(-1))
    return jax.lax.while_loop(lambda c: c.node >= 0, body, start)


def backup(tree: Tree, params: SearchParams, leaves: Leaves, expansion: Expansion,
           evaluation: Evaluation) -> Tree:
    """Write the new leaves into the trees and back their values up.

    Args:
      tree, params: the batch [B] as selected from.
      leaves: ``select``'s result.
      expansion: ``expand``'s result [B].
      evaluation: ``evaluate``'s result [B].

    Returns:
      The trees after this simulation: new nodes linked, visits and value sums updated
      along each path, search-contempt nodes frozen when they reach n_scl, and the
      counters (nodes, dropped simulations, simulations) advanced.
    """
    b = jnp.arange(tree.batch_size)
    num_nodes = tree.num_nodes
    new = jnp.where(leaves.new, tree.node_count, num_nodes)  # out of range: nothing written
    tree = write_nodes(
        tree, new, parent=leaves.node, depth=(leaves.depth + 1).astype(jnp.int16),
        position=expansion.child, key=evaluation.key, repetitions=evaluation.repetitions,
        status=evaluation.status, num_legal=expansion.num_legal, raw_wdl=evaluation.wdl,
        edge_move=expansion.legal, edge_prior=evaluation.priors)
    tree = tree.replace(
        edge_child=tree.edge_child.at[b, jnp.where(leaves.new, leaves.node, num_nodes),
                                      jnp.maximum(leaves.slot, 0)].set(new, mode="drop"),
        node_count=tree.node_count + leaves.new.astype(jnp.int32),
        dropped=tree.dropped + leaves.dropped.astype(jnp.int32),
    )
    leaf = jnp.where(leaves.new, new, leaves.node)
    added = jax.vmap(_add_value)(tree, params, leaf, evaluation.wl, evaluation.d,
                                 leaves.new | leaves.revisit)
    safe_freeze = jnp.maximum(added.freeze, 0)
    children = tree.edge_child[b, safe_freeze]  # [B, K]
    child_visits = jnp.where(children >= 0,
                             jnp.take_along_axis(added.visits, jnp.maximum(children, 0), axis=1),
                             0)
    frozen = tree.frozen.at[b, jnp.where(added.freeze >= 0, added.freeze, num_nodes)].set(
        child_visits, mode="drop")
    return tree.replace(visits=added.visits, wl_sum=added.wl_sum, d_sum=added.d_sum,
                        frozen=frozen,
                        simulations=tree.simulations + leaves.active.astype(jnp.int32))
