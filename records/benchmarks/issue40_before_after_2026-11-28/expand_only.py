"""ms of the device rules' expand alone (jax.jit, best of 25: ``bench.rules.run_point``'s
device part) at B = 256 and 1,024 on the bench fixtures:
PYTHONPATH=<src> python expand_only.py (console figures, in BENCHMARKS.md)."""

from zerochess.bench.rules import run_point

for B in (256, 1024):
    p = run_point(B, repeats=25, pgx=False, host=False)
    print(f"B={B} {p['device_s'] * 1e3:.2f} ms {p['device_per_s']:,.0f}/s", flush=True)
