"""The speed peer: ``mctx.gumbel_muzero_policy`` over pgx chess with a dense 4672-action tree."""

from __future__ import annotations

import functools
import importlib.util
import resource
import time
import warnings
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import chess
import flax.linen as nn
import jax
import jax.numpy as jnp
import mctx
import numpy as np

from zerochess.errors import UserError
from zerochess.neural.resnet import ResidualBlock

NUM_ACTIONS = 4672  # 64 from-squares x 73 move planes
OBS_PLANES = 119
AZ_PLANES = 73
_UNDERPROMO_PIECES = (chess.ROOK, chess.BISHOP, chess.KNIGHT)

PGX_REQUIREMENT = "pgx==2.6.0"
_env_cache: dict[str, Any] = {}


def require_pgx() -> None:
    """Raise a one-line ``UserError`` saying how to install pgx when it is missing."""
    if importlib.util.find_spec("pgx") is None:
        raise UserError(
            f"zerochess bench compares with mctx + pgx, and pgx is not installed: "
            f"pip install '{PGX_REQUIREMENT}' (or the extra: pip install 'zerochess[bench]')")


def _env() -> Any:
    """The (cached) pgx chess environment; pgx is imported lazily (an optional extra)."""
    if "chess" not in _env_cache:
        import pgx

        _env_cache["chess"] = pgx.make("chess")
    return _env_cache["chess"]


# --- moves ------------------------------------------------------------------------------


def _pgx_square(square: int, turn: chess.Color) -> int:
    """python-chess square (rank * 8 + file, absolute) -> pgx square (file * 8 + rank,
    ranks mirrored when black is to move: pgx always views the board from the mover)."""
    file, rank = chess.square_file(square), chess.square_rank(square)
    if turn == chess.BLACK:
        rank = 7 - rank
    return file * 8 + rank


@functools.cache
def _to_plane() -> np.ndarray:
    """pgx's ``TO_PLANE[from, to]`` move plane table (numpy)."""
    from pgx._src.games.chess import TO_PLANE

    return np.asarray(TO_PLANE)


def move_to_action(board: chess.Board, move: chess.Move) -> int:
    """pgx's action label (``from * 73 + plane``) of a legal python-chess ``move`` in ``board``.

    Castling is king two squares (as in python-chess's standard notation); queen
    promotions and plain moves use pgx's ``TO_PLANE``; rook/bishop/knight
    promotions use planes 0..8 (``piece * 3 + direction``, direction 0 = straight,
    1 = towards the h-file, 2 = towards the a-file, in pgx's frame).
    """
    frm = _pgx_square(move.from_square, board.turn)
    to = _pgx_square(move.to_square, board.turn)
    if move.promotion is not None and move.promotion != chess.QUEEN:
        direction = {1: 0, 9: 1, -7: 2}[to - frm]
        plane = 3 * _UNDERPROMO_PIECES.index(move.promotion) + direction
    else:
        plane = int(_to_plane()[frm, to])
    if plane < 0:
        raise ValueError(f"move {move.uci()} has no pgx action in {board.fen()}")
    return frm * AZ_PLANES + plane


# --- positions --------------------------------------------------------------------------


def _stack_states(states: Sequence[Any]) -> Any:
    return jax.tree.map(lambda *xs: jnp.stack(xs), *states)


def _standard_start(board: chess.Board) -> bool:
    return board.root().fen() == chess.STARTING_FEN


def states_from_boards(boards: Sequence[chess.Board], seed: int = 0) -> Any:
    """Batched pgx states ``[len(boards)]`` of ``boards`` (with their game history).

    Each board's move stack is replayed through pgx actions, all games in one
    vmapped ``env.step`` per ply (games that are already complete keep their state).
    """
    from pgx.experimental.chess import from_fen

    env = _env()
    boards = list(boards)
    n = len(boards)
    initial = jax.jit(env.init)(jax.random.PRNGKey(seed))
    starts = []
    for board in boards:
        if _standard_start(board):
            starts.append(initial)
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                starts.append(from_fen(board.root().fen()))
    state = _stack_states(starts)
    plies = max((len(b.move_stack) for b in boards), default=0)
    actions = np.zeros((plies, n), np.int32)
    active = np.zeros((plies, n), bool)
    for i, board in enumerate(boards):
        replay = board.root()
        for t, move in enumerate(board.move_stack):
            actions[t, i] = move_to_action(replay, move)
            active[t, i] = True
            replay.push(move)
    step = _replay_step()
    for t in range(plies):
        state = step(state, jnp.asarray(actions[t]), jnp.asarray(active[t]))
    return state


