#!/usr/bin/env bash
# The GPU slot of issue 40 in one command (scripts/gpu_slot.py says what it measures).
# Through the device tool, from the repository root, with the wheels of chess, mctx, pgx
# and svgwrite in .whl/ (the machine has jax, flax, chex, optax, numpy, pyyaml, rich and
# reaches no package index):
#   run(command="bash scripts/gpu_slot.sh", carry=[".whl"], timeout_s=590)
# Make .whl here once: pip download --no-deps -d .whl mctx==0.0.71 pgx==2.6.0 svgwrite==1.4.3
# and pip wheel --no-deps -w .whl chess==1.11.2. A machine with an index instead:
# pip install -e ".[cuda12,bench]". Every stage writes its JSON under $OUT as it goes.
# CPU dry run of the same stages at tiny sizes: bash scripts/gpu_slot.sh --cpu
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site:$PWD/src
else
  python3 -c "import chess, mctx, pgx" 2>/dev/null || python3 -m pip install -q -e ".[cuda12,bench]" || exit 1
  export PYTHONPATH=$PWD/src${PYTHONPATH:+:$PYTHONPATH}
fi
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
export ZEROCHESS_JAX_CACHE=${ZEROCHESS_JAX_CACHE:-/tmp/zerochess-jax-cache}
nvidia-smi -L 2>/dev/null
python3 -c "import jax, flax; print('jax', jax.__version__, 'flax', flax.__version__, jax.devices())"
python3 scripts/gpu_slot.py --out "$OUT" "$@" 2>&1 | tee "$OUT/log.txt"
date
