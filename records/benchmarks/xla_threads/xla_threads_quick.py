"""Does single-threaded XLA on CPU speed up ``bench --quick``'s search point? (issue 7)

On the 2-core CPU the network alone runs slower on XLA's two intra-op threads than on
one core (``network_cpu_throughput.py``). This times our search at ``bench --quick``'s
point (B=256, S=64, SE-ResNet 2x32, the default Searcher and Expander; ``run_ours``,
the bench's own function) under the default XLA flags and under
``--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1``, each in a fresh
process (XLA reads its flags once), ``REPS`` timed searches each.

    python records/benchmarks/xla_threads/xla_threads_quick.py OUT.json [REPS]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from zerochess.bench import record

VARIANTS = {"default": "", "single_thread": ("--xla_cpu_multi_thread_eigen=false "
                                             "intra_op_parallelism_threads=1")}

CHILD = """
import json, sys
from zerochess.bench.throughput import bench_positions, run_ours
from zerochess.neural import load_model
model, boards = load_model("resnet:2x32"), bench_positions()
points = [run_ours(model, boards, 256, 64, seed=10 * r).as_dict()
          for r in range(int(sys.argv[1]))]
print(json.dumps(points))
"""


def main(out: str, reps: int = 2) -> None:
    head = record.header("xla_threads_quick", note="bench --quick's point, XLA flags")
    record.print_header(head)
    figures = {}
    for name, flags in VARIANTS.items():
        env = dict(os.environ, XLA_FLAGS=flags)
        proc = subprocess.run([sys.executable, "-c", CHILD, str(reps)], env=env, check=True,
                              capture_output=True, text=True)
        points = json.loads(proc.stdout.strip().splitlines()[-1])
        figures[name] = {"xla_flags": flags, "points": points}
        print(name, [f"{p['sims_per_s']:.0f} ({p['sims_per_s_excl_init']:.0f})"
                     for p in points], flush=True)
    record.write(out, head, figures)


if __name__ == "__main__":
    main(sys.argv[1], *(int(a) for a in sys.argv[2:]))
