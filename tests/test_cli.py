"""The zerochess CLI: analyse output (JSON schema, table), batching from EPD, and errors."""

from __future__ import annotations

import json
import subprocess
import sys

import chess
import pytest

from zerochess.cli import main
from zerochess.search.results import TemperatureSchedule

from compile_count import count_compiles

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


def _network_prior(board: chess.Board, temperature: float) -> dict[str, float]:
    """The built-in network's policy over the legal moves at ``temperature``, computed
    here from the network's logits (not read from a search)."""
    import numpy as np

    from zerochess.chess.encoding import encode_board
    from zerochess.chess.policy_map import legal_move_indices
    from zerochess.neural import load_model

    logits = np.asarray(load_model("builtin")(encode_board(board)[None]).policy_logits[0])
    moves, index = legal_move_indices(board)
    z = logits[index] / temperature
    p = np.exp(z - z.max())
    return {m.uci(): float(x) for m, x in zip(moves, p / p.sum(), strict=True)}


def test_p_shows_the_networks_prior_after_the_mate_check(capsys):
    """The mate check searches a1a8 first with a one-hot search prior; P still shows the
    network's prior (at the search temperature) and the mating move is marked; a move the
    search never visited has no score (issue 26, items 16 and 17)."""
    from zerochess import analyse
    from zerochess.search.config import SearchConfig

    board = chess.Board(BACK_RANK)
    expected = _network_prior(board, SearchConfig().policy_temperature)
    assert 0.05 < expected["a1a8"] < 0.9  # not one-hot: the check matters
    assert main(["analyse", BACK_RANK, "--visits", "32", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    for m in out["moveInfos"]:
        assert m["prior"] == pytest.approx(expected[m["move"]], abs=2e-4), m
        assert m.get("mateCheck", False) == (m["move"] == "a1a8")
        if m["visits"] == 0:
            assert m["score"] is None and m["wdl"] is None and m["q"] is None
    assert main(["analyse", BACK_RANK, "--visits", "32"]) == 0
    table = capsys.readouterr().out.splitlines()
    row = next(x for x in table if x.split()[:1] == ["a1a8"])
    assert "win*" in row and f"{100 * expected['a1a8']:6.2f}%" in row
    assert any("the mate check searched a1a8 first" in x for x in table)
    res = analyse(BACK_RANK, visits=32)[0]
    unvisited = [i for i in range(len(res.moves)) if res.visits[i] == 0]
    assert unvisited and all(res.score(i) is None for i in unvisited)
    assert res.score().mate == 1 and res.mate_check == res.moves.index(
        chess.Move.from_uci("a1a8"))


def test_nearby_visit_budgets_share_compiled_programs():
    """``--visits 32`` and ``--visits 35`` search trees of the same bucket (40 nodes): the
    second compiles nothing (issue 26, item 15)."""

    from zerochess import analyse

    analyse(BACK_RANK, visits=32)
    compiles, res = count_compiles(lambda: analyse(BACK_RANK, visits=35)[0])
    assert compiles == 0 and res.root_visits == 36


def test_epd_results_print_batch_by_batch(tmp_path, capsys, monkeypatch):
    """An EPD file streams through in batches: the first batch is printed before the second
    is searched (bounded memory, results as they come)."""
    import zerochess.analysis
    import zerochess.cli.analyse as command

    epd = tmp_path / "p.epd"
    back_rank = chess.Board(BACK_RANK).epd()
    epd.write_text("".join(f'{fen} id "p{i}";\n' for i, fen in enumerate(
        [back_rank, chess.Board().epd(), back_rank])))
    monkeypatch.setattr(command, "EPD_BATCH", 2)
    real = zerochess.analysis.analyse
    printed_before = []

    def spy(positions, **kwargs):
        printed_before.append(len(capsys.readouterr().out.splitlines()))
        return real(positions, **kwargs)

    monkeypatch.setattr(zerochess.analysis, "analyse", spy)
    assert main(["analyse", "--epd", str(epd), "--visits", "16", "--json"]) == 0
    assert printed_before == [0, 2]  # the second search began after two results were out
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [r["id"] for r in rows] == ["p2"] and rows[0]["moveInfos"][0]["move"] == "a1a8"
