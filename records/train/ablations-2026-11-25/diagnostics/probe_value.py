import sys, glob, csv, random
import numpy as np, chess
from zerochess.training.config import TrainConfig
from zerochess.training.run import build_network, trained_params
from zerochess.chess.encoding import encode_board
cfg = TrainConfig.load(sys.argv[1]); out = sys.argv[2]
_, model = build_network(cfg.network)
gen, params = trained_params(cfg, out)
rows = []
for f in sorted(glob.glob(out + "/games/*/games.csv"))[-2:]:
    rows += list(csv.DictReader(open(f)))
rng = random.Random(0)
boards = []
for r in rows:
    b = chess.Board(r["start_fen"]); ms = r["moves"].split()
    for i, m in enumerate(ms):
        b.push_uci(m)
        if rng.random() < 0.1 and not b.is_game_over():
            boards.append(b.copy())
planes = np.stack([encode_board(b) for b in boards]).astype(np.float32)
import jax
out_ = model.apply(params, planes) if hasattr(model, "apply") else None
def ev(p, pl):
    o = model.apply(p, jax.numpy.asarray(pl))
    w = np.asarray(jax.nn.softmax(o.wdl_logits, -1))
    return w[:, 0] - w[:, 2]
v = ev(params, planes); v0 = ev(model.params, planes)
POINTS = {chess.PAWN: 1, chess.KNIGHT: 3, chess.BISHOP: 3, chess.ROOK: 5, chess.QUEEN: 9}
def material_balance(b):  # white's material minus black's, in pawns
    return sum(p * (len(b.pieces(k, chess.WHITE)) - len(b.pieces(k, chess.BLACK)))
               for k, p in POINTS.items())
mat = np.array([material_balance(b) * (1 if b.turn else -1) for b in boards])
print("gen", gen, "n", len(boards), "corr(v, material)", np.corrcoef(v, mat)[0, 1], "initial", np.corrcoef(v0, mat)[0, 1])
for lo, hi in [(-99, -5), (-5, -2), (-2, 3), (3, 6), (6, 99)]:
    s = (mat >= lo) & (mat < hi)
    print(f"mat [{lo},{hi}) n={s.sum()} mean v={v[s].mean():+.3f}")
