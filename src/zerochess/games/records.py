"""Finished games: records, PGN with per-move search stats, CSV, resumable writing."""

from __future__ import annotations

import csv
import dataclasses
import io
import math
import re
import shutil
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import chess
import chess.pgn

from zerochess.errors import ConfigError
from zerochess.games.clocks import TIME_FORFEIT
from zerochess.positions import parse_fen

MOVE_CAP = "move_cap"
# how an engine can lose a game off the board (cutechess's adjudications: an illegal move,
# a crash or a stalled connection lose the game)
ILLEGAL_MOVE, ENGINE_CRASH, ENGINE_TIMEOUT = "illegal_move", "engine_crash", "engine_timeout"
ENGINE_FAILURES = (ILLEGAL_MOVE, ENGINE_CRASH, ENGINE_TIMEOUT)
# games decided off the board: on time, or by an engine's failure
OFF_THE_BOARD = (TIME_FORFEIT, *ENGINE_FAILURES)
SCORES = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}


def game_end(board: chess.Board, plies: int, max_plies: int | None) -> tuple[str, str] | None:
    """``(result, termination)`` if the game is over at ``board`` (python-chess's outcome
    with draws claimed, or the move cap after ``plies`` plies), else None.

    Raises:
      RuntimeError: a king is missing: the game was not played by the rules (openings
        are checked and moves come from legal-move generation, so this is a bug).
    """
    for color in chess.COLORS:
        if chess.popcount(board.kings & board.occupied_co[color]) != 1:
            raise RuntimeError(f"internal error: the {chess.COLOR_NAMES[color]} king is "
                               f"missing in {board.fen()}; the game cannot be recorded")
    outcome = board.outcome(claim_draw=True)
    if outcome is not None:
        return outcome.result(), outcome.termination.name.lower()
    if max_plies is not None and plies >= max_plies:
        return "1/2-1/2", MOVE_CAP
    return None


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
    reused: int = 0  # root visits kept from the player's previous search (tree reuse)

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
        if self.reused:
            parts.append(f"reused={self.reused}")
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
    # how a game was lost off the board: a time forfeit (who took how long), or an engine's
    # illegal move, crash or time-out (what it did); also the game's final PGN comment
    forfeit: str | None = None

    @property
    def plies(self) -> int:
        return len(self.moves)

    @property
    def adjudicated(self) -> bool:
        return self.termination == MOVE_CAP

    def final_board(self) -> chess.Board:
        board = parse_fen(self.start_fen)
        for m in self.moves:
            board.push_uci(m)
        return board

    def to_pgn(self, comments: bool = True, event: str = "zerochess") -> chess.pgn.Game:
        game = chess.pgn.Game()
        start = parse_fen(self.start_fen)
        if self.start_fen != chess.STARTING_FEN or start.chess960:
            game.setup(start)  # FEN, SetUp and (chess960) Variant headers
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
            h["TimeForfeit" if self.termination == TIME_FORFEIT else "Forfeit"] = self.forfeit
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
        if self.forfeit is not None and self.termination != TIME_FORFEIT:
            node.comment = " ".join(x for x in (node.comment, self.forfeit) if x)
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
             "Adjudication", "TimeControl", "TimeForfeit", "Forfeit", "ECO", "Annotator",
             "Mode",
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


def _read_text(path: Path) -> str:
    """A games file's text; bytes that are not UTF-8 (damage) become U+FFFD."""
    return path.read_bytes().decode("utf-8", errors="replace")


def _is_utf8(path: Path) -> bool:
    try:
        path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _read_rows(path: Path) -> tuple[list[str] | None, list[dict[str, str]]]:
    """(header, complete rows) of a games CSV; (None, []) when there is no readable header."""
    text = _read_text(path)
    if not text.strip():
        return None, []
    lines = text.splitlines(keepends=True)
    if not text.endswith("\n"):
        lines = lines[:-1]  # a row cut short by an interruption
    try:
        reader = csv.DictReader(io.StringIO("".join(lines).replace("\0", "")))
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
    except csv.Error:
        return None, []
    return (fields or None), rows


_GAME_START = re.compile(r"^\[Event ", re.M)
_INDEX = re.compile(r'^\[GameIndex "(\d+)"\]', re.M)
_ADJUDICATION = re.compile(r"\((\d+) plies\)")


