"""``zerochess train``: self-play -> replay buffer -> training -> checkpoints -> evaluation."""

from __future__ import annotations

import csv
import dataclasses
import functools
import math
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from zerochess.errors import UserError
from zerochess.games.config import EngineSpec, OpeningSpec, PlayerSpec
from zerochess.games.loop import GameSpec
from zerochess.games.match import match_result, paired_specs
from zerochess.games.openings import build_openings
from zerochess.games.records import GameWriter
from zerochess.games.seeding import derive_seed, game_seed
from zerochess.games.stats import MatchResult
from zerochess.lc0_files import find_stockfish
from zerochess.neural.lc0_export import export_lc0
from zerochess.neural.lc0_weights import lc0_params, read_lc0_file
from zerochess.neural.model import Model
from zerochess.neural.resnet import SEResNet, init_params, model_from_module
from zerochess.runs import prepare_run_dir, write_json
from zerochess.training.buffer import ReplayBuffer
from zerochess.training.checkpoint import Checkpointer
from zerochess.training.config import NetworkConfig, TrainConfig
from zerochess.training.losses import LossConfig
from zerochess.training.schedule import NsclState, decisive_ratio, next_state
from zerochess.training.selfplay_data import Player, play_training_games
from zerochess.training.tensorboard import TensorBoardLog
from zerochess.training.trainer import OptimizerConfig, Trainer, TrainState, sample_rng
from zerochess.yaml_config import load_yaml_file

SELFPLAY_FIELDS = ["generation", "games_total", "games", "white_wins", "draws", "black_wins",
                   "adjudicated", "decisive_ratio", "n_scl", "nodes", "positions", "mean_plies",
                   "seconds", "compile_seconds", "positions_per_s", "nodes_per_s",
                   "buffer_games", "buffer_positions"]
TRAIN_FIELDS = ["generation", "step", "games_total", "lr", "loss", "policy", "value",
                "moves_left", "reg", "value_mse", "policy_accuracy", "moves_left_mae",
                "grad_norm", "steps", "seconds", "compile_seconds", "steps_per_s",
                "samples_per_s"]
EVAL_FIELDS = ["generation", "games_total", "opponent", "games", "wins", "draws", "losses",
               "score", "elo", "elo_low", "elo_high", "los"]


@functools.lru_cache(maxsize=4)
def build_network(cfg: NetworkConfig) -> tuple[SEResNet, Model]:
    """The flax module and its initial ``Model`` (random, or read from ``cfg.init``).

    Cached per config: runs of the same network share one ``Model`` object, hence the
    compiled searcher and train step (the parameters are never modified in place)."""
    if cfg.init is not None:
        config, params = lc0_params(read_lc0_file(cfg.init), where=cfg.init)
        module = SEResNet(**config)
        return module, model_from_module(module, params, f"init:{Path(cfg.init).name}")
    se_channels = max(1, cfg.filters // cfg.se_ratio) if cfg.se_ratio else 0
    module = SEResNet(blocks=cfg.blocks, filters=cfg.filters, se_channels=se_channels,
                      policy=cfg.policy, policy_channels=80 if cfg.policy == "conv" else 32,
                      value=cfg.value, moves_left=cfg.moves_left, activation=cfg.activation)
    params = init_params(module, cfg.init_seed)
    return module, model_from_module(
        module, params, f"resnet:{cfg.blocks}x{cfg.filters}:{cfg.init_seed}")


@functools.lru_cache(maxsize=4)
def _trainer(model: Model, loss: LossConfig, optimizer: OptimizerConfig) -> Trainer:
    """One ``Trainer`` (compiled steps) per model and options."""
    return Trainer(model, loss, optimizer)


class _Csv:
    """An append-only metrics CSV that can drop rows of generations to be redone."""

    def __init__(self, path: Path, fields: list[str],
                 tensorboard: TensorBoardLog | None = None) -> None:
        self.path, self.fields, self.tensorboard = path, fields, tensorboard

    def rows(self) -> list[dict[str, str]]:
        if not self.path.is_file():
            return []
        with open(self.path, newline="") as f:
            return [r for r in csv.DictReader(f) if None not in r.values()]

    def truncate(self, generation: int) -> None:
        """Keep only rows of generations <= ``generation``."""
        keep = [r for r in self.rows() if int(r["generation"]) <= generation]
        with open(self.path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=self.fields)
            w.writeheader()
            w.writerows(keep)

    def append(self, row: dict[str, Any]) -> None:
        new = not self.path.is_file()
        with open(self.path, "a", newline="") as f:
            w = csv.DictWriter(f, fieldnames=self.fields)
            if new:
                w.writeheader()
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in row.items()})
        if self.tensorboard is not None:
            self.tensorboard.row(self.path.stem, row)


