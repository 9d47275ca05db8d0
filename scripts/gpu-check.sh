#!/usr/bin/env bash
# One call on a fresh GPU machine (the `device` tool's H100): build for sm_90, run every
# test (GPU ones included), run the benchmark and the tuning sweep, then look at the
# kernels (ptxas report, SASS counts, ncu counters, compute-sanitizer memcheck and
# racecheck). Writes into OUTDIR:
#   bench.json  memhier bench (all ops, default workloads)     -> bench/results/<gpu>.json
#   tune.json   memhier bench --tune (every tuning configuration)
#   coalescing.svg  the coalescing plot (scripts/plot_coalescing.py) -> docs/coalescing.svg
#   summary.txt the tables and verdicts;  logs.tar.gz  every log
#   grid.json   memhier bench conv1d --grid (+ conv1d-grid.png/.md: winners, auto's regret)
#   report/     scripts/report.py of the bench: tables.md and plots/ (the README's and docs')
#   python-overhead.json  what the Python binding adds to a call (scripts/python_overhead.py)
#   explain.txt `memhier explain` of docs/auto.md's example -> bench/results/<gpu>.explain.txt
# usage: scripts/gpu-check.sh OUTDIR [all|test|bench|tune|grid|calibrate|analyze|analyze-rh|analyze-mm|python|sanitize ...]
# MEMHIER_TUNE_OPS="conv2d" limits the tuning sweep to those ops (default: every op); its words
# go to `memhier bench` as they are ("matmul --variants warptile,cublas");
# MEMHIER_BENCH_OPS="reduce histogram" benches those ops alone, one bench-OP.json each;
# MEMHIER_CTEST_ARGS="-E oracle_conv" passes its arguments to ctest;
# MEMHIER_GRID_VARIANTS="regtile,fft-fused" limits the grid's rows;
# MEMHIER_SANITIZE_TESTS="test_reduce test_matmul" limits the sanitize phase to those tests;
# phase python: pytest python/tests and scripts/python_overhead.py against this build's library;
# MEMHIER_NCU_MM="Li0ELb0E" adds ncu runs (analyze-mm) of the warptile kernels whose mangled names match;
# phase mm-sizes: the tensor-core rows' configurations against cuBLAS over the shapes behind matmul's
# auto (matmul-sizes.txt); phase ncu-wgmma: ncu of the wgmma kernels at 4096^3 (L2 bytes, stalls);
# phase ncu-transpose: the transpose rungs' counters at 8192^2 (transpose-ncu.txt, docs/transpose.md);
# phase tc-sweep: conv2d/tc against regtile and walk, K x K filters 3..31 at 512^2 to 8192^2
# (conv2d-tc-sweep.json, scripts/conv2d_tc_sweep.sh: the rule behind conv2d's auto);
# phase lowrank-sweep: conv2d/lowrank against tc, regtile and walk on planned Gaussians and
# differences of Gaussians, K = 5..31 at 512^2 to 8192^2 (conv2d-lowrank-sweep.json,
# scripts/conv2d_lowrank_sweep.sh: the rule behind planned auto's conv2d_lowrank_*);
# phase fft-tile-grid: conv2d/fft-tile against tc and regtile around auto's taps rule, at
# 2048^2 and 8192^2 (conv2d-fft-tile-grid.json, scripts/conv2d_fft_tile_grid.sh);
# phase auto-grid: conv2d's auto grid, filters 3 to 127 of three kinds, images 256^2 to 16384^2
# (conv2d-auto-grid.json and .png, scripts/conv2d_auto_grid.sh and scripts/plot_conv2d_grid.py:
# auto's regret; bench/results/<GPU>.conv2d-auto-grid.json is the committed run);
# phase mid-grid: the same script on tc, regtile and fft-tile at ten sides from 512^2 to 2048^2,
# random filters of 121 to 225 taps (conv2d-mid-grid.json and .png: where tc's and fft-tile's
# thresholds between those sizes come from);
# phase narrow-grid: the same on tall filters of 6 and 7 columns from 256^2 to 448^2, and on
# those and others of 169 to 266 taps at 511^2 and 512^2 (conv2d-narrow-grid.json and .png:
# conv2d_tc_one_slice_min_taps);
# phase mid-taps-grid: the same on filters of 247 to 361 taps from 448^2 to 768^2
# (conv2d-mid-taps-grid.json and .png: conv2d_fft_tile_min_taps's step at 448^2).
set -uo pipefail
OUT=$(realpath -m "${1:?usage: scripts/gpu-check.sh OUTDIR [phases]}")
shift
PHASES=${*:-all}
cd "$(dirname "$0")/.."
export PATH="/usr/local/cuda/bin:$PATH"
LOGS="$OUT/logs"
mkdir -p "$LOGS"
SUMMARY="$OUT/summary.txt"
: >"$SUMMARY"
BUILD=build-gpu
export MEMHIER_FUZZ_SECONDS=${MEMHIER_FUZZ_SECONDS:-10} # the parsers' fuzzers: CI runs them 30 s each
CLI="$BUILD/memhier"
T0=$(date +%s)

