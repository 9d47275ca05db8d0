#!/usr/bin/env python3
"""The oracle for conv2d and image filtering: memhier's CLI against scipy.

usage: conv2d_cli.py MEMHIER_BINARY WORK_DIR

- `memhier run conv2d` in every padding against scipy.signal.correlate2d (float64), with
  `auto` and with every variant this machine can run (separable on rank-1 filters; on a
  full-rank filter it must refuse; walk and tiles on the square sizes they are compiled for,
  refusing 5x7);
- `memhier filter` on a real photograph (tests/data/hopper.png, RGB, and its gray version
  as PGM) with every named filter and a .npy one, against scipy.ndimage.correlate with zero
  borders, rounded half up and clamped to 0..255;
- RGBA, gray + alpha (alpha passed through) and 16-bit PNG and PGM against scipy;
- `memhier run conv2d` on float64 arrays with --mode against scipy.ndimage.correlate, bit for
  bit (scipy's sums in its order), on auto and the rows that compute them;
- refusals: bad filter specs, unreadable, truncated images, alpha written as PPM, wrong output
  names: a non-zero exit, a message, and no output file.

Even filter sides: memhier anchors at (k-1)//2 like PyTorch; scipy.signal's 'same' and
ndimage's default centre one sample later, so the oracle takes the 'full' output at
memhier's offset, and passes origin=-1 to ndimage on even axes.
"""
import os
import struct
import subprocess
import sys
import tempfile
import zlib

import numpy as np
from common import CLI, WORK, check_close, check_named, fail, finish, has_gpu, memhier, path, reference, registry, run_op, \
    submit, on_gpu_too
from scipy import ndimage

HERE = os.path.dirname(os.path.abspath(__file__))
# the rows compiled for a few square filter sizes: the sizes and paddings each runs here, and its
# refusal of a size it has no instance of
COMPILED_SIZES = {
    "conv2d/walk": (((3, "valid"), (5, "same"), (7, "same"), (3, "full"), (5, "full")), "walk is compiled for"),
    "conv2d/tiles": (((3, "valid"), (5, "same"), (3, "full"), (5, "full")), "tiles is compiled for"),
}
SIZE_REFUSALS = tuple(refusal for _, refusal in COMPILED_SIZES.values())
# conv2d/float64 computes mh_conv2d_float64's calls (float64 sums in scipy's order, test_conv2d's
# check_float64): the CLI's float32 calls are refused with this reason
FLOAT64_ONLY = "it computes mh_conv2d_float64's calls only"
PHOTO = os.path.join(HERE, "..", "data", "hopper.png")


# ---- minimal PNG (8-bit gray/RGB, no interlace) and PNM, so that only numpy is needed ----

