#!/usr/bin/env bash
# The GPU gate, in one call on a GPU machine from a clean checkout: the README's test command
# (build included), compute-sanitizer memcheck and racecheck on the rows a change touched, then
# the README's main job (benchmark, peers, summary). CI has no GPU, so this is how a change to
# CUDA code, to C code the GPU rows call or to the Python GPU path is checked before it lands.
# Writes test.log, sanitize.log (every run's output; each run's alone in sanitize-TOOL-OP.log) and
# bench.log (and bench.json) into OUTDIR; prints each part's closing lines and wall time, and each
# sanitizer run's exit status and its own summary (a run the timeout cut has none).
# usage: scripts/gpu-gate.sh OUTDIR [ROWS]
#   ROWS: comma-separated variant names for the sanitizer (default conv2d/walk,conv2d/basic), run
#   through their ladder tests (test_<op> gpu) on small cases (MEMHIER_TEST_MAX_N: 40000 elements
#   for memcheck, 12000 for racecheck), each run cut at MEMHIER_SANITIZE_TIMEOUT seconds (default
#   240; a cut run counts as a failure).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/gpu-gate.sh OUTDIR [ROWS]}
rows=${2:-conv2d/walk,conv2d/basic}
mkdir -p "$out"
started=$SECONDS
elapsed() { echo "$((SECONDS - started)) s"; }

bash scripts/test.sh >"$out/test.log" 2>&1
test_rc=$?
echo "== test.sh: exit $test_rc at $(elapsed)"
grep -E "^test.sh:|tests passed|tests failed|passed|failed" "$out/test.log" | tail -8

sanitize_rc=0
: >"$out/sanitize.log"
for op in $(echo "$rows" | tr ',' '\n' | cut -d/ -f1 | sort -u); do
  for tool in memcheck racecheck; do
    # racecheck runs ~10x slower than memcheck: smaller cases, the same rows and branches
    max_n=40000
    [ "$tool" = racecheck ] && max_n=12000
    run_log="$out/sanitize-$tool-$op.log"
    MEMHIER_TEST_ROWS=$rows MEMHIER_TEST_MAX_N=$max_n MEMHIER_TEST_OURS_ONLY=1 \
      timeout "${MEMHIER_SANITIZE_TIMEOUT:-240}" compute-sanitizer --tool "$tool" --error-exitcode 9 \
      "build/tests/test_$op" gpu >"$run_log" 2>&1
    run_rc=$?
    [ $run_rc -ne 0 ] && sanitize_rc=1
    cat "$run_log" >>"$out/sanitize.log"
    # this run's own summary: a run cut by the timeout prints none
    summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$run_log" | tail -1)
    [ $run_rc -eq 124 ] && summary="timed out after ${MEMHIER_SANITIZE_TIMEOUT:-240} s, no summary"
    echo "== compute-sanitizer $tool test_$op gpu ($rows): exit $run_rc, ${summary:-no summary} at $(elapsed)"
  done
done

bash scripts/bench.sh >"$out/bench.log" 2>&1
bench_rc=$?
cp bench.json "$out/" 2>/dev/null
echo "== bench.sh: exit $bench_rc at $(elapsed)"
grep -E "^bench.sh:" "$out/bench.log"
tail -25 "$out/bench.log"
exit $((test_rc || sanitize_rc || bench_rc))
