"""Checks of the built-in evaluator (zerochess.neural.builtin) against independent references.

Board facts (attackers, checks, legality) come from python-chess; the material part is
recomputed in plain Python from ``board.piece_map()`` with PeSTO's published values.
"""

from __future__ import annotations

import random

import chess
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from zerochess.chess.encoding import encode_board
from zerochess.chess.policy_map import move_to_index
from zerochess.neural import builtin as bi
from zerochess.neural.model import Model
from zerochess.search.api import Searcher

PARAMS = bi.default_params()
APPLY = jax.jit(bi.builtin_apply)
FEATURES = jax.jit(bi.board_features)
EVAL_CP = jax.jit(bi.evaluate_cp)
PAD = 32  # batches are padded to a multiple of this, so a few shapes are compiled

# PeSTO's published piece values and game-phase increments (P N B R Q K).
PESTO_MG = {chess.PAWN: 82, chess.KNIGHT: 337, chess.BISHOP: 365, chess.ROOK: 477,
            chess.QUEEN: 1025, chess.KING: 0}
PESTO_EG = {chess.PAWN: 94, chess.KNIGHT: 281, chess.BISHOP: 297, chess.ROOK: 512,
            chess.QUEEN: 936, chess.KING: 0}
PHASE = {chess.PAWN: 0, chess.KNIGHT: 1, chess.BISHOP: 1, chess.ROOK: 2, chess.QUEEN: 4,
         chess.KING: 0}
SEE = {chess.PAWN: 1.0, chess.KNIGHT: 3.2, chess.BISHOP: 3.3, chess.ROOK: 5.0,
       chess.QUEEN: 9.5, chess.KING: 100.0}


def _own_planes(board: chess.Board) -> np.ndarray:
    """Slot-0 and aux planes of ``board`` in the mover's frame, written here from
    python-chess independently of the package's encoder (checked against it below)."""
    b = board if board.turn == chess.WHITE else board.mirror()
    planes = np.zeros((112, 8, 8), np.float32)
    for sq, piece in b.piece_map().items():
        plane = piece.piece_type - 1 + (0 if piece.color == chess.WHITE else 6)
        planes[plane, chess.square_rank(sq), chess.square_file(sq)] = 1.0
    planes[104] = b.has_queenside_castling_rights(chess.WHITE)
    planes[105] = b.has_kingside_castling_rights(chess.WHITE)
    planes[106] = b.has_queenside_castling_rights(chess.BLACK)
    planes[107] = b.has_kingside_castling_rights(chess.BLACK)
    planes[108] = board.turn == chess.BLACK
    planes[109] = board.halfmove_clock
    planes[111] = 1.0
    return planes


def planes_of(board: chess.Board) -> np.ndarray:
    return np.asarray(encode_board(board), np.float32)


