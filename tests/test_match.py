"""Matches: Elo / LOS formulas against hand-computed values, pairing, engines, a tiny match."""

from __future__ import annotations

import math
from pathlib import Path

import chess
import pytest
import yaml

from zerochess.cli import main
from zerochess.errors import ConfigError
from zerochess.games import (
    EnginePlayer,
    EngineSpec,
    MatchConfig,
    MatchResult,
    OpeningSpec,
    elo_from_score,
    los,
    match_result,
    paired_specs,
    run_match,
    score_from_elo,
)
from zerochess.games.players import resolve_command
from zerochess.lc0_files import find_stockfish

REPO = Path(__file__).resolve().parents[1]


# --- statistics (values worked out by hand from the formulas in zerochess.games.stats) ----

def test_table2_trinomial_case():
    # W 37 / D 46 / L 17 (the paper's Table 2): s = (37 + 23) / 100 = 0.6
    m = MatchResult(37, 46, 17)
    assert m.games == 100 and m.score == pytest.approx(0.6)
    # Elo = -400 log10(1/0.6 - 1) = -400 log10(2/3) = 70.4365
    assert m.elo == pytest.approx(70.4365, abs=1e-3)
    # per-game variance (37*0.4^2 + 46*0.1^2 + 17*0.6^2) / 100 = 12.5 / 100 = 0.125
    # SE = sqrt(0.125 / 100) = 0.0353553; s +- 1.96 SE = [0.530705, 0.669295]
    assert m.stderr == pytest.approx(0.0353553, abs=1e-6)
    lo, hi = m.elo_interval()
    assert lo == pytest.approx(21.3628, abs=1e-3)
    assert hi == pytest.approx(122.4709, abs=1e-3)
    # LOS = 0.5 (1 + erf(20 / sqrt(108))) = 0.996752
    assert m.los == pytest.approx(0.996752, abs=1e-6)


def test_even_match_and_edges():
    m = MatchResult(5, 10, 5)  # s = 0.5, variance (5/4 + 0 + 5/4) / 20 = 0.125
    assert m.elo == 0.0 and m.los == 0.5
    lo, hi = m.elo_interval()
    assert hi == pytest.approx(111.3295, abs=1e-3) and lo == pytest.approx(-hi)
    assert MatchResult(2, 0, 0).elo == math.inf
    assert MatchResult(0, 0, 3).elo == -math.inf
    assert los(2, 0) == pytest.approx(0.5 * (1 + math.erf(1.0)))  # 0.92135
    assert los(0, 0) == 0.5 and MatchResult(0, 4, 0).los == 0.5
    assert math.isnan(MatchResult(0, 0, 0).score)
    for e in (-350.0, -20.0, 0.0, 75.5, 400.0):
        assert elo_from_score(score_from_elo(e)) == pytest.approx(e)
    assert score_from_elo(400.0) == pytest.approx(10 / 11)
    assert "W 37 / D 46 / L 17" in MatchResult(37, 46, 17).summary()


def test_match_result_from_rows():
    rows = [{"white": "a", "black": "b", "score_white": "1.0"},
            {"white": "b", "black": "a", "score_white": "1.0"},
            {"white": "b", "black": "a", "score_white": "0.5"},
            {"white": "a", "black": "b", "score_white": "0.0"},
            {"white": "c", "black": "b", "score_white": "0.0"}]
    assert match_result(rows, "a") == MatchResult(1, 1, 2)
    assert match_result(rows, "b") == MatchResult(3, 1, 1)


# --- scheduling ---------------------------------------------------------------------------

def test_colours_alternate_and_openings_pair():
    spec = OpeningSpec(type="fens", fens=(chess.STARTING_FEN,
                                          "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"))
    specs = paired_specs("x", "y", 6, spec, seed=1)
    assert [(s.white, s.black) for s in specs] == [("x", "y"), ("y", "x")] * 3
    assert [s.index for s in specs] == list(range(6))
    for k in range(3):
        assert specs[2 * k].opening == specs[2 * k + 1].opening
    assert specs[0].opening != specs[2].opening
    assert len({s.seed for s in specs}) == 6


def test_odds_follow_the_giving_player():
    specs = paired_specs("x", "y", 4, OpeningSpec(type="odds", piece="queen", side="player1"),
                         seed=0)
    for s in specs:
        board = s.opening.board()
        x_colour = chess.WHITE if s.white == "x" else chess.BLACK
        assert not board.pieces(chess.QUEEN, x_colour)
        assert board.pieces(chess.QUEEN, not x_colour)


def test_match_config_errors():
    with pytest.raises(ConfigError, match="player2"):
        MatchConfig.from_dict({"player1": {}})
    with pytest.raises(ConfigError, match="'extra'"):
        MatchConfig.from_dict({"player1": {}, "player2": {}, "extra": 1})
    with pytest.raises(ConfigError, match="kind"):
        MatchConfig.from_dict({"player1": {}, "player2": {"engine": {"kind": "gnuchess"}}})
    with pytest.raises(ConfigError, match="limit"):
        MatchConfig.from_dict({"player1": {}, "player2": {"engine": {"kind": "stockfish"}}})
    with pytest.raises(ConfigError, match="excludes"):
        MatchConfig.from_dict({"player1": {}, "player2": {
            "engine": {"kind": "lc0"}, "search": {}}})
    cfg = MatchConfig.from_dict({"player1": {}, "player2": {"engine": {"kind": "lc0"}}})
    assert cfg.player2.engine.nodes == 1 and cfg.player2.is_engine  # Maia at 1 node


