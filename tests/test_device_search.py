"""The search on device rules (``Searcher(rules="device")``: one compiled program per call)
against the host pipeline, and the pure search function for RL code.

Same seed, same trees: 200 positions across PUCT, search-contempt (N_scl 1, 5, infinity),
one and 16 leaves per step, certainty propagation, the evaluation cache and tree reuse;
every tree array is compared, not only the results. The host pipeline runs one group of
leaves per tree (``groups=1``), the device loop's schedule.
"""

from __future__ import annotations

import chess
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from zerochess import SearchConfig, load_model
from zerochess.env import Env, start_states
from zerochess.search import Searcher, stack_configs
from zerochess.search.api import tree_keys
from zerochess.search.compiled import roots_from_env, search

from strategies import random_board

SIMS = 48
N_SCL = (1, 5, None)  # None: infinity (PUCT)


@pytest.fixture(scope="module")
def model():
    return load_model("builtin")


def _positions(count: int, seed: int) -> list[chess.Board]:
    out = []
    i = 0
    while len(out) < count:
        b = random_board(seed * 1000 + i, 6 + i % 50)
        i += 1
        if not b.is_game_over():
            out.append(b)
    return out


def _configs(count: int) -> list[SearchConfig]:
    return [SearchConfig(n_scl=N_SCL[i % 3], certainty_propagation=bool(i % 2))
            for i in range(count)]


def _tree_arrays(batch) -> dict[str, np.ndarray]:
    tree = jax.device_get(batch.state.tree)
    return {name: np.asarray(getattr(tree, name)) for name in (
        "visits", "wl_sum", "d_sum", "lower", "upper", "node_count", "edge_count",
        "simulations", "dropped")} | {"edge_child": np.asarray(tree.edges.child),
                                      "edge_move": np.asarray(tree.edges.move),
                                      "frozen": np.asarray(tree.edges.frozen)}


