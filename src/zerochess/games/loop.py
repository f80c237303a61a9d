"""The batched game loop: ``play_games`` runs the queue, the slots, the writer and the
checkpoints, and a ply source (the host's ``_HostPlies`` or ``device_loop.ScanSource``)
advances the slots; docs/DESIGN.md ("One game loop, two ply sources") draws it."""

from __future__ import annotations

import collections
import dataclasses
import logging
import math
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import chess
import numpy as np

from zerochess.errors import ConfigError, quote
from zerochess.games import device_loop
from zerochess.games.checkpoints import GameCheckpoints, SavedGame, checkpointable
from zerochess.games.clocks import TIME_FORFEIT, GameClock, flag_result
from zerochess.games.config import PlayerSpec
from zerochess.games.openings import Opening
from zerochess.games.players import (
    EngineFailure,
    EnginePlayer,
    ReusedTree,
    SearcherPool,
    edges_per_node_for,
)
from zerochess.games.plies import Advance, from_result, move_stat, searched_position
from zerochess.games.records import GameRecord, GameWriter, MoveStat, game_end
from zerochess.games.seeding import move_rng, search_seed
from zerochess.search import SearchResult
from zerochess.search.api import default_rules

_LOG = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class GameSpec:
    """One game to play: who has which colour, from where, with which seed."""

    index: int
    white: str  # key into the players mapping
    black: str
    opening: Opening
    seed: int
    tags: Mapping[str, Any] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class RunStats:
    """Throughput of a run: one entry per batched search step."""

    games: int = 0
    positions: int = 0  # live positions searched (padding excluded)
    nodes: int = 0  # simulations spent on them
    seconds: float = 0.0
    compile_seconds: float = 0.0  # the first step of each batch size (jit compile)
    # (time since start, positions, nodes, wall seconds of the step, compiled this step)
    steps: list[tuple[float, int, int, float, bool]] = dataclasses.field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        """Rates overall and in the first / last 10% of the run's time.

        Head/tail rates use the wall time of the steps in the window (search plus host
        work); the steps that compiled a batch size are left out.
        """
        out: dict[str, Any] = {
            "games": self.games, "positions": self.positions, "nodes": self.nodes,
            "seconds": round(self.seconds, 2), "compile_seconds": round(self.compile_seconds, 2),
        }
        run_s = max(self.seconds, 1e-9)
        out["positions_per_s"] = self.positions / run_s
        out["nodes_per_s"] = self.nodes / run_s
        out["games_per_hour"] = self.games / run_s * 3600
        steps = [st for st in self.steps if not st[4]]  # drop compile steps
        if len(steps) >= 10:
            t = np.array([st[0] for st in steps])
            pos = np.array([st[1] for st in steps], dtype=float)
            nodes = np.array([st[2] for st in steps], dtype=float)
            secs = np.array([st[3] for st in steps], dtype=float)
            t0, t1 = t[0], t[-1]
            head = t <= t0 + 0.1 * (t1 - t0)
            tail = t >= t1 - 0.1 * (t1 - t0)
            for name, mask in (("head", head), ("tail", tail)):
                s = secs[mask].sum()
                out[f"{name}_positions_per_s"] = pos[mask].sum() / s if s else math.nan
                out[f"{name}_nodes_per_s"] = nodes[mask].sum() / s if s else math.nan
            head_rate, tail_rate = out["head_nodes_per_s"], out["tail_nodes_per_s"]
            # engine players report no nodes to the loop: no ratio, not a 0/0 warning
            out["tail_over_head"] = tail_rate / head_rate if head_rate > 0 else math.nan
            edges = np.linspace(t0, t1, 11)
            bucket = np.clip(np.searchsorted(edges, t, side="left") - 1, 0, 9)
            out["deciles_positions_per_s"] = [  # type: ignore[assignment]
                round(float(pos[bucket == k].sum() / secs[bucket == k].sum()), 2)
                if secs[bucket == k].sum() else None for k in range(10)]
        return {k: (round(v, 3) if isinstance(v, float) else v) for k, v in out.items()}


