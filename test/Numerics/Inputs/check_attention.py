#!/usr/bin/env python3
"""Independent numpy + ml_dtypes check of `flamia-ref attention`.

  check_attention.py --recipe mxfp8|nvfp4-mixed|none [--causal] [--cu CU.npy]
                     [--safe-block N] [--softmax-scale S] [--backward]
                     INPREFIX OUTPREFIX

INPREFIX.{q,k,v,do}.npy are the inputs, OUTPREFIX.{o,lse,dq,dk,dv}.npy what
flamia-ref wrote.

recipe mxfp8, forward: recomputed from the precise definition in
docs/numerics.md (Q per-token 1x32, K and V document-local 32x32 blocks with
the E8M0 scale rule, via ml_dtypes; document-local key tiles of 128; the
safe-block bf16 path; online softmax in float32 with exp2 of one fused
multiply-add per score and the row maximum scaled rounded up; P in E4M3 with
the fixed 2^8 scale) and compared BIT FOR BIT. Dot products and tile sums are
formed in float64 where that is provably exact (every sum's absolute value
below 2^(52 + smallest product lsb)), else with math.fsum (and exact
rationals at float32 ties), then rounded once to float32 as the definition
says. The backward is compared with the float64
reference below (cosine similarity).

recipe nvfp4-mixed, forward: the same transcription with Q and K in Q K^T
quantized to NVFP4 per token (blocks of 16 channels, scale = the smallest
positive E4M3 value s with amax <= 6 s, elements rounded to E2M1 of x / s,
nearest-even, by a table written here, not by the library's quantizer).

recipe none: an independent float64 attention and its gradients, compared
within 2e-6 relative.
"""
import argparse
import math
import sys
from fractions import Fraction

import ml_dtypes
import numpy as np

F32 = np.float32
LOG2E = F32(1.44269504088896340736)
LN2 = F32(0.693147180559945309417)


def bf16(x):
    return np.asarray(x, F32).astype(ml_dtypes.bfloat16).astype(F32)


def mx_exponent(amax, m=448.0):
    """Smallest e with amax / 2^e <= m, clamped; -127 for 0 (vectorized)."""
    amax = np.asarray(amax, np.float64)
    with np.errstate(divide="ignore"):
        e = np.ceil(np.log2(np.where(amax > 0, amax, 1.0) / m))
    e = np.where(amax > m * 2.0**e, e + 1, e)
    e = np.where(amax <= m * 2.0 ** (e - 1), e - 1, e)
    e = np.where(amax == 0, -127, e)
    return np.clip(e, -127, 127)


def quantize_e4m3(vals, e):
    """Dequantized E4M3 values of vals / 2^e (exact scaling), float64."""
    scaled = (vals.astype(np.float64) * 2.0 ** (-e)).astype(F32)
    q = scaled.astype(ml_dtypes.float8_e4m3fn).astype(np.float64)
    return q * 2.0**e


def quantize_tensor(x, blocks, tb_doc):
    """x [T, H, D] bf16 float32 -> dequantized float64 with 32-channel
    blocks; per-token when blocks is None, else the given token blocks."""
    T, H, D = x.shape
    out = np.zeros((T, H, D), np.float64)
    xr = x.reshape(T, H, D // 32, 32)
    if blocks is None:
        amax = np.max(np.abs(xr), axis=3, keepdims=True)
        e = mx_exponent(amax)
        return quantize_e4m3(xr, e).reshape(T, H, D)
    for (t0, t1) in blocks:
        blk = xr[t0:t1]
        amax = np.max(np.abs(blk), axis=(0, 3), keepdims=True)
        out[t0:t1] = quantize_e4m3(blk, mx_exponent(amax)).reshape(t1 - t0, H, D)
    return out


# Every positive finite E4M3 value, ascending (codes 0x01..0x7E).
E4M3_POSITIVE = np.arange(1, 0x7F, dtype=np.uint8).view(ml_dtypes.float8_e4m3fn).astype(np.float64)
E2M1_GRID = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0])