@functools.cache
def _replay_step() -> Any:
    env = _env()

    @jax.jit
    def step(state: Any, action: jax.Array, active: jax.Array) -> Any:
        # inactive rows step with their first legal action, then keep the old state
        safe = jnp.where(active, action, jnp.argmax(state.legal_action_mask, axis=-1))
        new = jax.vmap(env.step)(state, safe)

        def keep(a: jax.Array, b: jax.Array) -> jax.Array:
            mask = active.reshape(active.shape + (1,) * (a.ndim - 1))
            return jnp.where(mask, a, b)

        return jax.tree.map(keep, new, state)

    return step


def states_from_fens(fens: Sequence[str]) -> Any:
    """Batched pgx states of FEN strings (``from_fen``; no history before the position)."""
    from pgx.experimental.chess import from_fen

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _stack_states([from_fen(f) for f in fens])


def check_states(states: Any, boards: Sequence[chess.Board]) -> None:
    """Raise ``AssertionError`` if a pgx state differs from its python-chess board
    (pieces, side to move, castling rights, number of legal moves)."""
    from pgx.experimental.chess import to_fen

    host = jax.device_get(states)
    for i, board in enumerate(boards):
        one = jax.tree.map(lambda x, i=i: x[i], host)
        fen = to_fen(one)
        ours = board.fen().split()[:3]
        theirs = fen.split()[:3]
        assert ours == theirs, f"position {i}: pgx {fen!r} != python-chess {board.fen()!r}"
        n_legal = int(np.asarray(one.legal_action_mask).sum())
        assert n_legal == board.legal_moves.count(), \
            f"position {i}: pgx has {n_legal} legal actions, python-chess " \
            f"{board.legal_moves.count()} ({board.fen()})"
        assert not bool(one.terminated), f"position {i} is terminal in pgx"


# --- network ----------------------------------------------------------------------------


class PeerNet(nn.Module):
    """SE-ResNet with zerochess's residual body on pgx observations ``[B, 8, 8, 119]``.

    Returns ``(policy_logits [B, 4672] in pgx action order, value [B] = W - L)``.
    """

    blocks: int
    filters: int
    se_channels: int = 0
    value_channels: int = 32
    value_hidden: int = 128

    @nn.compact
    def __call__(self, obs: jax.Array) -> tuple[jax.Array, jax.Array]:
        act = jax.nn.relu
        conv = functools.partial(nn.Conv, padding="SAME")
        x = act(conv(self.filters, (3, 3), name="input")(obs.astype(jnp.float32)))
        for i in range(self.blocks):
            x = ResidualBlock(self.filters, self.se_channels, "relu", name=f"block_{i}")(x)
        # policy: pgx observation rows are rank 8..1 (row = 7 - rank), columns files a..h;
        # the action is from * 73 + plane with from = file * 8 + rank.
        p = act(conv(self.filters, (3, 3), name="policy1")(x))
        p = conv(AZ_PLANES, (3, 3), name="policy")(p)  # [B, 8(row), 8(file), 73]
        p = p[:, ::-1].transpose(0, 2, 1, 3)  # [B, file, rank, 73]
        policy_logits = p.reshape(p.shape[0], NUM_ACTIONS)
        v = act(conv(self.value_channels, (1, 1), name="value")(x))
        v = v.transpose(0, 3, 1, 2).reshape(v.shape[0], -1)
        v = act(nn.Dense(self.value_hidden, name="value_fc1")(v))
        wdl = jax.nn.softmax(nn.Dense(3, name="value_fc2")(v), axis=-1)
        return policy_logits, wdl[:, 0] - wdl[:, 2]


