"""The scan ply source of ``games.loop.play_games``: a batch of games as one compiled
``lax.scan`` over plies on the device rules (``ScanSource``). When it serves a run and
why its games are the host source's: docs/DESIGN.md, "One game loop, two ply sources"."""

from __future__ import annotations

import collections
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import chex
import jax
import jax.numpy as jnp
import numpy as np

from zerochess.chess.device import claims
from zerochess.chess.device.position import compact, insufficient_material
from zerochess.chess.planes import compact_planes
from zerochess.chess.policy_map import index_to_move
from zerochess.chess.types import GameStatus
from zerochess.env import Env, State, start_states
from zerochess.games.config import PlayerSpec
from zerochess.games.plies import (
    PV_MOVES,
    Advance,
    PlyRecord,
    SearchedPosition,
    move_stat,
    searched_position,
)
from zerochess.games.records import MOVE_CAP, game_end
from zerochess.games.seeding import move_rng, search_seed
from zerochess.search.compiled import roots_with_keys, search
from zerochess.search.move_choice import choose_slot, temperature_table
from zerochess.search.params import stack_configs
from zerochess.search.results import decode_line
from zerochess.search.tree_keys import fold_key
from zerochess.search.view import best_child_slot, best_or_prior, root_scores, root_view

PositionHook = Callable[[Any, SearchedPosition], None]
"""``on_position(game_spec, position)``: called for every searched position."""


