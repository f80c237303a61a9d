"""The records every rules backend shares (numpy only: no python-chess, no jax)."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

EMPTY = 0
NUM_PIECE_CODES = 13
PAWN, KNIGHT, BISHOP, ROOK, QUEEN, KING = 1, 2, 3, 4, 5, 6  # piece types (python-chess's)

CASTLE_WK, CASTLE_WQ, CASTLE_BK, CASTLE_BQ = 1, 2, 4, 8
CASTLE_RIGHTS = 15  # the rights bits; the bits above hold the rooks' files
# (right bit, rank of its colour, king side?, shift of its rook's file code)
CASTLE_FIELDS = ((CASTLE_WK, 0, True, 4), (CASTLE_WQ, 0, False, 7),
                 (CASTLE_BK, 7, True, 10), (CASTLE_BQ, 7, False, 13))

NUM_MOVES = 1858  # lc0's policy
MAX_LEGAL_MOVES = 218  # most legal moves of any chess position (= K, edge slots per node)

INPUT_POSITIONS = 8  # positions the 112-plane input shows: the current one, then 7 before it
PAST_POSITIONS = INPUT_POSITIONS - 1  # positions before the current one that the input shows
REPETITION_WINDOW = 100  # positions before a search root whose keys the search keeps
MAX_REPETITIONS = 2  # earlier occurrences are counted up to this (2: a third occurrence)


class GameStatus(enum.IntEnum):
    """Whether the game goes on at a position, or how it ended there (stored as int8)."""

    ONGOING = 0
    CHECKMATE = 1  # the side to move is mated
    STALEMATE = 2
    INSUFFICIENT = 3  # insufficient material
    RULE50 = 4  # halfmove clock >= 100
    REPETITION = 5  # set by the search, which knows the path to the root


class PositionArrays(NamedTuple):
    """A position (or a batch of them, with leading dims) as fixed-size arrays."""

    board: Any  # int8 [..., 64] piece codes
    turn: Any  # int8 [...], 1 white to move, 0 black
    castling: Any  # int32 [...], CASTLE_* rights and rook files
    ep: Any  # int8 [...], legal en-passant target square or -1
    rule50: Any  # int32 [...], halfmove clock
    fullmove: Any  # int32 [...], fullmove number


def empty_positions(xp: Any, shape: tuple[int, ...]) -> PositionArrays:
    """Placeholder positions of batch ``shape`` (``xp`` = numpy or jax.numpy): an empty
    board, black to move, no castling rights, no en passant, rule50 0, move 1."""
    return PositionArrays(
        board=xp.zeros((*shape, 64), xp.int8),
        turn=xp.zeros(shape, xp.int8),
        castling=xp.zeros(shape, xp.int32),
        ep=xp.full(shape, -1, xp.int8),
        rule50=xp.zeros(shape, xp.int32),
        fullmove=xp.ones(shape, xp.int32),
    )


class Expansion(NamedTuple):
    """A rules backend's description of ``n`` children (also a jax pytree).

    Every backend gives the same values: the legal moves of a position are listed in
    ascending 1858 index, so host and device trees match slot for slot.
    """

    child: PositionArrays  # board int8[n,64]; turn, ep int8[n]; castling, rule50, fullmove int32[n]
    legal: Any  # int16 [n, 218]: child's legal moves as 1858 indices, ascending, -1 padded
    num_legal: Any  # int16 [n]
    status: Any  # int8 [n]: GameStatus of the child (never REPETITION)
    # int16 [n]: where the mate check was asked for, the slot (index into ``legal``) of the
    # first move that mates at once; -1 otherwise
    mate_slot: Any

    @classmethod
    def empty(cls, n: int) -> Expansion:
        """``n`` rows with nothing expanded: the shape and dtype of every field (what the
        search tells ``jax.pure_callback`` to expect) and the values of rows left unexpanded."""
        return cls(child=empty_positions(np, (n,)),
                   legal=np.full((n, MAX_LEGAL_MOVES), -1, np.int16),
                   num_legal=np.zeros(n, np.int16), status=np.zeros(n, np.int8),
                   mate_slot=np.full(n, -1, np.int16))

    def arrays(self) -> tuple[Any, ...]:
        """All fields as one flat tuple (the child's fields first)."""
        return (*self.child, self.legal, self.num_legal, self.status, self.mate_slot)

    @classmethod
    def from_arrays(cls, arrays: Sequence[Any]) -> Expansion:
        """Inverse of ``arrays``."""
        n = len(PositionArrays._fields)
        return cls(PositionArrays(*arrays[:n]), *arrays[n:])

    @classmethod
    def concatenate(cls, parts: Sequence[Expansion]) -> Expansion:
        """The rows of ``parts``, in order (numpy)."""
        return cls.from_arrays([np.concatenate(f) for f in zip(*(p.arrays() for p in parts),
                                                               strict=True)])

    def set_rows(self, rows: np.ndarray, part: Expansion) -> None:
        """Write ``part`` (one row per entry of ``rows``) into these numpy arrays, in place."""
        for dst, src in zip(self.arrays(), part.arrays(), strict=True):
            dst[rows] = src


class RootHistory(NamedTuple):
    """What a search rooted at a position knows of the game before it (a pytree; batches
    add leading dimensions)."""

    boards: Any  # int8 [..., 7, 64] the positions 1..7 plies back (input slots 1..7)
    repeated: Any  # bool [..., 7] their lc0 "occurred before" flags
    keys: Any  # uint32 [..., 100, 2] position_hash of up to 100 positions back, newest first
    num_keys: Any  # int32 [...] valid rows of ``keys``
    repetitions: Any  # int8 [...] earlier occurrences of the root itself (capped at 2)


def empty_history(xp: Any, shape: tuple[int, ...]) -> RootHistory:
    """No game before the roots (``xp`` = numpy or jax.numpy)."""
    return RootHistory(boards=xp.zeros((*shape, PAST_POSITIONS, 64), xp.int8),
                       repeated=xp.zeros((*shape, PAST_POSITIONS), xp.bool_),
                       keys=xp.zeros((*shape, REPETITION_WINDOW, 2), xp.uint32),
                       num_keys=xp.zeros(shape, xp.int32),
                       repetitions=xp.zeros(shape, xp.int8))


__all__ = ["BISHOP", "CASTLE_BK", "CASTLE_BQ", "CASTLE_FIELDS", "CASTLE_RIGHTS", "CASTLE_WK",
           "CASTLE_WQ", "EMPTY", "INPUT_POSITIONS", "KING", "KNIGHT", "MAX_LEGAL_MOVES",
           "MAX_REPETITIONS", "NUM_MOVES", "NUM_PIECE_CODES", "PAST_POSITIONS", "PAWN", "QUEEN",
           "REPETITION_WINDOW", "ROOK", "Expansion", "GameStatus", "PositionArrays",
           "RootHistory", "empty_history", "empty_positions"]
