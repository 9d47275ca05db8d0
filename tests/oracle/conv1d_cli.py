#!/usr/bin/env python3
"""The oracle for conv1d: memhier's CLI on .npy files against scipy.signal.correlate.

usage: conv1d_cli.py MEMHIER_BINARY WORK_DIR

- `memhier run conv1d` in every padding, with `auto` on every case and with each variant of
  the registry that this machine can run, compared with scipy in float64;
- `--mode` (scipy.ndimage.correlate1d's boundary modes, cval, origin): every mode on short and
  long masks, masks longer than the signal, batches; the rows that take modes against scipy,
  the others refusing with the reason;
- refusals: malformed files, wrong dtypes and shapes, bad sizes and names each give a
  non-zero exit, a message naming what is wrong, and no output file;
- `memhier bench` on a small workload writes the JSON DESIGN.md describes.

scipy's 'same' centres an even-length mask one sample earlier than PyTorch's padding='same'
(anchor (k-1)//2), which memhier follows: for even k the expected 'same' output is
correlate(x, m, 'full')[k//2 : k//2 + n]; for odd k it is scipy's 'same' itself.
"""
import io
import json
import os
import subprocess
import sys

import numpy as np
from common import CLI, WORK, check_close, fail, finish, has_gpu, memhier, path, reference, registry, run_op, submit, on_gpu_too


def expected(x, m, pad):
    """Reference output and the sum of |terms| behind each output, both float64."""
    return reference.correlate1d(x, m, pad)


def check_run(x, m, pad, variant, device=None):
    r, out = run_op("conv1d", [("--in", "x.npy", x), ("--mask", "m.npy", m)], ["--pad", pad], variant, device)
    what = f"{variant or 'auto'} n={len(x)} k={len(m)} pad={pad}"
    if r.returncode != 0:
        return fail(f"{what}: exit {r.returncode}: {r.stderr.strip()}")
    check_close(what, np.load(out), *expected(x, m, pad), len(m))


def main():
    rng = np.random.default_rng(int.from_bytes(os.urandom(4), "little"))
    gpu = has_gpu()
    print("GPU present:", gpu, flush=True)

    cases = [(1, 1), (10, 3), (10, 4), (257, 16), (1000, 31), (4099, 2047), (5, 12), (3, 8)]
    for i, (n, k) in enumerate(cases):
        x = rng.uniform(-1, 1, n).astype(np.float32)
        m = rng.uniform(-1, 1, k).astype(np.float32)
        for j, pad in enumerate(("valid", "same", "full")):
            if pad == "valid" and k > n:
                continue
            if on_gpu_too(None, i + j):
                submit(check_run, x, m, pad, None)
            submit(check_run, x, m, pad, None, device="cpu")

    # every variant this machine can run, on a few shapes each
    x = rng.uniform(-1, 1, 3001).astype(np.float32)
    for name, backend in registry("conv1d"):
        if backend != "cpu" and not gpu:
            continue
        device = "cpu" if backend == "cpu" else "0"
        for i, (k, pad) in enumerate(((31, "valid"), (64, "same"), (5, "full"), (1500, "same"))):
            if on_gpu_too(device, i):
                submit(check_run, x, rng.uniform(-1, 1, k).astype(np.float32), pad, name, device)

    check_batched(rng, gpu)
    check_modes(rng, gpu)
    check_refusals(rng)
    check_bench()
    check_results_file_kept()
    check_output_paths()
    check_bench_sizes_named()
    check_list()
    return finish()


def check_batched(rng, gpu):
    """A 2-D --in (batch x n) with one 1-D mask or a 2-D mask per signal, every padding."""
    for batch, n, k in ((3, 500, 31), (5, 2000, 300), (1, 77, 77)):
        x = rng.uniform(-1, 1, (batch, n)).astype(np.float32)
        for per_signal in (False, True):
            m = rng.uniform(-1, 1, (batch, k) if per_signal else k).astype(np.float32)
            for i, pad in enumerate(("valid", "same", "full")):
                for device in (("cpu", "0") if gpu else ("cpu",)):
                    if on_gpu_too(device, i + per_signal):
                        submit(check_batched_run, x, m, per_signal, pad, device)


