"""Repetition counting, host (``chess.history``) and device (``search.history``), against
python-chess: ``Board.is_repetition`` for the counts, a replay compared by ``Board.epd()``
(python-chess's position identity) for the plies back to the nearest occurrence."""

from __future__ import annotations

import functools
import random

import chess
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from zerochess.chess import history as host
from zerochess.chess.state import from_board, position_hash
from zerochess.search import history as device
from zerochess.search.tree import empty_tree


def _key(board: chess.Board) -> np.ndarray:
    pos = from_board(board)
    return position_hash(np, pos.board, pos.turn, pos.castling, pos.ep)


def _python_chess(board: chess.Board) -> tuple[int, int]:
    """(earlier occurrences, plies back to the nearest) by python-chess alone."""
    count = sum(board.is_repetition(n) for n in range(2, 8))
    replay, epd, nearest = board.copy(), board.epd(), 0
    for plies in range(1, len(board.move_stack) + 1):
        replay.pop()
        if replay.epd() == epd:
            nearest = plies
            break
    return count, nearest


def _shuffle_game(seed: int, fen: str = chess.STARTING_FEN, plies: int = 60) -> chess.Board:
    """Random play that often undoes its own move from two plies before (repetitions)."""
    rng = random.Random(seed)
    board = chess.Board(fen)
    while len(board.move_stack) < plies and not board.is_game_over(claim_draw=False):
        moves = list(board.legal_moves)
        back = None
        if len(board.move_stack) >= 2:
            prev = board.move_stack[-2]
            back = chess.Move(prev.to_square, prev.from_square)
        quiet = [m for m in moves if not board.is_capture(m)
                 and board.piece_type_at(m.from_square) != chess.PAWN]
        if back in moves and rng.random() < 0.7:
            board.push(back)
        else:
            board.push(rng.choice(quiet if quiet and rng.random() < 0.8 else moves))
    return board


def _play(fen: str, ucis: str) -> chess.Board:
    board = chess.Board(fen)
    for uci in ucis.split():
        board.push_uci(uci)
    return board


GAMES = [_shuffle_game(s) for s in range(6)] + [
    _shuffle_game(6, "4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1", 80),
    _play(chess.STARTING_FEN, "g1f3 g8f6 f3g1 f6g8 " * 3 + "e2e4 b8c6 g1f3 c6b8 f3g1 b8c6"),
    # e4xd3 e.p. would be illegal (pinned): python-chess ignores the ep square, so d2d4 repeats
    _play("8/8/8/8/k3p2R/8/3P4/4K3 w - - 0 1", "d2d4 a4a5 e1e2 a5a4 e2e1 a4a5 e1e2 a5a4 e2e1"),
    # d4xe3 e.p. is legal after e2e4: that position never repeats
    _play("4k3/8/8/8/3p4/8/4P3/4K1N1 w - - 0 1", "e2e4 e8d8 g1f3 d8e8 f3g1 e8d8 g1f3 d8e8 f3g1"),
]


def _prefixes(game: chess.Board) -> list[chess.Board]:
    out, board = [], game.root()
    out.append(board.copy())
    for move in game.move_stack:
        board.push(move)
        out.append(board.copy())
    return out


def _cases() -> list[chess.Board]:
    return [b for game in GAMES for b in _prefixes(game)]


def test_games_exercise_repetitions():
    counts = [_python_chess(b)[0] for b in _cases()]
    assert sum(c == 1 for c in counts) >= 20 and sum(c >= 2 for c in counts) >= 10


def test_host_earlier_occurrences_match_python_chess():
    for board in _cases():
        earlier = []
        replay = board.copy()
        while replay.move_stack:
            replay.pop()
            earlier.append(_key(replay).tobytes())
        got = host.earlier_occurrences(_key(board).tobytes(), earlier, board.halfmove_clock)
        assert got == _python_chess(board), (board.root().fen(), board.move_stack)


def test_root_history_repetitions_match_python_chess():
    for board in _cases():
        expected = min(_python_chess(board)[0], host.MAX_REPETITIONS)
        assert host.root_history(board).repetitions == expected, board.fen()


@functools.partial(jax.jit, static_argnames="num_nodes")
def _chain_occurrences(parent, depth, key, rule50, past, chain_keys, num_nodes):
    """``device.path_occurrences`` of a new node below a chain of tree nodes (node i has
    parent i - 1 and key ``chain_keys[i]``) whose root's game is ``past``."""
    tree = empty_tree(1, num_nodes).replace(
        parent=jnp.arange(num_nodes, dtype=jnp.int32)[None] - 1, key=chain_keys[None],
        root_history=jax.tree.map(lambda x: x[None], past))
    one = jax.tree.map(lambda x: x[0], tree)
    return device.path_occurrences(one, parent, depth, key, rule50)


@pytest.mark.parametrize("root_ply", [0, 3, 8])
def test_device_path_occurrences_match_python_chess(root_ply):
    """The search's walk: path nodes from the root at ``root_ply``, then the game before."""
    max_depth = 40
    checked = 0
    for game in GAMES:
        boards = _prefixes(game)
        if len(boards) <= root_ply + 1:
            continue
        past = jax.tree.map(jnp.asarray, host.root_history(boards[root_ply]))
        chain = np.zeros((max_depth, 2), np.uint32)
        path = boards[root_ply:root_ply + max_depth]
        chain[:len(path)] = [_key(b) for b in path]
        for depth in range(1, min(len(path), max_depth)):
            board = path[depth]
            got = _chain_occurrences(jnp.int32(depth - 1), jnp.int32(depth),
                                    jnp.asarray(_key(board)), jnp.int16(board.halfmove_clock),
                                    past, jnp.asarray(chain), num_nodes=max_depth)
            assert tuple(int(x) for x in got) == _python_chess(board), (
                board.root().fen(), [m.uci() for m in board.move_stack], root_ply)
            checked += 1
    assert checked > 100


def test_device_window_occurrences_match_python_chess():
    """The generic walk over a window of keys (as the mctx comparator reads it)."""
    window = host.REPETITION_WINDOW

    @jax.jit
    def occurrences(key, keys, num_keys, rule50):
        limit = jnp.minimum(rule50.astype(jnp.int32), num_keys)
        return device.earlier_occurrences(key, limit, None, lambda ply, c: (keys[ply - 1], c))

    for board in _cases():
        keys = np.zeros((window, 2), np.uint32)
        replay, count = board.copy(), 0
        while replay.move_stack:
            replay.pop()
            keys[count] = _key(replay)
            count += 1
        got = occurrences(jnp.asarray(_key(board)), jnp.asarray(keys), jnp.int32(count),
                          jnp.int16(board.halfmove_clock))
        assert tuple(int(x) for x in got) == _python_chess(board)
