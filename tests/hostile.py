"""A corpus of hand-written hostile inputs, shared by the fuzz tests (``test_fuzz.py``),
the focused tests, and the protocol engines' harnesses (UCI, analysis) when they land.

Each entry is plain data (no zerochess import needed to read it), so a protocol test can
wrap the same values in its own syntax, e.g. ``f"position fen {fen}"`` or
``{"id": "q", "initialStones": ...}``; ``check_clean`` is the shared property: a call
either returns (the caller checks the result) or raises a ``UserError`` whose message is
one line that quotes the input; anything else (a raw ``TypeError``, a JAX traceback) is a
failure.
"""

from __future__ import annotations

import collections
import gzip
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import chess

from zerochess.errors import UserError

KINGS = "k7/8/8/8/8/8/8/K7"

# --- positions: (text, what a correct reader does) ----------------------------------------
# "ok" = a legal position that must be read with python-chess's full-FEN meaning;
# "error" = must be refused with a PositionError.
FENS: list[tuple[str, str]] = [
    ("startpos", "ok"),
    (chess.STARTING_FEN, "ok"),
    (f"{KINGS} w - - 32767 1", "ok"),  # int16 overflow before issue 9
    (f"{KINGS} w - - 0 1000000", "ok"),  # OverflowError before issue 9
    (f"{KINGS} w - - 16777216 16777216", "ok"),  # the largest counters held exactly
    (f"{KINGS} w - - 16777217 1", "error"),
    (f"{KINGS} w - - 5", "ok"),  # 5 fields: a FEN with a halfmove clock, not an EPD
    (f"{KINGS} w - -", "ok"),  # EPD position fields: clocks 0 1
    ("1r2k1r1/8/8/8/8/8/8/1R2K1R1 w GBgb - 0 1", "ok"),  # chess960 (Shredder-FEN)
    ("1r2k1r1/8/8/8/8/8/8/1R2K1R1 w KQkq - 0 1", "ok"),  # chess960 (X-FEN)
    ("rkr5/8/8/8/8/8/8/RKR5 w KQkq - 0 1", "ok"),  # chess960, king between its rooks
    ("1r2k1r1/8/8/8/8/8/8/1R2K1R1 w Ag - 0 1", "error"),  # no rook on a1
    ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "ok"),
    ("", "error"),
    ("   \t ", "error"),
    (KINGS, "error"),  # 1 field: side to move unknown
    (f"{KINGS} w", "error"),
    (f"{KINGS} w - - junk", "error"),
    (f"{KINGS} w - - 0 1 junk", "error"),
    (f"{KINGS} w - - 0 1 0 1", "error"),
    (f"{KINGS} w - - -1 1", "error"),
    (f"{KINGS} w - - 0 -5", "error"),
    (f"{KINGS} w - - 1e3 1", "error"),
    (f"{KINGS} w - - 0x10 1", "error"),
    (f"{KINGS} w - - \uff15 1", "error"),  # fullwidth digit
    (f"{KINGS} w - - 99999999999999999999999999 1", "error"),
    (f"{KINGS} x - - 0 1", "error"),
    (f"{KINGS} w KQkq - 0 1", "error"),  # castling rights without rooks
    (f"{KINGS} w - e3 0 1", "error"),  # en passant square without a pawn
    ("8/8/8/8/8/8/8/8 w - - 0 1", "error"),  # no kings
    ("kk6/8/8/8/8/8/8/K7 w - - 0 1", "error"),  # two black kings
    ("k7/8/8/8/8/8/8/K6Q w - - 0 1", "error"),  # side to move can capture the king
    ("kP6/8/8/8/8/8/8/K7 w - - 0 1", "error"),  # pawn on the back rank
    ("k7/pppppppp/pppppppp/8/8/8/8/K7 w - - 0 1", "error"),  # too many pawns
    ("k7/8/8/8/8/8/8/K7/8 w - - 0 1", "error"),  # 9 ranks
    ("k8/8/8/8/8/8/8/K7 w - - 0 1", "error"),  # 9 files
    ("kx6/8/8/8/8/8/8/K7 w - - 0 1", "error"),
    ("k7/8/8/8/8/8/8/K7 w - - 0 1\x00", "error"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[] w KQkq - 0 1", "error"),  # crazyhouse
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 3+3 0 1", "error"),  # 3-check
    ("x" * 10_000, "error"),
]

