"""A chess environment for JAX RL code in pgx's conventions (``pgx.Env``) on the device rules.
A game ends at checkmate, stalemate, insufficient material, a halfmove clock of 100 or the
third occurrence of a position, as lc0 and pgx end it (python-chess makes these claims). Example::

    env = zerochess.env.Env()
    state = jax.vmap(env.init)(jax.random.split(key, 1024))      # or start_states(boards)
    state = jax.jit(jax.vmap(env.step))(state, actions)           # actions: int [1024]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import chex
import jax
import jax.numpy as jnp
import numpy as np

from zerochess.chess import device
from zerochess.chess.device import tables
from zerochess.chess.keys import position_hash
from zerochess.chess.types import (
    NUM_MOVES,
    REPETITION_WINDOW,
    GameStatus,
    PositionArrays,
)

NUM_ACTIONS = NUM_MOVES
_KEYS = REPETITION_WINDOW + 1  # the current position's key and the 100 before it


@chex.dataclass(frozen=True)
class State:
    """One game (a batch adds leading dimensions)."""

    current_player: chex.Array  # int32: the player (0 or 1) to move
    observation: chex.Array  # float32 [112, 8, 8] lc0's planes for the side to move
    legal_action_mask: chex.Array  # bool [1858]
    rewards: chex.Array  # float32 [2] by player, from the last step
    terminated: chex.Array  # bool
    truncated: chex.Array  # bool
    position: PositionArrays  # the current position
    status: chex.Array  # int8 GameStatus (REPETITION for a threefold repetition)
    boards: chex.Array  # int8 [8, 64] the position and the 7 before it (lc0's history)
    repeated: chex.Array  # bool [8] their lc0 "occurred before" flags
    keys: chex.Array  # uint32 [101, 2] repetition keys, the current position first
    lc0_keys: chex.Array  # uint32 [101, 2] lc0's identity (its en-passant flag), same order
    num_keys: chex.Array  # int32 valid rows of ``keys`` and ``lc0_keys``
    player_order: chex.Array  # int32 [2] the players of white and black
    step_count: chex.Array  # int32 plies played since init


def _lc0_key(pos: PositionArrays, ep_square: jax.Array) -> jax.Array:
    return position_hash(jnp, pos.board, pos.turn, pos.castling, ep_square)


def _lc0_ep(parent: PositionArrays, child: PositionArrays, move: jax.Array) -> jax.Array:
    """lc0's en-passant flag after ``move``: the square behind a pawn pushed two squares
    when an enemy pawn stands beside it (pins not checked), else -1."""
    played = device.apply_move(parent, move)
    white = parent.turn == 1
    flip = jnp.where(white, 0, 56)
    idx = jnp.maximum(move, 0)
    frm = jnp.asarray(tables.FROM_SQUARE)[idx] ^ flip
    to = jnp.asarray(tables.TO_SQUARE)[idx] ^ flip
    double = (played.piece_type == 1) & (jnp.abs(to - frm) == 16)
    enemy_pawn = jnp.where(white, 7, 1)
    file = to % 8
    beside = ((file > 0) & (child.board[jnp.maximum(to - 1, 0)] == enemy_pawn)) | (
        (file < 7) & (child.board[jnp.minimum(to + 1, 63)] == enemy_pawn))
    return jnp.where(double & beside, (frm + to) // 2, -1)


class Env:
    """pgx-style chess environment (see the module docstring; details in docs/DESIGN.md).

    Args:
      max_steps: plies after which a game is ``truncated`` (None: never).
    """

    id = "zerochess/chess"
    num_players = 2
    num_actions = NUM_ACTIONS
    observation_shape = (112, 8, 8)

    def __init__(self, max_steps: int | None = None):
        if max_steps is not None:
            from zerochess.validation import MAX_INT32, as_count

            max_steps = as_count(max_steps, "max_steps", 1, MAX_INT32, exact=True)
        self.max_steps = max_steps
        import chess

        self._start = start_states([chess.Board()])

    def init(self, key: jax.Array) -> State:
        """The standard start position; ``key`` (one key: ``jax.random.key(seed)`` or a
        legacy ``jax.random.PRNGKey(seed)``; vmap for a batch) draws which player plays
        white."""
        from zerochess.validation import as_rng_key

        state = jax.tree.map(lambda a: jnp.asarray(a[0]), self._start)
        white = jax.random.bernoulli(as_rng_key(key, "key"))
        order = jnp.where(white, jnp.array([1, 0], jnp.int32), jnp.array([0, 1], jnp.int32))
        return state.replace(player_order=order, current_player=order[0])

    def step(self, state: State, action: jax.Array) -> State:
        """Play ``action`` (an lc0 1858 index: an integer scalar, one game; vmap for a
        batch) for the player to move. An index that is not a legal move (``NO_ACTION``
        = -1 included: ``zerochess.search.compiled.search`` gives it where it gives no
        move) loses the game (pgx's rule). A float or bool action, or an action whose
        shape is not the state's, is a ``ConfigError`` (at trace time)."""
        _check_one_state(state)
        action = check_action(state, action)
        done = state.terminated | state.truncated
        return jax.tree.map(lambda old, new: jnp.where(done, old, new), state.replace(
            rewards=jnp.zeros(2, jnp.float32)), _step(state, action, self.max_steps))

    def observe(self, state: State, player_id: jax.Array | None = None) -> jax.Array:
        """The observation (lc0's planes always show the side to move)."""
        return state.observation


def _check_one_state(state: Any) -> None:
    """A ``ConfigError`` unless ``state`` is one game's ``State`` (``Env.step`` is per game)."""
    from zerochess.errors import ConfigError

    if not isinstance(state, State):
        raise ConfigError(f"state must be a zerochess.env.State (Env.init, start_states), "
                          f"got {type(state).__name__}")
    shape = tuple(jnp.shape(state.current_player))
    if shape != ():
        raise ConfigError(f"Env.step takes one game's State, got a batch of shape "
                          f"{list(shape)}: jax.vmap(env.step)(states, actions) for a batch")


def check_action(state: State, action: Any) -> jax.Array:
    """``action`` as int32 of the state's shape, or a ``ConfigError`` saying what it got
    (a float is not truncated to an index; one action is not broadcast to a batch)."""
    from zerochess.errors import ConfigError, quote

    shape = tuple(jnp.shape(state.current_player))
    if isinstance(action, (bool, float, complex, str, bytes)) or action is None:
        raise ConfigError(f"action must be an integer lc0 move index, got {quote(action)}")
    if isinstance(action, int) and not -2**31 <= action < 2**31:
        raise ConfigError(f"action must be an lc0 move index (0 to {NUM_ACTIONS - 1}), got "
                          f"{quote(action)}: outside int32, it would wrap to another index")
    dtype = getattr(action, "dtype", None)
    if dtype is None:
        try:
            arr = np.asarray(action)
        except Exception:  # noqa: BLE001 (an object numpy cannot read: reported below)
            arr = np.asarray(None, object)
        dtype = arr.dtype
        action = arr
    if not jnp.issubdtype(dtype, jnp.integer):
        raise ConfigError(f"action must be an integer lc0 move index (0 to {NUM_ACTIONS - 1}), "
                          f"got dtype {dtype} (a float is not truncated to an index)")
    got = tuple(jnp.shape(action))
    if got != shape:
        what = "one game" if shape == () else f"a batch of shape {list(shape)}"
        raise ConfigError(f"action must have the state's shape {list(shape)} ({what}; "
                          f"jax.vmap(env.step) for a batch), got an action of shape "
                          f"{list(got)}")
    if not isinstance(action, jax.core.Tracer) and np.dtype(dtype).itemsize >= 4 and (
            np.dtype(dtype) != np.int32):
        # int64/uint32/uint64 values past int32 would wrap to another (maybe legal) index
        values = np.asarray(action)
        out = (values < -2**31) | (values >= 2**31)
        if out.any():
            raise ConfigError(f"action must be an lc0 move index (0 to {NUM_ACTIONS - 1}), "
                              f"got {int(values[out].flat[0])} ({dtype}): outside int32, it "
                              f"would wrap to another index")
    return jnp.asarray(action, jnp.int32)


def _step(state: State, action: jax.Array, max_steps: int | None) -> State:
    action = jnp.asarray(action, jnp.int32)
    legal = state.legal_action_mask[jnp.clip(action, 0, NUM_ACTIONS - 1)] & (
        action >= 0) & (action < NUM_ACTIONS)
    move = jnp.where(legal, action, -1)
    parent = state.position
    child = device.apply_move(parent, move).child
    d = device.describe(child)
    child = d.position
    key = position_hash(jnp, child.board, child.turn, child.castling, child.ep)
    lc0_key = _lc0_key(child, _lc0_ep(parent, child, move))
    earlier = state.keys[:REPETITION_WINDOW]
    count = device.repetitions(key, earlier, state.num_keys, child.rule50)
    lc0_count = device.repetitions(lc0_key, state.lc0_keys[:REPETITION_WINDOW],
                                   state.num_keys, child.rule50)
    status = jnp.where((d.status == GameStatus.ONGOING) & (count >= 2),
                       jnp.int8(GameStatus.REPETITION), d.status)
    mover = state.current_player
    mated = status == GameStatus.CHECKMATE
    win = jnp.where(jnp.arange(2) == mover, 1.0, -1.0).astype(jnp.float32)
    rewards = jnp.where(legal, jnp.where(mated, win, 0.0), -win)
    boards = jnp.concatenate([child.board[None], state.boards[:-1]])
    repeated = jnp.concatenate([(lc0_count > 0)[None], state.repeated[:-1]])
    step_count = state.step_count + 1
    new = state.replace(
        position=child, status=status.astype(jnp.int8),
        legal_action_mask=jnp.where(legal, device.legal_mask(child), False),
        observation=device.encode(boards, repeated, child.turn, child.castling, child.rule50),
        rewards=rewards, terminated=(status != GameStatus.ONGOING) | ~legal,
        truncated=jnp.asarray(False) if max_steps is None else step_count >= max_steps,
        boards=boards, repeated=repeated,
        keys=jnp.concatenate([key[None], state.keys[:-1]]),
        lc0_keys=jnp.concatenate([lc0_key[None], state.lc0_keys[:-1]]),
        num_keys=jnp.minimum(state.num_keys + 1, _KEYS),
        current_player=state.player_order[1 - child.turn.astype(jnp.int32)],
        step_count=step_count)
    return new


def start_states(boards: Sequence[Any], player_order: Any = None) -> State:
    """A batch of states from python-chess boards (host), their games included: the history
    planes, the repetition keys of the positions before each one (up to 100) and lc0's
    "occurred before" flags come from the boards' move stacks.

    Args:
      boards: python-chess boards (checked: an illegal or variant board raises
        ``zerochess.PositionError``).
      player_order: int [B, 2] the players of white and black, each row 0 and 1 in some
        order, or [2] for every board (default: player 0 white).

    Returns:
      ``State`` [B] (numpy arrays).
    """
    import chess

    from zerochess.chess import history as host_history
    from zerochess.chess import state as host_state
    from zerochess.chess.encoding import planes_from_arrays
    from zerochess.chess.rules import expand_batch
    from zerochess.errors import ConfigError, quote
    from zerochess.positions import check_game

    if isinstance(boards, (chess.Board, str, bytes)) or not isinstance(boards, Sequence):
        got = quote(boards) if isinstance(boards, (str, bytes)) else type(boards).__name__
        raise ConfigError(f"boards must be a list of python-chess boards, got {got}")
    if len(boards) == 0:
        raise ConfigError("boards must hold at least one python-chess board, got none")
    boards = [check_game(b) for b in boards]
    n = len(boards)
    order = _player_order(player_order, n)
    pos = host_state.stack([host_state.from_board(b) for b in boards])
    exp = expand_batch(pos, np.full(n, -1, np.int16))
    mask = np.zeros((n, NUM_ACTIONS), bool)
    for i in range(n):
        mask[i, exp.legal[i, :exp.num_legal[i]]] = True
    hist = [host_history.history_arrays(b) for b in boards]
    keys = np.zeros((n, _KEYS, 2), np.uint32)
    lc0_keys = np.zeros((n, _KEYS, 2), np.uint32)
    num = np.zeros(n, np.int32)
    status = exp.status.copy()
    for i, b in enumerate(boards):
        replay = b.root()
        game_keys, game_lc0 = [], []
        ep = replay.ep_square if replay.ep_square is not None else -1  # the FEN's, for lc0
        for move in [None, *b.move_stack]:
            if move is not None:
                ep_file = host_history._lc0_ep_file_after(replay, move)
                replay.push(move)
                ep = -1 if ep_file < 0 else ep_file + (40 if replay.turn == chess.WHITE else 16)
            p = host_state.from_board(replay)
            game_keys.append(position_hash(np, p.board, p.turn, p.castling, p.ep))
            game_lc0.append(position_hash(np, p.board, p.turn, p.castling, np.int8(ep)))
        recent = list(range(len(game_keys) - 1, max(len(game_keys) - 1 - _KEYS, -1), -1))
        keys[i, :len(recent)] = [game_keys[j] for j in recent]
        lc0_keys[i, :len(recent)] = [game_lc0[j] for j in recent]
        num[i] = len(recent)
        count, _ = host_history.earlier_occurrences(keys[i, 0].tobytes(),
                                                    [k.tobytes() for k in keys[i, 1:num[i]]],
                                                    b.halfmove_clock)
        if status[i] == GameStatus.ONGOING and count >= 2:
            status[i] = GameStatus.REPETITION
    hb = np.stack([h[0] for h in hist])
    hr = np.stack([h[1] for h in hist])
    turn = pos.turn.astype(np.int32)
    return State(
        current_player=order[np.arange(n), 1 - turn], legal_action_mask=mask,
        observation=planes_from_arrays(np, hb, hr, pos.turn, pos.castling, pos.rule50),
        rewards=np.zeros((n, 2), np.float32), terminated=status != GameStatus.ONGOING,
        truncated=np.zeros(n, bool), position=pos, status=status.astype(np.int8), boards=hb,
        repeated=hr, keys=keys, lc0_keys=lc0_keys, num_keys=num, player_order=order,
        step_count=np.zeros(n, np.int32))


def _player_order(player_order: Any, n: int) -> np.ndarray:
    """int32 [n, 2] from ``player_order`` ([n, 2], or [2] for every game): each row the
    players of white and black, 0 and 1 in some order."""
    from zerochess.errors import ConfigError, quote

    if player_order is None:
        return np.tile(np.array([0, 1], np.int32), (n, 1))
    try:
        arr = np.asarray(player_order)
    except Exception:  # noqa: BLE001 (ragged input: reported below)
        arr = np.asarray(None, object)
    if arr.dtype.kind not in "iu" or arr.shape not in ((n, 2), (2,)):
        raise ConfigError(f"player_order must be integers [{n}, 2] (the players of white and "
                          f"black of each board) or [2] (the same for every board), got "
                          f"{quote(player_order)}")
    arr = np.broadcast_to(arr, (n, 2))  # checked before the cast: 2**32 would wrap to 0
    good = np.sort(arr, axis=1) == np.array([0, 1])
    if not good.all():
        row = int(np.argmin(good.all(axis=1)))
        raise ConfigError(f"player_order[{row}] must give players 0 and 1 one colour each, "
                          f"got {arr[row].tolist()}")
    return arr.astype(np.int32)


def auto_reset(step_fn: Callable[[State, jax.Array], State],
               init_fn: Callable[[jax.Array], State]
               ) -> Callable[[State, jax.Array, jax.Array], State]:
    """``step(state, action, key)`` that restarts a game as soon as it ends (terminated or
    truncated) with ``init_fn(key)``, keeping the final step's rewards and flags (pgx's
    ``auto_reset``): for one game; vmap it for a batch."""

    def step(state: State, action: jax.Array, key: jax.Array) -> State:
        state = step_fn(state, action)
        fresh = init_fn(key).replace(rewards=state.rewards, terminated=state.terminated,
                                     truncated=state.truncated)
        return jax.tree.map(lambda a, b: jnp.where(state.terminated | state.truncated, a, b),
                            fresh, state)

    return step


__all__ = ["NUM_ACTIONS", "Env", "State", "auto_reset", "check_action", "start_states"]
