"""Seconds of the first search (compile + run) of one searcher shape per rules backend, with
the test suite's XLA flags and no persistent cache: PYTHONPATH=<src> python compile_seconds.py
(figures in compile_seconds.txt)."""

import os
import time

os.environ["XLA_FLAGS"] = (
    "--xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true"
)
import zerochess.program_store as ps
from zerochess import SearchConfig, load_model
from zerochess.bench.fixtures import bench_positions, fill
from zerochess.search.api import Searcher

ps.disk.DIRECTORY = ""  # memory only: compile everything
m = load_model("builtin")
for rules in ("device", "host"):
    s = Searcher(m, max_nodes=33, rules=rules, shards=1, compilation_cache=False)
    t = time.perf_counter()
    s.results(s.run(s.init(fill(bench_positions(), 8), SearchConfig(), 0), 32))
    print(rules, round(time.perf_counter() - t, 1), flush=True)
