# Run: git show 330903d:src/zerochess/chess/history.py > /tmp/old_history.py (the replay from
# the root), then PYTHONPATH=src python records/benchmarks/root_history_2026-11-28/same_as_replay.py
# (prints "same on 26326 positions" at b7b15ba). root_prep_parts.py: ms per 256 bench roots.
import importlib.util
import random
import sys

import chess
import numpy as np

sys.path.insert(0, "/work/main/tests")
spec = importlib.util.spec_from_file_location("old_history", "/tmp/old_history.py")
old = importlib.util.module_from_spec(spec)
spec.loader.exec_module(old)
from zerochess.chess import history as new  # noqa: E402

rng = random.Random(5)
n = 0
starts = [
    chess.STARTING_FEN,
    "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2",
]
for g in range(600):
    b = chess.Board(starts[g % len(starts)])
    if g % 7 == 0:
        b = chess.Board.from_chess960_pos(rng.randrange(960))
        b.chess960 = True
    for _ply in range(rng.randrange(0, 90)):
        moves = list(b.legal_moves)
        if not moves:
            break
        b.push(rng.choice(moves))
        a, c = old.root_history(b), new.root_history(b)
        for x, y in zip(a, c, strict=False):
            assert np.array_equal(np.asarray(x), np.asarray(y)), (b.fen(), x, y)
        a, c = old.history_arrays(b), new.history_arrays(b)
        assert all(np.array_equal(x, y) for x, y in zip(a, c, strict=False))
        n += 1
print("same on", n, "positions")
