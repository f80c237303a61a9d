"""Self-play on the device: a batch of games as one compiled ``lax.scan`` over plies.

Each ply every slot's position is searched (``search.compiled.search``: device rules,
each tree with the ``SearchParams`` of the side to move, so PUCT and search-contempt play
each other in one batch), a move is chosen with lc0's temperature rule
(``GetBestChildWithTemperature``: visits + offset to the power 1 / T among the moves
within the value cutoff; T from the side's ``TemperatureSchedule`` at the game's ply) and
played in the environment (``zerochess.env``). A finished game's slot takes the next
opening of the queue at once. What each ply searched is written into device buffers
(the training examples' fields: the position's lc0 planes as masks and values, the
policy target over its legal moves, the root and best-move values), read once at the end
into ``Examples``.

Randomness: game g's search at ply p draws from ``fold_in(fold_in(key, g), p)`` and its
move choice from another fold of the same key; so a game depends on (seed, game, ply),
not on its slot or the batch size.

Against the host game loop (``games.loop``), same settings: the searches are the same
program (identical trees for identical keys), but two things differ, so the games are
not the host's move for move: the keys (the host derives a tree's key from
``search_seed(game_seed, ply)`` through numpy, the move choice's uniform from a numpy
``Generator``; here both come from jax's threefry), and the end of a game (the host asks
python-chess's ``outcome(claim_draw=True)``, which also ends a game one ply early when a
move *could* claim the 50-move rule or a threefold repetition; here a game ends when the
position is a draw: halfmove clock 100, third occurrence, as lc0's and pgx's games do).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import chex
import jax
import jax.numpy as jnp
import numpy as np

from zerochess.chess.types import MAX_LEGAL_MOVES, GameStatus
from zerochess.env import Env, State, start_states
from zerochess.search import loop
from zerochess.search.compiled import roots_with_keys, search
from zerochess.search.config import SearchConfig, stack_configs
from zerochess.search.results import TemperatureSchedule
from zerochess.search.tree import node_edges

MOVE_TAG = 0x7E3F  # the move choice's branch of a game's key at a ply


class PlyRecord(NamedTuple):
    """What one ply of the scan writes for every slot, [P, B, ...]."""

    game: chex.Array  # int32 the game in the slot (-1: none)
    ply: chex.Array  # int32 the game's ply of the position searched
    action: chex.Array  # int32 the move played (lc0 1858 index)
    plane_bits: chex.Array  # uint8 [112, 8]
    plane_values: chex.Array  # float32 [112]
    policy_index: chex.Array  # int16 [218]
    policy_target: chex.Array  # float32 [218]
    root_q: chex.Array  # float32, side to move
    root_d: chex.Array
    best_q: chex.Array
    best_d: chex.Array
    white: chex.Array  # bool: white to move
    ended: chex.Array  # bool: the game ended with this move
    status: chex.Array  # int8 GameStatus after the move (ONGOING at the move cap)
    white_reward: chex.Array  # float32 the final reward of white if ``ended``


class Games(NamedTuple):
    """The games of a ``play`` call (host)."""

    moves: list[list[int]]  # each game's moves (lc0 indices), in order
    results: list[str]  # "1-0", "0-1", "1/2-1/2", or "*" (not finished)
    terminations: list[str]  # checkmate, stalemate, ..., "move cap", "unfinished"
    examples: Any  # training.examples.Examples of every searched position


def _planes_compact(observation: chex.Array) -> tuple[chex.Array, chex.Array]:
    """lc0's mask-and-value form of float32 [112, 8, 8] planes (device)."""
    flat = observation.reshape(112, 64)
    mask = flat != 0
    values = jnp.max(jnp.abs(flat), axis=1) * jnp.sign(jnp.sum(flat, axis=1))
    bits = jnp.sum(jnp.where(mask.reshape(112, 8, 8), 1 << jnp.arange(8, dtype=jnp.int32), 0),
                   axis=2).astype(jnp.uint8)
    return bits, values.astype(jnp.float32)


