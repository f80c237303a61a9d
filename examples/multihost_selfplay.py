"""Self-play on several hosts: every process runs this script, ``jax.distributed`` joins
them, and one jitted program plays a batch of games sharded over the global mesh.

Each ply every game's position is searched (``zerochess.search.compiled.search``: the
whole search as one pure function), the most visited move is played (``Env.step``), all
inside one ``lax.scan`` over plies. The batch of games is split over all the processes'
devices (``NamedSharding(Mesh(jax.devices(), ("batch",)), P("batch"))``); the search's
cross-tree steps become collectives. The games are those one process plays alone
(``tests/test_multihost.py`` checks it with two processes on one machine).

    # one process (the reference)
    python examples/multihost_selfplay.py --games 8 --plies 4 --out one.json
    # two hosts (or two processes on one machine, each with its own CPU device)
    python examples/multihost_selfplay.py --coordinator HOST0:12355 --num-processes 2 \
        --process-id 0 --games 8 --plies 4 --out two.json      # on host 0
    python examples/multihost_selfplay.py --coordinator HOST0:12355 --num-processes 2 \
        --process-id 1 --games 8 --plies 4                     # on host 1

The first process writes every game's moves (lc0 1858 indices, one list per ply) to
``--out``. Game g opens with the g-th legal first move (in UCI order), so the games
differ.
"""

from __future__ import annotations

import argparse
import json

import jax
import jax.numpy as jnp
import numpy as np


def make_play(model, games: int, plies: int, simulations: int):
    """A jitted ``play(model_params, states, params, key) -> actions [plies, games]``."""
    from zerochess.env import Env
    from zerochess.search.compiled import roots_from_env, search

    env = Env()
    step = jax.vmap(env.step)

    @jax.jit
    def play(model_params, states, params, key):
        def ply(states, k):
            roots = roots_from_env(states, jax.random.key_data(
                jax.random.fold_in(jax.random.wrap_key_data(key), k)))
            out = search(model_params, roots, params, simulations, apply_fn=model.apply,
                         num_nodes=simulations + 1, edges_per_node=40)
            return step(states, out.action), out.action

        _, actions = jax.lax.scan(ply, states, jnp.arange(plies))
        return actions

    return play


def main(argv: list[str] | None = None) -> list[list[int]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--coordinator", help="HOST:PORT of process 0 (none: one process)")
    parser.add_argument("--num-processes", type=int, default=1)
    parser.add_argument("--process-id", type=int, default=0)
    parser.add_argument("--games", type=int, default=8)
    parser.add_argument("--plies", type=int, default=4)
    parser.add_argument("--simulations", type=int, default=16)
    parser.add_argument("--model", default="builtin")
    parser.add_argument("--out", help="JSON file for the games' moves (process 0)")
    args = parser.parse_args(argv)
    if args.coordinator:
        # jax's multi-host recipe: every process calls this before any other jax call
        jax.distributed.initialize(coordinator_address=args.coordinator,
                                   num_processes=args.num_processes,
                                   process_id=args.process_id)

    import chess
    from jax.experimental import multihost_utils
    from jax.sharding import Mesh, NamedSharding
    from jax.sharding import PartitionSpec as P

    from zerochess import SearchConfig, load_model
    from zerochess.env import start_states
    from zerochess.search import stack_configs

    model = load_model(args.model)
    if args.games % jax.device_count():
        raise SystemExit(f"--games {args.games} must be a multiple of the "
                         f"{jax.device_count()} devices")
    # every process builds the same global inputs; each puts only its own rows on its
    # devices (make_array_from_callback asks for the addressable shards alone)
    def opening(g: int) -> chess.Board:  # game g opens with the g-th legal first move
        board = chess.Board()
        board.push(sorted(board.legal_moves, key=chess.Move.uci)[g % 20])
        return board

    states = start_states([opening(g) for g in range(args.games)])
    configs = [SearchConfig(n_scl=(None, 5)[g % 2]) for g in range(args.games)]
    params = stack_configs(configs, model.has_moves_left, model.mate_check)
    mesh = Mesh(np.array(jax.devices()), ("batch",))
    batch = NamedSharding(mesh, P("batch"))

    def shard(a):
        a = np.asarray(a)
        return jax.make_array_from_callback(a.shape, batch, lambda index: a[index])

    play = make_play(model, args.games, args.plies, args.simulations)
    key = jax.random.key_data(jax.random.PRNGKey(0))
    actions = play(model.params, jax.tree.map(shard, states), jax.tree.map(shard, params),
                   key)
    if jax.process_count() > 1:
        actions = multihost_utils.process_allgather(actions, tiled=True)
    moves = np.asarray(actions).T.tolist()  # [games, plies]
    if args.out and jax.process_index() == 0:
        with open(args.out, "w") as fh:
            json.dump({"processes": jax.process_count(), "devices": jax.device_count(),
                       "moves": moves}, fh)
    return moves


if __name__ == "__main__":
    main()