def _gen_dir(root: Path, gen: int, suffix: str = "") -> Path:
    d = root / f"gen_{gen:04d}{suffix}"
    if d.exists():  # a generation being redone after an interruption: same games again
        shutil.rmtree(d)
    return d


@dataclasses.dataclass
class _Run:
    """Everything a running training loop holds."""

    cfg: TrainConfig
    out: Path
    module: SEResNet
    model: Model
    builtin: Model | None
    initial_params: Any
    trainer: Trainer
    log: Callable[[str], None]
    max_nodes: int
    notes: list[str] = dataclasses.field(default_factory=list)
    rules: str | None = None  # where the searches' chess rules run (None: the default)

    def builtin_model(self) -> Model:
        if self.builtin is None:
            from zerochess.neural import load_model

            self.builtin = load_model("builtin")
        return self.builtin


def _selfplay_players(run: _Run, params: Any, sched: NsclState) -> dict[str, Player]:
    sp = run.cfg.selfplay

    def adapt(p: PlayerSpec) -> PlayerSpec:
        search = p.search
        if run.cfg.selfplay.nscl_schedule.enabled and search.n_scl is not None:
            search = search.replace(n_scl=sched.n_scl)
        return dataclasses.replace(p, search=search, nodes=sched.nodes)

    white, black = adapt(sp.white), adapt(sp.black)
    if white.name == black.name and white != black:
        white = dataclasses.replace(white, name=f"{white.name}-white")
        black = dataclasses.replace(black, name=f"{black.name}-black")
    return {white.name: Player(white, run.model, params),
            black.name: Player(black, run.model, params)}


def _selfplay_specs(run: _Run, gen: int, players: dict[str, Player]) -> list[GameSpec]:
    cfg = run.cfg
    names = list(players)
    openings = build_openings(cfg.selfplay.openings, cfg.selfplay.games,
                              derive_seed(cfg.seed, gen, 0x0BE7))
    specs = []
    for i in range(cfg.selfplay.games):
        index = gen * cfg.selfplay.games + i
        w, b = (names[0], names[-1])
        if len(names) == 2 and i % 2 == 1:  # different configs per side: alternate colours
            w, b = b, w
        specs.append(GameSpec(index, w, b, openings[i], game_seed(cfg.seed, index)))
    return specs


def _opponent(run: _Run, opp: str | PlayerSpec) -> tuple[str, Player] | None:
    ev = run.cfg.evaluation.player
    if opp == "initial":
        return "initial", Player(dataclasses.replace(ev, name="initial"), run.model,
                                 run.initial_params, collect=False)
    if opp == "builtin":
        return "builtin", Player(dataclasses.replace(ev, name="builtin"), run.builtin_model(),
                                 collect=False)
    if opp == "stockfish":
        if find_stockfish() is None:
            note = "stockfish is not installed (apt-get install stockfish): its matches skipped"
            if note not in run.notes:
                run.notes.append(note)
                run.log(f"note: {note}")
            return None
        spec = PlayerSpec("stockfish", nodes=0, engine=EngineSpec(kind="stockfish",
                                                                  skill_level=0, depth=1))
        return "stockfish", Player(spec, collect=False)
    assert isinstance(opp, PlayerSpec)
    if opp.is_engine:
        return opp.name, Player(opp, collect=False)
    return opp.name, Player(opp, run.builtin_model(), collect=False)