def png_read(p):
    data = open(p, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", p
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = ihdr
    assert depth in (8, 16) and ctype in (0, 2, 4, 6) and interlace == 0, (depth, ctype, interlace)
    ch = {0: 1, 4: 2, 2: 3, 6: 4}[ctype]
    raw = zlib.decompress(idat)
    bpp = ch * depth // 8  # the filters' byte distance to the pixel on the left
    stride = w * bpp
    out = np.zeros((h, stride), np.uint8)
    prev = np.zeros(stride, np.int32)
    for y in range(h):
        f, line = raw[y * (stride + 1)], np.frombuffer(raw, np.uint8, stride, y * (stride + 1) + 1).astype(np.int32)
        cur = np.zeros(stride, np.int32)
        for x in range(stride):
            a = cur[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 0: pred = 0
            elif f == 1: pred = a
            elif f == 2: pred = b
            elif f == 3: pred = (a + b) // 2
            else:
                p_ = a + b - c
                pa, pb, pc = abs(p_ - a), abs(p_ - b), abs(p_ - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
            cur[x] = (line[x] + pred) & 255
        out[y] = cur
        prev = cur
    if depth == 16:  # big-endian sample pairs
        pairs = out.reshape(h, w * ch, 2).astype(np.int64)
        return (pairs[:, :, 0] * 256 + pairs[:, :, 1]).reshape(h, w, ch)
    return out.reshape(h, w, ch)


def png_write(p, img, depth=8, ctype=None):
    """Writes img (h, w, ch) with filter 0; depth 16 and other colour types on request."""
    h, w, ch = img.shape
    ctype = {1: 0, 2: 4, 3: 2, 4: 6}[ch] if ctype is None else ctype
    dtype = ">u2" if depth == 16 else np.uint8
    rows = b"".join(b"\x00" + img[y].astype(dtype).tobytes() for y in range(h))

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xffffffff)

    blob = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, depth, ctype, 0, 0, 0))
    open(p, "wb").write(blob + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def pnm_read(p):
    data = open(p, "rb").read()
    fields, pos = [], 2
    while len(fields) < 3:
        while data[pos:pos + 1].isspace():
            pos += 1
        start = pos
        while not data[pos:pos + 1].isspace():
            pos += 1
        fields.append(int(data[start:pos]))
    w, h, _ = fields
    ch = 1 if data[:2] == b"P5" else 3
    return np.frombuffer(data, np.uint8, w * h * ch, pos + 1).reshape(h, w, ch)


def image_read(p):
    return png_read(p) if open(p, "rb").read(4) == b"\x89PNG" else pnm_read(p)


def pnm_write(p, img):
    h, w, ch = img.shape
    open(p, "wb").write(b"P%d\n%d %d\n255\n" % (5 if ch == 1 else 6, w, h) + img.astype(np.uint8).tobytes())


# ---- run conv2d ---------------------------------------------------------------------------

def expected(x, f, pad):
    """scipy's correlation and the sum of |terms| per output, at memhier's anchor."""
    return reference.correlate2d(x, f, pad)


def ran(what, r, out, must_refuse=None):
    """Whether a run left an output to check; a refusal expected (must_refuse in its message, no
    output written) or a failed run is judged here instead."""
    if must_refuse:
        if r.returncode == 0 or must_refuse not in r.stderr or os.path.exists(out):
            fail(f"{what}: expected a refusal with {must_refuse!r}, got exit {r.returncode}: {r.stderr.strip()}")
        return False
    if r.returncode != 0:
        fail(f"{what}: exit {r.returncode}: {r.stderr.strip()}")
        return False
    return True


def check_run(x, f, pad, variant=None, device=None, must_refuse=None):
    r, out = run_op("conv2d", [("--in", "x.npy", x), ("--filter", "f.npy", f)], ["--pad", pad], variant, device)
    what = f"{variant or 'auto'} {x.shape} filter {f.shape} pad={pad}"
    if not ran(what, r, out, must_refuse):
        return
    check_named(what, r, "conv2d", variant)
    check_close(what, np.load(out), *expected(x, f, pad), f.size)


def check_runs(rng, gpu):
    shapes = [((1, 1), (1, 1)), ((9, 13), (3, 3)), ((40, 37), (4, 6)), ((64, 65), (7, 7)), ((33, 70), (31, 5)),
              ((5, 6), (9, 8)), ((50, 70), (40, 33)), ((20, 300), (3, 100))]  # past 31: fft-3pass on a GPU
    for i, ((h, w), (kr, kc)) in enumerate(shapes):
        x = rng.uniform(-1, 1, (h, w)).astype(np.float32)
        f = rng.uniform(-1, 1, (kr, kc)).astype(np.float32)
        for j, pad in enumerate(("valid", "same", "full")):
            if pad == "valid" and (kr > h or kc > w):
                continue
            if on_gpu_too(None, i + j):
                submit(check_run, x, f, pad)
            submit(check_run, x, f, pad, device="cpu")
    x = rng.uniform(-1, 1, (101, 203)).astype(np.float32)
    full_rank = rng.uniform(-1, 1, (5, 7)).astype(np.float32)
    rank1 = np.outer(rng.uniform(-1, 1, 9), rng.uniform(-1, 1, 4)).astype(np.float32)
    for k, (name, backend) in enumerate(registry("conv2d")):
        if backend != "cpu" and not gpu:
            continue
        device = "cpu" if backend == "cpu" else "0"
        if name == "conv2d/float64":
            submit(check_run, x, full_rank, "same", name, device, must_refuse=FLOAT64_ONLY)
            continue
        if name in ("conv2d/separable", "conv2d/lowrank"):  # low-rank filters alone
            submit(check_run, x, rank1, "same", name, device)
            submit(check_run, x, full_rank, "same", name, device, must_refuse="within FP32 accuracy")
            continue
        if name in COMPILED_SIZES:
            sizes, refusal = COMPILED_SIZES[name]
            for k, pad in sizes:
                submit(check_run, x, rng.uniform(-1, 1, (k, k)).astype(np.float32), pad, name, device)
            submit(check_run, x, full_rank, "same", name, device, must_refuse=refusal)
            continue
        for j, (f, pad) in enumerate(((full_rank, "valid"), (rank1, "same"), (full_rank, "full"))):
            if device == "cpu" or j == k % 3:  # a GPU row on one of the three by turns (test_conv2d gpu: all)
                submit(check_run, x, f, pad, name, device)
    check_run_modes(rng, gpu, x, full_rank)


def check_run_modes(rng, gpu, x, f):
    """run conv2d --mode M [--cval C] [--origin R,C]: scipy.ndimage.correlate's placement, every
    mode on auto, and 'reflect' on each row (the rows whose loaders apply modes compute; the
    others refuse)."""
    cases = [("reflect", 0.0, "0"), ("mirror", 0.0, "-2,3"), ("nearest", 0.0, "1"), ("wrap", 0.0, "2,-3"),
             ("constant", 1.25, "0,0")]
    rows = registry("conv2d")
    for mode, cval, origin in cases:
        o = [int(v) for v in origin.split(",")] * (2 if "," not in origin else 1)
        ref, mag = reference.correlate2d_mode(x, f, mode, cval, tuple(o))
        for name, backend in [(None, "cpu"), (None, "gpu")] + (rows if mode == "reflect" else []):
            if backend != "cpu" and not gpu:
                continue
            submit(check_run_mode, x, f, mode, cval, origin, name, backend, ref, mag)


def check_run_mode(x, f, mode, cval, origin, name, backend, ref, mag):
    r, out = run_op("conv2d", [("--in", "x.npy", x), ("--filter", "f.npy", f)],
                    ["--mode", mode, "--cval", repr(cval), "--origin", origin], name, "cpu" if backend == "cpu" else "0")
    what = f"{name or 'auto'} on {backend} --mode {mode} --cval {cval} --origin {origin}"
    if r.returncode == 1 and name and ("with zeros only" in r.stderr or "within FP32 accuracy" in r.stderr
                                       or any(s in r.stderr for s in SIZE_REFUSALS) or FLOAT64_ONLY in r.stderr):
        return
    if r.returncode != 0:
        return fail(f"{what}: exit {r.returncode}: {r.stderr.strip()}")
    check_close(what, np.load(out), ref, mag, f.size)


def check_float64_runs(rng, gpu):
    """run conv2d on float64 --in and --filter with --mode: scipy.ndimage.correlate's result bit
    for bit, in float64 (its sums in its order), on auto and conv2d/float64 (GPU) and cpu-omp;
    walk refuses the call; without --mode it is refused."""
    x = rng.standard_normal((53, 77)) * np.exp2(rng.integers(-20, 20, (53, 77)))
    x[10:30, 10:40] = 5.0  # a box of 1/9 over this patch sums one rounding below 5
    box, f = np.full((3, 3), 1 / 9), rng.standard_normal((5, 7))
    f[1, 2] = 0.0
    cases = [(box, "reflect", 0.0, "0"), (f, "constant", 1.25, "1,-2"), (f, "wrap", 0.0, "0"),
             (box, "mirror", 0.0, "-1"), (f, "nearest", 0.0, "2,3")]
    rows = [(None, "cpu"), ("conv2d/cpu-omp", "cpu")] + ([(None, "0"), ("conv2d/float64", "0")] if gpu else [])
    for w, mode, cval, origin in cases:
        o = [int(v) for v in origin.split(",")] * (2 if "," not in origin else 1)
        want = ndimage.correlate(x, w, mode=mode, cval=cval, origin=o)
        for name, device in rows:
            submit(check_float64_run, x, w, mode, cval, origin, name, device, want)
    if gpu:
        submit(check_float64_run, x, box, "reflect", 0.0, "0", "conv2d/walk", "0", None, must_refuse="float32 only")
    submit(check_float64_run, x, box, None, 0.0, "0", None, "cpu", None, must_refuse="needs --mode")


def check_float64_run(x, w, mode, cval, origin, name, device, want, must_refuse=None):
    options = ["--mode", mode, "--cval", repr(cval), "--origin", origin] if mode else []
    r, out = run_op("conv2d", [("--in", "x.npy", x), ("--filter", "f.npy", w)], options, name, device)
    what = f"float64 {name or 'auto'} on {device} --mode {mode} --cval {cval} --origin {origin}"
    if not ran(what, r, out, must_refuse):
        return
    check_named(what, r, "conv2d", name)
    got = np.load(out)
    if got.dtype != np.float64 or not np.array_equal(got, want):
        bad = int(np.sum(got != want)) if got.shape == want.shape else -1
        fail(f"{what}: {got.dtype}, {bad} outputs differ from scipy.ndimage.correlate's")


def check_precision(rng, gpu):
    """--precision: on an image with 1% of its pixels 1e6 times brighter, per-element keeps every
    output within its own terms' bound; the default (normwise) within the FFT rows' bound; a bad
    name is a usage error."""
    x = reference.high_dynamic_range(rng, (200, 300))
    f = rng.uniform(-1, 1, (15, 15)).astype(np.float32)
    ref, mag = reference.correlate2d_mode(x, f, "reflect")
    for device in ["cpu"] + (["0"] if gpu else []):
        for precision in ("per-element", None):
            options = ["--mode", "reflect"] + (["--precision", precision] if precision else [])
            r, out = run_op("conv2d", [("--in", "x.npy", x), ("--filter", "f.npy", f)], options, None, device)
            what = f"--precision {precision or '(default)'} on {device}"
            if r.returncode != 0:
                fail(f"{what}: exit {r.returncode}: {r.stderr.strip()}")
                continue
            worst = reference.worst_violation(np.load(out), ref, mag, f.size, per_element=precision is not None)
            if worst:
                fail(f"{what}: y{worst[0]} = {worst[1]!r}, float64 {worst[2]!r} (bound {worst[3]:.3g})")
    r, _ = run_op("conv2d", [("--in", "x.npy", x), ("--filter", "f.npy", f)], ["--precision", "exact"])
    if r.returncode != 2 or "--precision 'exact'" not in r.stderr:
        fail(f"--precision exact: exit {r.returncode} {r.stderr.strip()!r}; a usage error naming it expected")


# ---- memhier filter on a photograph --------------------------------------------------------

def named_filter(spec):
    if spec.startswith("gaussian:"):
        s = float(spec[9:])
        r = int(np.ceil(3 * s))
        g = np.exp(-np.arange(-r, r + 1) ** 2 / (2 * s * s))
        g /= g.sum()
        return np.outer(g, g)
    if spec.startswith("box:"):
        k = int(spec[4:])
        return np.full((k, k), 1.0 / (k * k))
    return {"sobel-x": [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]], "sobel-y": [[-1, -2, -1], [0, 0, 0], [1, 2, 1]],
            "laplacian": [[0, 1, 0], [1, -4, 1], [0, 1, 0]], "sharpen": [[0, -1, 0], [-1, 5, -1], [0, -1, 0]]}[spec]


