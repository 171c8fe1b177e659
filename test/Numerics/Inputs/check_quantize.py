#!/usr/bin/env python3
"""Independent check of `flamia-ref quantize` with numpy + ml_dtypes.

  check_quantize.py --format F --block TxC|tensor [--packed] [--cu CU.npy]
                    IN.npy PREFIX

Recomputes the scale rule of docs/numerics.md from its definition (the
smallest e with amax / 2^e <= m, found from an approximate log2 and then
corrected with exact float64 comparisons; NVFP4: a search over every positive
E4M3 value) and the element codes (ml_dtypes RNE casts for E4M3/E5M2/E2M1 of
the exactly scaled values; an explicit midpoint table for NVFP4's x / s), and
compares PREFIX.data.npy and PREFIX.scales.npy bit for bit.
"""
import argparse
import sys

import ml_dtypes
import numpy as np

E2M1_VALUES = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6], np.float64)


def blocks_of(T, cu, tb, mode):
    if mode == "tensor":
        return [(0, T)]
    if mode == "packed":
        return [(b, min(b + tb, T)) for b in range(0, T, tb)]
    out = []
    for d in range(len(cu) - 1):
        for b in range(cu[d], cu[d + 1], tb):
            out.append((b, min(b + tb, cu[d + 1])))
    return out


def mx_exponent(amax, m):
    if amax == 0:
        return -127
    e = int(np.ceil(np.log2(amax / m)))
    while amax > m * 2.0**e:  # exact in float64
        e += 1
    while amax <= m * 2.0 ** (e - 1):
        e -= 1
    return max(-127, min(127, e))


def e2m1_rne(y):
    """RNE of float64 values to E2M1 codes, saturating, from the midpoints."""
    sign = np.signbit(y).astype(np.uint8) << 3
    a = np.abs(y)
    code = np.zeros(a.shape, np.uint8)
    for k in range(7):
        lo, hi = E2M1_VALUES[k], E2M1_VALUES[k + 1]
        mid = (lo + hi) / 2
        up = (a > mid) | ((a == mid) & (k % 2 == 1))
        code = np.where((a >= lo) & (a <= hi), np.where(up, k + 1, k), code)
    code = np.where(a >= 6, 7, code)
    return (code.astype(np.uint8) | sign).astype(np.uint8)


def element_codes(scaled64, fmt):
    f32 = scaled64.astype(np.float32)
    if fmt == "mxfp8-e4m3":
        return f32.astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
    if fmt == "mxfp8-e5m2":
        return f32.astype(ml_dtypes.float8_e5m2).view(np.uint8)
    if fmt == "mxfp4":
        return f32.astype(ml_dtypes.float4_e2m1fn).view(np.uint8)
    return e2m1_rne(scaled64)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--format", required=True)
    p.add_argument("--block", required=True)
    p.add_argument("--packed", action="store_true")
    p.add_argument("--cu")
    p.add_argument("input")
    p.add_argument("prefix")
    a = p.parse_args()
    x = np.load(a.input)
    T, H, D = x.shape
    data = np.load(a.prefix + ".data.npy")
    scales = np.load(a.prefix + ".scales.npy")
    assert data.dtype == np.uint8 and data.shape == (T, H, D), (data.dtype, data.shape)
    cu = np.load(a.cu).tolist() if a.cu else [0, T]
    if a.block == "tensor":
        mode, tb, C = "tensor", T, D
    else:
        tb, C = (int(v) for v in a.block.split("x"))
        mode = "packed" if a.packed else "doc"
    blocks = blocks_of(T, cu, tb, mode)
    m = {"mxfp8-e4m3": 448.0, "mxfp8-e5m2": 57344.0, "mxfp4": 6.0, "nvfp4": 6.0}[a.format]
    assert scales.dtype == np.uint8 and scales.shape == (len(blocks), H, D // C), (
        scales.shape, (len(blocks), H, D // C))
    e4m3_pos = np.arange(1, 127, dtype=np.uint8).view(ml_dtypes.float8_e4m3fn).astype(np.float64)
    exp_data = np.zeros_like(data)
    exp_scales = np.zeros_like(scales)
    stats = {"blocks": 0, "nan_blocks": 0, "zero_blocks": 0}
    for bi, (t0, t1) in enumerate(blocks):
        for h in range(H):
            for c in range(D // C):
                vals = x[t0:t1, h, c * C:(c + 1) * C].astype(np.float64)
                stats["blocks"] += 1
                if not np.all(np.isfinite(vals)):
                    stats["nan_blocks"] += 1
                    exp_scales[bi, h, c] = 0xFF
                    exp_data[t0:t1, h, c * C:(c + 1) * C] = 0 if a.format in ("mxfp4", "nvfp4") else 0x7F
                    continue
                amax = np.max(np.abs(vals)) if vals.size else 0.0
                stats["zero_blocks"] += amax == 0
                if a.format == "nvfp4":
                    if amax == 0:
                        code, s = 0, 0.0
                    else:
                        fits = np.nonzero(amax <= 6.0 * e4m3_pos)[0]
                        code = int(fits[0]) + 1 if fits.size else 0x7E
                        s = e4m3_pos[code - 1]
                    exp_scales[bi, h, c] = code
                    scaled = vals if s == 0 else vals / s
                else:
                    e = mx_exponent(amax, m)
                    exp_scales[bi, h, c] = e + 127
                    scaled = vals * 2.0 ** (-e)
                exp_data[t0:t1, h, c * C:(c + 1) * C] = element_codes(scaled, a.format)
    ok = True
    if not np.array_equal(scales, exp_scales):
        idx = tuple(int(i) for i in np.argwhere(scales != exp_scales)[0])
        print(f"scale mismatch at {idx}: got {scales[idx]:#x} expected {exp_scales[idx]:#x}")
        ok = False
    if not np.array_equal(data, exp_data):
        idx = tuple(int(i) for i in np.argwhere(data != exp_data)[0])
        print(f"data mismatch at {idx}: got {data[idx]:#x} expected {exp_data[idx]:#x} (x = {x[idx]!r})")
        ok = False
    if not ok:
        sys.exit(1)
    print(f"quantize {a.format} {a.block}{' packed' if a.packed else ''}: "
          f"{stats['blocks']} blocks ({stats['nan_blocks']} NaN, {stats['zero_blocks']} zero), "
          f"{len(blocks)} token blocks, {data.size} codes: bit-identical")


if __name__ == "__main__":
    main()
