"""Fig. 2: self-play W/D/L and (w+l)/d vs N_scl.

Usage: python experiments/contempt_wdl.py
       [--scale tiny|small|full] [--out DIR] [--seed N]
       [--config configs/experiment_contempt_wdl.yaml] [--no-progress]
Same as `zerochess experiment contempt_wdl ...`.
Logic: src/zerochess/experiments/contempt_wdl.py;
settings per scale: configs/experiment_contempt_wdl.yaml;
writes results/contempt_wdl/<scale>-seed<seed>/.
"""

import sys

from zerochess.cli import main

if __name__ == "__main__":
    raise SystemExit(main(["experiment", "contempt_wdl", *sys.argv[1:]]))
