"""A per-game scan of a run's self-play games (misevaluation, puzzles): the positions of a
``games.csv`` row, and a JSON-lines file of finished games, one line per game, that a
resumed run reads back (a line cut short by an interruption is dropped and redone)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import chess

from zerochess.errors import ConfigError, quote


def game_boards(row: Mapping[str, str]) -> tuple[list[chess.Board], list[chess.Move]]:
    """The positions before each move of a ``games.csv`` row (``start_fen``, ``moves``) and
    the moves: ``boards[i]`` is the position before ``moves[i]``."""
    board = chess.Board(row["start_fen"])
    boards, moves = [], []
    for uci in row["moves"].split():
        move = chess.Move.from_uci(uci)
        if move not in board.legal_moves:
            raise ConfigError(f"game {row.get('index')}: illegal move {quote(uci)} in "
                              f"games.csv at {board.fen()}")
        boards.append(board.copy(stack=False))
        moves.append(move)
        board.push(move)
    return boards, moves


def scan_plies(plies: int, min_ply: int, stride: int) -> list[int]:
    """The plies of a game of ``plies`` moves that a scan looks at."""
    return list(range(min_ply, plies, stride))


def check_scannable(name: str, rows: Sequence[Mapping[str, str]], min_ply: int,
                    stride: int, where: Any) -> None:
    """``ConfigError`` for an empty run: no games, or no position to scan in any of them."""
    if not rows:
        raise ConfigError(f"{name}: no games in {where}: nothing to scan")
    if not any(scan_plies(int(r["plies"]), min_ply, stride) for r in rows):
        longest = max(int(r["plies"]) for r in rows)
        raise ConfigError(f"{name}: none of the {len(rows)} games in {where} has a position "
                          f"to scan (min_ply {min_ply}, the longest game {longest} plies)")


class GameLog:
    """``path``: one JSON object per finished game (key ``game``: its index)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.done: dict[int, dict[str, Any]] = {}
        if path.is_file():
            lines = path.read_text(encoding="utf-8").splitlines()
            for i, line in enumerate(lines):
                try:
                    item = json.loads(line)
                    self.done[int(item["game"])] = item
                except (ValueError, KeyError, TypeError):
                    if i != len(lines) - 1:  # only the last line may be cut short
                        raise ConfigError(f"{path}: line {i + 1} is not a game record: "
                                          f"{quote(line)}") from None
            self._rewrite()  # drop a cut-short last line

    def _rewrite(self) -> None:
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text("".join(json.dumps(v) + "\n" for v in self.done.values()),
                       encoding="utf-8")
        os.replace(tmp, self.path)

    def add(self, items: Iterable[dict[str, Any]]) -> None:
        """Append finished games (flushed and synced: kept if the run stops next)."""
        with open(self.path, "a", encoding="utf-8") as f:
            for item in items:
                self.done[int(item["game"])] = item
                f.write(json.dumps(item) + "\n")
            f.flush()
            os.fsync(f.fileno())


__all__ = ["GameLog", "check_scannable", "game_boards", "scan_plies"]
