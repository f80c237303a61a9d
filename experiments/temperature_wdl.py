"""Fig. 3: PUCT self-play W/D/L vs temperature schedules.

Usage: python experiments/temperature_wdl.py
       [--scale tiny|small|full] [--out DIR] [--seed N]
       [--config configs/experiment_temperature_wdl.yaml] [--no-progress]
Same as `zerochess experiment temperature_wdl ...`;
writes results/temperature_wdl/<scale>-seed<seed>/.
"""

import sys

from zerochess.cli_games import main

if __name__ == "__main__":
    raise SystemExit(main(["experiment", "temperature_wdl", *sys.argv[1:]]))
