"""Table 1: odds-chess win % of PUCT and search-contempt vs a fixed opponent, with 95%
intervals (Maia-1900 with search vs lc0 + Maia-1900 at 1 node, 100 and 800 nodes).

Usage: python experiments/odds_table1.py
       [--scale tiny|small|full] [--out DIR] [--seed N] [--estimate]
       [--config configs/experiment_odds_table1.yaml] [--no-progress]
Same as `zerochess experiment odds_table1 ...`.
Logic: src/zerochess/experiments/odds_table1.py;
settings per scale: configs/experiment_odds_table1.yaml;
writes results/odds_table1/<scale>-seed<seed>/ (resumable: run it again to continue).
"""

import sys

from zerochess.cli import main

if __name__ == "__main__":
    raise SystemExit(main(["experiment", "odds_table1", *sys.argv[1:]]))
