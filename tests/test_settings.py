"""Types and ranges of settings in the library API: Searcher, SearchConfig, seeds,
simulation counts (no modulo 2**32, a full tree stops at once, trees that cannot fit are
refused before allocating), analyse(), run configs, temperature schedules."""

from __future__ import annotations

import math
import time

import chess
import numpy as np
import pytest

from zerochess.analysis import analyse
from zerochess.chess.expander import Expander
from zerochess.errors import ConfigError, ModelError, PositionError, UserError
from zerochess.games import SelfPlayConfig
from zerochess.games.seeding import game_seed
from zerochess.neural.toy import linear_model
from zerochess.search.api import MAX_NODES, Searcher, check_tree_memory
from zerochess.search.config import SearchConfig
from zerochess.search.results import TemperatureSchedule

from compile_count import count_compiles
from strategies import random_board
from tree_walk import sorted_legal


@pytest.fixture(scope="module")
def searcher() -> Searcher:
    return Searcher(linear_model(seed=2), max_nodes=10, expander=Expander(0), shards=1)


def test_search_config_stores_plain_checked_values():
    cfg = SearchConfig(cpuct=np.float32(2.5), n_scl=np.int64(5), fpu_absolute=np.bool_(True),
                       policy_temperature=1)
    assert type(cfg.cpuct) is float and type(cfg.n_scl) is int
    assert type(cfg.fpu_absolute) is bool and cfg.policy_temperature == 1.0
    assert SearchConfig(policy_temperature=0.1).policy_temperature == 0.1  # lc0's range ends
    assert SearchConfig(policy_temperature=10).policy_temperature == 10.0
    with pytest.raises(ConfigError, match="dirichlet_alpha must be > 0"):
        SearchConfig(dirichlet_alpha=0.0, dirichlet_epsilon=0.25)
    with pytest.raises(ConfigError, match=r"unknown search config key\(s\) \['cpuctt'\]"):
        SearchConfig.from_dict({"cpuctt": 1})


@pytest.mark.parametrize("alpha", [1e-30, 1e-3, 0.03])
def test_root_noise_of_a_tiny_alpha_is_still_a_distribution(searcher, alpha):
    """float32 gamma samples underflow to 0 for small alpha (all of them at 1e-30): the
    noise must still sum to 1 over the legal moves (priors with epsilon 1 are the noise)."""
    boards = [chess.Board(), random_board(3, 20)]
    cfg = SearchConfig(dirichlet_alpha=alpha, dirichlet_epsilon=1.0)
    for res in searcher.results(searcher.init(boards, cfg, seed=1)):
        assert res.prior.sum() == pytest.approx(1.0, abs=1e-5)
        assert np.all(np.isfinite(res.prior)) and np.all(res.prior >= 0)


@pytest.mark.parametrize("seed, needle", [("3", "integer"), (3.0, "integer"), (True, "integer"),
                                          (-1, "in \\[0, 2\\*\\*63\\)"), (2**63, "2\\*\\*63"),
                                          (2**70, "2\\*\\*63"), ([1, "2"], "seed\\[1\\]"),
                                          ([1, 2, 3], "3 seeds for 2 positions")])
def test_seeds(searcher, seed, needle):
    with pytest.raises(ConfigError, match=needle):
        searcher.init([chess.Board(), chess.Board()], SearchConfig(), seed)


def test_init_arguments(searcher):
    board = chess.Board()
    cases = [((board,), PositionError, "list of chess.Board"),
             (([],), PositionError, "no positions"),
             (([board, "startpos"],), PositionError, "position 1: expected a chess.Board"),
             (([board], {"cpuct": 1}), ConfigError, "SearchConfig or a list"),
             (([board], [SearchConfig(), SearchConfig()]), ConfigError, "2 configs for 1"),
             (([board], ["puct"]), ConfigError, "configs\\[0\\] must be a SearchConfig")]
    for args, error, needle in cases:
        with pytest.raises(error, match=needle):
            searcher.init(*args)
    mated = chess.Board("7k/6Q1/6K1/8/8/8/8/8 b - - 0 1")
    with pytest.raises(PositionError, match="no legal moves"):
        searcher.init([mated])