# EPD lines (with operations after a ';')
EPDS: list[tuple[str, str]] = [
    (f'{KINGS} w - - id "a";', "ok"),
    (f"{KINGS} w - - hmvc 12; fmvn 40;", "ok"),
    (f"{KINGS} w - - bm Kb2;", "ok"),
    (f"{KINGS} w - - hmvc -5;", "error"),
    (f"{KINGS} w - - hmvc 99999999999;", "error"),
    (f"{KINGS} w - - 0 1; id x;", "error"),
    (f"{KINGS} w - - hmvc x;", "error"),
    ('8/8/8/8/8/8/8/8 w - - id "nokings";', "error"),
]

# UCI move lists played from the start position (None: the list is legal)
MOVES: list[tuple[Any, str]] = [
    (["e2e4", "e7e5", "g1f3"], "ok"),
    ("e2e4 e7e5", "ok"),  # one string: UCI's "position ... moves" form
    ([], "ok"),
    (None, "ok"),
    (["e2e5"], "error"),
    (["e7e5"], "error"),  # the wrong side
    (["0000"], "error"),  # null move
    (["e2e4", "e2e4"], "error"),
    (["e2"], "error"),
    (["e2e4q"], "error"),
    (["e1g1"], "error"),
    (["E2E4"], "error"),
    ([""], "error"),
    ([5], "error"),
    ([None], "error"),
    (5, "error"),
    ({"e2e4": 1}, "error"),
    (["f2f3", "e7e5", "g2g4", "d8h4", "a2a3"], "error"),  # a move after mate
    (["e2e4"] * 1000, "error"),
]

# --- settings: values for any integer / real / flag / seed setting ------------------------
HOSTILE_NUMBERS: list[Any] = [
    None, True, False, "3", "", "1e6", "nan", b"3", [3], {"a": 1}, (1, 2), object(),
    -1, 0, 1, 16.5, -0.0, 2**31, 2**32 + 4, 2**63, 2**70, -(2**70), 10**12,
    math.inf, -math.inf, math.nan, 1e-30, 1e30, 1e308,
]

# search settings (SearchConfig field -> values that must be refused)
SEARCH_CONFIG_BAD: dict[str, list[Any]] = {
    "cpuct": [-1, 101, math.nan, math.inf, "1", None, True],
    "cpuct_base": [0, -5, 2e9, math.inf],
    "cpuct_factor": [-0.1, 1001],
    "fpu_value": [math.nan, 1e30, -101],
    "fpu_absolute": ["yes", 1, None],
    "policy_temperature": [0, 0.05, math.inf, 11, -1, math.nan],
    "draw_score": [math.nan, 1.5, -2],
    "n_scl": [0, -1, 5.5, True, "5", math.inf, 2**31],
    "dirichlet_alpha": [-1, math.nan, math.inf, 2e7],
    "dirichlet_epsilon": [-0.1, 1.1, math.nan],
    "selection": [None, "PUCT", "mcts", 3],
    "pb_c_init": [-1, math.nan],
    "pb_c_base": [0, -1, math.inf],
}

