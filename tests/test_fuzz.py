"""The fuzz harness: hypothesis-generated and hand-written hostile inputs at every edge.

Property everywhere: a clean error (a ``UserError`` subclass with a one-line message) or
a correct result, checked against an independent reference where one applies
(python-chess for positions, moves and legal moves; the original network for damaged
network files; per-line parsing for EPD files; the written games for a damaged run
folder). The default run tries a fast sample of each; ``-m slow`` runs the same
properties on >= 10,000 generated inputs in all (the tally is printed at the end).
"""

from __future__ import annotations

import gzip
import math
import shutil
import tempfile
from pathlib import Path

import chess
import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zerochess.chess.expander import Expander
from zerochess.errors import (
    ConfigError,
    InputFileError,
    ModelFileError,
    PositionError,
    UserError,
)
from zerochess.games import GameWriter, SelfPlayConfig, build_openings
from zerochess.games.records import _pgn_segments, pgn_game_row, read_games_csv
from zerochess.neural import load_model
from zerochess.neural.lc0_weights import lc0_params
from zerochess.neural.toy import linear_model
from zerochess.positions import MAX_COUNTER, parse_fen, parse_position, read_epd
from zerochess.search.api import Searcher
from zerochess.search.config import SearchConfig
from zerochess.search.params import stack_configs

import hostile
from hostile import EPDS, FENS, MOVES, SEARCH_CONFIG_BAD, SELFPLAY_CONFIGS, check_clean, count
from strategies import (
    boards,
    byte_damage,
    fen_texts,
    search_config_values,
    selfplay_documents,
    setting_values,
    uci_go_commands,
    uci_move_lists,
    uci_position_commands,
)
from tree_walk import sorted_legal

FAST, SLOW = 40, 1500  # examples per property: default run / -m slow


def fuzz(strategy: st.SearchStrategy, fast: int = FAST, slow: int = SLOW):
    """(fast test, slow test) running ``check`` on ``strategy``'s examples."""

    def deco(check):
        def run(n: int, derandomize: bool) -> None:
            @settings(max_examples=n, deadline=None, database=None, derandomize=derandomize,
                      suppress_health_check=list(HealthCheck), print_blob=True)
            @given(strategy)
            def inner(value):
                check(value)

            inner()

        def fast_test():
            run(fast, True)

        @pytest.mark.slow
        def slow_test():
            run(slow, False)

        fast_test.__doc__ = slow_test.__doc__ = check.__doc__
        return fast_test, slow_test

    return deco


# --- positions ----------------------------------------------------------------------------

def _reference_reading(text: str) -> chess.Board | None:
    """python-chess's reading of ``text`` under zerochess's rules, written independently
    of ``zerochess.positions``: None where it must be refused."""
    text = text.strip()
    if text == "startpos":
        return chess.Board()
    if not text:
        return None
    fields = text.split()
    epd = ";" in text
    if not epd and (len(fields) < 4 or len(fields) > 6 or not all(
            f.isascii() and f.isdigit() for f in fields[4:])):
        return None
    for chess960 in (False, True):
        try:
            board = (chess.Board.from_epd(text, chess960=chess960)[0] if epd
                     else chess.Board(text, chess960=chess960))
        except (ValueError, IndexError):
            return None
        if board.is_valid():
            break
    else:
        return None
    if not (0 <= board.halfmove_clock <= MAX_COUNTER and 1 <= board.fullmove_number <= MAX_COUNTER):
        return None
    return board


def check_fen(text: str) -> None:
    """A FEN/EPD string: refused, or read exactly as python-chess reads the full FEN."""
    board = check_clean(lambda: parse_fen(text), error_types=(PositionError,))
    ref = _reference_reading(text) if isinstance(text, str) else None
    if board is None:
        count("fen", "error")
        assert ref is None, f"refused {text!r}, python-chess reads {ref.fen() if ref else ''}"
        return
    count("fen", "result")
    assert ref is not None, f"accepted {text!r}: {board.fen()}"
    assert board.is_valid()
    assert board.fen(shredder=True) == ref.fen(shredder=True), text
    assert set(board.legal_moves) == set(ref.legal_moves) or board.chess960 != ref.chess960


test_fen_fuzz, test_fen_fuzz_slow = fuzz(fen_texts(), fast=120, slow=3000)(check_fen)


@pytest.mark.parametrize("text, expect", FENS + EPDS)
def test_fen_corpus(text, expect):
    check_clean(lambda: parse_fen(text), expect, error_types=(PositionError,))
    count("fen-corpus", "error" if expect == "error" else "result")


