"""The zerochess CLI: analyse output (JSON schema, table), batching from EPD, and errors."""

from __future__ import annotations

import json
import subprocess
import sys

import chess
import pytest

from zerochess.cli import main
from zerochess.search.results import TemperatureSchedule

BACK_RANK = "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1"
VISITS = "32"  # one visit count (one tree size) for every search here: one compile


def test_analyse_json_schema_and_policy(capsys):
    assert main(["analyse", "startpos", "--moves", "e2e4", "e7e5", "--visits", VISITS, "--json",
                 "--include-policy"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 1
    out = json.loads(lines[0])
    board = chess.Board()
    board.push_uci("e2e4")
    board.push_uci("e7e5")
    assert out["fen"] == board.fen()
    infos = out["moveInfos"]
    assert {m["move"] for m in infos} == {m.uci() for m in board.legal_moves}
    assert [m["order"] for m in infos] == list(range(len(infos)))
    assert sum(m["visits"] for m in infos) == 32 == out["rootInfo"]["visits"] - 1
    assert infos[0]["visits"] == max(m["visits"] for m in infos)
    for m in infos:
        assert set(m) == {"move", "order", "visits", "winrate", "drawrate", "q", "prior",
                          "score", "wdl", "proven", "pv"}
        if m["visits"]:
            assert ("cp" in m["score"]) != ("mate" in m["score"]) and sum(m["wdl"]) == 1000
        b = board.copy()
        for uci in m["pv"]:
            assert chess.Move.from_uci(uci) in b.legal_moves
            b.push_uci(uci)
    assert set(out["rootInfo"]) == {"visits", "winrate", "drawrate", "q", "rawWdl", "score",
                                    "wdl"}
    assert abs(sum(out["rootInfo"]["rawWdl"]) - 1) < 1e-4
    assert set(out["policy"]) == {m.uci() for m in board.legal_moves}
    assert abs(sum(out["policy"].values()) - 1) < 1e-3


def test_epd_batch_and_ids(tmp_path, capsys):
    epd = tmp_path / "p.epd"
    epd.write_text(f'{BACK_RANK}\n\n# comment\n{chess.Board().epd()} id "start";\n')
    assert main(["analyse", "--epd", str(epd), "--visits", VISITS, "--json"]) == 0
    rows = [json.loads(x) for x in capsys.readouterr().out.strip().splitlines()]
    assert [r["id"] for r in rows] == ["1", "start"]
    assert rows[0]["moveInfos"][0]["move"] == "a1a8"
    # Ra8 mates: a proven win, scored as lc0 prints it
    assert rows[0]["moveInfos"][0]["score"] == {"mate": 1} == rows[0]["rootInfo"]["score"]
    assert rows[0]["moveInfos"][0]["proven"] == 1 and rows[0]["rootInfo"]["wdl"] == [1000, 0, 0]


def test_table_output(capsys):
    assert main(["analyse", BACK_RANK, "--visits", VISITS, "--search", "contempt",
                 "--contempt-limit", "3"]) == 0
    out = capsys.readouterr().out
    assert "bestmove a1a8" in out and "a1a8" in out.splitlines()[3]
    assert "score mate 1" in out.splitlines()[1]


@pytest.mark.parametrize("args, needle", [
    (["analyse", "not a fen"], "invalid FEN"),
    (["analyse", "8/8/8/8/8/8/8/8 w - - 0 1"], "no white king"),
    (["analyse", "startpos", "--moves", "e2e5"], "illegal move 'e2e5'"),
    (["analyse", "startpos", "--moves", "zz"], "invalid move 'zz'"),
    (["analyse", "startpos", "--visits", "0"], "--visits must be >= 1"),
    (["analyse", "startpos", "--search", "contempt", "--contempt-limit", "0"],
     "contempt limit must be >= 1"),
    (["analyse", "startpos", "--model", "nosuch.pb.gz"], "nosuch.pb.gz"),
    (["analyse", "startpos", "--model", "weird"], "unknown model spec"),
    (["analyse", "--epd", "/nonexistent.epd"], "EPD file not found"),
    (["analyse", "7k/6Q1/6K1/8/8/8/8/8 b - - 0 1"], "no legal moves"),
])
def test_bad_input_is_one_line_error(args, needle, capsys):
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and err.startswith("error: ") and "\n" not in err


@pytest.mark.tier2  # a process
def test_bad_input_exits_nonzero_without_traceback():
    proc = subprocess.run([sys.executable, "-m", "zerochess.cli", "analyse", "xyz"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and "invalid FEN" in proc.stderr


def test_temperature_schedule_matches_lc0_rules():
    # lc0: decay linearly from move delay to delay + decay_moves, floored by TempEndgame
    sched = TemperatureSchedule(temperature=1.0, decay_moves=10, decay_delay_moves=4,
                                endgame_temperature=0.25)
    assert sched.at(0) == 1.0 and sched.at(2 * 4) == 1.0
    assert sched.at(2 * 9) == pytest.approx(0.5)  # 1.0 * (4 + 10 - 9) / 10
    assert sched.at(2 * 12) == 0.25 and sched.at(2 * 40) == 0.25
    cut = TemperatureSchedule(temperature=1.0, cutoff_move=5, endgame_temperature=0.1)
    assert cut.at(2 * 3) == 1.0 and cut.at(2 * 4) == 0.1
    with pytest.raises(ValueError):
        TemperatureSchedule(temperature=-1)