@pytest.mark.parametrize("count, needle", [(16.5, "integer"), ("5", "integer"), (None, "integer"),
                                           (True, "integer"), (math.nan, "integer"),
                                           (-1, ">= 0"), (2**31, "<= 2,147,483,647"),
                                           (2**32 + 4, "<= 2,147,483,647"),
                                           ([1], "1 simulation counts for 2 trees"),
                                           ([1, 2.5], "num_simulations\\[1\\]")])
def test_simulation_counts_are_exact_or_refused(searcher, count, needle):
    batch = searcher.init([chess.Board(), chess.Board()], SearchConfig(), 0)
    with pytest.raises(ConfigError, match=needle):
        searcher.run(batch, count)


def test_a_full_tree_stops_at_once_and_resumes_the_same(searcher):
    boards = [random_board(s, 12) for s in (1, 2)]
    searcher.run(searcher.init(boards, SearchConfig(), 0), 1)  # compile first
    t0 = time.perf_counter()
    batch = searcher.run(searcher.init(boards, SearchConfig(), 0), 2**31 - 1)
    elapsed = time.perf_counter() - t0
    for res in searcher.results(batch):
        assert res.nodes_used == 10 and res.out_of_nodes
        assert res.root_visits - 1 + res.dropped_simulations == 2**31 - 1
    # one step per node at most, not one per simulation (2**31 steps would take days)
    assert elapsed < 60, elapsed
    with pytest.raises(ConfigError, match="would pass the limit"):
        searcher.run(batch, 1)
    one = searcher.results(searcher.run(searcher.init(boards, SearchConfig(), 5), 40))
    split = searcher.init(boards, SearchConfig(), 5)
    for chunk in (3, 0, 4, 13, 20):
        split = searcher.run(split, chunk)
    for a, b in zip(one, searcher.results(split), strict=True):
        assert list(a.visits) == list(b.visits)
        assert a.dropped_simulations == b.dropped_simulations > 0


def test_large_counters_are_searched_and_encoded_exactly(searcher):
    """Halfmove clock 32767 (int16 overflow inside the search before issue 9), fullmove
    1,000,000 and the largest counters held: every child is a fifty-move draw (lc0 makes
    a child with rule50 >= 100 terminal), and the rule50 plane is the raw count, as lc0's
    classic input feeds it."""
    from zerochess.chess.encoding import AUX_BASE, encode_board
    from zerochess.positions import MAX_COUNTER, parse_fen

    boards = [parse_fen("4k3/8/8/8/8/8/8/4K2R w - - 32767 1000000"),
              parse_fen(f"4k3/8/8/8/8/8/8/4K2R w - - {MAX_COUNTER - 1} {MAX_COUNTER}")]
    for res, board in zip(searcher.search(boards, SearchConfig(), 9), boards, strict=True):
        assert res.moves == sorted_legal(board)
        visited = res.visits > 0  # no move resets the clock here (no pawn, no capture)
        assert visited.any() and res.root_visits == 10  # the root's own evaluation + 9
        assert np.all(res.d[visited] == 1.0) and np.all(res.wl[visited] == 0.0)
        planes = encode_board(board)
        assert np.all(planes[AUX_BASE + 5] == board.halfmove_clock)


def test_trees_that_cannot_fit_are_refused_before_allocating():
    with pytest.raises(ConfigError, match="max_nodes must be at most about"):
        check_tree_memory(8, MAX_NODES)
    s = Searcher(linear_model(seed=2), max_nodes=MAX_NODES, expander=Expander(0), shards=1)
    with pytest.raises(ConfigError, match="bytes per node"):
        s.init([chess.Board()])
    for bad in (10.5, "10", 1, 2**31, None):
        with pytest.raises(ConfigError, match="max_nodes"):
            Searcher(linear_model(seed=2), max_nodes=bad)
    with pytest.raises(ConfigError, match="workers"):
        Searcher(linear_model(seed=2), num_workers=-1)
    with pytest.raises(ConfigError, match="model must be a zerochess Model"):
        Searcher("builtin")