def make_peer_net(blocks: int, filters: int, seed: int = 0,
                  se_ratio: int | None = 4) -> tuple[PeerNet, Any]:
    """``(module, params)``: random LeCun-normal kernels, zero biases, drawn with numpy
    (as ``zerochess.neural.resnet.init_params``; SE size ``filters // se_ratio``)."""
    se_channels = max(1, filters // se_ratio) if se_ratio else 0
    module = PeerNet(blocks, filters, se_channels)
    shapes = jax.eval_shape(module.init, jax.random.PRNGKey(0),
                            jnp.zeros((1, 8, 8, OBS_PLANES), jnp.float32))["params"]
    rng = np.random.default_rng(seed)

    def draw(path: Any, leaf: Any) -> jax.Array:
        shape = tuple(leaf.shape)
        if jax.tree_util.keystr(path[-1:]).endswith("'kernel']"):
            fan_in = int(np.prod(shape[:-1]))
            return jnp.asarray(rng.normal(0.0, 1.0 / np.sqrt(fan_in), shape), jnp.float32)
        return jnp.zeros(shape, jnp.float32)

    return module, jax.tree_util.tree_map_with_path(draw, shapes)


# --- search -----------------------------------------------------------------------------


def make_search(module: PeerNet, num_simulations: int,
                max_num_considered_actions: int = 16) -> Any:
    """A jitted ``(params, rng_key, states[B]) -> (action [B], action_weights [B, 4672])``:
    root evaluation + ``mctx.gumbel_muzero_policy``."""
    env = _env()

    def forward(params: Any, state: Any) -> tuple[jax.Array, jax.Array]:
        logits, value = module.apply({"params": params}, state.observation)
        logits = jnp.where(state.legal_action_mask, logits, jnp.finfo(logits.dtype).min)
        return logits, value

    def recurrent_fn(params: Any, rng_key: jax.Array, action: jax.Array,
                     state: Any) -> tuple[mctx.RecurrentFnOutput, Any]:
        del rng_key
        player = state.current_player
        state = jax.vmap(env.step)(state, action)
        logits, value = forward(params, state)
        reward = state.rewards[jnp.arange(state.rewards.shape[0]), player]
        value = jnp.where(state.terminated, 0.0, value)
        discount = jnp.where(state.terminated, 0.0, -1.0 * jnp.ones_like(value))
        return mctx.RecurrentFnOutput(reward=reward, discount=discount, prior_logits=logits,
                                      value=value), state

    @jax.jit
    def search(params: Any, rng_key: jax.Array, states: Any) -> tuple[jax.Array, jax.Array]:
        logits, value = forward(params, states)
        root = mctx.RootFnOutput(prior_logits=logits, value=value, embedding=states)
        out = mctx.gumbel_muzero_policy(
            params=params, rng_key=rng_key, root=root, recurrent_fn=recurrent_fn,
            num_simulations=num_simulations, invalid_actions=~states.legal_action_mask,
            max_num_considered_actions=max_num_considered_actions)
        # only what a caller uses: the dense tree is not copied out of the program
        return out.action, out.action_weights

    return search


def tree_bytes_per_node(num_actions: int = NUM_ACTIONS,
                        embedding: Any | None = None) -> dict[str, int]:
    """Bytes per node of mctx's dense ``Tree`` (from its fields' shapes and dtypes).

    Returns ``{"tree": node + children arrays, "embedding": the per-node embedding
    (a pgx chess state unless ``embedding`` is given; 0 if it is ``()``),
    "total": both}``; the root-only ``root_invalid_actions`` is not per node.
    """
    from mctx._src.search import instantiate_tree_from_root

    if embedding is None:
        env = _env()  # import pgx outside any trace: its module constants must stay concrete
        embedding = jax.eval_shape(lambda: jax.tree.map(lambda x: x[None],
                                                        env.init(jax.random.PRNGKey(0))))
    root = mctx.RootFnOutput(
        prior_logits=jax.ShapeDtypeStruct((1, num_actions), jnp.float32),
        value=jax.ShapeDtypeStruct((1,), jnp.float32), embedding=embedding)
    num_sims = 1
    tree = jax.eval_shape(
        lambda r: instantiate_tree_from_root(r, num_sims, jnp.zeros((1, num_actions), bool),
                                             None), root)
    nodes = num_sims + 1

    def per_node(x: Any) -> int:
        return int(np.prod(x.shape[2:], dtype=np.int64)) * np.dtype(x.dtype).itemsize

    fields = ("node_visits", "raw_values", "node_values", "parents", "action_from_parent",
              "children_index", "children_prior_logits", "children_visits",
              "children_rewards", "children_discounts", "children_values")
    tree_b = sum(per_node(getattr(tree, f)) for f in fields)
    emb_b = sum(per_node(x) for x in jax.tree.leaves(tree.embeddings)
                if x.shape[:2] == (1, nodes))
    return {"tree": tree_b, "embedding": emb_b, "total": tree_b + emb_b}


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def run_peer(boards_or_fens: Sequence[chess.Board | str], batch: int, sims: int,
             blocks: int, filters: int, seed: int = 0, repeats: int = 1,
             shards: int = 1) -> dict[str, Any]:
    """Time mctx gumbel MuZero + pgx chess on ``batch`` positions (``boards_or_fens``
    cycled to fill the batch) for ``sims`` simulations each.

    ``shards`` > 1 splits the batch into equal shards searched at the same time by
    parallel threads (one compiled program), the layout zerochess itself uses on a
    multi-core CPU: XLA:CPU runs these small networks and mctx's tree updates on about
    one core per call, so one call cannot use a second core.

    Returns a dict: ``sims_per_s`` (steady state, root evaluation included),
    ``search_s`` (best of ``repeats`` steady-state calls), ``compile_s`` (first call),
    ``convert_s`` (python-chess -> pgx states), ``cpu_utilisation`` (process CPU seconds
    per wall second during the best timed call: ~1 = one core busy), ``shards``,
    ``batch``, ``sims``, ``net``, ``bytes_per_node`` (dense tree + pgx state per node) and
    ``tree_gb`` (the tree of the whole batch, embeddings included).
    """
    if batch < 1 or sims < 1:
        raise ValueError(f"batch and sims must be >= 1, got {batch}, {sims}")
    if shards < 1 or batch % shards:
        raise ValueError(f"shards must be >= 1 and divide the batch {batch}, got {shards}")
    items = list(boards_or_fens)
    if not items:
        raise ValueError("no positions")
    rows = [items[i % len(items)] for i in range(batch)]
    t0 = time.perf_counter()
    unique = items[: min(len(items), batch)]
    if all(isinstance(x, chess.Board) for x in unique):
        boards = [b for b in unique if isinstance(b, chess.Board)]
        base = states_from_boards(boards, seed)
        check_states(base, boards)
    else:
        fens = [x.fen() if isinstance(x, chess.Board) else str(x) for x in unique]
        base = states_from_fens(fens)
    index = jnp.asarray([i % len(unique) for i in range(len(rows))])
    states = jax.tree.map(lambda x: x[index], base)
    size = batch // shards
    parts = [jax.tree.map(lambda x, i=i: x[i * size:(i + 1) * size], states)
             for i in range(shards)]
    jax.block_until_ready(parts)
    convert_s = time.perf_counter() - t0

    module, params = make_peer_net(blocks, filters, seed)
    search = make_search(module, sims)
    key = jax.random.PRNGKey(seed)
    t0 = time.perf_counter()
    action, _ = search(params, key, parts[0])  # compiles the shard shape
    jax.block_until_ready(action)
    compile_s = time.perf_counter() - t0

    def one(part: int, r: int) -> jax.Array:
        k = jax.random.fold_in(jax.random.fold_in(key, r + 1), part)
        out, _ = search(params, k, parts[part])
        return jax.block_until_ready(out)

    times, cpus = [], []
    actions: list[jax.Array] = []
    with ThreadPoolExecutor(shards) as pool:
        for r in range(max(1, repeats)):
            cpu0, t0 = _cpu_seconds(), time.perf_counter()
            actions = list(pool.map(lambda i, r=r: one(i, r), range(shards)))
            times.append(time.perf_counter() - t0)
            cpus.append(_cpu_seconds() - cpu0)
    best = int(np.argmin(times))
    action = np.concatenate([np.asarray(a) for a in actions])
    per_node = tree_bytes_per_node()
    return {
        "batch": batch, "sims": sims, "shards": shards, "net": f"se-resnet {blocks}x{filters}",
        "sims_per_s": batch * sims / times[best], "search_s": times[best],
        "compile_s": compile_s, "convert_s": convert_s,
        "cpu_utilisation": cpus[best] / times[best],
        "bytes_per_node": per_node,
        "tree_gb": per_node["total"] * batch * (sims + 1) / 1e9,
        "actions_legal": bool(np.all(np.take_along_axis(
            np.asarray(states.legal_action_mask), action[:, None], 1))),
    }
