"""ms of the device rules' expand alone (jax.jit, best of 25) at B = 256 and 1,024 on the bench
fixtures: PYTHONPATH=<src> python expand_only.py (console figures, in BENCHMARKS.md)."""
import jax
from zerochess.bench.rules import _inputs, _best
from zerochess.chess.device.expand import expand
for B in (256, 1024):
    parent, index, _ = _inputs(B)
    parent = jax.device_put(parent); index = jax.device_put(index)
    f = jax.jit(expand)
    s = _best(lambda: f(parent, index), 25)
    print(f"B={B} {s*1e3:.2f} ms {B/s:,.0f}/s", flush=True)
