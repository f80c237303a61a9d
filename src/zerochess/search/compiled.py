"""The whole search as one compiled program (one ``jax.lax.while_loop``, no host callback):
``run_steps`` for ``Searcher`` on device rules, ``search`` as a pure function for RL code."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import chex
import jax
import jax.numpy as jnp
import numpy as np

from zerochess.chess.types import NUM_MOVES, Expansion, GameStatus
from zerochess.errors import ConfigError
from zerochess.search import loop, step
from zerochess.search.cache import EvalCache
from zerochess.search.config import SELECTION_NAMES
from zerochess.search.gather import ExpandRequest, Leaves
from zerochess.search.loop import SearchState

# (parent PositionArrays [n], move [n], mate_check [n], mask [n]) -> Expansion [n]
DeviceExpand = Callable[..., Expansion]


class StepCounts(NamedTuple):
    """What a ``run_steps`` call did (the host pipeline's ``PipelineStats`` counters)."""

    steps: chex.Array  # int32 groups evaluated
    rows_used: chex.Array  # int32 new, ongoing leaves (the network's candidates)
    rows_available: chex.Array  # int32 rows of the evaluation batches the network ran on
    left: chex.Array  # int32 simulations the batch has left to start at the end
    nonfinite: chex.Array  # bool [B] a network output for a leaf of the tree was not finite


def _expand(expand_fn: DeviceExpand, request: ExpandRequest) -> Expansion:
    return expand_fn(request.parent, request.move, request.mate_check, request.mask)


def _evaluate(state: SearchState, cache: EvalCache | None, leaves: Leaves,
              expansion: Expansion, bound: chex.Array, model_params: Any, apply_fn: Callable,
              history_length: int, buckets: tuple[int, ...]
              ) -> tuple[step.Prepared, step.LeafOutputs, chex.Array]:
    """``step.prepare`` then the network on the smallest bucket that holds ``bound`` rows
    (none for 0), as the host loop picks it; with bool [R]: the row's network outputs were
    not finite (``net_outputs``)."""
    def prepare(state, cache, leaves, expansion):
        return step.prepare(state.tree, state.params, cache, leaves, expansion, history_length)

    # apart: the network inputs read the trees' positions, which ``finish`` then writes
    # (read in the loop body itself, XLA would copy the trees every step)
    prepared, net = step.apart(bound >= 0, prepare, state, cache, leaves, expansion)
    size = net.temperature.shape[0]
    branches = [lambda n: (step.no_outputs(size), jnp.zeros((size,), jnp.bool_))] + [
        (lambda n, rows=rows: network(apply_fn, model_params, n, rows)) for rows in buckets]
    branch = jnp.where(bound > 0, 1 + jnp.searchsorted(jnp.asarray(buckets), bound), 0)
    outputs, bad = jax.lax.switch(branch, branches, net)
    return prepared, outputs, bad


def network(apply_fn: Callable, model_params: Any, net: step.NetInputs, rows: int
            ) -> tuple[step.LeafOutputs, chex.Array]:
    """``step.network`` with bool [R]: the row's network outputs were not finite."""
    size = net.temperature.shape[0]
    with jax.named_scope("network"):  # the profile's phase (zerochess.bench.profile)
        part = jax.tree.map(lambda a: a[:rows], net.inputs)
        out, bad = step.evaluate_checked(apply_fn, model_params, part,
                                         net.temperature[:rows])
    return jax.tree.map(lambda a: jnp.zeros((size, *a.shape[1:]), a.dtype).at[:rows].set(a),
                        (out, bad))


def run_steps(state: SearchState, cache: EvalCache | None, limit: chex.Array,
              max_steps: chex.Array, model_params: Any, apply_fn: Callable, num_leaves: int,
              history_length: int, buckets: tuple[int, ...], expand_fn: DeviceExpand
              ) -> tuple[SearchState, EvalCache | None, StepCounts]:
    """Up to ``max_steps`` search steps of every tree towards ``limit`` simulations.

    Args:
      state: the batch [B] with no leaves in flight (as every call leaves it).
      cache: the evaluation cache, or None.
      limit: int32 [B] simulation count each tree should reach.
      max_steps: int32 scalar (data): steps of this call; the last finishes its group and
        gathers no new one, so the next call (or the results) find no visits in flight.
      model_params: the network's parameters (data).
      apply_fn, num_leaves, history_length, buckets, expand_fn: static (see docs/DESIGN.md;
        ``buckets`` are the network sizes, ascending, the last B * L).

    Returns:
      The state, the cache and the ``StepCounts``.
    """
    zero = jnp.int32(0)

    def body(c):
        # one step as the host runs it: gather, expand, evaluate, back up; the host stops
        # after the step whose gather left no simulation to start
        state, cache, counts, _ = c
        state, leaves, request, left = loop.select(state, limit, num_leaves)
        expansion = _expand(expand_fn, request)
        bound = jnp.sum(request.mask & (expansion.status == GameStatus.ONGOING),
                        dtype=jnp.int32)
        prepared, outputs, bad = _evaluate(state, cache, leaves, expansion, bound,
                                           model_params, apply_fn, history_length, buckets)
        # [B, L] -> [B]: the rows of the evaluation batch that hold each tree's leaves
        row = prepared.net_row.reshape(prepared.net_row.shape[0], -1)
        nonfinite = counts.nonfinite | jnp.any(
            (row >= 0) & bad[jnp.maximum(row, 0)], axis=1)
        tree, cache = step.finish(state.tree, state.params, cache, leaves, prepared, outputs)
        size = jnp.asarray(buckets)[jnp.minimum(jnp.searchsorted(jnp.asarray(buckets), bound),
                                                len(buckets) - 1)]
        counts = StepCounts(steps=counts.steps + 1, rows_used=counts.rows_used + bound,
                            rows_available=counts.rows_available + jnp.where(bound > 0, size, 0),
                            left=jnp.sum(left), nonfinite=nonfinite)
        going = jnp.any(left > 0) & (counts.steps < max_steps)
        return state.replace(tree=tree), cache, counts, going

    batch = state.stopped.shape[0]
    carry = (state, cache, StepCounts(zero, zero, zero, zero, jnp.zeros((batch,), jnp.bool_)),
             max_steps > 0)
    state, cache, counts, _ = jax.lax.while_loop(lambda c: c[-1], body, carry)
    return state, cache, counts


# --- a pure search function for RL code ----------------------------------------------------------

NO_ACTION = -1  # ``SearchOutput.action`` of a tree that gives no move (see ``search``)


class SearchOutput(NamedTuple):
    """The result of ``search`` for a batch [B] of roots (see ``search`` for the contract
    of ended roots, non-finite network outputs and per-tree settings out of range)."""

    action: chex.Array  # int32 [B] the best move (lc0 1858 index; lc0's choice rule), or
    #                     NO_ACTION (-1): the root had ended, the tree was not searched
    #                     (limit 0) or its settings were out of range
    action_weights: chex.Array  # float32 [B, 1858] root child visits, normalised (policy
    #                             target; all 0 where no simulation ran)
    visits: chex.Array  # int32 [B, 218] root child visits by legal-move slot
    legal: chex.Array  # int16 [B, 218] the root's legal moves (1858 indices, -1 padded)
    value: chex.Array  # float32 [B] root Q for the side to move (W - L + draw_score * D);
    #                    an ended root's true value
    wdl: chex.Array  # float32 [B, 3] root W/D/L for the side to move (an ended root's own)
    state: SearchState  # the trees (``zerochess.search.results`` reads them)
    root_ended: chex.Array  # bool [B] the root's game was over (mate, stalemate, a draw,
    #                         an illegal move): not searched, true value, NO_ACTION
    nonfinite_outputs: chex.Array  # bool [B] the network gave NaN or inf for a position of
    #                                the tree (made safe, lc0's way: ``net_outputs``)
    bad_settings: chex.Array  # bool [B] per-tree settings (``params``, ``limits``) out of
    #                           range under jit (not searched, NO_ACTION; eager: an error)
    dropped: chex.Array  # int32 [B] simulations not run because the tree was full
    #                      (``num_nodes`` or ``edges_per_node`` too small): the root has
    #                      that many fewer visits than its limit


def _keys(rng_key: Any, batch: int, name: str) -> chex.Array:
    """uint32 [B, 2] raw keys from one key (typed or legacy raw)."""
    from zerochess.validation import as_rng_key

    keys = jax.random.key_data(jax.random.split(as_rng_key(rng_key, name), batch))
    if keys.shape != (batch, 2):
        raise ConfigError(f"{name} must be a threefry key (jax's default: uint32 [2] per "
                          f"key), got a {jax.random.key_impl(as_rng_key(rng_key, name))} "
                          f"key")
    return keys


def roots_from_env(states: Any, rng_key: chex.Array) -> loop.RootInputs:
    """``RootInputs`` [B] from ``zerochess.env.State`` [B] (device, jittable): the position,
    its legal moves, the game before it (history planes and repetition keys), one key per
    tree from ``rng_key`` (``jax.random.key(seed)`` or a legacy ``jax.random.PRNGKey(seed)``).
    The mate check at the roots (a mate in one, else a check that forces a mate in two,
    found on the device) is looked for when the trees ask for it.

    A state whose game is over (``terminated``: mate, stalemate, insufficient material,
    the 50-move rule, a threefold repetition, an illegal move) gives an ended root
    (``search``: not searched, its true value, ``NO_ACTION``)."""
    batch = _batch_of(states, "states")
    return roots_with_keys(states, _keys(rng_key, batch, "rng_key"))


# the ``zerochess.env.State`` fields ``roots_with_keys`` reads: name -> (dtype kinds,
# the shape after the batch dimension, whether a State-like object may leave it out)
_STATE_FIELDS: dict[str, tuple[str, tuple[int, ...], bool]] = {
    "position.board": ("iu", (64,), False), "position.turn": ("iu", (), False),
    "position.castling": ("iu", (), False), "position.ep": ("iu", (), False),
    "position.rule50": ("iu", (), False), "position.fullmove": ("iu", (), False),
    "boards": ("iu", (8, 64), False), "repeated": ("b", (8,), False),
    "keys": ("u", (101, 2), False), "num_keys": ("iu", (), False),
    "status": ("iu", (), True), "terminated": ("b", (), True),
}
_KINDS = {"iu": "integers", "u": "unsigned integers", "b": "bools", "f": "floats"}


def _batch_of(states: Any, name: str) -> int:
    """B of a batch of ``zerochess.env.State``, after checking (at trace time) that it is
    one: at least one game, every field [B, ...], the fields read of the right kind and
    shape (a ``ConfigError`` naming the field, what it got and what was expected)."""
    turn = getattr(getattr(states, "position", None), "turn", None)
    if turn is None or getattr(turn, "ndim", None) != 1:
        raise ConfigError(f"{name} must be a batch [B] of zerochess.env.State (start_states "
                          f"or jax.vmap(env.init)), got "
                          f"{_shape_text(turn) if turn is not None else type(states).__name__}")
    batch = int(turn.shape[0])
    if batch < 1:
        raise ConfigError(f"{name} must hold at least one game, got a batch of 0")
    for path, leaf in _leaves(states):
        if getattr(leaf, "ndim", 0) < 1 or leaf.shape[0] != batch:
            raise ConfigError(f"{name}.{path} must have the batch size {batch} first (every "
                              f"State field does), got {_shape_text(leaf)}")
    for field, (kinds, trailing, optional) in _STATE_FIELDS.items():
        leaf = states
        for part in field.split("."):
            leaf = getattr(leaf, part, None)
        if leaf is None and optional:
            continue
        dtype = getattr(leaf, "dtype", None)
        if dtype is None or np.dtype(dtype).kind not in kinds or tuple(leaf.shape[1:]) != (
                trailing):
            raise ConfigError(f"{name}.{field} must be {_KINDS[kinds]} [{batch}"
                              f"{''.join(f', {d}' for d in trailing)}] (a zerochess.env."
                              f"State), got "
                              f"{_shape_text(leaf) if leaf is not None else 'nothing'}")
    return batch


def _shape_text(value: Any) -> str:
    return f"{getattr(value, 'dtype', type(value).__name__)}{list(getattr(value, 'shape', ()))}"


def roots_with_keys(states: Any, keys: chex.Array) -> loop.RootInputs:
    """``roots_from_env`` with each tree's key given: typed keys [B] or raw uint32 [B, 2]."""
    from zerochess.chess import device  # the rules backend of this entry point
    from zerochess.chess.types import REPETITION_WINDOW, RootHistory

    batch = _batch_of(states, "states")
    dtype = getattr(keys, "dtype", None)
    if dtype is not None and jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key):
        keys = jax.random.key_data(keys)
        dtype = keys.dtype
    if dtype != jnp.uint32 or tuple(keys.shape) != (batch, 2):
        raise ConfigError(f"keys must be {batch} typed keys or raw uint32 [{batch}, 2] keys "
                          f"(one per state), got {_shape_text(keys)}")
    pos = states.position
    legal, num = jax.vmap(device.legal_moves)(pos)
    status = jnp.where(num == 0, jax.vmap(device.status)(pos), GameStatus.ONGOING)
    # a game the environment ended (a draw by rule, or lost by an illegal move: its
    # player is still to move, pgx's rule) is an ended root, valued as the game ended
    env_status = getattr(states, "status", None)
    if env_status is not None:
        status = jnp.where(status != GameStatus.ONGOING, status, env_status.astype(status.dtype))
        terminated = getattr(states, "terminated", None)
        if terminated is not None:
            status = jnp.where(terminated & (status == GameStatus.ONGOING),
                               jnp.asarray(GameStatus.CHECKMATE, status.dtype), status)
    count = jax.vmap(device.repetitions)(states.keys[:, 0], states.keys[:, 1:],
                                         jnp.maximum(states.num_keys - 1, 0), pos.rule50)
    history = RootHistory(boards=states.boards[:, 1:], repeated=states.repeated[:, 1:],
                          keys=states.keys[:, 1:REPETITION_WINDOW + 1],
                          num_keys=jnp.maximum(states.num_keys - 1, 0).astype(jnp.int32),
                          repetitions=jnp.minimum(count, 2).astype(jnp.int8))
    return loop.RootInputs(position=pos, legal=legal.astype(jnp.int16),
                           num_legal=num.astype(jnp.int16), status=status.astype(jnp.int8),
                           history=history, rng_key=keys.astype(jnp.uint32),
                           mate_slot=jnp.full(num.shape, -1, jnp.int16))