def network_match(players: dict[str, Player], p1: str, p2: str, games: int,
                  openings: OpeningSpec, seed: int, out_dir: Path, *, batch_size: int,
                  max_plies: int | None, max_nodes: int | None = None,
                  event: str = "zerochess train match", rules: str | None = None
                  ) -> MatchResult:
    """A match of ``p1`` against ``p2`` (colours alternate, each opening played with both
    colours) written to ``out_dir`` (replaced when it exists); the result from ``p1``'s
    view. Players of one model with different params share one compiled searcher."""
    specs = paired_specs(p1, p2, games, openings, seed)
    if out_dir.exists():  # a match being redone after an interruption: the same games again
        shutil.rmtree(out_dir)
    with GameWriter(out_dir, event=event) as writer:
        played = play_training_games(specs, players, batch_size=batch_size,
                                     max_plies=max_plies, max_nodes=max_nodes,
                                     writer=writer, shrink_tail=True, rules=rules)
    return match_result([r.csv_row() for r in played.records], p1)


def _evaluate(run: _Run, gen: int, params: Any, games: int, games_total: int,
              opponents: tuple[str | PlayerSpec, ...], tag: str = "") -> list[dict[str, Any]]:
    """Matches of the trained net against ``opponents`` (colours alternate, openings paired);
    ``tag`` names a separate series (its own games folder and seeds)."""
    ev = run.cfg.evaluation
    rows = []
    for k, opp in enumerate(opponents):
        found = _opponent(run, opp)
        if found is None or games == 0:
            continue
        name, player = found
        players = {"trained": Player(ev.player, run.model, params, collect=False), name: player}
        salt = 0xF1A1 if tag else 0xE7A1
        result = network_match(players, "trained", name, games, ev.openings,
                               derive_seed(run.cfg.seed, gen, k, salt),
                               run.out / "eval" / f"gen_{gen:04d}_{tag}{name}",
                               batch_size=ev.batch_size, max_plies=ev.max_plies,
                               max_nodes=run.max_nodes,
                               event=f"zerochess train eval gen {gen}", rules=run.rules)
        lo, hi = result.elo_interval()
        rows.append({"generation": gen, "games_total": games_total, "opponent": name,
                     "games": result.games, "wins": result.wins, "draws": result.draws,
                     "losses": result.losses, "score": result.score, "elo": result.elo,
                     "elo_low": lo, "elo_high": hi, "los": result.los})
        run.log(f"  {tag or 'eval '}gen {gen} vs {name}: {result.summary()}")
    return rows


def _allow_more_generations(out: Path, cfg: TrainConfig) -> None:
    """A run may be extended (or shortened) by ``generations`` alone: accept its folder."""
    import yaml

    path = out / "config.yaml"
    if not path.is_file():
        return
    try:
        old = load_yaml_file(path, "run config file")
    except UserError:
        return
    new = yaml.safe_load(yaml.safe_dump(cfg.to_dict()))
    if isinstance(old, dict) and {**old, "generations": None} == {**new, "generations": None}:
        path.write_text(yaml.safe_dump(new, sort_keys=False))


def _means(rows: list[dict[str, float]]) -> dict[str, float]:
    return {k: float(np.mean([r[k] for r in rows])) for k in rows[0]} if rows else {}


