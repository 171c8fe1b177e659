#!/usr/bin/env python3
"""flamia.dequantize in flamia-interp against `flamia-ref quantize`.

  check_dequantize.py --format F --block TxC|tensor [--packed] [--cu CU.npy]
                      PREFIX RESULT.npy

Decodes PREFIX.data.npy (element codes) and PREFIX.scales.npy (scale codes)
written by flamia-ref quantize with ml_dtypes, multiplies each element by
its block's scale, and compares with RESULT.npy (flamia-interp's
dequantized float32 tensor) bit for bit.
"""
import argparse
import sys

import ml_dtypes
import numpy as np

E2M1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6], np.float64)


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


def decode_elements(codes, fmt):
    if fmt == "mxfp8-e4m3":
        return codes.view(ml_dtypes.float8_e4m3fn).astype(np.float64)
    if fmt == "mxfp8-e5m2":
        return codes.view(ml_dtypes.float8_e5m2).astype(np.float64)
    sign = np.where(codes & 8, -1.0, 1.0)
    return sign * E2M1[codes & 7]


def decode_scales(codes, fmt):
    if fmt == "nvfp4":
        return codes.view(ml_dtypes.float8_e4m3fn).astype(np.float64)
    return np.where(codes == 255, np.nan, np.exp2(codes.astype(np.float64) - 127))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--format", required=True)
    ap.add_argument("--block", required=True)
    ap.add_argument("--packed", action="store_true")
    ap.add_argument("--cu")
    ap.add_argument("prefix")
    ap.add_argument("result")
    a = ap.parse_args()
    data = np.load(a.prefix + ".data.npy")
    scales = np.load(a.prefix + ".scales.npy")
    result = np.load(a.result)
    T, H, D = data.shape
    cu = list(np.load(a.cu)) if a.cu else [0, T]
    if a.block == "tensor":
        tb, cb, mode = T, D, "tensor"
    else:
        tb, cb = (int(x) for x in a.block.split("x"))
        mode = "packed" if a.packed else "doc"
    values = decode_elements(data, a.format)
    expected = np.empty((T, H, D), np.float64)
    for n, (b, e) in enumerate(blocks_of(T, cu, tb, mode)):
        for t in range(b, e):
            for c in range(D // cb):
                s = decode_scales(scales[n, :, c], a.format)[:, None]
                expected[t, :, c * cb:(c + 1) * cb] = values[t, :, c * cb:(c + 1) * cb] * s
    expected = expected.astype(np.float32)
    same = expected.view(np.uint32) == result.view(np.uint32)
    bad = int((~same).sum())
    print(f"dequantize {a.format} {a.block}{' packed' if a.packed else ''}: "
          f"{bad} of {same.size} elements differ from flamia-ref quantize")
    if bad:
        idx = tuple(int(i) for i in np.argwhere(~same)[0])
        print(f"first at {idx}: {result[idx]} vs {expected[idx]}")
        print("MISMATCH")
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
