"""Hypothesis strategies for hostile inputs, shared by ``test_fuzz.py`` and the protocol
engines' harnesses (UCI, analysis): positions and FEN mutations, move lists, setting
values, YAML config documents, damaged files. Each strategy mixes well-formed inputs
(which must give correct results) with damaged ones (which must give clean errors), so a
property "clean error or correct result" exercises both sides.

A protocol harness combines them with its own syntax, e.g.::

    @given(st.builds(lambda fen, moves: f"position fen {fen} moves {' '.join(moves)}",
                     fen_texts(), uci_move_lists()))
"""

from __future__ import annotations

import random
import string

import chess
from hypothesis import strategies as st

from hostile import EPDS, FENS, HOSTILE_NUMBERS, MOVES

PIECE_CHARS = "pnbrqkPNBRQK12345678/"
FEN_CHARS = PIECE_CHARS + " -wbKQkqabcdefghABCDEFGH0123456789;\"x+#\t\n\x00\u00e9\uff15"


def random_board(seed: int, plies: int, chess960: bool = False) -> chess.Board:
    """A position after ``plies`` random legal moves (with its move stack), seeded."""
    rng = random.Random(seed)
    board = chess.Board.from_chess960_pos(rng.randrange(960)) if chess960 else chess.Board()
    for _ in range(plies):
        moves = list(board.legal_moves)
        if not moves:
            break
        board.push(rng.choice(moves))
    return board


@st.composite
def boards(draw, max_plies: int = 120) -> chess.Board:
    """Legal positions with history: standard or chess960 games, sometimes with large
    counters (both clocks up to 2**24)."""
    board = random_board(draw(st.integers(0, 2**32)), draw(st.integers(0, max_plies)),
                         chess960=draw(st.booleans()))
    if draw(st.integers(0, 4)) == 0:
        root = board.root()
        root.halfmove_clock = draw(st.sampled_from([0, 99, 100, 150, 32767, 32768, 2**24 - 500]))
        root.fullmove_number = draw(st.sampled_from([1, 32767, 32768, 1_000_000, 2**24 - 500]))
        for move in board.move_stack:
            root.push(move)
        board = root
    return board


def _mutate(text: str, rng: random.Random) -> str:
    ops = rng.randrange(1, 4)
    chars = list(text)
    for _ in range(ops):
        kind = rng.randrange(7)
        pos = rng.randrange(len(chars) + 1)
        if kind == 0 and chars:  # replace a character
            chars[min(pos, len(chars) - 1)] = rng.choice(FEN_CHARS)
        elif kind == 1:  # insert
            chars.insert(pos, rng.choice(FEN_CHARS))
        elif kind == 2 and chars:  # delete
            del chars[min(pos, len(chars) - 1)]
        elif kind == 3:  # replace a field
            fields = "".join(chars).split(" ")
            i = rng.randrange(len(fields))
            fields[i] = rng.choice(["-", "", "KQkq", "GBgb", "Ah", "e3", "e6", "z9", "0", "-1",
                                    "32767", "99999999999", "1e3", "w", "b", "x", "8/8"])
            chars = list(" ".join(fields))
        elif kind == 4:  # append or drop fields
            chars = list("".join(chars) + rng.choice([" 0", " 0 1", " junk", ";", " id x;", "  "]))
        elif kind == 5:  # swap two ranks
            fields = "".join(chars).split(" ")
            ranks = fields[0].split("/")
            if len(ranks) > 1:
                a, b = rng.randrange(len(ranks)), rng.randrange(len(ranks))
                ranks[a], ranks[b] = ranks[b], ranks[a]
                fields[0] = "/".join(ranks)
            chars = list(" ".join(fields))
        else:  # change a piece
            idx = [i for i, c in enumerate(chars) if c in "pnbrqkPNBRQK"]
            if idx:
                chars[rng.choice(idx)] = rng.choice("pnbrqkPNBRQK")
    return "".join(chars)


