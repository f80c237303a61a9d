"""Table 1: queen-odds win % of PUCT and SC vs a fixed opponent.

Usage: python experiments/odds.py
       [--scale tiny|small|full] [--out DIR] [--seed N]
       [--config configs/experiment_odds.yaml] [--no-progress]
Same as `zerochess experiment odds ...`.
Logic: src/zerochess/experiments/odds.py;
settings per scale: configs/experiment_odds.yaml;
writes results/odds/<scale>-seed<seed>/.
"""

import sys

from zerochess.cli import main

if __name__ == "__main__":
    raise SystemExit(main(["experiment", "odds", *sys.argv[1:]]))