def _searches(model, rules: str, leaves: int, boards, configs, cache: int):
    searcher = Searcher(model, max_nodes=2 * SIMS + 1, leaves_per_step=leaves, rules=rules,
                        groups=1, shards=1, cache_size=cache)
    batch = searcher.run(searcher.init(boards, configs, seed=11), SIMS)
    first = (searcher.results(batch), _tree_arrays(batch))
    # tree reuse: the best move and a reply, then more simulations on the kept trees
    lines = []
    for board, result in zip(boards, first[0], strict=True):
        if _ends(board.copy(), result.best_move):
            lines.append([])  # keep the root: a new search on the same tree
            continue
        after = board.copy()
        after.push(result.best_move)
        reply = next(iter(after.legal_moves))
        lines.append([result.best_move] + ([] if _ends(after, reply) else [reply]))
    batch = searcher.run(searcher.advance(batch, lines), SIMS // 2)
    return first, (searcher.results(batch), _tree_arrays(batch))


def _ends(board: chess.Board, move: chess.Move) -> bool:
    board.push(move)
    over = not any(board.generate_legal_moves())
    board.pop()
    return over


def test_device_and_host_rules_give_identical_trees_small(model):
    """The first tier's share: 24 positions, one leaf per step, the cache, tree reuse."""
    _compare(model, 1, 4096, 24)


@pytest.mark.tier2
@pytest.mark.parametrize("leaves, cache", [(1, 4096), (16, 0)])
def test_device_and_host_rules_give_identical_trees(model, leaves, cache):
    _compare(model, leaves, cache, 100)


def _compare(model, leaves: int, cache: int, count: int) -> None:
    boards = _positions(count, seed=leaves)
    configs = _configs(len(boards))
    host = _searches(model, "host", leaves, boards, configs, cache)
    device = _searches(model, "device", leaves, boards, configs, cache)
    for (h_results, h_tree), (d_results, d_tree) in zip(host, device, strict=True):
        for name in h_tree:
            assert np.array_equal(h_tree[name], d_tree[name], equal_nan=True), name
        for h, d in zip(h_results, d_results, strict=True):
            assert np.array_equal(h.visits, d.visits)
            assert np.array_equal(h.q, d.q, equal_nan=True)
            assert h.best_move == d.best_move and h.pv == d.pv


def test_cpu_shards_search_side_by_side_as_one_after_the_other(model):
    """On a CPU, device rules split a batch into two shards searched on two threads (jax's
    CPU backend runs one thread's programs one at a time, mostly on one core). The trees
    are those of the same shards searched one after the other (``observe`` forces that
    order): no shard reads or writes another's state."""
    boards = _positions(16, seed=5)
    configs = _configs(len(boards))
    searcher = Searcher(model, max_nodes=SIMS + 1, rules="device")
    side_by_side = searcher.run(searcher.init(boards, configs, seed=2), SIMS)
    assert len(side_by_side.shards) == (2 if jax.default_backend() == "cpu" else 1)
    in_turn = searcher.run(searcher.init(boards, configs, seed=2), SIMS,
                           observe=lambda shards: False)
    a, b = _tree_arrays(side_by_side), _tree_arrays(in_turn)
    for name in a:
        assert np.array_equal(a[name], b[name], equal_nan=True), name
    assert int(a["simulations"].min()) == SIMS
    for x, y in zip(searcher.results(side_by_side), searcher.results(in_turn), strict=True):
        assert np.array_equal(x.visits, y.visits) and x.best_move == y.best_move


def test_search_function_equals_searcher_and_composes(model):
    boards = _positions(8, seed=3)
    configs = [SearchConfig(n_scl=N_SCL[i % 3], mate_check=False) for i in range(len(boards))]
    params = stack_configs(configs, model.has_moves_left, model.mate_check)
    states = jax.tree.map(jnp.asarray, start_states(boards))

    @jax.jit
    def run(model_params, states, key):
        roots = roots_from_env(states, key)
        roots = roots.replace(rng_key=jnp.asarray(tree_keys(5, len(boards))))
        return search(model_params, roots, params, SIMS, apply_fn=model.apply,
                      num_nodes=2 * SIMS + 1, edges_per_node=40)

    out = run(model.params, states, jax.random.key_data(jax.random.PRNGKey(0)))
    searcher = Searcher(model, max_nodes=2 * SIMS + 1, rules="device", shards=1)
    expected = searcher.results(searcher.run(searcher.init(boards, configs, seed=5), SIMS))
    for i, r in enumerate(expected):
        n = len(r.moves)
        assert np.array_equal(np.asarray(out.visits[i, :n]), r.visits)
        assert chess.Move.from_uci(_uci(boards[i], int(out.action[i]))) == r.best_move
        assert abs(float(jnp.sum(out.action_weights[i])) - 1.0) < 1e-5
    # parameters are data: other weights, no new compilation
    other = jax.tree.map(lambda a: a * 1.0, model.params)
    run(other, states, jax.random.key_data(jax.random.PRNGKey(1)))
    assert run._cache_size() == 1


@pytest.mark.tier2  # one more compiled program: a scan over search and step
def test_search_function_runs_inside_scan(model):
    boards = _positions(8, seed=3)
    configs = [SearchConfig(n_scl=N_SCL[i % 3], mate_check=False) for i in range(len(boards))]
    params = stack_configs(configs, model.has_moves_left, model.mate_check)
    states = jax.tree.map(jnp.asarray, start_states(boards))
    env = Env()

    def ply(carry, key):
        states = carry
        result = search(model.params, roots_from_env(states, key), params, 16,
                        apply_fn=model.apply, num_nodes=33, edges_per_node=40)
        return jax.vmap(env.step)(states, result.action), result.action

    keys = jax.random.split(jax.random.PRNGKey(2), 3)
    final, actions = jax.jit(lambda s, k: jax.lax.scan(ply, s, jax.random.key_data(k)))(
        states, keys)
    actions = np.asarray(actions)
    for i, board in enumerate(boards):  # every move played was legal where it was played
        b = board.copy()
        for a in actions[:, i]:
            move = chess.Move.from_uci(_uci(b, int(a)))
            assert move in b.legal_moves
            b.push(move)
            if b.is_game_over():
                break


def _uci(board: chess.Board, index: int) -> str:
    from zerochess.chess.policy_map import index_to_move

    return index_to_move(board, index).uci()


SHARDED = r'''
import os, sys
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
import jax, jax.numpy as jnp, numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
sys.path.insert(0, sys.argv[1])
from strategies import random_board
from zerochess import SearchConfig, load_model
from zerochess.env import start_states
from zerochess.search import stack_configs
from zerochess.search.compiled import roots_from_env, search

assert jax.local_device_count() == 4
model = load_model("builtin")
boards = [random_board(i, 10 + i) for i in range(8)]
params = stack_configs([SearchConfig(n_scl=(1, 5, None)[i % 3]) for i in range(8)],
                       model.has_moves_left, model.mate_check)
states = jax.tree.map(jnp.asarray, start_states(boards))

@jax.jit
def run(model_params, states, params, key):
    return search(model_params, roots_from_env(states, key), params, 32, apply_fn=model.apply,
                  num_nodes=33, edges_per_node=40)

key = jax.random.key_data(jax.random.PRNGKey(0))
one = run(model.params, states, params, key)
mesh = Mesh(np.array(jax.devices()), ("batch",))
batch = NamedSharding(mesh, P("batch"))
put = lambda tree: jax.tree.map(lambda a: jax.device_put(a, batch), tree)
four = run(model.params, put(states), put(params), key)
assert len(four.visits.sharding.device_set) == 4, four.visits.sharding
for name in ("visits", "action", "value"):
    assert np.array_equal(np.asarray(getattr(one, name)), np.asarray(getattr(four, name))), name
print("sharded ok")
'''


@pytest.mark.slow
def test_sharded_search_equals_one_device(tmp_path):
    """The pure search function with the batch sharded over 4 (CPU) devices gives one
    device's results (jax's SPMD partitioner splits the trees; the search's cross-tree
    steps, e.g. the evaluation batch, become collectives)."""
    import subprocess
    import sys
    from pathlib import Path

    script = tmp_path / "sharded.py"
    script.write_text(SHARDED)
    out = subprocess.run([sys.executable, str(script), str(Path(__file__).parent)],
                         capture_output=True, text=True, timeout=1800)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "sharded ok" in out.stdout


@pytest.mark.tier2  # two more searchers' programs
def test_analyse_on_device_rules_equals_host_rules():
    from zerochess import analyse

    positions = ["startpos", "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1",
                 ("startpos", ["e2e4", "e7e5", "g1f3"])]
    host = analyse(positions, visits=24, rules="host", leaves_per_step=1)
    device = analyse(positions, visits=24, rules="device", leaves_per_step=1)
    for h, d in zip(host, device, strict=True):
        assert np.array_equal(h.visits, d.visits) and h.best_move == d.best_move
        assert np.array_equal(h.q, d.q, equal_nan=True)


def test_analyse_refuses_unknown_rules():
    from zerochess import analyse
    from zerochess.errors import ConfigError

    with pytest.raises(ConfigError, match="rules"):
        analyse("startpos", visits=4, rules="gpu")
