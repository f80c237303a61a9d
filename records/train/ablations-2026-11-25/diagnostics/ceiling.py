"""How well does a material-aware player (builtin) score vs the random initial net?"""
import sys, dataclasses, time
from pathlib import Path
from zerochess.training.config import TrainConfig
from zerochess.training.run import build_network, network_match
from zerochess.training import Player
from zerochess.neural import load_model

nodes, games, cap, mate = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"

cfg = TrainConfig.load(sys.argv[5])
_, model = build_network(cfg.network)
ev = cfg.evaluation.player
spec = dataclasses.replace(ev, nodes=nodes, search=ev.search.replace(mate_check=mate))
players = {"builtin": Player(dataclasses.replace(spec, name="builtin"), load_model("builtin"), collect=False),
           "initial": Player(dataclasses.replace(spec, name="initial"), model, model.params, collect=False)}
t = time.time()
r = network_match(players, "builtin", "initial", games, cfg.evaluation.openings, 7,
                  Path(f"ceil_{nodes}_{cap}_{int(mate)}"), batch_size=games, max_plies=cap, max_nodes=nodes + 1)
print(nodes, cap, mate, r.summary(), f"{time.time()-t:.0f}s", flush=True)