def expected_image(img, f, mode=None):
    """Without a mode: zeros past the borders, anchored at (k-1)//2; with one, scipy's own call."""
    f32 = np.asarray(f, np.float32).astype(np.float64)  # memhier filters with float32 taps
    origin = [-1 if n % 2 == 0 else 0 for n in f32.shape] if mode is None else 0
    out = np.empty_like(img)
    for c in range(img.shape[2]):
        v = ndimage.correlate(img[:, :, c].astype(np.float64), f32, mode=mode or "constant", cval=0.0, origin=origin)
        out[:, :, c] = np.clip(np.floor(v + 0.5), 0, 255)
    return out


def check_filter(src, out_name, spec, f, variant=None, mode=None, decoded=None, device=None):
    """decoded: the input's pixels as a PNG or PNM, for inputs Python cannot read (JPEG); device:
    'cpu', or None for the default (the GPU where there is one)."""
    out = os.path.join(tempfile.mkdtemp(prefix="filter-", dir=WORK), out_name)
    args = ["filter", src, out, "--filter", spec] + (["--variant", variant] if variant else []) + \
        (["--mode", mode] if mode else []) + (["--device", device] if device else [])
    r = memhier(*args)
    what = f"filter {os.path.basename(src)} --filter {os.path.basename(spec)} {variant or ''} {mode or ''}"
    if r.returncode != 0:
        return fail(f"{what}: exit {r.returncode}: {r.stderr.strip()}")
    got = image_read(out).astype(np.int32)
    want = expected_image(image_read(decoded or src), f, mode).astype(np.int32)
    if got.shape != want.shape:
        return fail(f"{what}: shape {got.shape}, expected {want.shape}")
    diff = np.abs(got - want)
    # float32 sums against scipy's float64 can land on the other side of a .5: allow 1 level, rarely
    if diff.max() > 1 or (diff > 0).mean() > 1e-3:
        fail(f"{what}: {int((diff > 0).sum())} pixels differ, by up to {int(diff.max())}")


