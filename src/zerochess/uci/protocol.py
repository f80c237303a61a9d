"""UCI command parsing, as lc0's ``chess/uciloop.cc`` does it."""

from __future__ import annotations

import dataclasses

import chess

from zerochess import positions
from zerochess.errors import UserError, quote


class UciError(UserError):
    """A malformed or unusable UCI command; the message names the problem (a
    ``UserError``, so also a ``ValueError``)."""


KNOWN_COMMANDS: dict[str, frozenset[str]] = {
    "uci": frozenset(),
    "isready": frozenset(),
    "setoption": frozenset({"name", "value"}),
    "ucinewgame": frozenset(),
    "position": frozenset({"fen", "startpos", "moves"}),
    "go": frozenset({"infinite", "wtime", "btime", "winc", "binc", "movestogo", "depth",
                     "mate", "nodes", "movetime", "searchmoves", "ponder"}),
    "stop": frozenset(),
    "ponderhit": frozenset(),
    "quit": frozenset(),
    "xyzzy": frozenset(),
    "fen": frozenset(),
    "wait": frozenset(),
}

_GO_NUMBERS = ("wtime", "btime", "winc", "binc", "movestogo", "depth", "mate", "nodes",
               "movetime")
_INT32 = 2**31


@dataclasses.dataclass(frozen=True)
class Command:
    name: str
    params: dict[str, str]


@dataclasses.dataclass(frozen=True)
class GoParams:
    """``go`` arguments (lc0 GoParams); times in milliseconds, None when absent."""

    wtime: int | None = None
    btime: int | None = None
    winc: int | None = None
    binc: int | None = None
    movestogo: int | None = None
    depth: int | None = None
    mate: int | None = None
    nodes: int | None = None
    movetime: int | None = None
    infinite: bool = False
    ponder: bool = False
    searchmoves: tuple[str, ...] = ()

    def own_time(self, black: bool) -> int | None:
        return self.btime if black else self.wtime

    def own_increment(self, black: bool) -> int:
        inc = self.binc if black else self.winc
        return max(0, inc) if inc is not None else 0

    @property
    def has_clock(self) -> bool:
        return self.wtime is not None or self.btime is not None


def parse_command(line: str) -> Command | None:
    """One input line -> ``Command`` (None for a blank line); raises ``UciError``."""
    tokens = line.split()
    if not tokens:
        return None
    name = tokens[0]
    keywords = KNOWN_COMMANDS.get(name)
    if keywords is None:
        raise UciError(f"unknown command: {quote(line.strip())}")
    if name == "setoption":
        return Command(name, _parse_setoption(line))
    params: dict[str, str] = {}
    current: str | None = None
    for token in tokens[1:]:
        if token in keywords:
            current = token
            params[current] = ""
        elif current is None:
            raise UciError(f"unexpected token {quote(token)} in {quote(name)} command")
        else:
            params[current] = f"{params[current]} {token}".strip()
    return Command(name, params)


def _parse_setoption(line: str) -> dict[str, str]:
    """``setoption name <N...> [value <V...>]``: N may hold spaces; V is the rest, kept as is."""
    rest = line.strip()[len("setoption"):].strip()
    if not rest.startswith("name") or (len(rest) > 4 and not rest[4].isspace()) or len(rest) == 4:
        raise UciError("setoption must be followed by name <option>")
    rest = rest[4:].strip()
    words = rest.split()
    params: dict[str, str] = {}
    if "value" in words:
        at = words.index("value")
        params["name"] = " ".join(words[:at])
        # the value keeps its inner spacing (e.g. a path with two spaces)
        value_start = _nth_word_end(rest, at)
        params["value"] = rest[value_start:].strip()
    else:
        params["name"] = " ".join(words)
    if not params["name"]:
        raise UciError("setoption requires a name")
    return params


def _nth_word_end(text: str, n: int) -> int:
    """Index just past the ``n``-th (0-based) whitespace-separated word of ``text``."""
    pos = 0
    for i in range(n + 1):
        while pos < len(text) and text[pos].isspace():
            pos += 1
        start = pos
        while pos < len(text) and not text[pos].isspace():
            pos += 1
        if i == n:
            return pos if pos > start else len(text)
    return len(text)


def parse_go(params: dict[str, str]) -> GoParams:
    """``go`` keyword values -> ``GoParams``; numbers must be plain integers."""
    values: dict[str, object] = {}
    for flag in ("infinite", "ponder"):
        if flag in params:
            if params[flag]:
                raise UciError(f"unexpected token {quote(params[flag].split()[0])} after go {flag}")
            values[flag] = True
    for key in _GO_NUMBERS:
        if key in params:
            text = params[key]
            if not text:
                raise UciError(f"go {key}: expected a value")
            try:
                number = int(text)
            except ValueError:
                raise UciError(f"go {key}: invalid value {quote(text)}") from None
            if not -_INT32 <= number < _INT32:
                raise UciError(f"go {key}: out of range value {text}")
            if key in ("nodes", "depth", "movestogo", "movetime") and number < 0:
                raise UciError(f"go {key}: must be >= 0, got {number}")
            values[key] = number
    if "searchmoves" in params:
        moves = tuple(params["searchmoves"].split())
        if not moves:
            raise UciError("go searchmoves: expected at least one move")
        values["searchmoves"] = moves
    return GoParams(**values)


@dataclasses.dataclass(frozen=True)
class PositionSpec:
    """``position`` arguments: the start FEN and the moves (UCI strings), validated."""

    fen: str
    moves: tuple[str, ...]
    board: chess.Board  # the position after the moves, with its move stack

    @property
    def key(self) -> tuple[str, tuple[str, ...]]:
        return self.fen, self.moves


def parse_position(params: dict[str, str], chess960: bool = False) -> PositionSpec:
    """``position startpos|fen <FEN> [moves ...]`` -> a board; illegal input names itself.
    ``chess960`` (UCI_Chess960) makes a chess960 board (castling king-to-rook); without it,
    FENs with chess960 castling rights are still read as chess960."""
    if ("fen" in params) == ("startpos" in params):
        raise UciError("position requires either fen or startpos")
    if "startpos" in params:
        if params["startpos"]:
            token = params["startpos"].split()[0]
            raise UciError(f"unexpected token {quote(token)} after startpos")
        fen = "startpos"
    else:
        fen = params["fen"]
        if not fen:
            raise UciError("position fen: expected a FEN")
    moves = tuple(params.get("moves", "").split())
    try:
        board = positions.parse_position(fen, moves, chess960=True if chess960 else None)
    except UserError as err:
        raise UciError(f"position: {err}") from None
    return PositionSpec(board.root().fen(), moves, board)


__all__ = ["KNOWN_COMMANDS", "Command", "GoParams", "PositionSpec", "UciError", "parse_command",
           "parse_go", "parse_position"]