class _Live:
    """A game in a batch slot."""

    def __init__(self, spec: GameSpec, players: Mapping[str, PlayerSpec],
                 checkpoints: GameCheckpoints | None = None) -> None:
        self.spec = spec
        white, black = players[spec.white].time_control, players[spec.black].time_control
        self.clock = GameClock(white, black) if white is not None and black is not None \
            else None
        self.board = spec.opening.board()
        self.start = spec.opening.start_board()
        self.moves = [m.uci() for m in self.board.move_stack]
        self.stats: list[MoveStat] = [MoveStat("book") for _ in self.moves]
        self.result: str | None = None
        self.termination: str | None = None
        self.forfeit: str | None = None
        self.checkpointed = checkpoints is not None and checkpointable(
            players[spec.white], players[spec.black])
        if self.checkpointed:
            assert checkpoints is not None
            saved = checkpoints.restore(spec.index, spec.seed, spec.white, spec.black,
                                        spec.opening.name, self.start.fen(), spec.tags,
                                        self.board)
            if saved is not None:
                self.moves, self.stats = saved

    def saved(self) -> SavedGame:
        """This game in play, as a checkpoint saves it."""
        return SavedGame(index=self.spec.index, seed=self.spec.seed, white=self.spec.white,
                         black=self.spec.black, opening=self.spec.opening.name,
                         start_fen=self.start.fen(),
                         tags={k: str(v) for k, v in self.spec.tags.items()},
                         moves=tuple(self.moves), stats=tuple(self.stats))

    def mover(self) -> str:
        return self.spec.white if self.board.turn == chess.WHITE else self.spec.black

    def push(self, move: chess.Move, stat: MoveStat) -> None:
        self.board.push(move)
        self.moves.append(move.uci())
        self.stats.append(stat)

    def forfeit_by(self, failure: EngineFailure) -> None:
        """The side to move's engine broke the protocol (an illegal move, a crash, no
        answer): it loses the game, as cutechess adjudicates; ``failure`` says why."""
        self.result = "0-1" if self.board.turn == chess.WHITE else "1-0"
        self.termination = failure.kind
        self.forfeit = f"{self.mover()} ({chess.COLOR_NAMES[self.board.turn]}): " \
                       f"{failure.message}"

    def flag(self, used_ms: float, left_ms: float) -> None:
        """The side to move ran out of time (its late move is not played)."""
        self.result = flag_result(self.board, self.board.turn)
        self.termination = TIME_FORFEIT
        self.forfeit = f"{self.mover()} took {used_ms:.0f} ms with {left_ms:.0f} ms left"

    def check_end(self, max_plies: int | None) -> bool:
        end = game_end(self.board, len(self.moves), max_plies)
        if end is not None:
            self.result, self.termination = end
        return self.result is not None

    def record(self, max_plies: int | None) -> GameRecord:
        assert self.result is not None and self.termination is not None
        return GameRecord(
            index=self.spec.index, seed=self.spec.seed,
            white=self.spec.white, black=self.spec.black,
            opening=self.spec.opening.name, start_fen=self.start.fen(),
            moves=list(self.moves), stats=list(self.stats), result=self.result,
            termination=self.termination, final_fen=self.board.fen(),
            tags=dict(self.spec.tags), max_plies=max_plies,
            time_control=None if self.clock is None else _pgn_time_control(self.clock),
            forfeit=self.forfeit)


def _pgn_time_control(clock: GameClock) -> str:
    """PGN TimeControl: one value, or ``white/black`` controls for time odds."""
    if clock.white == clock.black:
        return clock.white.pgn()
    return f"{clock.white.pgn()}:{clock.black.pgn()}"