def _batch(boards: list[chess.Board]) -> tuple[jnp.ndarray, int]:
    planes = np.stack([planes_of(b) for b in boards])
    n = len(boards)
    padded = -(-n // PAD) * PAD
    planes = np.concatenate([planes, np.repeat(planes[:1], padded - n, axis=0)])
    return jnp.asarray(planes), n


def evaluate(boards: list[chess.Board]) -> tuple[np.ndarray, np.ndarray]:
    """(policy logits [n, 1858], WDL probabilities [n, 3]) of ``boards``."""
    planes, n = _batch(boards)
    out = APPLY(PARAMS, planes)
    return (np.asarray(out.policy_logits)[:n],
            np.asarray(jax.nn.softmax(out.wdl_logits, axis=-1))[:n])


def expected_score(boards: list[chess.Board]) -> np.ndarray:
    """W - L for the side to move of each board."""
    wdl = evaluate(boards)[1]
    return wdl[:, 0] - wdl[:, 2]


def priors(board: chess.Board) -> dict[str, float]:
    """Softmax of the policy over the legal moves, keyed by UCI."""
    logits = evaluate([board])[0][0]
    moves = list(board.legal_moves)
    lg = np.array([logits[move_to_index(board, m)] for m in moves])
    p = np.exp(lg - lg.max())
    p /= p.sum()
    return {m.uci(): float(x) for m, x in zip(moves, p, strict=True)}


def random_positions(count: int, seed: int, max_plies: int = 90) -> list[chess.Board]:
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        board = chess.Board()
        for _ in range(rng.randrange(max_plies)):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
        if any(board.legal_moves):
            out.append(board)
    return out


def mover_frame(board: chess.Board) -> chess.Board:
    """The board seen by the evaluator: white to move (python-chess mirror for black)."""
    return board if board.turn == chess.WHITE else board.mirror()


# --- shapes, jit, params as data -----------------------------------------------------------

def test_model_shapes_finite_and_params_are_data() -> None:
    model = bi.builtin_model()
    assert isinstance(model, Model) and model.name == "builtin" and not model.has_moves_left
    boards = random_positions(20, seed=1) + [chess.Board()]
    planes = jnp.asarray(np.stack([planes_of(b) for b in boards]))
    traces = []

    def counted(params, x):
        traces.append(1)
        return bi.builtin_apply(params, x)

    fn = jax.jit(counted)
    out = fn(model.params, planes)
    assert out.policy_logits.shape == (21, 1858) and out.policy_logits.dtype == jnp.float32
    assert out.wdl_logits.shape == (21, 3) and out.moves_left is None
    assert bool(jnp.isfinite(out.policy_logits).all()) and bool(jnp.isfinite(out.wdl_logits).all())
    # wdl_logits are log-probabilities
    np.testing.assert_allclose(np.exp(np.asarray(out.wdl_logits)).sum(-1), 1.0, atol=1e-4)
    # eager and jitted agree; new param values reuse the compiled function
    eager = bi.builtin_apply(model.params, planes)
    np.testing.assert_allclose(eager.policy_logits, out.policy_logits, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(eager.wdl_logits, out.wdl_logits, rtol=1e-5, atol=1e-5)
    tweaked = dict(model.params, mg_value=model.params["mg_value"] * 2.0,
                   eg_value=model.params["eg_value"] * 2.0)
    out2 = fn(tweaked, planes)
    assert len(traces) == 1
    assert not np.allclose(out2.wdl_logits, out.wdl_logits)
    # Model.__call__ / wdl work too
    np.testing.assert_allclose(model.wdl(planes), jax.nn.softmax(out.wdl_logits, -1), atol=1e-5)


def test_own_plane_helper_matches_encoder_slot0() -> None:
    """The planes this evaluator reads (slot 0, aux) agree with an independent encoding."""
    used = list(range(12)) + list(range(104, 112))
    for board in random_positions(15, seed=2):
        np.testing.assert_array_equal(_own_planes(board)[used], planes_of(board)[used])


# --- board facts against python-chess ----------------------------------------------------

def test_attack_counts_and_least_attackers_match_python_chess() -> None:
    boards = random_positions(24, seed=3)
    planes, n = _batch(boards)
    feats = FEATURES(PARAMS, planes)
    for i, board in enumerate(boards):
        mb = mover_frame(board)  # white = the side to move
        for color, count, least in ((chess.WHITE, feats.our_count, feats.our_min),
                                    (chess.BLACK, feats.their_count, feats.their_min)):
            for sq in chess.SQUARES:
                attackers = mb.attackers(color, sq)
                assert int(count[i, sq]) == len(attackers), (board.fen(), color, sq)
                want = min((SEE[mb.piece_type_at(a)] for a in attackers), default=1000.0)
                assert float(least[i, sq]) == pytest.approx(want), (board.fen(), color, sq)


def test_check_squares_match_python_chess_direct_checks() -> None:
    """For every legal move, "the landed piece checks the king from its destination" as the
    evaluator sees it equals python-chess, except where the mover's own departure opens the
    line (the from-square lies between the destination and the king)."""
    boards = random_positions(40, seed=4)
    planes, n = _batch(boards)
    feats = FEATURES(PARAMS, planes)
    checked = 0
    for i, board in enumerate(boards):
        mb = mover_frame(board)
        king = mb.king(chess.BLACK)
        for move in mb.legal_moves:
            if mb.is_castling(move) or mb.piece_type_at(move.from_square) == chess.KING:
                continue
            if move.from_square in chess.SquareSet(chess.between(move.to_square, king)):
                continue
            after = mb.copy(stack=False)
            after.push(move)
            direct = move.to_square in after.attackers(chess.WHITE, king)
            landed = move.promotion or mb.piece_type_at(move.from_square)
            got = bool(feats.check_from[i, landed - 1, move.to_square])
            assert got == direct, (board.fen(), move.uci())
            checked += direct
    assert checked > 10  # the sample does contain checks


# --- value -------------------------------------------------------------------------------

def _plain_material(board: chess.Board) -> float:
    """Tapered PeSTO material (cp) for the side to move, from ``board.piece_map()``."""
    mg = eg = 0.0
    phase = 0
    for piece in board.piece_map().values():
        sign = 1.0 if piece.color == board.turn else -1.0
        mg += sign * PESTO_MG[piece.piece_type]
        eg += sign * PESTO_EG[piece.piece_type]
        phase += PHASE[piece.piece_type]
    phase = min(phase, 24)
    return (mg * phase + eg * (24 - phase)) / 24


def test_material_matches_plain_python_count() -> None:
    boards = random_positions(30, seed=5, max_plies=160)
    boards += [chess.Board(), chess.Board("4k3/8/8/8/8/8/8/QQQQK3 b - - 0 1")]
    planes, n = _batch(boards)
    got = np.asarray(jax.jit(lambda p, x: bi.material_cp(p, bi.board_features(p, x)))(
        PARAMS, planes))[:n]
    want = np.array([_plain_material(b) for b in boards])
    np.testing.assert_allclose(got, want, atol=1e-3)


UP_MATERIAL = [  # (FEN with white to move, white's material edge)
    ("r1bqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "knight"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNB1KBNR w KQkq - 0 1", "-queen"),
    ("8/8/4k3/8/8/3RK3/8/8 w - - 0 1", "rook"),
    ("6k1/5ppp/8/8/8/8/4PPPP/6K1 w - - 0 1", "pawn"),
    ("r4rk1/pp3ppp/2n5/8/8/8/PP3PPP/R3R1K1 w - - 0 1", "-knight"),
    ("2r3k1/5ppp/8/8/8/8/5PPP/1R1R2K1 w - - 0 1", "rook"),
]


@pytest.mark.parametrize("fen,edge", UP_MATERIAL)
def test_value_prefers_side_up_material(fen: str, edge: str) -> None:
    white = chess.Board(fen)
    black = white.copy()
    black.turn = chess.BLACK
    assert black.is_valid() and white.is_valid()
    white_ahead = not edge.startswith("-")
    mat = _plain_material(white)
    assert mat > 50 if white_ahead else mat < -50  # the test's own count agrees with the label
    score_w, score_b = expected_score([white, black])
    if white_ahead:
        assert score_w > 0.05 and score_b < -0.05
    else:
        assert score_w < -0.05 and score_b > 0.05


def test_value_orders_by_material_edge() -> None:
    """More material for the mover -> higher expected score (same pawn structure)."""
    base = "4k3/pppp4/8/8/8/8/PPPP4/4K3 w - - 0 1"
    extras = ["", "N", "R", "Q", "QR"]
    boards = []
    for extra in extras:
        b = chess.Board(base)
        for sq, sym in zip((chess.G1, chess.H1), extra, strict=False):
            b.set_piece_at(sq, chess.Piece.from_symbol(sym))
        boards.append(b)
    scores = expected_score(boards)
    assert np.all(np.diff(scores) > 0), scores
    # and symmetric: the same material given to the side not on move mirrors it
    flipped = [b.mirror() for b in boards]  # colours and ranks swapped, black ahead...
    for b in flipped:
        b.turn = chess.WHITE  # ...and white (behind) to move
    np.testing.assert_array_less(expected_score(flipped)[1:], -0.3)


def test_value_sees_a_free_capture_for_the_side_to_move() -> None:
    # Black is a queen for a rook up, but White to move takes the undefended queen.
    hanging = chess.Board("4k3/p7/8/3q4/8/8/3R4/4K3 w - - 0 1")
    defended = chess.Board("4k3/8/4p3/3q4/8/8/3R4/4K3 w - - 0 1")  # e6 pawn guards d5
    assert _plain_material(hanging) < -300
    s_hanging, s_defended = expected_score([hanging, defended])
    assert s_hanging > -0.3 and s_hanging > s_defended + 0.3
    # without the capture term the material deficit would dominate
    planes, _ = _batch([hanging])
    no_threat = dict(PARAMS, threat=jnp.float32(0.0))
    assert float(EVAL_CP(no_threat, planes)[0]) < float(EVAL_CP(PARAMS, planes)[0]) - 400


def test_colour_symmetry() -> None:
    """A position and its colour-flipped mirror are the same for the side to move."""
    boards = random_positions(16, seed=6) + [chess.Board(f) for f, _ in UP_MATERIAL]
    boards = [chess.Board(b.fen()) for b in boards]  # no history
    mirrored = [b.mirror() for b in boards]
    logits_a, wdl_a = evaluate(boards)
    logits_b, wdl_b = evaluate(mirrored)
    np.testing.assert_allclose(wdl_a, wdl_b, atol=1e-6)
    np.testing.assert_allclose(logits_a, logits_b, atol=1e-5)
    for board, mboard, la, lb in zip(boards, mirrored, logits_a, logits_b, strict=True):
        for move in board.legal_moves:
            mmove = chess.Move(chess.square_mirror(move.from_square),
                               chess.square_mirror(move.to_square), move.promotion)
            assert mboard.is_legal(mmove)
            assert la[move_to_index(board, move)] == pytest.approx(
                lb[move_to_index(mboard, mmove)], abs=1e-5)


def test_wdl_mapping_and_rule50() -> None:
    cp = jnp.array([-600.0, -200.0, 0.0, 200.0, 600.0])
    wdl = np.exp(np.asarray(bi.wdl_log_probs(PARAMS, cp)))
    np.testing.assert_allclose(wdl.sum(-1), 1.0, atol=1e-5)
    assert np.all(np.diff(wdl[:, 0]) > 0) and np.all(np.diff(wdl[:, 2]) < 0)
    np.testing.assert_allclose(wdl[:, 0], wdl[::-1, 2], atol=1e-6)  # W(cp) = L(-cp)
    assert wdl[2, 1] > wdl[3, 1] > wdl[4, 1]  # the draw share shrinks as |eval| grows
    assert 0.3 < wdl[2, 1] < 0.8
    # big leads keep a slope (the search can still tell a queen from a queen and a rook)
    big = np.exp(np.asarray(bi.wdl_log_probs(PARAMS, jnp.array([1000.0, 1500.0, 3000.0]))))
    assert big[1, 0] - big[0, 0] > 0.01 and big[2, 0] > big[1, 0]

    fresh = chess.Board("8/8/4k3/8/8/3RK3/8/8 w - - 0 60")
    stale = chess.Board("8/8/4k3/8/8/3RK3/8/8 w - - 90 60")
    (wf, df, lf), (ws, ds, ls) = evaluate([fresh, stale])[1]
    assert ws - ls < wf - lf and ds > df


# --- policy ------------------------------------------------------------------------------

def _best_of(p: dict[str, float], moves: list[str]) -> float:
    return max(p[m] for m in moves)


def test_free_capture_beats_every_quiet_move() -> None:
    board = chess.Board("rnb1kbnr/pppp1ppp/8/4p3/4P2q/5N2/PPPP1PPP/RNBQKB1R w KQkq - 0 3")
    p = priors(board)
    quiet = [m.uci() for m in board.legal_moves if not board.is_capture(m)]
    assert p["f3h4"] > 0.5 and p["f3h4"] > 10 * _best_of(p, quiet)
    # Same for black to move (mirrored idea): ...Nxh5 wins the queen.
    board = chess.Board("rnbqkb1r/pppp1ppp/5n2/4p2Q/4P3/8/PPPP1PPP/RNB1KBNR b KQkq - 1 3")
    p = priors(board)
    quiet = [m.uci() for m in board.legal_moves if not board.is_capture(m)]
    assert p["f6h5"] > 10 * _best_of(p, quiet)


def test_mvv_lva_and_capture_safety() -> None:
    # Undefended black rook c5 (takeable by the b4 pawn or the d3 knight) and pawn f4;
    # no white piece is attacked, so only the capture terms differ.
    board = chess.Board("4k3/8/8/2r5/1P3p2/3N4/8/4K3 w - - 0 1")
    p = priors(board)
    assert p["b4c5"] > p["d3c5"] > p["d3f4"]  # least valuable attacker first; rook > pawn
    quiet = [m.uci() for m in board.legal_moves if not board.is_capture(m)]
    assert p["d3f4"] > _best_of(p, quiet)
    # Queen takes a pawn defended by a pawn (loses the queen) < a safe quiet move.
    board = chess.Board("4k3/3p4/4p3/8/8/8/8/4QK2 w - - 0 1")
    p = priors(board)
    assert board.is_capture(chess.Move.from_uci("e1e6"))
    assert p["e1e6"] < p["e1e2"] and p["e1e6"] < 0.01


def test_queen_promotion_high_underpromotions_low() -> None:
    for fen, push in (("8/P7/8/8/8/8/k6K/8 w - - 0 1", "a7a8"),
                      ("8/8/8/8/8/K7/p6k/8 b - - 0 1", "a2a1"),
                      ("1r5k/P7/8/8/8/8/7K/8 w - - 0 1", "a7b8")):
        board = chess.Board(fen)
        p = priors(board)
        assert p[push + "q"] == max(p.values()) and p[push + "q"] > 0.5
        for under in "rbn":
            assert p[push + under] < 0.05 * p[push + "q"]
        others = [m for m in p if not m.startswith(push)]
        if others:
            assert p[push + "n"] < max(p[m] for m in others)


def test_checks_get_a_bonus() -> None:
    # Back-rank mate: Rd8+ is the rook's best move.
    board = chess.Board("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1")
    p = priors(board)
    rook_quiet = [m.uci() for m in board.legal_moves
                  if m.from_square == chess.D1 and not board.gives_check(m)]
    assert p["d1d8"] > 2 * _best_of(p, rook_quiet)
    # Knight: Nc7+ (safe check) vs the knight's other moves; black to move mirrored.
    board = chess.Board("r3k3/8/8/1N6/8/8/8/4K3 w - - 0 1")
    p = priors(board)
    checks = [m.uci() for m in board.legal_moves if board.gives_check(m)]
    assert "b5c7" in checks and "b5d6" in checks
    knight_quiet = [m.uci() for m in board.legal_moves
                    if m.from_square == chess.B5 and not board.gives_check(m)]
    assert min(p["b5c7"], p["b5d6"]) > _best_of(p, knight_quiet)
    mirrored = board.mirror()
    pm_ = priors(mirrored)
    assert pm_["b4c2"] == pytest.approx(p["b5c7"], rel=1e-4)


def test_rescue_piece_attacked_by_pawn_and_avoid_pawn_attacks() -> None:
    # The knight on e5 is attacked by the d6 pawn; the knight on b1 is not.
    board = chess.Board("4k3/8/3p4/4N3/8/8/8/1N2K3 w - - 0 1")
    p = priors(board)
    e5 = [m.uci() for m in board.legal_moves if m.from_square == chess.E5]
    b1 = [m.uci() for m in board.legal_moves if m.from_square == chess.B1]
    assert _best_of(p, e5) > 2 * _best_of(p, b1)
    # Moving the queen where a pawn takes it is worse than a safe square.
    board = chess.Board("4k3/8/2p5/8/8/8/8/3QK3 w - - 0 1")
    p = priors(board)
    assert p["d1d5"] < 0.1 * p["d1d4"]  # c6xd5 wins the queen; d4 is safe


def test_castling_preferred_to_king_walk() -> None:
    board = chess.Board("r1bqk2r/pppp1ppp/2n2n2/2b1p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 6 5")
    p = priors(board)
    assert p["e1g1"] > p["e1f1"] and p["e1g1"] > p["e1e2"]
    assert p["e1g1"] == max(p.values())


def test_endgame_mop_up_drives_the_weak_king() -> None:
    # Same material (K+Q vs K): the weak king in a corner is better for the strong side...
    corner = chess.Board("k7/8/8/8/8/8/8/3QK3 w - - 0 1")
    centre = chess.Board("8/8/8/3k4/8/8/8/Q3K3 w - - 0 1")
    near = chess.Board("k7/8/2K5/8/8/8/8/3Q4 w - - 0 1")
    s_corner, s_centre, s_near = expected_score([corner, centre, near])
    assert s_corner > s_centre and s_near > s_corner
    # the mop-up term is what widens the corner/centre gap (in centipawns)
    planes, _ = _batch([corner, centre])
    with_mop = np.asarray(EVAL_CP(PARAMS, planes))[:2]
    no_mop = np.asarray(EVAL_CP(dict(PARAMS, mop_up=jnp.float32(0.0)), planes))[:2]
    assert with_mop[0] - with_mop[1] > no_mop[0] - no_mop[1] + 20
    # ...and bad for the weak side when it is to move.
    weak_to_move = chess.Board("k7/8/8/8/8/8/8/3QK3 b - - 0 1")
    assert expected_score([weak_to_move])[0] < -0.5
    # The strong king's moves toward the weak king are preferred to moves away.
    board = chess.Board("8/8/8/8/2k5/8/8/4K2Q w - - 0 1")
    p = priors(board)
    now = chess.square_manhattan_distance(chess.E1, chess.C4)
    king_moves = {m.uci(): chess.square_manhattan_distance(m.to_square, chess.C4) - now
                  for m in board.legal_moves if m.from_square == chess.E1}
    toward = [m for m, d in king_moves.items() if d < 0]
    away = [m for m, d in king_moves.items() if d > 0]
    assert toward and away
    assert min(p[m] for m in toward) > max(p[m] for m in away)


# --- a small search ----------------------------------------------------------------------

def one_ply_choice(board: chess.Board) -> chess.Move:
    """argmax over legal moves of -E[score] of the child (python-chess terminal checks)."""
    moves = list(board.legal_moves)
    children = []
    for m in moves:
        child = board.copy()
        child.push(m)
        children.append(child)
    scores = expected_score(children)
    values = []
    for child, s in zip(children, scores, strict=True):
        if child.is_checkmate():
            values.append(2.0)
        elif child.is_stalemate() or child.is_insufficient_material():
            values.append(0.0)
        else:
            values.append(-float(s))
    return moves[int(np.argmax(values))]


@pytest.mark.parametrize("fen,best", [
    ("rnb1kbnr/pppp1ppp/8/4p3/4P2q/5N2/PPPP1PPP/RNBQKB1R w KQkq - 0 3", "f3h4"),
    ("r1b1kbnr/pppp1ppp/2n5/4p1q1/4P3/3P4/PPP2PPP/RNBQKBNR w KQkq - 1 4", "c1g5"),
    ("r3k2r/ppp2ppp/2n5/3q4/3P4/2N5/PPP2PPP/R2QKB1R w KQkq - 0 1", "c3d5"),
    ("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1", "d1d8"),
    ("8/P7/8/8/8/8/k6K/8 w - - 0 1", "a7a8q"),
])
def test_one_ply_lookahead_finds_material(fen: str, best: str) -> None:
    assert one_ply_choice(chess.Board(fen)).uci() == best


def test_one_ply_player_beats_random_mover() -> None:
    """The value with a 1-ply lookahead wins material against a random mover."""
    rng = random.Random(7)
    margins = []
    for game in range(2):
        board = chess.Board()
        me = chess.WHITE if game == 0 else chess.BLACK
        for _ in range(40):
            if board.is_game_over():
                break
            if board.turn == me:
                board.push(one_ply_choice(board))
            else:
                board.push(rng.choice(list(board.legal_moves)))
        values = {chess.PAWN: 1, chess.KNIGHT: 3, chess.BISHOP: 3, chess.ROOK: 5,
                  chess.QUEEN: 9, chess.KING: 0}
        margin = sum(values[p.piece_type] * (1 if p.color == me else -1)
                     for p in board.piece_map().values())
        margins.append(100 if board.is_checkmate() and board.turn != me else margin)
    assert min(margins) >= 5, margins


def test_mcts_search_finds_tactics() -> None:
    """64 simulations find the mate or the material win by visits (the most visited
    move, not only the best-move tie-break), and a quiet position's reply hangs nothing."""
    # test_search_properties' built-in shapes (6 trees of 65 nodes): no compile of its own
    searcher = Searcher(bi.builtin_model(), max_nodes=65, num_workers=0)
    puzzles = [
        ("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1", "d1d8"),
        ("r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4", "h5f7"),
        ("r3k2r/ppp2ppp/2n5/3q4/3P4/2N5/PPP2PPP/R2QKB1R w KQkq - 0 1", "c3d5"),
        ("rnbqkbnr/pppp1ppp/8/4p3/4P3/5Q2/PPPP1PPP/RNB1KBNR b KQkq - 1 2", None),
    ]
    padding = [chess.Board(), chess.Board(puzzles[0][0])]
    results = searcher.search([chess.Board(f) for f, _ in puzzles] + padding,
                              num_simulations=64)[:len(puzzles)]
    for (fen, best), res in zip(puzzles, results, strict=True):
        if best is not None:
            assert res.best_move.uci() == best, fen
            assert res.visits[res.best_index] == res.visits.max(), (fen, res.visits)
    # the quiet position: the reply leaves no undefended black piece for white to take
    board = chess.Board(puzzles[-1][0])
    board.push(results[-1].best_move)
    reply_gain = max((SEE.get(board.piece_type_at(m.to_square), 0.0)
                      for m in board.legal_moves if board.is_capture(m)
                      and not board.attackers(chess.BLACK, m.to_square)), default=0.0)
    assert reply_gain < 1.0