say() { echo "$*" | tee -a "$SUMMARY"; }
stamp() { say "== $1 ($(($(date +%s) - T0)) s)"; }
want() { [[ " $PHASES " == *" all "* || " $PHASES " == *" $1 "* ]]; }
# ncu_bench LOG KERNEL-REGEX "BENCH ARGS" NCU-ARGS...: one launch of the kernel in a bench run
ncu_bench() {
  local log=$1 kern=$2 args=$3
  shift 3
  # shellcheck disable=SC2086
  timeout 120 ncu --clock-control none -k "regex:$kern" --launch-count 1 "$@" "$CLI" bench $args >"$LOGS/$log" 2>&1
  say "-- ncu $args (exit $?)"
  grep -E "^\s+(sm__|smsp__|l1tex__|gpu__|idc__|dram__|lts__)" "$LOGS/$log" | tee -a "$SUMMARY"
}

stamp "machine"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv | tee -a "$SUMMARY"
nvcc --version | tail -1 | tee -a "$SUMMARY"

stamp "build (sm_90)"
# the commit under test: .commit (written before the call: git describe --always --dirty)
commit_arg=()
[ -f .commit ] && commit_arg=(-DMEMHIER_COMMIT_OVERRIDE="$(head -1 .commit)")
cmake -S . -B "$BUILD" -DCMAKE_CUDA_ARCHITECTURES=90 -DMEMHIER_PTXAS_VERBOSE=ON "${commit_arg[@]}" >"$LOGS/configure.log" 2>&1 &&
  cmake --build "$BUILD" -j "$(nproc)" >"$LOGS/build.log" 2>&1
build_rc=$?
say "build exit $build_rc"
if [ $build_rc -ne 0 ]; then
  tail -40 "$LOGS/build.log" | tee -a "$SUMMARY"
  tar -C "$OUT" -czf "$OUT/logs.tar.gz" logs && rm -rf "$LOGS"
  exit 1
fi
# registers, spills and shared memory of every kernel
grep -E "Compiling entry|registers|spill" "$LOGS/build.log" | paste - - - 2>/dev/null |
  sed -E 's/ptxas info *: //g' >"$LOGS/ptxas.txt"

if want test; then
  stamp "ctest (all tests, GPU included)"
  # shellcheck disable=SC2086
  (cd "$BUILD" && timeout 420 ctest --output-on-failure --timeout 300 ${MEMHIER_CTEST_ARGS:-}) >"$LOGS/ctest.log" 2>&1
  say "ctest exit $?"
  grep -E "Test +#|tests passed|tests failed|Skipped|\*\*\*" "$LOGS/ctest.log" | tee -a "$SUMMARY"
fi

if want bench; then
  stamp "memhier info"
  "$CLI" info | tee -a "$SUMMARY"
  stamp "memhier explain (docs/auto.md's example: bench/results/<gpu>.explain.txt comes from $OUT/explain.txt)"
  explain="explain conv2d --rows 8192 --cols 8192 --krows 11 --kcols 11 --pad same"
  { echo "\$ memhier $explain"; "$CLI" $explain; } >"$OUT/explain.txt" 2>&1
  say "explain exit $?"
  if [ -z "${MEMHIER_BENCH_OPS:-}" ]; then
    stamp "memhier bench"
    timeout 420 "$CLI" bench --json "$OUT/bench.json" >"$LOGS/bench.log" 2>&1
    say "bench exit $?"
  else # one JSON per op named
    for op in $MEMHIER_BENCH_OPS; do
      stamp "memhier bench $op"
      timeout 300 "$CLI" bench "$op" --json "$OUT/bench-$op.json" >>"$LOGS/bench.log" 2>&1
      say "bench $op exit $?"
    done
  fi
  stamp "peers (scripts/peers.py: CuPy, PyTorch on the bench's workloads, rows added to the JSON)"
  for j in "$OUT"/bench.json "$OUT"/bench-*.json; do
    [ -f "$j" ] && PYTHONUNBUFFERED=1 timeout 300 python3 scripts/peers.py "$j" >>"$LOGS/peers.log" 2>&1
    [ -f "$j" ] && say "peers on $(basename "$j") exit $?"
  done
  if [ ! -f "$OUT/bench.json" ] && ls "$OUT"/bench-*.json >/dev/null 2>&1; then
    python3 scripts/merge_bench.py "$OUT/bench-merged.json" "$OUT"/bench-*.json 2>&1 | tee -a "$SUMMARY"
  fi
  if [ -f "$OUT/bench.json" ]; then
    python3 scripts/plot_coalescing.py "$OUT/bench.json" "$OUT/coalescing.svg" >>"$LOGS/bench.log" 2>&1
    say "coalescing plot exit $? (docs/coalescing.svg comes from $OUT/coalescing.svg)"
  fi
