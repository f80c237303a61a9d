"""Start positions: standard start, FEN/EPD lists, polyglot books, odds chess, random
lines (seeded uniformly random legal plies)."""

from __future__ import annotations

import dataclasses
import functools
import struct
from collections.abc import Iterable, Sequence
from pathlib import Path

import chess
import chess.polyglot
import numpy as np

from zerochess.errors import ConfigError, InputFileError, quote, quote_path
from zerochess.games.config import OpeningSpec
from zerochess.games.seeding import derive_seed
from zerochess.positions import (
    check_board,
    parse_fen,
    parse_position,
    read_position_lines,
)
from zerochess.user_files import check_user_file, open_user_file

ODDS_SQUARES = {  # the piece removed for odds chess: the queen, the queen's rook / knight
    "queen": {chess.WHITE: chess.D1, chess.BLACK: chess.D8},
    "rook": {chess.WHITE: chess.A1, chess.BLACK: chess.A8},
    "knight": {chess.WHITE: chess.B1, chess.BLACK: chess.B8},
}


@dataclasses.dataclass(frozen=True)
class Opening:
    """A start position (FEN) plus opening moves (UCI) that are played before the engines."""

    name: str
    fen: str = chess.STARTING_FEN
    moves: tuple[str, ...] = ()

    def board(self) -> chess.Board:
        """The position after the opening moves, with them on the move stack."""
        return parse_position(self.fen, self.moves, source=f"opening {self.name}")

    def start_board(self) -> chess.Board:
        return parse_fen(self.fen, source=f"opening {self.name}")

    def check(self) -> None:
        """``PositionError`` (naming the opening) unless its start position and its
        moves are legal. (A game may be over before it starts: it is recorded so.)"""
        self.board()


def odds_board(piece: str, side: chess.Color) -> chess.Board:
    """The standard start with ``side``'s queen / queen's rook / queen's knight removed."""
    if piece not in ODDS_SQUARES:
        raise ConfigError(f"odds piece must be one of {', '.join(ODDS_SQUARES)}")
    board = chess.Board()
    board.remove_piece_at(ODDS_SQUARES[piece][side])
    board.castling_rights = board.clean_castling_rights()
    return board


def read_fen_lines(path: str | Path) -> list[str]:
    """FENs, one per line (blank lines and ``#`` comments skipped); a bad line refuses
    the file (``PositionError`` with file:line)."""
    return [board.fen() for _, board, _ in read_position_lines(path, "FEN file")]


def read_epd_lines(path: str | Path) -> list[tuple[str, str]]:
    """``(fen, name)`` per EPD line; the name is the ``id`` opcode when present."""
    return [(board.fen(), str(ops["id"]) if ops.get("id") else f"epd{n}")
            for n, board, ops in read_position_lines(path, "EPD file")]


MAX_BOOK_BYTES = 2**32  # the largest public polyglot books are a few hundred MB
_BOOK_ENTRY = np.dtype([("key", ">u8"), ("move", ">u2"), ("weight", ">u2"), ("learn", ">u4")])
_BOOK_CHUNK = 2**20  # entries read at a time: memory stays at 16 MiB whatever the book


def check_polyglot_book(path: str | Path) -> None:
    """Refuse a file that is not a polyglot book, naming the first bad entry.

    A polyglot book is a sorted array of 16-byte entries (key, move, weight, learn; big
    endian). Besides the size, every entry is checked as python-chess's reader and the
    binary search over keys assume: keys in ascending order, a move with distinct from
    and to squares, a promotion code of 0-4 and the high bit clear. A file that is not a
    book (text, an image, random bytes, zeros) fails within its first entries.
    """
    p = check_user_file(path, "opening book", MAX_BOOK_BYTES)
    info = p.stat()
    _check_book_entries(str(p.resolve()), info.st_size, info.st_mtime_ns)


@functools.lru_cache(maxsize=8)
def _check_book_entries(path: str, size: int, mtime_ns: int) -> None:
    """``check_polyglot_book``'s walk over the entries (once per file version)."""
    if size == 0 or size % 16:
        raise InputFileError(f"opening book {quote_path(path)} is not a polyglot book ({size:,} "
                             "bytes, not a whole number of 16-byte entries)")
    last_key = 0
    done = 0
    with open_user_file(path, "opening book", MAX_BOOK_BYTES) as fh:
        while True:
            raw = fh.read(_BOOK_CHUNK * 16)
            if not raw:
                break
            entries = np.frombuffer(raw[:len(raw) - len(raw) % 16], _BOOK_ENTRY)
            keys, moves = entries["key"], entries["move"]
            to_sq, from_sq = moves & 63, (moves >> 6) & 63
            promo, high = (moves >> 12) & 7, moves >> 15
            bad_move = (from_sq == to_sq) | (promo > 4) | (high != 0)
            unsorted = np.concatenate([[keys[0] < last_key], keys[1:] < keys[:-1]])
            bad = np.flatnonzero(bad_move | unsorted)
            if bad.size:
                i = int(bad[0])
                why = ("its keys are not in ascending order" if unsorted[i] else
                       f"move code 0x{int(moves[i]):04x} is not a polyglot move")
                raise InputFileError(f"opening book {quote_path(path)} is not a polyglot book: "
                                     f"entry {done + i:,} (byte {16 * (done + i):,}): {why}")
            last_key = int(keys[-1])
            done += len(entries)