class _PlainProgress:
    """Progress as plain lines on stderr, for logs and pipes (no cursor moves): one line
    at every tenth of the games and at least every ``interval`` seconds between, and one
    at the end, after one at the start that says the search compiles first. The time left
    is estimated from the games finished after the first finished ones (the time before
    them is mostly compiling), so the first count has none."""

    def __init__(self, total: int, done: int, description: str, interval: float = 60.0):
        self.total, self.done, self.description = total, done, description
        self.interval, self.t0 = interval, time.perf_counter()
        self.last_t, self.last_tenth = self.t0, 10 * done // max(total, 1)
        self.rates = "-"
        self.first: tuple[float, int] | None = None  # (time, games done) at the first update
        if done < total:  # the first step compiles (or loads) the search: say so up front
            print(f"{description}: {done}/{total} games; compiling or loading the search "
                  "first", file=sys.stderr, flush=True)

    def _line(self) -> None:
        now = time.perf_counter()
        elapsed = now - self.t0
        left = ""
        if self.first is not None and self.first[1] < self.done < self.total:
            pace = (now - self.first[0]) / (self.done - self.first[1])  # s per game
            left = f", ~{_clock(pace * (self.total - self.done))} left"
        print(f"{self.description}: {self.done}/{self.total} games, {self.rates}, "
              f"{_clock(elapsed)} elapsed{left}", file=sys.stderr, flush=True)

    def update(self, games: int, nodes_per_s: float, positions_per_s: float) -> None:
        self.done += games
        self.rates = f"{nodes_per_s:,.0f} nodes/s"
        now = time.perf_counter()
        if games and self.first is None:
            self.first = (now, self.done)
        tenth = 10 * self.done // max(self.total, 1)
        if games and (tenth > self.last_tenth or now - self.last_t >= self.interval):
            self.last_tenth, self.last_t = tenth, now
            self._line()

    def stop(self) -> None:
        if self.last_tenth < 10:
            self._line()


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


NARROW_TERMINAL = 100  # columns: below this the bar drops nodes/s and shrinks (80 fits)


