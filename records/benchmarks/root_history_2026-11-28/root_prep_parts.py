import time

from zerochess.bench.fixtures import bench_positions, fill
from zerochess.chess import state as chess_state
from zerochess.chess.backend import root_mate_slot
from zerochess.chess.history import root_history

rows = fill(bench_positions(), 256)
T = time.perf_counter
for name, fn in [
    ("from_board", chess_state.from_board),
    ("root_history", root_history),
    ("root_mate_slot", root_mate_slot),
    ("legal_any", lambda b: any(b.generate_legal_moves())),
]:
    t = T()
    for b in rows:
        fn(b)
    print(name, round((T() - t) * 1000, 1), "ms for 256")
