#!/usr/bin/env python3
"""Start-up cost of the CLI and the Python package: `memhier --version` wall time and peak
resident memory, and `import memhier` (time inside the interpreter, and its peak resident
memory), each the median of fresh processes.

usage: startup.py MEMHIER_CLI [RUNS]   (import memhier as the environment finds it)"""
import json
import statistics
import subprocess
import sys
import time


def cli(path, runs):
    """Wall time in this process; peak resident memory from /usr/bin/time (a forked child's own
    maximum would count the Python it was forked from)."""
    times, rss = [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([path, "--version"], check=True, capture_output=True)
        times.append(time.perf_counter() - t0)
        r = subprocess.run(["/usr/bin/time", "-f", "%M", path, "--version"], check=True, capture_output=True, text=True)
        rss.append(int(r.stderr.split()[-1]))
    return {"ms": round(1e3 * statistics.median(times), 2), "rss_mb": round(statistics.median(rss) / 1024, 1)}


IMPORT = ("import time, resource; t0 = time.perf_counter(); import memhier; t = time.perf_counter() - t0; "
          "print(t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)")
BARE = "import resource; print(0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"


def python(code, runs):
    times, rss = [], []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.split()
        times.append(float(out[0]))
        rss.append(int(out[1]))
    return {"ms": round(1e3 * statistics.median(times), 2), "rss_mb": round(statistics.median(rss) / 1024, 1)}


def main():
    path = sys.argv[1]
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    out = {"version": cli(path, runs), "import_memhier": python(IMPORT, runs), "bare_python": python(BARE, runs)}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