def _progress_columns(width: int) -> list:
    """The rich progress bar's columns for a terminal ``width`` wide: games done, rates,
    ETA and elapsed time. Below ``NARROW_TERMINAL`` columns the bar is short and nodes/s
    is left out (positions/s stays), so that the ETA is never cut to ``0:00:…``."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    head = [TextColumn("[bold]{task.description}")]
    tail = [TextColumn("ETA"), TimeRemainingColumn(), TimeElapsedColumn()]
    if width < NARROW_TERMINAL:
        return head + [BarColumn(bar_width=10), MofNCompleteColumn(), TextColumn("games"),
                       TextColumn("{task.fields[pps]:>5} pos/s")] + tail
    return head + [BarColumn(), MofNCompleteColumn(), TextColumn("games"),
                   TextColumn("{task.fields[nps]:>8} nodes/s"),
                   TextColumn("{task.fields[pps]:>6} pos/s")] + tail


class _Progress:
    """A rich progress bar: games done, nodes/s, ETA (no-op when disabled); plain lines
    when stderr is not a terminal (``_PlainProgress``)."""

    def __init__(self, total: int, done: int, description: str, enabled: bool) -> None:
        self.enabled = enabled
        self.plain: _PlainProgress | None = None
        if not enabled:
            return
        if not sys.stderr.isatty():
            self.plain = _PlainProgress(total, done, description)
            return
        from rich.console import Console
        from rich.progress import Progress

        console = Console(file=sys.stderr)
        self.progress = Progress(*_progress_columns(console.width), console=console,
                                 transient=False)
        self.task = self.progress.add_task(description, total=total, completed=done,
                                           nps="-", pps="-")
        self.progress.start()

    def update(self, games: int, nodes_per_s: float, positions_per_s: float) -> None:
        if self.plain is not None:
            self.plain.update(games, nodes_per_s, positions_per_s)
        elif self.enabled:
            self.progress.update(self.task, advance=games, nps=f"{nodes_per_s:,.0f}",
                                 pps=f"{positions_per_s:,.1f}")

    def close(self) -> None:
        if self.plain is not None:
            self.plain.stop()
        elif self.enabled:
            self.progress.stop()


SearchHook = Callable[[GameSpec, int, SearchResult, chess.Move], None]
"""``on_search(game, ply, result, move)``: called after every zerochess search of a game, with
the game's spec, the ply of the searched position (``board.ply()``, the number that seeds
the search and the move choice), its ``SearchResult`` (``result.board`` holds the position
with the game's move stack) and the move about to be played."""


def play_games(
    specs: Sequence[GameSpec],
    players: Mapping[str, PlayerSpec],
    model: Any,
    *,
    batch_size: int = 64,
    max_plies: int | None = None,
    writer: GameWriter | None = None,
    skip: Iterable[int] = (),
    progress: bool = False,
    description: str = "games",
    shrink_tail: bool | None = None,
    on_game: Callable[[GameRecord], None] | None = None,
    stop_after: int | None = None,
    params: Mapping[str, Any] | None = None,
    models: Mapping[str, Any] | None = None,
    max_nodes: int | None = None,
    on_search: SearchHook | None = None,
    checkpoints: GameCheckpoints | None = None,
    rules: str | None = None,
    on_position: Callable[[GameSpec, Any], None] | None = None,
    plies_per_call: int = 16,
    scan: bool | None = None,
) -> tuple[list[GameRecord], RunStats]:
    """Play ``specs`` (minus ``skip`` and games the writer already holds), batched.

    Returns the records of the games played now and the run's throughput stats.
    ``stop_after`` stops after that many finished games (simulates an interruption).
    ``shrink_tail``: once the queue is empty, search with smaller compiled batch sizes
    (B/2, B/4, ... >= 8) as games finish; None = only when there are >= 4 B games.

    Per-player networks: ``models`` maps a player name to its model (default ``model``)
    and ``params`` to its network parameters (default that model's own). Players with
    the same model share one compiled searcher whatever their parameters (they are data,
    not constants); each step searches the games of each (model, params) apart, in one
    batch per group (when several groups share a step, each takes the smallest batch size
    that fits it, preferring sizes already compiled; with ``shrink_tail`` a match of two
    weights of one net in batches of 2B thus runs as two batches of B).
    A game's moves depend only on its spec and its players' networks, so grouping does
    not change them. ``max_nodes``: the trees' size (default the players' largest
    ``nodes`` + 1); fix it when node counts change between calls, so nothing recompiles.
    ``on_search``: see ``SearchHook`` (a game continued from a checkpoint calls it for
    the plies it plays now only).
    ``checkpoints``: save the games in play there (``games.checkpoints``) and continue
    the saved ones from their moves (zerochess players without tree reuse or clocks).
    ``rules``: where the searches' chess rules run (``players.RULES``: ``host`` or
    ``device``; None: the ``Searcher``'s default for this machine).
    With device rules, games whose players all search with one network's parameters (no
    engine, no tree reuse) run as one compiled scan over plies (``games.device_loop``:
    the same games, ``plies_per_call`` plies per call, the host writing and saving
    between calls), unless the caller gives ``on_search`` without ``on_position`` (the
    scan has no ``SearchResult`` to give). Other games run here, step by step.
    ``on_position(game, position)``: every searched position's training data
    (``plies.SearchedPosition``), the same from either loop.
    ``scan``: True requires the device scan (a ``ConfigError`` says why it cannot serve),
    False keeps the games on this loop; None (default) takes the scan where it serves.
    """
    skip = set(skip) | (writer.completed if writer is not None else set())
    queue = collections.deque(sorted((s for s in specs if s.index not in skip),
                                     key=lambda s: s.index))
    for s in queue:
        for name in (s.white, s.black):
            if name not in players:
                raise ConfigError(f"game {s.index}: unknown player {quote(name)}; players: "
                                  f"{', '.join(map(quote, players))}")
    models, params = dict(models or {}), dict(params or {})
    searchers = {name: models.get(name, model) for name, p in players.items()
                 if not p.is_engine}
    for name, m in searchers.items():
        if m is None:
            raise ConfigError(f"player {quote(name)} searches but has no model")
    nodes_needed = max([players[n].nodes for n in searchers], default=1) + 1
    if max_nodes is not None and max_nodes < nodes_needed:
        raise ConfigError(f"max_nodes {max_nodes} < the largest nodes per move + 1 = "
                         f"{nodes_needed}")
    max_nodes = max_nodes or nodes_needed
    if shrink_tail is None:  # each extra batch size costs a compile: worth it on long runs
        shrink_tail = len(queue) >= 4 * batch_size
    pools: dict[int, SearcherPool] = {}
    for m in searchers.values():
        if id(m) not in pools:
            pools[id(m)] = SearcherPool(m, batch_size, max_nodes, shrink_tail=shrink_tail,
                                        rules=rules)
    slots: list[_Live | None] = [None] * batch_size
    pending: collections.deque[_Live] = collections.deque()  # started, not yet in a slot
    records: list[GameRecord] = []
    stats = RunStats()
    bar = _Progress(len(specs), len(specs) - len(queue), description, progress)
    t0 = time.perf_counter()
    recent: collections.deque[tuple[float, int, int]] = collections.deque(maxlen=50)
    prev_now = 0.0
    owned = [s.index for s in specs]

    def checkpoint(force: bool) -> None:
        if checkpoints is not None:
            checkpoints.save([lv.saved() for lv in slots if lv is not None
                              and lv.result is None and lv.checkpointed], owned, force)

    def finish(live: _Live) -> None:
        rec = live.record(max_plies)
        if writer is not None:
            writer.write(rec)
        if on_game is not None:
            on_game(rec)
        records.append(rec)
        stats.games += 1

    def next_live() -> _Live | None:
        # a game over before its first search (or at the cap) is recorded at once
        while queue:
            live = _Live(queue.popleft(), players, checkpoints)
            if not live.check_end(max_plies):
                return live
            finish(live)
        return None

    def network(name: str) -> tuple[SearcherPool, Any]:
        m = searchers[name]
        return pools[id(m)], params.get(name, m.params)

    names = {n for s in queue for n in (s.white, s.black)}
    source: _HostPlies | device_loop.ScanSource | None = None
    if scan is True and (rules or default_rules()) != "device":
        raise ConfigError("scan=True needs rules='device'")
    if (rules or default_rules()) == "device" and queue and scan is not False:
        why_not = (
            "an on_search hook wants SearchResults" if on_search is not None
            and on_position is None else "an engine plays" if not names <= searchers.keys()
            else device_loop.can_play({n: players[n] for n in names},
                                      {n: searchers[n] for n in names},
                                      {n: network(n)[1] for n in names}))
        if why_not is not None and scan:
            raise ConfigError(f"the device scan cannot play these games: {why_not}")
        if why_not is not None:
            _LOG.info("games step on the host loop, not the device scan: %s", why_not)
        else:
            first = queue[0].white
            source = device_loop.ScanSource(
                names, players, searchers[first], network(first)[1], batch_size=batch_size,
                max_plies=max_plies, max_nodes=max_nodes,
                edges_per_node=edges_per_node_for(max_nodes), on_position=on_position,
                plies_per_call=plies_per_call)
    if source is None:
        source = _HostPlies(players, network, max_plies, on_search, on_position)

    try:
        while stop_after is None or len(records) < stop_after:
            games_before = stats.games
            for i in range(batch_size):
                if slots[i] is None:
                    slots[i] = pending.popleft() if pending else next_live()
            while len(pending) < source.lookahead and (live := next_live()) is not None:
                pending.append(live)
            if all(lv is None for lv in slots):
                break
            step = source.advance(slots, pending, more=bool(queue))
            stats.positions += step.positions
            stats.nodes += step.nodes
            stats.compile_seconds += step.compile_seconds
            now = time.perf_counter() - t0
            stats.steps.append((now, step.positions, step.nodes, now - prev_now, step.compiled))
            prev_now = now
            for live in step.finished:
                finish(live)
            checkpoint(False)
            recent.append((now, stats.positions, stats.nodes))
            span = recent[-1][0] - recent[0][0]
            nps = (recent[-1][2] - recent[0][2]) / span if span > 0 else 0.0
            pps = (recent[-1][1] - recent[0][1]) / span if span > 0 else 0.0
            bar.update(stats.games - games_before, nps, pps)
    finally:
        bar.close()
        source.close()
        checkpoint(True)  # the games in play (the pending ones have not begun)
    stats.seconds = time.perf_counter() - t0
    return records, stats


class _HostPlies:
    """The host ply source: one ply a call, with engines, clocks, tree reuse and several
    networks (each group of games of one network and parameters searched as a batch)."""

    lookahead = 0  # games started ahead of a free slot

    def __init__(self, players: Mapping[str, PlayerSpec],
                 network: Callable[[str], tuple[SearcherPool, Any]], max_plies: int | None,
                 on_search: SearchHook | None,
                 on_position: Callable[[GameSpec, Any], None] | None) -> None:
        self.players, self.network, self.max_plies = players, network, max_plies
        self.on_search, self.on_position = on_search, on_position
        self.engines: dict[str, EnginePlayer] = {}
        self.kept: dict[tuple[int, str, bool], ReusedTree] = {}  # trees of tree_reuse players

    def advance(self, slots: list[_Live | None], pending: collections.deque[_Live],
                more: bool) -> Advance:
        """Play one ply of every game in ``slots`` (``more``: the queue holds games);
        finished games leave their slots."""
        players = self.players
        lives = [lv for lv in slots if lv is not None]
        for lv in lives:  # external engines move at once (sequentially, on the host)
            while lv.result is None and players[lv.mover()].is_engine:
                if not self._engine_move(lv):
                    break
        groups: dict[tuple[int, int], list[_Live]] = {}
        for lv in lives:
            if lv.result is None:
                pool, net = self.network(lv.mover())
                groups.setdefault((id(pool), id(net)), []).append(lv)
        step = Advance()
        for group in groups.values():
            pool, net = self.network(group[0].mover())
            several = len(groups) > 1  # e.g. a match of two weights of one net
            size = pool.size_for(len(group), not more or several, several)
            compiled = not pool.is_compiled(size)
            ts = time.perf_counter()
            pos, nodes = _search_step(group, players, pool, size, net, self.max_plies,
                                      self.on_search, self.kept, self.on_position)
            if compiled:
                step.compile_seconds += time.perf_counter() - ts
            step.compiled |= compiled
            step.positions, step.nodes = step.positions + pos, step.nodes + nodes
        for i, lv in enumerate(slots):
            if lv is not None and lv.result is not None:
                for key in [k for k in self.kept if k[0] == lv.spec.index]:
                    del self.kept[key]
                step.finished.append(lv)
                slots[i] = None
        return step

    def _engine_move(self, lv: _Live) -> bool:
        """The side to move's engine plays; False when that ended the game's moves here."""
        name = lv.mover()
        if name not in self.engines:
            self.engines[name] = EnginePlayer(self.players[name].engine)  # type: ignore[arg-type]
        try:
            move, st = self.engines[name].play(lv.board, game_key=lv.spec.index,
                                               clock=lv.clock)
        except EngineFailure as failure:
            # the engine loses this game and is replaced for the next move
            self.engines.pop(name).close(kill=True)
            lv.forfeit_by(failure)
            print(f"warning: game {lv.spec.index}: {lv.forfeit}; the game is "
                  f"lost ({failure.kind})", file=sys.stderr, flush=True)
            return False
        if lv.clock is not None:
            assert st.time_ms is not None
            left = lv.clock.left_ms[lv.board.turn]
            if not lv.clock.punch(lv.board.turn, st.time_ms):
                lv.flag(st.time_ms, left)
                return False
            st.clock_ms = lv.clock.left_ms[lv.board.turn]
        lv.push(move, st)
        lv.check_end(self.max_plies)
        return True

    def close(self) -> None:
        for eng in self.engines.values():
            eng.close()


def _search_step(games: Sequence[_Live], players: Mapping[str, PlayerSpec],
                 pool: SearcherPool, size: int, params: Any, max_plies: int | None,
                 on_search: SearchHook | None,
                 kept: dict[tuple[int, str, bool], ReusedTree] | None = None,
                 on_position: Callable[[GameSpec, Any], None] | None = None
                 ) -> tuple[int, int]:
    """One batched search of ``games`` (all to move for players of one network), a move
    chosen and played in each. Returns the positions searched and their simulations.

    ``kept``: the trees of ``tree_reuse`` players by (game index, player, colour), taken
    for this search and replaced by its trees."""
    kept = {} if kept is None else kept
    pl = [players[lv.mover()] for lv in games]
    plies = [lv.board.ply() for lv in games]
    seeds = [search_seed(lv.spec.seed, ply) for lv, ply in zip(games, plies, strict=True)]
    keys = [(lv.spec.index, lv.mover(), lv.board.turn) for lv in games]
    reuse = [kept.pop(key, None) if p.tree_reuse else None
             for key, p in zip(keys, pl, strict=True)]
    results = pool.search([lv.board for lv in games], [p.search for p in pl],
                             [p.nodes for p in pl], seeds, size, params, reuse=reuse)
    for i, (key, p) in enumerate(zip(keys, pl, strict=True)):
        if p.tree_reuse:
            kept[key] = pool.keep(i)
    for lv, p, ply, res in zip(games, pl, plies, results, strict=True):
        temp = p.temperature.at(ply)
        move = res.choose_move(temp, move_rng(lv.spec.seed, ply),
                               visit_offset=p.temperature.visit_offset,
                               value_cutoff=p.temperature.value_cutoff)
        if on_search is not None:
            on_search(lv.spec, ply, res, move)
        record = from_result(res, move, temp)
        if on_position is not None:
            on_position(lv.spec, searched_position(record, lv.board))
        lv.push(move, move_stat(record))
        lv.check_end(max_plies)
    return len(games), sum(p.nodes for p in pl)
