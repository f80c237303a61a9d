"""UCI engine pieces without a search: command parsing, options, scores, info formats."""

from __future__ import annotations

import math

import chess
import numpy as np
import pytest

from zerochess.chess.policy_map import move_to_index
from zerochess.search.config import SearchConfig
from zerochess.search.results import SearchResult
from zerochess.search.scores import centipawns, mate_in_moves, wdl_mu, wdl_permille
from zerochess.uci.info import (
    ThinkingInfo,
    format_info,
    ponder_infos,
    thinking_infos,
    verbose_move_stats,
)
from zerochess.uci.options import (
    AUTO_MINIBATCH,
    MAX_CACHE_ENTRIES,
    OPTIONS,
    OptionError,
    OptionValues,
    core_settings,
    find_option,
    pending_report,
)
from zerochess.uci.protocol import UciError, parse_command, parse_go, parse_position

# --- commands --------------------------------------------------------------------------------


def test_go_every_form():
    cmd = parse_command("go wtime 1000 btime 2000 winc 10 binc 20 movestogo 5 depth 3 mate 2 "
                        "nodes 400 movetime 50 infinite searchmoves e2e4 d2d4 ponder")
    go = parse_go(cmd.params)
    assert (go.wtime, go.btime, go.winc, go.binc, go.movestogo) == (1000, 2000, 10, 20, 5)
    assert (go.depth, go.mate, go.nodes, go.movetime) == (3, 2, 400, 50)
    assert go.infinite and go.ponder and go.searchmoves == ("e2e4", "d2d4")
    assert go.own_time(black=True) == 2000 and go.own_increment(black=False) == 10
    bare = parse_go(parse_command("go").params)
    assert bare == type(go)() and not bare.has_clock


@pytest.mark.parametrize("line, fragment", [
    ("go wtime", "go wtime: expected a value"),
    ("go wtime 10x", "go wtime: invalid value '10x'"),
    ("go nodes -5", "go nodes: must be >= 0"),
    ("go infinite 5", "unexpected token '5' after go infinite"),
    ("go movetime 99999999999", "out of range"),
    ("go searchmoves", "expected at least one move"),
])
def test_go_bad_values_name_the_problem(line, fragment):
    with pytest.raises(UciError, match=fragment):
        parse_go(parse_command(line).params)


def test_unknown_commands_and_tokens():
    assert parse_command("   ") is None
    with pytest.raises(UciError, match="unknown command: .hello world."):
        parse_command("hello world")
    with pytest.raises(UciError, match="unexpected token 'now'"):
        parse_command("stop now")  # lc0: tokens before any keyword are errors
    with pytest.raises(UciError, match="unexpected token 'fast'"):
        parse_command("go fast")


def test_setoption_names_with_spaces_and_raw_values():
    cmd = parse_command("setoption name Weights File value /tmp/my  net.pb.gz")
    assert cmd.params == {"name": "Weights File", "value": "/tmp/my  net.pb.gz"}
    assert parse_command("setoption name ClearTree").params == {"name": "ClearTree"}
    assert parse_command("setoption name TimeManager value smooth(init-nps=1.0)").params[
        "value"] == "smooth(init-nps=1.0)"
    for bad in ("setoption", "setoption value 3", "setoption name", "setoption names X"):
        with pytest.raises(UciError):
            parse_command(bad)


def test_position_forms():
    p = parse_position(parse_command("position startpos moves e2e4 e7e5 g1f3").params)
    expected = chess.Board()
    for m in ("e2e4", "e7e5", "g1f3"):
        expected.push_uci(m)
    assert p.board == expected and p.board.move_stack == expected.move_stack
    assert p.key == (chess.STARTING_FEN, ("e2e4", "e7e5", "g1f3"))
    fen = "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1"
    p = parse_position(parse_command(f"position fen {fen} moves a1a8").params)
    assert p.board.is_checkmate() and p.key[0] == fen
    with pytest.raises(UciError, match="illegal move 'e2e5'"):
        parse_position(parse_command("position startpos moves e2e5").params)
    with pytest.raises(UciError, match="either fen or startpos"):
        parse_position(parse_command("position moves e2e4").params)
    with pytest.raises(UciError, match="illegal position .8/8/8"):
        parse_position(parse_command("position fen 8/8/8/8/8/8/8/8 w - - 0 1").params)


