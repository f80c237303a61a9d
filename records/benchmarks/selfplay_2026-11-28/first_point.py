"""The first self-play point of ``zerochess bench --device-search --selfplay`` (the
built-in evaluator, 64 games at 16 nodes, 48 plies; host loop, host loop on device rules,
device game loop), with the JSON written: what ``--selfplay --quick`` runs since
2026-11-28, in a form that also runs on older sources (a before/after pair):

    PYTHONPATH=<git archive REV>/src \\
        python records/benchmarks/selfplay_2026-11-28/first_point.py OUT.json NOTE
"""

from __future__ import annotations

import sys

from zerochess.bench import record
from zerochess.bench.device_search import SELFPLAY, selfplay_ratio

if __name__ == "__main__":
    head = record.header("device_search", (), sys.argv[2] if len(sys.argv) > 2 else None)
    record.print_header(head)
    figures = {"selfplay": selfplay_ratio(SELFPLAY[:1])}
    record.write(sys.argv[1], head, figures)
    first = figures["selfplay"][0]
    print(f"ratio_device_vs_host_selfplay: "
          f"{first['device_loop']['positions_per_s'] / first['host']['positions_per_s']:.2f}")