# per-tree settings checked by ``search``: name -> (test of a good value with numpy or
# jax.numpy, what is expected)
_SETTINGS: dict[str, tuple[Callable[[Any, Any], Any], str]] = {
    "policy_temperature": (lambda x, xp: xp.isfinite(x) & (x > 0), "a finite number > 0"),
    "draw_score": (lambda x, xp: xp.isfinite(x) & (xp.abs(x) <= 1), "a number in [-1, 1]"),
    "cpuct": (lambda x, xp: xp.isfinite(x) & (x >= 0), "a finite number >= 0"),
    "cpuct_root": (lambda x, xp: xp.isfinite(x) & (x >= 0), "a finite number >= 0"),
    "fpu_value": (lambda x, xp: xp.isfinite(x), "a finite number"),
    "fpu_value_root": (lambda x, xp: xp.isfinite(x), "a finite number"),
    "dirichlet_alpha": (lambda x, xp: xp.isfinite(x) & (x >= 0), "a finite number >= 0"),
    "dirichlet_epsilon": (lambda x, xp: (x >= 0) & (x <= 1), "a number in [0, 1]"),
    "cpuct_base": (lambda x, xp: xp.isfinite(x) & (x > 0), "a finite number > 0"),
    "cpuct_base_root": (lambda x, xp: xp.isfinite(x) & (x > 0), "a finite number > 0"),
    "cpuct_factor": (lambda x, xp: xp.isfinite(x) & (x >= 0), "a finite number >= 0"),
    "cpuct_factor_root": (lambda x, xp: xp.isfinite(x) & (x >= 0), "a finite number >= 0"),
    "pb_c_init": (lambda x, xp: xp.isfinite(x) & (x >= 0), "a finite number >= 0"),
    "pb_c_base": (lambda x, xp: xp.isfinite(x) & (x > 0), "a finite number > 0"),
    "sc_temperature": (lambda x, xp: xp.isfinite(x) & (x >= 0), "a finite number >= 0"),
    "n_scl": (lambda x, xp: x >= 1, "an integer >= 1"),
    "selection": (lambda x, xp: (x >= 0) & (x < len(SELECTION_NAMES)),
                  f"a rule index in [0, {len(SELECTION_NAMES)}) (SELECTION_NAMES)"),
}