def _pgn_segments(text: str) -> list[tuple[int | None, str]]:
    starts = [m.start() for m in _GAME_START.finditer(text)]
    if not starts:
        return []
    out = []
    for a, b in zip(starts, starts[1:] + [len(text)], strict=True):
        lines = text[a:b].rstrip().split("\n")
        while len(lines) > 1 and (not lines[-1].strip() or (
                lines[-1].startswith("[") and not lines[-1].rstrip().endswith("]"))):
            lines.pop()  # the first bytes of the next game's headers, cut short
        seg = "\n".join(lines)
        m = _INDEX.search(seg)
        out.append((int(m.group(1)) if m else None, seg + "\n\n"))
    return out


def pgn_game_row(segment: str, tag_fields: Sequence[str]) -> dict[str, Any] | None:
    """The CSV row of one PGN game as ``GameWriter`` writes it, or None unless the game is
    complete and consistent: it parses without errors, holds ``PlyCount`` moves, ends
    with its result token, every header the row needs is there, and its recorded end
    (result and termination, or the move cap) is what python-chess finds at its end."""
    try:
        game = chess.pgn.read_game(io.StringIO(segment))
        if game is None or game.errors:
            return None
        h = game.headers
        result, termination = h.get("Result"), h.get("Termination")
        if result not in SCORES or not termination or not segment.rstrip().endswith(result):
            return None
        moves = list(game.mainline_moves())
        if h.get("PlyCount") != str(len(moves)) or not h.get("GameIndex", "").isdigit():
            return None
        start = game.board()
        board = game.end().board()
        if termination == MOVE_CAP:
            cap = _ADJUDICATION.search(h.get("Adjudication", ""))
            if cap is None or game_end(board, len(moves), int(cap.group(1))) != (
                    "1/2-1/2", MOVE_CAP):
                return None
        elif termination in OFF_THE_BOARD:
            # lost on time or by an engine's failure: the board shows no end, and the game
            # can only have been decided this way before it
            if game_end(board, len(moves), None) is not None:
                return None
        elif game_end(board, len(moves), None) != (result, termination):
            return None
        row: dict[str, Any] = {
            "index": int(h["GameIndex"]), "white": h["White"], "black": h["Black"],
            "result": result, "score_white": SCORES[result], "termination": termination,
            "plies": len(moves), "opening": h["Opening"], "seed": int(h["Seed"]),
            "start_fen": start.fen(), "final_fen": board.fen(),
            "moves": " ".join(m.uci() for m in moves)}
        for key in tag_fields:
            if key not in BASE_FIELDS:
                row[key] = h[_tag_name(key)]
        return row
    except (KeyError, ValueError, RuntimeError, AssertionError):
        return None


def _same_game(row: Mapping[str, Any], pgn_row: Mapping[str, Any]) -> bool:
    return all(str(row.get(k)) == str(pgn_row[k]) for k in pgn_row)