fi

if want tune; then
  stamp "memhier bench ${MEMHIER_TUNE_OPS:-} --tune"
  # shellcheck disable=SC2086
  timeout 300 "$CLI" bench ${MEMHIER_TUNE_OPS:-} --tune --json "$OUT/tune.json" >"$LOGS/tune.log" 2>&1
  say "tune exit $?"
fi

if want grid; then
  # issue 13's n x k grid behind conv1d's auto: every fast row, and what auto chose in each cell
  GRID_VARIANTS=${MEMHIER_GRID_VARIANTS:-regtile,fft-os,fft-fused,cufft}
  stamp "memhier bench conv1d --grid --variants $GRID_VARIANTS"
  timeout 560 "$CLI" bench conv1d --grid --variants "$GRID_VARIANTS" --json "$OUT/grid.json" >"$LOGS/grid.log" 2>&1
  say "grid exit $?"
  python3 scripts/plot_conv1d_grid.py "$OUT/grid.json" "$OUT/conv1d-grid.png" "$OUT/conv1d-grid.md" 2>&1 | tee -a "$SUMMARY"
fi

if want tc-sweep; then
  stamp "conv2d/tc against the direct rows, K = 3..31 (scripts/conv2d_tc_sweep.sh)"
  timeout 560 bash scripts/conv2d_tc_sweep.sh "$CLI" "$OUT/conv2d-tc-sweep.json" >"$LOGS/tc-sweep.log" 2>&1
  say "tc-sweep exit $?"
  tee -a "$SUMMARY" <"$LOGS/tc-sweep.log"
fi

if want lowrank-sweep; then
  stamp "conv2d/lowrank against the direct rows, planned low-rank filters (scripts/conv2d_lowrank_sweep.sh)"
  timeout 560 bash scripts/conv2d_lowrank_sweep.sh "$CLI" "$OUT/conv2d-lowrank-sweep.json" >"$LOGS/lowrank-sweep.log" 2>&1
  say "lowrank-sweep exit $?"
  tee -a "$SUMMARY" <"$LOGS/lowrank-sweep.log"
fi

if want fft-tile-grid; then
  stamp "conv2d/fft-tile against tc and regtile around its taps rule (scripts/conv2d_fft_tile_grid.sh)"
  timeout 560 bash scripts/conv2d_fft_tile_grid.sh "$CLI" "$OUT/conv2d-fft-tile-grid.json" >"$LOGS/fft-tile-grid.log" 2>&1
  say "fft-tile-grid exit $?"
  tee -a "$SUMMARY" <"$LOGS/fft-tile-grid.log"
fi

if want auto-grid; then
  stamp "conv2d's auto grid (scripts/conv2d_auto_grid.sh; ~420 s on the H100)"
  # 256^2 calls take 5-10 us and their medians move by up to 1.3x from run to run: five repeats
  MEMHIER_GRID_REPEATS=5 timeout 240 bash scripts/conv2d_auto_grid.sh "$CLI" "$LOGS/auto-grid-256.json" 256 \
    >"$LOGS/auto-grid.log" 2>&1
  say "auto-grid 256 exit $?"
  timeout 500 bash scripts/conv2d_auto_grid.sh "$CLI" "$LOGS/auto-grid-large.json" 1024 4096 16384 \
    >>"$LOGS/auto-grid.log" 2>&1
  say "auto-grid exit $?"
  python3 scripts/merge_bench.py "$OUT/conv2d-auto-grid.json" "$LOGS/auto-grid-256.json" "$LOGS/auto-grid-large.json"
  python3 scripts/plot_conv2d_grid.py "$OUT/conv2d-auto-grid.json" "$OUT/conv2d-auto-grid.png" \
    "$OUT/conv2d-auto-grid.md" 2>&1 | tee -a "$SUMMARY"
