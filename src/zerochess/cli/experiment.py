"""``zerochess experiment NAME [--scale tiny|small|full] [--out DIR] [--seed N]
[--config FILE] [--rules host|device] [--estimate]``: one of the registered
search-contempt experiments."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from zerochess.cli.runs import add_run_options, checked_seed, path_arg
from zerochess.experiments import EXPERIMENTS, get_experiment


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("experiment", help="a search-contempt experiment",
                       description="Run a search-contempt experiment; writes "
                       "results/NAME/SCALE-seedSEED/ (config, versions, CSV, PNG, "
                       "summary.md). See experiments/README.md.")
    p.add_argument("name", help=f"one of: {', '.join(EXPERIMENTS)}")
    p.add_argument("--scale", default="tiny", help="tiny (minutes on a CPU), small, full "
                   "(the paper's scale)")
    add_run_options(p, "results/<name>/<scale>-seed<seed>", "override the seed")
    p.add_argument("--config", type=path_arg,
                   help="YAML overrides (e.g. configs/experiment_contempt_wdl.yaml)")
    p.add_argument("--estimate", action="store_true",
                   help="measure a short warm-up on this machine, print the expected run time "
                   "of the games not yet in the output folder, and play nothing")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    experiment = get_experiment(args.name)
    if args.estimate:
        from zerochess.experiments.common import default_out_dir

        cfg = experiment.resolve(args.scale, args.config, checked_seed(args.seed))
        out = Path(args.out) if args.out else default_out_dir(args.name, args.scale,
                                                               cfg["seed"])
        est = experiment.estimate(cfg, out if out.is_dir() else None, args.rules)
        if est is None:
            print(f"experiment {args.name} has no run-time estimate")
            return 0
        from zerochess.experiments.terminal import wrap_lines

        print(wrap_lines(est.text()))
        return 0
    seed = checked_seed(args.seed)
    out = experiment.execute(args.scale, args.out, seed, args.config,
                             progress=not args.no_progress, force=args.force,
                             rules=args.rules)
    print(terminal_summary(experiment, out, args.scale, args.config, seed))
    return 0


def terminal_summary(experiment: Any, out: Path, scale: str, config: Any,
                     seed: int | None) -> str:
    """The run's summary for an 80-column terminal (the wide tables stay in summary.md),
    where its files are, and a "next:" line."""
    import json

    from zerochess.experiments.common import SCALES
    from zerochess.experiments.terminal import next_line, terminal_text

    narrow = experiment.narrow(out) if experiment.narrow is not None else []
    text = terminal_text((out / "summary.md").read_text(), out, narrow)
    cfg = experiment.resolve(scale, config, seed)
    rate = per_position = None
    stats_file = out / "throughput.json"
    if stats_file.is_file():
        stats = json.loads(stats_file.read_text())
        stats = stats if isinstance(stats, list) else [stats]
        secs = sum(s["seconds"] for s in stats)
        positions = sum(s["positions"] for s in stats)
        rate = positions / secs if secs > 0 and positions else None
        per_position = sum(s["nodes"] for s in stats) / positions if positions else None

    following = SCALES[SCALES.index(scale) + 1] if scale in SCALES[:-1] else None
    try:
        if following and experiment.resolve(following, config, seed).get(
                "model") != cfg.get("model"):
            rate = None  # another network: this run's pace says nothing about it
    except ValueError:
        rate = None  # the next scale does not resolve with these overrides

    def plan_of(following: str) -> Any:
        return experiment.plan(experiment.resolve(following, config, seed))

    plan = plan_of if experiment.plan is not None else None
    return (f"{text}\nresults: {out}\n(its summary.md has the full tables)\n"
            f"{next_line(experiment.name, scale, cfg['seed'], plan, rate, per_position)}")
