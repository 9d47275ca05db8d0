#!/usr/bin/env bash
# The README's main job: builds if needed, then `memhier bench` on GPU 0 (the CPU backend
# where there is no GPU), printing each row as it is measured and writing bench.json.
# Extra arguments go to memhier bench (e.g. conv1d --n 1000000 --k 2047).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
cmake -S . -B build >/dev/null
cmake --build build -j "$(nproc)" --target memhier_cli
exec build/memhier bench --json bench.json "$@"