@st.composite
def fen_texts(draw) -> str:
    """FEN-like strings: real FENs (standard and chess960), mutated ones, the corpus."""
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return draw(st.sampled_from([f for f, _ in FENS] + [e for e, _ in EPDS]))
    if kind == 1:
        return draw(st.text(alphabet=FEN_CHARS, max_size=90))
    board = draw(boards())
    fen = board.fen() if not board.chess960 or draw(st.booleans()) else board.fen(shredder=True)
    if kind <= 3:
        return fen
    return _mutate(fen, random.Random(draw(st.integers(0, 2**32))))


@st.composite
def uci_move_lists(draw) -> tuple[chess.Board, object]:
    """(start board, moves): legal lines from the board, with a hostile tail sometimes."""
    board = draw(boards(max_plies=40))
    start = board.copy(stack=False)
    rng = random.Random(draw(st.integers(0, 2**32)))
    moves: list[object] = []
    line = start.copy()
    for _ in range(draw(st.integers(0, 12))):
        legal = list(line.legal_moves)
        if not legal:
            break
        move = rng.choice(legal)
        moves.append(line.uci(move))  # chess960 castling king-to-rook, else e1g1
        line.push(move)
    tail = draw(st.integers(0, 3))
    if tail == 1:
        moves.append(draw(st.sampled_from(
            ["e2e5", "0000", "a1a1", "e7e8", "e1g1", "h1h8q", "", "xx", "e2e4e", "A2A4"])))
    elif tail == 2:
        moves.append(draw(st.text(alphabet=string.ascii_lowercase + "12345678qrbn0",
                                  max_size=6)))
    elif tail == 3 and draw(st.booleans()):
        return start, draw(st.sampled_from([m for m, _ in MOVES]))
    return start, moves


def setting_values(low: int = -5, high: int = 2**40) -> st.SearchStrategy:
    """Values for any numeric setting: plausible numbers and the hostile ones."""
    return st.one_of(
        st.sampled_from(HOSTILE_NUMBERS),
        st.integers(low, high),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=8),
        st.booleans(),
        st.none(),
    )


SEARCH_FIELDS = ["cpuct", "cpuct_base", "cpuct_factor", "cpuct_root", "cpuct_base_root",
                 "cpuct_factor_root", "fpu_value", "fpu_absolute", "fpu_value_root",
                 "fpu_absolute_root", "policy_temperature", "draw_score", "n_scl",
                 "dirichlet_alpha", "dirichlet_epsilon", "selection", "pb_c_init", "pb_c_base"]


# values lc0 (and SearchConfig) accept for each field
VALID_SEARCH_VALUES = {
    "cpuct": st.floats(0, 100), "cpuct_base": st.floats(1, 1e9), "cpuct_factor": st.floats(0, 1000),
    "cpuct_root": st.floats(0, 100), "cpuct_base_root": st.floats(1, 1e9),
    "cpuct_factor_root": st.floats(0, 1000), "fpu_value": st.floats(-100, 100),
    "fpu_absolute": st.booleans(), "fpu_value_root": st.floats(-100, 100),
    "fpu_absolute_root": st.booleans(), "policy_temperature": st.floats(0.1, 10),
    "draw_score": st.floats(-1, 1), "n_scl": st.one_of(st.none(), st.integers(1, 2**31 - 1)),
    "dirichlet_alpha": st.floats(1e-6, 1e7), "dirichlet_epsilon": st.floats(0, 1),
    "selection": st.sampled_from(["puct", "alphazero"]), "pb_c_init": st.floats(0, 1e9),
    "pb_c_base": st.floats(1e-3, 1e9),
}


@st.composite
def search_config_values(draw) -> dict:
    """A mapping of SearchConfig fields to values: valid ones (lc0's ranges) mixed with
    hostile ones and the odd unknown key."""
    out = {}
    for key in draw(st.lists(st.one_of(st.sampled_from(SEARCH_FIELDS),
                                       st.sampled_from(["cpuctt", "n", ""])), max_size=4)):
        valid = key in VALID_SEARCH_VALUES and draw(st.integers(0, 2)) > 0
        out[key] = draw(VALID_SEARCH_VALUES[key] if valid else setting_values())
    return out