def _choose(visits: chex.Array, q: chex.Array, best: chex.Array, temperature: chex.Array,
            offset: chex.Array, cutoff: chex.Array, u: chex.Array) -> chex.Array:
    """lc0's ``GetBestChildWithTemperature`` for one root: the slot to play."""
    n = visits.astype(jnp.float32) + offset
    max_n = jnp.max(n)
    qq = jnp.where(jnp.isnan(q), -jnp.inf, q)
    ok = qq >= qq[jnp.argmax(n)] - cutoff / 50.0
    weights = jnp.where(ok, jnp.power(jnp.maximum(n / jnp.maximum(max_n, 1e-30), 0.0),
                                      1.0 / jnp.maximum(temperature, 1e-6)), 0.0)
    cdf = jnp.cumsum(weights)
    pick = jnp.searchsorted(cdf / jnp.maximum(cdf[-1], 1e-30), u, side="right")
    pick = jnp.minimum(pick, visits.shape[0] - 1).astype(jnp.int32)
    return jnp.where((temperature <= 0) | (max_n <= 0) | (cdf[-1] <= 0), best, pick)


def _root_q(tree: Any, draw_score: chex.Array) -> tuple[chex.Array, chex.Array]:
    """Per root child: Q and D from the side to move (NaN unvisited), [K]."""
    edges = node_edges(tree, jnp.int32(0))
    safe = jnp.maximum(edges.child, 0)
    n = jnp.where(edges.child >= 0, tree.visits[safe], 0).astype(jnp.float32)
    wl = tree.wl_sum[safe] / jnp.maximum(n, 1)
    d = tree.d_sum[safe] / jnp.maximum(n, 1)
    visited = n > 0
    return (jnp.where(visited, wl + draw_score * d, jnp.nan), jnp.where(visited, d, jnp.nan))


def _roots(states: State, keys: chex.Array) -> loop.RootInputs:
    return roots_with_keys(states, keys)


