"""The game loop on the device: a batch of games as one compiled ``lax.scan`` over plies.

``play_games(..., rules="device")`` comes here when every player is a zerochess search
of one network (one set of parameters; no engine, no clock, no tree reuse). Each ply
every slot's position is searched (``search.compiled.search``, device rules, each tree
with its player's ``SearchParams`` and node count), a move is chosen and played on the
device (``zerochess.env``), the game's end is decided there, and a finished game's slot
takes the next game of the queue at once. The host only runs between calls of
``plies_per_call`` plies: it writes the finished games, saves the games in play
(``games.checkpoints``) and prepares the next queue games.

The games are the host loop's (``games.loop``), move for move, because every choice is
made as the host makes it:

- the trees: the same search program as ``Searcher(rules="device")``, whose trees equal
  the host rules' (L = 1, the tree size and edge pool of ``get_searcher``), each seeded
  with ``tree_key(search_seed(game seed, ply), 0)``, the key the host loop gives it;
- the move: lc0's ``GetBestChildWithTemperature`` as ``SearchResult.choose_move`` computes
  it, with the uniform number that ``move_rng(game seed, ply)`` draws first (numpy's
  ``Generator.choice`` draws one ``random()`` and searches the normalised cumulative
  weights). The host prepares the seeds and uniforms of the plies a call can reach;
- the end: python-chess's ``outcome(claim_draw=True)``, then the move cap, as
  ``records.game_end`` decides it; draw claims (fifty moves, threefold repetition) by
  ``chess.device.claims``.

What can differ is rounding: the move choice's weights are float32 here and float64 on
the host, so a uniform within ~1e-7 of a boundary between two moves' weights could pick
the other move; and the network runs on batches of other sizes here (every slot of the
scan, idle ones included), on which XLA may round its sums otherwise, so the trees'
values (Q, D; the PGN comments' numbers and the examples' value fields) can differ in
their last bits. A near-tie of two children could then be broken otherwise. In the
tests and benchmarks every game was the host's. The host checks each game's end with
python-chess when the device ends it.
"""

from __future__ import annotations

import collections
import dataclasses
import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import chess
import chex
import jax
import jax.numpy as jnp
import numpy as np

from zerochess.chess.device import claims
from zerochess.chess.device.position import compact, insufficient_material
from zerochess.chess.planes import compact_planes
from zerochess.chess.policy_map import MAX_LEGAL_MOVES, index_to_move
from zerochess.chess.types import GameStatus
from zerochess.env import Env, State, start_states
from zerochess.games.config import PlayerSpec
from zerochess.games.records import MOVE_CAP, MoveStat, game_end
from zerochess.games.seeding import move_rng, search_seed
from zerochess.search.compiled import roots_with_keys, search
from zerochess.search.move_choice import choose_slot, temperature_table
from zerochess.search.params import stack_configs
from zerochess.search.results import decode_line
from zerochess.search.tree_keys import fold_key
from zerochess.search.view import best_child_slot, root_view

PV_MOVES = 3  # plies of the best move's continuation kept for the PGN comment (pv: 1 + 3)


@dataclasses.dataclass(frozen=True)
class SearchedPosition:
    """What the search of one position gave, for training examples (host, numpy)."""

    plane_bits: np.ndarray  # uint8 [112, 8] lc0's input planes, mask form
    plane_values: np.ndarray  # float32 [112]
    policy_index: np.ndarray  # int16 [218] the legal moves (1858 indices, -1 padded)
    policy_target: np.ndarray  # float32 [218] visit fractions (uniform when none)
    root_wl: float  # root W - L and D, side to move
    root_d: float
    best_wl: float  # the best move's W - L and D
    best_d: float
    white_to_move: bool
    move_index: int  # index of the move played from here in the game record


PositionHook = Callable[[Any, SearchedPosition], None]
"""``on_position(game_spec, position)``: called for every searched position."""


