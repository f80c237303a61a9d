#!/usr/bin/env bash
# Fig. 2 at the paper's 1,000 nodes in one GPU slot (issue 41): `contempt_wdl` on
# Maia-1900, N_scl 1, 2, 5, 8, 32 and 10^6 (PUCT), 100 games per point, 1,000 nodes per
# move, no move cap (configs/experiment_contempt_wdl_maia.yaml, scale `full`), on the
# device game loop (`--rules device`: every ply of the 600 games is one compiled step on
# the GPU; games.device_loop). 600 games x ~140 plies x 1,000 nodes is about 8e7
# simulations: 6-7 minutes at the device search's ~250k sims/s on an H100 (issue 41's
# arithmetic; the script prints the estimate measured on the machine first).
#
# A thin entry over scripts/gpu_paper_scale.sh (same folders, same resume rules):
#   scripts/gpu_fig2.sh --estimate            # the expected time on this machine only
#   scripts/gpu_fig2.sh                       # estimate, then play for up to 12 minutes
#   scripts/gpu_fig2.sh --minutes 40          # a longer slot; run again to continue
#   scripts/gpu_fig2.sh --scale tiny --minutes 6 --out /tmp/fig2   # CPU smoke test
# Other options (--out, --seed, --site, --force) go to gpu_paper_scale.sh. The record is
# <out>/contempt_wdl-full-seed0/ (default out: records/paper_scale); commit it whole once
# its summary.md appears, and compare with the paper: (w+l)/d above 2.5 at N_scl 1, about 1
# at N_scl 5-8.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
MINUTES=12
PASS=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --estimate) MINUTES=0; shift ;;
    --minutes) MINUTES="$2"; shift 2 ;;
    --only|--rules) echo "gpu_fig2.sh plays fig2 with --rules device; use gpu_paper_scale.sh for $1" >&2; exit 2 ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) PASS+=("$1"); shift ;;
  esac
done
exec "$HERE/gpu_paper_scale.sh" --only fig2 --rules device --minutes "$MINUTES" "${PASS[@]}"
