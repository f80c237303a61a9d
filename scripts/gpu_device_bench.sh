#!/usr/bin/env bash
# The GPU slot for the device rules and the device search (issues 28 and 29), run through
# the device tool from the repository root with the wheels of chess, mctx, pgx and
# svgwrite in .whl/ (the machine has jax, flax, chex, optax, numpy, pyyaml, rich):
#   run(command="bash scripts/gpu_device_bench.sh", carry=[".whl"], timeout_s=560)
# Every phase writes its JSON record under $OUT as it goes, so a phase cut short by its
# time limit still leaves what it measured.
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD/src PYTHONUNBUFFERED=1
export ZEROCHESS_JAX_CACHE=/tmp/zerochess-jax-cache
export XLA_PYTHON_CLIENT_PREALLOCATE=false
zc() { python3 -m zerochess.cli "$@"; }
nvidia-smi -L
python3 -c "import jax, flax, chex; print('jax', jax.__version__, 'flax', flax.__version__, jax.devices())"
# smoke: the device rules; stop at once if they fail
timeout 120 zc perft startpos 4 || exit 2
echo "== rules grid"; date
timeout 150 zc bench --rules --batch 1024 4096 16384 65536 --json "$OUT/rules.json" \
  --note "H100 slot; device rules vs host expander (16 cores) and pgx step"
echo "== device search points"; date
timeout "${SEARCH_S:-300}" zc bench --device-search --json "$OUT/device_search.json" \
  --note "H100 slot; device rules; each point beside the network alone"
date
