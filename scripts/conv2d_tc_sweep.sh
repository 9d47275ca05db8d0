#!/usr/bin/env bash
# conv2d/tc against the direct rows over filter sizes (issue 16's crossover behind conv2d's
# auto): square images 512^2, 2048^2, 4096^2, 8192^2, same padding, K x K filters K = 3, 5, .. 31,
# the rows named in $MEMHIER_SWEEP_VARIANTS (default tc,regtile,walk), each at its auto
# configuration. One JSON of every row (merge_bench.py).
# usage: scripts/conv2d_tc_sweep.sh CLI OUT.json
set -uo pipefail
CLI=${1:?usage: conv2d_tc_sweep.sh CLI OUT.json}
OUTJSON=${2:?usage: conv2d_tc_sweep.sh CLI OUT.json}
VARIANTS=${MEMHIER_SWEEP_VARIANTS:-tc,regtile,walk}
parts=$(mktemp -d)
for n in 512 2048 4096 8192; do
  for k in 3 5 7 9 11 13 15 17 19 21 23 25 27 29 31; do
    timeout 120 "$CLI" bench conv2d --rows "$n" --cols "$n" --krows "$k" --kcols "$k" --pad same \
      --variants "$VARIANTS" --json "$parts/$n-$k.json" 2>&1 | grep -E "^\[|conv2d/"
  done
done
python3 "$(dirname "$0")/merge_bench.py" "$OUTJSON" "$parts"/*.json
rm -rf "$parts"