# --- options ---------------------------------------------------------------------------------

# lc0's defaults (params.cc, shared_params.cc, stoppers, uciloop.cc, engine.cc, wrapper.cc)
LC0_DEFAULTS = {
    "CPuct": 1.745, "CPuctBase": 38739.0, "CPuctFactor": 3.894, "CPuctAtRoot": 1.745,
    "CPuctBaseAtRoot": 38739.0, "CPuctFactorAtRoot": 3.894, "FpuStrategy": "reduction",
    "FpuValue": 0.330, "FpuStrategyAtRoot": "same", "FpuValueAtRoot": 1.0,
    "PolicyTemperature": 1.359, "DrawScore": 0.0, "Temperature": 0.0, "TempDecayMoves": 0,
    "TempDecayDelayMoves": 0, "TempCutoffMove": 0, "TempEndgame": 0.0, "TempValueCutoff": 100.0,
    "TempVisitOffset": 0.0, "DirichletNoiseEpsilon": 0.0, "DirichletNoiseAlpha": 0.3,
    "SmartPruningFactor": 1.33, "MinibatchSize": 0, "MaxCollisionEvents": 917,
    "MaxCollisionVisits": 80000, "NNCacheSize": 2000000, "MovesLeftMaxEffect": 0.0345,
    "MovesLeftThreshold": 0.8, "MovesLeftSlope": 0.0027, "MovesLeftConstantFactor": 0.0,
    "MovesLeftScaledFactor": 1.6521, "MovesLeftQuadraticFactor": -0.6521, "MultiPV": 1,
    "VerboseMoveStats": False, "UCI_ShowWDL": False, "UCI_ShowMovesLeft": False,
    "Ponder": False, "MoveOverheadMs": 200, "TimeManager": "legacy", "Threads": 0,
    "ScLimit": 1_000_000_000, "KLDGainAverageInterval": 100, "MinimumKLDGainPerNode": 0.0,
    "ScoreType": "WDL_mu", "Slowmover": 1.0, "RamLimitMb": 0, "StickyEndgames": True,
    "MaxCollisionVisitsScalingStart": 28, "MaxCollisionVisitsScalingEnd": 145000,
    "MaxCollisionVisitsScalingPower": 1.25, "MaxPrefetch": 32, "OutOfOrderEval": True,
    "MaxOutOfOrderEvalsFactor": 2.4, "CacheHistoryLength": 0, "TwoFoldDraws": True,
}


def test_lc0_names_and_defaults():
    values = OptionValues()
    for name, default in LC0_DEFAULTS.items():
        assert values[name] == pytest.approx(default) if isinstance(default, float) \
            else values[name] == default, name
    for extra in ("WeightsFile", "Seed", "MaxTreeNodes"):
        find_option(extra)
    names = [o.name for o in OPTIONS]
    assert len(names) == len({n.lower() for n in names})


def test_option_lines_as_lc0_prints_them():
    lines = {o.name: o.uci_line() for o in OPTIONS}
    assert lines["CPuct"] == "option name CPuct type string default 1.745000"
    assert lines["MultiPV"] == "option name MultiPV type spin default 1 min 1 max 500"
    assert lines["Ponder"] == "option name Ponder type check default false"
    assert lines["FpuStrategy"] == ("option name FpuStrategy type combo default reduction "
                                    "var reduction var absolute")
    assert lines["ClearTree"] == "option name ClearTree type button"
    assert lines["TimeManager"] == "option name TimeManager type string default legacy"


