import time, sys, os
os.environ["XLA_FLAGS"]="--xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true"
from zerochess import load_model, SearchConfig
from zerochess.search.api import Searcher
from zerochess.bench.fixtures import bench_positions, fill
import zerochess.program_store as ps
ps.disk.DIRECTORY = ""   # memory only: compile everything
import jax
jax.config.update("jax_compilation_cache_dir", None) if False else None
m=load_model("builtin")
for rules in ("device","host"):
    s=Searcher(m, max_nodes=33, rules=rules, shards=1, compilation_cache=False)
    t=time.perf_counter(); s.results(s.run(s.init(fill(bench_positions(),8), SearchConfig(), 0), 32)); print(rules, round(time.perf_counter()-t,1), flush=True)