def check_batched_run(x, m, per_signal, pad, device):
    (batch, n), k = x.shape, m.shape[-1]
    r, out = run_op("conv1d", [("--in", "bx.npy", x), ("--mask", "bm.npy", m)], ["--pad", pad], None, device)
    what = f"batched {batch}x{n} k={k} per_signal={per_signal} pad={pad} device={device}"
    if r.returncode != 0:
        return fail(f"{what}: exit {r.returncode}: {r.stderr.strip()}")
    refs = [expected(x[b], m[b] if per_signal else m, pad) for b in range(batch)]
    check_close(what, np.load(out), np.stack([e[0] for e in refs]), np.stack([e[1] for e in refs]), k)


def check_mode_run(x, m, options, device, ref, mag, what):
    r, out = run_op("conv1d", [("--in", "x.npy", x), ("--mask", "m.npy", m)], options, None, device)
    if r.returncode != 0:
        return fail(f"{what}: exit {r.returncode}: {r.stderr.strip()}")
    check_close(what, np.load(out), ref, mag, m.size)


def check_modes(rng, gpu):
    """--mode M [--cval C] [--origin O]: scipy.ndimage.correlate1d along the last axis."""
    devices = ("cpu", "0") if gpu else ("cpu",)
    cases = [(1000, 31, "reflect", 0.0, 0), (1000, 300, "mirror", 0.0, -150), (777, 4, "nearest", 0.0, 1),
             (4099, 2047, "wrap", 0.0, 0), (20011, 5001, "constant", -2.5, 2), (5, 12, "reflect", 0.0, 0),
             (3, 8, "mirror", 0.0, 3), (1, 9, "wrap", 0.0, -4), ((3, 2000), 129, "reflect", 0.0, 5)]
    for shape, k, mode, cval, origin in cases:
        x = rng.uniform(-1, 1, shape).astype(np.float32)
        m = rng.uniform(-1, 1, k).astype(np.float32)
        ref, mag = reference.correlate1d_mode(x, m, mode, cval, origin)
        options = ["--mode", mode, "--cval", repr(cval), "--origin", str(origin)]
        for device in devices:
            submit(check_mode_run, x, m, options, device, ref, mag, f"shape={shape} k={k} mode={mode} cval={cval} "
                   f"origin={origin} device={device}")
    # each variant: the ones whose loaders apply modes compute, the others refuse with the reason
    x = rng.uniform(-1, 1, 3001).astype(np.float32)
    m = rng.uniform(-1, 1, 301).astype(np.float32)
    ref, mag = reference.correlate1d_mode(x, m, "reflect")
    takes = {"conv1d/cpu-reference", "conv1d/cpu-omp", "conv1d/regtile", "conv1d/fft-fused", "conv1d/fft-os"}
    for name, backend in registry("conv1d"):
        if backend != "cpu" and not gpu:
            continue
        r, out = run_op("conv1d", [("--in", "x.npy", x), ("--mask", "m.npy", m)], ["--mode", "reflect"], name,
                        "cpu" if backend == "cpu" else "0")
        if name in takes and r.returncode != 0:
            fail(f"{name} --mode reflect: exit {r.returncode}: {r.stderr.strip()}")
        elif name in takes:
            check_close(f"{name} --mode reflect", np.load(out), ref, mag, m.size)
        elif r.returncode != 1 or "pads with zeros only" not in r.stderr:
            fail(f"{name} --mode reflect: exit {r.returncode}, {r.stderr.strip()!r}: a refusal with the reason expected")
    # a NaN constant: NaN exactly where the window meets the border (the FFT rows refuse it)
    x = rng.uniform(-1, 1, 20000).astype(np.float32)
    m = rng.uniform(-1, 1, 3000).astype(np.float32)
    for device in devices:
        r, out = run_op("conv1d", [("--in", "x.npy", x), ("--mask", "m.npy", m)], ["--mode", "constant", "--cval",
                                                                                   "nan"], None, device)
        y = np.load(out) if r.returncode == 0 else None
        want = np.zeros(x.size, bool)
        want[:1500], want[x.size - 1499:] = True, True
        if y is None or not np.array_equal(np.isnan(y), want):
            fail(f"--cval nan on {device}: exit {r.returncode} {r.stderr.strip()}; NaN where the window meets the "
                 "border expected, finite elsewhere")
    # explain: the bordered call's candidates (a GPU's order skips the rows that pad with zeros only)
    for device in devices:
        r = memhier("explain", "conv1d", "--n", "100000", "--k", "31", "--mode", "reflect", "--device", device)
        ran = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ""
        if r.returncode != 0 or "mode = reflect" not in r.stdout or ran.split()[-1:] == ["conv1d/naive"]:
            fail(f"explain conv1d --mode reflect on {device}: exit {r.returncode}, {r.stdout!r} {r.stderr!r}")


