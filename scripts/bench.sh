#!/usr/bin/env bash
# The README's main job: builds if needed, then the headline workloads of every op on GPU 0
# (the CPU backend where there is no GPU): auto's pick beside the vendor rows, printed as each
# is measured; then the peers (CuPy, PyTorch where installed) on the same workloads, the time per
# call of a few functions on small and large CuPy images beside the peers, and a closing table.
# Writes bench.json.
#   bash scripts/bench.sh --all     every row of every op on the default workloads (the sweep
#                                   that bench/results holds; about ten minutes on an H100)
#   bash scripts/bench.sh ARGS      memhier bench ARGS (e.g. conv1d --n 1000000 --k 2047)
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
# Each phase's end and the time so far (on standard error: --json - keeps standard output).
phase() { echo "bench.sh: $1 done at $((SECONDS - started)) s" >&2; }
source scripts/setup.sh
cmake -S . -B build >/dev/null
cmake --build build -j "$(nproc)" --target memhier_cli memhier
phase build
if [ "${1:-}" = --all ]; then
  shift
  exec build/memhier bench --json bench.json "$@"
elif [ $# -gt 0 ]; then
  exec build/memhier bench --json bench.json "$@"
fi
build/memhier bench --headline --json bench.json
phase headline
if ! PY=$(command -v python3); then
  echo "python3 not found: no peers and no closing table (bench.json has the rows)"
  exit 0
fi
if grep -q '"backend": "cuda"' bench.json; then
  echo
  echo "peers on the same workloads:"
  "$PY" scripts/peers.py --rows-only bench.json || echo "the peers failed: the table has memhier's rows alone"
  phase peers
  if "$PY" -c "import cupy" 2>/dev/null; then
    echo
    echo "the everyday call: µs a call in a loop (host: until the last returns / until the GPU finishes) on CuPy"
    echo "images beside the peers (scripts/latency.py --quick;"
    echo "every function at every size: scripts/latency.py):"
    MEMHIER_LIBRARY="$PWD/build/libmemhier.so" PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}" "$PY" scripts/latency.py --quick ||
      echo "the latency sweep failed"
    phase latency
  fi
fi
"$PY" scripts/summary.py bench.json
phase summary
