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
import functools
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
    (["analyse", "--epd", "/dev/null"], "is a character device"),
    (["analyse", "startpos", "--model", "/"], "unknown model spec"),
    (["analyse", "startpos", "--model", "nosuch.pb.gz"], "not found"),
    (["analyse", "startpos", "--model", "resnet:0x0"], "blocks must be in"),
    (["selfplay", "--config", "/"], "is a folder"),
    (["selfplay", "--config", "/dev/null"], "is a character device"),
    (["selfplay", "--config", "/dev/zero"], "is a character device"),
    (["analyse", "--epd", "/dev/zero"], "is a character device"),
    (["analyse", "startpos", "--model", "/dev/zero.pb.gz"], "not found"),
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

# --- issue 39: the pure search and the environment under misuse --------------------------
#
# positions whose game is over at the root: (FEN, the true value for the side to move at
# draw score 0; "draw" takes the tree's draw score)
ENDED_ROOTS: list[tuple[str, Any]] = [
    ("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", "draw"),  # stalemate
    ("7k/6Q1/6K1/8/8/8/8/8 b - - 0 1", -1.0),  # checkmate
    ("8/8/8/8/8/8/8/K6k w - - 0 1", "draw"),  # insufficient material
    ("k7/8/8/8/8/8/8/K6R w - - 100 80", "draw"),  # the 50-move rule
]

# ``search``'s static arguments (keyword -> values refused with a ConfigError naming it)
SEARCH_STATIC_BAD: dict[str, list[Any]] = {
    "num_simulations": [-1, 0, 2.5, "4", None, True, 2**40],
    "num_nodes": [0, 1, -3, 3.5],
    "num_leaves": [0, -1, 1.5],
    "edges_per_node": [0, 219],
    "history_length": [-1, 8],
}

# network outputs: name -> (policy logits, WDL logits) changes made to a good network's
# outputs; every one must give priors and values that are finite, flagged as non-finite
NONFINITE_OUTPUTS: dict[str, tuple[float | None, float | None]] = {
    "policy NaN": (math.nan, None), "policy +inf": (math.inf, None),
    "policy -inf": (-math.inf, None), "WDL NaN": (None, math.nan),
    "WDL +inf": (None, math.inf), "both NaN": (math.nan, math.nan),
}

# Env misuse: name -> a bad player_order for 2 boards / a bad action for one game
PLAYER_ORDERS_BAD: dict[str, Any] = {
    "one player both colours": [[0, 0], [0, 1]], "player 2": [[0, 2], [1, 0]],
    "wrong shape [3]": [0, 1, 0], "wrong shape [2, 3]": [[0, 1, 0], [1, 0, 1]],
    "floats": [[0.0, 1.0], [1.0, 0.0]], "text": "01", "ragged": [[0, 1], [1]],
}

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


# --- issue 26: a fresh round of each class of hostile input -------------------------------
#
# ``python tests/hostile.py [--engines]`` runs it and prints one line per class: inputs
# tried, and every one that was not handled cleanly (a crash, a hang, unbounded time or
# memory, a silent reinterpretation). ``--engines`` adds the external-engine and UCI
# subprocess cases (about a minute). ``tests/test_hostile_inputs.py`` runs the quick part.
# Issue 39 added the pure search's arguments and settings, the network-output boundary,
# ``Env`` misuse and ``zerochess perft`` at depths that cannot finish
# (``_search_env_sweep``); its classes that need the compiled search (ended roots,
# non-finite outputs through a whole search, settings out of range under jit) are
# ``tests/test_hostile_search.py`` (tier 2: one compile of minutes).

SWEEP_SECONDS = 5.0  # every input must be refused (or answered) within this
SWEEP_BYTES = 64 * 2**20  # and with at most this much Python memory
JAX_SECONDS = 60.0  # inputs that run jax ops eagerly (each op compiles on first use)


def _laugh_docs() -> dict[str, str]:
    """Alias bombs of several shapes, each under a key the loaders know."""
    docs = {}
    for width, levels in ((10, 9), (2, 40), (100, 5)):
        lines = [f"l0: &l0 [{', '.join(['x'] * width)}]"]
        lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * width)}]"
                  for i in range(1, levels)]
        docs[f"list {width}^{levels}"] = "\n".join(lines + [f"games: *l{levels - 1}",
                                                            "player: {nodes: 4}"]) + "\n"
    maps = ["m0: &m0 {a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7, h: 8}"]
    maps += [f"m{i}: &m{i} {{a: *m{i - 1}, b: *m{i - 1}, c: *m{i - 1}, d: *m{i - 1}, "
             f"e: *m{i - 1}, f: *m{i - 1}, g: *m{i - 1}, h: *m{i - 1}}}" for i in range(1, 10)]
    docs["mapping 8^10 as the player"] = "\n".join(maps + ["games: 2", "player: *m9"]) + "\n"
    docs["bomb in the search settings"] = "\n".join(
        maps + ["games: 2", "player: {nodes: 4, search: *m9}"]) + "\n"
    return docs