def round_e2m1(x):
    """Nearest-even E2M1 value of float64 x, saturated to +-6."""
    a = np.minimum(np.abs(x), 6.0)
    idx = np.searchsorted(E2M1_GRID, a)  # first grid value >= a
    hi = E2M1_GRID[np.minimum(idx, 7)]
    lo = E2M1_GRID[np.maximum(idx - 1, 0)]
    d_lo, d_hi = a - lo, hi - a
    lo_code = np.maximum(idx - 1, 0)
    # Ties go to the even code (codes are the grid indices).
    pick_hi = (d_hi < d_lo) | ((d_hi == d_lo) & (lo_code % 2 == 1))
    return np.sign(x) * np.where(pick_hi, hi, lo)


def quantize_nvfp4_per_token(x):
    """x [T, H, D] bf16 float32 -> dequantized float64, 1x16 NVFP4 blocks,
    global scale 1.0 (finite inputs only)."""
    T, H, D = x.shape
    xr = x.reshape(T, H, D // 16, 16).astype(np.float64)
    amax = np.max(np.abs(xr), axis=3, keepdims=True)
    idx = np.searchsorted(6.0 * E4M3_POSITIVE, amax)  # smallest s: amax <= 6 s
    s = np.where(amax == 0, 0.0, E4M3_POSITIVE[np.minimum(idx, len(E4M3_POSITIVE) - 1)])
    q = round_e2m1(np.where(s > 0, xr / np.where(s > 0, s, 1.0), 0.0))
    return (q * s).reshape(T, H, D)


def doc_blocks(cu, size):
    return [(b, min(b + size, cu[d + 1])) for d in range(len(cu) - 1)
            for b in range(cu[d], cu[d + 1], size)]


def lsb_elementwise(x):
    """Exponent of the lowest set significand bit of each nonzero float64
    (x is an odd integer times 2^lsb); a huge value for zeros."""
    m, e = np.frexp(np.abs(x))
    ints = (m * 2.0**53).astype(np.int64)
    low = ints & -ints
    with np.errstate(divide="ignore"):
        tz = np.log2(np.where(low > 0, low, 1).astype(np.float64)).astype(np.int64)
    return np.where(x != 0, e.astype(np.int64) - 53 + tz, 10**6)


def round_fraction_f32(S):
    """RNE of an exact rational to float32 (exact comparisons)."""
    f = np.float32(float(S))
    best = None
    for cand in (np.nextafter(f, F32(-np.inf)), f, np.nextafter(f, F32(np.inf))):
        if not np.isfinite(cand):
            continue
        d = abs(Fraction(float(cand)) - S)
        key = (d, int(cand.view(np.uint32)) & 1)  # ties: even significand
        if best is None or key < best[0]:
            best = (key, cand)
    return best[1]


def mul_up_f32(a, b):
    """The smallest float32 >= a * b (the product of two float32 is exact in
    float64)."""
    exact = np.float64(a) * np.float64(b)
    f = F32(exact)
    if np.float64(f) < exact:
        f = np.nextafter(f, F32(np.inf))
    return f


def fma_f32(s, c, m):
    """fl32(s * c - m) for a float32 vector s and scalars c, m, rounded once:
    s * c is exact in float64; the subtraction's float64 error term (Knuth's
    TwoSum) tells where the float64 difference is inexact, and those
    elements (rare) are rounded from exact rationals."""
    prod = s.astype(np.float64) * np.float64(c)
    neg = -np.float64(m)
    d = prod + neg
    bb = d - prod
    err = (prod - (d - bb)) + (neg - bb)
    out = d.astype(F32)
    for n in np.nonzero(np.isfinite(d) & (err != 0))[0]:
        out[n] = round_fraction_f32(Fraction(float(s[n])) * Fraction(float(c)) - Fraction(float(m)))
    return out


def exp2_f32(x):
    """exp2 in float64 rounded once to float32, results below 2^-126
    flushed to +0 (the reference's exp2f32)."""
    p = np.exp2(np.asarray(x, np.float64)).astype(F32)
    return np.where(p < np.finfo(F32).tiny, F32(0), p).astype(F32)


class ExactnessCheck:
    """fl32 of exact sums of exact float64 products. A float64 sum is used
    where it is provably exact (every partial sum a multiple of 2^lsb below
    2^(lsb + 52)); elsewhere math.fsum (the exact sum correctly rounded to
    double) rounded to float32, which is right unless the double is exactly
    a float32 midpoint: then the exact rational sum decides."""

    def __init__(self):
        self.count = 0
        self.rational = 0

    def round_exact(self, products):
        self.rational += 1
        d = math.fsum(products.tolist())
        f = np.float32(d)
        if not np.isfinite(f) or float(f) == d:
            return f
        other = np.nextafter(f, F32(np.inf) if d > float(f) else F32(-np.inf))
        if d != (float(f) + float(other)) / 2:
            return f
        return round_fraction_f32(sum((Fraction(x) for x in products.tolist()), Fraction(0)))

    def sum_f32(self, prod, axis):
        absum = np.sum(np.abs(prod), axis=axis)
        lo = np.min(lsb_elementwise(prod), axis=axis)
        out = np.asarray(np.sum(prod, axis=axis)).astype(F32)
        exact = (absum == 0) | (absum < 2.0 ** (lo + 52.0))
        self.count += np.size(absum)
        if not np.all(exact):
            moved = np.moveaxis(prod, axis, -1)
            flat_out = out.reshape(-1)
            flat_exact = np.asarray(exact).reshape(-1)
            flat_prod = moved.reshape(-1, moved.shape[-1])
            for n in np.nonzero(~flat_exact)[0]:
                flat_out[n] = self.round_exact(flat_prod[n])
            out = flat_out.reshape(out.shape)
        return out


def quantized_forward(recipe, q, k, v, cu, causal, safe_block, scale, ex):
    T, H, D = q.shape
    Hkv = k.shape[1]
    group = H // Hkv
    qb, kb, vb = (x.astype(np.float64) for x in (q, k, v))
    blocks32 = doc_blocks(cu, 32)
    if recipe == "nvfp4-mixed":
        qq = quantize_nvfp4_per_token(q)
        kq = quantize_nvfp4_per_token(k)
    else:
        qq = quantize_tensor(q, None, None)
        kq = quantize_tensor(k, blocks32, True)
    vq = quantize_tensor(v, blocks32, True)
    c = F32(np.float64(scale) * 1.4426950408889634)
    o = np.zeros((T, H, D), F32)
    lse = np.zeros((H, T), F32)
    doc_of = np.zeros(T, np.int64)
    for d in range(len(cu) - 1):
        doc_of[cu[d]:cu[d + 1]] = d
    for h in range(H):
        g = h // group
        for i in range(T):
            b = cu[doc_of[i]]
            end = i + 1 if causal else cu[doc_of[i] + 1]
            m, l = F32(-np.inf), F32(0)
            acc = np.zeros(D, F32)
            for kt in range(b, end, 128):
                js = np.arange(kt, min(kt + 128, end))
                safe = (safe_block > 0) & ((js - b) // max(safe_block, 1) == (i - b) // max(safe_block, 1))
                qrow = np.where(safe[:, None], qb[i, h][None, :], qq[i, h][None, :])
                krow = np.where(safe[:, None], kb[js, g], kq[js, g])
                s = ex.sum_f32(qrow * krow, axis=1)
                m_new = max(m, mul_up_f32(np.max(s), c))
                alpha = F32(1) if m_new == m else F32(exp2_f32(m - m_new))
                # P x 2^8 directly: exp2(fl32(s c + fl32(8 - m))), the
                # addend rounded once per row.
                addend = F32(F32(8) - m_new)
                p = exp2_f32(fma_f32(s, c, -addend))
                pq = p.astype(ml_dtypes.float8_e4m3fn).astype(np.float64)
                w = np.where(safe, bf16(p).astype(np.float64), pq)
                vrows = np.where(safe[:, None], vb[js, g], vq[js, g])
                pv = ex.sum_f32(w[:, None] * vrows, axis=0)
                row_sum = F32(ex.sum_f32(p.astype(np.float64), axis=0))
                l = F32(alpha * l) + row_sum
                acc = (alpha * acc).astype(F32) + pv
                m = m_new
            o[i, h] = bf16(acc / l)
            # acc and l carry 2^8 (O unchanged); LSE from l / 2^8 (exact).
            lse[h, i] = F32(m + F32(np.log2(np.float64(F32(l) / F32(256))))) * LN2
    return o, lse


def float64_attention(q, k, v, do, cu, causal, scale):
    T, H, D = q.shape
    group = H // k.shape[1]
    q, k, v, do = (x.astype(np.float64) for x in (q, k, v, do))
    o = np.zeros((T, H, D))
    lse = np.zeros((H, T))
    dq, dk, dv = np.zeros_like(q), np.zeros_like(k), np.zeros_like(v)
    for d in range(len(cu) - 1):
        b, e = cu[d], cu[d + 1]
        if e == b:
            continue
        L = e - b
        mask = np.tril(np.ones((L, L), bool)) if causal else np.ones((L, L), bool)
        for h in range(H):
            g = h // group
            s = scale * q[b:e, h] @ k[b:e, g].T
            s = np.where(mask, s, -np.inf)
            mx = s.max(axis=1, keepdims=True)
            p = np.exp(s - mx)
            l = p.sum(axis=1, keepdims=True)
            P = p / l
            o[b:e, h] = P @ v[b:e, g]
            lse[h, b:e] = (mx + np.log(l))[:, 0]
            dP = do[b:e, h] @ v[b:e, g].T
            Dv = np.sum(do[b:e, h] * o[b:e, h], axis=1, keepdims=True)
            dS = P * (dP - Dv)
            dq[b:e, h] = scale * dS @ k[b:e, g]
            dk[b:e, g] += scale * dS.T @ q[b:e, h]
            dv[b:e, g] += P.T @ do[b:e, h]
    return o, lse, dq, dk, dv


def cosine(a, b):
    a, b = a.astype(np.float64).ravel(), b.astype(np.float64).ravel()
    return float(a @ b / np.sqrt((a @ a) * (b @ b)))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--recipe", required=True, choices=["mxfp8", "nvfp4-mixed", "none"])
    p.add_argument("--causal", action="store_true")
    p.add_argument("--cu")
    p.add_argument("--safe-block", type=int, default=128)
    p.add_argument("--softmax-scale", type=float)
    p.add_argument("--backward", action="store_true")
    p.add_argument("--min-cosine", type=float, default=0.99)
    p.add_argument("inprefix")
    p.add_argument("outprefix")
    a = p.parse_args()
    q, k, v, do = (bf16(np.load(f"{a.inprefix}.{n}.npy")) for n in ("q", "k", "v", "do"))
    T, H, D = q.shape
    cu = np.load(a.cu).tolist() if a.cu else [0, T]
    scale = a.softmax_scale if a.softmax_scale else float(F32(1.0 / np.sqrt(D)))
    got = {n: np.load(f"{a.outprefix}.{n}.npy") for n in ("o", "lse")}
    if a.backward:
        got.update({n: np.load(f"{a.outprefix}.{n}.npy") for n in ("dq", "dk", "dv")})
    for n, x in got.items():
        assert x.dtype == np.float32, (n, x.dtype)
    assert got["o"].shape == (T, H, D) and got["lse"].shape == (H, T)
    ref = float64_attention(q, k, v, do, cu, a.causal, scale)
    ok = True
    if a.recipe == "none":
        for n, r in zip(("o", "lse", "dq", "dk", "dv"), ref):
            if n not in got:
                continue
            err = np.max(np.abs(got[n] - r)) / max(np.max(np.abs(r)), 1e-30)
            print(f"none {n}: max relative error vs numpy float64 {err:.1e}")
            ok &= err < 2e-6
    else:
        ex = ExactnessCheck()
        o, lse = quantized_forward(a.recipe, q, k, v, cu, a.causal, a.safe_block, scale, ex)
        for n, mine in (("o", o), ("lse", lse)):
            diff = np.count_nonzero(mine.view(np.uint32) != got[n].view(np.uint32))
            print(f"{a.recipe} {n}: {diff} of {mine.size} elements differ from the numpy transcription")
            ok &= diff == 0
        print(f"{a.recipe}: {ex.count} exact sums ({ex.rational} of them not in plain float64)")
        for n, r in zip(("o", "lse", "dq", "dk", "dv"), ref):
            if n in got:
                c = cosine(got[n], r)
                print(f"{a.recipe} {n}: cosine vs float64 {c:.4f}")
                ok &= c > a.min_cosine
    if not ok:
        print("MISMATCH")
        sys.exit(1)
    print("OK")


if __name__ == "__main__":
    main()
