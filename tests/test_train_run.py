"""``zerochess train``: config schema errors, and a miniature run end to end with an
interruption: resumed == uninterrupted (parameters, buffer, games, metrics, final match)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import jax
import numpy as np
import pytest
import yaml
from test_training_tensorboard import read_scalars

from zerochess import cli
from zerochess.errors import ConfigError
from zerochess.neural import load_model
from zerochess.training import Checkpointer, TrainConfig, Trainer
from zerochess.training.run import build_network, run_training

REPO = Path(__file__).resolve().parents[1]

MINI = {
    "name": "mini", "seed": 1, "generations": 2,
    "network": {"blocks": 1, "filters": 8, "moves_left": True},
    "selfplay": {"games": 4, "batch_size": 4, "max_plies": 16, "white": {
        "name": "puct", "nodes": 4, "temperature": 1.0}, "black": {
        "name": "sc", "nodes": 4, "search": {"n_scl": 2}, "temperature": 1.0},
        "nscl_schedule": {"enabled": True, "initial_n_scl": 2}},
    "buffer": {"window_games": 6},
    "training": {"batch_size": 16, "steps_per_generation": 2,
                 "optimizer": {"type": "sgd", "lr_values": [0.01]}},
    "evaluation": {"every": 2, "games": 2, "final_games": 2, "batch_size": 4,
                   "max_plies": 12, "nodes": 4, "opponents": ["initial"]},
    "export": {"every": 0},  # only the final net
}


def test_tiny_config_loads():
    cfg = TrainConfig.load(REPO / "configs" / "train_tiny.yaml")
    assert cfg.generations >= 1 and cfg.evaluation.final_games >= 100
    assert TrainConfig.from_dict(cfg.to_dict()).to_dict() == cfg.to_dict()


@pytest.mark.parametrize("change, message", [
    ({"learning_rate": 0.1}, "unknown key(s) 'learning_rate' in train config"),
    ({"training": {"optimizer": {"lr": 0.1}}}, "unknown key(s) 'lr' in training.optimizer"),
    ({"training": {"loss": {"q_ratio": 2}}}, "q_ratio must be in [0, 1]"),
    ({"training": {"optimizer": {"type": "lamb"}}}, "sgd, adam or adamw"),
    ({"selfplay": {"player": {"nodes": 0}}}, "selfplay.player.nodes must be >= 1"),
    ({"selfplay": {"nscl_schedule": {"factor": "x"}}}, "factor must be a number"),
    ({"evaluation": {"opponents": ["gnuchess"]}}, "unknown opponent 'gnuchess'"),
    ({"network": {"activation": "tanh"}}, "relu or mish"),
    ({"network": {"init": "missing.pb.gz"}}, "file not found"),
    ({"export": {"encoding": "int8"}}, "export.encoding"),
    ({"buffer": {"window": 3}}, "unknown key(s) 'window' in buffer"),
    ({"selfplay": {"adjudicate_material": 3, "material_value_scale": 6}}, "not both"),
    ({"selfplay": {"material_value_scale": 0}}, "material_value_scale must be a number of "
                                                "pawns > 0, got 0"),
    ({"selfplay": {"material_value_scale": float("inf")}}, "pawns > 0, got inf"),
    ({"selfplay": {"material_value_scale": "x"}}, "material_value_scale must be a number"),
])
def test_config_errors_name_the_problem(change, message):
    with pytest.raises(ConfigError) as err:
        TrainConfig.from_dict({**MINI, **change})
    assert message in str(err.value)


def test_cli_reports_config_errors_in_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({**MINI, "generation": 3}))
    assert cli.main(["train", "--config", str(bad), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: unknown key(s) 'generation'")


def _params(out: Path, cfg: TrainConfig):
    _, model = build_network(cfg.network)
    like = Trainer(model, cfg.loss, cfg.optimizer).init()
    with Checkpointer(out / "checkpoints") as ckpt:
        return ckpt.restore(ckpt.latest(), like=like)


def _strip(rows: list[dict]) -> list[dict]:
    timing = {"seconds", "compile_seconds", "positions_per_s", "nodes_per_s", "steps_per_s",
              "samples_per_s"}
    return [{k: v for k, v in r.items() if k not in timing} for r in rows]


def _csv(path: Path) -> list[dict]:
    import csv

    with open(path, newline="") as f:
        return list(csv.DictReader(f))


@pytest.mark.tier2  # a whole training run
def test_run_end_to_end_and_resume_exactly(tmp_path, capsys):
    cfg = TrainConfig.from_dict(copy.deepcopy(MINI))
    full = run_training(cfg, tmp_path / "full", log=lambda s: None, tensorboard=tmp_path / "tb")
    assert full["finished"] and full["step"] == 4
    part = run_training(cfg, tmp_path / "resumed", stop_after_generations=1, log=lambda s: None)
    assert not part["finished"] and part["generations"] == 1
    # resume through the CLI, as a user would
    path = tmp_path / "mini.yaml"
    path.write_text(yaml.safe_dump(MINI))
    assert cli.main(["train", "--config", str(path), "--out", str(tmp_path / "resumed")]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out[-1].startswith("trained_vs_initial_score: ")
    score = float(out[-1].split(": ")[1])

    a_state, a_buf, a_meta = _params(tmp_path / "full", cfg)
    b_state, b_buf, b_meta = _params(tmp_path / "resumed", cfg)
    for x, y in zip(jax.tree.leaves(a_state), jax.tree.leaves(b_state), strict=True):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    for x, y in zip(a_buf.examples(), b_buf.examples(), strict=True):
        np.testing.assert_array_equal(x, y)
    assert a_meta == b_meta and a_buf.num_games == 6 and a_buf.games_added == 8
    for name in ("selfplay.csv", "train.csv", "eval.csv"):
        assert _strip(_csv(tmp_path / "full" / "metrics" / name)) == _strip(
            _csv(tmp_path / "resumed" / "metrics" / name)), name
    for gen in (1, 2):
        pgn = f"games/gen_{gen:04d}/games.pgn"
        assert (tmp_path / "full" / pgn).read_text() == (tmp_path / "resumed" / pgn).read_text()
    final = json.loads((tmp_path / "resumed" / "final.json").read_text())
    assert final == json.loads((tmp_path / "full" / "final.json").read_text())
    assert final["games"] == 2 and final["score"] == pytest.approx(score, abs=1e-4)

    sp = _csv(tmp_path / "full" / "metrics" / "selfplay.csv")
    assert [int(r["generation"]) for r in sp] == [1, 2]
    assert sum(int(r[k]) for r in sp for k in ("white_wins", "draws", "black_wins")) == 8
    assert sp[0]["n_scl"] == "2"  # the schedule's state is recorded per generation
    assert int(a_meta["nscl"]["n_scl"]) >= 1
    ev = _csv(tmp_path / "full" / "metrics" / "eval.csv")
    assert [(r["generation"], r["opponent"], r["games"]) for r in ev] == [("2", "initial", "2")]
    # the same rows in TensorBoard, at steps = self-play games so far
    scalars = read_scalars(tmp_path / "tb")
    tr = _csv(tmp_path / "full" / "metrics" / "train.csv")
    assert [s for s, _ in scalars["train/loss"]] == [int(r["games_total"]) for r in tr]
    assert [v for _, v in scalars["train/loss"]] == pytest.approx(
        [float(r["loss"]) for r in tr], rel=1e-5)
    assert scalars["selfplay/positions"] == [
        (int(r["games_total"]), float(r["positions"])) for r in sp]
    assert scalars["eval/initial/score"] == [(8, pytest.approx(float(ev[0]["score"])))]
    for plot in ("losses.png", "elo.png", "selfplay.png"):
        assert (tmp_path / "full" / "plots" / plot).stat().st_size > 1000
    # export every 0: the final net alone; it loads back for analyse / uci / analysis and
    # equals the trained params
    assert sorted(p.name for p in (tmp_path / "full" / "nets").iterdir()) == [
        "gen_0002.pb.gz", "latest.pb.gz"]
    model = load_model(str(tmp_path / "full" / "nets" / "latest.pb.gz"))
    for key in ("input", "value_fc2"):
        trained = np.asarray(a_state.params[key]["kernel"])
        step = (trained.max() - trained.min()) / 65535
        assert np.abs(np.asarray(model.params[key]["kernel"]) - trained).max() <= step
    # a folder of another config is refused, with a clear error
    other = TrainConfig.from_dict({**MINI, "seed": 2})
    with pytest.raises(ConfigError, match="different config"):
        run_training(other, tmp_path / "full", log=lambda s: None)


@pytest.mark.tier2  # a whole training loop
def test_readme_training_loop_runs(tmp_path, monkeypatch, capsys):
    """The README's 30-line training loop, executed as written."""
    text = (REPO / "README.md").read_text()
    block = text.split("<!-- training-loop -->", 1)[1].split("```python", 1)[1].split("```")[0]
    assert 20 <= len(block.strip().splitlines()) <= 32
    monkeypatch.chdir(tmp_path)
    exec(compile(block, "README.md", "exec"), {})
    lines = capsys.readouterr().out.strip().splitlines()
    assert [ln.split()[0] for ln in lines] == ["0", "1"]
    assert load_model(str(tmp_path / "my_net.pb.gz")).has_moves_left


