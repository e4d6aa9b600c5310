#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host-side re-implementation of the p2pprobe DMA test pattern.

kmod/uapi/p2pprobe.h defines it: the 64-bit word at absolute file offset o
(a multiple of 8) is p2pprobe_pattern_word(seed, o / 8) =
mix64(seed ^ mix64(o/8 + 0x9e3779b97f4a7c15)), mix64 being the splitmix64
finalizer, stored in host byte order (x86-64: little-endian). This file
implements it independently of the header so that the lab checks the data a
guest left on a disk image without trusting the code that wrote it;
`pattern.py vectors` and pattern-vectors.c (built from the header) must print
the same lines, which tests/lab/lab.py checks before any boot.

    pattern.py check FILE OFFSET LENGTH SEED    exit 0 if FILE holds the pattern there
    pattern.py vectors                          test vectors, one "seed word value" a line
"""
import struct
import sys

M64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15
WORD = 8


def mix64(x):
    x &= M64
    x ^= x >> 30
    x = (x * 0xBF58476D1CE4E5B9) & M64
    x ^= x >> 27
    x = (x * 0x94D049BB133111EB) & M64
    x ^= x >> 31
    return x


def word(seed, w):
    return mix64((seed & M64) ^ mix64((w + GOLDEN) & M64))


def region(seed, offset, length):
    """The bytes the pattern puts at [offset, offset + length)."""
    if offset % WORD or length % WORD:
        raise ValueError("offset and length must be multiples of 8")
    w0 = offset // WORD
    n = length // WORD
    return struct.pack("<%dQ" % n, *[word(seed, w0 + i) for i in range(n)])


def first_mismatch(data, seed, offset):
    """(count of bad bytes, first bad absolute offset or None)."""
    want = region(seed, offset, len(data))
    if want == data:
        return 0, None
    bad = [i for i in range(len(data)) if data[i] != want[i]]
    return len(bad), offset + bad[0]


VECTOR_SEEDS = (0, 1, 0x11, 0xFFFFFFFFFFFFFFFF, 0x123456789ABCDEF0)
VECTOR_WORDS = (0, 1, 63, 64, 4095, 1 << 20, (1 << 61) - 1)


def vectors():
    return ["%x %x %016x" % (s, w, word(s, w)) for s in VECTOR_SEEDS for w in VECTOR_WORDS]


def main(argv):
    if len(argv) == 2 and argv[1] == "vectors":
        print("\n".join(vectors()))
        return 0
    if len(argv) == 6 and argv[1] == "check":
        off, length, seed = (int(a, 0) for a in argv[3:6])
        with open(argv[2], "rb") as f:
            f.seek(off)
            data = f.read(length)
        if len(data) != length:
            print("short file: %d of %d bytes" % (len(data), length))
            return 1
        count, first = first_mismatch(data, seed, off)
        print("mismatch_count=%d%s" % (count, "" if first is None else " first=%d" % first))
        return 1 if count else 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
