"""Table 2: SC (N_scl 5, low temperature) vs PUCT (high temperature).

Usage: python experiments/contempt_vs_temperature.py
       [--scale tiny|small|full] [--out DIR] [--seed N]
       [--config configs/experiment_contempt_vs_temperature.yaml] [--no-progress]
Same as `zerochess experiment contempt_vs_temperature ...`.
Logic: src/zerochess/experiments/contempt_vs_temperature.py;
settings per scale: configs/experiment_contempt_vs_temperature.yaml;
writes results/contempt_vs_temperature/<scale>-seed<seed>/.
"""

import sys

from zerochess.cli import main

if __name__ == "__main__":
    raise SystemExit(main(["experiment", "contempt_vs_temperature", *sys.argv[1:]]))
