"""configs/openings_imbalance.fen (the training demo's self-play openings): legal, playable
start positions with material imbalances, exactly what its seeded generator writes."""

from __future__ import annotations

from pathlib import Path

import chess
from repo_scripts import load_script

REPO = Path(__file__).resolve().parents[1]
FILE = REPO / "configs" / "openings_imbalance.fen"
POINTS = {chess.PAWN: 1, chess.KNIGHT: 3, chess.BISHOP: 3, chess.ROOK: 5, chess.QUEEN: 9}


def _fens() -> list[str]:
    return [ln for ln in FILE.read_text().splitlines() if ln and not ln.startswith("#")]


def test_positions_are_legal_and_playable():
    fens = _fens()
    assert len(fens) == len(set(fens)) == 512
    for fen in fens:
        board = chess.Board(fen)
        assert board.is_valid(), fen
        assert not board.is_check() and not board.is_game_over(claim_draw=True), fen
        for color in chess.COLORS:  # 0-3 pieces removed from 15, then at most 3 captures
            others = sum(len(board.pieces(p, color)) for p in POINTS)
            assert 9 <= others <= 15, fen
        assert board.fen() == fen  # python-chess normal form: castling rights cleaned


def test_positions_are_imbalanced():
    """Most positions have a material difference (the point of the file)."""
    def balance(board: chess.Board) -> int:
        return sum(v * (len(board.pieces(p, chess.WHITE)) - len(board.pieces(p, chess.BLACK)))
                   for p, v in POINTS.items())
    diffs = [abs(balance(chess.Board(f))) for f in _fens()]
    assert sum(d >= 3 for d in diffs) > len(diffs) // 3


def test_file_is_what_the_seeded_script_writes():
    header = FILE.read_text().splitlines()[1]
    assert "--count 512 --seed 15" in header
    assert load_script("scripts/make_imbalance_openings.py").imbalance_fens(512, 15) == _fens()
