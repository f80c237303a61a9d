"""Experiments: settings resolution, analysis helpers, ``contempt_wdl --scale tiny`` end to end."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest
import yaml

from zerochess.cli import main
from zerochess.errors import ConfigError, UserError
from zerochess.experiments import EXPERIMENTS, get_experiment, run_experiment
from zerochess.experiments.common import settings_path, wdl_counts
from zerochess.experiments.contempt_wdl import draw_trend, trend_sentence
from zerochess.experiments.repeat_rate import repeat_table, repeated_fraction
from zerochess.games.records import read_pgn_games
from zerochess.games.stats import decisive_over_draws_interval, wilson_interval

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_settings_resolve_at_every_scale(name):
    exp = get_experiment(name)
    assert exp.name == name
    # the settings ship inside the package (zerochess/configs is configs/)
    path = settings_path(name)
    assert path.parent.parent.name == "zerochess" and path.is_file()
    assert path.read_text() == (REPO / "configs" / f"experiment_{name}.yaml").read_text()
    # a copy of the settings passed as overrides changes nothing
    for scale in ("tiny", "small", "full"):
        assert exp.resolve(scale, path) == exp.resolve(scale)
    full = exp.resolve("full")
    if "nodes" in full and isinstance(full["nodes"], int):
        assert full["nodes"] == 1000  # the paper's scale
    if "games_per_point" in full:
        assert full["games_per_point"] == 100


def test_resolve_errors(tmp_path):
    exp = get_experiment("contempt_wdl")
    with pytest.raises(ConfigError, match="scale"):
        exp.resolve("huge")
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"nodez": 3}))
    with pytest.raises(ConfigError, match="nodez"):
        exp.resolve("tiny", bad)
    bad.write_text(yaml.safe_dump({"scales": {"tiny": {"n_scll": [1]}}}))
    with pytest.raises(ConfigError, match="n_scll"):
        exp.resolve("tiny", bad)
    bad.write_text(yaml.safe_dump({"n_scl": [0, 5]}))
    with pytest.raises(ConfigError, match="n_scl"):
        exp.resolve("tiny", bad)
    with pytest.raises(ConfigError, match="unknown experiment"):
        get_experiment("contempt")
    with pytest.raises(ConfigError, match="experiment 'odds', not 'contempt_wdl'"):
        exp.resolve("tiny", settings_path("odds"))
    over = tmp_path / "over.yaml"
    over.write_text(yaml.safe_dump({"nodes": 7, "scales": {"tiny": {"games_per_point": 2}}}))
    cfg = exp.resolve("tiny", over, seed=9)
    assert cfg["nodes"] == 7 and cfg["games_per_point"] == 2 and cfg["seed"] == 9
    assert exp.resolve("small", over)["games_per_point"] == 16


def test_a_bad_model_is_refused_before_the_folder_is_written(tmp_path):
    """Issue 9: fixing the model path and running again must work, so nothing (no
    config.yaml) is written before the model loads."""
    over = tmp_path / "over.yaml"
    over.write_text(yaml.safe_dump({"model": str(tmp_path / "missing.pb.gz")}))
    out = tmp_path / "run"
    with pytest.raises(UserError, match="missing.pb.gz"):
        run_experiment("contempt_wdl", "tiny", out, config_path=over, progress=False)
    assert not (out / "config.yaml").exists()


def test_repeated_fraction():
    games = [["e2e4", "e7e5", "g1f3"], ["e2e4", "e7e5", "b1c3"], ["d2d4", "d7d5"], ["d2d4"]]
    # 2-ply prefixes: e4 e5 twice; "d4 d5" and "d4" (a shorter game) differ
    assert repeated_fraction(games, 1) == 0.5
    games[3] = ["d2d4", "d7d5", "c2c4"]
    assert repeated_fraction(games, 1) == 1.0
    assert repeated_fraction(games, 2) == 0.0
    assert repeated_fraction([["a"], ["b"]], 1) == 0.0
    assert math.isnan(repeated_fraction([], 1))
    rows = [{"variant": "v", "moves": " ".join(g)} for g in games]
    table = repeat_table(rows, ["v"], 2)
    assert [t["repeated_fraction"] for t in table] == [1.0, 0.0]
    assert table[0]["distinct_games"] == 4


def test_repeated_fraction_partial():
    games = [["e2e4", "e7e5"], ["e2e4", "e7e5"], ["e2e4", "c7c5"]]
    assert repeated_fraction(games, 1) == pytest.approx(2 / 3)


def test_wdl_counts_and_trend():
    rows = [{"result": r, "plies": "10", "termination": t} for r, t in
            [("1-0", "checkmate"), ("1/2-1/2", "move_cap"), ("1/2-1/2", "threefold_repetition"),
             ("0-1", "checkmate")]]
    c = wdl_counts(rows)
    assert (c["white_wins"], c["draws"], c["black_wins"]) == (1, 2, 1)
    assert c["decisive_over_draws"] == 1.0 and c["move_cap_games"] == 1 and c["threefold"] == 1
    assert c["move_cap_share"] == 0.25
    assert wdl_counts(rows[:1])["decisive_over_draws"] == math.inf


def test_trend_sentence_states_the_test():
    """More draws at larger N_scl = (w+l)/d falls; the sentence carries z and p."""
    table = [{"n_scl": v, "draws": d, "games": 40} for v, d in ((1, 4), (5, 12), (10**6, 30))]
    test = draw_trend(table)
    assert test.z > 0 and test.significant
    text = trend_sentence(test)
    assert "(w+l)/d falls as N_scl grows" in text and "z = +" in text and "p = " in text
    flat = [{"n_scl": v, "draws": 10, "games": 40} for v in (1, 5, 10**6)]
    assert "no trend of (w+l)/d in N_scl is significant at this scale" in \
        trend_sentence(draw_trend(flat))


def _pgn_tallies(path: Path) -> dict[int, list[int]]:
    """White wins, draws, black wins per N_scl, read from the PGN's headers and checked
    against python-chess's outcome of each game's final position."""
    tallies: dict[int, list[int]] = {}
    for game in read_pgn_games(path):
        result = game.headers["Result"]
        board = game.end().board()
        outcome = board.outcome(claim_draw=True)
        if game.headers["Termination"] == "move_cap":
            assert result == "1/2-1/2" and "move cap" in game.headers["Adjudication"]
        else:
            assert outcome is not None and outcome.result() == result, game.headers
        t = tallies.setdefault(int(game.headers["NScl"]), [0, 0, 0])
        t[["1-0", "1/2-1/2", "0-1"].index(result)] += 1
    return tallies


@pytest.mark.tier2  # a whole experiment
def test_contempt_wdl_tiny_end_to_end(tmp_path):
    """The README's main job: files, the CSV's numbers against the PGN's results, the
    intervals, provenance, and resuming.

    The 32 games run in one batch of 32 instead of four of 8 (CI time: about a quarter of
    the search steps); a game's moves depend only on its spec and seed, not on its batch
    or slot, so the games are those of the shipped tiny scale."""
    over = tmp_path / "one_batch.yaml"
    over.write_text(yaml.safe_dump({"scales": {"tiny": {"batch_size": 32}}}))
    out = run_experiment("contempt_wdl", "tiny", tmp_path / "run", seed=0, config_path=over,
                         progress=False)
    for name in ("config.yaml", "versions.yaml", "games.pgn", "games.csv", "contempt_wdl.csv",
                 "contempt_wdl.png", "summary.md"):
        assert (out / name).is_file(), name
    assert (out / "contempt_wdl.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with open(out / "contempt_wdl.csv") as f:
        rows = list(csv.DictReader(f))
    assert [int(r["n_scl"]) for r in rows] == [1, 2, 5, 8, 10, 32, 50, 1000000]
    tallies = _pgn_tallies(out / "games.pgn")
    assert sum(map(sum, tallies.values())) == 32
    for r in rows:
        w, d, l = (int(r[k]) for k in ("white_wins", "draws", "black_wins"))
        assert [w, d, l] == tallies[int(r["n_scl"])], r
        assert w + d + l == int(r["games"]) == 4
        if d:
            assert float(r["decisive_over_draws"]) == pytest.approx((w + l) / d, rel=1e-5)
        lo, hi = decisive_over_draws_interval(d, 4)
        assert float(r["decisive_over_draws_low"]) == pytest.approx(lo, rel=1e-5)
        assert r["decisive_over_draws_high"] == ("inf" if math.isinf(hi) else f"{hi:.6g}")
        assert (float(r["draw_rate_low"]), float(r["draw_rate_high"])) == pytest.approx(
            wilson_interval(d, 4), rel=1e-5)
    versions = yaml.safe_load((out / "versions.yaml").read_text())
    assert {"python", "jax", "zerochess", "chess", "git_commit", "git_dirty",
            "model_sha256"} <= set(versions)
    assert len(versions["model_sha256"]) == 64 and versions["model"] == "builtin"
    resolved = yaml.safe_load((out / "config.yaml").read_text())
    assert resolved["experiment"] == "contempt_wdl" and resolved["scale"] == "tiny"
    summary = (out / "summary.md").read_text()
    assert "N_scl" in summary and "| 1000000 |" in summary
    assert "Cochran-Armitage" in summary and "95% interval" in summary
    d0 = tallies[1][1]
    lo, hi = wilson_interval(d0, 4)
    assert f"| {d0 / 4:.2f} [{lo:.2f}, {hi:.2f}] |" in summary  # N_scl 1's draw rate
    # the share of games the move cap ended, counted from the PGN (issue 26, item 20)
    capped = sum(1 for g in read_pgn_games(out / "games.pgn")
                 if g.headers["Termination"] == "move_cap")
    assert f"**{capped} of 32 games ({100 * capped / 32:.0f}%) ended at the move cap" in summary
    assert sum(int(r["move_cap_games"]) for r in rows) == capped
    assert "`white_wins`" in summary and "| wins |" not in summary
    # a second call finds every game done: it plays nothing and rewrites the same table
    before = (out / "contempt_wdl.csv").read_text()
    run_experiment("contempt_wdl", "tiny", out, seed=0, config_path=over, progress=False)
    assert (out / "contempt_wdl.csv").read_text() == before
    assert "nothing played now" in (out / "summary.md").read_text()


def test_cli_experiment_errors(capsys):
    assert main(["experiment", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: unknown experiment") and len(err.splitlines()) == 1
    assert main(["experiment", "odds", "--scale", "huge"]) == 2
    err = capsys.readouterr().err
    assert "unknown scale" in err and len(err.splitlines()) == 1


@pytest.mark.slow
@pytest.mark.parametrize("name", ["temperature_wdl", "repeat_rate", "contempt_vs_temperature",
                                  "odds"])
def test_other_experiments_tiny(tmp_path, name):
    out = run_experiment(name, "tiny", tmp_path / name, progress=False)
    assert (out / f"{name}.csv").is_file() and (out / f"{name}.png").is_file()
    summary = (out / "summary.md").read_text()
    assert summary.startswith("# ") and "95%" in summary
    with open(out / f"{name}.csv") as f:
        rows = list(csv.DictReader(f))
    lows = [k for k in rows[0] if k.endswith("_low")]
    assert lows, rows[0]  # every rate carries its interval
    for r in rows:
        for k in lows:
            base = k[: -len("_low")]
            if r[base] in ("", "inf"):
                continue
            lo, hi = float(r[k]), float(r[f"{base}_high"] or "nan")
            assert lo <= float(r[base]) + 1e-9 and (math.isnan(hi) or float(r[base]) <= hi + 1e-9)
    versions = yaml.safe_load((out / "versions.yaml").read_text())
    assert versions["model_sha256"] and "git_commit" in versions