class GameWriter:
    """Appends each finished game to ``games.pgn`` and ``games.csv`` (flushed per game).

    On opening an existing run folder it keeps the games that are complete (see
    docs/DESIGN.md), rewrites both files to hold exactly those (in PGN order), and
    reports them in ``completed`` (their CSV rows in ``rows``) so the runner skips them.
    ``notes`` says what was repaired.
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
        self.rows: dict[int, dict[str, Any]] = {}
        self.notes: list[str] = []
        self._recover()
        self._pgn = open(self.pgn_path, "a", encoding="utf-8")
        self._csv_file = open(self.csv_path, "a", encoding="utf-8", newline="")
        self._csv = csv.DictWriter(self._csv_file, fieldnames=self.fields)
        if self._csv_file.tell() == 0:
            self._csv.writeheader()
            self._csv_file.flush()

    def _recover(self) -> None:
        for path in (self.pgn_path, self.csv_path):
            if path.exists() and not path.is_file():
                raise ConfigError(f"{path} is not a file; use another output folder")
        fields, rows = (None, [])
        csv_text = _read_text(self.csv_path) if self.csv_path.is_file() else ""
        if csv_text:
            fields, rows = _read_rows(self.csv_path)
        header_damaged = bool(csv_text.strip()) and fields != self.fields
        if header_damaged and fields is not None and fields[:len(BASE_FIELDS)] == BASE_FIELDS:
            raise ConfigError(
                f"{self.csv_path} has other columns than this run; use a new output folder")
        if header_damaged:
            rows = []
            self.notes.append(f"{self.csv_path.name}: damaged header; rows rebuilt from "
                              f"{self.pgn_path.name}")
        pgn_text = _read_text(self.pgn_path) if self.pgn_path.is_file() else ""
        segments = _pgn_segments(pgn_text)
        csv_rows: dict[int, dict[str, str]] = {}
        for r in rows:
            csv_rows.setdefault(int(r["index"]), r)

        keep_segs: list[str] = []
        dropped: set[int] = set()
        rebuilt: list[int] = []
        for pos, (idx, seg) in enumerate(segments):
            if idx is None or idx in self.rows or idx in dropped:
                continue
            pgn_row = pgn_game_row(seg, self.fields)
            if pgn_row is None or pgn_row["index"] != idx:
                if pos != len(segments) - 1 or idx in csv_rows:
                    self.notes.append(f"{self.pgn_path.name}: game {idx} is incomplete or "
                                      "damaged; it will be played again")
                continue
            row = csv_rows.get(idx)
            if row is not None and not _same_game(row, pgn_row):
                # both parse but disagree: one of them is damaged; the game is replayed
                self.notes.append(f"game {idx} differs between {self.pgn_path.name} and "
                                  f"{self.csv_path.name}; it will be played again")
                dropped.add(idx)
                continue
            if row is None:
                rebuilt.append(idx)
                row = {k: str(v) for k, v in pgn_row.items()}
            self.rows[idx] = row
            keep_segs.append(seg)
        # the last game's PGN is written before its CSV row: a missing row there is an
        # interruption, anywhere else damage
        for idx in rebuilt[:-1] if rebuilt and rebuilt[-1] == list(self.rows)[-1] else rebuilt:
            self.notes.append(f"{self.csv_path.name}: row of game {idx} missing; rebuilt from "
                              f"{self.pgn_path.name}")
        dropped_rows = sorted(set(csv_rows) - set(self.rows) - dropped)
        if dropped_rows:
            self.notes.append(f"{self.csv_path.name}: game(s) {_short(dropped_rows)} have no "
                              f"complete game in {self.pgn_path.name}; they will be played "
                              "again")
        self.completed = set(self.rows)
        new_csv = _csv_text(self.fields, self.rows.values())
        new_pgn = "".join(keep_segs)
        for path in (self.pgn_path, self.csv_path):
            if path.is_file() and not _is_utf8(path):
                self.notes.append(f"{path.name}: bytes that are not UTF-8 replaced")
        if self.notes or new_pgn != pgn_text or (csv_text and new_csv != csv_text) or (
                not csv_text and self.rows):
            if self.notes:  # more than an interrupted last game: keep the originals
                for path, text in ((self.pgn_path, pgn_text), (self.csv_path, csv_text)):
                    if text.strip():
                        _keep_copy(path)
            self.csv_path.write_text(new_csv, encoding="utf-8", newline="")
            self.pgn_path.write_text(new_pgn, encoding="utf-8")

    def write(self, record: GameRecord) -> None:
        # to_pgn leaves the comments empty when they are off, but keeps [%clk]/[%emt]
        game = record.to_pgn(comments=self.pgn_comments, event=self.event)
        exporter = chess.pgn.StringExporter(headers=True, variations=False, comments=True)
        self._pgn.write(game.accept(exporter) + "\n\n")
        self._pgn.flush()
        row = record.csv_row()
        self._csv.writerow(row)
        self._csv_file.flush()
        self.completed.add(record.index)
        self.rows[record.index] = {k: str(v) for k, v in row.items()}

    def close(self) -> None:
        self._pgn.close()
        self._csv_file.close()

    def __enter__(self) -> GameWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _csv_text(fields: Sequence[str], rows: Iterable[Mapping[str, Any]]) -> str:
    buf = io.StringIO(newline="")
    w = csv.DictWriter(buf, fieldnames=list(fields))
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()


def _keep_copy(path: Path) -> None:
    """Copy ``path`` to ``path.damaged`` (``.damaged-2``, ... if taken)."""
    target, n = path.with_name(path.name + ".damaged"), 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}.damaged-{n}")
    shutil.copyfile(path, target)


def _short(indices: Sequence[int], limit: int = 10) -> str:
    text = ", ".join(map(str, indices[:limit]))
    return text + (f" and {len(indices) - limit} more" if len(indices) > limit else "")


def read_pgn_games(path: str | Path) -> Iterable[chess.pgn.Game]:
    """Parse every game of a PGN file."""
    with open(path, encoding="utf-8") as f:
        while (game := chess.pgn.read_game(f)) is not None:
            yield game
