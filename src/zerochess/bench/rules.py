"""``zerochess bench --rules``: expansions/s of the device rules against the host expander
(python-chess on every core) and pgx's ``step``, on the same positions and moves."""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from zerochess.bench import record
from zerochess.bench.fixtures import bench_positions, fill

BATCHES = (64, 256, 1024, 4096, 16384)
GPU_BATCHES = (*BATCHES, 65536)
QUICK_BATCHES = (256, 1024)
RATIO_BATCH = 1024


def _best(fn: Callable[[], Any], repeats: int) -> float:
    jax.block_until_ready(fn())  # compile / warm up
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn())
        best = min(best, time.perf_counter() - start)
    return best


def _inputs(batch: int, seed: int = 0) -> tuple[Any, np.ndarray, list]:
    from zerochess.chess import state
    from zerochess.chess.policy_map import move_to_index

    boards = fill(bench_positions(), batch)
    rng = np.random.default_rng(seed)
    moves = [list(b.legal_moves)[rng.integers(b.legal_moves.count())] for b in boards]
    parent = state.stack([state.from_board(b) for b in boards])
    index = np.array([move_to_index(b, m) for b, m in zip(boards, moves, strict=True)],
                     np.int16)
    return parent, index, list(zip(boards, moves, strict=True))


def run_point(batch: int, repeats: int, pgx: bool, host: bool) -> dict[str, Any]:
    from zerochess.chess.device import expand
    from zerochess.chess.encoding import planes_from_arrays
    from zerochess.chess.expander import Expander

    parent, index, pairs = _inputs(batch)
    device_parent = jax.device_put(parent)
    device_index = jax.device_put(index)
    expand_fn = jax.jit(expand)
    device_s = _best(lambda: expand_fn(device_parent, device_index), repeats)
    boards = jax.device_put(np.repeat(parent.board[:, None], 8, axis=1))
    encode = jax.jit(lambda b, t, c, r: planes_from_arrays(
        jnp, b, jnp.zeros(b.shape[:2], bool), t, c, r))
    encode_s = _best(lambda: encode(boards, device_parent.turn, device_parent.castling,
                                    device_parent.rule50), repeats)
    point: dict[str, Any] = {
        "batch": batch, "device_s": device_s, "device_per_s": batch / device_s,
        "encode_s": encode_s, "encode_per_s": batch / encode_s}
    if host:
        workers = os.cpu_count() or 1
        with Expander(workers if workers > 1 else 0) as expander:
            host_s = _best(lambda: expander(parent, index), max(1, repeats // 3))
        point.update(host_s=host_s, host_per_s=batch / host_s, host_workers=workers,
                     ratio_device_vs_host=host_s / device_s)
    if pgx:
        from zerochess.bench.peer_mctx_pgx import _env, move_to_action, states_from_boards

        env = _env()
        states = states_from_boards([b for b, _ in pairs])
        actions = jnp.asarray([move_to_action(b, m) for b, m in pairs], jnp.int32)
        step = jax.jit(jax.vmap(env.step))
        pgx_s = _best(lambda: step(states, actions), repeats)
        point.update(pgx_s=pgx_s, pgx_per_s=batch / pgx_s, ratio_device_vs_pgx=pgx_s / device_s)
    return point


def main(args: Any) -> int:
    """``zerochess bench --rules [--quick] [--batch B...] [--json FILE]``."""
    accelerator = jax.default_backend() != "cpu"
    batches = tuple(args.batch or (QUICK_BATCHES if args.quick else
                                   (GPU_BATCHES if accelerator else BATCHES)))
    head = record.header("rules", (), getattr(args, "note", None))
    record.print_header(head)
    try:
        from zerochess.bench.peer_mctx_pgx import require_pgx

        require_pgx()
        pgx = True
    except Exception as exc:  # noqa: BLE001 - the peer is optional here; say so
        print(f"pgx: not measured ({exc})")
        pgx = False
    points: list[dict[str, Any]] = []
    figures: dict[str, Any] = {"points": points}
    for batch in batches:
        # the host expander at 65,536 positions takes minutes and says nothing new
        p = run_point(batch, repeats=5, pgx=pgx, host=batch <= 16384)
        points.append(p)
        line = (f"B={batch:<6} device {p['device_per_s']:>12,.0f} expansions/s   "
                f"encode {p['encode_per_s']:>12,.0f} positions/s")
        if "host_per_s" in p:
            line += f"   host {p['host_per_s']:>10,.0f}/s (x{p['ratio_device_vs_host']:.1f})"
        if "pgx_per_s" in p:
            line += f"   pgx step {p['pgx_per_s']:>12,.0f}/s (x{p['ratio_device_vs_pgx']:.1f})"
        print(line, flush=True)
        if args.json:  # after every point: a run cut short keeps what it measured
            record.write(args.json, head, figures)
    at = [p for p in points if p["batch"] == RATIO_BATCH and "ratio_device_vs_host" in p]
    if at:
        print(f"ratio_device_vs_host_rules: {at[0]['ratio_device_vs_host']:.2f}")
    return 0


__all__ = ["BATCHES", "GPU_BATCHES", "main", "run_point"]
