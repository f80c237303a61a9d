"""Actions (lc0 1858 indices, in the mover's frame) decoded to python-chess moves and UCI
strings, from the positions they were played in (host). Example::

    actions = out.action                              # int [B] from search() or your policy
    moves = decode_actions(states, actions)           # [chess.Move | None] * B
    ucis = actions_to_uci(states, actions)            # ["e2e4", "g8f6", ...]
    states = jax.vmap(env.step)(states, actions)      # decode before stepping
"""

from __future__ import annotations

from typing import Any

import chess
import numpy as np

from zerochess.chess.policy_map import NUM_MOVES, index_to_move
from zerochess.chess.state import to_board
from zerochess.chess.types import PositionArrays
from zerochess.errors import UserError, quote


def boards_from_states(states: Any) -> list[chess.Board]:
    """python-chess boards (no move history) of a batch of positions.

    Args:
      states: ``zerochess.env.State`` [B] (or anything whose ``position`` is
        ``PositionArrays`` [B]), or ``PositionArrays`` [B] itself; device or host arrays.

    Returns:
      B boards: pieces, side to move, castling rights, en passant, clocks.
    """
    pos = getattr(states, "position", states)
    if not isinstance(pos, PositionArrays):
        raise UserError(f"expected an env State or PositionArrays, got {quote(type(pos))}")
    pos = PositionArrays(*(np.asarray(a) for a in pos))
    if pos.turn.ndim != 1:
        raise UserError(f"expected a batch of positions [B], got turn of shape {pos.turn.shape}"
                        " (index a single state with state[None] or jax.tree.map)")
    return [to_board(PositionArrays(*(a[i] for a in pos))) for i in range(pos.turn.shape[0])]


def decode_actions(states: Any, actions: Any) -> list[chess.Move | None]:
    """The python-chess move of each action in its position.

    Args:
      states: ``State`` [B] (or ``PositionArrays`` [B]): the positions the actions are
        played from (before ``Env.step``).
      actions: int [B] lc0 1858 indices in the mover's frame; -1 (``search``'s "no move",
        a position without legal moves) gives None.

    Returns:
      B moves (castling as python-chess writes it: e1g1 on standard boards, king takes
      rook in chess960).

    Raises:
      UserError: shapes differ, or an action is out of range or illegal in its position
        (the index, the position's FEN and the tree are quoted).
    """
    boards = boards_from_states(states)
    acts = np.asarray(actions).reshape(-1) if np.ndim(actions) else np.asarray([actions])
    if acts.shape[0] != len(boards) or np.ndim(actions) > 1:
        raise UserError(f"actions must be int [B] = [{len(boards)}], got shape "
                        f"{np.shape(actions)}")
    moves: list[chess.Move | None] = []
    for i, (board, a) in enumerate(zip(boards, acts.tolist(), strict=True)):
        if a == -1:
            moves.append(None)
            continue
        if not 0 <= a < NUM_MOVES:
            raise UserError(f"action {quote(a)} of tree {i} is not an lc0 move index "
                            f"(0..{NUM_MOVES - 1}, or -1 for no move)")
        try:
            moves.append(index_to_move(board, int(a)))
        except ValueError as err:
            raise UserError(f"tree {i}: {err}") from None
    return moves


def actions_to_uci(states: Any, actions: Any) -> list[str | None]:
    """``decode_actions`` as UCI strings (``"e2e4"``, ``"e7e8q"``; None for -1)."""
    return [None if m is None else m.uci() for m in decode_actions(states, actions)]


__all__ = ["actions_to_uci", "boards_from_states", "decode_actions"]
