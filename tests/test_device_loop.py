"""The game loop on the device (``games.device_loop``: one compiled scan over plies) plays
the games of the host loop on python-chess (``play_games(rules="host")``): the same moves,
results, terminations and PGN numbers, and the same training examples; finished slots
take the next game of the queue, players of one game search with different settings and
node counts, and a game can end by a draw claim, checkmate or the move cap inside a call.

The reference is the host loop with python-chess's rules, whose searches the search tests
check against lc0's rules and a plain-Python reference; a wrong key, uniform, temperature,
node count, move choice, end rule or refill here changes a game.
"""

from __future__ import annotations

import numpy as np
import pytest

from zerochess import SearchConfig, load_model
from zerochess.games.config import PlayerSpec
from zerochess.games.loop import GameSpec, play_games
from zerochess.games.openings import Opening
from zerochess.games.seeding import game_seed
from zerochess.search.results import TemperatureSchedule
from zerochess.training.selfplay_data import Player, play_training_games

pytestmark = pytest.mark.tier2  # whole game batches; the scan compiles for ~1 min

TEMPERATURE = TemperatureSchedule(temperature=1.0, cutoff_move=8, endgame_temperature=0.4,
                                  visit_offset=-0.5, value_cutoff=20.0)
PLAYERS = {"puct": PlayerSpec("puct", nodes=16, temperature=TEMPERATURE),
           "sc": PlayerSpec("sc", nodes=12, search=SearchConfig(n_scl=1),
                            temperature=TEMPERATURE)}
OPENINGS = [
    Opening("start"),
    Opening("fifty", "8/8/4k3/8/8/3K4/8/R7 w - - 97 80"),  # a fifty-move claim at ply 2
    Opening("knights", moves=("g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6")),
    Opening("mate", "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1"),  # Rd8# at once, or not
    Opening("e4", moves=("e2e4",)),
    Opening("queen", "8/8/8/4k3/8/8/8/4KQ2 w - - 0 1"),
    Opening("over", "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"),  # stalemate before any search
]
MAX_PLIES = 36
# the searcher shape of test_selfplay and test_midgame_resume (8 trees of 17 nodes), and the
# scan test_midgame_resume and test_ply_sources play: one set of programs for the four files
BATCH = 8


def _specs(count: int) -> list[GameSpec]:
    return [GameSpec(g, "puct" if g % 2 == 0 else "sc", "sc" if g % 2 == 0 else "puct",
                     OPENINGS[g % len(OPENINGS)], game_seed(11, g)) for g in range(count)]


@pytest.fixture(scope="module")
def model():
    return load_model("builtin")


def _by_index(records):
    return {r.index: r for r in records}


def test_device_games_are_the_host_games(model):
    specs = _specs(16)
    device, stats = play_games(specs, PLAYERS, model, batch_size=BATCH, max_plies=MAX_PLIES,
                               rules="device")
    host, _ = play_games(specs, PLAYERS, model, batch_size=BATCH, max_plies=MAX_PLIES,
                         rules="host")
    # one step per call of 16 plies: the device loop ran (the host loop steps every ply)
    assert len(stats.steps) < max(len(r.moves) for r in host) // 2
    d, h = _by_index(device), _by_index(host)
    assert set(d) == set(h) == set(range(16))
    for g in h:
        a, b = d[g], h[g]
        assert (a.moves, a.result, a.termination, a.final_fen) == \
            (b.moves, b.result, b.termination, b.final_fen), g
        for x, y in zip(a.stats, b.stats, strict=True):
            assert (x.source, x.nodes, x.best, x.pv, x.best_share, x.played_share,
                    x.temperature, x.reused) == (y.source, y.nodes, y.best, y.pv, y.best_share,
                                                 y.played_share, y.temperature, y.reused), g
            if x.source == "search":  # float32 values (see the examples' test below)
                assert x.q == pytest.approx(y.q, abs=1e-6)
                assert x.wdl == pytest.approx(y.wdl, abs=1e-6)
    ends = {r.termination for r in host}
    assert {"fifty_moves", "move_cap", "stalemate"} <= ends, ends
    assert len({len(r.moves) for r in host}) >= 4  # slots were refilled at many plies
    # temperature moves: the played move is not always the best one
    assert any(s.best != m for r in host for s, m in zip(r.stats, r.moves, strict=True)
               if s.source == "search")


def test_device_training_examples_are_the_host_examples(model):
    players = {name: Player(spec, model) for name, spec in PLAYERS.items()}
    specs = _specs(6)
    out = {rules: play_training_games(specs, players, batch_size=BATCH, max_plies=MAX_PLIES,
                                      rules=rules, adjudicate_material=3)
           for rules in ("device", "host")}
    order = {rules: sorted(range(len(o.records)), key=lambda i: o.records[i].index)
             for rules, o in out.items()}
    pairs = list(zip(order["device"], order["host"], strict=True))
    assert len(pairs) == 6
    total = 0
    for i, j in pairs:
        a, b = out["device"].examples[i], out["host"].examples[j]
        assert out["device"].targets[i] == out["host"].targets[j]
        for name, x, y in zip(a._fields, a, b, strict=True):
            if name in ("root_q", "root_d", "best_q", "best_d"):
                # the trees' values: the scan runs the network on batches of other sizes
                # than the host loop's, and XLA's sums may round otherwise there
                np.testing.assert_allclose(x, y, rtol=0, atol=1e-6, err_msg=name)
            else:
                np.testing.assert_array_equal(x, y, err_msg=name)
        total += len(a)
    assert total > 50


def test_games_the_scan_cannot_play_step_on_the_host_loop(model):
    """Games the scan cannot play (here a player that reuses its tree) run on the host
    loop with device rules, step by step, and still give the host rules' games."""
    players = dict(PLAYERS, puct=PlayerSpec("puct", nodes=16, temperature=TEMPERATURE,
                                            tree_reuse=True))
    specs = _specs(3)
    device, stats = play_games(specs, players, model, batch_size=BATCH, max_plies=12,
                               rules="device")
    host, _ = play_games(specs, players, model, batch_size=BATCH, max_plies=12, rules="host")
    assert len(stats.steps) >= 10  # stepped every ply
    assert [r.moves for r in sorted(device, key=lambda r: r.index)] == \
        [r.moves for r in sorted(host, key=lambda r: r.index)]