def test_option_validation_and_case_insensitive_names():
    values = OptionValues()
    values.set("cpuct", "2.5")
    values.set("fpustrategy", "ABSOLUTE")
    assert values["CPuct"] == 2.5 and values["FpuStrategy"] == "absolute"
    for name, text, fragment in [
        ("CPuct", "abc", "needs a number"), ("CPuct", "101", "between 0 and 100"),
        ("MultiPV", "0", "between 1 and 500"), ("MultiPV", "2.5", "needs an integer"),
        ("Ponder", "yes", "true or false"), ("FpuStrategy", "sideways", "must be one of"),
        ("NoSuchOption", "1", "unknown option 'NoSuchOption'"), ("CPuct", "nan", "finite"),
    ]:
        with pytest.raises(OptionError, match=fragment):
            values.set(name, text)
    assert values["CPuct"] == 2.5 and values["MultiPV"] == 1  # unchanged after errors


def test_search_config_mapping():
    values = OptionValues()
    default = values.search_config()
    assert default == SearchConfig()  # lc0 defaults are the library's
    values.set("CPuct", "2.0")
    values.set("CPuctAtRoot", "3.0")
    assert values.search_config().cpuct_root is None  # ignored unless RootHasOwnCpuctParams
    values.set("RootHasOwnCpuctParams", "true")
    values.set("FpuStrategyAtRoot", "absolute")
    values.set("ScLimit", "5")
    values.set("DrawScore", "-0.1")
    config = values.search_config()
    assert (config.cpuct, config.cpuct_root) == (2.0, 3.0)
    assert config.fpu_absolute_root is True and config.fpu_value_root == 1.0
    assert config.n_scl == 5 and config.draw_score == -0.1
    values.set("Temperature", "0.7")
    values.set("TempDecayMoves", "5")
    schedule = values.temperature_schedule()
    assert schedule.temperature == 0.7 and schedule.at(2 * 5) == 0.0


def test_pending_options_go_through_one_seam():
    from zerochess.search.api import Searcher

    values = OptionValues()
    assert pending_report(values, SearchConfig, Searcher) == []
    values.set("MinibatchSize", "256")
    values.set("MovesLeftSlope", "0.01")  # issue 11's core has the moves-left utility
    values.set("MaxPrefetch", "16")  # pending: no prefetching in the core
    values.set("OutOfOrderEval", "false")  # ignored by design
    lines = pending_report(values, SearchConfig, Searcher)
    # the core takes leaves per step, an evaluation cache and its history length
    _, searcher_kwargs = core_settings(values, SearchConfig, Searcher)
    assert searcher_kwargs == {"leaves_per_step": 256, "cache_size": MAX_CACHE_ENTRIES,
                               "cache_history_length": 0}
    assert len(lines) == 2, lines
    assert lines[0].startswith("option MaxPrefetch=16 is stored but not used by this search "
                               "core yet (")
    assert lines[1].startswith("option OutOfOrderEval=False is accepted for lc0 "
                               "compatibility but has no effect (")
    assert core_settings(values, SearchConfig, Searcher)[0]["moves_left_slope"] == 0.01

    class OldSearcher:  # a core without those arguments: the options stay pending
        def __init__(self, model, max_nodes=1024):
            pass

    lines = pending_report(values, SearchConfig, OldSearcher)
    assert len(lines) == 3 and any("MinibatchSize=256" in x for x in lines)