class PlyRecord(NamedTuple):
    """What one ply of the scan writes for every slot, [P, B, ...] after the scan."""

    row: chex.Array  # int32 the game's table row (-1: the slot is idle)
    action: chex.Array  # int32 the move played (lc0 1858 index)
    ended: chex.Array  # bool the game ended with this move
    end: chex.Array  # int8 GameStatus of the end; ONGOING for the move cap
    # the search's numbers, for the PGN comment and the training examples
    num_legal: chex.Array  # int32
    legal: chex.Array  # int16 [K]
    visits: chex.Array  # int32 [K]
    best_slot: chex.Array  # int32
    played_slot: chex.Array  # int32
    pv: chex.Array  # int32 [PV_MOVES] after the best move
    root_visits: chex.Array  # int32
    root_wl: chex.Array  # float32
    root_d: chex.Array
    best_wl: chex.Array
    best_d: chex.Array
    plane_bits: chex.Array  # uint8 [112, 8]
    plane_values: chex.Array  # float32 [112]


class Tables(NamedTuple):
    """Per table row (the B slots' games, then the R queued games), device arrays."""

    base_ply: chex.Array  # int32 [B + R] the game ply of column 0
    seeds: chex.Array  # uint32 [B + R, P] search seeds of plies base_ply + column
    uniforms: chex.Array  # float32 [B + R, P] the move choice's uniform
    white: chex.Array  # int32 [B + R] player index of white
    black: chex.Array  # int32 [B + R]
    moves: chex.Array  # int32 [B + R] the game's moves (the cap counts them) at column 0
    count: chex.Array  # int32 the queued games (rows B to B + count - 1)
    queue: State  # [R] the queued games' positions


class Players(NamedTuple):
    """Per player (device arrays)."""

    params: Any  # SearchParams [n]
    nodes: chex.Array  # int32 [n] simulations per move
    temperature: chex.Array  # float32 [n, T]: T, by game ply (the last is held)
    visit_offset: chex.Array  # float32 [n]
    cutoff: chex.Array  # float32 [n] value_cutoff / 50


def can_play(players: Mapping[str, PlayerSpec], models: Mapping[str, Any],
             params: Mapping[str, Any]) -> str | None:
    """None if these players' games can run on the device, else why not."""
    if any(p.is_engine for p in players.values()):
        return "an engine plays"
    if any(p.tree_reuse for p in players.values()):
        return "a player reuses its tree"
    if len({id(m) for m in models.values()}) > 1:
        return "the players search with different networks"
    if len({id(p) for p in params.values()}) > 1:
        return "the players search with different network parameters"
    return None


def _game_ply(pos: Any) -> chex.Array:
    """python-chess's ``board.ply()`` from the move number and side to move."""
    return (2 * (pos.fullmove - 1) + (pos.turn == 0)).astype(jnp.int32)