@functools.lru_cache(maxsize=1)
def _params_spec() -> dict[str, tuple[np.dtype, tuple[int, ...]]]:
    """field -> (dtype, shape after B) of ``stack_configs``'s ``SearchParams``."""
    from zerochess.search.config import SearchConfig
    from zerochess.search.params import stack_configs

    return {name: (np.dtype(leaf.dtype), tuple(leaf.shape[1:]))
            for name, leaf in _leaves(stack_configs([SearchConfig()]))}


def _check_params(params: Any, batch: int) -> Any:
    """``params`` checked at trace time against ``stack_configs``'s ``SearchParams`` (the
    type, each field's batch, kind and shape; a ``ConfigError`` naming the field), with
    every field a jax array of its dtype (a float field may be given as any real dtype, an
    integer field as any integer dtype; numpy fields are read as jax arrays)."""
    from zerochess.search.params import SearchParams

    if not isinstance(params, SearchParams):
        raise ConfigError(f"params must be SearchParams [B] (zerochess.search.stack_configs, "
                          f"one SearchConfig per root), got {type(params).__name__}")
    spec = _params_spec()
    casts = {}
    for name, leaf in _leaves(params):
        if getattr(leaf, "ndim", 0) < 1 or leaf.shape[0] != batch:
            raise ConfigError(f"params.{name} must have the roots' batch size {batch} first, "
                              f"got {_shape_text(leaf)} (stack_configs one SearchConfig per "
                              f"root)")
        dtype, trailing = spec[name]
        kinds = {"f": "fiu", "i": "iu", "b": "b"}[dtype.kind]
        if np.dtype(leaf.dtype).kind not in kinds or tuple(leaf.shape[1:]) != trailing:
            raise ConfigError(f"params.{name} must be {dtype}[{batch}"
                              f"{''.join(f', {d}' for d in trailing)}] (stack_configs), got "
                              f"{_shape_text(leaf)}")
        if leaf.dtype != dtype or not isinstance(leaf, jax.Array):
            casts[name] = jnp.asarray(leaf, dtype)  # numpy fields (edited on the host) too
    return params.replace(**casts) if casts else params


