"""Fig. 3: PUCT self-play W/D/L vs temperature schedules.

Usage: python experiments/temperature_wdl.py
       [--scale tiny|small|full] [--out DIR] [--seed N]
       [--config configs/experiment_temperature_wdl.yaml] [--no-progress]
Same as `zerochess experiment temperature_wdl ...`.
Logic: src/zerochess/experiments/temperature_wdl.py;
settings per scale: configs/experiment_temperature_wdl.yaml;
writes results/temperature_wdl/<scale>-seed<seed>/.
"""

import sys

from zerochess.cli import main

if __name__ == "__main__":
    raise SystemExit(main(["experiment", "temperature_wdl", *sys.argv[1:]]))
