"""Independent checks of the lc0 1858-move policy map (zerochess.chess.policy_map)."""

from __future__ import annotations

import random
from collections import Counter

import chess
import numpy as np
import pytest

from zerochess.chess import policy_map as pm


def _line_and_knight_targets(sq: int) -> list[int]:
    """Queen-line and knight targets of ``sq`` on an empty board, from python-chess tables."""
    bb = (chess.BB_KNIGHT_ATTACKS[sq] | chess.BB_RANK_ATTACKS[sq][0]
          | chess.BB_FILE_ATTACKS[sq][0] | chess.BB_DIAG_ATTACKS[sq][0])
    return sorted(chess.SquareSet(bb))


def test_sizes_and_uniqueness() -> None:
    assert pm.NUM_MOVES == 1858 and pm.MAX_LEGAL_MOVES == 218
    for arr in (pm.FROM_SQUARE, pm.TO_SQUARE, pm.PROMOTION):
        assert arr.shape == (pm.NUM_MOVES,)
    assert len(pm.MOVES) == pm.NUM_MOVES
    assert len(set(pm.MOVES)) == pm.NUM_MOVES
    triples = set(zip(pm.FROM_SQUARE.tolist(), pm.TO_SQUARE.tolist(), pm.PROMOTION.tolist(),
                      strict=True))
    assert len(triples) == pm.NUM_MOVES


def test_queen_knight_block() -> None:
    expected = [(sq, t) for sq in range(64) for t in _line_and_knight_targets(sq)]
    assert len(expected) == 1792
    got = list(zip(pm.FROM_SQUARE[:1792].tolist(), pm.TO_SQUARE[:1792].tolist(), strict=True))
    assert got == expected
    assert (pm.PROMOTION[:1792] == 0).all()
    assert pm.MOVES[:3] == ("a1b1", "a1c1", "a1d1")
    # Well-known lc0 indices.
    assert pm.MOVES.index("e2e4") == 322
    assert pm.MOVES.index("d2d4") == 293


