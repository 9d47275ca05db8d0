#!/usr/bin/env bash
# conv2d/lowrank against the direct rows on planned low-rank filters (the grid behind planned
# auto's conv2d_lowrank_* rules): square images 512^2, 2048^2, 8192^2, same padding, K x K
# Gaussians (sigma K / 6: one term) and differences of Gaussians (sigma K / 10 and K / 6: two
# terms), K = 5, 7, .. 31, the rows named in $MEMHIER_SWEEP_VARIANTS (default
# lowrank,tc,regtile,walk). One JSON of every row (merge_bench.py).
# usage: scripts/conv2d_lowrank_sweep.sh CLI OUT.json
set -uo pipefail
CLI=${1:?usage: conv2d_lowrank_sweep.sh CLI OUT.json}
OUTJSON=${2:?usage: conv2d_lowrank_sweep.sh CLI OUT.json}
VARIANTS=${MEMHIER_SWEEP_VARIANTS:-lowrank,tc,regtile,walk}
parts=$(mktemp -d)
for n in 512 2048 8192; do
  for k in 5 7 9 11 13 15 17 19 21 23 25 27 29 31; do
    wide=$(python3 -c "print($k / 6)")
    narrow=$(python3 -c "print($k / 10)")
    for filter in "gaussian:$wide" "dog:$narrow:$wide"; do
      timeout 120 "$CLI" bench conv2d --rows "$n" --cols "$n" --krows "$k" --kcols "$k" --pad same \
        --filter "$filter" --variants "$VARIANTS" --json "$parts/$n-$k-${filter%%:*}.json" 2>&1 | grep -E "^\[|conv2d/"
    done
  done
done
python3 "$(dirname "$0")/merge_bench.py" "$OUTJSON" "$parts"/*.json
rm -rf "$parts"