DUPLICATE_DOCS = {
    "top level, far apart": "games: 2\nseed: 1\nplayer: {nodes: 4}\nseed: 2\n",
    "nested block": "games: 2\nplayer:\n  nodes: 4\n  search:\n    cpuct: 1\n    cpuct: 2\n",
    "flow mapping": "games: 2\nplayer: {nodes: 4, temperature: 0.5, temperature: 0}\n",
    "quoted and plain": "games: 2\n'games': 3\nplayer: {nodes: 4}\n",
    "number keys": "games: 2\nplayer: {nodes: 4}\nopenings: {type: startpos}\n"
                   "x: {1: a, 1.0: b}\n",
}


def _special_paths(folder: Path) -> dict[str, Path]:
    """Paths that are not readable regular files, each with what it is."""
    import os
    import socket

    out = {"folder": folder / "dir.pb.gz", "device": Path("/dev/zero"),
           "link to a device": folder / "zero.yaml", "missing": folder / "nothing.epd",
           "broken link": folder / "broken.bin", "link loop": folder / "loop.bin"}
    out["folder"].mkdir(exist_ok=True)
    for name, target in (("zero.yaml", "/dev/urandom"), ("broken.bin", "/nonexistent/x"),
                         ("loop.bin", "loop.bin")):
        if not (folder / name).is_symlink():
            (folder / name).symlink_to(target)
    if hasattr(os, "mkfifo"):
        out["FIFO without a writer"] = folder / "fifo.epd"
        if not out["FIFO without a writer"].exists():
            os.mkfifo(out["FIFO without a writer"])
    sock = folder / "sock.yaml"
    if not sock.exists():
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(sock))
        out["_socket"] = server  # type: ignore[assignment]  # kept open for the sweep
    out["socket"] = sock
    out["NUL in the name"] = Path("bad\x00name.yaml")
    return out


def _file_readers() -> dict[str, Callable[[Any], Any]]:
    from zerochess.analysis.settings import EngineSettings
    from zerochess.games import MatchConfig, SelfPlayConfig
    from zerochess.games.openings import check_polyglot_book
    from zerochess.neural import load_model
    from zerochess.positions import check_position_lines, read_epd
    from zerochess.training.config import TrainConfig
    from zerochess.uci.engine import check_weights_spec

    return {"network": lambda p: load_model(str(p) if str(p).endswith(".pb.gz")
                                            else f"{p}.pb.gz"),
            "selfplay config": SelfPlayConfig.load, "match config": MatchConfig.load,
            "train config": TrainConfig.load, "analysis config": EngineSettings.from_file,
            "EPD": read_epd, "EPD stream": check_position_lines, "book": check_polyglot_book,
            "UCI WeightsFile": lambda p: check_weights_spec(f"{p}.pb")}


def _bounded(call: Callable[[], Any], seconds: float = SWEEP_SECONDS) -> tuple[str, Any]:
    """("ok", result) / ("error", UserError) / ("bad", why): a call that raises anything
    else, takes longer than SWEEP_SECONDS or allocates more than SWEEP_BYTES is bad."""
    import threading
    import time
    import tracemalloc

    out: list[tuple[str, Any]] = []

    def target() -> None:
        tracemalloc.start()
        t0 = time.perf_counter()
        try:
            result: tuple[str, Any] = ("ok", call())
        except UserError as err:
            message = str(err)
            result = ("error", err) if message and "\n" not in message else (
                "bad", f"multi-line error {message!r:.200}")
        except BaseException as err:  # noqa: BLE001 (reported)
            result = ("bad", f"{type(err).__name__}: {str(err)[:200]}")
        took = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        if took > seconds:
            result = ("bad", f"took {took:.1f} s")
        elif peak > SWEEP_BYTES:
            result = ("bad", f"allocated {peak / 2**20:.0f} MiB")
        out.append(result)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(4 * seconds)
    return out[0] if out else ("bad", "blocked")