def test_promotion_block() -> None:
    expected = []
    for f in range(8):
        for tf in (f - 1, f, f + 1):
            if 0 <= tf < 8:
                for piece in "qrb":
                    expected.append(chess.FILE_NAMES[f] + "7" + chess.FILE_NAMES[tf] + "8" + piece)
    assert len(expected) == 66
    assert list(pm.MOVES[1792:]) == expected
    assert set(pm.PROMOTION[1792:].tolist()) == {chess.QUEEN, chess.ROOK, chess.BISHOP}
    assert (pm.FROM_SQUARE[1792:] // 8 == 6).all() and (pm.TO_SQUARE[1792:] // 8 == 7).all()
    assert pm.MOVES[-1] == "h7h8b"


def test_index_array() -> None:
    np.testing.assert_array_equal(
        pm.index_array(pm.FROM_SQUARE, pm.TO_SQUARE, pm.PROMOTION), np.arange(pm.NUM_MOVES)
    )
    frm = np.array([chess.A7, chess.A7, chess.B7, chess.A1, chess.A1])
    to = np.array([chess.A8, chess.A8, chess.A8, chess.B4, chess.A1])
    promo = np.array([chess.KNIGHT, 0, chess.QUEEN, 0, 0])
    np.testing.assert_array_equal(
        pm.index_array(frm, to, promo),
        [pm.MOVES.index("a7a8"), pm.MOVES.index("a7a8"), pm.MOVES.index("b7a8q"), -1, -1],
    )
    # Shape is preserved.
    assert pm.index_array(frm.reshape(5, 1), to.reshape(5, 1), promo.reshape(5, 1)).shape == (5, 1)


def _random_boards(num: int, seed: int) -> list[chess.Board]:
    """Positions from seeded random games, biased towards promotions and castling."""
    rng = random.Random(seed)
    starts = (chess.STARTING_FEN, "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1")
    boards: list[chess.Board] = []
    while len(boards) < num:
        board = chess.Board(rng.choice(starts))
        while board.outcome() is None and board.ply() < 300 and len(boards) < num:
            boards.append(board.copy(stack=False))
            moves = list(board.legal_moves)
            promo = [m for m in moves if m.promotion]
            castle = [m for m in moves if board.is_castling(m)]
            pawn = [m for m in moves if board.piece_type_at(m.from_square) == chess.PAWN]
            if promo and rng.random() < 0.8:
                board.push(rng.choice(promo))
            elif castle and rng.random() < 0.2:
                board.push(rng.choice(castle))
            elif pawn and rng.random() < 0.3:
                board.push(rng.choice(pawn))
            else:
                board.push(rng.choice(moves))
    return boards


def test_round_trip_all_legal_moves() -> None:
    seen: Counter = Counter()
    for board in _random_boards(3000, seed=5):
        moves, indices = pm.legal_move_indices(board)
        assert moves == list(board.legal_moves)
        assert len(set(indices.tolist())) == len(moves), board.fen()  # distinct per position
        shuffled = random.Random(board.fen()).sample(indices.tolist(), len(moves))
        assert pm.indices_to_moves(board, shuffled) == [pm.index_to_move(board, i)
                                                        for i in shuffled]
        for move, idx in zip(moves, indices.tolist(), strict=True):
            assert pm.move_to_index(board, move) == idx
            assert pm.index_to_move(board, idx) == move, (board.fen(), move, idx)
            name = pm.MOVES[idx]
            if board.is_castling(move):
                seen[move.uci()] += 1
                # king-to-rook in the mover's frame
                assert name in ("e1h1", "e1a1"), (move, name)
            elif move.promotion:
                seen[f"promo{move.promotion}_{'wb'[board.turn == chess.BLACK]}"] += 1
                suffix = {chess.KNIGHT: "", chess.QUEEN: "q", chess.ROOK: "r", chess.BISHOP: "b"}
                assert name.endswith(suffix[move.promotion]) and len(name) == 4 + (
                    move.promotion != chess.KNIGHT)
            else:
                frm, to = move.from_square, move.to_square
                if board.turn == chess.BLACK:
                    frm, to = frm ^ 56, to ^ 56
                assert name == chess.square_name(frm) + chess.square_name(to)
    for key in ("e1g1", "e1c1", "e8g8", "e8c8"):
        assert seen[key] >= 5, (key, seen)
    for piece in (chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN):
        for colour in "wb":
            assert seen[f"promo{piece}_{colour}"] >= 5, (piece, colour, seen)


def test_black_is_mirrored() -> None:
    boards = [b for b in _random_boards(600, seed=11) if b.turn == chess.BLACK]
    assert len(boards) > 200
    for board in boards:
        mirrored = board.mirror()  # white to move, colours swapped, ranks flipped
        for move in board.legal_moves:
            twin = chess.Move(move.from_square ^ 56, move.to_square ^ 56, move.promotion)
            assert mirrored.is_legal(twin)
            assert pm.move_to_index(board, move) == pm.move_to_index(mirrored, twin)
    start = chess.Board()
    start.push_uci("g1f3")
    assert pm.move_to_index(start, chess.Move.from_uci("e7e5")) == pm.MOVES.index("e2e4")
    assert pm.move_to_index(start, chess.Move.from_uci("g8f6")) == pm.MOVES.index("g1f3")


def test_castling_and_knight_promotion_decoding() -> None:
    board = chess.Board("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1")
    assert pm.index_to_move(board, pm.MOVES.index("e1h1")) == chess.Move.from_uci("e1g1")
    assert pm.index_to_move(board, pm.MOVES.index("e1a1")) == chess.Move.from_uci("e1c1")
    board.turn = chess.BLACK
    assert pm.index_to_move(board, pm.MOVES.index("e1h1")) == chess.Move.from_uci("e8g8")
    assert pm.index_to_move(board, pm.MOVES.index("e1a1")) == chess.Move.from_uci("e8c8")
    promo = chess.Board("1r5k/P7/8/8/8/8/8/6K1 w - - 0 1")
    assert pm.index_to_move(promo, pm.MOVES.index("a7a8")) == chess.Move.from_uci("a7a8n")
    assert pm.index_to_move(promo, pm.MOVES.index("a7b8")) == chess.Move.from_uci("a7b8n")
    assert pm.index_to_move(promo, pm.MOVES.index("a7b8r")) == chess.Move.from_uci("a7b8r")
    black = chess.Board("6k1/8/8/8/8/8/p7/1R5K b - - 0 1")
    assert pm.index_to_move(black, pm.MOVES.index("a7a8")) == chess.Move.from_uci("a2a1n")
    assert pm.index_to_move(black, pm.MOVES.index("a7b8q")) == chess.Move.from_uci("a2b1q")


@pytest.mark.parametrize("index", [-1, pm.NUM_MOVES, 10_000])
def test_out_of_range_raises(index: int) -> None:
    with pytest.raises(ValueError, match="out of range"):
        pm.index_to_move(chess.Board(), index)


@pytest.mark.parametrize(
    ("fen", "name"),
    [
        (chess.STARTING_FEN, "a1b1"),
        (chess.STARTING_FEN, "e2e5"),
        (chess.STARTING_FEN, "e7e5"),
        ("r3k2r/8/8/8/8/8/8/R3K2R w - - 0 1", "e1h1"),  # no castling rights
        ("r3k2r/8/8/8/8/8/5r2/R3K2R w KQkq - 0 1", "e1h1"),  # through an attacked square
        ("1r5k/P7/8/8/8/8/8/6K1 b - - 0 1", "a7a8q"),  # not black's pawn
    ],
)
def test_illegal_index_raises(fen: str, name: str) -> None:
    with pytest.raises(ValueError, match="not legal"):
        pm.index_to_move(chess.Board(fen), pm.MOVES.index(name))
    board = chess.Board(fen)
    legal = pm.move_to_index(board, next(iter(board.legal_moves)))
    with pytest.raises(ValueError, match="not legal"):  # the many-index form raises alike
        pm.indices_to_moves(board, [legal, pm.MOVES.index(name)])
