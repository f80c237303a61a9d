"""Positions from user input, checked at the edge: FEN/EPD strings (or "startpos") plus
UCI moves, EPD files, python-chess boards."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

import chess

from zerochess.errors import PositionError, quote
from zerochess.user_files import iter_user_lines, read_user_text

PositionLike = chess.Board | str | tuple[str, Sequence[str]]

# Halfmove clock and fullmove number limit: positions hold them exactly as int32, and the
# network reads the halfmove clock as a float32 (exact up to 2**24).
MAX_COUNTER = 2**24
_DIGITS = re.compile(r"[0-9]+")
_MAX_LISTED = 10  # bad lines listed in one error


def _where(source: str | None) -> str:
    return f"{source}: " if source else ""


def _problems(board: chess.Board) -> list[str]:
    status = board.status()
    return [name.lower().replace("_", " ") for name, flag in chess.Status.__members__.items()
            if flag and status & flag]


def check_board(board: object, source: str | None = None) -> chess.Board:
    """Check one board's current position (cheap; no move-stack replay).

    Raises:
      PositionError: not a ``chess.Board``, a variant board, an illegal position, a
        counter out of range.
    """
    where = _where(source)
    if not isinstance(board, chess.Board):
        raise PositionError(f"{where}expected a chess.Board, got {type(board).__name__}")
    variant = getattr(board, "uci_variant", "chess")
    if variant != "chess" or type(board).__name__ in ("SuicideBoard", "GiveawayBoard"):
        raise PositionError(
            f"{where}{type(board).__name__} ({variant}) is not supported: zerochess plays "
            "standard chess and chess960")
    clock, number = board.halfmove_clock, board.fullmove_number
    if isinstance(clock, bool) or not isinstance(clock, int) or not 0 <= clock <= MAX_COUNTER:
        raise PositionError(f"{where}halfmove clock {quote(clock)} is out of range: zerochess "
                            f"holds 0 to {MAX_COUNTER:,} (the network reads it as a float32)")
    if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= MAX_COUNTER:
        raise PositionError(f"{where}fullmove number {quote(number)} is out of range: "
                            f"zerochess holds 1 to {MAX_COUNTER:,}")
    problems = _problems(board)
    if problems:
        raise PositionError(f"{where}illegal position {quote(board.fen())}: "
                            f"{', '.join(problems)}")
    return board


def check_game(board: chess.Board, source: str | None = None) -> chess.Board:
    """``check_board`` plus the game behind it: the start position is legal and every
    move on the move stack is legal where it was played (a ``push`` does not check)."""
    check_board(board, source)
    if board.move_stack:
        replay = board.root()
        check_board(replay, f"{_where(source)}start position" if source else "start position")
        for ply, move in enumerate(board.move_stack, start=1):
            if not replay.is_legal(move):
                raise PositionError(f"{_where(source)}the game holds an illegal move "
                                    f"{quote(move.uci())} (ply {ply}) in {replay.fen()}")
            replay.push(move)
    return board


def _split_fen(text: str, source: str | None) -> None:
    """Refuse FEN strings whose field count or counters do not fit the FEN format."""
    fields = text.split()
    where = _where(source)
    if len(fields) < 4:
        raise PositionError(
            f"{where}invalid FEN {quote(text)}: {len(fields)} field(s); a position needs 4 "
            "(pieces, side to move, castling, en passant), then optionally the halfmove "
            "clock and the fullmove number")
    for name, field in zip(("halfmove clock", "fullmove number"), fields[4:6], strict=False):
        if not _DIGITS.fullmatch(field):
            hint = " (EPD operations need a ';')" if field[:1].isalpha() else ""
            raise PositionError(f"{where}invalid FEN {quote(text)}: the {name} "
                                f"{quote(field)} is not a number{hint}")
    if len(fields) > 6:
        raise PositionError(f"{where}invalid FEN {quote(text)}: trailing text "
                            f"{quote(' '.join(fields[6:]))} after the 6 fields")


def _read(text: str, chess960: bool, epd: bool) -> chess.Board:
    if epd:
        board, _ = chess.Board.from_epd(text, chess960=chess960)
        return board
    return chess.Board(text, chess960=chess960)


def parse_fen(fen: object, chess960: bool | None = None, source: str | None = None,
              ) -> chess.Board:
    """A checked board from a FEN, an EPD line (operations after the 4 fields, each ended
    by ``;``) or "startpos".

    Args:
      fen: the text.
      chess960: None reads chess960 castling rights as chess960 (and all else as standard
        chess), True makes a chess960 board, False refuses chess960 castling rights.
      source: where the text came from (a file and line, a config field), for errors.

    Raises:
      PositionError: an invalid FEN/EPD or an illegal position.
    """
    where = _where(source)
    if not isinstance(fen, str):
        raise PositionError(f"{where}a FEN must be a string, got {quote(fen)}")
    text = fen.strip()
    if not text:
        raise PositionError(f"{where}empty FEN (use 'startpos' for the start position)")
    if text == "startpos":
        return chess.Board(chess960=bool(chess960))
    epd = ";" in text
    if not epd:
        _split_fen(text, source)
    try:
        board = _read(text, bool(chess960), epd)
        if chess960 is None and board.status() & chess.STATUS_BAD_CASTLING_RIGHTS:
            alt = _read(text, True, epd)
            if not alt.status() & chess.STATUS_BAD_CASTLING_RIGHTS:
                board = alt  # castling rights that only chess960 gives a meaning
    except ValueError as err:
        raise PositionError(f"{where}invalid FEN {quote(text)}: {err}") from None
    except IndexError:  # python-chess on some malformed EPD operations
        raise PositionError(f"{where}invalid EPD {quote(text)}") from None
    if board.status() & chess.STATUS_BAD_CASTLING_RIGHTS and chess960 is False:
        raise PositionError(f"{where}castling rights in {quote(text)} need chess960 "
                            "(chess960=False was given)")
    return check_board(board, source)


def parse_epd_line(text: str, chess960: bool | None = None, source: str | None = None,
                   ) -> tuple[chess.Board, dict[str, object]]:
    """A checked board and the EPD operations of one line (a FEN line has none)."""
    board = parse_fen(text, chess960, source)
    ops: dict[str, object] = {}
    if ";" in text:
        try:
            _, ops = chess.Board.from_epd(text.strip(), chess960=board.chess960)
        except (ValueError, IndexError):  # pragma: no cover - parse_fen read it already
            ops = {}
    return board, ops


def _moves_list(moves: object, where: str) -> list[str]:
    if moves is None:
        return []
    if isinstance(moves, str):
        return moves.split()  # "e2e4 e7e5", as after UCI's "position ... moves"
    if not isinstance(moves, (list, tuple)):
        raise PositionError(f"{where}moves must be a list of UCI strings, got {quote(moves)}")
    out = list(moves)
    for ply, m in enumerate(out, start=1):
        if not isinstance(m, str):
            raise PositionError(f"{where}move {ply} must be a UCI string, got {quote(m)}")
    return out


def play_moves(board: chess.Board, moves: object, source: str | None = None) -> chess.Board:
    """Play UCI ``moves`` on ``board`` (in place), each checked to be legal."""
    where = _where(source)
    for ply, uci in enumerate(_moves_list(moves, where), start=1):
        try:
            move = board.parse_uci(uci.strip())
        except chess.InvalidMoveError:
            raise PositionError(f"{where}invalid move {quote(uci)} (move {ply}): "
                                "not UCI notation") from None
        except chess.IllegalMoveError:
            raise PositionError(f"{where}illegal move {quote(uci)} (move {ply}) in position "
                                f"{board.fen()}") from None
        if not move:
            raise PositionError(f"{where}null move {quote(uci)} (move {ply}) is not a move "
                                "of a game")
        board.push(move)
    return board


def parse_position(fen: object = "startpos", moves: object = (),
                   chess960: bool | None = None, source: str | None = None) -> chess.Board:
    """A python-chess board from a FEN/EPD (or "startpos") and UCI moves played from it
    (a list, or one string of space-separated moves). See ``parse_fen``.

    Raises:
      PositionError: an invalid FEN, an illegal position (e.g. no king), an illegal move.
    """
    return play_moves(parse_fen(fen, chess960, source), moves, source)


def as_board(position: object, chess960: bool | None = None) -> chess.Board:
    """Accept a board (checked with its game), a FEN string or a (FEN, moves) pair."""
    if isinstance(position, chess.Board):
        if chess960 is not None and position.chess960 != chess960:
            position = position.copy()
            position.chess960 = chess960
        return check_game(position)
    if isinstance(position, str):
        return parse_position(position, chess960=chess960)
    if isinstance(position, tuple) and len(position) == 2:
        return parse_position(position[0], position[1], chess960=chess960)
    raise PositionError(f"cannot read a position from {quote(position)}: expected a "
                        "chess.Board, a FEN string or a (FEN, moves) pair")


def read_text_file(path: object, what: str) -> str:
    """The text of an input file (``zerochess.user_files``); ``InputFileError`` when it is
    missing, a folder, a device or a pipe, larger than ``MAX_TEXT_BYTES`` or not UTF-8
    text (the message names the file and says what it is, or the first bad byte)."""
    return read_user_text(path, what)


def iter_position_lines(path: object, what: str = "EPD file", chess960: bool | None = None,
                        ) -> Iterator[tuple[int, chess.Board, dict[str, object]]]:
    """(line number, board, EPD operations) of each position line of a FEN/EPD file, read
    as a stream (blank lines and ``#`` comments skipped): memory does not grow with the
    file. The first bad line raises ``PositionError`` (``check_position_lines`` checks a
    whole file first)."""
    for n, line in iter_user_lines(path, what):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        board, ops = parse_epd_line(stripped, chess960, f"{path}:{n}")
        yield n, board, ops


def check_position_lines(path: object, what: str = "EPD file",
                         chess960: bool | None = None) -> int:
    """The number of positions in a FEN/EPD file, read as a stream (bounded memory).

    A bad line refuses the whole file: a batch that silently lost positions would no
    longer line up with its input. The error lists the bad lines (file:line: why, up to
    10 of them, and how many more) so that one pass fixes them all.
    """
    count, bad, total_bad = 0, [], 0
    for n, line in iter_user_lines(path, what):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        try:
            parse_epd_line(stripped, chess960, f"{path}:{n}")
        except PositionError as err:
            total_bad += 1
            if len(bad) < _MAX_LISTED:
                bad.append(str(err))
            continue
        count += 1
    if bad:
        more = f" (and {total_bad - _MAX_LISTED} more)" if total_bad > _MAX_LISTED else ""
        head = f"{what} {path} has {total_bad} bad line(s){more}: " if total_bad > 1 else ""
        raise PositionError(head + "; ".join(bad))
    if not count:
        raise PositionError(f"{what} {path} holds no positions")
    return count


def read_position_lines(path: object, what: str = "EPD file", chess960: bool | None = None,
                        ) -> list[tuple[int, chess.Board, dict[str, object]]]:
    """Every position line of a FEN/EPD file as a list, after ``check_position_lines``
    (a bad line refuses the whole file, listing the bad lines)."""
    check_position_lines(path, what, chess960)
    return list(iter_position_lines(path, what, chess960))


def read_epd(path: object, chess960: bool | None = None) -> list[tuple[str, chess.Board]]:
    """(id, board) per position line of an EPD/FEN file (the ``id`` operation, else the
    line number). See ``read_position_lines``; ``iter_epd`` streams."""
    return [(str(ops.get("id", n)), board)
            for n, board, ops in read_position_lines(path, "EPD file", chess960)]


def iter_epd(path: object, chess960: bool | None = None) -> Iterator[tuple[str, chess.Board]]:
    """(id, board) per position line of an EPD/FEN file, streamed (see
    ``iter_position_lines``)."""
    for n, board, ops in iter_position_lines(path, "EPD file", chess960):
        yield str(ops.get("id", n)), board


__all__ = ["MAX_COUNTER", "PositionLike", "as_board", "check_board", "check_game",
           "check_position_lines", "iter_epd", "iter_position_lines", "parse_epd_line",
           "parse_fen", "parse_position", "play_moves", "read_epd", "read_position_lines",
           "read_text_file"]
