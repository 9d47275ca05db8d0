#!/usr/bin/env bash
# scipy's own filter tests (test_filters.py) through memhier.ndimage (python/tests/scipy_swap.py),
# on NumPy arrays (the CPU backend) and, where CuPy is installed, on CuPy arrays (scipy's array-API
# mode with the cupy backend: each test's xp is CuPy). Prints each run's classes and the tests that
# failed without a refusal; writes OUTDIR/scipy-suite-{numpy,cupy}.json (issue 65's count).
# usage: MEMHIER_LIBRARY=$PWD/build/libmemhier.so lab/scripts/scipy_suite.sh OUTDIR
set -u
out=${1:?usage: lab/scripts/scipy_suite.sh OUTDIR}
here=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
export PYTHONPATH="$here/python/tests:$here/python:${PYTHONPATH:-}" MEMHIER_SCIPY_SWAP_NO_HYPOTHESIS=1
run() { # name, then env assignments
  local name=$1; shift
  (cd "$out" && env "$@" MEMHIER_SCIPY_SWAP_OUT="$out/scipy-suite-$name.json" python3 -m pytest -q \
    -p no:cacheprovider -p scipy_swap --tb=no --pyargs scipy.ndimage.tests.test_filters 2>&1 | tail -1)
  python3 - "$out/scipy-suite-$name.json" "$name" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(sys.argv[2], d["counts"])
for test, (kind, message) in d["tests"].items():
    if kind == "failed":
        print("  failed:", test, message[:160])
PY
}
run numpy SCIPY_ARRAY_API=
python3 -c "import cupy" 2>/dev/null && run cupy 'SCIPY_ARRAY_API=["cupy"]'
