"""Per-tree move filters: UCI ``go searchmoves`` and KataGo's ``allowMoves``/``avoidMoves``."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import Any

import chess
import numpy as np

from zerochess.chess.policy_map import (
    _INDEX,
    legal_move_indices,
)
from zerochess.errors import ConfigError, PositionError, quote
from zerochess.search.filter_keys import (  # noqa: F401 - re-exported (the old import path)
    CASTLE_KEY,
    KNIGHT_KEY,
    NUM_KEYS,
    FilterArrays,
    edge_keys,
    excluded_edges,
    no_filters,
    raw_excluded,
)
from zerochess.validation import as_count

MAX_UNTIL_DEPTH = 10**9  # KataGo's analysis engine takes values this large
DEPTH_CAP = 2**15 - 1  # stored as int16: deeper than any tree node (depth is int16)


@dataclasses.dataclass(frozen=True)
class MoveFilter:
    """The moves one search may select at depths < ``until_depth`` (root = depth 0).

    Args:
      allow: None (no restriction) or the only moves allowed (lc0 ``searchmoves``,
        KataGo ``allowMoves``). With ``until_depth == 1`` every move must be legal at
        the root; deeper, a move may name a later move of either side, but at least one
        must be legal at the root.
      avoid: moves never selected (KataGo ``avoidMoves``); they need not be legal at
        the root (they may name replies deeper down).
      until_depth: an integer in [1, 10**9]; 1 = the root only.

    A move excluded by both lists is excluded. Checked on construction (``ConfigError``
    quoting the bad value); legality against the root is checked by ``Searcher.init``
    / ``reset`` (``PositionError``).
    """

    allow: Sequence[chess.Move] | None = None
    avoid: Sequence[chess.Move] = ()
    until_depth: int = 1

    def __post_init__(self) -> None:
        if self.allow is not None:
            object.__setattr__(self, "allow", _moves(self.allow, "MoveFilter.allow"))
        object.__setattr__(self, "avoid", _moves(self.avoid, "MoveFilter.avoid"))
        object.__setattr__(self, "until_depth", as_count(
            self.until_depth, "MoveFilter.until_depth", 1, MAX_UNTIL_DEPTH))

    def excludes(self, board: chess.Board, move: chess.Move, depth: int) -> bool:
        """Whether ``move`` (legal in ``board``, a node at ``depth``) is excluded, read
        with python-chess (the reference the device tables follow; ignores the rule
        that a node whose moves are all excluded keeps them)."""
        if depth >= self.until_depth:
            return False

        def names(m: chess.Move) -> bool:
            try:
                return board.parse_uci(m.uci()) == move and (not m.promotion or
                                                             move.promotion is not None)
            except ValueError:
                return False

        if any(names(m) for m in self.avoid):
            return True
        return self.allow is not None and not any(names(m) for m in self.allow)


def _moves(moves: Any, name: str) -> tuple[chess.Move, ...]:
    if isinstance(moves, (str, chess.Move)) or not isinstance(moves, Iterable):
        raise ConfigError(f"{name} must be a list of chess.Move, got {quote(moves)}")
    out = []
    for i, move in enumerate(moves):
        if not isinstance(move, chess.Move):
            raise ConfigError(f"{name}[{i}] must be a chess.Move, got {quote(move)}")
        if not move or move.drop is not None:
            raise ConfigError(f"{name}[{i}]: {quote(move.uci())} is not a chess move")
        out.append(move)
    return tuple(out)


def move_keys(move: chess.Move, side: int) -> list[int]:
    """The keys of the edges ``move`` can name when side ``side`` (0 White, 1 Black) is
    to move (see docs/DESIGN.md); empty if that side can never make it."""
    mirror = 56 if side else 0
    f, t = move.from_square ^ mirror, move.to_square ^ mirror
    if move.promotion == chess.KNIGHT:
        plain = int(_INDEX[f, t, 0])
        return [int(KNIGHT_KEY[plain])] if plain >= 0 and KNIGHT_KEY[plain] >= 0 else []
    if move.promotion:
        index = int(_INDEX[f, t, move.promotion])
        return [index] if index >= 0 else []
    index = int(_INDEX[f, t, 0])
    keys = [index] if index >= 0 else []
    if index >= 0 and CASTLE_KEY[index] >= 0:  # king-to-rook castling (python-chess reads it)
        keys.append(int(CASTLE_KEY[index]))
    if f == chess.E1 and t in (chess.G1, chess.C1):  # the king's two-square castling move
        rook = chess.H1 if t == chess.G1 else chess.A1
        keys.append(int(CASTLE_KEY[_INDEX[chess.E1, rook, 0]]))
    return keys


TreeFilter = MoveFilter | Sequence[MoveFilter] | None
"""A tree's filter: none, one ``MoveFilter``, or several that all apply (an edge is
excluded if any excludes it; KataGo's ``avoidMoves`` entries with different
``untilDepth``), at most one of them with an ``allow`` list."""


def per_tree(move_filters: Any, count: int) -> list[tuple[MoveFilter, ...] | None]:
    """``move_filters`` of ``Searcher.init``/``reset``: None, or one ``TreeFilter`` per
    tree; returns each tree's filters as a tuple (None: none)."""
    if move_filters is None:
        return [None] * count
    if isinstance(move_filters, (MoveFilter, str)) or not isinstance(move_filters, Iterable):
        raise ConfigError("move_filters must be a list with one MoveFilter (or None) per "
                          f"tree, got {quote(move_filters)}")
    filters = list(move_filters)
    if len(filters) != count:
        raise ConfigError(f"{len(filters)} move filters for {count} positions")
    out: list[tuple[MoveFilter, ...] | None] = []
    for i, f in enumerate(filters):
        group = (f,) if isinstance(f, MoveFilter) else f
        if (group is not None and (isinstance(group, str) or not isinstance(group, Iterable)
                                   or not all(isinstance(g, MoveFilter) for g in group))):
            raise ConfigError(f"move_filters[{i}] must be a MoveFilter, a list of them or "
                              f"None, got {quote(f)}")
        group = tuple(group) if group is not None else ()
        if sum(g.allow is not None for g in group) > 1:
            raise ConfigError(f"move_filters[{i}]: at most one MoveFilter with an allow list "
                              "per tree")
        out.append(group or None)
    return out