def run_training(config: TrainConfig, out_dir: str | Path, *,
                 stop_after_generations: int | None = None,
                 log: Callable[[str], None] | None = None,
                 tensorboard: str | Path | None = None,
                 rules: str | None = None) -> dict[str, Any]:
    """Run (or resume) a training run into ``out_dir``.

    Args:
      config: the run.
      out_dir: output folder (see docs/DESIGN.md); an existing folder of the same
        config is resumed (or extended when only ``generations`` grew), one of another
        config is refused.
      stop_after_generations: stop after this many generations in this call (simulates an
        interruption; the next call resumes).
      log: progress lines (default: stderr).
      tensorboard: also log the metrics rows to this TensorBoard folder (needs
        tensorboardX; ``zerochess.training.tensorboard``).
      rules: where the searches' chess rules run (``host``, ``device``; None: device on an
        accelerator, host on a CPU). Not part of the run's config: both give the same
        games, so a run may be resumed on the other.

    Returns:
      A summary: ``trained_vs_initial`` (the final match's W/D/L, score, Elo), throughput
      and paths; ``finished`` is False when stopped early.
    """
    log = log or (lambda line: print(line, file=sys.stderr, flush=True))
    cfg = config
    _allow_more_generations(Path(out_dir), cfg)
    out = prepare_run_dir(out_dir, cfg.to_dict())
    for sub in ("games", "eval", "nets", "metrics", "plots"):
        (out / sub).mkdir(exist_ok=True)
    module, model = build_network(cfg.network)
    sched_cfg = cfg.selfplay.nscl_schedule
    base_nodes = max(cfg.selfplay.white.nodes, cfg.selfplay.black.nodes)
    most_nodes = max(base_nodes, sched_cfg.max_nodes or 0) if sched_cfg.stable_generations \
        else base_nodes
    run = _Run(cfg, out, module, model, None, model.params,
               _trainer(model, cfg.loss, cfg.optimizer), log,
               max_nodes=max(most_nodes, cfg.evaluation.player.nodes) + 1, rules=rules)
    state = run.trainer.init()
    buffer = ReplayBuffer(cfg.window_games)
    sched = NsclState(n_scl=sched_cfg.initial_n_scl, nodes=base_nodes)
    board = TensorBoardLog(tensorboard) if tensorboard is not None else None
    sp_csv = _Csv(out / "metrics" / "selfplay.csv", SELFPLAY_FIELDS, board)
    tr_csv = _Csv(out / "metrics" / "train.csv", TRAIN_FIELDS, board)
    ev_csv = _Csv(out / "metrics" / "eval.csv", EVAL_FIELDS, board)
    gen = 0
    ckpt = Checkpointer(out / "checkpoints", keep=cfg.checkpoint_keep)
    try:
        latest = ckpt.latest()
        if latest is not None:
            state, buffer, meta = ckpt.restore(latest, like=state)
            gen = int(meta["generation"])
            sched = NsclState.from_dict(meta["nscl"])
            log(f"resuming {cfg.name} after generation {gen} (step {int(state.step)}, "
                f"{buffer.num_games} games / {len(buffer)} positions in the buffer)")
        for table in (sp_csv, tr_csv, ev_csv):
            table.truncate(gen)
        started = gen
        while gen < cfg.generations:
            if stop_after_generations is not None and gen - started >= stop_after_generations:
                break
            gen, state, sched = _generation(run, gen, state, buffer, sched, sp_csv, tr_csv,
                                            ev_csv)
            ckpt.save(gen, state, buffer, {"generation": gen, "step": int(state.step),
                                           "seed": cfg.seed, "nscl": sched.to_dict()})
    finally:
        ckpt.close()
        if board is not None:
            board.close()
    finished = gen >= cfg.generations
    summary: dict[str, Any] = {"name": cfg.name, "generations": gen, "finished": finished,
                               "step": int(state.step), "out_dir": str(out)}
    if finished:
        summary["trained_vs_initial"] = _final_match(run, gen, state.params)
    _plots(out)
    rates = _throughput(sp_csv, tr_csv, cfg)
    summary.update(rates)
    if rates:
        _write_throughput(out, cfg, rates)
    summary["notes"] = run.notes
    if finished:
        _write_summary(out, cfg, summary)
    return summary


def trained_params(config: TrainConfig, out_dir: str | Path) -> tuple[int, Any]:
    """The generation and network parameters of a run's latest checkpoint (generation 0
    and the initial parameters when it has none)."""
    _, model = build_network(config.network)
    trainer = _trainer(model, config.loss, config.optimizer)
    with Checkpointer(Path(out_dir) / "checkpoints", keep=config.checkpoint_keep) as ckpt:
        latest = ckpt.latest()
        if latest is None:
            return 0, model.params
        state, _, meta = ckpt.restore(latest, like=trainer.init())
    return int(meta["generation"]), state.params