def make_scan(model: Any, batch: int, plies: int, num_simulations: int, max_nodes: int,
              edges_per_node: int, max_plies: int | None):
    """The compiled scan: ``run(model_params, states, rows, moves, tables, players) ->
    ((states, rows, moves, next_row), PlyRecord [plies, B])``.

    ``rows`` int32 [B]: each slot's table row (-1 idle); ``moves`` int32 [B]: the moves
    of each slot's game so far (the cap counts them)."""
    env = Env()
    cap = np.int32(max_plies if max_plies is not None else np.iinfo(np.int32).max)

    def one_ply(carry, model_params, tables: Tables, players: Players):
        states, rows, moves, next_row = carry
        active = rows >= 0
        row = jnp.maximum(rows, 0)
        ply = _game_ply(states.position)
        col = jnp.clip(ply - tables.base_ply[row], 0, tables.seeds.shape[1] - 1)
        white = states.position.turn == 1
        mover = jnp.where(white, tables.white[row], tables.black[row])
        params = jax.tree.map(lambda a: a[mover], players.params)
        keys = jax.vmap(fold_key, in_axes=(0, None))(tables.seeds[row, col], 0)
        roots = roots_with_keys(states, keys)
        limits = jnp.where(active, players.nodes[mover], 0)
        out = search(model_params, roots, params, num_simulations, apply_fn=model.apply,
                     num_nodes=max_nodes, edges_per_node=edges_per_node, limits=limits)
        tree = out.state.tree
        best = jax.vmap(best_child_slot, in_axes=(0, None, 0))(
            tree, jnp.int32(0), out.state.params.draw_score)
        view = jax.vmap(root_view, in_axes=(0, 0, 0, 0, None))(
            tree, out.state.params, out.state.root_policy, jnp.maximum(best, 0)[:, None],
            PV_MOVES)
        valid = jnp.arange(out.legal.shape[1])[None, :] < roots.num_legal[:, None]
        best = jnp.where(best >= 0, best, jnp.argmax(
            jnp.where(valid, view["prior"], -jnp.inf), axis=1).astype(jnp.int32))
        temp = players.temperature[mover, jnp.minimum(ply, players.temperature.shape[1] - 1)]
        slot = jax.vmap(choose_slot)(view["visits"], view["q"], valid, best, temp,
                                     players.visit_offset[mover], players.cutoff[mover],
                                     tables.uniforms[row, col])
        action = jnp.take_along_axis(out.legal, slot[:, None], axis=1)[:, 0].astype(jnp.int32)
        bits, values = compact_planes(states.observation, jnp)
        after = jax.vmap(env.step)(states, action)
        legal_after, num_after = jax.vmap(compact)(after.legal_action_mask)
        claim = claims.draw_claims(after.position, legal_after.astype(jnp.int16), num_after,
                                   after.keys, after.num_keys)
        # python-chess names a stalemate without mating material insufficient material
        status = jnp.where((after.status == GameStatus.STALEMATE) & jax.vmap(
            insufficient_material)(after.position.board), jnp.int8(GameStatus.INSUFFICIENT),
            after.status)
        end = jnp.where(status != GameStatus.ONGOING, status, claim).astype(jnp.int8)
        capped = moves + 1 >= cap
        ended = active & ((end != GameStatus.ONGOING) | capped)
        take = best[:, None]
        record = PlyRecord(
            row=jnp.where(active, rows, -1), action=action, ended=ended, end=end,
            num_legal=roots.num_legal.astype(jnp.int32), legal=out.legal, visits=view["visits"],
            best_slot=best, played_slot=slot, pv=view["pv"][:, 0],
            root_visits=view["root_visits"], root_wl=view["root_wl"], root_d=view["root_d"],
            best_wl=jnp.take_along_axis(view["wl"], take, 1)[:, 0],
            best_d=jnp.take_along_axis(view["d"], take, 1)[:, 0],
            plane_bits=bits, plane_values=values)
        # a finished game's slot takes the next queued game (rows B, B + 1, ...)
        queued = tables.queue.position.turn.shape[0]
        order = jnp.cumsum(ended, dtype=jnp.int32) - 1 + next_row
        refill = ended & (order < tables.count)
        fresh = jax.tree.map(lambda a: a[jnp.clip(order, 0, queued - 1)], tables.queue)
        states = jax.tree.map(lambda a, b: jnp.where(
            refill.reshape((-1,) + (1,) * (a.ndim - 1)), a, b), fresh, after)
        new_row = batch + order
        rows = jnp.where(refill, new_row, jnp.where(ended, -1, rows))
        moves = jnp.where(refill, tables.moves[jnp.clip(new_row, 0, tables.moves.shape[0] - 1)],
                          moves + 1)
        next_row = next_row + jnp.sum(refill, dtype=jnp.int32)
        return (states, rows, moves, next_row), record

    @jax.jit
    def run(model_params, states, rows, moves, tables, players):
        (states, rows, moves, next_row), records = jax.lax.scan(
            lambda c, _: one_ply(c, model_params, tables, players),
            (states, rows, moves, jnp.int32(0)), None, length=plies)
        return (states, rows, moves, next_row), records

    return run


