#!/usr/bin/env bash
# The README's test command. On a fresh machine it installs what is missing (Debian
# packages; numpy and scipy from PyPI, or Debian's), configures, builds, runs every ctest in
# parallel (GPU tests side by side; they skip only where no CUDA device exists). As soon as the
# library is built it builds the Python package with pip from it (no second CUDA compile) and
# runs the package's pytest suite, beside the rest of the build and ctest; once everything is
# built it installs into build/install, builds the plain-C example against that install tree
# with CMake and with pkg-config, checks the report's tables against the committed results
# (scripts/report.py --check) and auto's compiled-in rules against bench/results/*.auto.json
# (scripts/tune.py --check), and draws the report's plots (their logs are printed after
# ctest's). Where everything is present (the GPU machine, which has no network) it installs
# nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
# Each phase's end and the time so far, so that a slow phase shows in the log.
phase() { echo "test.sh: $1 done at $((SECONDS - started)) s"; }
MEMHIER_NEED_PYTHON=1 source scripts/setup.sh
phase setup

jobs=$(nproc)
cmake -S . -B build -DPython3_EXECUTABLE="$PY"
# The library first: the Python package and its tests need it alone, so they start while the
# tests, the CLI and the fuzzers link (pytest, the longest part, ends the run on the GPU machine).
cmake --build build -j "$jobs" --target memhier
phase library

# On a machine with a CUDA device and nvidia-cuda-mps-control the tests' processes share the GPU
# through an MPS server of this run's own (its pipes under build/mps, stopped at exit;
# MEMHIER_TEST_MPS=0 runs them without it). Without it each of the ~400 command-line processes
# the oracles start on a GPU makes a CUDA context of its own, one process at a time (~0.3 s each
# on the H200), and the processes take the GPU by time slices. A server that does not serve a
# first client is stopped and the tests run without it, so that no GPU test skips for want of a
# device it has.
gpu_context_made() {
  "$PY" -c 'import ctypes, sys; c = ctypes.c_void_p(); sys.exit(ctypes.CDLL(sys.argv[1]).mh_context_create(ctypes.byref(c), 0))' \
    build/libmemhier.so >/dev/null 2>&1
}
stop_mps() { echo quit | nvidia-cuda-mps-control >/dev/null 2>&1 || true; }
start_mps() {
  [ "${MEMHIER_TEST_MPS:-1}" = 1 ] && command -v nvidia-cuda-mps-control >/dev/null 2>&1 && gpu_context_made ||
    return 0
  export CUDA_MPS_PIPE_DIRECTORY="$PWD/build/mps/pipe" CUDA_MPS_LOG_DIRECTORY="$PWD/build/mps/log"
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  if nvidia-cuda-mps-control -d && gpu_context_made; then
    trap stop_mps EXIT
    # a server takes a few dozen clients a device (48 on Volta): ctest's GPU tests, pytest and
    # the oracles' command lines at 4 a time each stay below that
    export MEMHIER_ORACLE_JOBS="${MEMHIER_ORACLE_JOBS:-4}"
    echo "test.sh: the tests share the GPU through MPS"
    return 0
  fi
  stop_mps
  unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
  echo "test.sh: the MPS server served no client (build/mps/log): the tests run without MPS"
}
start_mps
install_python_package() {
  # The Python package, installed as a user installs it (`pip install .`, here into build/python
  # so that no site-packages is touched) but packaging the libmemhier.so built above
  # (MEMHIER_PREBUILT_LIBRARY) instead of compiling it again.
  # Where PyPI is reachable (CI) the build is isolated, exactly as the README's `pip install .`;
  # offline (the GPU machine) it uses the scikit-build-core already installed.
  rm -rf build/python build/pip-probe
  isolation=(--no-build-isolation)
  if "$PY" -m pip download -q --no-deps --timeout 5 --retries 0 -d build/pip-probe scikit-build-core >/dev/null 2>&1; then
    isolation=()
  fi
  "$PY" -m pip install -q --root-user-action=ignore "${isolation[@]}" --no-deps --target build/python \
    -Ccmake.define.MEMHIER_PREBUILT_LIBRARY="$PWD/build/libmemhier.so" -Cbuild-dir=build/skbuild-prebuilt .
}
install_example() {
  # The installed library, used by a plain C program: CMake package and pkg-config file.
  rm -rf build/install build/example
  cmake --install build --prefix build/install >/dev/null
  cmake -S examples -B build/example -DCMAKE_PREFIX_PATH="$PWD/build/install" >/dev/null
  cmake --build build/example -j 2
  build/example/conv1d_example
  build/example/conv1d_example_static
  pc_dir=$(dirname "$(find build/install -name memhier.pc | head -n 1)")
  cc -std=c11 -Wall -o build/example/conv1d_pkgconfig examples/conv1d_example.c \
     $(PKG_CONFIG_PATH="$pc_dir" pkg-config --cflags --libs memhier) -lm
  build/example/conv1d_pkgconfig
}
report_checks() {
  # The report: the README's and docs' measured tables must be what scripts/report.py makes of
  # the committed results (a drift names the table), and the plots must draw.
  "$PY" scripts/report.py --check
  "$PY" scripts/tune.py --check
  "$PY" scripts/report.py --outdir build/report >/dev/null
}
# The package's tests against NumPy/SciPy (CuPy and PyTorch tests run where a GPU and those
# packages are), once the package is built: beside the rest of the build and ctest (one pytest
# process: two, each on the one GPU beside ctest's, took longer than one).
package_then_pytest() {
  # in a job of its own: errexit holds inside it (a function tested with || runs without it)
  install_python_package >build/beside-ctest.log 2>&1 &
  wait $! || return 1
  echo "test.sh: package done at $((SECONDS - started)) s" >>build/beside-ctest.log
  local rc=0
  (cd python/tests && env -u MEMHIER_LIBRARY PYTHONPATH="$PWD/../../build/python" "$PY" -m pytest -q -p no:cacheprovider --durations=10 .) \
    >build/pytest.log 2>&1 || { echo "pytest: exit $?" >>build/pytest.log; rc=2; }
  echo "test.sh: pytest done at $((SECONDS - started)) s" >>build/pytest.log
  return $rc
}
rm -f build/beside-ctest.log build/pytest.log build/report-checks.log
package_then_pytest &
beside=$!