def _generation(run: _Run, gen: int, state: TrainState, buffer: ReplayBuffer,
                sched: NsclState, sp_csv: _Csv, tr_csv: _Csv, ev_csv: _Csv
                ) -> tuple[int, TrainState, NsclState]:
    """One generation: self-play, training, export, evaluation when due.

    Returns the generations done, the new train state and the schedule's next state."""
    cfg = run.cfg
    players = _selfplay_players(run, state.params, sched)
    specs = _selfplay_specs(run, gen, players)
    t0 = time.perf_counter()
    with GameWriter(_gen_dir(run.out / "games", gen + 1), event=f"zerochess train gen {gen + 1}",
                    pgn_comments=True) as writer:
        played = play_training_games(specs, players, batch_size=cfg.selfplay.batch_size,
                                     max_plies=cfg.selfplay.max_plies,
                                     max_nodes=run.max_nodes, writer=writer,
                                     adjudicate_material=cfg.selfplay.adjudicate_material,
                                     material_scale=cfg.selfplay.material_value_scale,
                                     rules=run.rules)
    seconds = time.perf_counter() - t0
    search_s = max(seconds - played.stats.compile_seconds, 1e-9)  # first batch compiles
    order = sorted(range(len(played.records)), key=lambda i: played.records[i].index)
    buffer.add_games(played.examples[i] for i in order)
    results = [played.records[i].result for i in order]
    ww, dd, bw = results.count("1-0"), results.count("1/2-1/2"), results.count("0-1")
    ratio = decisive_ratio(ww, dd, bw)
    games_total = (gen + 1) * cfg.selfplay.games
    sp_csv.append({
        "generation": gen + 1, "games_total": games_total, "games": len(results),
        "white_wins": ww, "draws": dd, "black_wins": bw, "adjudicated": played.adjudicated,
        "decisive_ratio": ratio,
        "n_scl": sched.n_scl if cfg.selfplay.nscl_schedule.enabled else "",
        "nodes": sched.nodes, "positions": played.stats.positions,
        "mean_plies": float(np.mean([len(r.moves) for r in played.records])),
        "seconds": seconds, "compile_seconds": played.stats.compile_seconds,
        "positions_per_s": played.stats.positions / search_s,
        "nodes_per_s": played.stats.nodes / search_s, "buffer_games": buffer.num_games,
        "buffer_positions": len(buffer)})
    new_sched = next_state(cfg.selfplay.nscl_schedule, sched, ww + bw, dd, 0)
    line = (f"gen {gen + 1}/{cfg.generations}: self-play {len(results)} games W/D/L "
            f"{ww}/{dd}/{bw} (w+l)/d {ratio:.2f}, {played.stats.positions / search_s:.1f} "
            f"positions/s")
    if cfg.selfplay.adjudicate_material is not None \
            or cfg.selfplay.material_value_scale is not None:
        line += f", {played.adjudicated} capped games adjudicated by material"
    if cfg.selfplay.nscl_schedule.enabled:
        line += f", N_scl {sched.n_scl} -> {new_sched.n_scl}, nodes {new_sched.nodes}"

    metrics: list[dict[str, float]] = []
    compile_s = 0.0
    t1 = time.perf_counter()
    if len(buffer) >= cfg.min_positions:
        for _ in range(cfg.steps_per_generation):
            batch = buffer.sample(cfg.batch_size, sample_rng(cfg.seed, int(state.step)))
            ts, first = time.perf_counter(), run.trainer.steps_taken == 0
            state, m = run.trainer.step(state, batch)
            if first:  # the trainer's first step compiles it
                compile_s = time.perf_counter() - ts
            metrics.append(m)
    train_s = time.perf_counter() - t1
    step_s = max(train_s - compile_s, 1e-9)
    if metrics:
        mean = _means(metrics)
        tr_csv.append({"generation": gen + 1, "step": int(state.step),
                       "games_total": games_total,
                       **{k: mean[k] for k in TRAIN_FIELDS if k in mean},
                       "steps": len(metrics), "seconds": train_s, "compile_seconds": compile_s,
                       "steps_per_s": (len(metrics) - bool(compile_s)) / step_s,
                       "samples_per_s": (len(metrics) - bool(compile_s)) * cfg.batch_size
                       / step_s})
        line += (f" | train {len(metrics)} steps loss {mean['loss']:.3f} (policy "
                 f"{mean['policy']:.3f}, value {mean['value']:.3f}, moves-left "
                 f"{mean['moves_left']:.3f}), {(len(metrics) - bool(compile_s)) / step_s:.2f} "
                 f"steps/s ({(len(metrics) - bool(compile_s)) * cfg.batch_size / step_s:.0f} "
                 "samples/s)")
    run.log(line)
    gen += 1
    ev = cfg.evaluation
    if gen == cfg.generations or (cfg.export_every and gen % cfg.export_every == 0):
        export_lc0(run.out / "nets" / f"gen_{gen:04d}.pb.gz", run.module, state.params,
                   encoding=cfg.export_encoding)
        shutil.copyfile(run.out / "nets" / f"gen_{gen:04d}.pb.gz",
                        run.out / "nets" / "latest.pb.gz")
    if ev.every and gen % ev.every == 0:
        for row in _evaluate(run, gen, state.params, ev.games, games_total, ev.opponents):
            ev_csv.append(row)
    return gen, state, new_sched