def check_moves(case) -> None:
    """UCI moves from a position: refused, or exactly python-chess's game."""
    start, moves = case
    fen = start.fen(shredder=True)
    board = check_clean(lambda: parse_position(fen, moves), error_types=(PositionError,))
    ref: chess.Board | None = start.copy()
    items = moves.split() if isinstance(moves, str) else moves
    try:
        if items is not None and not isinstance(items, (list, tuple)):
            raise TypeError("not a list")
        for m in [] if items is None else list(items):
            move = ref.parse_uci(m.strip())  # type: ignore[union-attr]
            assert move
            ref.push(move)  # type: ignore[union-attr]
    except (ValueError, AssertionError, AttributeError, TypeError):
        ref = None
    if board is None:
        count("moves", "error")
        assert ref is None, (fen, moves)
        return
    count("moves", "result")
    assert ref is not None and board.fen(shredder=True) == ref.fen(shredder=True)
    if board.chess960 == ref.chess960:  # (standard castling notation on a standard board)
        assert board.move_stack == ref.move_stack


test_moves_fuzz, test_moves_fuzz_slow = fuzz(uci_move_lists(), fast=60, slow=2000)(check_moves)


@pytest.mark.parametrize("moves, expect", MOVES)
def test_moves_corpus(moves, expect):
    check_clean(lambda: parse_position("startpos", moves), expect, error_types=(PositionError,))
    count("moves-corpus", "error" if expect == "error" else "result")


# --- search settings and searches ----------------------------------------------------------

def check_search_config(values: dict) -> None:
    """A SearchConfig from a mapping: refused, or every field a finite number in range."""
    cfg = check_clean(lambda: SearchConfig.from_dict(values), error_types=(ConfigError,))
    if cfg is None:
        count("search-config", "error")
        return
    count("search-config", "result")
    params = stack_configs([cfg])
    for name, arr in params.items():
        assert np.all(np.isfinite(np.asarray(arr, np.float64))), name
    assert 0.1 <= cfg.policy_temperature <= 10 and -1 <= cfg.draw_score <= 1
    assert cfg.n_scl is None or (isinstance(cfg.n_scl, int) and cfg.n_scl >= 1)


test_search_config_fuzz, test_search_config_fuzz_slow = fuzz(
    search_config_values(), fast=80, slow=2000)(check_search_config)


@pytest.mark.parametrize("field", sorted(SEARCH_CONFIG_BAD))
def test_search_config_corpus(field):
    for value in SEARCH_CONFIG_BAD[field]:
        with pytest.raises(ConfigError, match=field):
            SearchConfig(**{field: value})
        count("search-config-corpus", "error")


NODES = 9  # simulations + 1 of the fuzzed searches (one compiled searcher for all of them)
_SEARCHER: list[Searcher] = []


def _searcher() -> Searcher:
    if not _SEARCHER:
        _SEARCHER.append(Searcher(linear_model(seed=4), max_nodes=NODES, expander=Expander(0),
                                  shards=1))
    return _SEARCHER[0]


@st.composite
def search_cases(draw):
    board = draw(boards())
    other = draw(boards())
    sims = draw(st.one_of(st.integers(0, NODES - 1), setting_values()))
    seed = draw(st.one_of(st.integers(0, 2**63 - 1), setting_values()))
    values = draw(st.one_of(st.just({}), search_config_values()))
    return board, other, sims, seed, values


def check_search(case) -> None:
    """A search of a legal position (standard or chess960, large counters) with hostile
    counts, seeds and settings: a clean error, or root moves equal to python-chess's legal
    moves, visits that add up, and a legal principal variation."""
    board, other, sims, seed, values = case
    searcher = _searcher()

    def search():
        cfg = SearchConfig.from_dict(values)
        batch = searcher.init([board, other], cfg, seed)
        return searcher.results(searcher.run(batch, sims))

    results = check_clean(search)
    if results is None:
        count("search", "error")
        return
    count("search", "result")
    per_tree = list(sims) if isinstance(sims, (list, tuple)) else [sims, sims]
    for b, res, sims in zip((board, other), results, per_tree, strict=True):
        assert res.moves == sorted_legal(b)
        # every simulation is a root visit, or dropped once the tree is full
        assert int(res.visits.sum()) == res.root_visits - 1
        assert res.root_visits - 1 + res.dropped_simulations == sims
        assert res.dropped_simulations == 0 or res.nodes_used == NODES
        line = b.copy()
        for move in res.pv:
            assert move in line.legal_moves
            line.push(move)
        assert math.isfinite(res.root_q) and abs(res.root_q) <= 1 + 1e-5


