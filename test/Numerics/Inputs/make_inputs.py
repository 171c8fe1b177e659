#!/usr/bin/env python3
"""Deterministic .npy inputs for the flamia-ref lit tests.

  make_inputs.py tensor OUT.npy --shape T,H,D [--seed S] [--dtype float32]
                 [--specials] [--outliers]
  make_inputs.py cu OUT.npy 0,5,5,64 [--dtype int32]
  make_inputs.py attn PREFIX --tokens T --heads H --kv-heads HKV
                 --head-dim D [--seed S] [--outliers]
      writes PREFIX.q.npy PREFIX.k.npy PREFIX.v.npy PREFIX.do.npy

Values are bf16 (float32 arrays whose low 16 bits are zero).
"""
import argparse

import ml_dtypes
import numpy as np


def bf16(x):
    return np.asarray(x, np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)


def tensor(args):
    shape = tuple(int(s) for s in args.shape.split(","))
    rng = np.random.default_rng(args.seed)
    x = rng.standard_normal(shape).astype(np.float32)
    if args.outliers and len(shape) == 3:
        x[:, :, 3] *= 100.0  # an outlier channel
        x[5::37] *= 50.0  # outlier tokens
    if args.specials and len(shape) == 3:
        T, H, D = shape
        # A zero block, a NaN, an inf, tiny values (E4M3 subnormals once
        # scaled), exact ties, and huge values.
        x[0:5, 0, :] = 0.0
        x[0:2, 0, 0] = -0.0
        if T > 40:
            x[40, 0, 1] = np.nan
        if T > 41 and H > 1:
            x[41, 1, 2] = -np.inf
        if T > 8:
            x[8, 0, :] = np.float32(2.0**-20) * np.arange(D, dtype=np.float32)
            x[8, 0, 0] = 448.0
            x[9, 0, :16] = [17, 19, -17, 448, 0.25, 0.75, 1.25, 2.5, 5, 6,
                            3 * 2.0**-10, 2.0**-10, 1e-30, -1e-30, 3.5, 1.75]
        if T > 12:
            x[12, -1, :] = 3.0e38 * np.sign(x[12, -1, :])
    x = bf16(x) if args.dtype == "float32" else x.astype(args.dtype)
    np.save(args.out, x)


def cu(args):
    values = [int(v) for v in args.values.split(",")]
    np.save(args.out, np.asarray(values, dtype=args.dtype))


def attn(args):
    rng = np.random.default_rng(args.seed)
    T, H, Hkv, D = args.tokens, args.heads, args.kv_heads, args.head_dim
    q = rng.standard_normal((T, H, D)).astype(np.float32)
    k = rng.standard_normal((T, Hkv, D)).astype(np.float32)
    v = rng.standard_normal((T, Hkv, D)).astype(np.float32)
    do = rng.standard_normal((T, H, D)).astype(np.float32)
    if args.outliers:
        k[:, :, 3] *= 100.0
        v[7::61] *= 100.0
    for name, x in (("q", q), ("k", k), ("v", v), ("do", do)):
        np.save(f"{args.prefix}.{name}.npy", bf16(x))


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("tensor")
    t.add_argument("out")
    t.add_argument("--shape", required=True)
    t.add_argument("--seed", type=int, default=1)
    t.add_argument("--dtype", default="float32")
    t.add_argument("--specials", action="store_true")
    t.add_argument("--outliers", action="store_true")
    c = sub.add_parser("cu")
    c.add_argument("out")
    c.add_argument("values")
    c.add_argument("--dtype", default="int32")
    a = sub.add_parser("attn")
    a.add_argument("prefix")
    a.add_argument("--tokens", type=int, required=True)
    a.add_argument("--heads", type=int, required=True)
    a.add_argument("--kv-heads", type=int, required=True)
    a.add_argument("--head-dim", type=int, required=True)
    a.add_argument("--seed", type=int, default=1)
    a.add_argument("--outliers", action="store_true")
    args = p.parse_args()
    {"tensor": tensor, "cu": cu, "attn": attn}[args.cmd](args)


if __name__ == "__main__":
    main()