def check_filters(gpu):
    photo = png_read(PHOTO)
    gray = np.round(photo @ np.array([0.299, 0.587, 0.114])).astype(np.uint8)[:, :, None]
    gray_pgm = path("hopper_gray.pgm")
    pnm_write(gray_pgm, gray)
    odd = np.array([[1, 2, 0, -1, 3], [0.5, -2, 1, 1, 0], [2, 0, 0, -3, 1]], np.float32) / 4
    np.save(path("odd.npy"), odd)
    specs = [("gaussian:1.5", None), ("box:5", None), ("box:4", None), ("sobel-x", None), ("sobel-y", None),
             ("laplacian", None), ("sharpen", None), (path("odd.npy"), odd)]
    for i, (spec, f) in enumerate(specs):  # the photograph and its gray version, at most one on the GPU
        f = named_filter(spec) if f is None else f
        submit(check_filter, PHOTO, "out.png", spec, f, device=None if on_gpu_too(None, i) else "cpu")
        submit(check_filter, gray_pgm, "out.pgm", spec, f, device=None if on_gpu_too(None, i + 2) else "cpu")
    variants = ["regtile", "shared", "separable"] if gpu else ["cpu-reference"]
    for v in variants:
        submit(check_filter, PHOTO, "out.ppm", "gaussian:2", named_filter("gaussian:2"), v)
    # --mode: scipy.ndimage.correlate's placement and extension, even filters included
    for i, mode in enumerate(("reflect", "mirror", "nearest", "wrap", "constant")):
        for j, (spec, f) in enumerate((("sobel-x", None), ("box:4", None), (path("odd.npy"), odd))):
            submit(check_filter, PHOTO, "out.png", spec, named_filter(spec) if f is None else f, mode=mode,
                   device=None if on_gpu_too(None, i + j) else "cpu")
    # JPEG (where this build reads it): memhier writes the photograph as JPEG and decodes it back
    # to PNG with the identity filter, then filters the JPEG; scipy filters the decoded pixels
    jpg, decoded = path("hopper.jpg"), path("hopper_decoded.png")
    r = memhier("filter", PHOTO, jpg, "--filter", "box:1")
    if r.returncode == 0:
        r = memhier("filter", jpg, decoded, "--filter", "box:1")
        if r.returncode != 0:
            fail(f"decoding {jpg}: exit {r.returncode}: {r.stderr.strip()}")
        else:
            for spec in ("sobel-x", "gaussian:1.5"):
                check_filter(jpg, "out.png", spec, named_filter(spec), decoded=decoded)
    elif "no JPEG support" not in r.stderr:
        fail(f"writing {jpg}: exit {r.returncode}: {r.stderr.strip()}")
    r = memhier("filter", PHOTO, path("out.png"), "--filter", "box:3", "--mode", "symmetric")
    if r.returncode != 2 or "--mode 'symmetric'" not in r.stderr:
        fail(f"--mode symmetric: exit {r.returncode}, {r.stderr.strip()!r}: a usage error naming the mode expected")


