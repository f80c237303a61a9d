"""The analysis engine's throughput alone (no lc0), for before/after comparisons.

    python records/benchmarks/analysis_engine_ab/analysis_engine_ab.py SLOTS POSITIONS VISITS MODEL

Starts ``zerochess analysis --slots SLOTS`` (the checkout on ``PYTHONPATH``), submits
POSITIONS queries of VISITS visits at once (the positions of ``bench --analysis``) and
prints positions/s and visits/s from the first submission to the last final response
(start-up and compilation excluded). Run it for each commit on a quiet machine.
"""

import sys

from zerochess.bench.analysis import analysis_positions, run_throughput, start_engine


def main(argv: list[str]) -> int:
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    slots, count, visits, model = int(argv[0]), int(argv[1]), int(argv[2]), argv[3]
    positions = analysis_positions(count, None)
    client, startup = start_engine(slots, visits, model)
    try:
        res = run_throughput(client, positions, visits)
        client.close()
    finally:
        client.kill()
    print(f"engine slots={slots}: {res['positions_per_s']:.2f} positions/s "
          f"{res['visits_per_s']:.0f} visits/s (start-up {startup:.1f} s, excluded)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