fi

if want mid-grid; then
  stamp "conv2d's mid-size grid: tc, regtile and fft-tile from 512^2 to 2048^2 (~60 s on the H100)"
  MEMHIER_SWEEP_VARIANTS=tc,regtile,fft-tile MEMHIER_GRID_FILTERS=random \
    MEMHIER_GRID_SHAPES="11x11 13x13 15x15 7x21 21x7 9x17 17x9 9x15 11x13" \
    timeout 300 bash scripts/conv2d_auto_grid.sh "$CLI" "$OUT/conv2d-mid-grid.json" \
    512 640 768 896 1024 1152 1280 1448 1536 2048 >"$LOGS/mid-grid.log" 2>&1
  say "mid-grid exit $?"
  python3 scripts/plot_conv2d_grid.py "$OUT/conv2d-mid-grid.json" "$OUT/conv2d-mid-grid.png" \
    "$OUT/conv2d-mid-grid.md" 2>&1 | tee -a "$SUMMARY"
fi

if want narrow-grid; then
  stamp "conv2d's narrow grid: tc, regtile and fft-tile on tall filters below 512^2 (~70 s on the H100)"
  export MEMHIER_SWEEP_VARIANTS=tc,regtile,fft-tile MEMHIER_GRID_FILTERS=random
  MEMHIER_GRID_SHAPES="20x7 21x7 23x7 25x7 28x7 31x7 30x6 31x6" timeout 200 bash scripts/conv2d_auto_grid.sh \
    "$CLI" "$LOGS/narrow-grid-a.json" 256 320 384 448 >"$LOGS/narrow-grid.log" 2>&1
  say "narrow-grid (256^2 to 448^2) exit $?"
  MEMHIER_GRID_SHAPES="13x13 14x13 15x13 17x13 21x7 23x7 31x6 31x7 14x19 23x11" timeout 200 \
    bash scripts/conv2d_auto_grid.sh "$CLI" "$LOGS/narrow-grid-b.json" 511 512 >>"$LOGS/narrow-grid.log" 2>&1
  say "narrow-grid (511^2, 512^2) exit $?"
  unset MEMHIER_SWEEP_VARIANTS MEMHIER_GRID_FILTERS
  python3 scripts/merge_bench.py "$OUT/conv2d-narrow-grid.json" "$LOGS/narrow-grid-a.json" "$LOGS/narrow-grid-b.json"
  python3 scripts/plot_conv2d_grid.py "$OUT/conv2d-narrow-grid.json" "$OUT/conv2d-narrow-grid.png" \
    "$OUT/conv2d-narrow-grid.md" 2>&1 | tee -a "$SUMMARY"
fi

if want mid-taps-grid; then
  stamp "conv2d's mid-taps grid: tc, regtile and fft-tile on 247 to 361 taps from 448^2 to 768^2 (~60 s on the H100)"
  MEMHIER_SWEEP_VARIANTS=tc,regtile,fft-tile MEMHIER_GRID_FILTERS=random \
    MEMHIER_GRID_SHAPES="17x17 19x19 14x19 23x11 21x13 13x21 16x16 19x13 11x23 15x17" \
    timeout 300 bash scripts/conv2d_auto_grid.sh "$CLI" "$OUT/conv2d-mid-taps-grid.json" 448 512 640 768 \
    >"$LOGS/mid-taps-grid.log" 2>&1
  say "mid-taps-grid exit $?"
  python3 scripts/plot_conv2d_grid.py "$OUT/conv2d-mid-taps-grid.json" "$OUT/conv2d-mid-taps-grid.png" \
    "$OUT/conv2d-mid-taps-grid.md" 2>&1 | tee -a "$SUMMARY"
fi