def _concrete(x: Any) -> bool:
    return not isinstance(x, jax.core.Tracer)


def _check_trees(params: Any, limits: Any, num_simulations: int, batch: int
                 ) -> tuple[chex.Array, chex.Array]:
    """Batch agreement (trace time), then the per-tree settings: an error naming the tree
    where they are concrete, else bool [B] (the trees whose settings are out of range).
    Returns (limit int32 [B], bad bool [B])."""
    bad = jnp.zeros((batch,), jnp.bool_)
    for name, (good, expected) in _SETTINGS.items():
        value = getattr(params, name, None)
        if value is None:
            continue
        if _concrete(value):  # numpy: jax.numpy would be traced under jit
            ok = good(np.asarray(value), np)
            if not ok.all():
                tree = int(np.argmin(ok))
                raise ConfigError(f"params.{name} of tree {tree} must be {expected}, got "
                                  f"{np.asarray(value)[tree].item()!r}")
        else:
            bad = bad | ~good(value, jnp)
    limit = jnp.full((batch,), num_simulations, jnp.int32)
    if limits is None:
        return limit, bad
    if not hasattr(limits, "shape"):
        limits = np.asarray(limits)
    if tuple(limits.shape) != (batch,) or not jnp.issubdtype(limits.dtype, jnp.integer):
        raise ConfigError(f"limits must be integers [{batch}] (one per root), got "
                          f"{_shape_text(limits)}")
    if _concrete(limits):
        values = np.asarray(limits)
        ok = (values >= 0) & (values <= num_simulations)
        if not ok.all():
            tree = int(np.argmin(ok))
            raise ConfigError(f"limits[{tree}] must be in [0, num_simulations="
                              f"{num_simulations}], got {int(values[tree])}")
    else:
        bad = bad | (limits < 0) | (limits > num_simulations)
    return jnp.clip(jnp.asarray(limits, jnp.int32), 0, num_simulations), bad


