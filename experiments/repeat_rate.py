"""Fig. 4: fraction of repeated self-play games vs move number.

Usage: python experiments/repeat_rate.py
       [--scale tiny|small|full] [--out DIR] [--seed N]
       [--config configs/experiment_repeat_rate.yaml] [--no-progress]
Same as `zerochess experiment repeat_rate ...`.
Logic: src/zerochess/experiments/repeat_rate.py;
settings per scale: configs/experiment_repeat_rate.yaml;
writes results/repeat_rate/<scale>-seed<seed>/.
"""

import sys

from zerochess.cli import main

if __name__ == "__main__":
    raise SystemExit(main(["experiment", "repeat_rate", *sys.argv[1:]]))