def png_write_palette_1bit(name, w, h):
    """An all-black 1-bit palette PNG: a tiny file whose pixels expand 24-fold."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    raw = (b"\x00" * (1 + (w + 7) // 8)) * h
    open(name, "wb").write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 1, 3, 0, 0, 0))
                           + chunk(b"PLTE", b"\x00\x00\x00\xff\xff\xff") + chunk(b"IDAT", zlib.compress(raw, 9))
                           + chunk(b"IEND", b""))


def check_memory_held():
    """An 8 KB 1-bit palette PNG of 8000 x 8000 pixels, expanded to RGB: filtered on the CPU, the
    command's peak memory stays within what `memhier filter --help` says a pixel holds (channels x
    bytes a sample + 8: 11 bytes here, 0.7 GB), plus 32 MB for the program itself."""
    src, out = path("palette8000.png"), path("palette8000_out.png")
    png_write_palette_1bit(src, 8000, 8000)
    code = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], capture_output=True); "
            "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    r = subprocess.run([sys.executable, "-c", code, CLI, "filter", src, out, "--filter", "box:1", "--device", "cpu"],
                       capture_output=True, text=True)
    rc, peak_kb = (int(v) for v in r.stdout.split())
    bound = 8000 * 8000 * (3 * 1 + 8) + (32 << 20)
    if rc != 0 or peak_kb * 1024 > bound:
        fail(f"filter of an 8000 x 8000 palette PNG: exit {rc}, peak {peak_kb >> 10} MB, the help's bound "
             f"{bound >> 20} MB")


def check_tiny_sigma():
    """gaussian:1e-200 is the identity (the limit), not a NaN filter; the image comes back as it was."""
    src = path("hopper_gray.pgm")
    r = memhier("filter", src, path("same.pgm"), "--filter", "gaussian:1e-200", "--device", "cpu")
    if r.returncode != 0 or open(path("same.pgm"), "rb").read() != open(src, "rb").read():
        fail(f"filter --filter gaussian:1e-200: exit {r.returncode} {r.stderr}; not the identity")
    r = subprocess.run([CLI, "filter", src, "-", "--filter", "box:1", "--device", "cpu"], capture_output=True)
    if r.returncode != 0 or r.stdout != open(src, "rb").read():
        fail(f"filter to standard output: exit {r.returncode} {r.stderr}")


def expected_deep(img, f, top):
    """A 16-bit image (or any range) filtered with zeros past the borders, rounded and clamped."""
    f32 = np.asarray(f, np.float32).astype(np.float64)
    origin = [-1 if n % 2 == 0 else 0 for n in f32.shape]
    return np.stack([np.clip(np.floor(ndimage.correlate(img[:, :, c].astype(np.float64), f32, mode="constant",
                                                        origin=origin) + 0.5), 0, top)
                     for c in range(img.shape[2])], axis=2)


def check_alpha_and_deep(rng):
    """RGBA and gray + alpha: the colours filtered, alpha as it was; 16-bit PNG and PGM: filtered
    in their own range (0..65535), written back at 16 bits."""
    for name, ch, depth in (("rgba.png", 4, 8), ("ga.png", 2, 8), ("deep.png", 3, 16), ("deep_rgba.png", 4, 16)):
        top = 65535 if depth == 16 else 255
        img = rng.integers(0, top + 1, (23, 31, ch))
        src, out = path(name), path("out_" + name)
        png_write(src, img, depth=depth)
        r = memhier("filter", src, out, "--filter", "box:3")
        if r.returncode != 0:
            fail(f"filter {name}: exit {r.returncode}: {r.stderr.strip()}")
            continue
        got = png_read(out)
        colours = ch - (ch in (2, 4))
        want = expected_deep(img[:, :, :colours], np.full((3, 3), 1 / 9), top)
        diff = np.abs(got[:, :, :colours].astype(np.int64) - want.astype(np.int64))
        if got.shape != img.shape or diff.max() > 1 or (diff > 0).mean() > 1e-2:
            fail(f"filter {name}: shape {got.shape}, colours differ from scipy by up to {diff.max()}")
        if ch in (2, 4) and not np.array_equal(got[:, :, -1], img[:, :, -1]):
            fail(f"filter {name}: the alpha channel changed")
    gray16 = rng.integers(0, 65536, (17, 19, 1))
    src = path("deep.pgm")
    open(src, "wb").write(b"P5\n19 17\n65535\n" + gray16.astype(">u2").tobytes())
    r = memhier("filter", src, path("out_deep.pgm"), "--filter", "box:3")
    data = open(path("out_deep.pgm"), "rb").read() if r.returncode == 0 else b""
    if r.returncode != 0 or not data.startswith(b"P5\n19 17\n65535\n"):
        fail(f"filter deep.pgm: exit {r.returncode}: {r.stderr.strip()} {data[:20]!r}")
    else:
        got = np.frombuffer(data, ">u2", 17 * 19, len(b"P5\n19 17\n65535\n")).reshape(17, 19, 1)
        want = expected_deep(gray16, np.full((3, 3), 1 / 9), 65535)
        if np.abs(got.astype(np.int64) - want.astype(np.int64)).max() > 1:
            fail("filter deep.pgm: differs from scipy by more than one level")


def check_refusals(rng):
    out = path("refused.png")
    deep, alpha, cut = path("deep.png"), path("alpha.png"), path("cut.png")
    png_write(deep, rng.integers(0, 65535, (8, 8, 3)), depth=16)
    png_write(alpha, rng.integers(0, 255, (8, 8, 4)))
    open(cut, "wb").write(open(PHOTO, "rb").read()[:5000])
    np.save(path("cube.npy"), np.zeros((3, 3, 3), np.float32))
    np.save(path("nan.npy"), np.array([[1, np.nan], [0, 1]], np.float32))
    np.save(path("huge.npy"), np.array([[3e38, -3e38]], np.float32))  # finite, but its sums overflow
    bitmap = path("bitmap.png")  # 1-bit palette, 20000 x 20000: 48 KB on disk, 400 Mpixels
    png_write_palette_1bit(bitmap, 20000, 20000)
    cases = [
        (["filter", PHOTO, out, "--filter", path("nan.npy")], "tap [0][1] is nan; filters must be finite"),
        (["filter", PHOTO, out, "--filter", path("huge.npy")], "past float32's"),
        (["filter", bitmap, out, "--filter", "box:3"], "more than the 67108864 allowed (--max-pixels"),
        (["filter", PHOTO, out, "--filter", "box:3", "--max-pixels", "1000"], "more than the 1000 allowed"),
        (["filter", PHOTO, out, "--filter", "blur"], "is not a filter"),
        (["filter", PHOTO, out, "--filter", "gaussian:0"], "SIGMA must be"),
        (["filter", PHOTO, out, "--filter", "gaussian:43"], "SIGMA must be"),
        (["filter", PHOTO, out, "--filter", "box:0"], "K must be"),
        (["filter", PHOTO, out, "--filter", "box:256"], "K must be"),
        (["filter", PHOTO, out, "--filter", path("none.npy")], "No such file"),
        (["filter", PHOTO, out, "--filter", path("cube.npy")], "2-D float32"),
        (["filter", path("missing.png"), out, "--filter", "box:3"], "No such file"),
        (["filter", cut, out, "--filter", "box:3"], "malformed or truncated PNG"),
        (["filter", alpha, path("refused.ppm"), "--filter", "box:3"], "RGBA image cannot be written as PPM"),
        (["filter", PHOTO, path("refused.pgm"), "--filter", "box:3"], "RGB image cannot be written as PGM"),
        (["filter", PHOTO, path("refused.gif"), "--filter", "box:3"], ".png, .jpg, .jpeg, .pgm or .ppm"),
        (["filter", PHOTO, path("no/dir/x.png"), "--filter", "box:3"], "cannot create"),
        (["filter", PHOTO, out], "needs --filter"),
        (["filter", PHOTO, out, "--filter", "box:3", "--variant", "nope"], "variant = 'nope'"),
    ]
    x = path("x.npy")
    np.save(x, rng.uniform(-1, 1, (10, 10)).astype(np.float32))
    big = path("big_f.npy")
    np.save(big, np.ones((12, 12), np.float32))
    huge = path("huge_f.npy")
    np.save(huge, np.ones((256, 3), np.float32))
    cases += [
        (["run", "conv2d", "--in", x, "--filter", big, "--out", out], "larger than the 10 x 10 image"),
        (["run", "conv2d", "--in", x, "--filter", huge, "--pad", "same", "--out", out], "at most 255 x 255"),
        (["run", "conv2d", "--in", path("cube.npy"), "--filter", big, "--out", out], "2-D float32"),
        (["run", "conv2d", "--in", x, "--out", out], "needs --in, --filter and --out"),
    ]
    for args, phrase in cases:
        for leftover in (out, path("refused.pgm"), path("refused.gif")):
            if os.path.exists(leftover):
                os.remove(leftover)
        r = memhier(*args)
        what = " ".join(os.path.basename(a) if a.startswith(WORK) else a for a in args)
        if r.returncode == 0:
            fail(f"`memhier {what}` succeeded; it should refuse")
        elif phrase not in r.stderr:
            fail(f"`memhier {what}`: stderr {r.stderr.strip()!r} lacks {phrase!r}")
        for leftover in (out, path("refused.pgm"), path("refused.gif")):
            if os.path.exists(leftover):
                fail(f"`memhier {what}` left {os.path.basename(leftover)} behind")


def main():
    rng = np.random.default_rng(int.from_bytes(os.urandom(4), "little"))
    gpu = has_gpu()
    print("GPU present:", gpu, flush=True)
    check_runs(rng, gpu)
    check_float64_runs(rng, gpu)
    check_precision(rng, gpu)
    check_filters(gpu)
    check_tiny_sigma()
    check_memory_held()
    check_refusals(rng)
    check_alpha_and_deep(rng)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