# --- YAML configs: (document, expected) --------------------------------------------------
SELFPLAY_CONFIGS: list[tuple[str, str]] = [
    ("games: 2\nplayer: {nodes: 4}\n", "ok"),
    ("games: 2\nseed: 1180591620717411303424\nplayer: {nodes: 4}\n", "error"),  # 2**70
    ("games: 2\nseed: '3'\nplayer: {nodes: 4}\n", "error"),
    ("games: 2\nseed: 1.5\nplayer: {nodes: 4}\n", "error"),
    ("games: 2\nseed: -1\nplayer: {nodes: 4}\n", "error"),
    ("games: 1e999\nplayer: {nodes: 4}\n", "error"),
    ("games: .nan\nplayer: {nodes: 4}\n", "error"),
    ("games: 100000000000\nplayer: {nodes: 4}\n", "error"),
    ("games: 2\nbatch_size: 1000000000\nplayer: {nodes: 4}\n", "error"),
    ("games: 2\nplayer: {nodes: 1000000000000}\n", "error"),
    ("games: 2\nplayer: {nodes: true}\n", "error"),
    ("games: 2\nmodel: null\nplayer: {nodes: 4}\n", "error"),
    ("games: 2\nmodel: 5\nplayer: {nodes: 4}\n", "error"),
    ("games: 2\nname: null\nplayer: {nodes: 4}\n", "error"),
    ("games: 2\nopenings: [1, 2]\nplayer: {nodes: 4}\n", "error"),
    ("games: 2\nopenings: {type: fens, fens: '8/8'}\nplayer: {nodes: 4}\n", "error"),
    ("games: 2\nplayer: {temperature: .nan}\n", "error"),
    ("games: 2\nplayer: {temperature: {temperature: x}}\n", "error"),
    ("games: 2\nplayer: {search: {cpuct: abc}}\n", "error"),
    ("games: 2\nplayer: {search: {policy_temperature: .inf}}\n", "error"),
    ("games: 2\nplayer: {search: [1, 2]}\n", "error"),
    ("games: 2\nplayer: [1]\n", "error"),
    ("games: 2\nplayer: {nodes: 4}\nmax_plies: 0\n", "error"),
    ("games: 2\nplayer: {nodes: 4}\nunknown_key: 1\n", "error"),
    ("- a\n- b\n", "error"),
    ("games: [\n", "error"),
    ("\x00\x01\x02", "error"),
    ("", "error"),  # no player
]

# --- command lines: (argv, a phrase of the one-line error); each exits 2 -----------------
CLI_CASES: list[tuple[list[str], str]] = [
    (["analyse", ""], "empty FEN"),
    (["analyse", f"{KINGS} w - - 5"], None),  # valid (a search), listed for protocol reuse
    (["analyse", f"{KINGS} w - - 0 1 junk"], "trailing text"),
    (["analyse", f"{KINGS} w - - 99999999 1"], "halfmove clock"),
    (["analyse", "startpos", "--visits", "0"], "--visits must be >= 1"),
    (["analyse", "startpos", "--visits", "99999999999"], "visits must be <="),
    (["analyse", "startpos", "--visits", "2147483646"], "more than"),  # memory, before alloc
    (["analyse", "startpos", "--seed", "-1"], "seed must be in"),
    (["analyse", "startpos", "--seed", str(2**70)], "seed must be in"),
    (["analyse", "startpos", "--workers", "-1"], "workers must be >= 0"),
    (["analyse", "startpos", "--workers", "100000"], "workers must be <="),
    (["analyse", "startpos", "--contempt-limit", "3"], "needs --search contempt"),
    (["analyse", "startpos", "--search", "contempt", "--contempt-limit", "0"],
     "contempt limit must be >= 1"),
    (["analyse", "startpos", "--moves", "e2e4", "0000"], "null move"),
    (["analyse", "--epd", "/"], "is a folder"),
    (["analyse", "--epd", "/dev/null"], "holds no positions"),
    (["analyse", "startpos", "--model", "/"], "unknown model spec"),
    (["analyse", "startpos", "--model", "nosuch.pb.gz"], "not found"),
    (["analyse", "startpos", "--model", "resnet:0x0"], "blocks must be in"),
    (["selfplay", "--config", "/"], "not found"),
    (["selfplay", "--config", "/dev/null"], "not found"),
    (["match", "--config", "/nonexistent.yaml"], "not found"),
    (["experiment", "contempt_wdl", "--scale", "huge"], "unknown scale"),
    (["bench", "--batch", "0"], "--batch must be >= 1"),
    (["bench", "--sims", "-3"], "--sims must be >= 1"),
    (["experiment", "contempt_wdl", "--seed", str(2**64)], "seed must be in"),
    (["analysis", "--model", "/"], "unknown model spec"),
    (["analysis", "--model", "nosuch.pb.gz"], "not found"),
    (["analysis", "--max-visits", "0"], "max_visits must be"),
    (["analysis", "--slots", "0"], "slots must be"),
    (["analysis", "--slots", "100000000"], "such trees fit"),  # before allocating
    (["analysis", "--max-nodes", "2147483646"], "max_nodes must be at most"),
    (["analysis", "--max-nodes", "3", "--max-visits", "10"], "must be >= max_visits"),
    (["analysis", "--config", "/nonexistent.yaml"], "not found"),
]
CLI_CASES = [c for c in CLI_CASES if c[1] is not None]

