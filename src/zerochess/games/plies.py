"""One searched ply of one game (``PlyRecord``), whichever source searched it, and what a
game keeps of it: the PGN statistics (``move_stat``) and the training example
(``searched_position``)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import chess
import numpy as np

from zerochess.chess.encoding import encode_board
from zerochess.chess.planes import compact_planes
from zerochess.chess.policy_map import MAX_LEGAL_MOVES, move_to_index
from zerochess.games.records import MoveStat
from zerochess.search.results import SearchResult

__all__ = ["PV_MOVES", "Advance", "PlyRecord", "SearchedPosition", "from_result", "move_stat",
           "policy_target", "searched_position"]

PV_MOVES = 3  # plies of the best move's continuation kept for the PGN comment (pv: 1 + 3)


@dataclasses.dataclass(frozen=True)
class PlyRecord:
    """One searched ply of one game (host values), from either ply source.

    The legal moves come as ``moves`` (host source) or as their lc0 indices ``legal``
    (device source); the planes as ``plane_bits``/``plane_values`` (device) or from the
    board (None)."""

    visits: np.ndarray  # int64 [M] root child visits, slot order
    best: int  # slot of the search's best move
    played: chess.Move  # the move played
    pv: tuple[chess.Move, ...]  # the best move, then its continuation
    root_visits: int
    q: float  # root Q (W - L + draw score x D), mover's view
    wdl: tuple[float, float, float]  # root W/D/L, mover's view
    best_wl: float  # the best move's W - L and D
    best_d: float
    temperature: float
    reused: int = 0
    played_slot: int = -1  # slot of ``played`` (-1: look it up in ``moves``)
    moves: Sequence[chess.Move] | None = None  # [M] the legal moves (host)
    legal: np.ndarray | None = None  # int16 [M] their lc0 indices (device)
    plane_bits: np.ndarray | None = None  # uint8 [112, 8] (device)
    plane_values: np.ndarray | None = None  # float32 [112]

    def legal_indices(self, board: chess.Board) -> np.ndarray:
        """int16 [M]: the legal moves' lc0 indices (``board``: the searched position)."""
        if self.legal is not None:
            return self.legal
        assert self.moves is not None
        return np.asarray([move_to_index(board, m) for m in self.moves], np.int16)

    def share(self, slot: int) -> float:
        """Visits of the move in ``slot`` / the root's child visits (NaN: none)."""
        total = self.visits.sum()
        return float(self.visits[slot] / total) if total and slot >= 0 else math.nan


def from_result(res: SearchResult, move: chess.Move, temperature: float) -> PlyRecord:
    """The host source's record: ``res`` searched, ``move`` played at ``temperature``."""
    moves = list(res.moves)
    return PlyRecord(
        visits=np.asarray(res.visits, np.int64), best=int(res.best_index), played=move,
        pv=tuple(res.pv[:1 + PV_MOVES]), root_visits=int(res.root_visits),
        q=float(res.root_q), wdl=tuple(float(x) for x in np.asarray(res.root_wdl)[:3]),
        best_wl=float(res.wl[res.best_index]), best_d=float(res.d[res.best_index]),
        temperature=float(temperature), reused=int(res.reused_visits),
        played_slot=moves.index(move) if move in moves else -1, moves=moves)


def move_stat(rec: PlyRecord) -> MoveStat:
    """The PGN comment numbers of a searched ply."""
    return MoveStat(
        source="search", nodes=rec.root_visits, q=rec.q, wdl=rec.wdl, best=rec.pv[0].uci(),
        best_share=rec.share(rec.best), played_share=rec.share(rec.played_slot),
        temperature=rec.temperature, pv=tuple(m.uci() for m in rec.pv[:1 + PV_MOVES]),
        reused=rec.reused)


@dataclasses.dataclass(frozen=True)
class SearchedPosition:
    """What the search of one position gives a training example (host, numpy)."""

    plane_bits: np.ndarray  # uint8 [112, 8] lc0's input planes, mask form
    plane_values: np.ndarray  # float32 [112]
    policy_index: np.ndarray  # int16 [218] the legal moves (1858 indices, -1 padded)
    policy_target: np.ndarray  # float32 [218] visit fractions (uniform when none)
    root_wl: float  # root W - L and D, side to move
    root_d: float
    best_wl: float  # the best move's W - L and D
    best_d: float
    white_to_move: bool
    move_index: int  # index of the move played from here in the game record


def policy_target(legal: np.ndarray, visits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """lc0's policy target ``N(move) / sum N`` over the root's children.

    Args:
      legal: int [M] the legal moves' lc0 indices; visits: [M] their visits.
    Returns:
      (index int16 [218], -1 padded; target float32 [218], 0 padded), uniform over the
      legal moves when no child was visited.
    """
    n = len(legal)
    index = np.full(MAX_LEGAL_MOVES, -1, np.int16)
    target = np.zeros(MAX_LEGAL_MOVES, np.float32)
    index[:n] = legal
    visits = np.asarray(visits, np.float64)
    total = visits.sum()
    target[:n] = visits / total if total > 0 else 1.0 / n
    return index, target


def searched_position(rec: PlyRecord, board: chess.Board) -> SearchedPosition:
    """The training example data of ``rec``, searched at ``board`` (with its history)."""
    if rec.plane_bits is not None:
        bits, values = rec.plane_bits, rec.plane_values
    else:
        bits, values = compact_planes(encode_board(board))
    index, target = policy_target(rec.legal_indices(board), rec.visits)
    return SearchedPosition(
        plane_bits=bits, plane_values=values, policy_index=index, policy_target=target,
        root_wl=rec.wdl[0] - rec.wdl[2], root_d=rec.wdl[1], best_wl=rec.best_wl,
        best_d=rec.best_d, white_to_move=board.turn == chess.WHITE,
        move_index=len(board.move_stack))


@dataclasses.dataclass
class Advance:
    """What a ply source did in one call of ``advance(slots, pending, more)``."""

    positions: int = 0  # positions searched
    nodes: int = 0  # their simulations
    compiled: bool = False  # the call compiled a program
    compile_seconds: float = 0.0
    finished: list = dataclasses.field(default_factory=list)  # games that ended, in order