def write_raw(name, data):
    with open(path(name), "wb") as f:
        f.write(data)
    return path(name)


def check_refusals(rng):
    good = path("good.npy")
    np.save(good, rng.uniform(-1, 1, 100).astype(np.float32))
    mask = path("mask.npy")
    np.save(mask, rng.uniform(-1, 1, 5).astype(np.float32))
    raw = open(good, "rb").read()
    f64 = path("f64.npy")
    np.save(f64, np.zeros(10))
    three_d = path("three_d.npy")
    np.save(three_d, np.zeros((2, 4, 4), np.float32))
    masks = path("masks.npy")
    np.save(masks, np.zeros((3, 5), np.float32))
    fortran = path("fortran.npy")
    np.save(fortran, np.asfortranarray(np.zeros((4, 3), np.float32)))
    empty = path("empty.npy")
    np.save(empty, np.zeros(0, np.float32))
    long_mask = path("long_mask.npy")
    np.save(long_mask, np.ones(200, np.float32))
    bad_magic = write_raw("bad_magic.npy", b"PK\x03\x04" + raw[4:])
    truncated = write_raw("truncated.npy", raw[:-7])
    version = write_raw("version.npy", raw[:6] + b"\x09\x00" + raw[8:])
    out = path("refused_out.npy")

    def run(args, phrase):
        return ["run", "conv1d", *args, "--out", out], phrase

    cases = [
        run(["--in", path("missing.npy"), "--mask", mask], "No such file"),
        run(["--in", bad_magic, "--mask", mask], "bad magic"),
        run(["--in", truncated, "--mask", mask], "truncated data"),
        run(["--in", version, "--mask", mask], "unknown format version 9.0"),
        run(["--in", f64, "--mask", mask], "1-D or 2-D float32 (<f4) array; found <f8"),
        run(["--in", three_d, "--mask", mask], "1-D or 2-D float32"),
        run(["--in", good, "--mask", masks], "one mask per signal needs a 2-D --in of 3 signals"),
        run(["--in", fortran, "--mask", mask], "Fortran order"),
        run(["--in", good, "--mask", empty], "k = 0"),
        run(["--in", good, "--mask", long_mask], "k = 200 is longer than n = 100"),
        run(["--in", good, "--mask", mask, "--variant", "nope"], "variant = 'nope'"),
        run(["--in", good, "--mask", mask, "--pad", "diagonal"], "--pad 'diagonal'"),
        run(["--in", good, "--mask", mask, "--mode", "symmetric"], "--mode 'symmetric'"),
        run(["--in", good, "--mask", mask, "--mode", "reflect", "--pad", "same"], "give one"),
        run(["--in", good, "--mask", mask, "--origin", "1"], "--origin needs --mode"),
        run(["--in", good, "--mask", mask, "--mode", "wrap", "--origin", "3"], "origin = 3: a 5-tap mask takes"),
        run(["--in", good, "--mask", mask, "--mode", "constant", "--cval", "x"], "--cval 'x'"),
        (["explain", "conv1d", "--n", "100", "--k", "5", "--pad", "same", "--mode", "wrap"], "give one"),
        run(["--in", good, "--mask", mask, "--device", "77"], "device 77"),
        run(["--in", good, "--mask", mask, "--device", "gpu"], "--device 'gpu'"),
        (["run", "conv1d", "--in", good, "--mask", mask], "needs --in, --mask and --out"),
        (["run", "conv1d", "--in", good, "--mask", mask, "--out", path("no/such/dir/y.npy")], "cannot create"),
        (["run", "sort", "--in", good], "unknown op 'sort'"),
        (["frobnicate"], "unknown command 'frobnicate'"),
        (["bench", "conv1d", "--n", "0"], "--n '0'"),
        (["bench", "conv1d", "--reps", "3"], "from 20 to 100000"),
        (["bench", "conv1d", "--device", "cpu", "--reps", "2147483648"], "from 20 to 100000"),
        (["bench", "reduce", "--device", "cpu", "--n", "4611686018427387905"], "at most 68719476736"),
        (["bench", "conv1d", "--device", "cpu", "--n", "4611686018427387905", "--k", "1"], "at most 68719476736"),
        (["bench", "histogram", "--device", "cpu", "--n", "18446744073709551615"], "at most 68719476736"),
        (["bench", "matmul", "--device", "cpu", "--rows", "4194304", "--k", "4194304"], "more than 68719476736"),
        (["bench", "conv1d", "--device", "cpu", "--variants", "nope"], "'nope' matches no variant"),
        (["bench", "conv1d", "--device", "cpu", "--configs", "nope"], "'nope' matches no tuning configuration"),
        (["bench", "matmul", "--device", "cpu", "--n", "4294967296"], "operand is more than 68719476736"),
        (["bench", "conv1d", "--device", "cpu", "--n", " -1"], "--n ' -1': expected a positive whole number"),
        (["bench", "conv1d", "--device", "cpu", "--n", "100", "--n", "200"], "--n given twice"),
        (["bench", "--device", "7"], "device 7"),
        (["run", "conv1d", "--in", good, "--in", good, "--mask", mask, "--out", out], "--in given twice"),
        (["run", "nope", "--help"], "unknown op 'nope'"),
    ]
    for args, phrase in cases:
        if os.path.exists(out):
            os.remove(out)
        r = memhier(*args)
        what = " ".join(a if not a.startswith(WORK) else os.path.basename(a) for a in args)
        if r.returncode == 0:
            fail(f"`memhier {what}` succeeded; it should refuse")
        elif phrase not in r.stderr:
            fail(f"`memhier {what}`: stderr {r.stderr.strip()!r} lacks {phrase!r}")
        if os.path.exists(out):
            fail(f"`memhier {what}` left {out} behind")


