"""Stockfish as an independent judge: centipawns to a value on [-1, 1] (Lichess's win-chance
logistic) and multi-PV checks, driven by python-chess's ``chess.engine``."""

from __future__ import annotations

import math
import os
import shutil
from pathlib import Path
from typing import Any, NamedTuple

import chess
import chess.engine

from zerochess.errors import ConfigError, quote

LICHESS_K = 0.00368208  # Lichess's win% logistic: win% = 50 + 50 * (2 / (1 + e^(-k cp)) - 1)
CP_CLAMP = 1000
SEARCH_DIRS = ("/usr/games", "/usr/local/bin")  # looked in after PATH (Debian: /usr/games)
INSTALL_HINT = ("install it (Debian/Ubuntu: apt-get install stockfish, binary "
                "/usr/games/stockfish) or name the binary with `stockfish: {command: PATH}`")


def cp_to_value(cp: float) -> float:
    """Centipawns (side to move) -> win chances on [-1, 1] (Lichess's logistic)."""
    cp = max(-CP_CLAMP, min(CP_CLAMP, float(cp)))
    return 2.0 / (1.0 + math.exp(-LICHESS_K * cp)) - 1.0


def score_to_value(score: chess.engine.PovScore | chess.engine.Score, turn: chess.Color
                   ) -> float:
    """A python-chess score -> value on [-1, 1] from ``turn``'s view (mate: +-1)."""
    s = score.pov(turn) if isinstance(score, chess.engine.PovScore) else score
    mate = s.mate()
    if mate is not None:
        return 1.0 if mate > 0 else -1.0
    return cp_to_value(s.score())


def find_stockfish_binary(command: str | None = None) -> str:
    """The Stockfish binary: ``command`` (a path or a name on PATH) or, by default, the one
    on PATH / ``/usr/games`` / ``/usr/local/bin``. ``ConfigError`` naming what was looked
    for when there is none."""
    if command:
        found = shutil.which(command)
        if found is None:
            raise ConfigError(f"stockfish not found: {quote(command)} is not an executable "
                              f"file; {INSTALL_HINT}")
        return found
    found = shutil.which("stockfish")
    for folder in SEARCH_DIRS:
        path = Path(folder) / "stockfish"
        if found is None and path.is_file() and os.access(path, os.X_OK):
            found = str(path)
    if found is None:
        raise ConfigError(f"stockfish not found on PATH or in {', '.join(SEARCH_DIRS)}; "
                          f"{INSTALL_HINT}")
    return found


class Judged(NamedTuple):
    """Stockfish's view of a position, side to move's view: ``value`` of the best line;
    ``moves``/``values``: the multi-PV moves best first with their values."""

    value: float
    moves: list[chess.Move]
    values: list[float]


class Stockfish:
    """One Stockfish process, 1 thread (deterministic at a fixed node count), used as a
    context manager. ``nodes`` (or ``depth``) is the search limit of every call."""

    def __init__(self, command: str | None = None, nodes: int | None = 20000,
                 depth: int | None = None, hash_mb: int = 16) -> None:
        self.path = find_stockfish_binary(command)
        if not nodes and not depth:
            raise ConfigError("stockfish needs a node or depth limit, got neither")
        self.limit = chess.engine.Limit(nodes=nodes or None, depth=depth or None)
        try:
            self.engine = chess.engine.SimpleEngine.popen_uci(self.path)
        except (OSError, chess.engine.EngineError) as e:
            raise ConfigError(f"stockfish {quote(self.path)} could not be started: {e}") from e
        self.engine.configure({"Threads": 1, "Hash": hash_mb})

    def __enter__(self) -> Stockfish:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        try:
            self.engine.quit()
        except (chess.engine.EngineError, chess.engine.EngineTerminatedError, OSError):
            pass

    def judge(self, board: chess.Board, multipv: int = 1) -> Judged:
        """Stockfish's value of ``board`` (side to move) and its top ``multipv`` moves; a new
        game each call (``clear_hash``-like: no state from an earlier position)."""
        infos = self.engine.analyse(board, self.limit, multipv=multipv, game=object())
        if isinstance(infos, dict):
            infos = [infos]
        moves = [i["pv"][0] for i in infos if i.get("pv")]
        values = [score_to_value(i["score"], board.turn) for i in infos if i.get("pv")]
        value = values[0] if values else score_to_value(infos[0]["score"], board.turn)
        return Judged(value, moves, values)


__all__ = ["CP_CLAMP", "LICHESS_K", "SEARCH_DIRS", "Judged", "Stockfish", "cp_to_value",
           "find_stockfish_binary", "score_to_value"]
