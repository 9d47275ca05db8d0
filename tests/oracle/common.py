"""What the CLI oracles share: running memhier, collecting failures, the work folder, and the
references and bound of tests/reference.py.

Cases run side by side (`submit`): each `memhier` process on a GPU spends most of its time
starting CUDA, so the oracles keep MEMHIER_ORACLE_JOBS of them in flight (the cores, at most 8).
A submitted case draws its random inputs before it is submitted (the generator is not shared
between threads) and writes its files into a folder of its own."""
import glob
import os
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import reference  # noqa: E402  (tests/reference.py: the float64 references, one home)

CLI, WORK = sys.argv[1], sys.argv[2]
os.makedirs(WORK, exist_ok=True)
failures = []
_lock = threading.Lock()
JOBS = int(os.environ.get("MEMHIER_ORACLE_JOBS", min(8, os.cpu_count() or 1)))
_pool = ThreadPoolExecutor(max_workers=JOBS)
_pending = []


def fail(msg):
    with _lock:
        failures.append(msg)
        print("FAIL:", msg, flush=True)


def submit(case, *args, **kwargs):
    """Runs case(*args, **kwargs) beside the others; finish() waits for them all (an exception in
    one fails the oracle with its traceback)."""
    _pending.append(_pool.submit(case, *args, **kwargs))


def memhier(*args, env=None):
    return subprocess.run([CLI, *args], capture_output=True, text=True, env=env)


def memhier_on_cpu(*args):
    """`memhier *args` for a call on the CPU backend, which must start no CUDA: any CUDA runtime
    call loads the driver, and a CPU call's buffer check would then start it (a fifth of a second
    a process on a GPU machine). The dynamic loader's log (LD_DEBUG=libs, to a file of the call's
    own) shows whether libcuda was looked for, on a machine with a driver or without one."""
    log = tempfile.mktemp(prefix="ld-", dir=WORK)
    r = memhier(*args, env=dict(os.environ, LD_DEBUG="libs", LD_DEBUG_OUTPUT=log))
    for name in glob.glob(log + ".*"):
        with open(name) as f:
            looked = "libcuda" in f.read()
        os.remove(name)
        if looked:
            fail(f"`memhier {' '.join(os.path.basename(a) for a in args)}`: a CPU call loaded CUDA's driver")
    return r


def path(name):
    return os.path.join(WORK, name)


def check_refused(cases, out, *extra):
    """Each (args, phrase) of cases: `memhier *args *extra` exits non-zero with the phrase in its
    stderr and leaves no file at out (removed before each)."""
    for args, phrase in cases:
        if os.path.exists(out):
            os.remove(out)
        r = memhier(*args, *extra)
        what = " ".join(os.path.basename(a) if os.path.isabs(a) else a for a in args)
        if r.returncode == 0 or phrase not in r.stderr:
            fail(f"`memhier {what}`: exit {r.returncode}, stderr {r.stderr.strip()!r} (wanted {phrase!r})")
        if os.path.exists(out):
            fail(f"`memhier {what}` left its output behind")


def run_op(op, inputs, options=(), variant=None, device=None):
    """`memhier run op` on arrays: inputs is [(flag, file name, array)], each saved in a folder of
    the call's own in the work folder. Returns the finished process and the output's path."""
    args = ["run", op]
    folder = tempfile.mkdtemp(prefix=op + "-", dir=WORK)
    for flag, name, array in inputs:
        np.save(os.path.join(folder, name), array)
        args += [flag, os.path.join(folder, name)]
    out = os.path.join(folder, "y.npy")
    args += [*options, "--out", out]
    args += ["--variant", variant] if variant else []
    args += ["--device", device] if device else []
    return (memhier_on_cpu if device == "cpu" else memhier)(*args), out


def check_named(what, r, op, variant=None):
    """`memhier run op`'s summary line names the variant that ran: the one asked for, or the one
    auto picked from the registry (never "op/auto")."""
    ran = r.stdout.split(":", 1)[0].strip()
    names = {name for name, _ in registry(op)}
    wanted = None if variant in (None, "auto") else variant if "/" in variant else f"{op}/{variant}"
    if ran not in names or (wanted and ran != wanted):
        fail(f"{what}: the summary names {ran!r}; expected {wanted or 'a variant of ' + op}")


def check_close(what, y, ref, mag, taps, tf32=False):
    """y (float32) against a float64 reference, within the bound for sums of `taps` products:
    1e-5 (1 + log2 taps) relative to the sum of |terms| (mag) plus its mean; 2^-10 more for a
    reduced-precision (TF32) variant, whose operands are rounded to 10-bit mantissas."""
    if y.dtype != np.float32 or y.shape != ref.shape:
        return fail(f"{what}: got {y.dtype} {y.shape}, scipy gives {ref.shape}")
    worst = reference.worst_violation(y, ref, mag, taps, tf32)
    if worst:
        i, got, want, bound = worst
        at = ", ".join(str(int(v)) for v in i)
        fail(f"{what}: y[{at}] = {got!r}, scipy {want!r} (bound {bound:.3g})")


def on_gpu_too(device, i):
    """Whether case i of a sweep also runs on the GPU: every CLI process there starts CUDA (about
    0.3 s, one process at a time: the gate's ctest phase on the H200 is about the oracles' GPU
    processes times that), and the C ladder tests (test_<op> gpu) sweep each row's shapes in one
    process, so on the GPU the oracles take every fourth case of a sweep; the CPU all."""
    return device == "cpu" or i % 4 == 0


def has_gpu():
    return memhier("info", "--device", "0").returncode == 0


def registry(op, reduced=False):
    """(name, backend) of every variant of op, as `memhier list` prints them; with reduced,
    (name, backend, whether its summary says REDUCED PRECISION)."""
    r = memhier("list", op)
    if r.returncode != 0:
        fail(f"memhier list {op}: exit {r.returncode}")
        return []
    lines = [line for line in r.stdout.splitlines()[1:] if line.strip()]
    if reduced:
        return [(*line.split()[:2], "REDUCED PRECISION" in line) for line in lines]
    return [tuple(line.split()[:2]) for line in lines]


def finish():
    for case in _pending:
        case.result()
    _pool.shutdown()
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0
