"""``zerochess experiment NAME [--scale tiny|small|full] [--out DIR] [--seed N]
[--config FILE]``: one of the registered search-contempt experiments."""

from __future__ import annotations

import argparse

from zerochess.cli.runs import add_run_options, checked_seed
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
    p.add_argument("--config", help="YAML overrides (e.g. configs/experiment_contempt_wdl.yaml)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    experiment = get_experiment(args.name)
    out = experiment.execute(args.scale, args.out, checked_seed(args.seed), args.config,
                             progress=not args.no_progress, force=args.force)
    print((out / "summary.md").read_text())
    print(f"results: {out}")
    return 0
