"""Positions at the edge: FEN/EPD strictness, counters, variants, move lists, EPD files.

python-chess is the reference for what a FEN means; the checks here are that nothing is
read with another meaning than python-chess's full-FEN reading, and that every refusal
is a ``PositionError`` that quotes the input and names its source.
"""

from __future__ import annotations

import chess
import chess.variant
import pytest

from zerochess.errors import InputFileError, PositionError, UserError
from zerochess.positions import (
    MAX_COUNTER,
    as_board,
    check_board,
    parse_fen,
    parse_position,
    read_epd,
)

KINGS = "k7/8/8/8/8/8/8/K7"


@pytest.mark.parametrize("fen", [
    chess.STARTING_FEN,
    f"{KINGS} w - - 7 30",
    f"{KINGS} b - -",  # EPD position fields only: clocks 0 and 1 (EPD's meaning)
    "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1",
    "rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 3",
])
def test_full_fens_mean_what_python_chess_reads(fen):
    board = parse_fen(fen)
    ref = chess.Board(fen)
    assert board.fen() == ref.fen() and not board.chess960


def test_five_field_fen_keeps_its_halfmove_clock():
    board = parse_fen(f"{KINGS} w - - 37")
    assert board.halfmove_clock == 37 and board.fullmove_number == 1