def book_line(path: str | Path, plies: int, seed: int, start: chess.Board | None = None,
              ) -> list[str]:
    """Up to ``plies`` moves drawn from a polyglot book, weighted by entry weight, seeded."""
    board = (start or chess.Board()).copy()
    rng = np.random.default_rng(seed)
    moves: list[str] = []
    check_polyglot_book(path)
    with chess.polyglot.open_reader(str(path)) as reader:
        for _ in range(plies):
            entries = list(reader.find_all(board))  # legal moves of weight >= 1 only
            if not entries:
                break
            weights = np.array([e.weight for e in entries], dtype=np.float64)
            pick = entries[int(rng.choice(len(entries), p=weights / weights.sum()))]
            moves.append(pick.move.uci())
            board.push(pick.move)
    return moves


def random_line(plies: int, seed: int) -> list[str]:
    """Up to ``plies`` uniformly random legal moves from the start (seeded); the line
    stops before a move that mates, stalemates or leaves insufficient material."""
    board = chess.Board()
    rng = np.random.default_rng(seed)
    moves: list[str] = []
    for _ in range(plies):
        legal = list(board.legal_moves)
        move = legal[int(rng.integers(len(legal)))]
        board.push(move)
        if board.is_checkmate() or board.is_stalemate() or board.is_insufficient_material():
            break
        moves.append(move.uci())
    return moves


def write_polyglot_book(path: str | Path,
                        entries: Iterable[tuple[chess.Board, chess.Move, int]]) -> None:
    """Write a polyglot book from ``(position, move, weight)`` triples (for tests and tools)."""
    rows = []
    for board, move, weight in entries:
        key = chess.polyglot.zobrist_hash(board)
        frm, to = move.from_square, move.to_square
        if board.is_castling(move):  # polyglot encodes castling king-to-rook (e1h1)
            to = chess.square(7 if chess.square_file(to) > chess.square_file(frm) else 0,
                              chess.square_rank(frm))
        promo = {None: 0, chess.KNIGHT: 1, chess.BISHOP: 2, chess.ROOK: 3,
                 chess.QUEEN: 4}[move.promotion]
        raw = (chess.square_file(to) | chess.square_rank(to) << 3 |
               chess.square_file(frm) << 6 | chess.square_rank(frm) << 9 | promo << 12)
        rows.append((key, raw, weight))
    rows.sort()
    with open(path, "wb") as f:
        for key, raw, weight in rows:
            f.write(struct.pack(">QHHI", key, raw, weight, 0))


def build_openings(spec: OpeningSpec, count: int, seed: int,
                   odds_sides: Sequence[chess.Color] | None = None) -> list[Opening]:
    """``count`` openings for ``spec``: opening ``k`` depends only on (spec, seed, k).

    Lists (FEN/EPD) are cycled in file order (a seeded permutation if ``shuffle``);
    books draw a fresh line per opening; odds use ``odds_sides[k]`` (default
    ``spec.side`` when it is a colour).
    """
    openings = _build(spec, count, seed, odds_sides)
    checked: set[Opening] = set()
    for opening in openings:
        if opening not in checked:
            opening.check()
            checked.add(opening)
    return openings


def _build(spec: OpeningSpec, count: int, seed: int,
           odds_sides: Sequence[chess.Color] | None) -> list[Opening]:
    if spec.type == "startpos":
        return [Opening("startpos") for _ in range(count)]
    if spec.type == "odds":
        out = []
        for k in range(count):
            if odds_sides is not None:
                side = odds_sides[k]
            elif spec.side in ("white", "black"):
                side = chess.WHITE if spec.side == "white" else chess.BLACK
            else:
                raise ConfigError(f"openings.side {quote(spec.side)} needs a match")
            name = f"{spec.piece}-odds-{'white' if side else 'black'}"
            out.append(Opening(name, check_board(odds_board(spec.piece, side)).fen()))
        return out
    if spec.type == "random":
        out = []
        for k in range(count):
            rng = np.random.default_rng(derive_seed(seed, k, 0x4A4D))
            line = random_line(int(rng.integers(spec.book_plies + 1)),
                               derive_seed(seed, k, 0x11FE))
            out.append(Opening(f"random{k}", moves=tuple(line)))
        return out
    if spec.type == "book":
        return [Opening(f"book{k}", moves=tuple(
            book_line(spec.file, spec.book_plies, derive_seed(seed, k, 0xB00C))))
                for k in range(count)]
    if spec.type == "fens":
        fens = [parse_fen(f, source=f"openings.fens[{i}]").fen() for i, f in enumerate(spec.fens)]
        if spec.file:
            fens += read_fen_lines(spec.file)
        items = [(f, f"fen{i + 1}") for i, f in enumerate(fens)]
    else:  # epd
        items = read_epd_lines(spec.file)
    if not items:
        raise ConfigError(f"openings: no positions in {spec.file or 'fens'}")
    order = np.arange(len(items))
    if spec.shuffle:
        order = np.random.default_rng(derive_seed(seed, 0x5EED)).permutation(len(items))
    return [Opening(items[order[k % len(items)]][1], items[order[k % len(items)]][0])
            for k in range(count)]