def _leaves(tree: Any) -> list[tuple[str, Any]]:
    flat, _ = jax.tree_util.tree_flatten_with_path(tree)
    return [(jax.tree_util.keystr(path).lstrip("."), leaf) for path, leaf in flat]


def _static_args(num_simulations: Any, num_nodes: Any, num_leaves: Any, edges_per_node: Any,
                 history_length: Any) -> tuple[int, int, int, int, int]:
    """The static arguments of ``search``, checked (``ConfigError`` naming the argument)."""
    from zerochess.search.tree import K
    from zerochess.validation import MAX_INT32, as_count

    num_simulations, num_nodes, num_leaves, edges_per_node, history_length = (
        _static(v, n) for v, n in ((num_simulations, "num_simulations"),
                                   (num_nodes, "num_nodes"), (num_leaves, "num_leaves"),
                                   (edges_per_node, "edges_per_node"),
                                   (history_length, "history_length")))
    sims = as_count(num_simulations, "num_simulations", 1, MAX_INT32 - 1)
    nodes = sims + 1 if num_nodes is None else as_count(num_nodes, "num_nodes", 2, MAX_INT32)
    leaves = as_count(num_leaves, "num_leaves", 1, 1 << 16)
    edges = K if edges_per_node is None else as_count(edges_per_node, "edges_per_node", 1, K)
    history = as_count(history_length, "history_length", 0, 7)
    return sims, nodes, leaves, edges, history