cmake --build build -j "$jobs"
phase build
# The install, the example against it and the report's checks need the whole build: beside
# ctest, each a plain command so that errexit stops the job at its first failing step (inside an
# && list bash would let every step but the last fail unseen).
(install_example; echo "test.sh: install and example done at $((SECONDS - started)) s"; report_checks) \
  >build/report-checks.log 2>&1 &
report=$!

# ctest runs $jobs tests at once, so each process's OpenMP rows take two threads that sleep when
# idle: a thread per core in every process, spinning, made the CPU tests 20-40x slower.
ctest_rc=0
(cd build && OMP_NUM_THREADS=2 OMP_WAIT_POLICY=passive ctest --output-on-failure -j "$jobs") || ctest_rc=$?
phase ctest
beside_rc=0 report_rc=0
wait "$beside" || beside_rc=$?
wait "$report" || report_rc=$?
cat build/beside-ctest.log
for log in build/report-checks.log build/pytest.log; do [ -f "$log" ] && cat "$log"; done
if [ "$ctest_rc" -ne 0 ]; then
  echo "test.sh: ctest failed (exit $ctest_rc)"
  exit 1
fi
if [ "$beside_rc" -eq 1 ]; then
  echo "test.sh: the Python package failed to build or install"
  exit 1
elif [ "$beside_rc" -ne 0 ]; then
  echo "test.sh: the package's tests failed"
  exit 1
fi
if [ "$report_rc" -ne 0 ]; then
  echo "test.sh: the install, the example or the report's checks failed"
  exit 1
fi
echo "all tests passed in $((SECONDS - started)) s"
