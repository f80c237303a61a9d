"""Games with per-player networks and the ``on_search`` hook (``zerochess.games.play_games``),
and the training self-play hook built on them: examples that match the searches and the
games (replayed with python-chess), per-player params without recompiling.

All searches use batch 4 and 8 nodes per move (max_nodes 9) on two tiny SE-ResNets, so the
whole file shares two compiled searchers.
"""

from __future__ import annotations

import chess
import jax
import numpy as np
import pytest

from zerochess.chess.encoding import encode_board
from zerochess.chess.policy_map import index_to_move
from zerochess.errors import UserError
from zerochess.games import GameSpec, Opening, PlayerSpec, play_games
from zerochess.games.players import get_searcher
from zerochess.games.seeding import game_seed, search_seed
from zerochess.neural import make_resnet
from zerochess.search import SearchConfig, TemperatureSchedule
from zerochess.training import Player, dense_policy, expand_planes, play_training_games
from zerochess.training.selfplay_data import material_balance, policy_target, target_result

NODES, BATCH = 8, 4
MODEL = make_resnet(1, 8, seed=0)
OTHER = make_resnet(1, 8, seed=1)
FENS = [chess.STARTING_FEN, "r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5Q2/PPPP1PPP/RNB1K1NR w KQkq - 2 3",
        "8/8/8/4k3/8/3KP3/8/8 w - - 0 1", "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1"]


def _specs(n: int = 4, seed: int = 5, white: str = "sc", black: str = "puct") -> list[GameSpec]:
    return [GameSpec(g, white if g % 2 == 0 else black, black if g % 2 == 0 else white,
                     Opening(f"o{g % len(FENS)}", FENS[g % len(FENS)]), game_seed(seed, g))
            for g in range(n)]


def _spec(name: str, **search) -> PlayerSpec:
    return PlayerSpec(name, nodes=NODES, search=SearchConfig(**search),
                      temperature=TemperatureSchedule(temperature=1.0))


PLAYERS = {"sc": _spec("sc", n_scl=2), "puct": _spec("puct")}


@pytest.fixture(scope="module")
def games():
    players = {k: Player(v, MODEL) for k, v in PLAYERS.items()}
    return play_training_games(_specs(), players, batch_size=BATCH, max_plies=14)


def _moves(records) -> dict[int, tuple]:
    return {r.index: (tuple(r.moves), r.result, r.termination) for r in records}


def _play(specs, players, **kwargs):
    records, _ = play_games(specs, players, MODEL, batch_size=BATCH, max_plies=14,
                            shrink_tail=False, **kwargs)
    return records


@pytest.fixture(scope="module")
def plain():
    """The games of ``_specs()`` as ``zerochess selfplay`` plays them (no per-player
    networks, no hook)."""
    return _play(_specs(), PLAYERS)


def test_training_hook_plays_the_games_loop_games(games, plain):
    assert _moves(games.records) == _moves(plain)


def test_params_groups_do_not_change_the_games(plain):
    """Equal parameters held in another object make the players search in separate
    batches (one group per params object): the games must not change."""
    copy = jax.tree.map(np.array, MODEL.params)
    assert _moves(_play(_specs(), PLAYERS, params={"puct": copy})) == _moves(plain)


def test_per_player_params_equal_a_model_holding_them(plain):
    """Parameters given as data for one player give the same games as that player
    searching with a model object built with those parameters (another searcher)."""
    as_data = _play(_specs(), PLAYERS, params={"puct": OTHER.params})
    as_model = _play(_specs(), PLAYERS, models={"puct": OTHER})
    assert _moves(as_data) == _moves(as_model)
    assert _moves(as_data) != _moves(plain)


def test_on_search_reports_every_search(plain):
    calls = []
    records = _play(_specs(), PLAYERS, on_search=lambda *a: calls.append(a))
    assert _moves(records) == _moves(plain)  # a hook changes nothing
    by_index = {r.index: r for r in records}
    searched = sum(st.source == "search" for r in records for st in r.stats)
    assert len(calls) == searched
    for spec, ply, res, move in calls:
        rec = by_index[spec.index]
        k = len(res.board.move_stack)  # the record index of the move played from here
        assert rec.moves[k] == move.uci() and rec.stats[k].source == "search"
        assert ply == res.board.ply() and int(res.root_visits) == NODES + 1  # + the root
        assert chess.Board(rec.start_fen).ply() + k == ply
    # the result is that position's search: the searcher on the board alone agrees
    spec, ply, res, _ = calls[5]
    name = spec.white if res.board.turn == chess.WHITE else spec.black
    alone = get_searcher(MODEL, NODES + 1).search(
        [res.board] * BATCH, PLAYERS[name].search, NODES,
        seed=[search_seed(spec.seed, ply)] * BATCH)[0]
    assert alone.moves == res.moves
    np.testing.assert_array_equal(alone.visits, res.visits)