def compiled_search_sweep() -> list[tuple[str, int, list[str]]]:
    """Issue 39's classes through the compiled pure search (one compile: minutes on a
    CPU): ended roots (true value, ``NO_ACTION``, ``root_ended``) and non-finite network
    outputs (a legal move or ``NO_ACTION`` with a flag, finite values, ``nonfinite_outputs``)."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    from zerochess import SearchConfig
    from zerochess.chess.policy_map import index_to_move
    from zerochess.env import start_states
    from zerochess.neural.toy import linear_model
    from zerochess.search import stack_configs
    from zerochess.search.compiled import NO_ACTION, roots_from_env, search

    model = linear_model(0)
    draw = 0.25
    boards = [chess.Board()] + [chess.Board(f) for f, _ in ENDED_ROOTS]
    states = jax.tree.map(jnp.asarray, start_states(boards))
    params = stack_configs([SearchConfig(draw_score=draw)] * len(boards), False, False)

    def apply(mp: Any, planes: Any) -> Any:
        out = model.apply(mp["net"], planes)
        return out.policy_logits + mp["policy"], out.wdl_logits + mp["wdl"], None

    run = jax.jit(lambda mp, key: search(mp, roots_from_env(states, key), params, 4,
                                         apply_fn=apply, num_nodes=5))

    def call(policy: float = 0.0, wdl: float = 0.0) -> Any:
        mp = {"net": model.params, "policy": jnp.float32(policy), "wdl": jnp.float32(wdl)}
        return jax.device_get(run(mp, jax.random.key(0)))

    rows = []
    out = call()
    bad = []
    for i, (fen, truth) in enumerate(ENDED_ROOTS, start=1):
        want = draw if truth == "draw" else truth
        if not (out.root_ended[i] and out.action[i] == NO_ACTION
                and abs(float(out.value[i]) - want) < 1e-6 and not out.action_weights[i].any()):
            bad.append(f"{fen}: ended={out.root_ended[i]} action={out.action[i]} "
                       f"value={out.value[i]} (want {want})")
    rows.append(("ended roots in the pure search", len(ENDED_ROOTS), bad))
    bad = []
    for name, (policy, wdl) in NONFINITE_OUTPUTS.items():
        out = call(policy or 0.0, wdl or 0.0)
        action = int(out.action[0])
        legal = action >= 0 and index_to_move(boards[0], action) in boards[0].legal_moves
        if not (legal and out.nonfinite_outputs[0] and np.all(np.isfinite(out.value))):
            bad.append(f"{name}: action {action} flag {out.nonfinite_outputs[0]} "
                       f"values {out.value}")
    rows.append(("non-finite outputs in the pure search", len(NONFINITE_OUTPUTS), bad))
    return rows


def sweep(folder: Path, engines: bool = False) -> list[tuple[str, int, list[str]]]:
    """A fresh round of every class of issue 26; (class, inputs tried, failures)."""
    import io

    from zerochess.errors import ConfigError

    folder.mkdir(parents=True, exist_ok=True)
    rows: list[tuple[str, int, list[str]]] = []

    def run(name: str, cases: dict[str, Callable[[], Any]],
            expect: Callable[[str, Any], str | None] | None = None,
            seconds: float = SWEEP_SECONDS) -> None:
        bad = []
        for case, call in cases.items():
            outcome, value = _bounded(call, seconds)
            why = value if outcome == "bad" else (expect(outcome, value) if expect else None)
            if why:
                bad.append(f"{case}: {why}")
        rows.append((name, len(cases), bad))

    def refused(outcome: str, value: Any) -> str | None:
        return None if outcome == "error" else f"accepted ({value!r:.80})"

    from zerochess.errors import quote
    from zerochess.games import SelfPlayConfig
    from zerochess.validation import as_count, as_real

    # 1. bounded quoting and alias expansion
    nested: Any = "x"
    for _ in range(40):
        nested = [nested] * 3
    cases: dict[str, Callable[[], Any]] = {
        f"quote {k}": (lambda v=v: quote(v)) for k, v in {
            "3^40 list": nested, "10^100000": 10**100_000, "100 MB str": "x" * 10**8,
            "dict of 3^40": {"a": nested}}.items()}
    cases.update({f"as_count {k}": (lambda v=v: as_count(v, "n", 0, 9)) for k, v in
                  {"3^40 list": nested, "-10^100000": -(10**100_000)}.items()})
    cases["as_real 10^400"] = lambda: as_real(10**400, "x")
    run("quoting", cases, lambda outcome, value: (None if outcome == "error" or
                                                  len(str(value)) < 300 else "long quote"))
    docs = {}
    for name, text in _laugh_docs().items():
        path = folder / f"laugh-{len(docs)}.yaml"
        path.write_text(text)
        docs[name] = (lambda p=path: SelfPlayConfig.load(p))
    run("YAML alias bombs", docs, refused)
    # 5. duplicate keys
    dups = {}
    for name, text in DUPLICATE_DOCS.items():
        path = folder / f"dup-{len(dups)}.yaml"
        path.write_text(text)
        dups[name] = (lambda p=path: SelfPlayConfig.load(p))
    run("YAML duplicate keys", dups, lambda outcome, value: refused(outcome, value) or (
        None if "duplicate key" in str(value) else f"refused for another reason: {value}"))
    # 2. file inputs that are not regular files
    specials = _special_paths(folder)
    files = {f"{reader} <- {kind}": (lambda r=read, p=path: r(p))
             for reader, read in _file_readers().items()
             for kind, path in specials.items() if not kind.startswith("_")}
    run("special files", files, refused)
    sparse = folder / "huge.yaml"
    with open(sparse, "wb") as f:
        f.truncate(2**33)
    big = {f"{reader} <- 8 GiB sparse file": (lambda r=read: r(sparse))
           for reader, read in _file_readers().items()}
    run("huge files", big, refused)
    # 6. not a polyglot book
    from zerochess.games.openings import check_polyglot_book

    books = {}
    for name, data in {"PNG header": b"\x89PNG\r\n\x1a\n" * 8, "UTF-16 text": "e4 e5 Nf3 ".
                       encode("utf-16")[:64], "all 0xff": b"\xff" * 160,
                       "sorted keys, promotion 7": bytes.fromhex("00" * 8 + "7000" + "00" * 6)
                       * 4}.items():
        path = folder / f"book-{len(books)}.bin"
        path.write_bytes(data)
        books[name] = (lambda p=path: check_polyglot_book(p))
    run("not a polyglot book", books, refused)
    # 3. EPD: a huge file streams in bounded memory; a long or binary line is refused
    from zerochess.positions import check_position_lines, iter_epd

    epd = folder / "many.epd"
    line = chess.Board().epd() + "\n"
    with open(epd, "w") as f:
        f.write(line * 20_000)
    long = folder / "long.epd"
    long.write_bytes(b"r" * 10**7)
    binary = folder / "binary.epd"
    binary.write_bytes(bytes(range(256)) * 100)
    run("EPD streams (bounded memory)", {
        "20,000 lines counted": lambda: check_position_lines(epd) == 20_000 or 1 / 0,
        "first of 20,000 read lazily": lambda: next(iter(iter_epd(epd)))},
        lambda outcome, value: None if outcome == "ok" else f"refused: {value}",
        seconds=120.0)  # a legitimate large input: linear time (traced), bounded memory
    run("EPD lines that are not positions", {
        "10 MB line": lambda: check_position_lines(long),
        "binary": lambda: check_position_lines(binary)}, refused)
    # 8. conflicting or empty arguments
    from zerochess.analysis import analyse
    from zerochess.cli import main
    from zerochess.search.config import SearchConfig

    def cli(argv: list[str]) -> Any:
        try:
            status = main(argv)
        except SystemExit as exit_:
            status = exit_.code
        if status != 2:
            raise AssertionError(f"exit status {status}")
        raise ConfigError("refused")

    run("conflicting or empty arguments", {
        "config + search": lambda: analyse("startpos", config=SearchConfig(), search="gumbel"),
        "config + contempt_limit": lambda: analyse("startpos", config=SearchConfig(),
                                                   contempt_limit=2),
        "--out ''": lambda: cli(["experiment", "contempt_wdl", "--out", ""]),
        "--config ''": lambda: cli(["selfplay", "--config", "", "--out", "x"]),
        "--json ' '": lambda: cli(["bench", "--json", " "]),
        "--tensorboard ''": lambda: cli(["train", "--config", "x.yaml", "--tensorboard", ""]),
        }, refused)
    # 7, 10, 12. the UCI engine: refused positions, log files, long lines
    from zerochess.uci.engine import UciEngine

    def uci(lines: list[str], wait_for: str = "") -> str:
        import time

        stream = io.StringIO()
        engine = UciEngine(stream, driver_factory=lambda options: _NoSearch())
        for text in lines:
            engine.handle(text)
        deadline = time.monotonic() + SWEEP_SECONDS
        while wait_for not in stream.getvalue() and time.monotonic() < deadline:
            time.sleep(0.01)
        engine.close()
        return stream.getvalue()

    def no_move(text: str) -> str | None:
        out = uci(["ucinewgame", "position startpos moves e2e4 e7e5", text, "go movetime 10"],
                  "bestmove")
        lines = out.splitlines()
        return None if lines and lines[-1] == "bestmove 0000" else f"answered {lines[-1:]}"

    refused_positions = {
        "illegal move": "position startpos moves e2e4 e2e4",
        "FEN with 9 ranks": "position fen 8/8/8/8/8/8/8/8/8 w - - 0 1",
        "moves after mate": "position startpos moves f2f3 e7e5 g2g4 d8h4 a2a3",
        "no king": "position fen 8/8/8/8/8/8/8/K7 w - - 0 1",
        "garbage after startpos": "position startpos please",
        "null move": "position startpos moves 0000",
    }
    run("UCI go after a refused position",
        {k: (lambda v=v: no_move(v)) for k, v in refused_positions.items()},
        lambda outcome, value: value)
    fifo = specials.get("FIFO without a writer", folder / "nofifo")

    def logs(path: str) -> str | None:
        out = uci([f"setoption name LogFile value {path}", "uci", "isready", "isready"],
                  "readyok\nreadyok")
        return None if out.count("readyok") == 2 else "isready not answered"

    run("UCI LogFile", {k: (lambda v=v: logs(v)) for k, v in {
        "/dev/full": "/dev/full", "folder": str(folder), "FIFO": str(fifo),
        "/proc/version": "/proc/version", "missing folder": "/nonexistent/log.txt"}.items()},
        lambda outcome, value: value)

    def echo(text: str) -> str | None:
        out = uci([text])
        return None if all(len(x) < 400 for x in out.splitlines()) else "echo not cut"

    run("UCI echoes", {k: (lambda v=v: echo(v)) for k, v in {
        "1 MB unknown": "z" * 2**20, "1 MB setoption": "setoption name " + "n" * 2**20,
        "1 MB go": "go wtime " + "9" * 2**20, "1 MB position":
        "position fen " + "8/" * 2**19}.items()}, lambda outcome, value: value)
    rows.extend(_search_env_sweep())
    if engines:
        rows.extend(_engine_sweep(folder))
    return rows


def host_roots(boards: list[chess.Board], seed: int = 0) -> Any:
    """``RootInputs`` [B] of ongoing positions made on the host (numpy; no compile): what
    ``search`` takes, for checks that refuse before anything runs."""
    import numpy as np

    from zerochess.chess.backend import make_rules
    from zerochess.search.api import tree_keys
    from zerochess.search.loop import RootInputs

    roots = make_rules("host").roots(boards)
    return RootInputs(position=roots.position, legal=roots.legal, num_legal=roots.num_legal,
                      status=roots.status, history=roots.history,
                      rng_key=np.asarray(tree_keys(seed, len(boards)), np.uint32),
                      mate_slot=roots.mate_slot)


def _jax_cases(rows: list[tuple[str, int, list[str]]], name: str,
               cases: dict[str, Callable[[], Any]], want: str = "error",
               seconds: float = JAX_SECONDS, one_line: bool = False) -> None:
    """Run ``cases`` (each bounded by ``seconds``) and add a row: the cases whose outcome
    is not ``want`` (or, with ``one_line``, whose error spans several lines)."""
    bad = []
    for case, call in cases.items():
        outcome, value = _bounded(call, seconds)
        if outcome == "bad":
            bad.append(f"{case}: {value}")
        elif outcome != want:
            bad.append(f"{case}: {outcome} ({value!r:.120})")
        elif one_line and outcome == "error" and "\n" in str(value):
            bad.append(f"{case}: multi-line error")
    rows.append((name, len(cases), bad))


def _search_env_sweep() -> list[tuple[str, int, list[str]]]:
    """Issue 39's classes that need no compiled search: ``search``'s static arguments and
    per-tree settings, the network-output boundary, ``Env`` misuse and ``zerochess perft``
    at depths that cannot finish."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    from zerochess import SearchConfig
    from zerochess.env import Env, start_states
    from zerochess.neural.toy import linear_model
    from zerochess.search import stack_configs
    from zerochess.search.compiled import search

    rows: list[tuple[str, int, list[str]]] = []
    run = functools.partial(_jax_cases, rows, one_line=True)

    model = linear_model(0)
    boards = [chess.Board(), chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R "
                                         "w KQkq - 2 3")]
    roots = host_roots(boards)
    params = stack_configs([SearchConfig()] * 2, False, False)

    def call(**kw: Any) -> Any:
        args = dict(num_simulations=4, apply_fn=model.apply, num_nodes=5)
        args.update(kw)
        return search(model.params, args.pop("roots", roots), args.pop("params", params),
                      **args)

    cases: dict[str, Callable[[], Any]] = {
        f"{k}={v!r}": (lambda k=k, v=v: call(**{k: v}))
        for k, values in SEARCH_STATIC_BAD.items() for v in values}
    three = stack_configs([SearchConfig()] * 3, False, False)
    cases["params for 3 trees, 2 roots"] = lambda: call(params=three)
    cases["limits for 3 trees"] = lambda: call(limits=np.array([1, 2, 3]))
    cases["limits float"] = lambda: call(limits=np.array([1.5, 2.0]))
    cases["limits -1"] = lambda: call(limits=np.array([-1, 4]))
    cases["limits over num_simulations"] = lambda: call(limits=np.array([5, 4]))
    for field, value in (("policy_temperature", 0.0), ("policy_temperature", math.nan),
                         ("draw_score", math.nan), ("draw_score", 2.0), ("cpuct", math.inf)):
        edited = params.replace(**{field: np.asarray(getattr(params, field)).copy()})
        getattr(edited, field)[1] = value
        cases[f"params.{field}={value}"] = lambda e=edited: call(params=e)
    cases["apply_fn not callable"] = lambda: call(apply_fn=3)
    cases["roots not RootInputs"] = lambda: call(roots=[1, 2])
    run("pure search: arguments", cases)

    from zerochess.search.step import LeafInputs, evaluate_leaves

    leaf = leaf_inputs(boards)

    def outputs(policy: Any, wdl: Any, m: Any = None, kind: str = "tuple") -> Any:
        def apply(p: Any, planes: Any) -> Any:
            base = model.apply(p, planes)
            out = (base.policy_logits if policy is None else policy(base.policy_logits),
                   base.wdl_logits if wdl is None else wdl(base.wdl_logits), m)
            return dict(zip(("policy_logits", "wdl_logits", "moves_left"), out, strict=True)
                        ) if kind == "dict" else out
        return evaluate_leaves(apply, model.params, LeafInputs(**leaf), jnp.ones(2))

    shapes = {
        "policy of 1800": lambda: outputs(lambda x: x[:, :1800], None),
        "policy of 4000": lambda: outputs(lambda x: jnp.tile(x, (1, 3))[:, :4000], None),
        "policy [B]": lambda: outputs(lambda x: x[:, 0], None),
        "WDL of 2": lambda: outputs(None, lambda x: x[:, :2]),
        "WDL for 3 positions": lambda: outputs(None, lambda x: jnp.concatenate([x, x[:1]])),
        "complex policy": lambda: outputs(lambda x: x.astype(jnp.complex64), None),
        "a 4-tuple": lambda: evaluate_leaves(lambda p, x: (1, 2, 3, 4), model.params,
                                             LeafInputs(**leaf), jnp.ones(2)),
        "a string": lambda: evaluate_leaves(lambda p, x: "policy", model.params,
                                            LeafInputs(**leaf), jnp.ones(2)),
    }
    run("network outputs of the wrong shape or kind", shapes)
    good = {
        "a plain tuple": lambda: outputs(None, None),
        "a dict": lambda: outputs(None, None, kind="dict"),
        "float16": lambda: outputs(lambda x: x.astype(jnp.float16),
                                   lambda x: x.astype(jnp.float16),
                                   jnp.zeros(2, jnp.float16)),
        "bfloat16": lambda: outputs(lambda x: x.astype(jnp.bfloat16),
                                    lambda x: x.astype(jnp.bfloat16)),
        "moves left [B, 1]": lambda: outputs(None, None, jnp.ones((2, 1))),
    }
    run("network outputs in other accepted forms", good, want="ok")

    def poisoned(policy: float | None, wdl: float | None) -> Any:
        def change(value: float | None) -> Any:
            return None if value is None else (lambda x: x.at[0].set(value))
        out = outputs(change(policy), change(wdl))
        finite = all(bool(jnp.all(jnp.isfinite(a))) for a in (out.priors, out.wdl))
        sums = np.asarray(jnp.sum(out.priors, axis=1))
        if not finite or not np.allclose(sums, 1.0, atol=1e-5):
            raise AssertionError(f"not made safe: sums {sums}")
        return out

    run("non-finite network outputs (made safe)",
        {k: (lambda v=v: poisoned(*v)) for k, v in NONFINITE_OUTPUTS.items()}, want="ok")

    env = Env()
    two = [chess.Board(), chess.Board()]
    one = jax.tree.map(lambda a: jnp.asarray(a[0]), start_states([chess.Board()]))
    actions = {"float 12.7": 12.7, "float array": jnp.float32(12.0), "bool": True,
               "one per batch": jnp.zeros(3, jnp.int32), "None": None, "text": "e2e4"}
    env_cases: dict[str, Callable[[], Any]] = {
        f"action {k}": (lambda v=v: env.step(one, v)) for k, v in actions.items()}
    env_cases.update({f"player_order {k}": (lambda v=v: start_states(two, v))
                      for k, v in PLAYER_ORDERS_BAD.items()})
    env_cases["start_states([])"] = lambda: start_states([])
    env_cases["start_states(a board)"] = lambda: start_states(chess.Board())
    env_cases["init(0)"] = lambda: env.init(0)
    env_cases["init(keys [3])"] = lambda: env.init(jax.random.split(jax.random.key(0), 3))
    run("Env misuse", env_cases)

    from zerochess.cli import main

    def perft(argv: list[str]) -> Any:
        import contextlib
        import io

        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            status = main(["perft", *argv])
        if status != 2 or "--force" not in err.getvalue():
            raise AssertionError(f"exit status {status}: {err.getvalue()[-200:]}")
        raise ConfigError("refused")

    from zerochess.errors import ConfigError

    run("perft at depths that cannot finish", {
        "startpos 10": lambda: perft(["startpos", "10"]),
        "startpos 8 host": lambda: perft(["startpos", "8", "--rules", "host"]),
        "kiwipete 7": lambda: perft(["r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R "
                                     "w KQkq - 0 1", "7"]),
        "218 moves 6": lambda: perft(["R6R/3Q4/1Q4Q1/4Q3/2Q4Q/Q4Q2/pp1Q4/kBNN1KB1 w - - 0 1",
                                      "6"])})
    rows.extend(_fresh_round())
    return rows


