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
from zerochess.experiments.contempt_wdl import falls_with
from zerochess.experiments.repeat_rate import repeat_table, repeated_fraction

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
    assert (c["wins"], c["draws"], c["losses"]) == (1, 2, 1)
    assert c["decisive_over_draws"] == 1.0 and c["move_cap"] == 1 and c["threefold"] == 1
    assert wdl_counts(rows[:1])["decisive_over_draws"] == math.inf
    assert falls_with([1, 2, 5], [3.0, 2.0, 1.0]) == 1.0
    assert falls_with([1, 2, 5], [1.0, 2.0, 3.0]) == -1.0


def test_contempt_wdl_tiny_end_to_end(tmp_path):
    out = run_experiment("contempt_wdl", "tiny", tmp_path / "run", seed=0, progress=False)
    for name in ("config.yaml", "versions.yaml", "games.pgn", "games.csv", "contempt_wdl.csv",
                 "contempt_wdl.png", "summary.md"):
        assert (out / name).is_file(), name
    assert (out / "contempt_wdl.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with open(out / "contempt_wdl.csv") as f:
        rows = list(csv.DictReader(f))
    assert {"n_scl", "wins", "draws", "losses", "decisive_over_draws"} <= set(rows[0])
    assert [int(r["n_scl"]) for r in rows] == [1, 2, 5, 8, 10, 32, 50, 1000000]
    for r in rows:
        assert int(r["wins"]) + int(r["draws"]) + int(r["losses"]) == int(r["games"]) == 4
    versions = yaml.safe_load((out / "versions.yaml").read_text())
    assert {"python", "jax", "zerochess", "chess"} <= set(versions)
    resolved = yaml.safe_load((out / "config.yaml").read_text())
    assert resolved["experiment"] == "contempt_wdl" and resolved["scale"] == "tiny"
    summary = (out / "summary.md").read_text()
    assert "N_scl" in summary and "| 1000000 |" in summary
    # a second call finds every game done: it plays nothing and rewrites the same table
    before = (out / "contempt_wdl.csv").read_text()
    run_experiment("contempt_wdl", "tiny", out, seed=0, progress=False)
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
    assert (out / "summary.md").read_text().startswith("# ")