def _static(value: Any, name: str) -> Any:
    """A static argument: a concrete integer jax scalar as an int; a traced value is an
    error that says the argument must be static (it sets the arrays' shapes)."""
    if isinstance(value, jax.core.Tracer):
        raise ConfigError(f"{name} must be static (a Python int: it sets array shapes), got a "
                          f"traced {_shape_text(value)}; close over it or mark it static "
                          f"(jax.jit(..., static_argnames=...))")
    if isinstance(value, jax.Array) and value.ndim == 0 and jnp.issubdtype(value.dtype,
                                                                           jnp.integer):
        return int(value)
    return value


def _check_memory(batch: int, num_nodes: int, edges_per_node: int) -> None:
    """Refuse (trace time) an edge pool past int32 indices (an OverflowError from inside
    the tree's allocation) and trees that cannot fit in the memory of all devices together
    (a batch may be sharded over them), which would compile and then fail to allocate."""
    from zerochess.search.memory import check_tree_memory, default_node_bytes
    from zerochess.validation import MAX_INT32

    if num_nodes * edges_per_node > MAX_INT32:  # the edge pool is indexed with int32
        raise ConfigError(f"num_nodes={num_nodes:,} with edges_per_node={edges_per_node} "
                          f"make an edge pool of {num_nodes * edges_per_node:,} entries, more "
                          f"than int32 indices reach ({MAX_INT32:,}); give fewer simulations "
                          f"or nodes, or a smaller edges_per_node")
    check_tree_memory(batch, num_nodes, f"num_nodes (with edges_per_node={edges_per_node})",
                      node_bytes=default_node_bytes(edges_per_node), devices=jax.device_count())


def _check_apply_fn(apply_fn: Any) -> None:
    """``apply_fn`` must be callable as ``apply_fn(model_params, planes)``."""
    import inspect

    if not callable(apply_fn):
        raise ConfigError(f"apply_fn must be the network function (Model.apply), got "
                          f"{type(apply_fn).__name__}")
    try:
        signature = inspect.signature(apply_fn)
    except (TypeError, ValueError):  # a builtin or C callable: nothing to check
        return
    try:
        signature.bind(None, None)
    except TypeError:
        raise ConfigError(f"apply_fn must take (model_params, planes), got "
                          f"{getattr(apply_fn, '__name__', type(apply_fn).__name__)}"
                          f"{signature}") from None