# --- damaged network files ----------------------------------------------------------------


def network_bytes(seed: int = 0) -> bytes:
    """Raw protobuf of a small valid lc0 network (1 block, 8 filters, SE, conv policy, WDL)."""
    from zerochess.neural.resnet import SEResNet, init_params

    from lc0_reference import lc0_net_bytes

    params = init_params(SEResNet(**NETWORK_CONFIG), seed, bias_scale=0.1)
    return lc0_net_bytes(NETWORK_CONFIG, params)


NETWORK_CONFIG = dict(blocks=1, filters=8, se_channels=2, policy="conv", policy_channels=80,
                      value="wdl", value_channels=32, value_hidden=16, moves_left=False,
                      activation="relu")


def damaged_networks(raw: bytes) -> dict[str, tuple[str, bytes | None]]:
    """name -> (file name, bytes; None = make a folder of that name): each must be
    refused with a ``ModelFileError`` naming the file."""
    gz = gzip.compress(raw, mtime=0)
    rng = _Rng(7)
    flipped = bytearray(gz)
    flipped[len(gz) // 2] ^= 0xFF
    return {
        "empty": ("net.pb.gz", b""),
        "truncated-gzip-1": ("net.pb.gz", gz[:1]),
        "truncated-gzip-header": ("net.pb.gz", gz[:10]),
        "truncated-gzip-half": ("net.pb.gz", gz[:len(gz) // 2]),
        "truncated-gzip-last-byte": ("net.pb.gz", gz[:-1]),
        "trailing-zero": ("net.pb.gz", gz + b"\x00"),
        "trailing-junk": ("net.pb.gz", gz + b"junk" * 100),
        "concatenated-gzip": ("net.pb.gz", gz + gz),
        "concatenated-protobuf": ("net.pb", raw + raw),
        "bit-flip": ("net.pb.gz", bytes(flipped)),
        "gzip-of-garbage": ("net.pb.gz", gzip.compress(rng.bytes(4096), mtime=0)),
        "gzip-of-text-weights": ("net.pb.gz", gzip.compress(b"2\n0.1 0.2\n", mtime=0)),
        "random-bytes": ("net.pb.gz", rng.bytes(4096)),
        "random-bytes-pb": ("net.pb", rng.bytes(4096)),
        "all-ff": ("net.pb", b"\xff" * 100_000),
        "truncated-protobuf": ("net.pb", raw[: len(raw) // 2]),
        "protobuf-minus-1": ("net.pb", raw[:-1]),
        "folder": ("net.pb.gz", None),
    }


class _Rng:
    def __init__(self, seed: int) -> None:
        import random

        self._r = random.Random(seed)

    def bytes(self, n: int) -> bytes:
        return bytes(self._r.getrandbits(8) for _ in range(n))


def write_case(folder: Path, name: str, content: bytes | None) -> Path:
    path = folder / name
    folder.mkdir(parents=True, exist_ok=True)
    if content is None:
        path.mkdir(parents=True, exist_ok=True)
    else:
        path.write_bytes(content)
    return path


# --- the property -------------------------------------------------------------------------

# inputs tried per (kind, outcome), reported at the end of the pytest run (conftest.py)
FUZZ_COUNTS: collections.Counter[tuple[str, str]] = collections.Counter()


def count(kind: str, outcome: str) -> None:
    """Record one generated input of ``kind`` ending in ``outcome`` ("error" / "result")."""
    FUZZ_COUNTS[(kind, outcome)] += 1



def check_clean(call: Callable[[], Any], expect: str | None = None,
                error_types: tuple[type[BaseException], ...] = (UserError,)) -> Any:
    """Run ``call``: return its result, or None after a clean error. A clean error is one of
    ``error_types`` with a one-line message; any other exception propagates (a failure).

    ``expect`` = "ok" / "error" additionally requires that outcome.
    """
    try:
        result = call()
    except error_types as err:
        message = str(err)
        assert message and "\n" not in message, f"multi-line error: {message!r}"
        assert "Traceback" not in message
        assert expect != "ok", f"refused a good input: {message}"
        return None
    assert expect != "error", f"accepted a bad input, got {result!r}"
    return result
