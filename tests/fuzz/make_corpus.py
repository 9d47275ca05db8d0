"""Writes the fuzzers' seed corpora (committed beside this script; rerun to remake them).

corpus/cli: command lines (one argument a line) for fuzz_cli; corpus/filter_spec: --filter
SPECs for fuzz_filter_spec; fuzz_image_nocrc reads corpus/image.

corpus/npy: valid files of every dtype memhier reads, versions 1.0/2.0/3.0, 0-d, empty and
2-D shapes, and edge headers it must refuse (Fortran order, big-endian, float64, a
truncated body, a header that is not a dict). corpus/image: small PNGs (gray, RGB, palette,
1-bit gray, with tRNS, 16-bit), P5/P6 with comments and maxval below 255, a truncated P6."""
import io
import os
import struct
import sys
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def npy_bytes(arr, version=(1, 0)):
    buf = io.BytesIO()
    np.lib.format.write_array(buf, arr, version=version)
    return buf.getvalue()


def npy_raw(header, body=b"", major=1):
    h = header.encode("latin1")
    length = struct.pack("<H", len(h)) if major == 1 else struct.pack("<I", len(h))
    return b"\x93NUMPY" + bytes([major, 0]) + length + h + body


def png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def png(width, height, depth, color, rows, extra=()):
    ihdr = struct.pack(">IIBBBBB", width, height, depth, color, 0, 0, 0)
    raw = b"".join(b"\x00" + r for r in rows)
    chunks = [png_chunk(b"IHDR", ihdr), *extra, png_chunk(b"IDAT", zlib.compress(raw)), png_chunk(b"IEND", b"")]
    return b"\x89PNG\r\n\x1a\n" + b"".join(chunks)


def npy_files():
    rng = np.random.default_rng(7)
    yield "f4.npy", npy_bytes(rng.random(5, dtype=np.float32))
    yield "i4-2d.npy", npy_bytes(np.arange(6, dtype=np.int32).reshape(2, 3))
    yield "i8.npy", npy_bytes(np.arange(3, dtype=np.int64))
    yield "u1.npy", npy_bytes(np.arange(7, dtype=np.uint8))
    yield "scalar.npy", npy_bytes(np.float32(1.5))
    yield "empty.npy", npy_bytes(np.zeros(0, dtype=np.float32))
    yield "v2.npy", npy_bytes(np.ones(2, dtype=np.float32), version=(2, 0))
    yield "v3.npy", npy_raw("{'descr': '|u1', 'fortran_order': False, 'shape': (2, 2), }\n", b"\1\2\3\4", major=3)
    yield "fortran.npy", npy_raw("{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }\n", b"\0\0\0\0")
    yield "bigendian.npy", npy_raw("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }\n", b"\0\0\0\0")
    yield "f8.npy", npy_bytes(np.zeros(1))
    yield "truncated.npy", npy_bytes(np.zeros(4, dtype=np.float32))[:-3]
    yield "not-dict.npy", npy_raw("(1, 2)")
    # issue 12's over-read: header length 0, then 7 stray bytes (the message quoted past the end)
    yield "issue12-empty-header.npy", npy_raw("", b"\x13<f8: '")
    yield "long-shape.npy", npy_raw("{'descr': '<i4', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1, 1, 1, 1), }",
                                    b"\0\0\0\0")