def search(model_params: Any, roots: loop.RootInputs, params: Any, num_simulations: int,
           apply_fn: Callable, num_nodes: int | None = None, num_leaves: int = 1,
           edges_per_node: int | None = None, history_length: int = 7,
           limits: chex.Array | None = None) -> SearchOutput:
    """A batch of searches from ``roots`` as one pure function (jit it; scan or shard it).

    Contract (see also ``SearchOutput``):

    - *Ended roots* (the game is over at the root: checkmate, stalemate, or an ended
      ``zerochess.env`` game; ``roots_from_env``) are not searched. ``value`` and ``wdl``
      are the true result for the side to move: -1 and (0, 0, 1) when mated (or having
      lost by an illegal move), ``draw_score`` and (0, 1, 0) for a draw; ``action`` is
      ``NO_ACTION`` (-1), ``action_weights`` are all 0 and ``root_ended`` is set.
    - *Non-finite network outputs* never become a move: a legal move with a NaN/inf
      logit gets prior 0, a position with no finite logit a uniform policy over its legal
      moves, a non-finite WDL a uniform W/D/L (value 0) (``net_outputs``), and the tree's
      ``nonfinite_outputs`` is set.
    - *Settings*: the static arguments, the batch sizes of ``roots``, ``params`` and
      ``limits`` and ``apply_fn``'s outputs are checked at trace time (``ConfigError``
      naming the argument). Per-tree settings out of range (``policy_temperature`` not
      > 0, ``draw_score`` outside [-1, 1], NaN, ``limits`` outside [0, num_simulations])
      are an error when they are concrete; under jit (traced data) such a tree is not
      searched, its ``action`` is ``NO_ACTION`` and ``bad_settings`` is set.
    - A tree with ``limits`` 0 is not searched (an idle slot): ``action`` ``NO_ACTION``.
    - *A full tree* (``num_nodes`` below ``num_simulations + 1``, or an edge pool of
      ``edges_per_node`` that fills) runs its remaining simulations as no-ops: the root
      gets fewer visits than its limit, and ``dropped`` counts them per tree.
    - The static arguments are Python ints (a concrete integer jax scalar is read as
      one; a traced one is an error that says to make it static). ``roots`` from
      ``roots_from_env`` check that ``states`` is a batch of at least one
      ``zerochess.env.State`` (each field's batch, kind and shape); ``params`` must be
      ``SearchParams`` with ``stack_configs``'s fields, kinds and shapes (float fields in
      any real dtype are cast to float32); ``apply_fn`` must take ``(model_params,
      planes)``; trees that do not fit in the devices' memory together are refused
      before anything compiles. Per-tree settings checked for range: the temperatures,
      draw score, the cpuct family, FPU, Dirichlet noise, AlphaZero's ``pb_c_*``,
      ``sc_temperature``, ``n_scl`` (>= 1) and ``selection`` (an index of
      ``SELECTION_NAMES``).

    Args:
      model_params: the network's parameters (data: new weights do not recompile).
      roots: ``RootInputs`` [B] (``roots_from_env``).
      params: ``SearchParams`` [B] (``zerochess.search.stack_configs``): per-tree data.
      num_simulations: simulations per tree (static, >= 1).
      apply_fn: the network (``Model.apply``; static): ``apply_fn(model_params, planes
        float32 [R, 112, 8, 8])`` returns ``(policy_logits [R, 1858], wdl_logits [R, 3],
        moves_left [R] or None)`` as a tuple or a NamedTuple (any real dtype).
      num_nodes: tree size N (static, >= 2; default ``num_simulations + 1``).
      num_leaves: L, leaves per tree and step (static, >= 1).
      edges_per_node: the edge pool per node (static; default K: a tree never fills).
      history_length: the evaluation cache's key history (no cache here; static, 0 to 7).
      limits: int [B] simulations of each tree (data, 0 to ``num_simulations``; default
        ``num_simulations`` for every tree).

    Returns:
      ``SearchOutput``.
    """
    from zerochess.chess import device

    num_simulations, num_nodes, num_leaves, edges_per_node, history_length = _static_args(
        num_simulations, num_nodes, num_leaves, edges_per_node, history_length)
    _check_apply_fn(apply_fn)
    num_legal = getattr(roots, "num_legal", None)
    if num_legal is None or getattr(num_legal, "ndim", None) != 1:
        raise ConfigError(f"roots must be RootInputs [B] (roots_from_env), got "
                          f"{type(roots).__name__}")
    batch = num_legal.shape[0]
    if batch < 1:
        raise ConfigError("roots must hold at least one tree, got a batch of 0")
    for name, leaf in _leaves(roots):
        if getattr(leaf, "ndim", 0) < 1 or leaf.shape[0] != batch:
            raise ConfigError(f"roots.{name} must have the batch size {batch} first, got "
                              f"{_shape_text(leaf)}")
    for name in ("legal", "num_legal", "status", "mate_slot"):
        leaf = getattr(roots, name)
        if not jnp.issubdtype(leaf.dtype, jnp.integer):
            raise ConfigError(f"roots.{name} must be integers (roots_from_env), got "
                              f"{_shape_text(leaf)}")
    roots = jax.tree.map(jnp.asarray, roots)  # numpy roots (made on the host) under a trace
    params = _check_params(params, batch)
    _check_memory(batch, num_nodes, edges_per_node)
    limit, bad = _check_trees(params, limits, num_simulations, batch)
    ended = (roots.status != GameStatus.ONGOING) | (roots.num_legal <= 0)
    state = loop.empty_state(params, num_nodes, edges_per_node)
    rows = batch * num_leaves
    check = params.mate_check & (roots.mate_slot < 0)
    mate = device.root_mate_slots(roots.position, roots.legal, roots.num_legal,
                                  check & (roots.status == GameStatus.ONGOING))
    roots = roots.replace(mate_slot=jnp.where(roots.mate_slot >= 0, roots.mate_slot, mate))
    net = loop.root_net_inputs(roots, params, jnp.int32(batch), rows)
    outputs, root_bad = network(apply_fn, model_params, net, rows)
    state = loop.write_roots(state, jnp.arange(batch, dtype=jnp.int32), roots, params, outputs)
    limit = jnp.where(ended | bad, 0, limit)
    state, _, counts = run_steps(state, None, limit, jnp.int32(np.iinfo(np.int32).max),
                                 model_params, apply_fn, num_leaves, history_length,
                                 loop.network_buckets(rows), device.expand)
    return _output(state, roots, ended, root_bad[:batch] | counts.nonfinite, bad)