@pytest.mark.parametrize("fen, needle", [
    ("", "empty FEN"),
    ("   ", "empty FEN"),
    (KINGS, ": 1 field(s)"),
    (f"{KINGS} w", ": 2 field(s)"),
    (f"{KINGS} w - - junk", "the halfmove clock 'junk' is not a number"),
    (f"{KINGS} w - - 5 x", "the fullmove number 'x' is not a number"),
    (f"{KINGS} w - - +5 1", "the halfmove clock '+5' is not"),
    (f"{KINGS} w - - \uff15 1", "the halfmove clock"),  # a fullwidth digit
    (f"{KINGS} w - - 0 1 junk", "trailing text 'junk'"),
    (f"{KINGS} w - - 0 1; id x;", "invalid FEN"),  # EPD operations start after 4 fields
    ("8/8/8/8/8/8/8/8 w - - 0 1", "no white king"),
    ("k7/8/8/8/8/8/8/K6Q w - - 0 1", "opposite check"),
    ("kP6/8/8/8/8/8/8/K7 w - - 0 1", "pawns on backrank"),
    ("k7/8/8/8/8/8/8/KQQQQQQ1 w - - 0 1", None),  # legal: 6 queens
    (f"{KINGS} w - - {MAX_COUNTER + 1} 1", "halfmove clock"),
    (f"{KINGS} w - - 0 {MAX_COUNTER + 1}", "fullmove number"),
    (f"{KINGS} w - - 99999999999999999999999 1", "out of range"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - -1 1", "halfmove clock '-1'"),
])
def test_bad_fens_are_position_errors(fen, needle):
    if needle is None:
        assert parse_fen(fen).is_valid()
        return
    with pytest.raises(PositionError) as err:
        parse_fen(fen, source="here")
    assert needle in str(err.value) and str(err.value).startswith("here: ")
    assert isinstance(err.value, UserError) and isinstance(err.value, ValueError)


def test_large_counters_are_exact():
    board = parse_fen(f"{KINGS} w - - 32767 1000000")
    assert (board.halfmove_clock, board.fullmove_number) == (32767, 1_000_000)
    board = parse_fen(f"{KINGS} w - - {MAX_COUNTER} {MAX_COUNTER}")
    assert board.halfmove_clock == MAX_COUNTER


def test_long_inputs_are_quoted_shortly():
    with pytest.raises(PositionError) as err:
        parse_fen("x" * 5000)
    assert len(str(err.value)) < 400 and "(5,000 characters)" in str(err.value)


@pytest.mark.parametrize("bad", [None, 5, b"startpos", ["startpos"]])
def test_non_string_fens(bad):
    with pytest.raises(PositionError, match="must be a string"):
        parse_fen(bad)


def test_epd_operations_need_semicolons():
    board = parse_fen(f'{KINGS} w - - hmvc 12; fmvn 40; id "x";')
    assert (board.halfmove_clock, board.fullmove_number) == (12, 40)


def test_moves():
    board = parse_position("startpos", "e2e4 e7e5")  # one string, as after UCI "moves"
    assert [m.uci() for m in board.move_stack] == ["e2e4", "e7e5"]
    assert parse_position("startpos", None).fen() == chess.STARTING_FEN
    castle = parse_position("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", ["e1h1"])  # king-to-rook
    assert castle.piece_at(chess.G1) == chess.Piece(chess.KING, chess.WHITE)
    for moves, needle in ((["e2e5"], "illegal move 'e2e5' (move 1)"),
                          (["zz"], "invalid move 'zz'"),
                          (["0000"], "null move"),
                          (["e2e4", 5], "move 2 must be a UCI string"),
                          (7, "moves must be a list")):
        with pytest.raises(PositionError, match=needle.replace("(", r"\(").replace(")", r"\)")):
            parse_position("startpos", moves)
    mated = parse_position("startpos", "f2f3 e7e5 g2g4 d8h4")
    with pytest.raises(PositionError, match="illegal move"):
        parse_position(mated.fen(), ["a2a3"])


def test_variant_boards_are_refused():
    for board in (chess.variant.CrazyhouseBoard(), chess.variant.AtomicBoard(),
                  chess.variant.ThreeCheckBoard(), chess.variant.AntichessBoard(),
                  chess.variant.HordeBoard(), chess.variant.RacingKingsBoard()):
        with pytest.raises(PositionError, match="not supported"):
            check_board(board)
        with pytest.raises(PositionError, match="not supported"):
            as_board(board)


def test_boards_are_checked_with_their_game():
    board = chess.Board()
    board.push(chess.Move.from_uci("e2e5"))  # push does not check legality
    with pytest.raises(PositionError, match="illegal move 'e2e5' \\(ply 1\\)"):
        as_board(board)
    board = chess.Board()
    board.halfmove_clock = -3
    with pytest.raises(PositionError, match="halfmove clock -3"):
        as_board(board)
    board = chess.Board(None)
    with pytest.raises(PositionError, match="no white king"):
        as_board(board)
    with pytest.raises(PositionError, match="cannot read a position"):
        as_board(("startpos", [], 3))


def test_epd_file_errors_name_every_bad_line(tmp_path):
    path = tmp_path / "p.epd"
    path.write_text(f"{KINGS} w - - 0 1\n# comment\n\nnot a fen\n{KINGS} w - - 40000 1\n"
                    f"{KINGS} w - - 5\n{KINGS} w - - 0 1 junk\n8/8/8/8/8/8/8/8 w - -\n")
    with pytest.raises(PositionError) as err:
        read_epd(path)
    text = str(err.value)
    assert "3 bad line(s)" in text
    assert f"{path}:4:" in text and f"{path}:7:" in text and f"{path}:8:" in text
    assert f"{path}:5:" not in text and f"{path}:6:" not in text  # good lines
    good = tmp_path / "q.epd"
    good.write_text(f"{KINGS} w - - 40000 1\n{KINGS} w - - 5\n{KINGS} b - - id \"b\";\n")
    items = read_epd(good)
    assert [i for i, _ in items] == ["1", "2", "b"]
    assert [b.halfmove_clock for _, b in items] == [40000, 5, 0]


def test_unreadable_epd_files(tmp_path):
    binary = tmp_path / "b.epd"
    binary.write_bytes(b"\x1f\x8b\x08\x00\xff\xfe")
    cases = [(tmp_path / "missing.epd", "not found"), (tmp_path, "is a folder"),
             (binary, "not UTF-8 text (byte 0x8b at offset 1, line 1)")]
    empty = tmp_path / "e.epd"
    empty.write_text("# nothing\n\n")
    for path, needle in cases:
        with pytest.raises(InputFileError, match=needle.replace("(", r"\(").replace(")", r"\)")):
            read_epd(path)
    with pytest.raises(PositionError, match="holds no positions"):
        read_epd(empty)
