"""AlphaZero in pure JAX on zerochess's public API: self-play on the device with
search-contempt for one player and PUCT for the other, value and policy targets, optax
steps, and the next round with the new parameters (nothing recompiles).

    python examples/az_selfplay_train.py --games 8 --plies 24 --simulations 16 --rounds 3
"""

from __future__ import annotations

import argparse
from typing import NamedTuple

import jax
import jax.numpy as jnp
import optax

import zerochess
from zerochess import SearchConfig
from zerochess.chess.actions import actions_to_uci
from zerochess.env import Env
from zerochess.neural import load_model
from zerochess.search import stack_configs
from zerochess.search.compiled import roots_from_env, search
from zerochess.search.per_player import for_player, stack_players
from zerochess.training import policy_loss, wdl_loss
from zerochess.training.targets import (
    dense_to_slots,
    pack_planes,
    slots_to_dense,
    unpack_planes,
    value_targets,
    value_to_wdl,
)


class Data(NamedTuple):
    """One round's positions, [plies * games] (compact: packed planes, 218 policy slots)."""

    bits: jax.Array  # uint8 [N, 112, 8]
    values: jax.Array  # float32 [N, 112]
    legal: jax.Array  # int16 [N, 218] the legal moves (1858 indices, -1 padded)
    policy: jax.Array  # float32 [N, 218] root visit fractions
    wdl: jax.Array  # float32 [N, 3] the game's outcome for the side to move
    valid: jax.Array  # bool [N] the game was still going


def make_round(model, games: int, plies: int, simulations: int, steps: int, lr: float = 3e-3):
    """``round(params, opt_state, settings, key) -> (params, opt_state, losses [steps],
    (final states, actions, positions, valid [plies, games]))``, and the optimizer."""
    env, opt = Env(), optax.adam(lr)

    def ply(model_params, settings, states, key):
        search_key, move_key = jax.random.split(key)
        params = for_player(settings, states.current_player)  # each tree: its mover's search
        out = search(model_params, roots_from_env(states, search_key), params, simulations,
                     apply_fn=model.apply)
        sampled = jax.random.categorical(move_key, jnp.log(out.action_weights))  # T = 1
        action = jnp.where(out.action >= 0, sampled, -1)
        bits, values = pack_planes(states.observation, xp=jnp)
        record = (bits, values, out.legal, dense_to_slots(out.action_weights, out.legal),
                  states.current_player, ~(states.terminated | states.truncated),
                  action, states.position)
        after = jax.vmap(env.step)(states, action)
        return after, (record, after.rewards)

    @jax.jit
    def selfplay(model_params, settings, key):
        init_key, key = jax.random.split(key)
        states = jax.vmap(env.init)(jax.random.split(init_key, games))
        states, (record, rewards) = jax.lax.scan(
            lambda s, k: ply(model_params, settings, s, k), states, jax.random.split(key, plies))
        bits, values, legal, policy, player, valid, actions, positions = record
        z = value_targets(rewards, player)  # [plies, games]: +1 won, -1 lost, 0 drawn/going
        flat = lambda a: a.reshape(plies * games, *a.shape[2:])  # noqa: E731
        data = Data(flat(bits), flat(values), flat(legal), flat(policy),
                    flat(value_to_wdl(z)), flat(valid))
        return data, states, actions, positions, valid

    @jax.jit
    def train_step(params, opt_state, data: Data):
        def loss_fn(p):
            policy_logits, wdl_logits, _ = model.apply(p, unpack_planes(data.bits, data.values))
            target = slots_to_dense(data.legal, data.policy, illegal=-1.0)  # lc0's form
            per = policy_loss(policy_logits, target) + wdl_loss(wdl_logits, data.wdl)
            return jnp.sum(per * data.valid) / jnp.maximum(jnp.sum(data.valid), 1)

        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = opt.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    def one_round(params, opt_state, settings, key):
        data, states, actions, positions, valid = selfplay(params, settings, key)
        losses = []
        for _ in range(steps):
            params, opt_state, loss = train_step(params, opt_state, data)
            losses.append(float(loss))
        return params, opt_state, losses, (states, actions, positions, valid)

    return one_round, opt


def make_settings(model, games: int):
    """Player 0 searches with search-contempt (N_scl 5), player 1 with PUCT (both with root
    noise): ``SearchParams`` [2, games], picked per tree by ``for_player``."""
    noise = dict(dirichlet_epsilon=0.25, dirichlet_alpha=0.3)
    return stack_players(*(stack_configs([SearchConfig(**noise, **extra)] * games,
                                         model.has_moves_left, model.mate_check)
                           for extra in ({"n_scl": 5}, {})))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=8)
    parser.add_argument("--plies", type=int, default=24)
    parser.add_argument("--simulations", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--model", default="resnet:1x16")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    # compiled programs kept on disk: a second run of this script compiles nothing
    zerochess.enable_compile_cache()
    model = load_model(args.model)
    one_round, opt = make_round(model, args.games, args.plies, args.simulations, args.steps)
    settings = make_settings(model, args.games)
    params, opt_state = model.params, opt.init(model.params)
    print("round 0 compiles first (minutes on a CPU, where XLA may log 'Very slow compile?';"
          " a second run loads it from the cache)", flush=True)
    for r, key in enumerate(jax.random.split(jax.random.PRNGKey(args.seed), args.rounds)):
        params, opt_state, losses, (states, actions, positions, valid) = one_round(
            params, opt_state, settings, key)
        line = [actions_to_uci(jax.tree.map(lambda a, t=t: a[t], positions), actions[t])[0]
                for t in range(args.plies) if valid[t, 0]]  # game 0, decoded ply by ply
        print(f"round {r}: games ended {int(states.terminated.sum())}/{args.games}; loss "
              f"{losses[0]:.3f} -> {losses[-1]:.3f}; game 0: {' '.join(line)}")


if __name__ == "__main__":
    main()