def stack_players(specs: Sequence[PlayerSpec], model: Any) -> Players:
    """The players' per-move settings as device arrays."""
    return Players(
        params=stack_configs([p.search for p in specs], model.has_moves_left,
                             model.mate_check),
        nodes=jnp.asarray([p.nodes for p in specs], jnp.int32),
        temperature=jnp.asarray(temperature_table([p.temperature for p in specs])),
        visit_offset=jnp.asarray([p.temperature.visit_offset for p in specs], jnp.float32),
        cutoff=jnp.asarray([p.temperature.value_cutoff / 50.0 for p in specs], jnp.float32))


class _Draws:
    """Each game's search seeds and move uniforms by ply, computed once (host)."""

    def __init__(self) -> None:
        self._cache: dict[tuple[int, int], tuple[int, float]] = {}

    def window(self, game_seed: int, first_ply: int, count: int
               ) -> tuple[np.ndarray, np.ndarray]:
        seeds = np.zeros(count, np.uint32)
        uniforms = np.zeros(count, np.float32)
        for c in range(count):
            key = (game_seed, first_ply + c)
            if key not in self._cache:
                self._cache[key] = (search_seed(game_seed, first_ply + c),
                                    float(move_rng(game_seed, first_ply + c).random()))
            seeds[c], uniforms[c] = self._cache[key]
        return seeds, uniforms

    def forget(self, game_seed: int) -> None:
        for key in [k for k in self._cache if k[0] == game_seed]:
            del self._cache[key]


_SCANS: dict[tuple, Callable] = {}  # compiled scans by (model, shapes): kept across runs


def _scan(model: Any, *shape: Any) -> tuple[Callable, bool]:
    """The compiled scan of these shapes, and whether this is its first use (it compiles)."""
    key = (id(model), *shape)
    fresh = key not in _SCANS
    if fresh:
        _SCANS[key] = make_scan(model, *shape)
    return _SCANS[key], fresh