def check_results_file_kept():
    """A bench that measures nothing never replaces the results file it was given."""
    keep = path("keep.json")
    open(keep, "w").write('{"rows": ["kept"]}')
    r = memhier("bench", "reduce", "--device", "cpu", "--variants", "nope", "--json", keep)
    if r.returncode == 0 or open(keep).read() != '{"rows": ["kept"]}':
        fail(f"bench --variants nope --json: exit {r.returncode}, the file now holds {open(keep).read()[:80]!r}")


def check_bench_sizes_named():
    """A workload whose sizes give no output fails its setup naming them (not a NULL buffer)."""
    for args, phrase in ((["bench", "conv1d", "--n", "10", "--k", "20"], "k = 20 is longer than n = 10"),
                         (["bench", "conv2d", "--rows", "10", "--cols", "10", "--krows", "20", "--kcols", "20",
                           "--pad", "valid"], "a 20 x 20 filter on a 10 x 10 image with pad=valid gives no output")):
        r = memhier(*args, "--device", "cpu")
        if r.returncode == 0 or phrase not in r.stdout or "is NULL" in r.stdout:
            fail(f"memhier {' '.join(args)}: exit {r.returncode}, {r.stdout[-300:]!r} lacks {phrase!r}")


def check_output_paths():
    """--json - writes the JSON alone to standard output; a symbolic link is written through and
    the target keeps its mode."""
    r = memhier("bench", "conv1d", "--n", "1000", "--k", "3", "--device", "cpu", "--variants", "cpu-reference",
                "--json", "-")
    if r.returncode != 0 or json.loads(r.stdout).get("rows", [{}])[0].get("variant") != "conv1d/cpu-reference":
        fail(f"bench --json -: exit {r.returncode}, stdout {r.stdout[:200]!r}")
    target, link = path("target.npy"), path("link.npy")
    for p in (target, link):
        if os.path.lexists(p):
            os.remove(p)
    open(target, "wb").write(b"old")
    os.chmod(target, 0o600)
    os.symlink("target.npy", link)
    x, m = path("ox.npy"), path("om.npy")
    np.save(x, np.arange(10, dtype=np.float32)), np.save(m, np.ones(3, np.float32))
    r = memhier("run", "conv1d", "--device", "cpu", "--in", x, "--mask", m, "--out", link)
    if r.returncode != 0 or not os.path.islink(link) or os.stat(target).st_mode & 0o777 != 0o600:
        fail(f"run --out through a link: exit {r.returncode} {r.stderr}; link kept {os.path.islink(link)}, "
             f"mode {oct(os.stat(target).st_mode & 0o777)}")
    elif not np.array_equal(np.load(target), np.convolve(np.arange(10), np.ones(3), "valid").astype(np.float32)):
        fail("run --out through a link: wrong content")
    # --out -: the .npy alone on standard output (the summary line goes to standard error)
    r = subprocess.run([CLI, "run", "conv1d", "--device", "cpu", "--in", x, "--mask", m, "--out", "-"],
                       capture_output=True)
    got = np.load(io.BytesIO(r.stdout)) if r.returncode == 0 and r.stdout.startswith(b"\x93NUMPY") else None
    if got is None or not np.array_equal(got, np.load(target)) or b"conv1d/cpu-omp" not in r.stderr:
        fail(f"run --out -: exit {r.returncode}, stdout {r.stdout[-80:]!r}, stderr {r.stderr!r}")
    # a read-only file and a loop of links are refused and left as they were
    readonly, loop_a, loop_b = path("readonly.npy"), path("loop_a.npy"), path("loop_b.npy")
    for p in (readonly, loop_a, loop_b):
        if os.path.lexists(p):
            os.chmod(p, 0o644) if not os.path.islink(p) else None
            os.remove(p)
    open(readonly, "wb").write(b"keep")
    os.chmod(readonly, 0o444)
    os.symlink("loop_b.npy", loop_a), os.symlink("loop_a.npy", loop_b)
    for out, phrase in ((readonly, "is read-only (mode 0444)"), (loop_a, "cannot follow its links")):
        r = memhier("run", "conv1d", "--device", "cpu", "--in", x, "--mask", m, "--out", out)
        kept = os.path.islink(out) if out == loop_a else open(out, "rb").read() == b"keep"
        if r.returncode == 0 or phrase not in r.stderr or not kept:
            fail(f"run --out {os.path.basename(out)}: exit {r.returncode}, {r.stderr.strip()!r}; left as it was: {kept}")