# --- issue 39's fresh round: what a new user of the public API tried next -----------------
# (docs/_readme_hostile.md lists every case of the round and its outcome before the fixes;
# these are the classes that were not clean, each refused now before anything compiles)

E2E4 = 322  # lc0's index of e2e4 from the start position (chess.policy_map.move_to_index)


def _fresh_round() -> list[tuple[str, int, list[str]]]:
    import jax
    import jax.numpy as jnp
    import numpy as np

    from zerochess import SearchConfig
    from zerochess.cli import main
    from zerochess.env import Env, start_states
    from zerochess.errors import ConfigError
    from zerochess.neural.toy import linear_model
    from zerochess.search import stack_configs
    from zerochess.search.compiled import _static_args, roots_from_env, search
    from zerochess.training.device_selfplay import play

    rows: list[tuple[str, int, list[str]]] = []
    run = functools.partial(_jax_cases, rows)

    model = linear_model(0)
    states = jax.tree.map(jnp.asarray, start_states([chess.Board(), chess.Board()]))
    key = jax.random.key(0)
    bad_states = {
        "0 games": jax.tree.map(lambda a: a[:0], states),
        "keys for 3 games": states.replace(keys=jnp.concatenate([states.keys,
                                                                 states.keys[:1]])),
        "terminated float (NaN)": states.replace(terminated=jnp.array([jnp.nan, 0.0])),
        "board float": states.replace(position=states.position._replace(
            board=states.position.board.astype(jnp.float32))),
        "turn float": states.replace(position=states.position._replace(
            turn=states.position.turn.astype(jnp.float32))),
        "boards of 4 plies": states.replace(boards=states.boards[:, :4]),
    }
    run("fresh: states for roots_from_env",
        {k: (lambda v=v: roots_from_env(v, key)) for k, v in bad_states.items()})

    roots = host_roots([chess.Board(), chess.Board()])
    params = stack_configs([SearchConfig()] * 2, False, False)

    def call(**kw: Any) -> Any:
        args = dict(num_simulations=4, apply_fn=model.apply, num_nodes=5)
        args.update(kw)
        return search(model.params, args.pop("roots", roots), args.pop("params", params),
                      **args)

    def edited(field: str, value: Any, dtype: Any = None) -> Any:
        arr = np.asarray(getattr(params, field)).copy()
        if dtype is not None or np.ndim(value):
            return params.replace(**{field: np.asarray(value, dtype)})
        arr[1] = value
        return params.replace(**{field: arr})

    bad_params = {
        "a SearchConfig": SearchConfig(), "None": None, "a list of configs": [SearchConfig()] * 2,
        "draw_score bool": edited("draw_score", [True, False], bool),
        "n_scl 5.5": edited("n_scl", [5.5, 3.0], np.float32),
        "fpu_absolute float": edited("fpu_absolute", [0.5, 0.0], np.float32),
        "hybrid_nodes [2]": edited("hybrid_nodes", [0.0, 0.0], np.float32),
        "moves_left [2, 1]": edited("moves_left", [[False], [False]], bool),
        "selection 7": edited("selection", 7), "selection -1": edited("selection", -1),
        "n_scl 0": edited("n_scl", 0), "cpuct_base 0": edited("cpuct_base", 0.0),
        "pb_c_base NaN": edited("pb_c_base", math.nan),
        "sc_temperature NaN": edited("sc_temperature", math.nan),
        "pb_c_init -1": edited("pb_c_init", -1.0),
    }
    cases: dict[str, Callable[[], Any]] = {
        f"params {k}": (lambda v=v: call(params=v)) for k, v in bad_params.items()}
    cases["roots of 0 trees"] = lambda: call(roots=jax.tree.map(lambda a: a[:0], roots))
    cases["roots.legal float"] = lambda: call(roots=roots.replace(
        legal=np.asarray(roots.legal, np.float32)))
    cases["apply_fn of one argument"] = lambda: call(apply_fn=lambda x: model.apply(None, x))
    cases["an edge pool past int32"] = lambda: call(num_nodes=2**31 - 1)
    cases["num_simulations traced"] = lambda: jax.eval_shape(
        lambda n: _static_args(n, None, 1, None, 7), 4)
    run("fresh: search's params, roots, apply_fn", cases)
    run("fresh: concrete jax counts and cast params", {
        "num_simulations jnp.int32(4)": lambda: _static_args(jnp.int32(4), None, 1, None, 7),
        "Env(max_steps=np.int64(5))": lambda: Env(max_steps=np.int64(5)),
        "player_order uint8": lambda: start_states([chess.Board()], np.array([1, 0], np.uint8)),
    }, want="ok")

    configs = {"[]": ([], {}), "a SearchConfig": (SearchConfig(), {}),
               "[dict]": ([{"cpuct": 1.0}], {}), "[None]": ([None], {}),
               "a generator": ((SearchConfig() for _ in range(2)), {}),
               "moves_left='no'": ([SearchConfig()], {"moves_left": "no"}),
               "mate_check=1": ([SearchConfig()], {"mate_check": 1})}
    run("fresh: stack_configs", {k: (lambda c=c, kw=kw: stack_configs(c, **kw))
                                 for k, (c, kw) in configs.items()})

    env = Env()
    one = jax.tree.map(lambda a: jnp.asarray(a[0]), start_states([chess.Board()]))
    run("fresh: Env states and wrapping integers", {
        "step a dict": lambda: env.step({"a": 1}, E2E4),
        "step a batch of states": lambda: env.step(states, jnp.array([E2E4, E2E4])),
        "action 2**32 + e2e4": lambda: env.step(one, 2**32 + E2E4),
        "action np.int64(2**32 + e2e4)": lambda: env.step(one, np.int64(2**32 + E2E4)),
        "action 2**70": lambda: env.step(one, 2**70),
        "player_order 2**32, 2**32 + 1": lambda: start_states(
            [chess.Board()], np.array([2**32, 2**32 + 1], np.int64))})

    def perft(argv: list[str]) -> Any:
        import contextlib
        import io

        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            status = main(["perft", *argv])
        if status != 2 or "must be an integer" not in err.getvalue():
            raise AssertionError(f"exit status {status}: {err.getvalue()[-200:]}")
        raise ConfigError("refused")

    run("fresh: perft numbers that are not ASCII integers", {
        f"{k}": (lambda v=v: perft(["startpos", *v, "--rules", "host"])) for k, v in {
            "DEPTH 1_0": ["1_0"], "DEPTH Arabic 3": ["\u0663"], "DEPTH fullwidth 3": ["\uff13"],
            "--batch 1_024": ["1", "--batch", "1_024"]}.items()})

    def selfplay(**kw: Any) -> Any:
        args = dict(model=model, openings=[chess.Board()], white=SearchConfig(),
                    black=SearchConfig(), num_simulations=2, batch=1, max_plies=2)
        args.update(kw)
        return play(**args)

    run("fresh: device_selfplay arguments", {
        f"{k}": (lambda v=v: selfplay(**v)) for k, v in {
            "num_simulations 0": {"num_simulations": 0},
            "num_simulations 2.5": {"num_simulations": 2.5},
            "num_simulations True": {"num_simulations": True},
            "batch 0": {"batch": 0}, "batch -1": {"batch": -1}, "batch True": {"batch": True},
            "openings []": {"openings": []}, "openings a Board": {"openings": chess.Board()},
            "openings [FEN]": {"openings": [chess.STARTING_FEN]},
            "max_plies 0": {"max_plies": 0}, "max_plies 2.5": {"max_plies": 2.5},
            "plies_per_call 0": {"plies_per_call": 0}, "seed -1": {"seed": -1},
            "seed 2**70": {"seed": 2**70}, "seed 1.5": {"seed": 1.5},
            "white None": {"white": None}, "white a dict": {"white": {"cpuct": 1.0}},
            "white_temperature 0.5": {"white_temperature": 0.5}, "model None": {"model": None},
        }.items()})
    return rows


