#!/usr/bin/env bash
# conv2d's auto grid (issue 38): every row auto may pick, on square images, same padding, filters
# 3 to 127 a side (square, and 3 x 31, 31 x 3, 7 x 21, 15 x 63) of three kinds: random (full
# rank), a Gaussian (sigma max(K) / 6: rank 1) and a difference of Gaussians (sigma max(K) / 10
# and max(K) / 6: rank 2), the last two planned as the bench plans them. One JSON of every row
# and of auto's picks (merge_bench.py); scripts/plot_conv2d_grid.py draws it and prints the
# regret. The sides default to 256 1024 4096 16384; name fewer to run the grid in parts.
# MEMHIER_SWEEP_VARIANTS and MEMHIER_GRID_FILTERS (random gaussian dog) narrow it to some rows and
# filter kinds, to measure again the rows a change touches; terms3 and terms4 (sums of 3 and 4
# positive outer products, planned) measure lowrank at ranks the grid's filters do not have.
# MEMHIER_GRID_SHAPES (krows x kcols, space-separated) narrows the filter shapes likewise.
# MEMHIER_GRID_REPEATS (default 1) runs each cell that many times and keeps, row by row, the
# repeat of median time (merge_bench.py --median): at 256^2 a call takes 5-9 us, and the median
# of its back-to-back calls moves by up to 1.3x from one run to the next with the host.
# usage: scripts/conv2d_auto_grid.sh CLI OUT.json [SIDE ...]
set -uo pipefail
CLI=${1:?usage: conv2d_auto_grid.sh CLI OUT.json [SIDE ...]}
OUTJSON=${2:?usage: conv2d_auto_grid.sh CLI OUT.json [SIDE ...]}
shift 2
SIDES=${*:-256 1024 4096 16384}
VARIANTS=${MEMHIER_SWEEP_VARIANTS:-walk,regtile,stream,tc,separable,lowrank,fft-tile,fft-3pass,fft-os}
FILTERS=${MEMHIER_GRID_FILTERS:-random gaussian dog}
parts=$(mktemp -d)
for n in $SIDES; do
  for shape in ${MEMHIER_GRID_SHAPES:-3x3 5x5 7x7 11x11 15x15 21x21 31x31 63x63 127x127 3x31 31x3 7x21 15x63}; do
    kr=${shape%x*} kc=${shape#*x}
    k=$((kr > kc ? kr : kc))
    wide=$(python3 -c "print($k / 6)")
    narrow=$(python3 -c "print($k / 10)")
    for kind in $FILTERS; do
      case $kind in
      gaussian) filter="gaussian:$wide" ;;
      dog) filter="dog:$narrow:$wide" ;;
      terms3 | terms4) filter="terms:${kind#terms}" ;;
      *) filter=random ;;
      esac
      cell="$parts/$n-$shape-$kind"
      for ((i = 1; i <= ${MEMHIER_GRID_REPEATS:-1}; ++i)); do
        timeout 120 "$CLI" bench conv2d --rows "$n" --cols "$n" --krows "$kr" --kcols "$kc" --pad same \
          --filter "$filter" --variants "$VARIANTS" --json "$cell.run$i" 2>&1 |
          grep -E "^\[|auto chooses|conv2d/" | grep -v skipped
      done
      python3 "$(dirname "$0")/merge_bench.py" --median "$cell.json" "$cell".run* > /dev/null
    done
  done
done
python3 "$(dirname "$0")/merge_bench.py" "$OUTJSON" "$parts"/*.json
rm -rf "$parts"
