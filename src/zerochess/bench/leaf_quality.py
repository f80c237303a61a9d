"""``zerochess bench --leaf-quality``: what gathering L leaves per step costs in search quality."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

import chess
import numpy as np

from zerochess.bench import lc0_peer, record
from zerochess.bench.record import machine_info
from zerochess.errors import UserError
from zerochess.neural import load_model
from zerochess.search import SearchConfig, Searcher

LEAVES = (1, 8, 32, 128)
FULL = {"positions": 200, "visits": 800}
QUICK = {"positions": 32, "visits": 200}
TINY = {"positions": 2, "visits": 16, "leaves": (1, 4)}
BATCH = 64


def search(model: Any, boards: Sequence[chess.Board], visits: int, leaves: int) -> list[Any]:
    """zerochess's results for ``boards``, in batches of ``BATCH`` positions."""
    searcher = Searcher(model, max_nodes=visits + 1, leaves_per_step=leaves)
    out: list[Any] = []
    for i in range(0, len(boards), BATCH):
        out += searcher.search(list(boards[i:i + BATCH]), SearchConfig(), visits)
    return out


def root_visits(res: Any) -> dict[chess.Move, int]:
    """A ``SearchResult``'s root visits by move."""
    return {m: int(v) for m, v in zip(res.moves, res.visits, strict=True)}


def compare(boards: Sequence[chess.Board], reference: Sequence[dict[chess.Move, int]],
            ref_best: Sequence[chess.Move], other: Sequence[dict[chess.Move, int]],
            other_best: Sequence[chess.Move]) -> dict[str, float]:
    """Same-best-move share and KL(reference || other) over the positions."""
    kls, same = [], 0
    for board, a, ab, b, bb in zip(boards, reference, ref_best, other, other_best, strict=True):
        moves = list(board.legal_moves)
        kls.append(lc0_peer.kl_divergence(np.array([a.get(m, 0) for m in moves]),
                                          np.array([b.get(m, 0) for m in moves])))
        same += ab == bb
    share = same / len(boards)
    half = 1.96 * math.sqrt(max(share * (1 - share), 1e-12) / len(boards))
    return {"same_best": share, "same_best_ci95": [max(0.0, share - half), min(1.0, share + half)],
            "kl_mean": float(np.nanmean(kls)), "kl_median": float(np.nanmedian(kls))}


def run_quality(model: Any, lc0_path: str | None, weights: str, positions: int, visits: int,
                leaves: Sequence[int] = LEAVES, log: Any = print) -> dict[str, Any]:
    boards = lc0_peer.peer_positions(model, positions)
    out: dict[str, Any] = {"machine": machine_info(), "positions": positions, "visits": visits,
                           "fens": [b.fen() for b in boards], "rows": []}
    ours = {}
    for width in leaves:
        start = time.perf_counter()
        res = search(model, boards, visits, width)
        ours[width] = ([root_visits(r) for r in res], [r.best_move for r in res],
                       time.perf_counter() - start, sum(r.collisions for r in res))
        log(f"zerochess L={width}: {ours[width][2]:.0f} s, collisions {ours[width][3]}")
    lc0 = {}
    if lc0_path is not None:
        for minibatch in (0, 1):
            with lc0_peer.Lc0Engine(lc0_path, weights) as engine:
                if minibatch:
                    engine.engine.configure({"MinibatchSize": minibatch})
                found = lc0_peer.run_lc0(engine, boards, visits)
            lc0[minibatch] = ([s.visits for s in found], [s.best_move for s in found])
            log(f"lc0 MinibatchSize={minibatch or 'default'}: done")
        out["lc0_batching"] = compare(boards, *lc0[1], *lc0[0])
    base = ours[leaves[0]]
    for width in leaves:
        row = {"leaves": width, "seconds": ours[width][2], "collisions": ours[width][3],
               "vs_one_leaf": compare(boards, base[0], base[1], *ours[width][:2])}
        if lc0:
            row["vs_lc0_default"] = compare(boards, *lc0[0], *ours[width][:2])
        out["rows"].append(row)
        text = (f"L={width:<4} same best move as L=1 {100 * row['vs_one_leaf']['same_best']:.1f}%"
                f", KL(L=1 || L) {row['vs_one_leaf']['kl_mean']:.4f}")
        if lc0:
            vs = row["vs_lc0_default"]
            text += (f"; vs lc0 default minibatch: same {100 * vs['same_best']:.1f}%, "
                     f"KL {vs['kl_mean']:.4f}")
        log(text)
    if lc0:
        b = out["lc0_batching"]
        log(f"lc0 default minibatch vs lc0 MinibatchSize=1: same best move "
            f"{100 * b['same_best']:.1f}%, KL {b['kl_mean']:.4f}")
    return out


def main(args: Any) -> int:
    """``zerochess bench --leaf-quality [--quick | --tiny] [--json FILE]``."""
    lc0_path, maia = lc0_peer.find_lc0(), lc0_peer.find_maia()
    if lc0_path is None or maia is None:
        raise UserError(f"bench --leaf-quality needs the lc0 program and Maia-1900; install "
                        f"them with: {lc0_peer.INSTALL_HINT}")
    grid = (TINY if getattr(args, "tiny", False) else QUICK if getattr(args, "quick", False)
            else FULL)
    head = record.header("leaf_quality", [maia], getattr(args, "note", None))
    record.print_header(head)
    start = time.perf_counter()
    res = run_quality(load_model(maia), lc0_path, maia, grid["positions"], grid["visits"],
                      leaves=grid.get("leaves", LEAVES), log=lambda line: print(line, flush=True))
    res["total_s"] = time.perf_counter() - start
    if getattr(args, "json", None):
        record.write(args.json, head, res)  # machine, versions, commit, model hashes
    return 0


__all__ = ["BATCH", "FULL", "LEAVES", "QUICK", "TINY", "compare", "main", "root_visits",
           "run_quality", "search"]
