"""The two ply sources of the game loop give the same plies: the host source on device
rules (``play_games(scan=False)``, a ``SearchResult`` per ply through
``plies.from_result``) and the device scan (``scan=True``, its arrays through
``device_loop``) compared field for field: the move, its PGN statistics and its
training example, over PUCT and search-contempt players with a temperature schedule.

The trees are identical (one search program), so this isolates the ply logic: the move
rule, the seeds, the temperature by ply, the statistics, the example and the end."""

from __future__ import annotations

import dataclasses

import chess
import numpy as np
import pytest

from zerochess import SearchConfig, load_model
from zerochess.chess.types import GameStatus
from zerochess.env import start_states
from zerochess.games.config import PlayerSpec
from zerochess.games.loop import GameSpec, play_games
from zerochess.games.openings import Opening
from zerochess.games.records import game_end
from zerochess.games.seeding import game_seed
from zerochess.search import TemperatureSchedule

TEMPERATURE = TemperatureSchedule(temperature=1.0, cutoff_move=4, endgame_temperature=0.5,
                                  visit_offset=-0.5, value_cutoff=30.0)
PLAYERS = {"puct": PlayerSpec("puct", nodes=8, temperature=TEMPERATURE),
           "sc": PlayerSpec("sc", nodes=6, search=SearchConfig(n_scl=1),
                            temperature=TEMPERATURE)}
OPENINGS = [
    Opening("capture", moves=("e2e4", "d7d5")),  # exd5 on the board
    Opening("promotion", "8/4P1k1/8/8/8/8/6K1/8 w - - 0 1"),
    Opening("repetition", moves=("g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6")),
]
PLIES = 6


def _play(model, scan: bool):
    positions: dict[int, list] = {}
    specs = [GameSpec(g, "puct" if g % 2 == 0 else "sc", "sc" if g % 2 == 0 else "puct",
                      OPENINGS[g], game_seed(37, g)) for g in range(len(OPENINGS))]
    max_plies = max(len(o.moves) for o in OPENINGS) + PLIES
    records, _ = play_games(
        specs, PLAYERS, model, batch_size=8, max_plies=max_plies, rules="device",
        scan=scan, plies_per_call=16, max_nodes=17,  # test_device_loop's programs
        on_position=lambda spec, pos: positions.setdefault(spec.index, []).append(pos))
    return {r.index: r for r in records}, positions


def _same(x, y) -> bool:
    """Equal; floats to float32 rounding (the network may see other batch sizes)."""
    if isinstance(x, str) or x is None or isinstance(x, bool):
        return x == y
    x, y = np.asarray(x), np.asarray(y)
    if x.dtype.kind == "f" or y.dtype.kind == "f":
        return x.shape == y.shape and np.allclose(x, y, rtol=0, atol=1e-6, equal_nan=True)
    return x.shape == y.shape and np.array_equal(x, y)


@pytest.fixture(scope="module")
def model():
    return load_model("builtin")


@pytest.mark.tier2  # compiles the scan (~1 min) and the device search: ~2 min cold
def test_the_host_and_scan_sources_give_the_same_plies(model):
    host, host_positions = _play(model, scan=False)
    device, device_positions = _play(model, scan=True)
    assert host.keys() == device.keys() == set(range(len(OPENINGS)))
    searched = 0
    for g, rec in host.items():
        other = device[g]
        assert (rec.moves, rec.result, rec.termination) == (
            other.moves, other.result, other.termination), g
        for a, b in zip(rec.stats, other.stats, strict=True):
            for field in dataclasses.fields(a):
                x, y = getattr(a, field.name), getattr(b, field.name)
                assert _same(x, y), (g, field.name, x, y)
        assert len(host_positions[g]) == len(device_positions[g]) >= PLIES - 1
        for a, b in zip(host_positions[g], device_positions[g], strict=True):
            searched += 1
            for field in dataclasses.fields(a):
                x, y = getattr(a, field.name), getattr(b, field.name)
                assert _same(x, y), (g, a.move_index, field.name, x, y)
    assert searched >= len(OPENINGS) * (PLIES - 1)
    temperatures = {s.temperature for r in host.values() for s in r.stats
                    if s.source == "search"}
    assert temperatures == {1.0, 0.5}, temperatures  # both sides of the cutoff were played


@pytest.mark.parametrize("fen, moves, last", [
    ("8/8/4k3/8/8/3K4/8/R7 w - - 99 80", (), "a1a2"),  # the next move makes 100 half-moves
    (chess.STARTING_FEN, ("g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1"), "f6g8"),
])
def test_env_ends_a_game_one_move_later_than_the_game_loops(fen, moves, last):
    """The game loops end a game as python-chess does with draws claimed
    (``records.game_end``), so a fifty-move or threefold draw that the next move makes is
    claimed before it; ``Env`` (pgx's convention, its docstring) ends the game when the
    move has made it."""
    board = chess.Board(fen)
    for uci in moves:
        board.push_uci(uci)
    want = "fifty_moves" if not moves else "threefold_repetition"
    assert game_end(board, len(moves), None) == ("1/2-1/2", want)
    state = start_states([board])
    assert not bool(state.terminated[0])
    board.push_uci(last)
    after = start_states([board])
    assert bool(after.terminated[0])
    assert int(after.status[0]) == (GameStatus.RULE50 if not moves else GameStatus.REPETITION)


def test_the_scan_serves_a_run_only_when_it_can_play_it():
    """``device_loop.can_play``: the game loop's choice of ply source. Games with a player
    that reuses its tree, an engine, or players on other networks or parameters step on
    the host source (which the test above compares with the scan ply for ply); the same
    players on one network and parameters run on the scan."""
    from zerochess.games.config import EngineSpec
    from zerochess.games.device_loop import can_play

    net, other, params = object(), object(), object()
    same = {name: net for name in PLAYERS}
    same_params = {name: params for name in PLAYERS}
    assert can_play(PLAYERS, same, same_params) is None
    reuse = dict(PLAYERS, puct=dataclasses.replace(PLAYERS["puct"], tree_reuse=True))
    assert can_play(reuse, same, same_params) == "a player reuses its tree"
    engine = dict(PLAYERS, sf=PlayerSpec("sf", engine=EngineSpec(kind="stockfish")))
    assert can_play(engine, same | {"sf": net}, same_params | {"sf": params}) == \
        "an engine plays"
    assert "different networks" in can_play(PLAYERS, {"puct": net, "sc": other}, same_params)
    assert "different network parameters" in can_play(
        PLAYERS, same, {"puct": params, "sc": object()})
