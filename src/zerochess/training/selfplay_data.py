"""The self-play hook of training: games -> ``SearchResult``s -> training ``Examples``.

This is the one module that touches the game-playing code (today ``zerochess.selfplay``;
after the games merge, issue 7, ``zerochess.games``). It needs two things the current
runner (``selfplay.runner.play_games``) does not offer, so it drives the batched games
itself with the runner's building blocks (``SearchBackend``, seeding, ``GameRecord``,
``search_stat``, openings, UCI engine players):

- every searched position's ``SearchResult`` (the runner keeps only PGN statistics);
- per-player network parameters (``Player.params``): self-play with the current
  weights, evaluation matches of trained vs initial weights in one compiled searcher.

Games are played exactly as the runner plays them (same search seeds, same temperature
move choice from (game seed, ply), fresh tree per move), so the same specs give the same
games (tested). TODO(games): once ``zerochess.games`` exposes an ``on_search(game, ply,
result, move)`` hook and per-player params, ``play_training_games`` becomes a thin call
to it and only ``policy_target`` / ``examples_from_game`` stay here.

Parameters go to the searcher as data: ``Searcher`` jit-compiles ``model.apply`` with
the params as an argument, so swapping ``searcher.model`` for one with other params of
the same shapes never recompiles (tested). TODO(core): ``Searcher.init/run(...,
params=...)`` would make this explicit instead of replacing ``searcher.model``.
"""

from __future__ import annotations

import collections
import dataclasses
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import chess
import numpy as np

from zerochess.chess.encoding import encode_board
from zerochess.chess.policy_map import MAX_LEGAL_MOVES, move_to_index
from zerochess.neural.model import Model
from zerochess.selfplay.config import PlayerSpec
from zerochess.selfplay.records import MOVE_CAP, GameRecord, GameWriter, MoveStat
from zerochess.selfplay.runner import GameSpec, RunStats, SearchBackend, search_stat
from zerochess.selfplay.seeding import move_rng, search_seed
from zerochess.training.examples import Examples, compact_planes, empty_examples, result_wdl


@dataclasses.dataclass
class Player:
    """One side of training games.

    Attributes:
      spec: nodes per move, ``SearchConfig``, temperature schedule (or a UCI engine).
      model: the network searching for it (None for engines).
      params: its parameters (default ``model.params``); players sharing ``model`` share
        one compiled searcher whatever their params.
      collect: turn this player's searched positions into training examples.
    """

    spec: PlayerSpec
    model: Model | None = None
    params: Any = None
    collect: bool = True

    def __post_init__(self) -> None:
        if not self.spec.is_engine and self.model is None:
            raise ValueError(f"player {self.spec.name!r} searches but has no model")


@dataclasses.dataclass
class TrainingGames:
    """Finished games, their training examples (one ``Examples`` per game, in the same
    order as ``records``) and throughput."""

    records: list[GameRecord]
    examples: list[Examples]
    stats: RunStats


def policy_target(result: Any) -> tuple[np.ndarray, np.ndarray]:
    """lc0's policy target of a search: ``N(move) / sum N`` over the root's children.

    Args:
      result: a ``SearchResult`` (``board``, ``moves``, ``visits``).

    Returns:
      (index int16 ``[218]``: the legal moves' 1858-indices, -1 padded; target float32
      ``[218]``: visit fractions, 0 padded). Uniform over the legal moves when no child
      was visited.
    """
    n = len(result.moves)
    index = np.full(MAX_LEGAL_MOVES, -1, np.int16)
    target = np.zeros(MAX_LEGAL_MOVES, np.float32)
    index[:n] = [move_to_index(result.board, m) for m in result.moves]
    visits = np.asarray(result.visits, np.float64)
    total = visits.sum()
    target[:n] = visits / total if total > 0 else 1.0 / n
    return index, target


@dataclasses.dataclass
class _Position:
    """What a searched position contributes to the game's examples."""

    plane_bits: np.ndarray
    plane_values: np.ndarray
    policy_index: np.ndarray
    policy_target: np.ndarray
    root_q: float
    root_d: float
    best_q: float
    best_d: float
    white_to_move: bool
    ply: int  # index of the move played from here in the game record