def filter_arrays(filters: Sequence[tuple[MoveFilter, ...] | None],
                  boards: Sequence[chess.Board]) -> FilterArrays:
    """The device arrays of each root's filters (``per_tree``); checks them against the
    root (``PositionError`` naming the position and quoting the moves)."""
    arrays = no_filters(len(filters))
    for i, (group, board) in enumerate(zip(filters, boards, strict=True)):
        if not group:
            continue
        for f in group:
            until = min(f.until_depth, DEPTH_CAP)
            for move in f.avoid:
                for side in (0, 1):
                    for key in move_keys(move, side):
                        arrays.avoid[i, side, key] = max(arrays.avoid[i, side, key], until)
            if f.allow is not None:
                _check_allow(f, board, i)
                arrays.allow_until[i] = until
                for move in f.allow:
                    for side in (0, 1):
                        arrays.allowed[i, side, move_keys(move, side)] = True
        legal, indices = legal_move_indices(board)
        turn = np.int8(board.turn == chess.WHITE)
        if legal and raw_excluded(
                np, arrays.avoid[i], arrays.allowed[i], arrays.allow_until[i],
                _board_codes(board), turn, 0, indices, np.ones(len(legal), bool)).all():
            raise PositionError(f"position {i}: the move filter excludes every legal move "
                                f"({board.fen()})")
    return arrays


def _check_allow(f: MoveFilter, board: chess.Board, i: int) -> None:
    illegal = [m.uci() for m in f.allow if not _legal(board, m)]
    if f.until_depth == 1 and illegal:
        raise PositionError(f"position {i}: allowed move(s) {illegal} are not legal in "
                            f"{board.fen()}")
    if len(illegal) == len(f.allow):
        raise PositionError(f"position {i}: none of the allowed moves "
                            f"{[m.uci() for m in f.allow]} is legal in {board.fen()}")


def _legal(board: chess.Board, move: chess.Move) -> bool:
    try:
        board.parse_uci(move.uci())
    except ValueError:
        return False
    return True


def _board_codes(board: chess.Board) -> np.ndarray:
    codes = np.zeros(64, np.int8)
    for sq, piece in board.piece_map().items():
        codes[sq] = piece.piece_type + 6 * (piece.color == chess.BLACK)
    return codes


def restrict_result(result: Any, move_filter: TreeFilter) -> Any:
    """``result`` (a ``SearchResult``) with only the root moves ``move_filter`` lets the
    search select (all when None), as lc0 shows a ``searchmoves`` search."""
    if not move_filter:
        return result
    group = (move_filter,) if isinstance(move_filter, MoveFilter) else tuple(move_filter)
    board = result.board
    keep = np.array([not any(f.excludes(board, m, 0) for f in group) for m in result.moves],
                    bool)
    if keep.all() or not keep.any():
        return result
    m = len(result.moves)
    changes: dict[str, Any] = {}
    for field in dataclasses.fields(result):
        if field.name in _ROOT_FIELDS:
            continue
        value = getattr(result, field.name)
        if isinstance(value, np.ndarray) and value.ndim >= 1 and value.shape[0] == m:
            changes[field.name] = value[keep]
        elif isinstance(value, list) and len(value) == m:
            changes[field.name] = [v for v, k in zip(value, keep, strict=True) if k]
    kept = np.flatnonzero(keep)
    best = result.best_index
    changes["best_index"] = (int(np.searchsorted(kept, best)) if keep[best]
                             else int(np.argmax(changes["visits"])))
    return dataclasses.replace(result, **changes)


_ROOT_FIELDS = {"board", "raw_wdl", "root_wdl", "root_bounds"}


__all__ = ["MAX_UNTIL_DEPTH", "NUM_KEYS", "FilterArrays", "MoveFilter", "TreeFilter", "edge_keys",
           "excluded_edges", "filter_arrays", "move_keys", "no_filters", "per_tree",
           "restrict_result"]
