"""Training efficiency: PUCT vs search-contempt self-play at matched compute (sec. 4.2.5).

Usage: python experiments/train_efficiency.py
       [--scale tiny|small|full] [--out DIR] [--seed N]
       [--config configs/experiment_train_efficiency.yaml] [--no-progress]
Same as `zerochess experiment train_efficiency ...`.
Logic: src/zerochess/experiments/train_efficiency.py;
settings per scale: configs/experiment_train_efficiency.yaml;
writes results/train_efficiency/<scale>-seed<seed>/.
"""

import sys

from zerochess.cli import main

if __name__ == "__main__":
    raise SystemExit(main(["experiment", "train_efficiency", *sys.argv[1:]]))
