#!/usr/bin/env bash
# conv2d/fft-tile against tc and regtile around auto's conv2d_fft_tile_min_taps rule (81 taps at
# 2048^2, 49 from 4096^2):
# square images 2048^2 and 8192^2, same padding, random full-rank filters of 81 to 961 taps,
# square and not (9 x 9, 11 x 11, 13 x 13, 15 x 15, 21 x 21, 31 x 31, 9 x 19, 11 x 15, 23 x 7,
# 31 x 6), the rows named in $MEMHIER_SWEEP_VARIANTS (default fft-tile,tc,regtile). One JSON of
# every row (merge_bench.py).
# usage: scripts/conv2d_fft_tile_grid.sh CLI OUT.json
set -uo pipefail
CLI=${1:?usage: conv2d_fft_tile_grid.sh CLI OUT.json}
OUTJSON=${2:?usage: conv2d_fft_tile_grid.sh CLI OUT.json}
VARIANTS=${MEMHIER_SWEEP_VARIANTS:-fft-tile,tc,regtile}
parts=$(mktemp -d)
for n in 2048 8192; do
  for shape in 9x9 11x11 13x13 15x15 21x21 31x31 9x19 11x15 23x7 31x6; do
    kr=${shape%x*} kc=${shape#*x}
    timeout 60 "$CLI" bench conv2d --rows "$n" --cols "$n" --krows "$kr" --kcols "$kc" --pad same \
      --variants "$VARIANTS" --json "$parts/$n-$shape.json" 2>&1 | grep -E "^\[|conv2d/"
  done
done
python3 "$(dirname "$0")/merge_bench.py" "$OUTJSON" "$parts"/*.json
rm -rf "$parts"