def _output(state: SearchState, roots: loop.RootInputs, ended: chex.Array,
            nonfinite: chex.Array, bad: chex.Array) -> SearchOutput:
    from zerochess.search.tree import node_edges
    from zerochess.search.view import best_child_slot, root_scores, root_values

    tree = state.tree

    def per_tree(tree, draw_score):
        edges = node_edges(tree, jnp.int32(0))
        visits = jnp.where(edges.child >= 0, tree.visits[jnp.maximum(edges.child, 0)], 0)
        return visits, best_child_slot(tree, jnp.int32(0), draw_score)

    visits, best_slot = jax.vmap(per_tree)(tree, state.params.draw_score)  # [B, K], [B]
    legal = roots.legal
    batch = legal.shape[0]
    total = jnp.maximum(jnp.sum(visits, axis=1, keepdims=True), 1).astype(jnp.float32)
    weights = jnp.zeros((batch, NUM_MOVES), jnp.float32).at[
        jnp.arange(batch)[:, None], jnp.where(legal >= 0, legal, NUM_MOVES)].set(
        visits / total, mode="drop")
    best = jnp.take_along_axis(legal, jnp.maximum(best_slot, 0)[:, None], axis=1)[:, 0]
    value, wdl = root_scores(*jax.vmap(root_values)(tree), state.params.draw_score)
    wdl = jnp.stack(wdl, axis=1)
    # an ended root: its true value for the side to move (mated: a loss; else a draw)
    mated = roots.status == GameStatus.CHECKMATE
    true_wdl = jnp.where(mated[:, None], jnp.array([0.0, 0.0, 1.0]), jnp.array([0.0, 1.0, 0.0]))
    true_value = jnp.where(mated, -1.0, state.params.draw_score)
    searched = ~ended & ~bad & (best_slot >= 0)
    return SearchOutput(action=jnp.where(searched, best, NO_ACTION).astype(jnp.int32),
                        action_weights=jnp.where(ended[:, None], 0.0, weights), visits=visits,
                        legal=legal, value=jnp.where(ended, true_value, value).astype(jnp.float32),
                        wdl=jnp.where(ended[:, None], true_wdl, wdl).astype(jnp.float32),
                        state=state, root_ended=ended, nonfinite_outputs=nonfinite,
                        bad_settings=bad, dropped=tree.dropped.astype(jnp.int32))


__all__ = ["NO_ACTION", "DeviceExpand", "SearchOutput", "StepCounts", "network",
           "roots_from_env", "roots_with_keys", "run_steps", "search"]