class ScanPlies(NamedTuple):
    """What one ply of the scan writes for every slot, [P, B, ...] after the scan (each
    slot's ply becomes a ``plies.PlyRecord`` on the host)."""

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
    cap: chex.Array  # int32 the move cap (data: runs of other caps share one program)


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
              edges_per_node: int):
    """The compiled scan: ``run(model_params, states, rows, moves, tables, players) ->
    ((states, rows, moves, next_row), ScanPlies [plies, B])``.

    ``rows`` int32 [B]: each slot's table row (-1 idle); ``moves`` int32 [B]: the moves
    of each slot's game so far (the cap counts them)."""
    env = Env()

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
        best = best_or_prior(best, view["prior"], valid)
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
        capped = moves + 1 >= tables.cap
        ended = active & ((end != GameStatus.ONGOING) | capped)
        take = best[:, None]
        record = ScanPlies(
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


class ScanSource:
    """The scan's ply source: ``plies_per_call`` plies of every slot a call, on the
    device, a finished game's slot taking the next ``pending`` game there."""

    def __init__(self, names: Sequence[str], players: Mapping[str, PlayerSpec], model: Any,
                 model_params: Any, *, batch_size: int, max_plies: int | None,
                 max_nodes: int, edges_per_node: int,
                 on_position: PositionHook | None = None, plies_per_call: int = 16) -> None:
        names = sorted(names)
        self.players, self.model_params, self.on_position = players, model_params, on_position
        self.index = {n: i for i, n in enumerate(names)}
        self.table = stack_players([players[n] for n in names], model)
        self.batch, self.plies, self.max_plies = batch_size, plies_per_call, max_plies
        self.lookahead = batch_size  # the queued games the scan can refill slots with
        self.run, self.fresh = _scan(model, batch_size, plies_per_call, max_nodes - 1,
                                     max_nodes, edges_per_node)
        self.draws = _Draws()
        self.cached: dict[int, State] = {}  # start states of games not yet in a slot
        self.in_slot: list[Any] = [None] * batch_size  # the games slot_states holds
        self.slot_states: State | None = None

    def _states(self, lives: list[Any]) -> State:
        missing = [lv for lv in lives if lv.spec.index not in self.cached]
        if missing:
            made = start_states([lv.board for lv in missing])
            for k, lv in enumerate(missing):
                self.cached[lv.spec.index] = jax.tree.map(lambda a, k=k: a[k:k + 1], made)
        return jax.tree.map(lambda *xs: np.concatenate(xs),
                            *[self.cached[lv.spec.index] for lv in lives])

    def advance(self, slots: list[Any], pending: collections.deque, more: bool) -> Advance:
        """Play one call of plies; ``slots`` and ``pending`` change as the games moved."""
        batch, plies = self.batch, self.plies
        filler = next(s for s in slots if s is not None)
        rows_live = list(slots) + list(pending) + [None] * (batch - len(pending))
        host = [i for i in range(batch) if self.slot_states is None
                or (slots[i] is not None and slots[i] is not self.in_slot[i])]
        new = self._states([slots[i] if slots[i] is not None else filler for i in host]
                           ) if host else None
        if self.slot_states is None:
            self.slot_states = jax.tree.map(jnp.asarray, new)
        elif host:
            at = np.asarray(host, np.int32)
            self.slot_states = jax.tree.map(lambda a, b, at=at: a.at[at].set(b),
                                            self.slot_states, new)
        for i in host:
            if slots[i] is not None:
                self.cached.pop(slots[i].spec.index, None)
        queued = self._states([lv if lv is not None else filler for lv in rows_live[batch:]])
        windows = [self.draws.window(lv.spec.seed, lv.board.ply(), plies) if lv is not None
                   else (np.zeros(plies, np.uint32), np.zeros(plies, np.float32))
                   for lv in rows_live]
        tables = Tables(
            base_ply=jnp.asarray([lv.board.ply() if lv is not None else 0
                                  for lv in rows_live], jnp.int32),
            seeds=jnp.asarray(np.stack([w[0] for w in windows])),
            uniforms=jnp.asarray(np.stack([w[1] for w in windows])),
            white=jnp.asarray([self.index[lv.spec.white] if lv is not None else 0
                               for lv in rows_live], jnp.int32),
            black=jnp.asarray([self.index[lv.spec.black] if lv is not None else 0
                               for lv in rows_live], jnp.int32),
            moves=jnp.asarray([len(lv.moves) if lv is not None else 0
                               for lv in rows_live], jnp.int32),
            count=jnp.int32(len(pending)), queue=jax.tree.map(jnp.asarray, queued),
            cap=jnp.int32(self.max_plies if self.max_plies is not None
                          else np.iinfo(np.int32).max))
        rows = jnp.asarray([i if slots[i] is not None else -1 for i in range(batch)],
                           jnp.int32)
        step = Advance()
        ts = time.perf_counter()
        step.compiled, self.fresh = self.fresh, False  # a new scan's first call compiles it
        (self.slot_states, rows_after, _, used), records = self.run(
            self.model_params, self.slot_states, rows, tables.moves[:batch], tables,
            self.table)
        records = jax.device_get(records)
        if step.compiled:
            step.compile_seconds = time.perf_counter() - ts
        for p in range(plies):  # the host replays what the device played
            for i in range(batch):
                r = int(records.row[p, i])
                if r < 0:
                    continue
                live = rows_live[r]
                player = self.players[live.mover()]
                step.positions += 1
                step.nodes += player.nodes
                _replay(live, player, records, p, i, self.on_position)
                if records.ended[p, i]:
                    _check_end(live, int(records.end[p, i]), self.max_plies)
                    step.finished.append(live)
                    self.draws.forget(live.spec.seed)
        for _ in range(int(used)):
            self.cached.pop(pending.popleft().spec.index, None)
        slots[:] = [rows_live[int(r)] if r >= 0 else None for r in np.asarray(rows_after)]
        self.in_slot = list(slots)
        return step

    def close(self) -> None:
        pass


def _replay(live: Any, player: PlayerSpec, rec: ScanPlies, p: int, i: int,
            on_position: PositionHook | None) -> None:
    """Play ply ``p`` of slot ``i`` on the game's python-chess board, with its comment."""
    board = live.board
    m = int(rec.num_legal[p, i])
    visits = rec.visits[p, i, :m].astype(np.int64)
    best = int(rec.best_slot[p, i])
    legal = rec.legal[p, i, :m]
    move = index_to_move(board, int(rec.action[p, i]))
    pv = [index_to_move(board, int(legal[best]))]
    if visits[best] > 0:  # as ``results_from_view`` reads a visited move's continuation
        after = board.copy(stack=False)
        after.push(pv[0])
        pv += decode_line(after, rec.pv[p, i])
    q, wdl = root_scores(float(rec.root_wl[p, i]), float(rec.root_d[p, i]),
                         float(np.float32(player.search.draw_score)))
    ply = PlyRecord(
        visits=visits, best=best, played=move, pv=tuple(pv[:1 + PV_MOVES]),
        root_visits=int(rec.root_visits[p, i]), q=q, wdl=wdl,
        best_wl=float(rec.best_wl[p, i]), best_d=float(rec.best_d[p, i]),
        temperature=float(player.temperature.at(board.ply())),
        played_slot=int(rec.played_slot[p, i]), legal=legal,
        plane_bits=rec.plane_bits[p, i].copy(), plane_values=rec.plane_values[p, i].copy())
    if on_position is not None:
        on_position(live.spec, searched_position(ply, board))
    live.push(move, move_stat(ply))


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


__all__ = ["PositionHook", "ScanPlies", "ScanSource", "can_play",
           "make_scan", "stack_players"]

