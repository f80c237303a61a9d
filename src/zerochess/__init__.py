"""zerochess: JAX-accelerated batched MCTS for chess research."""

__version__ = "0.1.0"