@pytest.mark.parametrize("kwargs, error, needle", [
    ({"visits": 16.5}, ConfigError, "visits must be an integer"),
    ({"visits": "8"}, ConfigError, "visits must be an integer"),
    ({"visits": math.inf}, ConfigError, "visits must be an integer"),
    ({"visits": 10**12}, ConfigError, "visits must be <="),
    ({"visits": 2**31 - 2}, ConfigError, "visits must be at most about"),  # memory check
    ({"seed": "3"}, ConfigError, "seed"),
    ({"seed": 2**70}, ConfigError, "seed"),
    ({"workers": -1}, ConfigError, "workers"),
    ({"workers": 2.5}, ConfigError, "workers"),
    ({"model": None}, ModelError, "model must be"),
    ({"model": "resnet:0x1"}, ModelError, "blocks"),
    ({"contempt_limit": 3}, ConfigError, "needs search='contempt'"),
    ({"search": "contempt", "contempt_limit": math.nan}, ConfigError, "contempt limit"),
    ({"search": "mcts"}, ConfigError, "search must be one of"),
    ({"config": {"cpuct": 1}}, ConfigError, "config must be a SearchConfig"),
    ({"progress": 3}, ConfigError, "progress"),
])
def test_analyse_arguments(kwargs, error, needle):
    with pytest.raises(error, match=needle):
        analyse("startpos", **{"visits": 8, **kwargs})


def test_analyse_positions():
    with pytest.raises(PositionError, match="empty FEN"):
        analyse("", visits=1)
    with pytest.raises(PositionError, match="no positions"):
        analyse([], visits=1)
    with pytest.raises(PositionError, match="position 1: .*trailing text"):
        analyse(["startpos", "k7/8/8/8/8/8/8/K7 w - - 0 1 x"], visits=1)


def test_analyse_compiles_a_comparator_once():
    """Repeated analyse() calls with an mctx policy and the same shapes compile nothing
    (they recompiled on every call before the architecture work: ~15 s each on CPU)."""
    model = linear_model(seed=6)
    boards = ["startpos", "k7/8/8/8/8/8/8/K5Q1 w - - 0 1"]
    analyse(boards, visits=6, search="gumbel", model=model, workers=0)
    compiles, res = count_compiles(
        lambda: analyse(boards, visits=6, search="gumbel", model=model, workers=0, seed=2))
    assert compiles == 0 and all(int(r.visits.sum()) == 6 for r in res)


def test_run_config_seeds_do_not_alias():
    base = {"games": 2, "player": {"nodes": 4}}
    for bad in (2**70, 2**64, -1, "3", 1.5, True):
        with pytest.raises(ConfigError, match="seed"):
            SelfPlayConfig.from_dict({**base, "seed": bad})
    big = SelfPlayConfig.from_dict({**base, "seed": 2**63 - 1})
    assert big.seed == 2**63 - 1
    assert game_seed(big.seed, 0) != game_seed(0, 0)  # 2**70 & (2**64 - 1) == 0 aliased


def test_run_config_limits():
    base = {"games": 2, "player": {"nodes": 4}}
    for key, value in (("games", 10**11), ("batch_size", 10**9), ("games", math.nan),
                       ("games", "1e999")):
        with pytest.raises(ConfigError, match=key):
            SelfPlayConfig.from_dict({**base, key: value})
    with pytest.raises(ConfigError, match="player.nodes"):
        SelfPlayConfig.from_dict({**base, "player": {"nodes": 10**12}})
    for key in ("model", "name"):
        with pytest.raises(ConfigError, match=key):
            SelfPlayConfig.from_dict({**base, key: None})
    with pytest.raises(ConfigError, match="expected a mapping"):
        SelfPlayConfig.from_dict({**base, "openings": [1, 2]})


@pytest.mark.parametrize("values", [{"temperature": math.nan}, {"temperature": math.inf},
                                    {"temperature": "x"}, {"decay_moves": 2.5},
                                    {"visit_offset": -1e9}, {"cutoff_move": True},
                                    {"value_cutoff": -1}])
def test_temperature_schedules(values):
    with pytest.raises(ConfigError):
        TemperatureSchedule(**values)


def test_errors_share_one_base():
    for err in (ConfigError, ModelError, PositionError):
        assert issubclass(err, UserError) and issubclass(err, ValueError)
