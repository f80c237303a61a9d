"""Time use of a run with real clocks, read back from its PGN (``[%emt]``/``[%clk]``): a
table per move, the mean time per move number for each player with a 95% interval, time
losses, and a plot. Reading the PGN (not in-memory state) keeps it right across resumes.
"""

from __future__ import annotations

import csv
import dataclasses
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import chess
import chess.pgn

from zerochess.games.clocks import TIME_FORFEIT
from zerochess.games.records import read_pgn_games
from zerochess.games.stats import Z95

MOVE_FIELDS = ["game", "ply", "move_number", "player", "color", "time_ms", "clock_ms"]
CURVE_FIELDS = ["player", "move_number", "n", "mean_ms", "ci_low_ms", "ci_high_ms",
                "mean_clock_ms"]


@dataclasses.dataclass(frozen=True)
class MoveTime:
    """One timed move: who, when, how long, and the clock left after it (increment in)."""

    game: int
    ply: int  # 0-based ply of the game (book moves included)
    move_number: int  # the mover's own move count in this game, from 1 (book excluded)
    player: str
    color: str  # "white" | "black"
    time_ms: float
    clock_ms: float | None


def move_times(games: Iterable[chess.pgn.Game]) -> list[MoveTime]:
    """Every move with an ``[%emt]`` annotation."""
    out = []
    for game in games:
        index = int(game.headers.get("GameIndex", "-1"))
        counts = {chess.WHITE: 0, chess.BLACK: 0}
        board = game.board()
        for ply, node in enumerate(game.mainline()):
            mover = board.turn
            emt = node.emt()
            if emt is not None:
                counts[mover] += 1
                clk = node.clock()
                out.append(MoveTime(
                    index, ply, counts[mover],
                    game.headers["White" if mover == chess.WHITE else "Black"],
                    "white" if mover == chess.WHITE else "black",
                    round(emt * 1000, 3), None if clk is None else round(clk * 1000, 3)))
            board.push(node.move)
    return out


def time_losses(games: Iterable[chess.pgn.Game]) -> dict[str, int]:
    """Games lost (or drawn) on time per player: the flagging side is the side to move in
    the final position (its late move is not played)."""
    out: dict[str, int] = defaultdict(int)
    for game in games:
        out[game.headers["White"]] += 0
        out[game.headers["Black"]] += 0
        if game.headers.get("Termination") == TIME_FORFEIT:
            board = game.end().board()
            out[game.headers["White" if board.turn == chess.WHITE else "Black"]] += 1
    return dict(out)


@dataclasses.dataclass(frozen=True)
class CurvePoint:
    player: str
    move_number: int
    n: int
    mean_ms: float
    ci_low_ms: float
    ci_high_ms: float
    mean_clock_ms: float


def time_use_curve(moves: Sequence[MoveTime]) -> list[CurvePoint]:
    """Mean time per move number and player, with a normal 95% interval of the mean."""
    groups: dict[tuple[str, int], list[MoveTime]] = defaultdict(list)
    for m in moves:
        groups[(m.player, m.move_number)].append(m)
    out = []
    for (player, number), ms in sorted(groups.items()):
        t = [m.time_ms for m in ms]
        n = len(t)
        mean = sum(t) / n
        sd = math.sqrt(sum((x - mean) ** 2 for x in t) / (n - 1)) if n > 1 else math.nan
        half = Z95 * sd / math.sqrt(n) if n > 1 else math.nan
        clocks = [m.clock_ms for m in ms if m.clock_ms is not None]
        out.append(CurvePoint(player, number, n, mean, mean - half, mean + half,
                              sum(clocks) / len(clocks) if clocks else math.nan))
    return out


def summary(moves: Sequence[MoveTime], losses: dict[str, int]) -> dict[str, Any]:
    """Per player: timed moves, mean / max move time, mean time used per game, losses."""
    out: dict[str, Any] = {}
    players = sorted({m.player for m in moves} | set(losses))
    for p in players:
        mine = [m for m in moves if m.player == p]
        per_game: dict[int, float] = defaultdict(float)
        for m in mine:
            per_game[m.game] += m.time_ms
        out[p] = {
            "moves": len(mine),
            "mean_move_ms": sum(m.time_ms for m in mine) / len(mine) if mine else math.nan,
            "max_move_ms": max((m.time_ms for m in mine), default=math.nan),
            "mean_game_ms": sum(per_game.values()) / len(per_game) if per_game else math.nan,
            "min_clock_ms": min((m.clock_ms for m in mine if m.clock_ms is not None),
                                default=math.nan),
            "time_losses": losses.get(p, 0),
        }
    return out


def _write_csv(path: Path, fields: Sequence[str], rows: Iterable[Any]) -> None:
    with open(path, "w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(fields))
        w.writeheader()
        for r in rows:
            w.writerow(dataclasses.asdict(r))


def plot_time_use(curve: Sequence[CurvePoint], path: Path, title: str) -> None:
    """Mean seconds per move number (95% band) and mean clock left, one line per player."""
    from matplotlib.figure import Figure  # not pyplot: the caller's backend is left alone

    fig = Figure(figsize=(8, 7))
    ax, ax2 = fig.subplots(2, 1, sharex=True)
    for player in sorted({c.player for c in curve}):
        pts = [c for c in curve if c.player == player]
        x = [c.move_number for c in pts]
        line, = ax.plot(x, [c.mean_ms / 1000 for c in pts], label=player)
        lo = [c.ci_low_ms / 1000 if math.isfinite(c.ci_low_ms) else c.mean_ms / 1000
              for c in pts]
        hi = [c.ci_high_ms / 1000 if math.isfinite(c.ci_high_ms) else c.mean_ms / 1000
              for c in pts]
        ax.fill_between(x, lo, hi, color=line.get_color(), alpha=0.2)
        ax2.plot(x, [c.mean_clock_ms / 1000 for c in pts], color=line.get_color(),
                 label=player)
    ax.set_ylabel("time used per move (s), mean and 95% CI")
    ax.set_title(title)
    ax.legend()
    ax.grid(alpha=0.3)
    ax2.set_ylabel("clock left after the move (s), mean")
    ax2.set_xlabel("move number (own moves)")
    ax2.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def write_time_use(run_dir: str | Path, title: str) -> dict[str, Any]:
    """Write ``time_use_moves.csv``, ``time_use_curve.csv`` and ``time_use.png`` for the
    run folder's ``games.pgn``; return the per-player summary (with time losses)."""
    out = Path(run_dir)
    pgn = out / "games.pgn"
    games = list(read_pgn_games(pgn)) if pgn.is_file() else []
    moves = move_times(games)
    curve = time_use_curve(moves)
    _write_csv(out / "time_use_moves.csv", MOVE_FIELDS, moves)
    _write_csv(out / "time_use_curve.csv", CURVE_FIELDS, curve)
    if curve:
        plot_time_use(curve, out / "time_use.png", title)
    return summary(moves, time_losses(games))
