"""Expected run time of an experiment, from a short measured warm-up on this machine."""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import chess
import numpy as np

from zerochess.experiments.terminal import duration_text
from zerochess.games.checkpoints import saved_plies
from zerochess.games.config import EngineSpec, PlayerSpec
from zerochess.games.loop import GameSpec
from zerochess.games.records import read_games_csv

WARMUP_SIMULATIONS = 64  # simulations per tree of the timed warm-up search (<= nodes)
ENGINE_WARMUP_MOVES = 8  # timed engine moves (after one untimed move that loads the net)
MIN_GAMES_FOR_LENGTH = 10  # finished games needed to trust their mean length
# Assumed mean game lengths (plies) before a run folder holds games; a resumed run uses
# its own games. Self-play: a rough guess for Maia-1900 games. Odds: the queen-odds pilot
# (docs/results/odds_pilot/, Maia-1900 vs lc0 + Maia at 1 node) averaged about 70 plies.
SELFPLAY_PLIES = 160.0
ODDS_PLIES = 80.0


@dataclasses.dataclass(frozen=True)
class PlannedGames:
    """One ``common.play`` call of an experiment: its games, players and batch size.

    ``plies`` is the assumed mean game length (plies) until the run folder holds games.
    """

    label: str
    specs: Sequence[GameSpec]
    players: Mapping[str, PlayerSpec]
    batch_size: int
    plies: float


@dataclasses.dataclass
class SearchRate:
    """A measured batched search: nodes/s, the fixed seconds of a step (root init and
    reading the results) for the whole batch, and the compile seconds."""

    max_nodes: int
    batch_size: int
    nodes_per_s: float
    step_s: float
    compile_s: float


@dataclasses.dataclass
class Estimate:
    """The expected run time of the games left, and the measurements behind it."""

    backend: str
    machine: str
    games_total: int
    games_left: int
    plies_per_game: float
    plies_source: str
    seconds: float
    parts: list[dict[str, Any]]
    search_rates: list[SearchRate]
    engine_ms_per_move: dict[str, float]
    warmup_seconds: float

    def text(self) -> str:
        """A few lines for the terminal and summary.md."""
        if not self.games_left:
            return (f"All {self.games_total} games are already in the run folder: nothing to "
                    "play, nothing to estimate.")
        lines = [
            f"Expected run time on this machine ({self.machine}): {duration_text(self.seconds)} "
            f"for the {self.games_left} of {self.games_total} games left "
            f"(mean game length {self.plies_per_game:.0f} plies: {self.plies_source}; the "
            "time scales with it).",
        ]
        for r in self.search_rates:
            lines.append(
                f"  measured: {r.nodes_per_s:,.0f} nodes/s searching {r.batch_size} trees of "
                f"{r.max_nodes} nodes (+{1000 * r.step_s / r.batch_size:.1f} ms per position for "
                f"root init and results; compile {r.compile_s:.0f} s)")
        for name, ms in self.engine_ms_per_move.items():
            lines.append(f"  measured: {name} {ms:.1f} ms per move")
        for p in self.parts:
            if p["games_left"]:
                lines.append(f"  {p['label']}: {p['games_left']} games, "
                             f"{duration_text(p['seconds'])}")
        other = "a GPU" if self.backend == "cpu" else "a CPU"
        lines.append(f"  On {other}: run the same command with --estimate there (a warm-up of "
                     "about a minute, nothing is played).")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["expected"] = duration_text(self.seconds)
        return d


def machine_description() -> tuple[str, str]:
    """(jax backend, a short description: "cpu, 2 cores" or the GPU's name)."""
    import jax

    backend = jax.default_backend()
    if backend == "cpu":
        return backend, f"cpu, {os.cpu_count()} cores"
    return backend, f"{backend}: {jax.devices()[0].device_kind}, {os.cpu_count()} CPU cores"


def _done(out_dir: Path | None) -> tuple[set[int], list[int]]:
    """Indices and lengths (plies) of the games already in ``out_dir``."""
    if out_dir is None or not (out_dir / "games.csv").is_file():
        return set(), []
    rows = read_games_csv(out_dir / "games.csv")
    return {int(r["index"]) for r in rows}, [int(r["plies"]) for r in rows]


def _warmup_boards(specs: Sequence[GameSpec], n: int, seed: int = 0) -> list[chess.Board]:
    """``n`` positions like the run's: its start positions, each a few random plies on."""
    rng = np.random.default_rng(seed)
    boards = []
    for i in range(n):
        board = specs[i % len(specs)].opening.board()
        for _ in range(i % 7):
            moves = list(board.legal_moves)
            if not moves or board.is_game_over():
                break
            board.push(moves[int(rng.integers(len(moves)))])
        if board.is_game_over():
            board = specs[i % len(specs)].opening.board()
        boards.append(board)
    return boards