def check_bench():
    out = path("bench.json")
    r = memhier("bench", "conv1d", "--n", "20011", "--k", "63", "--pad", "same", "--device", "cpu", "--json", out)
    if r.returncode != 0:
        return fail(f"bench on the CPU: exit {r.returncode}: {r.stdout[-2000:]} {r.stderr}")
    doc = json.load(open(out))
    for key in ("device", "date", "commit", "ceilings", "rows"):
        if key not in doc:
            fail(f"bench JSON lacks {key}")
    rows = doc.get("rows", [])
    if not rows or any(row["status"] != "ok" for row in rows):
        fail(f"bench rows: {rows}")
    for row in rows:
        for key in ("op", "workload", "variant", "backend", "ms", "ms_min", "gflops", "gbps", "roofline_pct",
                    "vs_naive", "vs_vendor", "rel_l2", "max_abs_err"):
            if key not in row:
                fail(f"bench row lacks {key}: {row}")
        if row["workload"] != "n=20011 k=63 pad=same":
            fail(f"bench workload string {row['workload']!r}")


def check_list():
    r = memhier("list")
    if r.returncode != 0 or "conv1d/regtile" not in r.stdout or "conv1d/cpu-reference" not in r.stdout:
        fail(f"memhier list: {r.stdout} {r.stderr}")
    r = memhier("list", "nope")
    if r.returncode != 2 or "unknown op 'nope'" not in r.stderr:
        fail(f"memhier list nope: exit {r.returncode}, {r.stderr!r}")


if __name__ == "__main__":
    sys.exit(main())