def searched_position(result: Any, ply: int) -> _Position:
    """Turn one ``SearchResult`` (position with its history) into example data."""
    bits, values = compact_planes(encode_board(result.board))
    index, target = policy_target(result)
    w, d, loss = (float(x) for x in np.asarray(result.root_wdl)[:3])
    best = result.best_index
    return _Position(bits, values, index, target, w - loss, d, float(result.wl[best]),
                     float(result.d[best]), result.board.turn == chess.WHITE, ply)


def examples_from_game(positions: Sequence[_Position], result: str, plies: int,
                       game: int) -> Examples:
    """A finished game's examples: its searched positions with the game result (W/D/L from
    each side to move) and the plies left (``plies`` moves in the record)."""
    if not positions:
        return empty_examples()
    n = len(positions)
    white = np.array([p.white_to_move for p in positions])
    f32 = lambda xs: np.asarray(xs, np.float32)  # noqa: E731
    return Examples(
        plane_bits=np.stack([p.plane_bits for p in positions]),
        plane_values=np.stack([p.plane_values for p in positions]).astype(np.float32),
        policy_index=np.stack([p.policy_index for p in positions]),
        policy_target=np.stack([p.policy_target for p in positions]),
        result=result_wdl(result, white),
        root_q=f32([p.root_q for p in positions]), root_d=f32([p.root_d for p in positions]),
        best_q=f32([p.best_q for p in positions]), best_d=f32([p.best_d for p in positions]),
        moves_left=f32([plies - p.ply for p in positions]),
        game=np.full(n, game, np.int32), ply=np.asarray([p.ply for p in positions], np.int32))


class _Game:
    """A game in a batch slot (the runner's rules: python-chess ends, optional move cap)."""

    def __init__(self, spec: GameSpec) -> None:
        self.spec = spec
        self.board = spec.opening.board()
        self.start = spec.opening.start_board()
        self.moves = [m.uci() for m in self.board.move_stack]
        self.stats: list[MoveStat] = [MoveStat("book") for _ in self.moves]
        self.positions: list[_Position] = []
        self.result: str | None = None
        self.termination: str | None = None

    def mover(self) -> str:
        return self.spec.white if self.board.turn == chess.WHITE else self.spec.black

    def push(self, move: chess.Move, stat: MoveStat) -> None:
        self.board.push(move)
        self.moves.append(move.uci())
        self.stats.append(stat)

    def check_end(self, max_plies: int | None) -> bool:
        outcome = self.board.outcome(claim_draw=True)
        if outcome is not None:
            self.result = outcome.result()
            self.termination = outcome.termination.name.lower()
        elif max_plies is not None and len(self.moves) >= max_plies:
            self.result, self.termination = "1/2-1/2", MOVE_CAP
        return self.result is not None

    def record(self, max_plies: int | None) -> GameRecord:
        assert self.result is not None and self.termination is not None
        return GameRecord(
            index=self.spec.index, seed=self.spec.seed, white=self.spec.white,
            black=self.spec.black, opening=self.spec.opening.name, start_fen=self.start.fen(),
            moves=list(self.moves), stats=list(self.stats), result=self.result,
            termination=self.termination, final_fen=self.board.fen(),
            tags=dict(self.spec.tags), max_plies=max_plies)