def test_missing_stockfish_is_a_note_not_a_crash(monkeypatch):
    from zerochess.training import run as run_module

    monkeypatch.setattr(run_module, "find_stockfish", lambda: None)
    notes: list[str] = []
    fake = run_module._Run(TrainConfig.from_dict(MINI), Path("."), None, None, None, None,
                           None, notes.append, max_nodes=5)
    assert run_module._opponent(fake, "stockfish") is None
    assert run_module._opponent(fake, "stockfish") is None
    assert len(fake.notes) == 1 and "stockfish is not installed" in fake.notes[0]
    assert len(notes) == 1  # logged once


@pytest.mark.tier2  # a whole training run
def test_gpu_bench_config_runs_at_a_tiny_size(tmp_path, capsys):
    """configs/train_gpu_bench.yaml as shipped, shrunk to the MINI sizes: one generation,
    no evaluation; the command prints both throughput figures and writes throughput.json."""
    bench = yaml.safe_load((REPO / "configs" / "train_gpu_bench.yaml").read_text())
    assert bench["evaluation"]["final_games"] == 0 and bench["generations"] == 1
    TrainConfig.from_dict(bench)  # the shipped file is valid as it is
    bench["network"] = MINI["network"]
    bench["selfplay"].update(games=4, batch_size=4, max_plies=6)
    bench["selfplay"]["player"]["nodes"] = 4
    bench["training"].update(batch_size=16, steps_per_generation=3)
    path = tmp_path / "bench.yaml"
    path.write_text(yaml.safe_dump(bench))
    assert cli.main(["train", "--config", str(path), "--out", str(tmp_path / "b")]) == 0
    out = dict(ln.split(": ", 1) for ln in capsys.readouterr().out.strip().splitlines()
               if ": " in ln)
    for key in ("selfplay_positions_per_s", "train_samples_per_s"):
        assert float(out[key]) > 0
    measured = json.loads((tmp_path / "b" / "throughput.json").read_text())
    assert measured["train_batch"] == 16 and measured["selfplay_batch"] == 4
    assert measured["train_samples_per_s"] == pytest.approx(
        16 * measured["train_steps_per_s"], rel=1e-3)
    rows = _csv(tmp_path / "b" / "metrics" / "selfplay.csv")
    assert int(rows[0]["positions"]) == 4 * 6  # every game runs to the 6-ply cap
    assert not (tmp_path / "b" / "final.json").exists() or json.loads(
        (tmp_path / "b" / "final.json").read_text())["games"] == 0


