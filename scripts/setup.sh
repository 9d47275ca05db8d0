# Sourced by test.sh and bench.sh: installs what a fresh machine lacks (Debian packages;
# numpy and scipy when MEMHIER_NEED_PYTHON=1) and installs nothing where all is present.
# Sets PY to a python3 that has numpy and scipy (when asked for).
export PATH="/usr/local/cuda/bin:$PATH"

sudo_if_needed() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
apt_install() {
  echo "installing Debian packages: $*"
  # short timeouts: on a machine without a package registry (the GPU machine) this fails fast
  sudo_if_needed apt-get update -qq -o Acquire::Retries=0 -o Acquire::http::Timeout=5 -o Acquire::https::Timeout=5
  sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"
}

missing=()
command -v cmake >/dev/null || missing+=(cmake)
command -v g++ >/dev/null || missing+=(g++)
command -v make >/dev/null || missing+=(make)
command -v pkg-config >/dev/null || missing+=(pkg-config)
command -v git >/dev/null || missing+=(git)
if ((${#missing[@]})); then apt_install "${missing[@]}"; fi
command -v nvcc >/dev/null || { echo "memhier needs the CUDA toolkit (nvcc) to build" >&2; exit 1; }

# Optional: libpng and libjpeg(-turbo) (PNG and JPEG images for `memhier filter`) and clang with libFuzzer's runtime (the
# parser fuzzers). Installed where missing; a machine without a package registry (the GPU
# machine) builds without what it cannot get, and says so.
optional=()
[ -e /usr/include/png.h ] || optional+=(libpng-dev)
[ -e /usr/include/jpeglib.h ] || optional+=(libjpeg-dev)
has_libfuzzer() {
  command -v clang >/dev/null &&
    printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }\n' |
      clang -x c -fsanitize=fuzzer,address,undefined -o /dev/null - 2>/dev/null
}
has_libfuzzer || optional+=(clang libclang-rt-dev)
if ((${#optional[@]})) && ! apt_install "${optional[@]}"; then
  echo "warning: could not install ${optional[*]}: building without them" >&2
fi

if [ "${MEMHIER_NEED_PYTHON:-0}" = 1 ]; then
  # numpy and scipy for the oracles; pytest and scikit-build-core for the Python package
  # (python/, built by `pip install .`); matplotlib for the report's plots (scripts/report.py)
  has_numpy() { "$1" -c 'import numpy, scipy, pytest, scikit_build_core, matplotlib' 2>/dev/null; }
  PY=$(command -v python3 || true)
  if [ -z "$PY" ] || ! has_numpy "$PY"; then
    if [ -n "$PY" ] && "$PY" -m pip install -q numpy scipy pytest scikit-build-core matplotlib 2>/dev/null && has_numpy "$PY"; then
      :
    else
      apt_install python3 python3-numpy python3-scipy python3-pytest python3-pip python3-matplotlib
      PY=/usr/bin/python3
      has_numpy "$PY" || "$PY" -m pip install -q --break-system-packages scikit-build-core || true
    fi
  fi
  has_numpy "$PY" || { echo "no python3 with numpy, scipy, pytest, scikit-build-core and matplotlib could be set up" >&2; exit 1; }
  # dask for memhier.dask (python/requirements-dask.txt), where a package index is reachable
  # (the GPU machine has none: its Dask tests skip unless the wheels are carried there)
  if ! "$PY" -c 'import dask.array, distributed' 2>/dev/null; then
    "$PY" -m pip install -q -r python/requirements-dask.txt 2>/dev/null ||
      "$PY" -m pip install -q "dask[array]==2026.7.1" "distributed==2026.7.1" 2>/dev/null ||
      echo "warning: dask could not be installed: memhier.dask's tests will be skipped" >&2
  fi
fi