test_search_fuzz, test_search_fuzz_slow = fuzz(search_cases(), fast=25, slow=1000)(check_search)


def check_run_counts(value) -> None:
    """``Searcher.run`` counts: a clean error, or that many simulations (a full tree stops)."""
    searcher = _searcher()
    batch = searcher.init([chess.Board(), chess.Board()], SearchConfig(), 0)
    out = check_clean(lambda: searcher.run(batch, value))
    if out is None:
        count("run-count", "error")
        return
    count("run-count", "result")
    per_tree = [int(v) for v in value] if isinstance(value, (list, tuple)) else [int(value)] * 2
    for res, n in zip(searcher.results(out), per_tree, strict=True):
        assert res.root_visits - 1 + res.dropped_simulations == n


test_run_count_fuzz, test_run_count_fuzz_slow = fuzz(setting_values(-3, 2**33), fast=30,
                                                     slow=400)(check_run_counts)


# --- configs ------------------------------------------------------------------------------

def check_selfplay_document(doc: dict) -> None:
    """A self-play config mapping: a clean error, or a config that round-trips through
    its resolved YAML and whose openings are legal."""
    def load():
        cfg = SelfPlayConfig.from_dict(doc)
        build_openings(cfg.openings, 2, cfg.seed)
        return cfg

    cfg = check_clean(load)
    if cfg is None:
        count("selfplay-config", "error")
        return
    count("selfplay-config", "result")
    again = SelfPlayConfig.from_dict(yaml.safe_load(yaml.safe_dump(cfg.to_dict())))
    assert again == cfg
    assert 0 <= cfg.seed < 2**63 and cfg.games >= 1 and cfg.white.nodes >= 1


test_selfplay_config_fuzz, test_selfplay_config_fuzz_slow = fuzz(
    selfplay_documents(), fast=80, slow=2000)(check_selfplay_document)


@pytest.mark.parametrize("text, expect", SELFPLAY_CONFIGS)
def test_selfplay_yaml_corpus(tmp_path, text, expect):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    check_clean(lambda: SelfPlayConfig.load(path), expect)
    count("selfplay-yaml-corpus", "error" if expect == "error" else "result")


def check_yaml_text(text: str) -> None:
    """Any text as a config file: a clean error or a config."""
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "c.yaml"
        path.write_bytes(text.encode("utf-8", errors="surrogatepass"))
        cfg = check_clean(lambda: SelfPlayConfig.load(path))
    count("yaml-text", "error" if cfg is None else "result")


test_yaml_text_fuzz, test_yaml_text_fuzz_slow = fuzz(
    st.one_of(st.text(max_size=200), st.sampled_from([t for t, _ in SELFPLAY_CONFIGS])),
    fast=40, slow=800)(check_yaml_text)


# --- files --------------------------------------------------------------------------------

_NETWORK: list[tuple[bytes, dict]] = []


def _network() -> tuple[bytes, dict]:
    if not _NETWORK:
        raw = hostile.network_bytes(seed=2)
        _NETWORK.append((gzip.compress(raw, mtime=0), lc0_params(raw)[1]))
    return _NETWORK[0]


@st.composite
def damaged_network(draw) -> bytes:
    return draw(byte_damage(_network()[0]))


def check_network(data: bytes) -> None:
    """A damaged ``.pb.gz``: a ``ModelFileError`` naming the file, or exactly the original
    network (a damaged file never loads as another network)."""
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "net.pb.gz"
        path.write_bytes(data)
        try:
            model = load_model(str(path))
        except ModelFileError as err:
            assert str(path) in str(err) and "\n" not in str(err)
            count("network-file", "error")
            return
    count("network-file", "result")
    import jax

    want = jax.tree_util.tree_leaves(_network()[1])
    got = jax.tree_util.tree_leaves(model.params)
    assert len(want) == len(got)
    for a, b in zip(want, got, strict=True):
        np.testing.assert_array_equal(np.asarray(a, np.float32), np.asarray(b))


test_network_fuzz, test_network_fuzz_slow = fuzz(damaged_network(), fast=40,
                                                 slow=1000)(check_network)


