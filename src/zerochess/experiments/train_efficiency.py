"""``train_efficiency``: does search-contempt self-play train a network faster per training
game than PUCT self-play? (The search-contempt paper's central claim, sec. 4.2.5.)"""

from __future__ import annotations

import csv
import dataclasses
import json
import math
import re
import sys
import time
from pathlib import Path
from typing import Any

from zerochess.errors import ConfigError, quote
from zerochess.experiments.common import (
    Context,
    Experiment,
    check_named_list,
    markdown_table,
    new_figure,
    save_figure,
    settings_path,
    write_csv,
)
from zerochess.games.config import as_int, check_keys
from zerochess.games.loop import RunStats
from zerochess.games.seeding import derive_seed
from zerochess.runs import write_json
from zerochess.training.config import TrainConfig
from zerochess.training.run import build_network, network_match, run_training, trained_params
from zerochess.training.selfplay_data import Player

NAME = "train_efficiency"
VARIANT_KEYS = ("name", "search", "temperature", "nscl_schedule")
EVAL_KEYS = ("every", "games", "batch_size", "max_plies", "nodes", "search", "temperature",
             "openings", "opponents")


def train_config(cfg: dict[str, Any], variant: dict[str, Any]) -> TrainConfig:
    """The ``zerochess train`` config of one variant (``ConfigError`` on bad settings)."""
    search = dict(cfg["search"] or {})
    search.update(variant.get("search") or {})
    evaluation = dict(cfg["evaluation"] or {})
    check_keys(evaluation, EVAL_KEYS, "evaluation")
    evaluation["final_games"] = cfg["final_games"]
    return TrainConfig.from_dict({
        "name": f"{NAME}_{variant['name']}",
        "seed": cfg["seed"],
        "generations": cfg["generations"],
        "network": cfg["network"],
        "selfplay": {
            "games": cfg["games_per_generation"], "batch_size": cfg["batch_size"],
            "max_plies": cfg["max_plies"], "adjudicate_material": cfg["adjudicate_material"],
            "material_value_scale": cfg["material_value_scale"], "openings": cfg["openings"],
            "player": {"name": variant["name"], "nodes": cfg["nodes"], "search": search,
                       "temperature": variant.get("temperature", cfg["temperature"])},
            "nscl_schedule": variant.get("nscl_schedule") or {"enabled": False}},
        "buffer": cfg["buffer"],
        "training": cfg["training"],
        "evaluation": evaluation,
        "checkpoint": {"keep": 1},
        "export": {"every": 0},
    }, base_dir=settings_path(NAME).parent)  # relative opening files: next to the settings


def _check(cfg: dict[str, Any]) -> None:
    check_named_list(cfg["variants"], "variants", VARIANT_KEYS)
    names = [v["name"] for v in cfg["variants"]]
    if len(set(names)) != len(names):
        raise ConfigError(f"variants: duplicate names in {names}")
    for key in ("generations", "games_per_generation", "nodes"):
        as_int(cfg[key], key, minimum=1)
    for key in ("final_games", "head_to_head_games"):
        as_int(cfg[key], key, minimum=0)
    for key in ("expected_positions_per_s", "expected_train_samples_per_s"):
        if not isinstance(cfg[key], (int, float)) or cfg[key] <= 0:
            raise ConfigError(f"{key} must be a number > 0, got {quote(cfg[key])}")
    configs = [train_config(cfg, v) for v in cfg["variants"]]
    for a in configs[1:]:  # matched compute: only the self-play search may differ
        b = configs[0]
        if (a.selfplay.white.nodes, a.steps_per_generation, a.batch_size) != (
                b.selfplay.white.nodes, b.steps_per_generation, b.batch_size):
            raise ConfigError("variants must use the same nodes and training steps")
        sched = a.selfplay.nscl_schedule
        if sched.enabled and sched.stable_generations:
            raise ConfigError("variants: nscl_schedule.stable_generations doubles the nodes "
                              "per move, so the runs would not have matched compute; set 0")