def test_search_core_options_reach_the_core():
    """Every lc0 option marked active that maps into the core arrives there with its value;
    MinibatchSize 0 (lc0: the backend picks) and the NNCacheSize cap are the engine's."""
    from zerochess.search.api import Searcher

    values = OptionValues()
    _, searcher_kwargs = core_settings(values, SearchConfig, Searcher)
    assert 1 < AUTO_MINIBATCH <= 1024 and MAX_CACHE_ENTRIES < 2_000_000
    assert searcher_kwargs == {"leaves_per_step": AUTO_MINIBATCH,
                               "cache_size": MAX_CACHE_ENTRIES, "cache_history_length": 0}
    changes = {"MaxCollisionEvents": ("5", "max_collision_events", 5),
               "MaxCollisionVisits": ("77", "max_collision_visits", 77),
               "MaxCollisionVisitsScalingStart": ("3", "max_collision_visits_scaling_start", 3),
               "MaxCollisionVisitsScalingEnd": ("900", "max_collision_visits_scaling_end", 900),
               "MaxCollisionVisitsScalingPower": ("2.5", "max_collision_visits_scaling_power",
                                                  2.5),
               "StickyEndgames": ("false", "certainty_propagation", False)}
    for name, (text, field, _) in changes.items():
        assert find_option(name).status == "active", name
        assert getattr(values.search_config(), field) != changes[name][2], name
        values.set(name, text)
    config = values.search_config()
    for name, (_, field, expected) in changes.items():
        assert getattr(config, field) == expected, name
    values.set("MinibatchSize", "7")
    values.set("NNCacheSize", "0")
    values.set("CacheHistoryLength", "3")
    assert core_settings(values, SearchConfig, Searcher)[1] == {
        "leaves_per_step": 7, "cache_size": 0, "cache_history_length": 3}
    assert pending_report(values, SearchConfig, Searcher) == []
    # every option is active, pending or ignored; the last two say why in their note
    for option in OPTIONS:
        assert option.status in ("active", "pending", "ignored"), option.name
        if option.status == "ignored" or option.name in ("MaxPrefetch", "TwoFoldDraws"):
            assert option.note, option.name


def test_tree_size_from_ram_limit():
    values = OptionValues()
    values.set("MaxTreeNodes", "100000")
    assert values.tree_nodes(3000) == 100000
    values.set("RamLimitMb", "30")
    assert values.tree_nodes(3000) == 10000  # 30e6 / 3000


# --- scores ----------------------------------------------------------------------------------

def _wdl_from_logistic(mu: float, s: float) -> tuple[float, float]:
    w = 1 / (1 + math.exp(-(mu - 1) / s))
    loss = 1 / (1 + math.exp((1 + mu) / s))
    return w - loss, 1 - w - loss


def test_wdl_mu_recovers_the_logistic_fit():
    for mu, s in [(0.503, 0.3), (-1.217, 0.6), (0.057, 0.2)]:
        wl, d = _wdl_from_logistic(mu, s)
        assert wdl_mu(wl, d) == pytest.approx(mu, abs=1e-9)
        assert centipawns(wl, d) == int(100 * mu)  # truncated like lc0's int field
    assert wdl_mu(0.9, 0.0) == 0.0  # no draws: no fit; falls back to the tan formula
    assert centipawns(0.9, 0.0) == int(45 * math.tan(1.56728071628 * 0.9))


def test_score_types_and_truncation():
    assert centipawns(0.5, 0.2, score_type="centipawn") == 89  # 90 tan(0.781877) = 89.37
    assert centipawns(-0.5, 0.2, score_type="centipawn") == -89  # toward zero, not -90
    assert centipawns(0.9, 0.0, score_type="centipawn") == 545  # 545.83
    # lc0 v0.21.2's formula: 111.714640912 * tan(1.5620688421 * 0.5) = 110.74
    assert centipawns(0.5, 0.2, 0.5, score_type="centipawn_v021") == 110
    assert centipawns(0.25, 0.5, 0.3, score_type="Q") == 3000
    assert centipawns(0.25, 0.5, 0.3, score_type="W-L") == 2500
    assert centipawns(0.0, 0.5, score_type="win_percentage") == 5000
    with pytest.raises(ValueError, match="unknown score type"):
        centipawns(0.0, 0.5, score_type="elo")