def measure_search(model_name: str, players: Sequence[PlayerSpec], specs: Sequence[GameSpec],
                   batch_size: int, rules: str | None = None) -> SearchRate:
    """Time one batched search step like the run's: init, search, read the results.

    Compiles first (as the run would: the same cached ``Searcher``, so the run reuses the
    compile); then times the fixed cost of a step (init + results) and the search.
    """
    from zerochess.games.players import get_model, get_searcher

    max_nodes = max(p.nodes for p in players) + 1
    searcher = get_searcher(get_model(model_name), max_nodes, rules)
    boards = _warmup_boards(specs, batch_size)
    configs = [players[i % len(players)].search for i in range(batch_size)]
    sims = max(1, min(WARMUP_SIMULATIONS, max_nodes - 1))
    seeds = list(range(batch_size))
    t0 = time.perf_counter()
    searcher.results(searcher.run(searcher.init(boards, configs, seed=seeds), sims))  # compiles
    compile_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    state = searcher.run(searcher.init(boards, configs, seed=seeds), 0)  # waits for init
    t1 = time.perf_counter()
    state = searcher.run(state, sims)
    t2 = time.perf_counter()
    searcher.results(state)
    t3 = time.perf_counter()
    step_s = (t1 - t0) + (t3 - t2)
    return SearchRate(max_nodes, batch_size, batch_size * sims / max(t2 - t1, 1e-9),
                      step_s, max(compile_s - (t3 - t0), 0.0))


def measure_engine(spec: EngineSpec, board: chess.Board) -> float:
    """Seconds per move of ``spec`` (after one untimed move), playing from ``board``."""
    from zerochess.games.players import EnginePlayer

    engine = EnginePlayer(spec)
    try:
        board = board.copy()
        times = []
        for i in range(ENGINE_WARMUP_MOVES + 1):
            if board.is_game_over():
                break
            t0 = time.perf_counter()
            move, _ = engine.play(board, game_key=0)
            if i:
                times.append(time.perf_counter() - t0)
            board.push(move)
        return float(np.median(times)) if times else 0.0
    finally:
        engine.close()


def estimate(model_name: str, plan: Sequence[PlannedGames], out_dir: Path | None = None,
             max_plies: int | None = None, rules: str | None = None) -> Estimate:
    """Measure a warm-up and estimate the run time of the planned games not yet played
    (a game in play when the run stopped counts the plies it has left: its saved moves
    are not played again). ``rules``: where the searches' chess rules run."""
    backend, machine = machine_description()
    from zerochess.experiments.terminal import wrap_lines

    t_start = time.perf_counter()
    done, lengths = _done(out_dir)
    if any(s.index not in done for part in plan for s in part.specs):  # else: nothing to time
        print(wrap_lines(f"Measuring a short warm-up on this machine ({machine}) for the "
                         "run-time estimate (the search compiles first; the run reuses the "
                         "compile)..."), file=sys.stderr, flush=True)
    in_play = saved_plies(out_dir)
    known = len(lengths) >= MIN_GAMES_FOR_LENGTH
    source = (f"mean of the {len(lengths)} games in the run folder" if known
              else "the experiment's assumption")
    rates: dict[tuple[int, int], SearchRate] = {}
    engine_s: dict[str, float] = {}
    parts = []
    total = 0.0
    plies_shown = 0.0
    for part in plan:
        left = [s for s in part.specs if s.index not in done]
        plies = float(np.mean(lengths)) if known else part.plies
        if max_plies:
            plies = min(plies, float(max_plies))
        plies_shown = max(plies_shown, plies)
        searchers = [p for p in part.players.values() if not p.is_engine]
        rate = None
        if searchers and left:
            key = (max(p.nodes for p in searchers) + 1, part.batch_size)
            if key not in rates:
                rates[key] = measure_search(model_name, searchers, left, part.batch_size,
                                            rules)
            rate = rates[key]
        cost: dict[str, float] = {}
        for name, p in part.players.items():
            if p.is_engine:
                label = f"{name} ({p.engine.describe()})"  # type: ignore[union-attr]
                if left and label not in engine_s:
                    engine_s[label] = measure_engine(p.engine, left[0].opening.board())  # type: ignore[arg-type]
                cost[name] = engine_s.get(label, 0.0)
            elif rate is not None:
                cost[name] = rate.step_s / rate.batch_size + p.nodes / rate.nodes_per_s
        secs = sum(max(plies - in_play.get(s.index, 0), 0.0) / 2
                   * (cost.get(s.white, 0.0) + cost.get(s.black, 0.0)) for s in left)
        if rate is not None and len(left) >= 4 * part.batch_size:
            # shrink_tail's smaller batch sizes (B/2, B/4, ... >= 8) each compile once
            sizes, b = 0, part.batch_size
            while b // 2 >= 8:
                sizes, b = sizes + 1, b // 2
            secs += sizes * rate.compile_s
        total += secs
        parts.append({"label": part.label, "games": len(part.specs), "games_left": len(left),
                      "plies_per_game": plies, "seconds": secs})
    return Estimate(
        backend=backend, machine=machine,
        games_total=sum(len(p.specs) for p in plan),
        games_left=sum(p["games_left"] for p in parts),
        plies_per_game=plies_shown, plies_source=source, seconds=total, parts=parts,
        search_rates=list(rates.values()),
        engine_ms_per_move={k: 1000 * v for k, v in engine_s.items()},
        warmup_seconds=time.perf_counter() - t_start)


def write_estimate(out_dir: Path, est: Estimate) -> None:
    """``estimate.json`` in the run folder (the estimate made before this call played)."""
    (out_dir / "estimate.json").write_text(json.dumps(est.to_dict(), indent=1) + "\n")


__all__ = ["ODDS_PLIES", "SELFPLAY_PLIES", "Estimate", "PlannedGames", "SearchRate",
           "estimate", "machine_description", "measure_engine", "measure_search",
           "write_estimate"]