def make_scan(model: Any, batch: int, plies: int, num_simulations: int, max_plies: int,
              env: Env | None = None):
    """The compiled scan: ``run(model_params, states, game, start_ply, queue, next_game,
    white_params, black_params, temps, key) -> (carry, PlyRecord [plies, B])``."""
    env = env or Env()

    def one_ply(carry, _, model_params, queue, white_params, black_params, temps, key):
        states, game, start_ply, next_game = carry
        ply = start_ply + states.step_count  # the game's ply of this position
        white = states.position.turn == 1
        game_keys = jax.vmap(lambda g, p: jax.random.key_data(jax.random.fold_in(
            jax.random.fold_in(jax.random.wrap_key_data(key), g), p)))(jnp.maximum(game, 0),
                                                                       ply)
        params = jax.tree.map(lambda w, b: jnp.where(
            white.reshape((-1,) + (1,) * (w.ndim - 1)), w, b), white_params, black_params)
        roots = _roots(states, game_keys)
        out = search(model_params, roots, params, num_simulations, apply_fn=model.apply,
                     edges_per_node=MAX_LEGAL_MOVES)
        q, d = jax.vmap(_root_q)(out.state.tree, params.draw_score)
        side = jnp.where(white, 0, 1)
        t = temps[side, jnp.clip(ply, 0, temps.shape[1] - 1)]  # [B, 3]: T, offset, cutoff
        u = jax.vmap(lambda k: jax.random.uniform(jax.random.fold_in(
            jax.random.wrap_key_data(k), MOVE_TAG)))(game_keys)
        best_slot = jnp.argmax(out.legal == out.action[:, None], axis=1).astype(jnp.int32)
        slot = jax.vmap(_choose)(out.visits, q, best_slot, t[:, 0], t[:, 1], t[:, 2], u)
        action = jnp.take_along_axis(out.legal, slot[:, None], axis=1)[:, 0].astype(jnp.int32)
        total = jnp.maximum(jnp.sum(out.visits, axis=1, keepdims=True), 1)
        n = out.legal >= 0
        target = jnp.where(n, out.visits / total, 0.0)
        target = jnp.where(jnp.sum(out.visits, axis=1, keepdims=True) > 0, target,
                           n / jnp.maximum(jnp.sum(n, axis=1, keepdims=True), 1))
        bits, values = jax.vmap(_planes_compact)(states.observation)
        active = game >= 0
        after = jax.vmap(env.step)(states, action)
        capped = (ply + 1 >= max_plies) & ~after.terminated
        ended = active & (after.terminated | capped)
        mover = states.current_player
        reward = jnp.take_along_axis(after.rewards, mover[:, None], axis=1)[:, 0]
        white_reward = jnp.where(white, reward, -reward)
        record = PlyRecord(
            game=jnp.where(active, game, -1), ply=ply, action=action, plane_bits=bits,
            plane_values=values, policy_index=out.legal, policy_target=target.astype(
                jnp.float32), root_q=out.value, root_d=out.wdl[:, 1],
            best_q=jnp.take_along_axis(q, best_slot[:, None], axis=1)[:, 0],
            best_d=jnp.take_along_axis(d, best_slot[:, None], axis=1)[:, 0],
            white=white, ended=ended, status=after.status,
            white_reward=jnp.where(capped, 0.0, white_reward))
        # a finished game's slot takes the next opening
        order = jnp.cumsum(ended, dtype=jnp.int32) - 1 + next_game  # queue index per slot
        refill = ended & (order < queue.position.turn.shape[0])
        fresh = jax.tree.map(lambda a: a[jnp.clip(order, 0, a.shape[0] - 1)], queue)
        states = jax.tree.map(lambda a, b: jnp.where(
            refill.reshape((-1,) + (1,) * (a.ndim - 1)), a, b), fresh, after)
        game = jnp.where(refill, order, jnp.where(ended, -1, game))
        start = jax.vmap(_game_ply)(fresh.position)
        start_ply = jnp.where(refill, start, start_ply)
        next_game = next_game + jnp.sum(refill, dtype=jnp.int32)
        return (states, game, start_ply, next_game), record

    @jax.jit
    def run(model_params, states, game, start_ply, queue, next_game, white_params,
            black_params, temps, key):
        carry, records = jax.lax.scan(
            lambda c, x: one_ply(c, x, model_params, queue, white_params, black_params, temps,
                                 key), (states, game, start_ply, next_game), None, length=plies)
        return carry, records

    return run


def _game_ply(pos: Any) -> chex.Array:
    """The ply of a position in its game from its move number and side to move."""
    return (2 * (pos.fullmove - 1) + (pos.turn == 0)).astype(jnp.int32)


def _temperature_table(schedule: TemperatureSchedule, max_plies: int) -> np.ndarray:
    return np.array([[schedule.at(p), schedule.visit_offset, schedule.value_cutoff]
                     for p in range(max_plies + 1)], np.float32)


