"""Rules backends: the seam between the search and the rules of chess."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import chess
import numpy as np

from zerochess.chess import state as chess_state
from zerochess.chess.expander import Expander
from zerochess.chess.history import root_history
from zerochess.chess.policy_map import move_to_index
from zerochess.chess.rules import checking_mate_in_two, mating_move
from zerochess.chess.types import Expansion, GameStatus, PositionArrays, RootHistory
from zerochess.errors import ConfigError, PositionError, quote


class NoLegalMovesError(PositionError):
    """The position to search is already over (checkmate or stalemate)."""


class RootPositions(NamedTuple):
    """Search roots [B] (numpy): what the search keeps of each root and its game."""

    position: PositionArrays
    legal: np.ndarray  # int16 [B, 218] ascending 1858 indices, -1 padded
    num_legal: np.ndarray  # int16 [B]
    status: np.ndarray  # int8 [B]: only checkmate and stalemate end a game at a root
    history: RootHistory  # [B, ...]
    mate_slot: np.ndarray  # int16 [B] the mate check's move (see ``root_mate_slot``), -1


def sorted_moves(board: chess.Board) -> list[chess.Move]:
    """``board``'s legal moves in ascending lc0 index, the order of every backend."""
    return sorted(board.legal_moves, key=lambda m: move_to_index(board, m))


def root_mate_slot(board: chess.Board) -> int:
    """The mate check at a root: the slot (in ascending index) of the first move that mates
    at once, else of the first check after which every reply allows a mate in one; -1."""
    moves = sorted_moves(board)
    plain = board.copy(stack=False)
    slot = mating_move(plain, moves)
    return slot if slot >= 0 else checking_mate_in_two(plain, moves)


class Rules:
    """A rules backend (see docs/DESIGN.md). Subclasses give ``expand``."""

    name = "rules"
    on_device = False
    device_expand: Callable[..., Expansion] | None = None

    def expand(self, parent: PositionArrays, move: Any, mate_check: Any = None) -> Expansion:
        raise NotImplementedError

    def close(self) -> None:
        """Release what the backend holds (worker processes)."""

    def roots(self, boards: Sequence[chess.Board], mate_check: np.ndarray | None = None
              ) -> RootPositions:
        """Roots for ``boards`` (checked boards with their games); ``mate_check`` bool [B]:
        the roots to search for a mate (``root_mate_slot``).

        Raises:
          NoLegalMovesError: a position is already over.
        """
        positions, histories = [], []
        for i, board in enumerate(boards):
            if not any(board.generate_legal_moves()):
                outcome = board.outcome(claim_draw=False)
                what = outcome.termination.name.lower() if outcome else "no legal moves"
                raise NoLegalMovesError(f"position {i} has no legal moves ({what}): "
                                        f"{board.fen()}")
            positions.append(chess_state.from_board(board))
            histories.append(root_history(board))
        position = chess_state.stack(positions)
        exp = self.expand(position, np.full(len(boards), -1, np.int16))
        status = exp.status.copy()
        status[~np.isin(status, (GameStatus.CHECKMATE, GameStatus.STALEMATE))] = \
            GameStatus.ONGOING
        mate_slot = np.full(len(boards), -1, np.int16)
        if mate_check is not None:
            for i in np.nonzero(np.asarray(mate_check, bool))[0]:
                mate_slot[i] = root_mate_slot(boards[i])
        history = RootHistory(*(np.stack(f) for f in zip(*histories, strict=True)))
        return RootPositions(position=position, legal=exp.legal, num_legal=exp.num_legal,
                             status=status, history=history, mate_slot=mate_slot)

    def follow(self, board: chess.Board, moves: Sequence[chess.Move], where: str
               ) -> tuple[chess.Board, list[int]]:
        """Play ``moves`` from ``board`` (a copy): the new board and the moves' lc0 indices.

        Raises:
          ConfigError: ``moves`` is not a list of moves.
          PositionError: a move is illegal where it is played.
          NoLegalMovesError: the moves end the game.
        """
        if isinstance(moves, str | chess.Move) or not isinstance(moves, Sequence):
            raise ConfigError(f"{where} must be a list of chess.Move, got {quote(moves)}")
        board = board.copy()
        indices = []
        for j, move in enumerate(moves):
            if not isinstance(move, chess.Move) or not board.is_legal(move):
                raise PositionError(f"{where}[{j}] {quote(move)} is not a legal move in "
                                    f"{board.fen()}")
            indices.append(move_to_index(board, move))
            board.push(move)
        if not any(board.generate_legal_moves()):
            outcome = board.outcome(claim_draw=False)
            what = outcome.termination.name.lower() if outcome else "no legal moves"
            raise NoLegalMovesError(f"{where} end the game ({what}): {board.fen()}")
        return board, indices


class HostRules(Rules):
    """python-chess on the host: ``Expander`` (worker processes for large batches)."""

    name = "host"
    on_device = False

    def __init__(self, expander: Expander | None = None, num_workers: int | None = None):
        self.expander = expander if expander is not None else Expander(num_workers)

    def expand(self, parent: PositionArrays, move: Any, mate_check: Any = None) -> Expansion:
        check = None if mate_check is None or not np.any(mate_check) else mate_check
        return self.expander(parent, move, check) if check is not None \
            else self.expander(parent, move)

    def close(self) -> None:
        self.expander.close()


class DeviceRules(Rules):
    """The jax rules (``zerochess.chess.device``): searches run as one compiled program."""

    name = "device"
    on_device = True

    def __init__(self) -> None:
        from zerochess.chess.device import expand

        self.device_expand = expand
        self._jitted: Any = None

    def expand(self, parent: PositionArrays, move: Any, mate_check: Any = None) -> Expansion:
        import jax

        if self._jitted is None:
            from zerochess.program_store import Program

            self._jitted = Program(_device_expand_host)
        n = int(np.shape(move)[0])
        check = np.zeros(n, bool) if mate_check is None else np.asarray(mate_check, bool)
        out = jax.device_get(self._jitted(PositionArrays(*(np.asarray(f) for f in parent)),
                                          np.asarray(move, np.int16), check))
        return Expansion(*(jax.tree.map(np.asarray, out)))


def _device_expand_host(parent: PositionArrays, move: Any, mate_check: Any) -> Expansion:
    from zerochess.chess.device import expand

    return expand(parent, move, mate_check)


RULES = ("host", "device")


def make_rules(rules: str | Rules, num_workers: int | None = None,
               expander: Expander | None = None) -> Rules:
    """A backend from its name (``"host"`` or ``"device"``) or a ``Rules`` object."""
    if isinstance(rules, Rules):
        return rules
    if rules == "host":
        return HostRules(expander, num_workers)
    if rules == "device":
        return DeviceRules()
    raise ConfigError(f"rules must be one of {', '.join(RULES)} (or a Rules object), got "
                      f"{quote(rules)}")


__all__ = ["RULES", "DeviceRules", "HostRules", "NoLegalMovesError", "RootPositions", "Rules",
           "make_rules", "root_mate_slot", "sorted_moves"]