def play_training_games(
    specs: Sequence[GameSpec],
    players: Mapping[str, Player],
    *,
    batch_size: int = 64,
    max_plies: int | None = None,
    max_nodes: int | None = None,
    writer: GameWriter | None = None,
    on_game: Callable[[GameRecord, Examples], None] | None = None,
) -> TrainingGames:
    """Play ``specs`` in batches and collect training examples from the searches.

    Args:
      specs: the games (``zerochess.selfplay.GameSpec``: players by name, opening, seed).
      players: name -> ``Player``.
      batch_size: trees per batched search (a compile-time shape; padded when fewer).
      max_plies: move cap (adjudicated draw).
      max_nodes: tree size per search (default: the players' largest nodes + 1); fix it
        when nodes per move change between calls, so nothing recompiles.
      writer: optional PGN/CSV writer (each game is written when it ends).
      on_game: called with each finished game's record and examples.

    Returns:
      ``TrainingGames`` in the order the games finished.
    """
    for s in specs:
        for name in (s.white, s.black):
            if name not in players:
                raise KeyError(f"game {s.index}: unknown player {name!r}")
    searchers = [p for p in players.values() if not p.spec.is_engine]
    nodes_needed = max([p.spec.nodes for p in searchers], default=1) + 1
    if max_nodes is not None and max_nodes < nodes_needed:
        raise ValueError(f"max_nodes {max_nodes} < nodes per move + 1 = {nodes_needed}")
    max_nodes = max_nodes or nodes_needed
    backends: dict[int, SearchBackend] = {}
    for p in searchers:
        assert p.model is not None
        if id(p.model) not in backends:
            backends[id(p.model)] = SearchBackend(p.model, batch_size, max_nodes,
                                                  shrink_tail=False)
    originals = {k: b.searcher.model for k, b in backends.items()}
    engines: dict[str, Any] = {}
    queue = collections.deque(sorted(specs, key=lambda s: s.index))
    slots: list[_Game | None] = [None] * batch_size
    records: list[GameRecord] = []
    examples: list[Examples] = []
    stats = RunStats()
    t0 = time.perf_counter()

    def finish(i: int) -> None:
        game = slots[i]
        assert game is not None and game.result is not None
        rec = game.record(max_plies)
        ex = examples_from_game(game.positions, game.result, len(game.moves), game.spec.index)
        if writer is not None:
            writer.write(rec)
        if on_game is not None:
            on_game(rec, ex)
        records.append(rec)
        examples.append(ex)
        stats.games += 1
        slots[i] = None

    try:
        while True:
            for i in range(batch_size):
                while slots[i] is None and queue:
                    slots[i] = _Game(queue.popleft())
                    if slots[i].check_end(max_plies):  # type: ignore[union-attr]
                        finish(i)
            live = [g for g in slots if g is not None]
            if not live:
                break
            for g in live:  # external engines move at once, on the host
                while g.result is None and players[g.mover()].spec.is_engine:
                    name = g.mover()
                    if name not in engines:
                        from zerochess.match.engines import EnginePlayer
                        engines[name] = EnginePlayer(players[name].spec.engine)  # type: ignore[arg-type]
                    move, st = engines[name].play(g.board, game_key=g.spec.index)
                    g.push(move, st)
                    g.check_end(max_plies)
            searching = [g for g in live if g.result is None]
            groups: dict[tuple[int, int], list[_Game]] = collections.defaultdict(list)
            for g in searching:
                p = players[g.mover()]
                groups[(id(p.model), id(p.params))].append(g)
            ts = time.perf_counter()
            for games in groups.values():
                p0 = players[games[0].mover()]
                backend = backends[id(p0.model)]
                params = p0.params if p0.params is not None else originals[id(p0.model)].params
                backend.searcher.model = dataclasses.replace(originals[id(p0.model)],
                                                             params=params)
                specs_now = [players[g.mover()].spec for g in games]
                plies = [g.board.ply() for g in games]
                seeds = [search_seed(g.spec.seed, ply) for g, ply in zip(games, plies,
                                                                           strict=True)]
                compiled = backend.is_compiled(batch_size)
                t_group = time.perf_counter()
                results = backend.search([g.board for g in games], [s.search for s in specs_now],
                                         [s.nodes for s in specs_now], seeds, batch_size)
                if not compiled:
                    stats.compile_seconds += time.perf_counter() - t_group
                for g, spec, ply, res in zip(games, specs_now, plies, results, strict=True):
                    if players[g.mover()].collect:
                        g.positions.append(searched_position(res, len(g.moves)))
                    temp = spec.temperature.at(ply)
                    move = res.choose_move(temp, move_rng(g.spec.seed, ply),
                                           visit_offset=spec.temperature.visit_offset,
                                           value_cutoff=spec.temperature.value_cutoff)
                    g.push(move, search_stat(res, move, temp))
                    g.check_end(max_plies)
                stats.positions += len(games)
                stats.nodes += sum(s.nodes for s in specs_now)
            now = time.perf_counter() - t0
            stats.steps.append((now, len(searching), 0, time.perf_counter() - ts, False))
            for i in range(batch_size):
                if slots[i] is not None and slots[i].result is not None:  # type: ignore[union-attr]
                    finish(i)
    finally:
        for key, backend in backends.items():
            backend.searcher.model = originals[key]
        for eng in engines.values():
            eng.close()
    stats.seconds = time.perf_counter() - t0
    return TrainingGames(records, examples, stats)


__all__ = ["Player", "TrainingGames", "examples_from_game", "play_training_games",
           "policy_target", "searched_position"]
