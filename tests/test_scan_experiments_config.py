"""The misevaluation and puzzles experiments' settings: clear errors for a missing
Stockfish, a bad key or value, an unreadable config, and an empty run (no game, or no
position to scan), all before any search."""

from __future__ import annotations

import sys

import pytest

from zerochess.errors import ConfigError
from zerochess.experiments import get_experiment
from zerochess.experiments import judge as judge_module
from zerochess.experiments.common import Context
from zerochess.experiments.scan import check_scannable


@pytest.fixture(params=["misevaluation", "puzzles"])
def name(request):
    return request.param


def test_missing_stockfish_binary(name, tmp_path, monkeypatch):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"stockfish: {{nodes: 100, command: {tmp_path}/no-stockfish}}\n")
    exp = get_experiment(name)
    resolved = exp.resolve("tiny", cfg)  # settings resolve without Stockfish...
    played = []
    module = sys.modules[f"zerochess.experiments.{name}"]
    monkeypatch.setattr(module, "selfplay_points", lambda *a: played.append(a) or [])
    ctx = Context(name, "tiny", resolved, tmp_path / "run", progress=False)
    with pytest.raises(ConfigError, match="stockfish not found: .* is not an executable file"):
        exp.run(ctx)  # ...and the run stops on it before playing a game
    assert played == []
    # none on PATH nor in the usual folders: the message says where it looked
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(judge_module, "SEARCH_DIRS", (str(tmp_path),))
    with pytest.raises(ConfigError, match="stockfish not found on PATH.*apt-get install"):
        judge_module.find_stockfish_binary()


@pytest.mark.parametrize("text,match", [
    ("deep_nodes: 20\n", "deep_nodes must be at least 10x nodes"),
    ("bogus: 1\n", "unknown key"),
    ("variants: [{name: a, n_scl: 1}, {name: a, n_scl: 2}]\n", "distinct"),
    ("variants: [{name: a, speed: 1}]\n", "unknown key"),
    ("stockfish: {nodes: 0}\n", "stockfish.nodes"),
    ("stockfish: {}\n", "stockfish needs"),
    ("baseline: nobody\n", "baseline 'nobody'"),
    ("nodes: [\n", "invalid YAML"),
])
def test_bad_settings_are_named(name, tmp_path, text, match):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(text)
    with pytest.raises(ConfigError, match=match):
        get_experiment(name).resolve("tiny", cfg)


def test_unreadable_config(name, tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        get_experiment(name).resolve("tiny", tmp_path / "missing.yaml")


def test_puzzle_only_settings(tmp_path):
    cfg = tmp_path / "c.yaml"
    for text, match in (("margin: -1\n", "margin must be"), ("ladder: [0]\n", "ladder"),
                        ("shallow_nodes: 500\n", "shallow_nodes")):
        cfg.write_text(text)
        with pytest.raises(ConfigError, match=match):
            get_experiment("puzzles").resolve("tiny", cfg)


def test_empty_run():
    with pytest.raises(ConfigError, match="no games in DIR"):
        check_scannable("puzzles", [], 1, 1, "DIR")
    rows = [{"plies": "3"}, {"plies": "0"}]
    with pytest.raises(ConfigError, match="none of the 2 games in DIR.*min_ply 5.*3 plies"):
        check_scannable("puzzles", rows, 5, 1, "DIR")
    check_scannable("puzzles", rows, 2, 1, "DIR")  # ply 2 of the first game: fine


@pytest.mark.parametrize("args,needle", [
    (["puzzles", "--config", "/nonexistent/p.yaml"], "config file not found"),
    (["puzzles", "--scale", "huge"], "unknown scale 'huge'"),
    (["experiment", "misevaluation", "--config", "/nonexistent/m.yaml"], "not found"),
])
def test_commands_give_one_line_errors(args, needle, capsys):
    from zerochess.cli import main

    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and err.startswith("error: ") and "\n" not in err


def test_puzzles_command_runs_the_puzzles_experiment(tmp_path, capsys, monkeypatch):
    from zerochess.cli import main
    from zerochess.experiments import puzzles

    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"stockfish: {{nodes: 10, command: {tmp_path}/no-stockfish}}\n")
    monkeypatch.setattr(puzzles, "selfplay_points", lambda *a: pytest.fail("played"))
    assert main(["puzzles", "--config", str(cfg), "--out", str(tmp_path / "run"),
                 "--no-progress"]) == 2
    assert "stockfish not found" in capsys.readouterr().err
    assert (tmp_path / "run" / "config.yaml").is_file()  # the puzzles run's folder