if want calibrate; then
  stamp "calibration of auto: regtile against cuFFT as k grows"
  for nk in 1000000:1023 1000000:4095 1000000:8191 1000000:16383 4194304:2047 4194304:4095 \
            16777216:1023 16777216:3071 16777216:4095 16777216:8191 67108864:2047; do
    timeout 60 "$CLI" bench conv1d --n "${nk%%:*}" --k "${nk##*:}" --variants regtile,cufft \
      --json "$LOGS/calibrate_${nk/:/_}.json" 2>&1 | grep -E "^\[|regtile|cufft" | grep -v preparing | tee -a "$LOGS/calibrate.log"
  done
fi

if want analyze; then
  stamp "SASS instruction counts"
  lib="$BUILD/libmemhier.so"
  for k in $(cuobjdump -symbols "$lib" 2>/dev/null | grep -oE "_Z[0-9]+conv[12]d_[a-z_]+_kernel[A-Za-z0-9_]*" | sort -u); do
    cuobjdump -sass -fun "$k" "$lib" >"$LOGS/sass_$k.txt" 2>&1
    printf '%-60s FFMA %5d  LDS %4d  LDS.128 %4d  LDS.64 %4d  LDC %4d  MOV %4d  LDL/STL %d\n' "$k" \
      "$(grep -c 'FFMA' "$LOGS/sass_$k.txt")" "$(grep -cE 'LDS(\.|\s)' "$LOGS/sass_$k.txt")" \
      "$(grep -c 'LDS.128' "$LOGS/sass_$k.txt")" "$(grep -c 'LDS.64' "$LOGS/sass_$k.txt")" \
      "$(grep -c 'LDC' "$LOGS/sass_$k.txt")" "$(grep -cE '\bMOV\b' "$LOGS/sass_$k.txt")" \
      "$(grep -cE 'LDL|STL' "$LOGS/sass_$k.txt")" >>"$LOGS/sass_counts.txt"
  done
  cat "$LOGS/sass_counts.txt" >>"$SUMMARY" 2>/dev/null

  ncu_run() { # LOG N K VARIANT KERNEL-REGEX NCU-ARGS...: conv1d
    local log=$1 n=$2 k=$3 v=$4 kern=$5
    shift 5
    ncu_bench "$log" "$kern" "conv1d --n $n --k $k --variants $v" "$@"
  }
  stamp "ncu: shared-memory traffic and FMA activity, n=16777216 k=2047"
  metrics=sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,smsp__sass_inst_executed_op_shared_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,smsp__inst_executed.sum,gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active
  ncu_run ncu_smem.log 16777216 2047 smem conv1d_smem_kernel --metrics "$metrics"
  ncu_run ncu_regblock.log 16777216 2047 regblock conv1d_regblock_kernel --metrics "$metrics"
  ncu_run ncu_regtile.log 16777216 2047 regtile conv1d_regtile_kernel --metrics "$metrics"
  stamp "ncu: where warps stall with the mask in constant memory, n=1000000 k=2047"
  stalls=gpu__time_duration.sum,smsp__inst_executed.sum
  for r in imc_miss short_scoreboard long_scoreboard mio_throttle lg_throttle barrier wait math_pipe_throttle no_instruction not_selected selected; do
    stalls="$stalls,smsp__warp_issue_stalled_${r}_per_warp_active.pct"
  done
  ncu_run ncu_stall_naive.log 1000000 2047 naive conv1d_naive_kernel --metrics "$stalls"
  ncu_run ncu_stall_const.log 1000000 2047 const conv1d_naive_kernel --metrics "$stalls"
  ncu_run ncu_stall_smem.log 1000000 2047 smem conv1d_smem_kernel --metrics "$stalls"
  ncu_run ncu_stall_smem_const.log 1000000 2047 smem+const conv1d_smem_kernel --metrics "$stalls"
  ncu_run ncu_regtile_k31.log 67108864 31 regtile conv1d_regtile_kernel --section SpeedOfLight --section Occupancy

  stamp "ncu: conv2d rungs at 8192 x 8192, K = 7 (texture and shuffle: seed 001's claims)"
  m2=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__t_sectors_pipe_tex_mem_texture.sum,smsp__inst_executed_op_shfl.sum,sm__warps_active.avg.pct_of_peak_sustained_active
  for v in shared:conv2d_shared cache-halo:conv2d_cache_halo texture:conv2d_texture shuffle:conv2d_shuffle regtile:conv2d_regtile; do
    ncu_bench "ncu2d_${v%%:*}.log" "${v##*:}" "conv2d --rows 8192 --cols 8192 --k 7 --pad same --variants ${v%%:*}" --metrics "$m2"
  done
  ncu_bench ncu2d_regtile_k11.log conv2d_regtile "conv2d --rows 8192 --cols 8192 --k 11 --pad same --variants regtile" --metrics "$m2"
  ncu_bench ncu2d_regtile_k3.log conv2d_regtile "conv2d --rows 8192 --cols 8192 --k 3 --pad same --variants regtile" \
    --section SpeedOfLight --section Occupancy --section MemoryWorkloadAnalysis

  stamp "ncu: transpose rungs at 8192 x 8192 (bank conflicts, bytes moved)"
  mt=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,smsp__inst_executed.sum
  for v in naive shared padded coarse vector; do
    ncu_bench "ncut_$v.log" "transpose_" "transpose --rows 8192 --cols 8192 --variants $v" --metrics "$mt"
  done