def expected_seconds(cfg: dict[str, Any], positions_per_s: float,
                     samples_per_s: float) -> float:
    """An upper estimate of the whole experiment's run time at the given rates: every game
    lasting ``max_plies`` (200 when uncapped), evaluation games included; compile time
    not included."""
    plies = cfg["max_plies"] or 200
    ev = cfg["evaluation"] or {}
    ev_plies = ev.get("max_plies") or 200
    runs = len(cfg["variants"])
    selfplay = runs * cfg["generations"] * cfg["games_per_generation"] * plies
    evals = cfg["generations"] // ev["every"] if ev.get("every") else 0
    opponents = len(ev.get("opponents", ["initial"]))
    eval_positions = runs * ev_plies * (evals * opponents * ev.get("games", 0)
                                        + cfg["final_games"])
    eval_positions += ev_plies * cfg["head_to_head_games"]
    # evaluation searches use their own node count; scale to self-play positions
    eval_scale = ev.get("nodes", cfg["nodes"]) / cfg["nodes"]
    train = cfg["generations"] * runs * cfg["training"].get("steps_per_generation", 32) \
        * cfg["training"].get("batch_size", 256)
    return (selfplay + eval_positions * eval_scale) / positions_per_s + train / samples_per_s


def _hms(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 3600}h{seconds // 60 % 60:02d}m{seconds % 60:02d}s"


def run(ctx: Context) -> str:
    cfg = ctx.config
    configs = {v["name"]: train_config(cfg, v) for v in cfg["variants"]}
    estimate = expected_seconds(cfg, cfg["expected_positions_per_s"],
                                cfg["expected_train_samples_per_s"])
    print(f"{NAME} ({ctx.scale}): {len(configs)} runs x {cfg['generations']} generations x "
          f"{cfg['games_per_generation']} games at {cfg['nodes']} nodes per move; expected "
          f"run time at most ~{_hms(estimate)} (at {cfg['expected_positions_per_s']:g} "
          f"self-play positions/s and {cfg['expected_train_samples_per_s']:g} training "
          "samples/s, compile time not included)", file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    summaries = {}
    for i, (name, tc) in enumerate(configs.items()):
        log = _logger(name, cfg, t0 if i == 0 else None)
        summaries[name] = run_training(tc, ctx.out_dir / name, log=log, rules=ctx.rules)
        ctx.stats.append(_selfplay_stats(ctx.out_dir / name))

    curve = []
    for name in configs:
        for row in _csv_rows(ctx.out_dir / name / "metrics" / "eval.csv"):
            curve.append({"variant": name, **row})
    finals = []
    for name, s in summaries.items():
        f = s["trained_vs_initial"]
        if f.get("games"):
            finals.append({"match": f"{name} vs initial", "games": f["games"], "wins": f["wins"],
                           "draws": f["draws"], "losses": f["losses"], "score": f["score"],
                           "score_low": f["score_low"], "score_high": f["score_high"],
                           "elo": f["elo"], "elo_low": f["elo_low"],
                           "elo_high": f["elo_high"], "los": f["los"]})
    names = list(configs)
    if cfg["head_to_head_games"] and len(names) >= 2:
        finals.append(_head_to_head(ctx, configs, names[-1], names[0]))
    write_csv(ctx.out_dir / f"{NAME}.csv", curve)
    write_csv(ctx.out_dir / "final.csv", finals)
    plot(curve, ctx.out_dir / f"{NAME}.png")
    ctx.notes += [n for s in summaries.values() for n in s.get("notes", [])]
    rates = {name: {k: s.get(k) for k in ("selfplay_positions_per_s", "train_steps_per_s",
                                           "train_samples_per_s")}
             for name, s in summaries.items()}
    return _summary(cfg, configs, curve, finals, rates)


def _logger(name: str, cfg: dict[str, Any], t0: float | None):
    """Progress lines prefixed with the variant; the first run's first generation line
    also re-estimates the whole experiment's time from the measured rates."""
    state = {"done": False}

    def log(line: str) -> None:
        print(f"[{name}] {line}", file=sys.stderr, flush=True)
        if t0 is not None and not state["done"] and line.startswith("gen 1/"):
            state["done"] = True
            measured = _measured_rates(line)
            if measured is not None:
                est = expected_seconds(cfg, *measured)
                print(f"[{NAME}] measured {measured[0]:.1f} positions/s, {measured[1]:.0f} "
                      f"samples/s: expected total at most ~{_hms(est)} "
                      f"({_hms(time.perf_counter() - t0)} so far)", file=sys.stderr, flush=True)

    return log


def _measured_rates(line: str) -> tuple[float, float] | None:
    """(positions/s, samples/s) from a generation's log line, None if it lacks one."""
    pos = re.search(r"([0-9.]+) positions/s", line)
    samples = re.search(r"([0-9.]+) samples/s", line)
    if pos is None or samples is None:
        return None
    rates = float(pos.group(1)), float(samples.group(1))
    return rates if min(rates) > 0 else None


def _head_to_head(ctx: Context, configs: dict[str, TrainConfig], a: str, b: str
                  ) -> dict[str, Any]:
    """The final networks of variants ``a`` and ``b`` against each other (same model,
    two parameter sets: one compiled searcher)."""
    cfg = ctx.config
    cached = ctx.out_dir / "head_to_head.json"
    if cached.is_file():  # a rerun of a finished experiment: the same match
        row = json.loads(cached.read_text())
        if row.get("match") == f"{a} vs {b}" and row.get("games") == cfg["head_to_head_games"]:
            return row
    tc = configs[a]
    _, model = build_network(tc.network)
    ev = tc.evaluation
    players = {}
    for name in (a, b):
        _, params = trained_params(configs[name], ctx.out_dir / name)
        players[name] = Player(dataclasses.replace(ev.player, name=name), model, params,
                               collect=False)
    nodes = max(tc.selfplay.white.nodes, ev.player.nodes) + 1
    result = network_match(players, a, b, cfg["head_to_head_games"], ev.openings,
                           derive_seed(cfg["seed"], 0x4EAD), ctx.out_dir / "head_to_head",
                           batch_size=ev.batch_size, max_plies=ev.max_plies, max_nodes=nodes,
                           event=f"zerochess {NAME} head to head", rules=ctx.rules)
    lo, hi = result.elo_interval()
    half = 1.959964 * result.stderr
    row = {"match": f"{a} vs {b}", "games": result.games, "wins": result.wins,
           "draws": result.draws, "losses": result.losses, "score": result.score,
           "score_low": result.score - half, "score_high": result.score + half,
           "elo": result.elo, "elo_low": lo, "elo_high": hi, "los": result.los}
    write_json(cached, row)
    return row


def _csv_rows(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    out = []
    for r in rows:
        out.append({"generation": int(r["generation"]), "games_total": int(r["games_total"]),
                    "opponent": r["opponent"], "games": int(r["games"]),
                    "wins": int(r["wins"]), "draws": int(r["draws"]),
                    "losses": int(r["losses"]), "score": float(r["score"]),
                    "elo": float(r["elo"]), "elo_low": float(r["elo_low"]),
                    "elo_high": float(r["elo_high"]), "los": float(r["los"])})
    return out


def _selfplay_stats(run_dir: Path) -> RunStats:
    """The self-play throughput of a run (all its generations) as ``RunStats``."""
    rows = [r for r in _plain_rows(run_dir / "metrics" / "selfplay.csv")]
    stats = RunStats()
    for r in rows:
        stats.games += int(r["games"])
        stats.positions += int(r["positions"])
        stats.seconds += float(r["seconds"])
        stats.compile_seconds += float(r["compile_seconds"] or 0)
        stats.nodes += round(float(r["nodes_per_s"]) * (float(r["seconds"])
                                                        - float(r["compile_seconds"] or 0)))
    return stats


def _plain_rows(path: Path) -> list[dict[str, str]]:
    if not path.is_file():
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def plot(curve: list[dict[str, Any]], path: Path) -> None:
    """Elo (95% interval) against training games, one line per (variant, reference)."""
    fig, ax = new_figure(figsize=(7, 4.5))
    clip = 800  # a 100% score has an infinite Elo: drawn at the clip
    variants = sorted({r["variant"] for r in curve})
    opponents = sorted({r["opponent"] for r in curve})
    markers = "osd^v"
    for i, variant in enumerate(variants):
        for j, opp in enumerate(opponents):
            pts = [r for r in curve if r["variant"] == variant and r["opponent"] == opp]
            if not pts:
                continue
            x = [r["games_total"] for r in pts]
            y = [max(-clip, min(clip, r["elo"])) for r in pts]
            lo = [y_ - max(-clip, min(clip, r["elo_low"])) for y_, r in zip(y, pts, strict=True)]
            hi = [max(-clip, min(clip, r["elo_high"])) - y_ for y_, r in zip(y, pts, strict=True)]
            ax.errorbar(x, y, yerr=[lo, hi], marker=markers[j % len(markers)], capsize=3,
                        color=f"C{i}", linestyle="-" if j == 0 else "--",
                        label=f"{variant} vs {opp}")
    ax.axhline(0, color="grey", lw=0.8)
    ax.set_xlabel("training games (self-play)")
    ax.set_ylabel(f"Elo difference, 95% interval (clipped at +-{clip})")
    ax.set_title("Elo vs training games: PUCT vs search-contempt self-play")
    if curve:
        ax.legend(fontsize=8)
    save_figure(fig, path)


def _fmt_rate(value: Any, digits: int = 1) -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) \
        else f"{value:.{digits}f}"


def _summary(cfg: dict[str, Any], configs: dict[str, TrainConfig],
             curve: list[dict[str, Any]], finals: list[dict[str, Any]],
             rates: dict[str, dict[str, Any]]) -> str:
    lines = [
        f"{len(configs)} training runs from the same initial network "
        f"(`{next(iter(configs.values())).network.blocks}x"
        f"{next(iter(configs.values())).network.filters}` SE-ResNet, init seed "
        f"{next(iter(configs.values())).network.init_seed}) and seed {cfg['seed']}: "
        f"{cfg['generations']} generations x {cfg['games_per_generation']} self-play games "
        f"at {cfg['nodes']} nodes per move, move cap {cfg['max_plies'] or 'none'}"
        + (f" (capped games' value targets adjudicated by material at >= "
           f"{cfg['adjudicate_material']} pawns)" if cfg["adjudicate_material"] else "")
        + (f" (capped games' value targets graded by material: W - L = tanh(balance / "
           f"{cfg['material_value_scale']:g}))" if cfg["material_value_scale"] else "")
        + ", the same training steps per generation.", ""]
    for name, tc in configs.items():
        p = tc.selfplay.white
        sched = tc.selfplay.nscl_schedule
        what = "PUCT" if p.search.n_scl is None else (
            f"search-contempt, adaptive N_scl from {sched.initial_n_scl} "
            f"(band {sched.target_low}-{sched.target_high})" if sched.enabled
            else f"search-contempt, N_scl {p.search.n_scl}")
        lines.append(f"- `{name}`: {what}; temperature {p.temperature.temperature} "
                     f"(decay over {p.temperature.decay_moves} moves, endgame "
                     f"{p.temperature.endgame_temperature})")
    lines += ["", "## Elo vs training games (95% intervals)", "",
              f"![Elo vs training games]({NAME}.png)", "",
              markdown_table(curve, ["variant", "games_total", "opponent", "games", "wins",
                                     "draws", "losses", "score", "elo", "elo_low",
                                     "elo_high"]),
              "## Final matches", "",
              markdown_table(finals, ["match", "games", "wins", "draws", "losses", "score",
                                      "score_low", "score_high", "elo", "elo_low",
                                      "elo_high", "los"]),
              "## Throughput (compile time excluded)", "",
              "| variant | self-play positions/s | training steps/s | training samples/s |",
              "|---|---|---|---|"]
    for name, r in rates.items():
        lines.append(f"| {name} | {_fmt_rate(r['selfplay_positions_per_s'])} | "
                     f"{_fmt_rate(r['train_steps_per_s'], 2)} | "
                     f"{_fmt_rate(r['train_samples_per_s'], 0)} |")
    lines += ["", "Per run: `<variant>/metrics/*.csv`, `<variant>/plots/*.png`, "
              "`<variant>/summary.md`."]
    return "\n".join(lines) + "\n"


EXPERIMENT = Experiment(
    NAME, "Training efficiency: PUCT vs search-contempt self-play at matched compute",
    run, _check)