def image_files():
    gray = [bytes((x * 17 + y) & 255 for x in range(5)) for y in range(4)]
    rgb = [bytes((x * 7 + y * 3 + c) & 255 for x in range(3) for c in range(3)) for y in range(2)]
    yield "gray.png", png(5, 4, 8, 0, gray)
    yield "rgb.png", png(3, 2, 8, 2, rgb)
    palette = png_chunk(b"PLTE", bytes(range(12)))
    yield "palette.png", png(4, 2, 8, 3, [b"\0\1\2\3", b"\3\2\1\0"], extra=[palette])
    yield "gray1.png", png(9, 2, 1, 0, [b"\xaa\x80", b"\x55\x00"])
    yield "trns.png", png(2, 1, 8, 0, [b"\1\2"], extra=[png_chunk(b"tRNS", b"\0\1")])
    yield "gray16.png", png(2, 1, 16, 0, [b"\0\1\0\2"])
    yield "gray.pgm", b"P5\n# a comment\n5 4\n255\n" + b"".join(gray)
    yield "rgb.ppm", b"P6 3 2 255\n" + b"".join(rgb)
    yield "maxval15.pgm", b"P5\n2 2\n15\n\0\5\12\17"
    yield "truncated.ppm", b"P6\n1000 1000\n255\n" + b"\1" * 9
    # an sPLT chunk claiming 0x73737373 bytes in a 98-byte file (found by fuzz_image_nocrc):
    # libpng sized a 1.9 GB buffer from it before reading; the reader now skips sPLT unread
    yield "splt_huge.png", (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x04\x00\x00\x00\x02\x08\x03\x00\x00\x00Hv\x8dQ"
                            b"\x00\x00\x00\x0c" + b"s" * 25 + b"PLTE" + bytes(range(12))
                            + b"\xdcL3\x9c\x00\xff\xff~\x9ezY\xc4(\x00\x00\x12IDAT")


def cli_files():
    """Command lines for fuzz_cli, one argument a line, on the harness's scratch inputs."""
    lines = {
        "run_conv1d": "run conv1d --in x.npy --mask m.npy --pad same --out y.npy",
        "run_conv2d": "run conv2d --in img.npy --filter f.npy --pad full --out o.npy --device cpu",
        "run_conv1d_mode": "run conv1d --in x.npy --mask m.npy --mode wrap --origin -1 --out y.npy",
        "run_conv2d_mode": "run conv2d --in img.npy --filter f.npy --mode constant --cval nan --origin 1,-1 --out o.npy",
        "run_transpose": "run transpose --in img.npy --out t.npy",
        "run_matmul": "run matmul --a a.npy --b b.npy --out c.npy --variant cpu-omp",
        "run_reduce": "run reduce --in x.npy --out s.npy",
        "run_histogram": "run histogram --in h.npy --bins 11 --out hh.npy",
        "run_histogram_bytes": "run histogram --in u.npy --lo 10 --hi 200 --width 7 --out hb.npy",
        "run_rank": "run rank --in img.npy --size 3,2 --select median --mode wrap --origin 1,0 --out r.npy",
        "run_rank_footprint": "run rank --in img.npy --footprint u.npy --select 2 --cval -inf --mode constant --out r.npy",
        "filter_pgm": "filter g.pgm o.pgm --filter gaussian:0.7",
        "filter_ppm": "filter c.ppm - --filter sobel-x --max-pixels 100",
        "filter_npy": "filter c.ppm o.png --filter f.npy",
        "bench": "bench conv1d --n 1000 --k 31 --pad same --variants regtile,cpu-omp --reps 20 --json b.json",
        "bench_matmul": "bench matmul --rows 300 --k 200 --cols 100 --configs n64",
        "list": "list conv2d",
        "help": "run conv2d --help",
        "explain_conv2d": "explain conv2d --rows 8192 --cols 8192 --krows 11 --kcols 11 --pad same",
        "explain_conv1d": "explain conv1d --n 16777216 --k 2047 --batch 4 --device cpu",
        "explain_histogram": "explain histogram --n 1000 --bins 256 --bytes",
    }
    for name, line in lines.items():
        yield name, "\n".join(line.split(" ")).encode()


def spec_files():
    """--filter SPECs for fuzz_filter_spec."""
    for name, spec in (("gaussian", "gaussian:1.5"), ("tiny", "gaussian:1e-300"), ("box", "box:7"),
                       ("sobel", "sobel-y"), ("npy", "missing.npy")):
        yield name, spec.encode()


def main():
    for sub, files in (("npy", npy_files()), ("image", image_files()), ("cli", cli_files()),
                       ("filter_spec", spec_files())):
        folder = os.path.join(HERE, "corpus", sub)
        os.makedirs(folder, exist_ok=True)
        for name, data in files:
            with open(os.path.join(folder, name), "wb") as f:
                f.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
