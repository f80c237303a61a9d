import sys, dataclasses, time
from pathlib import Path
from zerochess.training.config import TrainConfig
from zerochess.training.run import build_network, network_match, trained_params
from zerochess.training import Player
from zerochess.games import OpeningSpec
run, games, nodes, plies = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
cfg = TrainConfig.load(f"{run}/config.yaml")
_, model = build_network(cfg.network)
gen, params = trained_params(cfg, run)
ev = cfg.evaluation
spec = dataclasses.replace(ev.player, nodes=nodes)
players = {"trained": Player(dataclasses.replace(spec, name="trained"), model, params, collect=False),
           "initial": Player(dataclasses.replace(spec, name="initial"), model, model.params, collect=False)}
t=time.time()
r = network_match(players, "trained", "initial", games, OpeningSpec(), 123, Path(f"/tmp/t2_diag_{nodes}_{plies}"),
                  batch_size=games, max_plies=plies, max_nodes=nodes+1)
print(gen, r.summary(), time.time()-t)