def play(model: Any, openings: Sequence[Any], white: SearchConfig, black: SearchConfig,
         num_simulations: int, *, batch: int = 64, seed: int = 0, max_plies: int = 400,
         white_temperature: TemperatureSchedule | None = None,
         black_temperature: TemperatureSchedule | None = None,
         plies_per_call: int = 32, model_params: Any = None) -> Games:
    """Play one game per opening (python-chess boards), ``batch`` at a time, on the device.

    ``white``/``black``: the search of each colour, with its temperature schedule (None:
    temperature 0, the best move); ``num_simulations`` per move; games end by the rules or
    at ``max_plies`` plies (a draw, "move cap"). The scan runs
    ``plies_per_call`` plies per compiled call (the host collects the finished games
    between calls). Returns every game and the examples of every searched position.
    """
    from zerochess.training.examples import Examples

    openings = list(openings)
    count = len(openings)
    batch = min(batch, count)
    params_w = stack_configs([white] * batch, model.has_moves_left, model.mate_check)
    params_b = stack_configs([black] * batch, model.has_moves_left, model.mate_check)
    temps = jnp.asarray(np.stack([
        _temperature_table(white_temperature or TemperatureSchedule(), max_plies),
        _temperature_table(black_temperature or TemperatureSchedule(), max_plies)]))
    queue = jax.tree.map(jnp.asarray, start_states(openings))
    states = jax.tree.map(lambda a: a[:batch], queue)
    game = jnp.arange(batch, dtype=jnp.int32)
    start_ply = jax.vmap(_game_ply)(states.position)
    run = make_scan(model, batch, plies_per_call, num_simulations, max_plies)
    key = jax.random.key_data(jax.random.PRNGKey(seed))
    next_game = jnp.int32(batch)
    model_params = model.params if model_params is None else model_params
    chunks = []
    done = np.zeros(count, bool)
    while True:
        (states, game, start_ply, next_game), records = run(
            model_params, states, game, start_ply, queue, next_game, params_w, params_b, temps,
            key)
        chunk = jax.device_get(records)
        chunks.append(chunk)
        g = chunk.game[chunk.ended]
        done[g[g >= 0]] = True
        if done.all() or not np.any(np.asarray(game) >= 0):
            break
    records = jax.tree.map(lambda *xs: np.concatenate(xs), *chunks)
    flat = jax.tree.map(lambda a: a.reshape(-1, *a.shape[2:]), records)
    flat = jax.tree.map(lambda a: a[flat.game >= 0], flat)
    order = np.lexsort((flat.ply, flat.game))
    flat = jax.tree.map(lambda a: a[order], flat)
    moves: list[list[int]] = [[] for _ in range(count)]
    for g, a in zip(flat.game, flat.action, strict=True):
        moves[g].append(int(a))
    results, terms = ["*"] * count, ["unfinished"] * count
    final = np.full(count, np.nan, np.float32)
    for i in np.nonzero(flat.ended)[0]:
        g = int(flat.game[i])
        final[g] = flat.white_reward[i]
        results[g] = {1.0: "1-0", -1.0: "0-1"}.get(float(final[g]), "1/2-1/2")
        terms[g] = TERMINATIONS.get(int(flat.status[i]), "move cap")
    white_wdl = np.stack([final > 0, final == 0, final < 0], 1).astype(np.float32)
    first = np.full(count, 0, np.int64)
    end = np.zeros(count, np.int64)
    for g in range(count):
        plies_g = flat.ply[flat.game == g]
        if plies_g.size:
            first[g], end[g] = plies_g.min(), plies_g.max() + 1
    wdl = white_wdl[flat.game]
    examples = Examples(
        plane_bits=flat.plane_bits, plane_values=flat.plane_values,
        policy_index=flat.policy_index.astype(np.int16),
        policy_target=flat.policy_target.astype(np.float32),
        result=np.where(flat.white[:, None], wdl, wdl[:, ::-1]),
        root_q=flat.root_q, root_d=flat.root_d, best_q=flat.best_q, best_d=flat.best_d,
        moves_left=(end[flat.game] - flat.ply).astype(np.float32),
        game=flat.game.astype(np.int32), ply=flat.ply.astype(np.int32))
    return Games(moves=moves, results=results, terminations=terms, examples=examples)


TERMINATIONS = {GameStatus.CHECKMATE: "checkmate", GameStatus.STALEMATE: "stalemate",
                GameStatus.INSUFFICIENT: "insufficient_material",
                GameStatus.RULE50: "fifty_moves", GameStatus.REPETITION: "threefold_repetition"}


__all__ = ["Games", "PlyRecord", "make_scan", "play"]