def test_repo_match_configs_load():
    paths = sorted((REPO / "configs").glob("match*.yaml"))
    assert paths
    for path in paths:
        MatchConfig.load(path)


# --- external engines ---------------------------------------------------------------------

def test_missing_stockfish_is_a_clear_error(monkeypatch, tmp_path):
    from zerochess.games import players

    monkeypatch.setattr(players, "find_stockfish", lambda: None)  # as on a bare machine
    with pytest.raises(ConfigError, match="stockfish not found"):
        resolve_command(EngineSpec(kind="stockfish", nodes=100))
    with pytest.raises(ConfigError, match="stockfish not found"):
        resolve_command(EngineSpec(kind="stockfish", nodes=100,
                                   command=str(tmp_path / "stockfish")))
    if find_stockfish() is not None:  # the real one is found when installed
        assert resolve_command(EngineSpec(kind="stockfish", command=find_stockfish(),
                                          nodes=100)) == [find_stockfish()]


def test_missing_lc0_weights_is_a_clear_error(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        resolve_command(EngineSpec(kind="lc0", command="/bin/true",
                                   weights=str(tmp_path / "nope.pb.gz"), nodes=1))
    with pytest.raises(ConfigError, match="lc0 not found"):
        resolve_command(EngineSpec(kind="lc0", command=str(tmp_path / "lc0"), nodes=1))


def test_maia_plays_legal_deterministic_moves(maia):
    player = EnginePlayer(EngineSpec(kind="lc0", weights="maia-1900", nodes=1))
    try:
        board = chess.Board()
        board.push_uci("e2e4")
        m1, stat = player.play(board, game_key=1)
        m2, _ = player.play(board, game_key=2)
        assert m1 in board.legal_moves and m1 == m2
        assert stat.source == "engine" and "engine" in stat.comment()
    finally:
        player.close()


# --- a tiny match (batch 8, 16 nodes: the compile the other game tests share) -------------

def tiny_match(**changes) -> MatchConfig:
    values = {
        "name": "m", "games": 4, "batch_size": 8, "max_plies": 16, "seed": 2,
        "player1": {"name": "sc5", "nodes": 16, "search": {"n_scl": 5}, "temperature": "sc"},
        "player2": {"name": "puct", "nodes": 16, "temperature": "tau2"},
    }
    values.update(changes)
    return MatchConfig.from_dict(values)


@pytest.mark.tier2  # a whole match
def test_config_vs_config_match(tmp_path):
    report = run_match(tiny_match(), tmp_path / "m", progress=False)
    r = report.result
    assert r.games == 4 and r.wins + r.draws + r.losses == 4
    assert report.as_white.games == 2 and report.as_black.games == 2
    # the tallies against the PGN's own results, recounted from player1's side
    from zerochess.games.records import read_pgn_games

    tally = [0, 0, 0]
    for game in read_pgn_games(tmp_path / "m" / "games.pgn"):
        result = game.headers["Result"]
        p1_white = game.headers["White"] == "sc5"
        won = result == ("1-0" if p1_white else "0-1")
        lost = result == ("0-1" if p1_white else "1-0")
        tally[0 if won else 2 if lost else 1] += 1
    assert tally == [r.wins, r.draws, r.losses]
    saved = yaml.safe_load((tmp_path / "m" / "match.json").read_text())
    assert saved["wins"] == r.wins and saved["player1"] == "sc5"
    assert (saved["score_low"], saved["score_high"]) == pytest.approx(r.score_interval())
    assert "LOS" in (tmp_path / "m" / "summary.md").read_text()
    assert "sc5 vs puct" in report.text()


def test_match_against_maia(maia, tmp_path):
    cfg = tiny_match(player2={"name": "maia", "engine": {"kind": "lc0", "nodes": 1}},
                     games=2, max_plies=12)
    report = run_match(cfg, tmp_path / "mm", progress=False)
    assert report.result.games == 2
    text = (tmp_path / "mm" / "games.pgn").read_text()
    assert "engine nodes=" in text and '[Black "maia"]' in text


@pytest.mark.tier2  # a whole match
def test_cli_match(tmp_path, capsys):
    cfg = tmp_path / "m.yaml"
    cfg.write_text(yaml.safe_dump({
        "games": 2, "batch_size": 8, "max_plies": 4,
        "player1": {"name": "a", "nodes": 16}, "player2": {"name": "b", "nodes": 16,
                                                           "search": {"n_scl": 3}}}))
    assert main(["match", "--config", str(cfg), "--out", str(tmp_path / "o"),
                 "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "a vs b: 2 games" in out and "Elo" in out and "LOS" in out
    cfg.write_text(yaml.safe_dump({"player1": {}, "player3": {}}))
    assert main(["match", "--config", str(cfg), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "player3" in err and len(err.splitlines()) == 1