def leaf_inputs(boards: list[chess.Board]) -> dict[str, Any]:
    """``LeafInputs`` fields [B] of ``boards`` (host; ``evaluate_leaves`` takes them)."""
    import numpy as np

    from zerochess.chess import state as host_state
    from zerochess.chess.history import history_arrays
    from zerochess.chess.rules import expand_batch

    pos = host_state.stack([host_state.from_board(b) for b in boards])
    exp = expand_batch(pos, np.full(len(boards), -1, np.int16))
    hist = [history_arrays(b) for b in boards]
    return dict(boards=np.stack([h[0] for h in hist]), repeated=np.stack([h[1] for h in hist]),
                turn=pos.turn, castling=pos.castling, rule50=pos.rule50, legal=exp.legal,
                num_legal=exp.num_legal)


class _NoSearch:
    """A stand-in search driver (the sweep never searches)."""

    def prepare(self, multipv: int) -> None:
        pass


def _engine_sweep(folder: Path) -> list[tuple[str, int, list[str]]]:
    """4: external engines in ``zerochess match`` that break the protocol at various moves:
    each game must end, lost by the broken engine, with the reason in the PGN."""
    import sys

    from zerochess.games import MatchConfig, run_match
    from zerochess.games.records import read_pgn_games

    fake = Path(__file__).resolve().parent / "fake_uci_engine.py"
    bad = []
    modes = [(m, at) for m in ("illegal", "none", "garbage", "crash", "hang-go")
             for at in (1, 3)]
    for mode, at in modes:
        out = folder / f"match-{mode}-{at}"
        cfg = MatchConfig.from_dict({
            "name": "sweep", "games": 2, "max_plies": 10,
            "player1": {"name": "good", "engine": {
                "kind": "uci", "nodes": 1, "command": f"{sys.executable} {fake}"}},
            "player2": {"name": "broken", "engine": {
                "kind": "uci", "nodes": 1, "move_timeout": 1,
                "command": f"{sys.executable} {fake} --misbehave {mode} --at {at}"}}})
        try:
            report = run_match(cfg, out, progress=False)
        except BaseException as err:  # noqa: BLE001 (reported)
            bad.append(f"{mode}@{at}: {type(err).__name__}: {err}")
            continue
        games = list(read_pgn_games(out / "games.pgn"))
        if report.result.losses or len(games) != 2 or not all(
                "Forfeit" in g.headers for g in games):
            bad.append(f"{mode}@{at}: {report.result} / {[dict(g.headers) for g in games]}")
    starts = []
    for mode in ("hang-uci", "hang-isready"):
        cfg = MatchConfig.from_dict({
            "name": "sweep", "games": 1, "max_plies": 4,
            "player1": {"name": "good", "engine": {
                "kind": "uci", "nodes": 1, "command": f"{sys.executable} {fake}"}},
            "player2": {"name": "mute", "engine": {
                "kind": "uci", "nodes": 1, "startup_timeout": 1,
                "command": f"{sys.executable} {fake} --misbehave {mode}"}}})
        try:
            run_match(cfg, folder / f"start-{mode}", progress=False)
            starts.append(f"{mode}: started")
        except UserError:
            pass
        except BaseException as err:  # noqa: BLE001 (reported)
            starts.append(f"{mode}: {type(err).__name__}: {err}")
    return [("external engines in a match", len(modes), bad),
            ("engines that never start", 2, starts)]


def main() -> int:
    import argparse
    import tempfile

    parser = argparse.ArgumentParser(description="issue 26's hostile-input sweep")
    parser.add_argument("--engines", action="store_true",
                        help="also the external-engine match cases (about a minute)")
    parser.add_argument("--search", action="store_true",
                        help="also issue 39's compiled-search classes (a compile of minutes)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        rows = sweep(Path(tmp), engines=args.engines)
    if args.search:
        rows.extend(compiled_search_sweep())
    total = sum(n for _, n, _ in rows)
    failed = sum(len(bad) for _, _, bad in rows)
    for name, n, bad in rows:
        print(f"{name:<34} {n:>4} inputs  {'clean' if not bad else f'{len(bad)} NOT CLEAN'}")
        for line in bad:
            print(f"    {line}")
    print(f"{total} inputs, {failed} not clean")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