@pytest.mark.tier2  # a whole experiment
def test_train_efficiency_experiment_end_to_end(tmp_path, capsys):
    """`zerochess experiment train_efficiency --rules device` shrunk to the MINI sizes: two
    runs from the same initial net, Elo vs training games per variant, final and
    head-to-head matches; a rerun resumes without playing anything."""
    from zerochess.experiments import get_experiment

    tiny = {"generations": 2, "games_per_generation": 4, "batch_size": 4, "nodes": 4,
            "max_plies": 12, "adjudicate_material": 1, "network": MINI["network"],
            "buffer": {"window_games": 8, "min_positions": 1},
            "training": MINI["training"],
            "evaluation": {"every": 1, "games": 2, "batch_size": 4, "max_plies": 12,
                           "nodes": 4, "opponents": ["initial"]},
            "final_games": 2, "head_to_head_games": 2}
    over = tmp_path / "over.yaml"
    over.write_text(yaml.safe_dump({"scales": {"tiny": tiny}}))
    exp = get_experiment("train_efficiency")
    from zerochess.games import players

    players._SEARCHERS.clear()
    out = exp.execute("tiny", tmp_path / "run", config_path=over, progress=False,
                      rules="device")  # the device rules path, self-play and matches
    assert {s.rules.on_device for _, s in players._SEARCHERS.values()} == {True}
    err = capsys.readouterr().err
    assert "expected run time at most" in err and "[train_efficiency] measured" in err
    curve = _csv(out / "train_efficiency.csv")
    assert sorted((r["variant"], r["games_total"]) for r in curve) == [
        ("puct", "4"), ("puct", "8"), ("sc", "4"), ("sc", "8")]
    assert all(r["opponent"] == "initial" and r["games"] == "2" for r in curve)
    finals = _csv(out / "final.csv")
    assert [r["match"] for r in finals] == ["puct vs initial", "sc vs initial", "sc vs puct"]
    assert all(int(r["wins"]) + int(r["draws"]) + int(r["losses"]) == 2 for r in finals)
    assert (out / "train_efficiency.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    summary = (out / "summary.md").read_text()
    assert "Elo vs training games" in summary and "search-contempt" in summary
    # same initial net and seed: generation 1's self-play differs only by the search
    a = _csv(out / "puct" / "metrics" / "selfplay.csv")
    b = _csv(out / "sc" / "metrics" / "selfplay.csv")
    assert a[0]["games"] == b[0]["games"] == "4" and b[0]["n_scl"] != ""
    sc_cfg = yaml.safe_load((out / "sc" / "config.yaml").read_text())
    puct_cfg = yaml.safe_load((out / "puct" / "config.yaml").read_text())
    assert sc_cfg["network"] == puct_cfg["network"] and sc_cfg["seed"] == puct_cfg["seed"]
    assert sc_cfg["selfplay"]["white"]["search"]["n_scl"] is not None
    assert puct_cfg["selfplay"]["white"]["search"]["n_scl"] is None
    before = (out / "train_efficiency.csv").read_text()
    exp.execute("tiny", tmp_path / "run", config_path=over, progress=False)
    assert (out / "train_efficiency.csv").read_text() == before


def test_train_efficiency_runs_on_the_rules_asked_for(tmp_path, monkeypatch):
    """``zerochess experiment train_efficiency --rules device`` hands the rules to every
    training run (the run itself is stopped at once)."""
    from zerochess.experiments import get_experiment, train_efficiency

    seen = []

    class Stop(Exception):
        pass

    def fake_run_training(config, out_dir, *, log=None, rules=None, **kwargs):
        seen.append(rules)
        raise Stop

    monkeypatch.setattr(train_efficiency, "run_training", fake_run_training)
    for rules in ("device", "host", None):
        with pytest.raises(Stop):
            get_experiment("train_efficiency").execute("tiny", tmp_path / str(rules),
                                                       progress=False, rules=rules)
    assert seen == ["device", "host", None]


@pytest.mark.tier2  # two whole training runs
def test_a_run_on_device_rules_plays_the_host_runs_games(tmp_path):
    """``zerochess train --rules device`` (self-play on the device game loop): the same
    games, examples and parameters as on the host's rules (one generation of MINI, its
    self-play and its training steps); the examples' search values to float32 rounding
    (the loss's value target here is the game result, so the parameters are the same)."""
    cfg = TrainConfig.from_dict({**copy.deepcopy(MINI), "generations": 1,
                                 "evaluation": {**MINI["evaluation"], "every": 0,
                                                "final_games": 0}})
    from zerochess.games import players

    for rules in ("host", "device"):
        run_training(cfg, tmp_path / rules, log=lambda s: None, rules=rules)
    assert {s.rules.on_device for _, s in players._SEARCHERS.values()} == {False, True}
    pgn = "games/gen_0001/games.pgn"
    assert (tmp_path / "host" / pgn).read_text() == (tmp_path / "device" / pgn).read_text()
    a_state, a_buf, _ = _params(tmp_path / "host", cfg)
    b_state, b_buf, _ = _params(tmp_path / "device", cfg)
    a_ex, b_ex = a_buf.examples(), b_buf.examples()
    for name, x, y in zip(a_ex._fields, a_ex, b_ex, strict=True):
        if name in ("root_q", "root_d", "best_q", "best_d"):
            # the trees' values: the device game loop's scan runs the network on batches of
            # other sizes than the host loop's, and XLA's sums may round otherwise there
            np.testing.assert_allclose(x, y, rtol=0, atol=1e-6, err_msg=name)
        else:
            np.testing.assert_array_equal(x, y, err_msg=name)
    for x, y in zip(jax.tree.leaves(a_state), jax.tree.leaves(b_state), strict=True):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