def play_games_on_device(
    queue: collections.deque,
    players: Mapping[str, PlayerSpec],
    model: Any,
    model_params: Any,
    *,
    batch_size: int,
    max_plies: int | None,
    max_nodes: int,
    edges_per_node: int,
    new_live: Callable[[Any], Any],
    finish: Callable[[Any], None],
    stats: Any,
    on_step: Callable[[int], None],
    stop: Callable[[], bool],
    checkpoint: Callable[[list[Any], bool], None],
    on_position: PositionHook | None = None,
    plies_per_call: int = 16,
) -> None:
    """Play the games of ``queue`` (``GameSpec``s) on the device (see the module docstring).

    The host loop (``games.loop.play_games``) owns the run; it hands over how a game
    starts (``new_live(spec)``: its ``_Live``, continued from a checkpoint when saved),
    ends (``finish(live)``), how a call is counted (``stats``, ``on_step(games)``), when
    to stop (``stop()``) and how the games in play are saved (``checkpoint(lives,
    force)``). ``max_nodes`` and ``edges_per_node``: the trees of ``get_searcher``.
    """
    names = sorted({n for s in queue for n in (s.white, s.black)})
    if not names:
        return
    index = {n: i for i, n in enumerate(names)}
    table = stack_players([players[n] for n in names], model)
    batch, plies = batch_size, plies_per_call
    run, fresh = _scan(model, batch, plies, max_nodes - 1, max_nodes, edges_per_node,
                       max_plies)
    draws = _Draws()
    cached: dict[int, State] = {}  # start states of games not yet in a slot, by game index
    slots: list[Any] = [None] * batch
    pending: collections.deque[Any] = collections.deque()  # the next games, rows B...
    slot_states: State | None = None
    t0 = time.perf_counter()
    prev = 0.0

    def next_live() -> Any | None:
        # a game over before its first search (or at the cap) is recorded at once
        while queue:
            live = new_live(queue.popleft())
            if live.check_end(max_plies):
                finish(live)
                continue
            return live
        return None

    def states_of(lives: list[Any]) -> State:
        missing = [lv for lv in lives if lv.spec.index not in cached]
        if missing:
            made = start_states([lv.board for lv in missing])
            for k, lv in enumerate(missing):
                cached[lv.spec.index] = jax.tree.map(lambda a, k=k: a[k:k + 1], made)
        return jax.tree.map(lambda *xs: np.concatenate(xs),
                            *[cached[lv.spec.index] for lv in lives])

    try:
        while not stop():
            placed = []  # slots given a game here (their state comes from the host)
            for i in range(batch):
                if slots[i] is None:
                    slots[i] = pending.popleft() if pending else next_live()
                    if slots[i] is not None:
                        placed.append(i)
            while len(pending) < batch:
                live = next_live()
                if live is None:
                    break
                pending.append(live)
            if all(s is None for s in slots):
                break
            filler = next(s for s in slots if s is not None)
            rows_live = list(slots) + list(pending) + [None] * (batch - len(pending))
            host = [i for i in range(batch) if slot_states is None or i in placed]
            new = states_of([slots[i] if slots[i] is not None else filler for i in host]
                            ) if host else None
            if slot_states is None:
                slot_states = jax.tree.map(jnp.asarray, new)
            elif host:
                at = np.asarray(host, np.int32)
                slot_states = jax.tree.map(lambda a, b, at=at: a.at[at].set(b), slot_states,
                                           new)
            for i in host:
                if slots[i] is not None:
                    cached.pop(slots[i].spec.index, None)
            queued = states_of([lv if lv is not None else filler for lv in rows_live[batch:]])
            windows = [draws.window(lv.spec.seed, lv.board.ply(), plies) if lv is not None
                       else (np.zeros(plies, np.uint32), np.zeros(plies, np.float32))
                       for lv in rows_live]
            tables = Tables(
                base_ply=jnp.asarray([lv.board.ply() if lv is not None else 0
                                      for lv in rows_live], jnp.int32),
                seeds=jnp.asarray(np.stack([w[0] for w in windows])),
                uniforms=jnp.asarray(np.stack([w[1] for w in windows])),
                white=jnp.asarray([index[lv.spec.white] if lv is not None else 0
                                   for lv in rows_live], jnp.int32),
                black=jnp.asarray([index[lv.spec.black] if lv is not None else 0
                                   for lv in rows_live], jnp.int32),
                moves=jnp.asarray([len(lv.moves) if lv is not None else 0
                                   for lv in rows_live], jnp.int32),
                count=jnp.int32(len(pending)), queue=jax.tree.map(jnp.asarray, queued))
            rows = jnp.asarray([i if slots[i] is not None else -1 for i in range(batch)],
                               jnp.int32)
            ts = time.perf_counter()
            compiling, fresh = fresh, False  # the first call of a new scan compiles it
            (slot_states, rows_after, _, used), records = run(
                model_params, slot_states, rows, tables.moves[:batch], tables, table)
            records = jax.device_get(records)
            if compiling:
                stats.compile_seconds += time.perf_counter() - ts
            games_before = stats.games
            positions = nodes = 0
            for p in range(plies):  # the host replays what the device played
                for i in range(batch):
                    r = int(records.row[p, i])
                    if r < 0:
                        continue
                    live = rows_live[r]
                    player = players[live.mover()]
                    positions += 1
                    nodes += player.nodes
                    _replay(live, player, records, p, i, on_position)
                    if records.ended[p, i]:
                        _check_end(live, int(records.end[p, i]), max_plies)
                        finish(live)
                        draws.forget(live.spec.seed)
            for _ in range(int(used)):
                cached.pop(pending.popleft().spec.index, None)
            slots = [rows_live[int(r)] if r >= 0 else None for r in np.asarray(rows_after)]
            stats.positions += positions
            stats.nodes += nodes
            now = time.perf_counter() - t0
            stats.steps.append((now, positions, nodes, now - prev, compiling))
            prev = now
            checkpoint([s for s in slots if s is not None], False)
            on_step(stats.games - games_before)
    finally:  # the games in play (the queued ones have not begun)
        checkpoint([s for s in slots if s is not None], True)


