"""Whole games of a time manager on synthetic search histories: how much of the clock a
``TimeManager`` setting spends by move N, and whether it ever flags.

Example::

    python -m zerochess.uci.tm_simulation          # the table of docs/UCI.md
    python -m zerochess.uci.tm_simulation --spec "smooth(mle-legacy(midpoint=40.0))"
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys

import numpy as np

from zerochess.uci.protocol import GoParams
from zerochess.uci.stoppers import HINT_NEED_MORE_TIME, IterationStats, StoppersHints
from zerochess.uci.time_manager import make_search_stopper, make_time_manager

CHUNK_MS = 25  # the engine checks its stoppers after every chunk
START_MS = 40  # a new tree, before the first chunk
FINISH_MS = 10  # final info lines and bestmove


@dataclasses.dataclass
class Game:
    """One side's simulated game."""

    used: float  # share of base + moves * increment spent
    flagged: bool
    move_ms: list[int]
    overruns: int  # searches that ran past clock - MoveOverheadMs


def simulate(spec: str, base_ms: int, inc_ms: int, moves: int = 40, seed: int = 0,
             overhead_ms: int = 200, movestogo: bool = False) -> Game:
    """One side's game: the engine's stopper chain (time manager + smart pruning + limits)
    run against synthetic searches.

    - nps: lognormal per move around 1500, half speed for the first 200 ms of a search,
      rising with the game ply (smaller trees later);
    - tree reuse: a share U(0.2, 0.7) of the last search's nodes (none 10% of the time);
    - root visits: the best move takes a share U(0.45, 0.95) of new visits; 15% of moves
      have a second move catching up during the first half of the budget (piggybank);
    - GUI latency U(0, 20) ms per move on the engine's clock (MoveOverheadMs covers it);
    - below the cost of a minimal search (clock - overhead < 50 ms) the engine plays the
      network's policy move (``SearchJob._time_trouble``).
    """
    rng = np.random.default_rng(seed)
    tm = make_time_manager(spec, overhead_ms)
    clock = base_ms
    last_final = 0
    times, overruns = [], 0
    for move in range(moves):
        reused = 0 if move == 0 or rng.random() < 0.1 else int(last_final * rng.uniform(0.2, 0.7))
        mtg = moves - move if movestogo else None
        go = GoParams(wtime=clock, btime=clock, winc=inc_ms, binc=inc_ms, movestogo=mtg)
        stopper = make_search_stopper(tm, go, ply=2 * move, black=False, current_nodes=reused,
                                      move_overhead_ms=overhead_ms, smart_pruning_factor=1.33,
                                      tree_capacity=10**9)
        if clock - overhead_ms < START_MS + FINISH_MS:
            # the engine's time-trouble move: the network's policy, no tree (~10 ms)
            stopper.on_search_done(IterationStats(time_since_movestart=10, total_nodes=1))
            t = 10 + int(rng.uniform(0, 20))
            times.append(t)
            clock -= t
            if clock < 0:
                return Game(1.0, True, times, overruns)
            clock += inc_ms
            last_final = 0
            continue
        hints = StoppersHints()
        nps = 1500 * rng.lognormal(0.0, 0.25) * (1 + move / 50)
        best_share = rng.uniform(0.45, 0.95)
        overtaking = rng.random() < 0.15
        t, playouts, step = START_MS, 0.0, 0
        split = np.array([reused * 0.6, reused * 0.3] + [reused * 0.1 / 18] * 18)
        while True:  # as SearchJob._search: check the stoppers, then run a chunk
            t += step
            elapsed = t - START_MS
            new = nps * step / 1000 * (0.5 if elapsed < 200 else 1.0)
            playouts += new
            if overtaking and elapsed < 1500:
                shares = [0.3, 0.6] + [0.1 / 18] * 18
            else:
                rest = 1 - best_share
                shares = [best_share, rest * 0.6] + [rest * 0.4 / 18] * 18
            split += new * np.asarray(shares)
            total = reused + int(playouts) + 1
            stats = IterationStats(
                time_since_movestart=t, time_since_first_batch=elapsed, total_nodes=total,
                nodes_since_movestart=int(playouts) + 1,
                batches_since_movestart=int(elapsed / CHUNK_MS), edge_n=[int(x) for x in split],
                tree_nodes=total,
                time_usage_hint=HINT_NEED_MORE_TIME if overtaking and elapsed < 300 else 0)
            hints.reset()
            if stopper.should_stop(stats, hints):
                break
            # a chunk never runs into the final read-out (SearchJob._chunk_limit)
            step = min(CHUNK_MS, hints.remaining_time_ms - FINISH_MS)
            if step <= 0:
                break
        t += FINISH_MS
        if t > max(clock - overhead_ms, START_MS + FINISH_MS):
            overruns += 1
        stopper.on_search_done(stats)
        t += int(rng.uniform(0, 20))
        times.append(t)
        clock -= t
        if clock < 0:
            return Game(1.0, True, times, overruns)
        clock += inc_ms
        last_final = total
    available = base_ms + moves * inc_ms
    return Game((available - clock) / available, False, times, overruns)


CLOCKS = [(60_000, 0), (180_000, 2_000), (600_000, 100)]  # 1+0, 3+2, 10+0.1
# the time managers the docs compare: lc0's defaults and a 40-move horizon
SPECS = ["smooth", "legacy", "smooth(mle-legacy(midpoint=40.0))"]


def table(specs: list[str], moves: list[int], seeds: int = 5,
          clocks: list[tuple[int, int]] = CLOCKS) -> list[dict]:
    """One row per (spec, clock, moves, movestogo): min / mean / max share used over
    ``seeds`` games, flags and searches past clock - MoveOverheadMs."""
    rows = []
    for spec in specs:
        for base, inc in clocks:
            for n in moves:
                for mtg in (False, True):
                    games = [simulate(spec, base, inc, moves=n, seed=s, movestogo=mtg)
                             for s in range(seeds)]
                    used = [g.used for g in games]
                    rows.append({
                        "spec": spec, "clock": f"{base / 1000:g}+{inc / 1000:g}",
                        "moves": n, "movestogo": mtg, "seeds": seeds,
                        "used_min": round(min(used), 4),
                        "used_mean": round(float(np.mean(used)), 4),
                        "used_max": round(max(used), 4),
                        "flags": sum(g.flagged for g in games),
                        "overruns": sum(g.overruns for g in games)})
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m zerochess.uci.tm_simulation",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--spec", action="append", help="TimeManager value (repeatable); "
                    f"default: {', '.join(SPECS)}")
    ap.add_argument("--moves", type=int, nargs="+", default=[40, 60])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--json", help="write the rows here")
    args = ap.parse_args(argv)
    rows = table(args.spec or SPECS, args.moves, args.seeds)
    print(f"{'spec':36} {'clock':>8} {'moves':>5} {'mtg':>4} {'used min-max':>13} flags")
    for r in rows:
        mtg = "yes" if r["movestogo"] else "no"
        print(f"{r['spec']:36} {r['clock']:>8} {r['moves']:>5} {mtg:>4}"
              f" {r['used_min']:6.3f}-{r['used_max']:.3f} {r['flags'] + r['overruns']:5d}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"command": " ".join(["python -m zerochess.uci.tm_simulation"]
                                           + (argv if argv is not None else sys.argv[1:])),
                       "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
