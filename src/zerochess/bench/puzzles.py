"""``zerochess bench --puzzles``: mate puzzles solved at the first move."""

from __future__ import annotations

import csv
import json
import math
import pathlib
import platform
import time
from typing import Any, NamedTuple

import chess

DEFAULT_SET = pathlib.Path(__file__).parent / "data" / "mate_puzzles.csv"
Z95 = 1.959964


class Puzzle(NamedTuple):
    id: str
    theme: str  # mateIn1 or mateIn2
    board: chess.Board
    solution: list[str]


def load_puzzles(path: str | pathlib.Path = DEFAULT_SET) -> list[Puzzle]:
    with open(path, newline="") as f:
        rows = csv.DictReader(line for line in f if not line.startswith("#"))
        return [Puzzle(r["id"], r["theme"], chess.Board(r["fen"]), r["solution"].split())
                for r in rows]


def forces_mate(board: chess.Board, moves: int) -> bool:
    """The side to move mates within ``moves`` of its moves against any defence."""
    if moves <= 0:
        return False
    for move in list(board.legal_moves):
        board.push(move)
        try:
            if board.is_checkmate() or (moves > 1 and _mated_within(board, moves - 1)):
                return True
        finally:
            board.pop()
    return False


def _mated_within(board: chess.Board, moves: int) -> bool:
    if board.is_game_over(claim_draw=False):
        return board.is_checkmate()
    for move in list(board.legal_moves):
        board.push(move)
        try:
            if not forces_mate(board, moves):
                return False
        finally:
            board.pop()
    return True


def solves(puzzle: Puzzle, move: chess.Move) -> bool:
    board = puzzle.board.copy()
    board.push(move)
    if board.is_checkmate():
        return True
    return puzzle.theme == "mateIn2" and _mated_within(board, 1)


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a binomial rate k/n."""
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def solve_rate(searcher: Any, puzzles: list[Puzzle], config: Any, visits: int,
               seed: int = 0) -> dict[str, Any]:
    """Search every puzzle once (one batch) and count the solved ones."""
    start = time.perf_counter()
    results = searcher.search([p.board for p in puzzles], config, num_simulations=visits,
                              seed=seed)
    host_s = searcher.last_run.host_s
    solved = [solves(p, r.best_move) for p, r in zip(puzzles, results, strict=True)]
    k, n = sum(solved), len(puzzles)
    low, high = wilson(k, n)
    return {"solved": k, "puzzles": n, "rate": k / n if n else float("nan"),
            "ci95": [round(low, 4), round(high, 4)],
            "failed": [p.id for p, ok in zip(puzzles, solved, strict=True) if not ok],
            "proven": sum(r.mate() is not None for r in results),
            "seconds": round(time.perf_counter() - start, 2),
            "host_expand_s": round(host_s, 3),
            "leaves": int(sum(r.playouts - 1 for r in results))}


def main(args: Any) -> int:
    from zerochess.neural import load_model
    from zerochess.search import SearchConfig, Searcher

    tiny = getattr(args, "tiny", False)
    puzzles = load_puzzles()
    if tiny:
        puzzles = [p for p in puzzles if p.theme == "mateIn1"][:6] + [
            p for p in puzzles if p.theme == "mateIn2"][:6]
    models = getattr(args, "models", None) or ["builtin"]
    targets = {"mateIn1": 64, "mateIn2": 800}
    sims = getattr(args, "sims", None) or ([16] if tiny else [64, 800])
    searches = {"puct": {}, "contempt": {"n_scl": 5}}
    certainties = {"both": (True, False), "on": (True,), "off": (False,)}[
        getattr(args, "certainty", None) or "both"]
    themes = getattr(args, "themes", None) or ["mateIn1", "mateIn2"]
    from zerochess.provenance import git_info

    source = git_info()  # the code this process runs (the checkout may move meanwhile)
    rows: list[dict[str, Any]] = []
    for spec in models:
        model = load_model(spec)
        checks = (True, False) if model.mate_check else (False,)
        for theme in themes:
            subset = [p for p in puzzles if p.theme == theme]
            for visits in sims:
                searcher = Searcher(model, max_nodes=visits + 64)
                for name, extra in searches.items():
                    for certainty in certainties:
                        for check in checks:
                            cfg = SearchConfig(certainty_propagation=certainty,
                                               mate_check=check, **extra)
                            row = {"model": spec, "theme": theme, "search": name,
                                   "certainty_propagation": certainty, "mate_check": check,
                                   "visits": visits,
                                   **solve_rate(searcher, subset, cfg, visits)}
                            rows.append(row)
                            target = " (target)" if targets[theme] == visits else ""
                            print(f"{spec:<16} {theme:<8} {name:<9} certainty="
                                  f"{certainty!s:<5} mate_check={check!s:<5} "
                                  f"visits={visits:<5} {row['solved']}/{row['puzzles']} "
                                  f"= {100 * row['rate']:.1f}% [{100 * row['ci95'][0]:.1f}, "
                                  f"{100 * row['ci95'][1]:.1f}] host "
                                  f"{row['host_expand_s']:.1f} s{target}", flush=True)
                            _write(args, rows, source)
    _write(args, rows, source)
    return 0


def _write(args: Any, rows: list[dict[str, Any]], source: dict[str, Any]) -> None:
    """The JSON record so far (``--json``); ``source``: ``git_info()`` at the start."""
    if not getattr(args, "json", None):
        return
    import jax

    out = {"mode": "puzzles", "set": str(DEFAULT_SET.name), "rows": rows,
           "note": getattr(args, "note", None), **source,
           "machine": platform.platform(), "jax": jax.__version__,
           "devices": [str(d) for d in jax.devices()]}
    pathlib.Path(args.json).write_text(json.dumps(out, indent=1))


__all__ = ["Puzzle", "forces_mate", "load_puzzles", "main", "solve_rate", "solves", "wilson"]
