"""Self-play with mctx's Gumbel MuZero policy over zerochess's environment, all inside one
``jax.jit``: the rules (``zerochess.chess.device``), the network and the search run on the
device, with lc0's 1858 actions and 112 input planes.

    python examples/mctx_selfplay.py --games 8 --plies 12 --simulations 16

The network is a small SE-ResNet with random weights (``resnet:1x8``); pass ``--model`` for
another (``resnet:6x64``, a path to an lc0 network).
"""

from __future__ import annotations

import argparse

import jax
import jax.numpy as jnp
import mctx

import zerochess
from zerochess.env import Env, State, auto_reset
from zerochess.neural import load_model


def make_selfplay(model, games: int, plies: int, simulations: int):
    """``play(params, key) -> (final states, actions [plies, games], rewards, terminated)``."""
    env = Env()
    step = jax.vmap(auto_reset(env.step, env.init))

    def evaluate(params, states: State):
        out = model.apply(params, states.observation)
        logits = jnp.where(states.legal_action_mask, out.policy_logits, -1e9)
        wdl = jax.nn.softmax(out.wdl_logits.astype(jnp.float32), axis=-1)
        return logits, wdl[:, 0] - wdl[:, 2]  # value for the player to move

    def root_fn(params, states: State) -> mctx.RootFnOutput:
        logits, value = evaluate(params, states)
        return mctx.RootFnOutput(prior_logits=logits, value=value, embedding=states)

    def recurrent_fn(params, key, action, states: State):
        mover = states.current_player
        new = jax.vmap(env.step)(states, action)
        logits, value = evaluate(params, new)
        reward = jnp.take_along_axis(new.rewards, mover[:, None], axis=1)[:, 0]
        over = new.terminated
        # two players: the next node's value is the opponent's, hence discount -1
        return mctx.RecurrentFnOutput(reward=reward, discount=jnp.where(over, 0.0, -1.0),
                                      prior_logits=logits,
                                      value=jnp.where(over, 0.0, value)), new

    @jax.jit
    def play(params, key):
        key, init_key = jax.random.split(key)
        states = jax.vmap(env.init)(jax.random.split(init_key, games))

        def ply(states, key):
            search_key, reset_key = jax.random.split(key)
            out = mctx.gumbel_muzero_policy(
                params, search_key, root_fn(params, states), recurrent_fn,
                num_simulations=simulations, invalid_actions=~states.legal_action_mask,
                max_num_considered_actions=16)
            after = step(states, out.action, jax.random.split(reset_key, games))
            return after, (out.action, after.rewards, after.terminated)

        return jax.lax.scan(ply, states, jax.random.split(key, plies))

    return play


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=8)
    parser.add_argument("--plies", type=int, default=12)
    parser.add_argument("--simulations", type=int, default=16)
    parser.add_argument("--model", default="resnet:1x8")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    # compiled programs kept on disk: a second run of this script compiles nothing
    zerochess.enable_compile_cache()
    model = load_model(args.model)
    play = make_selfplay(model, args.games, args.plies, args.simulations)
    final, (actions, rewards, terminated) = play(model.params, jax.random.PRNGKey(args.seed))
    print(f"{args.games} games x {args.plies} plies; games ended: "
          f"{int(terminated.sum())}; first game's actions: {actions[:, 0].tolist()}")


if __name__ == "__main__":
    main()