_RUN_KEYS = ["name", "model", "seed", "games", "batch_size", "max_plies", "pgn_comments",
             "shrink_tail", "openings", "alternate_colors", "player", "white", "black",
             "bogus"]


def yaml_values(depth: int = 2) -> st.SearchStrategy:
    leaves = st.one_of(setting_values(), st.text(max_size=12))
    if depth == 0:
        return leaves
    return st.one_of(leaves, st.lists(yaml_values(depth - 1), max_size=3),
                     st.dictionaries(st.sampled_from(
                         ["nodes", "search", "temperature", "engine", "type", "fens", "file",
                          "cpuct", "n_scl", "name", "kind", "x"]), yaml_values(depth - 1),
                         max_size=3))


@st.composite
def selfplay_documents(draw) -> dict:
    """Self-play config mappings: mostly valid keys with hostile values."""
    doc = {"games": 2, "player": {"nodes": 4}}
    for key in draw(st.lists(st.sampled_from(_RUN_KEYS), max_size=4)):
        doc[key] = draw(yaml_values())
    if draw(st.booleans()):
        doc["player"] = {"nodes": draw(setting_values()),
                         "search": draw(search_config_values())}
    return doc


@st.composite
def byte_damage(draw, data: bytes) -> bytes:
    """``data`` truncated, extended, with flipped or overwritten bytes."""
    kind = draw(st.integers(0, 3))
    n = len(data)
    if kind == 0:
        return data[:draw(st.integers(0, max(n - 1, 0)))]
    if kind == 1:
        return data + draw(st.binary(min_size=1, max_size=64))
    buf = bytearray(data)
    for _ in range(draw(st.integers(1, 4))):
        pos = draw(st.integers(0, n - 1))
        buf[pos] = draw(st.integers(0, 255)) if kind == 2 else buf[pos] ^ (1 << draw(
            st.integers(0, 7)))
    return bytes(buf)


# --- protocol lines (for the UCI / analysis engines' harnesses) ----------------------------

@st.composite
def uci_position_commands(draw) -> str:
    """``position`` commands: FENs (good and mutated) or startpos, with move lists."""
    start, moves = draw(uci_move_lists())
    listed = moves.split() if isinstance(moves, str) else moves
    words = [str(m) for m in (listed if isinstance(listed, (list, tuple)) else [listed])]
    if draw(st.booleans()):
        head = "position startpos"
    else:
        head = f"position fen {draw(st.one_of(st.just(start.fen()), fen_texts()))}"
    return f"{head} moves {' '.join(words)}" if words else head


def uci_go_commands() -> st.SearchStrategy:
    """``go`` commands with hostile limits."""
    keys = ["nodes", "depth", "movetime", "wtime", "btime", "winc", "binc", "movestogo"]
    values = st.one_of(st.integers(-5, 2**65).map(str), st.sampled_from(
        ["", "nan", "inf", "-0", "1e12", "0x10", "abc", "9" * 40]))
    return st.builds(lambda pairs, extra: " ".join(
        ["go", *[f"{k} {v}" for k, v in pairs], *extra]),
        st.lists(st.tuples(st.sampled_from(keys), values), max_size=3),
        st.lists(st.sampled_from(["infinite", "ponder", "searchmoves e2e4", "mate 3"]),
                 max_size=2))


__all__ = ["boards", "byte_damage", "fen_texts", "random_board", "search_config_values",
           "selfplay_documents", "setting_values", "uci_go_commands", "uci_move_lists",
           "uci_position_commands", "yaml_values"]


def seeded_positions(count: int, seed: int, max_plies: int = 70) -> list[chess.Board]:
    """``count`` ongoing positions of the references' tests: the start, a back-rank mate in
    one, a lone king against a queen, then random games of 4 to ``max_plies - 1`` plies
    (seeded; the boards keep their move stacks)."""
    rng = random.Random(seed)
    out = [chess.Board(), chess.Board("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1"),
           chess.Board("8/8/8/8/8/5k2/7q/5K2 w - - 0 1")]
    while len(out) < count:
        board = chess.Board()
        for _ in range(rng.randrange(4, max_plies)):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
        if not board.is_game_over(claim_draw=True):
            out.append(board)
    return out