def test_wdl_permille_and_mate():
    assert wdl_permille(0.1, 0.6) == (250, 600, 150)
    assert sum(wdl_permille(0.333, 0.3337)) == 1000
    assert wdl_permille(1.0, 0.0) == (1000, 0, 0)
    assert wdl_permille(0.0, 1.0) == (0, 1000, 0)
    assert mate_in_moves(0, 1.0) == 1 and mate_in_moves(3, 1.0) == 2
    assert mate_in_moves(4, -1.0) == -3


# --- info lines -------------------------------------------------------------------------------

def test_format_info_order_and_switches():
    info = ThinkingInfo(depth=0, seldepth=7, time=12, nodes=345, score_cp=-20, wdl=(1, 2, 997),
                        moves_left=30, nps=99, eps=80, tbhits=0, multipv=2,
                        pv=["e2e4", "e7e5"])
    assert format_info(info) == ("info depth 1 seldepth 7 time 12 nodes 345 score cp -20 nps 99 "
                                 "tbhits 0 multipv 2 pv e2e4 e7e5")
    assert format_info(info, show_wdl=True, show_moves_left=True, show_eps=True) == (
        "info depth 1 seldepth 7 time 12 nodes 345 score cp -20 wdl 1 2 997 movesleft 30 "
        "nps 99 eps 80 tbhits 0 multipv 2 pv e2e4 e7e5")
    assert format_info(ThinkingInfo(comment="hello")) == "info string hello"


def _view(board: chess.Board, visits, wl, d, prior, pvs, mates=None,
          u=None, fpu=0.0) -> SearchResult:
    """A root picture as ``search.view`` reads it (V 0.05 for visited moves, depth 3,
    seldepth 9; ``u``: lc0's U of each move, Q shown = the FPU for unvisited ones)."""
    moves = list(board.legal_moves)[:len(visits)]
    m = len(moves)
    visits = np.asarray(visits)
    wl, d = np.asarray(wl, np.float32), np.asarray(d, np.float32)
    q = np.where(visits > 0, wl, np.nan).astype(np.float32)
    shown = np.where(visits > 0, wl, fpu).astype(np.float32)
    u = np.zeros(m, np.float32) if u is None else np.asarray(u, np.float32)
    root_visits = int(visits.sum()) + 1
    return SearchResult(
        board=board, moves=moves, visits=visits, q=q, wl=wl, d=d,
        prior=np.asarray(prior, np.float32), policy=np.asarray(prior, np.float32),
        pvs=pvs, best_index=int(np.argmax(visits)), root_visits=root_visits, root_q=0.1,
        root_wdl=np.array([0.5, 0.25, 0.25]), raw_wdl=np.array([0.3, 0.5, 0.2]),
        nodes_used=root_visits, dropped_simulations=0,
        mates=np.zeros(m, bool) if mates is None else np.asarray(mates),
        v=np.where(visits > 0, 0.05, np.nan).astype(np.float32),
        in_flight=np.zeros(m, np.int64), m=np.full(m, np.nan, np.float32),
        playouts=root_visits, depth=3.0, seldepth=9,
        q_shown=shown, u=u, s=shown + u, fpu=fpu)


def test_multipv_lines_best_first_with_root_defaults_for_unvisited():
    board = chess.Board()
    moves = list(board.legal_moves)
    pvs = [[chess.Move.from_uci("e7e5")], [], [], []]
    view = _view(board, [5, 9, 0, 0], [0.2, 0.1, 0, 0], [0.5, 0.6, 0, 0],
                 [0.1, 0.2, 0.3, 0.05], [pvs[1], pvs[0], [], []])
    infos = thinking_infos(view, time_ms=10, nodes=15, nps=1500, eps=1500, multipv=3,
                           score_type="W-L", has_wdl=True, per_pv_counters=False,
                           draw_score=0.0)
    assert [i.multipv for i in infos] == [1, 2, 3]
    assert infos[0].pv[0] == moves[1].uci() and infos[0].score_cp == 1000
    assert infos[1].pv[0] == moves[0].uci() and infos[1].score_cp == 2000
    # unvisited: the root's own W-L (0.5 - 0.25) from its side, ordered by prior
    assert infos[2].pv == [moves[2].uci()] and infos[2].score_cp == 2500
    assert infos[0].wdl == wdl_permille(0.1, 0.6)
    single = thinking_infos(view, time_ms=10, nodes=15, nps=1, eps=1, multipv=1,
                            score_type="W-L", has_wdl=True, per_pv_counters=True, draw_score=0)
    assert len(single) == 1 and single[0].multipv == -1 and single[0].nodes == 9


