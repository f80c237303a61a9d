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
from zerochess.search.selection import contempt_uniform as _contempt_uniform

Path = tuple[str, ...]


# The network's raw outputs by (model, the game's start, its moves): the references of
# several tests and parameters walk the same positions with the same model. The key
# determines the whole network input (the position, its history and repetitions); the
# model is kept alive with its entries so that its id is never reused.
_OUTPUTS: dict[tuple, tuple] = {}
_MODELS: dict[int, tuple[Any, Any]] = {}


def _raw_outputs(model: Any, board: chess.Board) -> tuple:
    """(policy logits [1858], WDL logits [3], moves left or None) of ``board``."""
    key = (id(model), board.root().fen(), tuple(board.move_stack))
    out = _OUTPUTS.get(key)
    if out is None:
        if id(model) not in _MODELS:  # one jitted apply per model (op-by-op is ~10x slower)
            _MODELS[id(model)] = (model, jax.jit(model.apply))
        apply = _MODELS[id(model)][1]
        res = jax.device_get(apply(model.params, np.asarray(encode_board(board))[None]))
        out = (np.asarray(res.policy_logits[0]),  # float32 as the network gives them
               np.asarray(res.wdl_logits[0]),
               None if res.moves_left is None else float(res.moves_left[0]))
        _OUTPUTS[key] = out
    return out


_CONTEMPT_UNIFORM = jax.jit(_contempt_uniform)  # one compile: the arguments are data


def contempt_uniform(key: Any, simulation: int, depth: int) -> float:
    """``selection.contempt_uniform`` (the search's own draw, which the references replay),
    jitted: called once per frozen node visited, op-by-op dispatch would dominate."""
    return float(_CONTEMPT_UNIFORM(key, simulation, depth))


def sorted_legal(board: chess.Board) -> list[chess.Move]:
    """``board``'s legal moves in ascending lc0 index: every rules backend's move order
    (zerochess.chess.types.Expansion), hence the references' slot order too."""
    return sorted(board.legal_moves, key=lambda m: move_to_index(board, m))


def network_evaluate(model: Any, board: chess.Board, temperature: float,
                     moves_left: bool = False) -> tuple:
    """(legal moves, priors at ``temperature`` in float64, WDL) of ``board`` from
    ``model``, plus the network's moves left when ``moves_left`` and the model has that
    head: the ``evaluate`` callable of the references."""
    logits, w, m = _raw_outputs(model, board)
    logits, w = logits.astype(np.float64), w.astype(np.float64)
    moves = sorted_legal(board)
    legal = np.array([logits[move_to_index(board, m)] for m in moves])
    z = (legal - legal.max()) / temperature
    wdl = np.exp(w - w.max()) / np.exp(w - w.max()).sum()
    priors = np.exp(z) / np.exp(z).sum()
    if moves_left and m is not None:
        return moves, priors, wdl, m
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
