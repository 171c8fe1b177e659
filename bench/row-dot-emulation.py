#!/usr/bin/env python3
"""The gradient quantizer's D = rowsum(dO * O), emulated on the CPU.

flamia.row_dot (lib/Conversion/FlamiaToNVVM/GradientPatterns.cpp) sums the
exact f64 products of a row as TwoSum pairs (32 lanes of D / 32 terms, then
a butterfly over the lanes) and rounds the pair to f32 through round-to-odd.
This script performs the same IEEE operations in the same order in Python
(whose floats are IEEE doubles) and compares the result with the exact sum
rounded once to f32 (fractions.Fraction), on rows built to sit next to an
f32 rounding tie: a value, half an f32 ulp of it, and terms 2^30 to 2^110
smaller that decide the rounding. It also counts the plain f64 sum's misses
(the lowering before run 48). Needs numpy. Usage: row-dot-emulation.py [ROWS]
"""
import math
import random
import struct
import sys
from fractions import Fraction

import numpy as np


def two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def bits(x):
    return struct.unpack("<q", struct.pack("<d", x))[0]


def from_bits(i):
    return struct.unpack("<d", struct.pack("<q", i))[0]


def round_to_f32(hi, lo):
    h, l = two_sum(hi, lo)
    b = bits(h)
    if b & 1 == 0 and l != 0 and math.isfinite(h):
        b = b + 1 if (b < 0) == (l < 0) else b - 1
    return np.float32(from_bits(b))


def lowering(terms, lanes=32):
    per = len(terms) // lanes
    pairs = []
    for l in range(lanes):
        hi, lo = 0.0, 0.0
        for k in range(per):
            hi, err = two_sum(hi, terms[per * l + k])
            lo = lo + err
        pairs.append((hi, lo))
    for m in (16, 8, 4, 2, 1):
        nxt = []
        for l in range(lanes):
            x, y = pairs[l], pairs[l ^ m]
            s, err = two_sum(x[0], y[0])
            nxt.append((s, err + (x[1] + y[1])))
        pairs = nxt
    return round_to_f32(*pairs[0])


def plain(terms, lanes=32):
    per = len(terms) // lanes
    sums = [0.0] * lanes
    for l in range(lanes):
        for k in range(per):
            sums[l] = sums[l] + terms[per * l + k]
    for m in (16, 8, 4, 2, 1):
        sums = [sums[l] + sums[l ^ m] for l in range(lanes)]
    return np.float32(sums[0])


def exact_f32(terms):
    s = sum(Fraction(t) for t in terms)
    f = np.float32(float(s))
    around = [np.nextafter(f, np.float32(-np.inf)), f, np.nextafter(f, np.float32(np.inf))]
    # Nearest, ties to the even significand.
    return min(around, key=lambda c: (abs(Fraction(float(c)) - s),
                                      struct.unpack("<I", struct.pack("<f", c))[0] & 1))


def main():
    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
    rng = random.Random(1)
    missed = missed_plain = 0
    for _ in range(rows):
        d = rng.choice([64, 128])
        terms = [0.0] * d
        base = rng.choice([1, -1]) * 2.0 ** rng.randint(-20, 20)
        pos = rng.sample(range(d), 5)
        terms[pos[0]] = base
        terms[pos[1]] = base * 2 ** -23
        terms[pos[2]] = base * 2 ** -24
        terms[pos[3]] = rng.choice([1, -1]) * base * 2.0 ** rng.randint(-90, -30)
        terms[pos[4]] = rng.choice([1, -1]) * base * 2.0 ** rng.randint(-110, -60)
        want = exact_f32(terms)
        missed += lowering(terms) != want
        missed_plain += plain(terms) != want
    print(f"rows {rows}: TwoSum pairs missed {missed}, plain f64 sum missed {missed_plain}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
