"""Finished games: records, PGN with per-move search stats, CSV, resumable writing."""

from __future__ import annotations

import csv
import dataclasses
import io
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import chess
import chess.pgn

from zerochess.errors import ConfigError

MOVE_CAP = "move_cap"
SCORES = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}


@dataclasses.dataclass
class MoveStat:
    """How one move was chosen (written as a PGN comment)."""

    source: str  # "search" | "engine" | "book"
    nodes: int = 0  # root visits (search) / engine nodes
    q: float = math.nan  # root Q, mover's view
    wdl: tuple[float, float, float] | None = None  # root W/D/L, mover's view
    best: str | None = None  # the search's best move (UCI)
    best_share: float = math.nan  # visits of the best move / root child visits
    played_share: float = math.nan  # visits of the played move / root child visits
    temperature: float = 0.0
    pv: tuple[str, ...] = ()
    score_cp: int | None = None  # engine score (centipawns, mover's view)
    mate: int | None = None
    time_ms: float | None = None  # wall time of a move on a real clock (PGN [%emt])
    clock_ms: float | None = None  # the mover's clock after it, increment in ([%clk])

    def comment(self) -> str:
        if self.source == "book":
            return "book"
        if self.source == "engine":
            parts = ["engine"]
            if self.nodes:
                parts.append(f"nodes={self.nodes}")
            if self.mate is not None:
                parts.append(f"mate={self.mate}")
            elif self.score_cp is not None:
                parts.append(f"cp={self.score_cp:+d}")
            return " ".join(parts)
        parts = [f"n={self.nodes}", f"q={self.q:+.3f}"]
        if self.wdl is not None:
            parts.append("wdl=" + "/".join(f"{x:.3f}" for x in self.wdl))
        parts += [f"best={self.best}", f"share={self.best_share:.2f}",
                  f"played={self.played_share:.2f}", f"T={self.temperature:.2f}"]
        if self.pv:
            parts.append("pv=" + ",".join(self.pv))
        return " ".join(parts)


@dataclasses.dataclass
class GameRecord:
    """One finished game."""

    index: int
    seed: int
    white: str
    black: str
    opening: str
    start_fen: str
    moves: list[str]
    stats: list[MoveStat]
    result: str  # "1-0" | "0-1" | "1/2-1/2"
    termination: str  # chess.Termination name in lower case, or "move_cap"
    final_fen: str
    tags: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    max_plies: int | None = None
    time_control: str | None = None  # PGN TimeControl ("10+0.1") of a game on real clocks
    forfeit: str | None = None  # how a time forfeit happened (who took how long)

    @property
    def plies(self) -> int:
        return len(self.moves)

    @property
    def adjudicated(self) -> bool:
        return self.termination == MOVE_CAP

    def final_board(self) -> chess.Board:
        board = chess.Board(self.start_fen)
        for m in self.moves:
            board.push_uci(m)
        return board

    def to_pgn(self, comments: bool = True, event: str = "zerochess") -> chess.pgn.Game:
        game = chess.pgn.Game()
        start = chess.Board(self.start_fen)
        if self.start_fen != chess.STARTING_FEN:
            game.setup(start)
        h = game.headers
        h["Event"] = event
        h["Site"] = "zerochess"
        h["Round"] = str(self.index + 1)
        h["White"] = self.white
        h["Black"] = self.black
        h["Result"] = self.result
        h["Termination"] = self.termination
        h["GameIndex"] = str(self.index)
        h["Seed"] = str(self.seed)
        h["Opening"] = self.opening
        h["PlyCount"] = str(self.plies)
        if self.adjudicated:
            h["Adjudication"] = f"draw by move cap ({self.max_plies} plies)"
        if self.time_control is not None:
            h["TimeControl"] = self.time_control
        if self.forfeit is not None:
            h["TimeForfeit"] = self.forfeit
        for k, v in self.tags.items():
            h[_tag_name(k)] = str(v)
        node: chess.pgn.GameNode = game
        for uci, st in zip(self.moves, self.stats, strict=True):
            node = node.add_variation(chess.Move.from_uci(uci),
                                      comment=st.comment() if comments else "")
            if st.time_ms is not None:
                node.set_emt(st.time_ms / 1000)
            if st.clock_ms is not None:
                node.set_clock(st.clock_ms / 1000)
        return game

    def csv_row(self) -> dict[str, Any]:
        row = {"index": self.index, "white": self.white, "black": self.black,
               "result": self.result, "score_white": SCORES[self.result],
               "termination": self.termination, "plies": self.plies,
               "opening": self.opening, "seed": self.seed, "start_fen": self.start_fen,
               "final_fen": self.final_fen, "moves": " ".join(self.moves)}
        row.update({k: v for k, v in self.tags.items()})
        return row


BASE_FIELDS = ["index", "white", "black", "result", "score_white", "termination", "plies",
               "opening", "seed", "start_fen", "final_fen", "moves"]


# PGN headers with a meaning of their own (a "Variant" header would change the rules)
_RESERVED = {"Event", "Site", "Date", "Round", "White", "Black", "Result", "Variant", "FEN",
             "SetUp", "Termination", "PlyCount", "Opening", "Seed", "GameIndex",
             "Adjudication", "TimeControl", "TimeForfeit", "ECO", "Annotator", "Mode",
             "WhiteElo", "BlackElo"}


def _tag_name(key: str) -> str:
    """The PGN header of a game tag: CamelCase, prefixed with "Tag" where it would clash."""
    name = "".join(p[:1].upper() + p[1:] for p in re.split(r"[_\W]+", str(key)) if p)
    return f"Tag{name}" if name in _RESERVED else name


