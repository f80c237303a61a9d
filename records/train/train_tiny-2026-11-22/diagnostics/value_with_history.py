import numpy as np, jax, jax.numpy as jnp, chess
from zerochess.training import Checkpointer, Trainer
from zerochess.training.config import TrainConfig
from zerochess.training.run import build_network, trained_params
from zerochess.chess.encoding import encode_board
run="/tmp/tt/v3"
cfg = TrainConfig.load(f"{run}/config.yaml")
module, model = build_network(cfg.network)
gen, params = trained_params(cfg, run)
def ev(b):
    out = module.apply({"params": params}, jnp.asarray(encode_board(b))[None])
    return np.round(np.asarray(jax.nn.softmax(out.wdl_logits, -1))[0], 3)
b = chess.Board("rnb1kbnr/pppp1ppp/8/3q4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 1")
print("root (w to move)", ev(b))
b.push_uci("e4d5"); print("after exd5 with history (b to move)", ev(b))
print("after exd5 no history", ev(chess.Board(b.fen())))
b2 = chess.Board("rnb1kbnr/pppp1ppp/8/3q4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 1"); b2.push_uci("d2d3")
print("after d3 with history", ev(b2), "no hist", ev(chess.Board(b2.fen())))
