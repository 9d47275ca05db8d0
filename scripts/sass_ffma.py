#!/usr/bin/env python3
"""FFMA operand statistics of the kernels in an sm_90 cubin, without cuobjdump.

usage: sass_ffma.py KERNELS.cubin [NAME-REGEX]

Decodes the 128-bit Volta-and-later instruction words (fields as reverse-engineered for
Volta to Hopper and checked against cuobjdump's listing of our kernels on the H100):
opcode bits 0-11 (0x223 = FFMA with register operands, 0xb1d = BAR, 0x981 = LDG, 0x388 = STS),
destination 16-23, sources a 24-31, b 32-39, c 64-71, stall count 105-108, reuse flags
122-124 (one per source slot). For each kernel it prints how many FFMAs read 2 or 3 registers
from the register file (a source is served by the operand reuse cache when the previous
instruction read the same register in the same slot with its reuse flag set) and how many read
two registers of the same parity (the two register banks of the Volta/Ampere model), plus the
positions of the global loads and shared stores between barriers. docs/matmul.md says what
these predicted and what the H100 measured."""
import collections
import re
import struct
import sys

FFMA, BAR, LDG, STS = 0x223, 0xb1d, 0x981, 0x388


def text_sections(path):
    """{section name: bytes} of an ELF64 file's .text.* sections."""
    d = open(path, 'rb').read()
    shoff, = struct.unpack_from('<Q', d, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from('<HHH', d, 0x3a)
    hdrs = [struct.unpack_from('<IIQQQQIIQQ', d, shoff + i * shentsize) for i in range(shnum)]
    names = hdrs[shstrndx][4]
    out = {}
    for h in hdrs:
        name = d[names + h[0]:d.index(b'\0', names + h[0])].decode()
        if name.startswith('.text.'):
            out[name[6:]] = d[h[4]:h[4] + h[5]]
    return out


def instructions(code):
    for i in range(len(code) // 16):
        lo, hi = struct.unpack_from('<QQ', code, 16 * i)
        w = lo | hi << 64
        yield {'op': w & 0xfff, 'srcs': ((w >> 24) & 0xff, (w >> 32) & 0xff, (w >> 64) & 0xff),
               'reuse': (w >> 122) & 0x7, 'stall': (w >> 105) & 0xf}


def ffma_stats(code):
    reads = collections.Counter()
    same_parity = 0
    cache = {}
    for ins in instructions(code):
        if ins['op'] != FFMA:
            cache = {}
            continue
        from_file = [r for slot, r in enumerate(ins['srcs']) if r != 255 and cache.get(slot) != r]
        reads[len(from_file)] += 1
        if len(from_file) - len({r % 2 for r in from_file}) > 0:
            same_parity += 1
        cache = {slot: r for slot, r in enumerate(ins['srcs']) if ins['reuse'] >> slot & 1}
    return reads, same_parity


def layout(code):
    """'[nF]LDG ...': the global loads, shared stores and barriers with the FFMA count between."""
    marks, ffmas = [], 0
    for ins in instructions(code):
        if ins['op'] == FFMA:
            ffmas += 1
        elif ins['op'] in (BAR, LDG, STS):
            name = {BAR: 'BAR', LDG: 'LDG', STS: 'STS'}[ins['op']]
            marks.append(f'[{ffmas}F]{name}' if ffmas else name)
            ffmas = 0
    return ' '.join(marks)


def main():
    pattern = sys.argv[2] if len(sys.argv) > 2 else '.'
    for name, code in sorted(text_sections(sys.argv[1]).items()):
        if not re.search(pattern, name):
            continue
        reads, same = ffma_stats(code)
        total = sum(reads.values())
        if not total:
            continue
        print(f'{name}\n  FFMA {total}: 3 register reads {reads[3]} ({100 * reads[3] / total:.0f}%), '
              f'same-parity pair {same} ({100 * same / total:.0f}%)\n  {layout(code)}')


if __name__ == '__main__':
    main()