def test_network_errors():
    with pytest.raises(ValueError, match="has no model"):
        play_games(_specs(1), PLAYERS, None)
    with pytest.raises(ValueError, match="max_nodes 4 < "):
        play_games(_specs(1), PLAYERS, MODEL, max_nodes=4)


def test_examples_match_the_replayed_games(games):
    assert len(games.examples) == len(games.records) == 4
    total = 0
    for rec, ex in zip(games.records, games.examples, strict=True):
        board = chess.Board(rec.start_fen)
        boards = []
        for uci in rec.moves:
            boards.append(board.copy())
            board.push_uci(uci)
        assert board.fen() == rec.final_fen
        assert len(ex) == sum(1 for st in rec.stats if st.source == "search")
        planes = expand_planes(ex.plane_bits, ex.plane_values, np)
        dense = dense_policy(ex.policy_index, ex.policy_target, np)
        score = {"1-0": 1.0, "0-1": -1.0, "1/2-1/2": 0.0}[rec.result]
        for i in range(len(ex)):
            ply = int(ex.ply[i])
            b = boards[ply]
            np.testing.assert_array_equal(planes[i], encode_board(b))
            mover = score if b.turn == chess.WHITE else -score
            expected = [1.0, 0.0, 0.0] if mover > 0 else [0, 0, 1.0] if mover < 0 else [0, 1, 0]
            np.testing.assert_array_equal(ex.result[i], expected)
            assert ex.moves_left[i] == len(rec.moves) - ply
            legal = np.flatnonzero(dense[i] >= 0)
            assert {index_to_move(b, int(k)) for k in legal} == set(b.legal_moves)
            assert dense[i][legal].sum() == pytest.approx(1.0, abs=1e-6)
            assert -1 <= ex.root_q[i] <= 1 and 0 <= ex.root_d[i] <= 1
            assert rec.moves[ply] in [index_to_move(b, int(k)).uci() for k in legal]
        assert np.all(ex.game == rec.index)
        total += len(ex)
    assert total == games.stats.positions


def test_policy_target_is_the_root_visit_distribution():
    boards = [chess.Board(f) for f in FENS]
    results = get_searcher(MODEL, NODES + 1).search(boards, SearchConfig(), NODES, seed=3)
    for res in results:
        index, target = policy_target(res)
        visits = {m: int(n) for m, n in zip(res.moves, res.visits, strict=True)}
        total = sum(visits.values())
        assert total == NODES
        got = {index_to_move(res.board, int(k)): float(p)
               for k, p in zip(index, target, strict=True) if k >= 0}
        assert got.keys() == set(res.board.legal_moves)
        for move, p in got.items():
            assert p == pytest.approx(visits[move] / total, abs=1e-7)


def _compiled() -> int:
    """Programs compiled so far by every searcher (jitted functions and StatePrograms)."""
    from zerochess.search import api

    return sum(program._cache_size() for program in vars(api).values()
               if hasattr(program, "_cache_size") and not isinstance(program, type))


def test_players_params_are_used_and_never_recompile(games):
    searcher = get_searcher(MODEL, NODES + 1)
    spec = _spec("a")
    # two names, the same params: the same games as one player on both sides
    same = play_training_games(
        _specs(2, white="a", black="b"),
        {"a": Player(spec, MODEL, MODEL.params), "b": Player(spec, MODEL, MODEL.params)},
        batch_size=BATCH, max_plies=10)
    one = play_training_games(_specs(2, white="a", black="a"), {"a": Player(spec, MODEL)},
                              batch_size=BATCH, max_plies=10)
    assert [r.moves for r in same.records] == [r.moves for r in one.records]
    # other params for one side: other games, same compiled searcher
    mixed = play_training_games(
        _specs(2, white="a", black="b"),
        {"a": Player(spec, MODEL), "b": Player(spec, MODEL, OTHER.params, collect=False)},
        batch_size=BATCH, max_plies=10)
    assert [r.moves for r in mixed.records] != [r.moves for r in one.records]
    compiled = _compiled()
    assert compiled > 0
    # yet other parameter values (a training step's): nothing compiles
    halved = jax.tree.map(lambda x: x * 0.5, OTHER.params)
    play_training_games(
        _specs(2, white="a", black="b"),
        {"a": Player(spec, MODEL), "b": Player(spec, MODEL, halved, collect=False)},
        batch_size=BATCH, max_plies=10)
    assert _compiled() == compiled
    # only the collecting player's positions become examples
    for rec, ex in zip(mixed.records, mixed.examples, strict=True):
        movers = {"a" if (ply % 2 == 0) == (rec.white == "a") else "b" for ply in ex.ply}
        assert movers <= {"a"} and len(ex) > 0
    assert searcher.model is MODEL  # the searcher is left as it was


