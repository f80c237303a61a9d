"""Mid-game checkpoints: the games still being played when a run stops are continued, not
replayed from the start."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import tempfile
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import chess

from zerochess.games.config import PlayerSpec
from zerochess.games.records import MoveStat

CHECKPOINT_FILE = "unfinished.json"
FORMAT = 1
DEFAULT_INTERVAL_S = 30.0


@dataclasses.dataclass(frozen=True)
class SavedGame:
    """A game in play as saved: its identity and its moves (UCI, book moves included)."""

    index: int
    seed: int
    white: str
    black: str
    opening: str
    start_fen: str
    tags: dict[str, str]
    moves: tuple[str, ...]
    stats: tuple[MoveStat, ...]


def checkpointable(white: PlayerSpec, black: PlayerSpec) -> bool:
    """Whether a game of these players continues exactly from its saved moves."""
    return all(not p.is_engine and not p.tree_reuse for p in (white, black))


_FIELDS = {f.name for f in dataclasses.fields(MoveStat)}


def _stat(data: Mapping[str, Any]) -> MoveStat:
    """A MoveStat from its JSON form (ValueError/TypeError on a damaged one)."""
    unknown = set(data) - _FIELDS
    if unknown:
        raise ValueError(f"unknown move statistics {sorted(unknown)}")
    values = {k: tuple(v) if k in ("wdl", "pv") and v is not None else v
              for k, v in data.items()}
    stat = MoveStat(**values)
    stat.comment()  # the PGN comment must format (a damaged number raises here)
    return stat


def _saved_game(data: Mapping[str, Any]) -> SavedGame:
    stats = tuple(_stat(s) for s in data["stats"])
    moves = tuple(str(m) for m in data["moves"])
    if len(stats) != len(moves):
        raise ValueError("moves and stats differ in length")
    return SavedGame(index=int(data["index"]), seed=int(data["seed"]),
                     white=str(data["white"]), black=str(data["black"]),
                     opening=str(data["opening"]), start_fen=str(data["start_fen"]),
                     tags={str(k): str(v) for k, v in dict(data["tags"]).items()},
                     moves=moves, stats=stats)


class GameCheckpoints:
    """``unfinished.json`` of a run folder: load the saved games, save the games in play.

    Args:
      out_dir: the run folder.
      interval: seconds between two saves during play (0: after every step); a final
        save when play stops is always made.
    """

    def __init__(self, out_dir: str | Path, interval: float = DEFAULT_INTERVAL_S) -> None:
        self.path = Path(out_dir) / CHECKPOINT_FILE
        self.interval = float(interval)
        self.notes: list[str] = []
        self.restored: list[int] = []  # the games continued from their saved moves
        self._saved: dict[int, SavedGame] = {}
        self._raw: dict[int, dict[str, Any]] = {}
        self._last = -math.inf
        self._load()

    def _load(self) -> None:
        if not self.path.is_file():
            return
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            games = data["games"] if data.get("format") == FORMAT else None
            if not isinstance(games, list):
                raise ValueError("not a zerochess checkpoint")
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as err:
            self.notes.append(f"{self.path.name} is unreadable ({err}); the games in play "
                              "when the run stopped start again")
            return
        for entry in games:
            try:
                game = _saved_game(entry)
            except (ValueError, TypeError, KeyError, AttributeError) as err:
                self.notes.append(f"{self.path.name}: a damaged entry ({err}) is ignored; its "
                                  "game starts again")
                continue
            self._saved[game.index] = game
            self._raw[game.index] = entry

    @property
    def saved(self) -> Mapping[int, SavedGame]:
        """The saved games by index (as loaded)."""
        return self._saved

    def restore(self, index: int, seed: int, white: str, black: str, opening: str,
                start_fen: str, tags: Mapping[str, Any], board: chess.Board
                ) -> tuple[list[str], list[MoveStat]] | None:
        """The saved moves and stats of game ``index``, played on ``board`` (the opening's
        position, book moves pushed); None, with a note, when there is no usable save."""
        game = self._saved.get(index)
        if game is None:
            return None
        want = (seed, white, black, opening, start_fen, {k: str(v) for k, v in tags.items()})
        have = (game.seed, game.white, game.black, game.opening, game.start_fen, game.tags)
        book = [m.uci() for m in board.move_stack]
        if want != have or list(game.moves[:len(book)]) != book:
            self.notes.append(f"game {index}: the saved game is of another run; it starts "
                              "again")
            return None
        trial = board.copy()
        try:
            for uci in game.moves[len(book):]:
                move = chess.Move.from_uci(uci)
                if move not in trial.legal_moves:
                    raise ValueError(f"illegal move {uci}")
                trial.push(move)
        except ValueError as err:
            self.notes.append(f"game {index}: the saved moves do not replay ({err}); it "
                              "starts again")
            return None
        for move in trial.move_stack[len(book):]:
            board.push(move)
        self.restored.append(index)
        return list(game.moves), list(game.stats)

    def save(self, games: Iterable[SavedGame], owned: Iterable[int],
             force: bool = False) -> bool:
        """Rewrite the file with ``games`` (the games in play) in place of every saved game
        of ``owned`` (the indices this run plays; others' entries are kept). Skipped unless
        ``force`` or ``interval`` seconds passed since the last save. Returns whether it
        wrote."""
        now = time.monotonic()
        if not force and now - self._last < self.interval:
            return False
        self._last = now
        owned = set(owned)
        entries = {i: e for i, e in self._raw.items() if i not in owned}
        for game in games:
            entries[game.index] = {
                "index": game.index, "seed": game.seed, "white": game.white,
                "black": game.black, "opening": game.opening, "start_fen": game.start_fen,
                "tags": dict(game.tags), "moves": list(game.moves),
                "stats": [dataclasses.asdict(s) for s in game.stats]}
        self._raw = entries
        if not entries:
            self.path.unlink(missing_ok=True)
            return True
        # Python's JSON (NaN included: a statistic without a value) round-trips floats exactly
        text = json.dumps({"format": FORMAT, "games": [entries[i] for i in sorted(entries)]},
                          separators=(",", ":"))
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".unfinished-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return True


def saved_plies(out_dir: str | Path | None) -> dict[int, int]:
    """Plies already played of each saved unfinished game in ``out_dir`` (for estimates)."""
    if out_dir is None:
        return {}
    store = GameCheckpoints(out_dir)
    return {i: len(g.moves) for i, g in store.saved.items()}


__all__ = ["CHECKPOINT_FILE", "DEFAULT_INTERVAL_S", "GameCheckpoints", "SavedGame",
           "checkpointable", "saved_plies"]
