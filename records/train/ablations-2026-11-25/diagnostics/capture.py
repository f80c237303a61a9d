import sys
import numpy as np, chess, jax
from zerochess.training.config import TrainConfig
from zerochess.training.run import build_network, trained_params
from zerochess.search import SearchConfig, Searcher
cfg = TrainConfig.load(sys.argv[1]); out = sys.argv[2]
_, model = build_network(cfg.network)
gen, params = trained_params(cfg, out)
fens = ["rnb1kbnr/pppp1ppp/8/4p1q1/4P3/3P4/PPP2PPP/RNBQKBNR w KQkq - 1 3",  # Bc1xg5 wins queen
        "rnbqkb1r/pppp1ppp/5n2/4p3/4P3/2N5/PPPP1PPP/R1BQKBNR w KQkq - 0 3"]
b = chess.Board(fens[0])
for nodes in (8, 32):
    s = Searcher(model, max_nodes=nodes + 1)
    for name, p in (("trained", params), ("initial", model.params)):
        r = s.search([b], num_simulations=nodes, params=p)[0]
        order = np.argsort(-np.asarray(r.visits))[:5]
        print(nodes, name, [(r.moves[i].uci(), int(r.visits[i]), round(float(r.prior[i]), 3), round(float(r.wl[i]), 2) if r.visits[i] else None) for i in order])
        i = [m.uci() for m in r.moves].index("c1g5")
        print("   c1g5 prior", round(float(r.prior[i]), 4), "visits", int(r.visits[i]))