def test_unknown_player_is_an_error():
    with pytest.raises(UserError, match="unknown player"):
        play_training_games(_specs(1, white="x", black="y"), {"x": Player(_spec("x"), MODEL)})
    with pytest.raises(ValueError, match="no model"):
        Player(_spec("x"))


@pytest.mark.lc0
def test_engine_opponent_moves_are_not_examples():
    """An external UCI engine (lc0 + Maia-1900 at 1 node) as one side."""
    from zerochess.games.config import EngineSpec

    from lc0_reference import ensure_lc0

    ensure_lc0()  # installs the lc0 program and Maia when missing
    maia = PlayerSpec("maia", nodes=1, engine=EngineSpec(kind="lc0", weights="maia-1900",
                                                         nodes=1))
    played = play_training_games(
        _specs(2, white="puct", black="maia"),
        {"puct": Player(PLAYERS["puct"], MODEL), "maia": Player(maia)},
        batch_size=BATCH, max_plies=8)
    searched = 0
    for rec, ex in zip(played.records, played.examples, strict=True):
        ours = [i for i, st in enumerate(rec.stats) if st.source == "search"]
        assert sorted(ex.ply.tolist()) == ours
        assert all(st.source in ("search", "engine") for st in rec.stats)
        assert any(st.source == "engine" for st in rec.stats)
        searched += len(ours)
    assert searched > 0


def _material(board: chess.Board) -> int:
    """White minus black material by hand: P 1, N 3, B 3, R 5, Q 9."""
    values = {"P": 1, "N": 3, "B": 3, "R": 5, "Q": 9}
    return sum(values.get(p.symbol().upper(), 0) * (1 if p.color else -1)
               for p in board.piece_map().values())


@pytest.mark.parametrize("fen, balance", [
    (chess.STARTING_FEN, 0),
    ("rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", 9),
    ("4k3/8/8/8/8/8/4p3/R3K3 b - - 0 1", 4),
    ("4k3/pp6/8/8/8/8/8/4KN2 w - - 0 1", 1),
])
def test_material_balance_by_hand(fen, balance):
    assert material_balance(chess.Board(fen)) == balance == _material(chess.Board(fen))


def test_capped_games_value_targets_by_material(plain):
    """With ``adjudicate_material``, a capped game's examples learn the side ahead as the
    winner (the record stays a draw); other games learn their own result."""
    players = {k: Player(v, MODEL) for k, v in PLAYERS.items()}
    adj = play_training_games(_specs(), players, batch_size=BATCH, max_plies=14,
                              adjudicate_material=1)
    assert _moves(adj.records) == _moves(plain)  # the games themselves do not change
    checked = 0
    for rec, ex, target in zip(adj.records, adj.examples, adj.targets, strict=True):
        board = chess.Board(rec.start_fen)
        for uci in rec.moves:
            board.push_uci(uci)
        balance = _material(board)
        if rec.termination == "move_cap" and balance != 0:
            assert rec.result == "1/2-1/2"
            assert target == ("1-0" if balance > 0 else "0-1")
            checked += 1
        else:
            assert target == rec.result
        white = np.array([ply % 2 == 0 for ply in ex.ply])  # every FEN has white to move
        winner = {"1-0": 0, "0-1": 2}.get(target)
        for i in range(len(ex)):
            if winner is None:
                np.testing.assert_array_equal(ex.result[i], [0, 1, 0])
            else:
                expected = winner if white[i] else 2 - winner
                assert ex.result[i][expected] == 1.0
    assert adj.adjudicated == checked > 0
    assert target_result(adj.records[0], None) == adj.records[0].result


def test_evaluation_cache_never_answers_for_other_params():
    """A searcher with an evaluation cache, searching with one parameter set and then
    another, gives what a cache-free searcher gives with the second set."""
    from zerochess.search import Searcher

    boards = [chess.Board(f) for f in FENS]
    cached = Searcher(MODEL, max_nodes=NODES + 1, cache_size=512)
    fresh = Searcher(MODEL, max_nodes=NODES + 1)

    def visits(searcher, params):
        res = searcher.search(boards, SearchConfig(), num_simulations=NODES, seed=3,
                              params=params)
        return [(r.moves, np.asarray(r.visits).tolist(), np.round(r.wl, 6).tolist())
                for r in res]

    for first, second in ((OTHER.params, None), (None, OTHER.params)):
        visits(cached, first)  # fills the cache with the first set's outputs
        assert visits(cached, second) == visits(fresh, second)
    assert visits(fresh, OTHER.params) != visits(fresh, None)  # the two sets differ