def _replay(live: Any, player: PlayerSpec, rec: PlyRecord, p: int, i: int,
            on_position: PositionHook | None) -> None:
    """Play ply ``p`` of slot ``i`` on the game's python-chess board, with its comment."""
    board = live.board
    ply = board.ply()
    m = int(rec.num_legal[p, i])
    visits = rec.visits[p, i, :m].astype(np.int64)
    total = visits.sum()
    best, played = int(rec.best_slot[p, i]), int(rec.played_slot[p, i])
    legal = rec.legal[p, i, :m]
    move = index_to_move(board, int(rec.action[p, i]))
    best_move = index_to_move(board, int(legal[best]))
    pv = [best_move]
    if visits[best] > 0:  # as ``results_from_view`` reads a visited move's continuation
        after = board.copy(stack=False)
        after.push(best_move)
        pv += decode_line(after, rec.pv[p, i])
    root_wl, root_d = float(rec.root_wl[p, i]), float(rec.root_d[p, i])
    draw = float(player.search.draw_score)
    temperature = player.temperature.at(ply)
    share = (lambda s: float(visits[s] / total) if total else math.nan)  # noqa: E731
    stat = MoveStat(
        source="search", nodes=int(rec.root_visits[p, i]),
        q=root_wl + float(np.float32(draw)) * root_d,
        wdl=((1 + root_wl - root_d) / 2, root_d, (1 - root_wl - root_d) / 2),
        best=best_move.uci(), best_share=share(best), played_share=share(played),
        temperature=float(temperature), pv=tuple(mv.uci() for mv in pv[:1 + PV_MOVES]),
        reused=0)
    if on_position is not None:
        index = np.full(MAX_LEGAL_MOVES, -1, np.int16)
        target = np.zeros(MAX_LEGAL_MOVES, np.float32)
        index[:m] = legal
        target[:m] = visits / total if total > 0 else 1.0 / m
        wdl = stat.wdl
        assert wdl is not None
        on_position(live.spec, SearchedPosition(
            plane_bits=rec.plane_bits[p, i].copy(), plane_values=rec.plane_values[p, i].copy(),
            policy_index=index, policy_target=target, root_wl=wdl[0] - wdl[2], root_d=wdl[1],
            best_wl=float(rec.best_wl[p, i]), best_d=float(rec.best_d[p, i]),
            white_to_move=board.turn == chess.WHITE, move_index=len(board.move_stack)))
    live.push(move, stat)


def _check_end(live: Any, end: int, max_plies: int | None) -> None:
    """Record the end the device found, after python-chess confirms it."""
    found = game_end(live.board, len(live.moves), max_plies)
    expected = MOVE_CAP if end == GameStatus.ONGOING else _TERMINATIONS[end]
    if found is None or found[1] != expected:
        raise RuntimeError(
            f"internal error: game {live.spec.index} ended on the device by {expected}, but "
            f"python-chess says {found} at {live.board.fen()}")
    live.result, live.termination = found


_TERMINATIONS = {GameStatus.CHECKMATE: "checkmate", GameStatus.STALEMATE: "stalemate",
                 GameStatus.INSUFFICIENT: "insufficient_material",
                 GameStatus.RULE50: "fifty_moves", GameStatus.REPETITION: "threefold_repetition"}


__all__ = ["PlyRecord", "PositionHook", "SearchedPosition", "can_play",
           "make_scan", "play_games_on_device", "stack_players"]

