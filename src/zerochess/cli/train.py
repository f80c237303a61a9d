"""``zerochess train --config FILE [--out DIR] [--seed N] [--generations N] [--stop-after N]
[--tensorboard DIR]``:
the AlphaZero-style training loop from a config (``zerochess.training.config``)."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from zerochess.cli.runs import add_rules_option, checked_seed, path_arg, positive

INTERRUPTED = ("interrupted: finished generations are checkpointed; run the same command "
               "to resume")


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("train", help="AlphaZero-style training: self-play, train, evaluate",
                       description="Self-play (PUCT or search-contempt) -> replay buffer -> "
                       "optax training of an lc0-style SE-ResNet -> orbax checkpoints -> "
                       "evaluation matches. Resumes when run again on the same folder.")
    p.add_argument("--config", required=True, type=path_arg,
                   help="YAML file (configs/train_tiny.yaml)")
    p.add_argument("--out", type=path_arg,
                   help="output folder (default results/train/NAME); an existing "
                   "one is resumed")
    p.add_argument("--seed", type=int, default=None, help="override the config's seed")
    p.add_argument("--generations", type=int, default=None,
                   help="override the number of generations (a finished run's folder can "
                   "be extended this way)")
    p.add_argument("--stop-after", type=int, default=None, metavar="N",
                   help="stop after N generations in this call (resume later)")
    p.add_argument("--tensorboard", metavar="DIR", default=None, type=path_arg,
                   help="also log the metrics to this TensorBoard folder (needs tensorboardX)")
    add_rules_option(p)
    p.set_defaults(run=run, interrupted=INTERRUPTED)


def run(args: argparse.Namespace) -> int:
    from zerochess.training.config import TrainConfig  # jax: loaded when it runs
    from zerochess.training.run import run_training

    config = TrainConfig.load(args.config)
    if args.seed is not None:
        config = dataclasses.replace(config, seed=checked_seed(args.seed))
    if args.generations is not None:
        config = dataclasses.replace(config, generations=positive(args.generations,
                                                                  "--generations"))
    stop_after = positive(args.stop_after, "--stop-after") if args.stop_after is not None \
        else None
    out = Path(args.out) if args.out else Path("results") / "train" / config.name
    summary = run_training(config, out, stop_after_generations=stop_after,
                           tensorboard=args.tensorboard, rules=args.rules)
    if not summary["finished"]:
        _rates(summary)
        print(f"stopped after generation {summary['generations']} of {config.generations}; "
              f"run the same command to resume ({summary['out_dir']})")
        return 0
    final = summary["trained_vs_initial"]
    print(f"results: {summary['out_dir']}")
    if final.get("games"):
        print(f"trained vs initial: W {final['wins']} / D {final['draws']} / L "
              f"{final['losses']}, score {final['score']:.3f} [{final['score_low']:.3f}, "
              f"{final['score_high']:.3f}] (95%), Elo {final['elo']:+.0f} "
              f"[{final['elo_low']:+.0f}, {final['elo_high']:+.0f}]")
    _rates(summary)
    if final.get("games"):
        print(f"trained_vs_initial_score: {final['score']:.4f}")
    else:
        print("no final match (evaluation.final_games is 0)")
    return 0


def _rates(summary: dict) -> None:
    """The run's throughput (compile time excluded), one ``key: value`` line each."""
    for key in ("selfplay_positions_per_s", "selfplay_nodes_per_s", "train_steps_per_s",
                "train_samples_per_s"):
        if key in summary:
            print(f"{key}: {summary[key]:.2f}")