def test_network_corpus(tmp_path):
    raw = hostile.network_bytes(seed=2)
    for case, (name, content) in hostile.damaged_networks(raw).items():
        path = hostile.write_case(tmp_path / case, name, content)
        with pytest.raises(ModelFileError) as err:
            load_model(str(path))
        assert str(path) in str(err.value)
        count("network-corpus", "error")


@st.composite
def epd_files(draw) -> list[str]:
    return draw(st.lists(st.one_of(fen_texts(), st.sampled_from(["", "# c", "  "])),
                         min_size=0, max_size=8))


def check_epd_file(lines: list[str]) -> None:
    """An EPD file: refused naming exactly its bad lines, or every position line read."""
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "p.epd"
        path.write_bytes("\n".join(lines).encode("utf-8", errors="surrogatepass"))
        text = path.read_bytes().decode("utf-8", errors="replace")
        try:
            items = read_epd(path)
        except InputFileError:
            count("epd-file", "error")
            return
        except PositionError as err:
            count("epd-file", "error")
            message = str(err)
            assert "\n" not in message
            expected_bad = []
            for n, line in enumerate(text.splitlines(), start=1):
                s = line.strip()
                if not s or s.startswith("#"):
                    continue
                try:
                    parse_fen(s)
                except PositionError:
                    expected_bad.append(n)
            if not expected_bad:
                assert "holds no positions" in message
            for n in expected_bad[:10]:
                assert f"{path}:{n}:" in message
            return
    count("epd-file", "result")
    good = [s for s in (line.strip() for line in text.splitlines()) if s and s[0] != "#"]
    assert len(items) == len(good)
    for (_, board), s in zip(items, good, strict=True):
        assert board.fen() == parse_fen(s).fen()


test_epd_fuzz, test_epd_fuzz_slow = fuzz(epd_files(), fast=40, slow=1000)(check_epd_file)


_TEMPLATE: list[Path] = []


def _template() -> Path:
    """A run folder with five finished games (written once)."""
    if not _TEMPLATE:
        from test_resume import TAGS, record

        out = Path(tempfile.mkdtemp()) / "run"
        with GameWriter(out, TAGS) as w:
            for i in range(5):
                w.write(record(i))
        _TEMPLATE.append(out)
    return _TEMPLATE[0]


@st.composite
def damaged_run(draw) -> tuple[str, bytes]:
    name = draw(st.sampled_from(["games.pgn", "games.csv"]))
    return name, draw(byte_damage((_template() / name).read_bytes()))


def check_resume(case) -> None:
    """A run folder with a damaged games file: opening it is clean, and every game it
    keeps is one of the written games, complete, in both files."""
    from test_resume import TAGS

    name, data = case
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "run"
        shutil.copytree(_template(), out)
        (out / name).write_bytes(data)
        w = check_clean(lambda: GameWriter(out, TAGS), error_types=(ConfigError,))
        if w is None:
            count("resume", "error")
            return
        w.close()
        count("resume", "result")
        original = {int(r["index"]): r for r in read_games_csv(_template() / "games.csv")}
        rows = {int(r["index"]): r for r in read_games_csv(out / "games.csv")}
        assert set(rows) == w.completed and w.completed <= set(original)
        for i, r in rows.items():
            assert r["moves"] == original[i]["moves"] and r["result"] == original[i]["result"]
        text = (out / "games.pgn").read_text()
        segments = _pgn_segments(text)
        assert sorted(i for i, _ in segments) == sorted(rows)
        assert all(pgn_game_row(seg, TAGS) is not None for _, seg in segments)


test_resume_fuzz, test_resume_fuzz_slow = fuzz(damaged_run(), fast=40, slow=800)(check_resume)


# --- library entry points with hostile arguments --------------------------------------------

@st.composite
def analyse_kwargs(draw) -> dict:
    key = draw(st.sampled_from(["visits", "seed", "workers", "contempt_limit", "search",
                                "model", "config", "progress"]))
    return {key: draw(setting_values())}


def check_analyse_arguments(kwargs: dict) -> None:
    """``zerochess.analyse`` with one hostile argument: a clean error before any search
    (valid values are skipped: the search itself is fuzzed above)."""
    from zerochess.analysis import analyse
    from zerochess.search.api import check_workers
    from zerochess.validation import as_count, as_seed

    key, value = next(iter(kwargs.items()))
    checks = {"visits": lambda v: as_count(v, "visits", 1, 8),
              "seed": as_seed, "workers": lambda v: v is None or check_workers(v)}
    if key in checks:
        try:
            checks[key](value)
            return  # a valid value: searching with it is fuzzed above
        except ConfigError:
            pass
    elif value is None or value in ("puct", "builtin"):
        return
    with pytest.raises(UserError) as err:
        analyse("startpos", **{"visits": 4, **kwargs})
    assert "\n" not in str(err.value)
    count("analyse-arguments", "error")