def test_mate_score_for_a_mating_move():
    board = chess.Board("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1")
    mate = chess.Move.from_uci("a1a8")
    moves = list(board.legal_moves)
    i = moves.index(mate)
    visits = np.zeros(len(moves), int)
    visits[i] = 5
    wl = np.zeros(len(moves))
    wl[i] = 1.0
    mates = np.zeros(len(moves), bool)
    mates[i] = True
    view = _view(board, visits, wl, np.zeros(len(moves)), np.full(len(moves), 0.05),
                 [[] for _ in moves], mates)
    info = thinking_infos(view, time_ms=1, nodes=6, nps=1, eps=1, multipv=1,
                          score_type="WDL_mu", has_wdl=True, per_pv_counters=False,
                          draw_score=0.0)[0]
    assert info.mate == 1 and info.score_cp is None and info.pv == ["a1a8"]


def test_verbose_move_stats_lc0_layout():
    board = chess.Board()
    # the values are the search's (tests/test_read_path.py checks them against lc0's
    # formulas on a real tree); here: lc0's layout and order
    fpu = 0.1 - 0.330 * math.sqrt(0.5)
    view = _view(board, [3, 0, 10], [0.1, 0, -0.05], [0.5, 0, 0.6], [0.2, 0.5, 0.3],
                 [[], [], []], u=[0.01, 0.6, 0.002], fpu=fpu)
    lines = verbose_move_stats(view)
    moves = list(board.legal_moves)
    assert len(lines) == 4 and lines[-1].startswith("node  (3   ) N:      14 (+ 0) (P: 50.00%)")
    # ascending by N: the unvisited move first, the most visited last
    assert [x.split()[0] for x in lines[:3]] == [moves[1].uci(), moves[0].uci(), moves[2].uci()]
    index = move_to_index(board, moves[1])
    assert lines[0].startswith(
        f"{moves[1].uci()}  ({index:<4}) N:       0 (+ 0) (P: 50.00%) (WL:  -.-----) (D: -.---) "
        "(M:  -.-) (Q: ")
    assert "(U: 0.60000)" in lines[0] and f"(S: {fpu + 0.6:8.5f})" in lines[0]
    assert f"(Q: {fpu:8.5f})" in lines[0] and "(V:  -.----)" in lines[0]
    assert "(WL:  0.10000) (D: 0.500) (M:  0.0) (Q:  0.10000)" in lines[1]
    assert "(V:  0.0500)" in lines[1]
    assert lines[-1].endswith("(V:  0.1000) ")  # raw root value W - L = 0.3 - 0.2


def test_ponder_rewrite_as_lc0():
    infos = [ThinkingInfo(depth=5, seldepth=9, score_cp=30, wdl=(400, 500, 100), multipv=-1,
                          pv=["e7e5", "g1f3", "b8c6"])]
    out = ponder_infos(infos, "e7e5")
    assert len(out) == 1
    assert (out[0].depth, out[0].seldepth, out[0].score_cp) == (4, 8, -30)
    assert out[0].wdl == (100, 500, 400) and out[0].pv == ["g1f3", "b8c6"]
    other = ponder_infos(infos, "c7c5")[0]
    assert other.pv == [] and other.score_cp == -30
