"""Positions from user input: FEN (or "startpos") plus UCI moves, EPD files, boards."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import chess

from zerochess.errors import UserError

PositionLike = chess.Board | str | tuple[str, Sequence[str]]


def parse_position(fen: str = "startpos", moves: Iterable[str] = ()) -> chess.Board:
    """A python-chess board from a FEN/EPD (or "startpos") and UCI moves played from it.

    Raises:
      UserError: an invalid FEN, an invalid position (e.g. no king), or an illegal move.
    """
    text = fen.strip()
    try:
        if text in ("", "startpos"):
            board = chess.Board()
        elif len(text.split()) < 6 or ";" in text:
            board, _ = chess.Board.from_epd(text)
        else:
            board = chess.Board(text)
    except ValueError as err:
        raise UserError(f"invalid FEN {fen!r}: {err}") from None
    status = board.status()
    if status != chess.STATUS_VALID:
        problems = [name.lower().replace("_", " ")
                    for name, flag in chess.Status.__members__.items() if flag and status & flag]
        raise UserError(f"invalid position {fen!r}: {', '.join(problems)}")
    for ply, uci in enumerate(moves):
        try:
            move = chess.Move.from_uci(uci)
        except ValueError:
            raise UserError(f"invalid move {uci!r} (move {ply + 1}): not UCI notation") from None
        if not board.is_legal(move):
            raise UserError(f"illegal move {uci!r} (move {ply + 1}) in position {board.fen()}")
        board.push(move)
    return board


def as_board(position: PositionLike) -> chess.Board:
    """Accept a board, a FEN string or a (FEN, [uci moves]) pair."""
    if isinstance(position, chess.Board):
        if position.status() != chess.STATUS_VALID:
            raise UserError(f"invalid position: {position.fen()}")
        return position
    if isinstance(position, str):
        return parse_position(position)
    if isinstance(position, tuple) and len(position) == 2:
        return parse_position(position[0], position[1])
    raise UserError(f"cannot read a position from {position!r}")


def read_epd(path: str | Path) -> list[tuple[str, chess.Board]]:
    """(id, board) per non-empty line of an EPD/FEN file (``id`` opcode, else the line number)."""
    p = Path(path)
    if not p.is_file():
        raise UserError(f"EPD file not found: {path}")
    out = []
    for n, line in enumerate(p.read_text().splitlines(), start=1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        try:
            if len(text.split()) >= 6 and ";" not in text and text.split()[4].isdigit():
                board, ops = chess.Board(text), {}
            else:
                board, ops = chess.Board.from_epd(text)
        except ValueError as err:
            raise UserError(f"{path}:{n}: invalid EPD/FEN: {err}") from None
        if board.status() != chess.STATUS_VALID:
            raise UserError(f"{path}:{n}: invalid position {text!r}")
        out.append((str(ops.get("id", n)), board))
    if not out:
        raise UserError(f"EPD file {path} holds no positions")
    return out