fi

if want analyze-rh; then
  stamp "SASS of the reduce, histogram and matmul warptile kernels (logs/sass_rh_*.txt)"
  for k in $(cuobjdump -symbols "$BUILD/libmemhier.so" 2>/dev/null | grep -oE "_Z[0-9]+(reduce_vector|hist_lane_private|hist_vector|matmul_warptile)_kernel[A-Za-z0-9_]*" | sort -u); do
    cuobjdump -sass -fun "$k" "$BUILD/libmemhier.so" >"$LOGS/sass_rh_$k.txt" 2>&1
    printf '%-90s instr %5d FFMA %5d LDS %4d STS %4d ATOMS %4d BAR %d\n' "$k" "$(grep -cE '^\s+/\*[0-9a-f]{4}\*/' "$LOGS/sass_rh_$k.txt")" \
      "$(grep -c FFMA "$LOGS/sass_rh_$k.txt")" "$(grep -c 'LDS' "$LOGS/sass_rh_$k.txt")" "$(grep -c 'STS' "$LOGS/sass_rh_$k.txt")" \
      "$(grep -c 'ATOMS' "$LOGS/sass_rh_$k.txt")" "$(grep -c 'BAR' "$LOGS/sass_rh_$k.txt")" | tee -a "$SUMMARY"
  done
  stamp "ncu: reduce rungs at n = 2^26 (seed 004's warp-utilisation tables: threads per instruction)"
  mr=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum.per_second,smsp__thread_inst_executed_per_inst_executed.ratio,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__warp_issue_stalled_barrier_per_warp_active.pct,smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct
  for v in tree:reduce_tree consecutive:reduce_consecutive coarse:reduce_consecutive shuffle:reduce_shuffle \
           vector:reduce_vector cub:Reduce; do
    ncu_bench "ncur_${v%%:*}.log" "${v##*:}" "reduce --n 67108864 --variants ${v%%:*}" --metrics "$mr"
  done
  stamp "ncu: histogram rungs, the first workload (2^28 uniform bytes, 256 bins)"
  mh=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__inst_executed_op_shared_atom.sum,smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct,smsp__warp_issue_stalled_mio_throttle_per_warp_active.pct,smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct,smsp__warp_issue_stalled_short_scoreboard_per_warp_active.pct,smsp__issue_active.avg.pct_of_peak_sustained_active
  for v in coarse-interleaved:hist_interleaved vector:hist_vector lane-private:hist_lane cub:Histogram; do
    ncu_bench "ncuh_${v%%:*}.log" "${v##*:}" "histogram --variants ${v%%:*}" --metrics "$mh"
  done
fi

if want analyze-rh || want analyze-mm; then
  stamp "SASS of matmul warptile's configurations (logs/sass_mm_*.txt: .reuse flags, register numbers)"
  for k in $(cuobjdump -symbols "$BUILD/libmemhier.so" 2>/dev/null | grep -oE "_Z[0-9]+matmul_warptile_kernel[A-Za-z0-9_]*" | sort -u); do
    cuobjdump -sass -fun "$k" "$BUILD/libmemhier.so" >"$LOGS/sass_mm_$k.txt" 2>&1
    printf '%-100s FFMA %5d .reuse %5d\n' "$k" "$(grep -c FFMA "$LOGS/sass_mm_$k.txt")" "$(grep -c 'FFMA.*reuse' "$LOGS/sass_mm_$k.txt")" | tee -a "$SUMMARY"
  done
  stamp "ncu: matmul 4096^3, warptile (default shape) and cuBLAS: where warps stall"
  mm=gpu__time_duration.sum,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum
  for r in barrier long_scoreboard short_scoreboard mio_throttle no_instruction not_selected math_pipe_throttle wait dispatch_stall branch_resolving; do
    mm="$mm,smsp__warp_issue_stalled_${r}_per_warp_active.pct"
  done
  ncu_bench ncum_warptile.log matmul_warptile "matmul --n 4096 --variants warptile" --metrics "$mm"
  ncu_bench ncum_cublas.log "gemm|Kernel" "matmul --n 4096 --variants cublas" --metrics "$mm"
  # MEMHIER_NCU_MM="REGEX ..." : also the warptile configurations whose mangled names match
  for re in ${MEMHIER_NCU_MM:-}; do
    ncu_bench "ncum_$re.log" "$re" "matmul --n 4096 --variants warptile --tune" --kernel-name-base mangled --metrics "$mm"
  done