def read_games_csv(path: str | Path) -> list[dict[str, str]]:
    """Rows of a games CSV (complete rows only), sorted by game index."""
    p = Path(path)
    if not p.is_file():
        return []
    rows = _read_rows(p)[1]
    return sorted(rows, key=lambda r: int(r["index"]))


def _read_rows(path: Path) -> tuple[list[str] | None, list[dict[str, str]]]:
    text = path.read_text()
    if not text.strip():
        return None, []
    lines = text.splitlines(keepends=True)
    if not text.endswith("\n"):
        lines = lines[:-1]  # a row cut short by an interruption
    reader = csv.DictReader(io.StringIO("".join(lines)))
    fields = list(reader.fieldnames or [])
    rows = []
    for row in reader:
        if None in row or any(row.get(f) is None for f in fields):
            continue
        try:
            int(row["index"])
        except (KeyError, ValueError):
            continue
        rows.append(row)
    return fields, rows


_GAME_START = re.compile(r"^\[Event ", re.M)
_INDEX = re.compile(r'^\[GameIndex "(\d+)"\]', re.M)


def _pgn_segments(text: str) -> list[tuple[int | None, str]]:
    starts = [m.start() for m in _GAME_START.finditer(text)]
    if not starts:
        return []
    out = []
    for a, b in zip(starts, starts[1:] + [len(text)], strict=True):
        seg = text[a:b]
        m = _INDEX.search(seg)
        out.append((int(m.group(1)) if m else None, seg.rstrip("\n") + "\n\n"))
    return out


class GameWriter:
    """Appends each finished game to ``games.pgn`` and ``games.csv`` (flushed per game).

    On opening an existing run directory it keeps the games present in both files
    (a PGN game is written before its CSV row, so a CSV row marks a complete game),
    drops anything cut short by an interruption, and reports them in ``completed``
    so the runner skips them.
    """

    def __init__(self, out_dir: str | Path, tag_fields: Sequence[str] = (),
                 pgn_comments: bool = True, event: str = "zerochess") -> None:
        self.dir = Path(out_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.pgn_path = self.dir / "games.pgn"
        self.csv_path = self.dir / "games.csv"
        self.fields = BASE_FIELDS + [f for f in tag_fields if f not in BASE_FIELDS]
        self.pgn_comments = pgn_comments
        self.event = event
        self.completed: set[int] = set()
        self._recover()
        self._pgn = open(self.pgn_path, "a", encoding="utf-8")
        self._csv_file = open(self.csv_path, "a", encoding="utf-8", newline="")
        self._csv = csv.DictWriter(self._csv_file, fieldnames=self.fields)
        if self._csv_file.tell() == 0:
            self._csv.writeheader()
            self._csv_file.flush()

    def _recover(self) -> None:
        fields, rows = (None, [])
        if self.csv_path.is_file():
            fields, rows = _read_rows(self.csv_path)
        if fields is not None and fields != self.fields:
            raise ConfigError(
                f"{self.csv_path} has other columns than this run; use a new output folder")
        pgn_text = ""
        if self.pgn_path.is_file():
            pgn_text = self.pgn_path.read_text(encoding="utf-8")
        segments = _pgn_segments(pgn_text)
        csv_idx = {int(r["index"]) for r in rows}
        pgn_idx = {i for i, _ in segments if i is not None}
        self.completed = csv_idx & pgn_idx
        keep_rows = _first_per_index(rows, lambda r: int(r["index"]), self.completed)
        keep_segs = _first_per_index(segments, lambda s: s[0], self.completed)
        csv_dirty = self.csv_path.is_file() and (
            fields is None or len(keep_rows) != len(rows) or not _ends_clean(self.csv_path))
        pgn_dirty = "".join(seg for _, seg in keep_segs) != pgn_text
        if csv_dirty or pgn_dirty:
            self._rewrite(keep_rows, [seg for _, seg in keep_segs])

    def _rewrite(self, rows: list[dict[str, str]], segments: list[str]) -> None:
        with open(self.csv_path, "w", encoding="utf-8", newline="") as f:
            w = csv.DictWriter(f, fieldnames=self.fields)
            w.writeheader()
            w.writerows(rows)
        with open(self.pgn_path, "w", encoding="utf-8") as f:
            f.write("".join(segments))

    def write(self, record: GameRecord) -> None:
        # to_pgn leaves the comments empty when they are off, but keeps [%clk]/[%emt]
        game = record.to_pgn(comments=self.pgn_comments, event=self.event)
        exporter = chess.pgn.StringExporter(headers=True, variations=False, comments=True)
        self._pgn.write(game.accept(exporter) + "\n\n")
        self._pgn.flush()
        self._csv.writerow(record.csv_row())
        self._csv_file.flush()
        self.completed.add(record.index)

    def close(self) -> None:
        self._pgn.close()
        self._csv_file.close()

    def __enter__(self) -> GameWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _first_per_index(items: list[Any], key: Any, keep: set[int]) -> list[Any]:
    out, seen = [], set()
    for item in items:
        i = key(item)
        if i in keep and i not in seen:
            out.append(item)
            seen.add(i)
    return out


def _ends_clean(path: Path) -> bool:
    with open(path, "rb") as f:
        f.seek(0, 2)
        if f.tell() == 0:
            return True
        f.seek(-1, 2)
        return f.read(1) == b"\n"


def read_pgn_games(path: str | Path) -> Iterable[chess.pgn.Game]:
    """Parse every game of a PGN file."""
    with open(path, encoding="utf-8") as f:
        while (game := chess.pgn.read_game(f)) is not None:
            yield game
