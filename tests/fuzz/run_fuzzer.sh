#!/usr/bin/env bash
# ctest entry: runs one libFuzzer binary for MEMHIER_FUZZ_SECONDS (default 30) over a
# scratch corpus seeded from the committed one; further arguments go to libFuzzer. A crash,
# leak or over-limit allocation fails the test and says how to reproduce it.
set -uo pipefail
fuzzer=$1 seeds=$2 work=$3
shift 3
secs=${MEMHIER_FUZZ_SECONDS:-30}
rm -rf "$work" && mkdir -p "$work/corpus" "$work/artifacts"
"$fuzzer" -max_total_time="$secs" -timeout=10 -max_len=4096 -rss_limit_mb=2048 -malloc_limit_mb=1024 -print_final_stats=1 \
  -artifact_prefix="$work/artifacts/" "$@" "$work/corpus" "$seeds" 2>"$work/log"
rc=$?
grep -E "^(#[0-9]+.*DONE|stat::number_of_executed_units|stat::peak_rss_mb)|cov:" "$work/log" | tail -n 3
if [ $rc -ne 0 ]; then
  tail -n 60 "$work/log"
  for a in "$work"/artifacts/*; do
    [ -e "$a" ] && echo "FAILED: reproduce with: $fuzzer $a   (bytes: $(od -An -tx1 -N64 "$a" | tr -s ' \n' ' '))"
  done
  exit 1
fi
echo "$(basename "$fuzzer"): ${secs}s, no crash"
