import sys, glob, csv, random
import numpy as np, chess, jax
from zerochess.training.config import TrainConfig
from zerochess.training.run import build_network, trained_params
from zerochess.chess.encoding import encode_board
from zerochess.search import Searcher
cfg = TrainConfig.load(sys.argv[1]); out = sys.argv[2]
_, model = build_network(cfg.network)
gen, params = trained_params(cfg, out)
r = list(csv.DictReader(open(glob.glob(out + "/games/gen_0008/games.csv")[0])))[3]
b = chess.Board(r["start_fen"]); boards = []
for m in r["moves"].split()[:30]:
    b.push_uci(m); boards.append(b.copy())
s = Searcher(model, max_nodes=4)
res = s.search(boards, num_simulations=1, params=params)
o = model.apply(params, jax.numpy.asarray(np.stack([encode_board(x) for x in boards]).astype(np.float32)))
w = np.asarray(jax.nn.softmax(o.wdl_logits, -1))
for i in range(0, 30, 3):
    print(i, boards[i].turn, res[i].raw_wdl.round(3), w[i].round(3))