def _final_match(run: _Run, gen: int, params: Any) -> dict[str, Any]:
    """The final trained-vs-initial match (kept in final.json, so a rerun reuses it)."""
    path = run.out / "final.json"
    ev = run.cfg.evaluation
    if path.is_file():
        import json

        done = json.loads(path.read_text())
        if done.get("generation") == gen and done.get("games") == ev.final_games:
            return done
    if ev.final_games == 0:
        return {"generation": gen, "games": 0, "score": math.nan}
    games_total = gen * run.cfg.selfplay.games
    rows = _evaluate(run, gen, params, ev.final_games, games_total, ("initial",), tag="final_")
    row = rows[0]
    result = MatchResult(row["wins"], row["draws"], row["losses"])
    final = {"generation": gen, "games_total": games_total, **result.to_dict(),
             "score_low": result.score - 1.959964 * result.stderr,
             "score_high": result.score + 1.959964 * result.stderr}
    write_json(path, final)
    return final


def _throughput(sp_csv: _Csv, tr_csv: _Csv, cfg: TrainConfig) -> dict[str, float]:
    """Self-play and training rates of the whole run, compile time excluded."""
    sp, tr = sp_csv.rows(), tr_csv.rows()
    out: dict[str, float] = {}
    if sp:
        secs = sum(float(r["seconds"]) - float(r["compile_seconds"] or 0) for r in sp)
        nodes = sum(float(r["nodes_per_s"]) * (float(r["seconds"])
                                               - float(r["compile_seconds"] or 0)) for r in sp)
        out["selfplay_positions_per_s"] = sum(int(r["positions"]) for r in sp) / secs
        out["selfplay_nodes_per_s"] = nodes / secs
    if tr:
        secs = sum(float(r["seconds"]) - float(r["compile_seconds"] or 0) for r in tr)
        steps = sum(int(r["steps"]) - (float(r["compile_seconds"] or 0) > 0) for r in tr)
        if steps > 0 and secs > 0:
            out["train_steps_per_s"] = steps / secs
            out["train_samples_per_s"] = steps * cfg.batch_size / secs
    return out


def _write_throughput(out: Path, cfg: TrainConfig, rates: dict[str, float]) -> None:
    """``throughput.json``: the rates with what they were measured on (the machine and
    versions are in ``versions.yaml``)."""
    import jax

    net = cfg.network
    write_json(out / "throughput.json", {
        **{k: round(v, 3) for k, v in rates.items()},
        "device": ", ".join(d.device_kind for d in jax.devices()),
        "backend": jax.default_backend(),
        "network": f"{net.blocks}x{net.filters}" if net.init is None else net.init,
        "selfplay_batch": cfg.selfplay.batch_size,
        "nodes_per_move": max(cfg.selfplay.white.nodes, cfg.selfplay.black.nodes),
        "train_batch": cfg.batch_size,
        "note": "compile time excluded; self-play includes the host's move generation"})


