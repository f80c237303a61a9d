"""The host boundary: the cost per leaf of expanding a position on the host."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from typing import Any

import chess
import numpy as np

from zerochess.chess import state as chess_state
from zerochess.chess.expander import Expander
from zerochess.chess.policy_map import move_to_index
from zerochess.chess.rules import expand_batch

BASELINES = ("fen", "copy", "push_pop")


def _best_per_leaf(fn: Callable[[], None], leaves: int, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times) / leaves


def baselines(rows: Sequence[chess.Board], moves: Sequence[chess.Move]
              ) -> dict[str, Callable[[], None]]:
    """The plain python-chess baselines over ``rows`` (leaf parents) and ``moves``."""
    fens = [b.fen() for b in rows]
    resident = [b.copy(stack=False) for b in rows]
    pairs = list(zip(resident, moves, strict=True))

    def fen() -> None:
        for text, move in zip(fens, moves, strict=True):
            board = chess.Board(text)
            board.push(move)
            list(board.legal_moves)
            board.is_game_over()

    def copy() -> None:
        for parent, move in pairs:
            board = parent.copy(stack=False)
            board.push(move)
            list(board.legal_moves)
            board.is_game_over()

    def push_pop() -> None:
        for board, move in pairs:
            board.push(move)
            list(board.legal_moves)
            board.is_game_over()
            board.pop()

    return {"fen": fen, "copy": copy, "push_pop": push_pop}


def measure(boards: Sequence[chess.Board], leaves: int = 1024, seed: int = 0,
            repeats: int = 3, workers: bool = True) -> dict[str, Any]:
    """Per-leaf cost (us) of ``expand_batch`` and of each python-chess baseline.

    Leaves are ``boards`` (cycled to ``leaves``) each with a seeded random legal move.
    """
    rng = random.Random(seed)
    rows = [boards[i % len(boards)] for i in range(leaves)]
    moves = [rng.choice(list(b.legal_moves)) for b in rows]
    parent = chess_state.stack([chess_state.from_board(b) for b in rows])
    index = np.array([move_to_index(b, m) for b, m in zip(rows, moves, strict=True)],
                     np.int16)
    ours = _best_per_leaf(lambda: expand_batch(parent, index), leaves, repeats)
    check = np.ones(leaves, bool)  # SearchConfig.mate_check: every child searched for a mate
    with_check = _best_per_leaf(lambda: expand_batch(parent, index, check), leaves, repeats)
    plain = {name: _best_per_leaf(fn, leaves, repeats)
             for name, fn in baselines(rows, moves).items()}
    fastest = min(("copy", "push_pop"), key=plain.__getitem__)
    out: dict[str, Any] = {
        "leaves": leaves,
        "expand_batch_us_per_leaf": ours * 1e6,
        "expand_batch_mate_check_us_per_leaf": with_check * 1e6,
        "python_chess_us_per_leaf": {k: v * 1e6 for k, v in plain.items()},
        "fastest_python_chess": fastest,
        "ratio_vs_fastest": ours / plain[fastest],
        "ratio_vs_fen": ours / plain["fen"],
    }
    if workers:
        with Expander() as pool:
            pool(parent, index)  # start-up / first exchange
            out["expander_wall_us_per_leaf"] = _best_per_leaf(
                lambda: pool(parent, index), leaves, repeats) * 1e6
            out["expander_workers"] = pool.num_workers
    return out


def describe(hb: dict[str, Any]) -> str:
    """One line with every figure."""
    pc = hb["python_chess_us_per_leaf"]
    text = (f"host boundary per leaf: expand_batch {hb['expand_batch_us_per_leaf']:.1f} us"
            + (f" ({hb['expand_batch_mate_check_us_per_leaf']:.1f} us with the mate check)"
               if "expand_batch_mate_check_us_per_leaf" in hb else "") + "; "
            f"python-chess resident board push/pop {pc['push_pop']:.1f} us, "
            f"copy(stack=False) {pc['copy']:.1f} us, Board(fen) {pc['fen']:.1f} us -> "
            f"{hb['ratio_vs_fastest']:.2f}x the fastest plain python-chess "
            f"({hb['fastest_python_chess']}), {hb['ratio_vs_fen']:.2f}x the FEN one")
    if "expander_wall_us_per_leaf" in hb:
        text += (f"; Expander with {hb['expander_workers']} workers: "
                 f"{hb['expander_wall_us_per_leaf']:.1f} us/leaf of wall time")
    return text


__all__ = ["BASELINES", "baselines", "describe", "measure"]
