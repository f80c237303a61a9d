import sys, dataclasses, time
from pathlib import Path
from zerochess.training.config import TrainConfig
from zerochess.training.run import build_network, network_match, trained_params
from zerochess.training import Player
cfg = TrainConfig.load(sys.argv[1]); out = sys.argv[2]; nodes = int(sys.argv[3]); games = int(sys.argv[4]); cap = int(sys.argv[5])
_, model = build_network(cfg.network)
gen, params = trained_params(cfg, out)
ev = cfg.evaluation.player
spec = dataclasses.replace(ev, nodes=nodes, search=ev.search.replace(mate_check=len(sys.argv) > 6))
players = {"trained": Player(dataclasses.replace(spec, name="trained"), model, params, collect=False),
           "initial": Player(dataclasses.replace(spec, name="initial"), model, model.params, collect=False)}
t = time.time()
r = network_match(players, "trained", "initial", games, cfg.evaluation.openings, 11,
                  Path(f"ev_{Path(out).name}_{nodes}_{cap}"), batch_size=games, max_plies=cap, max_nodes=nodes + 1)
print(out, nodes, cap, r.summary(), f"{time.time()-t:.0f}s", flush=True)
