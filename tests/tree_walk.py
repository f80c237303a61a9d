"""Helpers shared by the tests that compare the device search with a plain-Python
reference node by node: the network's view of one position as the references take it,
and the device tree's nodes by move path."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import chess
import jax
import numpy as np

from zerochess.chess.encoding import encode_board
from zerochess.chess.policy_map import index_to_move, move_to_index

Path = tuple[str, ...]


def network_evaluate(model: Any, board: chess.Board, temperature: float,
                     moves_left: bool = False) -> tuple:
    """(legal moves, priors at ``temperature`` in float64, WDL) of ``board`` from
    ``model``, plus the network's moves left when ``moves_left`` and the model has that
    head: the ``evaluate`` callable of the references."""
    out = model(np.asarray(encode_board(board))[None])
    logits = np.asarray(out.policy_logits[0], np.float64)
    moves = list(board.legal_moves)
    legal = np.array([logits[move_to_index(board, m)] for m in moves])
    z = (legal - legal.max()) / temperature
    w = np.asarray(out.wdl_logits[0], np.float64)
    wdl = np.exp(w - w.max()) / np.exp(w - w.max()).sum()
    priors = np.exp(z) / np.exp(z).sum()
    if moves_left and out.moves_left is not None:
        return moves, priors, wdl, float(out.moves_left[0])
    return moves, priors, wdl


def tree_arrays(state: Any, *fields: str) -> dict[str, np.ndarray]:
    """The host arrays a walk needs ([B, ...]: visits, status, edge_start, num_legal, and
    the edge pool's child and move), plus the named node ``fields`` of ``state.tree``."""
    tree = jax.device_get(state.tree)
    out = {name: np.asarray(getattr(tree, name))
           for name in ("visits", "status", "edge_start", "num_legal", *fields)}
    out["child"], out["move"] = np.asarray(tree.edges.child), np.asarray(tree.edges.move)
    return out


def walk_paths(arrays: dict[str, np.ndarray], b: int,
               board: chess.Board) -> Iterator[tuple[Path, int]]:
    """(move path from the root in UCI, node index) of every node of tree ``b`` linked
    from the root; a node is descended into when it has visits and is not a game end."""
    stack: list[tuple[Path, int, chess.Board]] = [((), 0, board)]
    while stack:
        path, node, pos = stack.pop()
        yield path, node
        if arrays["visits"][b, node] == 0 or arrays["status"][b, node] != 0:
            continue
        start = arrays["edge_start"][b, node]
        for slot in range(arrays["num_legal"][b, node]):
            child = arrays["child"][b, start + slot]
            if child >= 0:
                move = index_to_move(pos, int(arrays["move"][b, start + slot]))
                after = pos.copy(stack=False)
                after.push(move)
                stack.append(((*path, move.uci()), int(child), after))
