"""What the CLI oracles share: running memhier, collecting failures, the work folder."""
import os
import subprocess
import sys

CLI, WORK = sys.argv[1], sys.argv[2]
os.makedirs(WORK, exist_ok=True)
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg, flush=True)


def memhier(*args):
    return subprocess.run([CLI, *args], capture_output=True, text=True)


def path(name):
    return os.path.join(WORK, name)


def has_gpu():
    return memhier("info", "--device", "0").returncode == 0


def registry(op):
    """(name, backend) of every variant of op, as `memhier list` prints them."""
    r = memhier("list", op)
    if r.returncode != 0:
        fail(f"memhier list {op}: exit {r.returncode}")
        return []
    return [tuple(line.split()[:2]) for line in r.stdout.splitlines()[1:] if line.strip()]


def finish():
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0