test_analyse_arguments_fuzz, test_analyse_arguments_fuzz_slow = fuzz(
    analyse_kwargs(), fast=60, slow=1000)(check_analyse_arguments)


@pytest.mark.parametrize("argv, needle", hostile.CLI_CASES, ids=lambda a: " ".join(a)
                         if isinstance(a, list) else None)
def test_cli_corpus(argv, needle, capsys):
    from zerochess.cli import main

    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and len(err.strip().splitlines()) == 1, err
    assert needle in err, err
    count("cli-corpus", "error")


# --- the protocol engines: the same inputs through their parsers --------------------------

def _reference_game(fen_text: str, moves: list[str], chess960: bool = False
                    ) -> chess.Board | None:
    board = _reference_reading(fen_text)
    if board is None:
        return None
    if chess960:  # UCI_Chess960: the same position, castling written king-to-rook
        board = chess.Board(board.fen(shredder=True), chess960=True)
    try:
        for m in moves:
            move = board.parse_uci(m)
            if not move:
                return None
            board.push(move)
    except ValueError:
        return None
    return board


def check_uci_line(case: tuple[str, bool]) -> None:
    """A ``position`` / ``go`` line through the UCI engine's parser (with UCI_Chess960 off
    or on): a ``UciError`` or a position python-chess agrees with (and sane go limits)."""
    from zerochess.uci.protocol import UciError, parse_command, parse_go, parse_position

    line, chess960 = case

    def parse():
        command = parse_command(line)
        if command is None:
            return None
        if command.name == "position":
            return parse_position(command.params, chess960=chess960)
        return parse_go(command.params)

    out = check_clean(parse, error_types=(UciError,))
    if out is None:
        count("uci-line", "error")
        return
    count("uci-line", "result")
    if hasattr(out, "board"):
        words = line.split()
        moves = words[words.index("moves") + 1:] if "moves" in words else []
        if words[1] == "startpos":
            fen = "startpos"
        else:
            fen = " ".join(words[2:words.index("moves") if "moves" in words else None])
        ref = _reference_game(fen, moves, chess960)
        assert ref is not None and out.board.fen(shredder=True) == ref.fen(shredder=True)
        assert out.board.move_stack == ref.move_stack
        assert out.board.chess960 or not chess960
    else:
        for key in ("nodes", "depth", "movetime"):
            value = getattr(out, key, None)
            assert value is None or 0 <= value < 2**31


test_uci_fuzz, test_uci_fuzz_slow = fuzz(
    st.tuples(st.one_of(uci_position_commands(), uci_go_commands()), st.booleans()),
    fast=60, slow=1500)(check_uci_line)


@st.composite
def analysis_requests(draw) -> dict:
    start, moves = draw(uci_move_lists())
    fen = draw(st.one_of(st.just(start.fen()), fen_texts()))
    request = {"id": "q", "initialFen": fen,
               "moves": moves if isinstance(moves, list) else draw(setting_values())}
    if draw(st.booleans()):
        request["maxVisits"] = draw(st.one_of(st.integers(1, 400), setting_values()))
    return request


def check_analysis_request(request: dict) -> None:
    """A query through the analysis engine's parser: one error object naming the field, or
    turns whose positions python-chess agrees with."""
    import json

    from zerochess.analysis.protocol import parse_line
    from zerochess.analysis.settings import EngineSettings

    line = json.dumps(request, default=str)
    parsed = parse_line(line, EngineSettings(max_visits=400))
    if parsed.item is None:
        count("analysis-request", "error")
        (message,) = parsed.messages
        assert isinstance(message["error"], str) and "\n" not in message["error"]
        return
    count("analysis-request", "result")
    moves = json.loads(line)["moves"]
    ref = _reference_game(request["initialFen"], moves)
    assert ref is not None
    last = max(parsed.item.turns, key=lambda t: t.turn)
    assert last.turn == len(moves)
    assert last.board().fen(shredder=True) == ref.fen(shredder=True)


test_analysis_fuzz, test_analysis_fuzz_slow = fuzz(analysis_requests(), fast=60,
                                                   slow=1500)(check_analysis_request)