def _plots(out: Path) -> None:
    """Losses vs step, Elo vs training games, self-play W/D/L and (w+l)/d."""
    import pandas as pd
    from matplotlib.figure import Figure  # not pyplot: the caller's backend is left alone

    metrics = out / "metrics"

    def read(name: str) -> Any:
        p = metrics / name
        return pd.read_csv(p) if p.is_file() and p.stat().st_size else None

    tr, ev, sp = read("train.csv"), read("eval.csv"), read("selfplay.csv")
    if tr is not None and len(tr):
        fig = Figure(figsize=(6, 4))
        ax = fig.subplots()
        for col in ("loss", "policy", "value", "moves_left"):
            ax.plot(tr["step"], tr[col], marker=".", label=col)
        ax.set_xlabel("training step")
        ax.set_ylabel("loss (mean over the generation)")
        ax.legend()
        fig.tight_layout()
        fig.savefig(out / "plots" / "losses.png", dpi=110)
    if ev is not None and len(ev):
        fig = Figure(figsize=(6, 4))
        ax = fig.subplots()
        for name, g in ev.groupby("opponent"):
            elo = g["elo"].clip(-800, 800)
            err = [elo - g["elo_low"].clip(-800, 800), g["elo_high"].clip(-800, 800) - elo]
            ax.errorbar(g["games_total"], elo, yerr=err, marker="o", capsize=3,
                        label=f"vs {name}")
        ax.axhline(0, color="grey", lw=0.8)
        ax.set_xlabel("training games")
        ax.set_ylabel("Elo difference (95% interval)")
        ax.legend()
        fig.tight_layout()
        fig.savefig(out / "plots" / "elo.png", dpi=110)
    if sp is not None and len(sp):
        fig = Figure(figsize=(9, 3.5))
        a1, a2 = fig.subplots(1, 2)
        n = sp["games"].clip(lower=1)
        a1.stackplot(sp["generation"], sp["white_wins"] / n, sp["draws"] / n,
                     sp["black_wins"] / n, labels=["white wins", "draws", "black wins"])
        a1.set_xlabel("generation")
        a1.set_ylabel("share of self-play games")
        a1.legend(loc="lower left", fontsize=8)
        a2.plot(sp["generation"], sp["decisive_ratio"].replace(np.inf, np.nan), marker="o")
        a2.axhline(1.0, color="grey", lw=0.8)
        a2.set_xlabel("generation")
        a2.set_ylabel("(w + l) / d")
        fig.tight_layout()
        fig.savefig(out / "plots" / "selfplay.png", dpi=110)


def _write_summary(out: Path, cfg: TrainConfig, summary: dict[str, Any]) -> None:
    final = summary.get("trained_vs_initial", {})
    lines = [f"# Training run {cfg.name}", "",
             f"{summary['generations']} generations x {cfg.selfplay.games} self-play games, "
             f"{summary['step']} training steps (batch {cfg.batch_size}).", ""]
    if final.get("games"):
        lines += [f"Final match, trained vs initial network ({final['games']} games, "
                  f"{cfg.evaluation.player.nodes} nodes per move):", "",
                  f"- W/D/L {final['wins']}/{final['draws']}/{final['losses']}, score "
                  f"{final['score']:.3f} [{final['score_low']:.3f}, {final['score_high']:.3f}]"
                  f" (95%), Elo {final['elo']:+.0f} [{final['elo_low']:+.0f}, "
                  f"{final['elo_high']:+.0f}], LOS {100 * final['los']:.1f}%", ""]
    for key in ("selfplay_positions_per_s", "train_steps_per_s", "train_samples_per_s"):
        if key in summary:
            lines.append(f"- {key.replace('_', ' ')}: {summary[key]:.2f} (compile time "
                         "excluded)")
    for note in summary.get("notes", []):
        lines.append(f"- note: {note}")
    lines += ["", "Metrics: `metrics/*.csv`; plots: `plots/*.png`; networks: `nets/`."]
    (out / "summary.md").write_text("\n".join(lines) + "\n")


__all__ = ["build_network", "network_match", "run_training", "trained_params"]
