"""A reduced run of ``bench --puzzles`` (built-in evaluator, PUCT, certainty propagation
on and off, mate in 1 at 64 visits), for a loaded machine; writes JSON to argv[1]."""

from __future__ import annotations

import json
import platform
import subprocess
import sys

import jax

from zerochess.bench.puzzles import load_puzzles, solve_rate
from zerochess.neural import load_model
from zerochess.search import SearchConfig, Searcher


def main(out: str) -> None:
    puzzles = [p for p in load_puzzles() if p.theme == "mateIn1"]
    searcher = Searcher(load_model("builtin"), max_nodes=64 + 64)
    rows = []
    for certainty in (True, False):
        row = {"model": "builtin", "theme": "mateIn1", "search": "puct", "visits": 64,
               "certainty_propagation": certainty,
               **solve_rate(searcher, puzzles, SearchConfig(certainty_propagation=certainty),
                            64)}
        print({k: v for k, v in row.items() if k != "failed"}, flush=True)
        rows.append(row)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    with open(out, "w") as f:
        json.dump({"mode": "puzzles-quick", "rows": rows, "commit": commit,
                   "machine": platform.platform(), "jax": jax.__version__,
                   "note": "shared 2-core machine under heavy load, niced"}, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1])