fi

if want mm-sizes; then
  # matmul's auto rule: every configuration of the wgmma rows beside cuBLAS (FP32 and TF32) over
  # a sweep of shapes (report kind matmul-wgmma-sizes reads the text log)
  stamp "matmul sizes sweep (tensor-core rows, --tune)"
  {
    echo "# memhier bench matmul --tune, $(nvidia-smi --query-gpu=name --format=csv,noheader), at $(head -1 .commit 2>/dev/null)"
    for s in 512:512:512 768:768:768 1000:1000:1000 1024:1024:1024 1536:1536:1536 2048:2048:2048 3072:3072:3072 \
             4096:4096:4096 8192:4096:6144 8192:64:8192 2000:1000:500 1000:4096:1000; do
      IFS=: read -r m k n <<<"$s"
      timeout 120 "$CLI" bench matmul --rows "$m" --k "$k" --cols "$n" --tune \
        --variants tf32x3-wgmma,tf32-wgmma,cublas,cublas-tf32 2>&1 | grep -vE "preparing|^$"
    done
  } >"$OUT/matmul-sizes.txt"
  say "sizes sweep done"
  grep -E "^\[|wgmma\[auto\]|cublas " "$OUT/matmul-sizes.txt" | tee -a "$SUMMARY"
fi

if want ncu-wgmma; then
  stamp "ncu: the wgmma kernels at 4096^3 (L2 bytes, tensor pipe, stalls)"
  mw=gpu__time_duration.sum,lts__t_bytes.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_tensor_op_gmma.sum
  for r in barrier long_scoreboard wait math_pipe_throttle lg_throttle; do
    mw="$mw,smsp__warp_issue_stalled_${r}_per_warp_active.pct"
  done
  # matmul_wgmma_kernel<BN, KIND> and matmul_wgmma_ws_kernel<BN, KIND>: KIND 0 tf32x3, 1 tf32 (one product)
  for re in matmul_wgmma_kernelILi256ELi0E matmul_wgmma_ws_kernelILi256ELi0E matmul_wgmma_ws_kernelILi128ELi0E \
            matmul_wgmma_ws_kernelILi256ELi1E; do
    ncu_bench "ncuwg_$re.log" "$re" "matmul --n 4096 --variants tf32x3-wgmma,tf32-wgmma --tune" \
      --kernel-name-base mangled --metrics "$mw"
  done
  ncu_bench ncuwg_cublas_tf32.log "gemm|Kernel|sm90" "matmul --n 4096 --variants cublas-tf32" --metrics "$mw"
fi

if want ncu-transpose; then
  # docs/transpose.md's counters table (report kind transpose-ncu reads transpose-ncu.txt)
  stamp "ncu: transpose rungs at 8192 x 8192 (DRAM, store sectors, bank conflicts, instructions)"
  mt=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,smsp__inst_executed.sum
  echo "# ncu --clock-control none, memhier bench transpose --rows 8192 --cols 8192, one launch a rung, $(nvidia-smi --query-gpu=name --format=csv,noheader), at $(head -1 .commit 2>/dev/null)" >"$OUT/transpose-ncu.txt"
  for v in naive shared padded coarse vector cublas; do
    ncu_bench "ncut_$v.log" "transpose_|geam" "transpose --rows 8192 --cols 8192 --variants $v" --metrics "$mt"
    { echo "## transpose/$v"; grep -E "^\s+(gpu__|dram__|l1tex__|smsp__)" "$LOGS/ncut_$v.log"; } >>"$OUT/transpose-ncu.txt"
  done
fi

if want python; then
  # The Python package against this build's library (the same .so `pip install .` ships; the
  # README's test command installs it with pip): pytest with NumPy, CuPy and PyTorch, then the
  # binding's overhead on a CuPy array (python-overhead.json).
  stamp "pytest python/tests (NumPy, CuPy, PyTorch)"
  (cd python/tests && MEMHIER_LIBRARY="$PWD/../../$BUILD/libmemhier.so" PYTHONPATH="$PWD/.." \
    timeout 300 python3 -m pytest -q -p no:cacheprovider -rs . >"$LOGS/pytest.log" 2>&1)
  say "pytest exit $?: $(tail -1 "$LOGS/pytest.log")"
  grep -E "FAILED|Error|SKIPPED" "$LOGS/pytest.log" | head -20 | tee -a "$SUMMARY"
  MEMHIER_LIBRARY="$BUILD/libmemhier.so" PYTHONPATH=python timeout 120 python3 scripts/python_overhead.py \
    "$OUT/python-overhead.json" >"$LOGS/python-overhead.log" 2>&1
  say "python overhead exit $?"
  grep -E '"(host_us|per_call_us|binding_adds_host_us|binding_adds_per_call_us|variant)"' "$LOGS/python-overhead.log" |
    tee -a "$SUMMARY"
fi

if want sanitize; then
  # sanitize TOOL TEST MAX_N [TAG]: compute-sanitizer on `TEST gpu` over the cases up to MAX_N
  # elements, our rows alone (MEMHIER_TEST_OURS_ONLY: no vendor rows); TAG names a second log of
  # the same test (rows narrowed by MEMHIER_TEST_ROWS or MEMHIER_TEST_SKIP_ROWS before the call)
  sanitize() {
    local tool=$1 test=$2 max=$3 log="$LOGS/${1}_${2}${4:+_$4}.log"
    [[ -z "${MEMHIER_SANITIZE_TESTS:-}" || " $MEMHIER_SANITIZE_TESTS " == *" $test "* ]] || return 0
    stamp "compute-sanitizer $tool on $test (cases up to $max elements)"
    MEMHIER_TEST_OURS_ONLY=1 MEMHIER_TEST_MAX_N=$max MEMHIER_TEST_SEED=7 timeout 240 compute-sanitizer --tool "$tool" --error-exitcode 9 \
      "$BUILD/tests/$test" gpu >"$log" 2>&1
    say "$tool $test exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1)"
  }
  sanitize memcheck test_conv1d 4099
  sanitize racecheck test_conv1d 1021
  sanitize memcheck test_conv1d_batched 30000
  sanitize racecheck test_conv1d_batched 5000
  sanitize memcheck test_conv2d 70000
  # conv2d/fft-3pass transforms a 512 x 512 tile whatever the image: racecheck takes it to 2,000
  MEMHIER_TEST_SKIP_ROWS=conv2d/fft-3pass sanitize racecheck test_conv2d 5000
  MEMHIER_TEST_ROWS=conv2d/fft-3pass sanitize racecheck test_conv2d 2000 fft-3pass
  sanitize memcheck test_transpose 1100000
  sanitize racecheck test_transpose 1100000
  sanitize memcheck test_matmul 140000
  sanitize racecheck test_matmul 40000
  sanitize memcheck test_reduce 1100000
  sanitize racecheck test_reduce 300000
  sanitize memcheck test_histogram 310000
  sanitize racecheck test_histogram 70001
fi

# The report of this run: tables and plots (scripts/report.py) into OUT/report
for j in "$OUT"/bench.json "$OUT"/bench-merged.json; do
  if [ -f "$j" ]; then
    python3 scripts/report.py --results "$j" --outdir "$OUT/report" >>"$LOGS/report.log" 2>&1
    say "report from $(basename "$j") exit $? (OUT/report: tables.md, plots/)"
  fi
done

stamp "done"
[ -f "$LOGS/bench.log" ] && grep -vE "preparing inputs" "$LOGS/bench.log" >>"$SUMMARY"
[ -f "$LOGS/peers.log" ] && cat "$LOGS/peers.log" >>"$SUMMARY"
[ -f "$LOGS/tune.log" ] && grep -vE "preparing inputs" "$LOGS/tune.log" >>"$SUMMARY"
[ -f "$LOGS/calibrate.log" ] && cat "$LOGS/calibrate.log" >>"$SUMMARY"
tar -C "$OUT" -czf "$OUT/logs.tar.gz" logs && rm -rf "$LOGS"
cat "$SUMMARY" | tail -c 11000
