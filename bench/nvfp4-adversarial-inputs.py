"""Adversarial inputs for the NVFP4 quantizer (recipe nvfp4-mixed): writes
q.npy, k.npy, v.npy (float32 holding bf16 values) and cu.npy to DIR for
`flamia-run --q ... --check`, which compares every copy bit for bit with
the CPU quantizer. Every 16-channel group of Q and K is built to sit on an
edge of the scale rule or of E2M1's rounding:
  - amax exactly 6 s for every UE4M3 code s (subnormal codes 1-7 included),
    one bf16 step above it (the scale moves up a code) and below it;
  - elements exactly on each rounding boundary b s (b = 0.25, 0.75, 1.25,
    1.75, 2.5, 3.5, 5: ties to even), one bf16 step on either side, both
    signs, +0 and -0;
  - amax past 6 x 448 (scale 0x7E, elements saturate to 6), all-zero
    groups (scale 0), bf16 subnormals, groups below the smallest scale.
With --nonfinite, some groups also hold +Inf, -Inf or NaN (scale 0xFF,
codes 0): O and LSE of the queries that read them are NaN on both sides,
so only the copies are expected to pass.
Usage: python3 bench/nvfp4-adversarial-inputs.py DIR [--nonfinite]"""
import sys

import numpy as np

BOUNDARIES = [0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0]


def bf16(x):
    """Round float32 values to bf16 (RNE), returned as float32."""
    a = np.asarray(x, dtype=np.float32).copy()
    u = a.view(np.uint32)
    r = ((u >> 16) & 1) + 0x7FFF
    u = ((u + r) & 0xFFFF0000).astype(np.uint32)
    nan = np.isnan(a)
    out = u.view(np.float32)
    out[nan] = np.nan
    return out


def bf16_step(x, direction):
    """The next bf16 value from x (finite, nonzero) towards +-inf."""
    u = np.float32(x).view(np.uint32) >> 16
    if (x > 0) == (direction > 0):
        u += 1
    else:
        u -= 1
    return np.uint32(u << 16).view(np.float32)


def e4m3_values():
    vals = []
    for code in range(1, 0x7F):
        e, m = code >> 3, code & 7
        vals.append(m / 8 * 2.0 ** -6 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7))
    return vals


def groups(rng, nonfinite):
    """A list of 16-element groups (float32, bf16 values)."""
    out = []
    for s in e4m3_values():
        amax = 6 * s
        for top in (amax, bf16_step(amax, +1), bf16_step(amax, -1)):
            g = np.zeros(16, np.float32)
            g[0] = top
            j = 1
            for b in BOUNDARIES:
                x = b * s
                for v in (x, bf16_step(x, +1), bf16_step(x, -1)):
                    if j < 16 and abs(v) <= top:
                        g[j] = v if j % 2 else -v
                        j += 1
            g[15] = -0.0
            rng.shuffle(g)
            out.append(bf16(g))
    for big in (2688.0, 2700.0, 3000.0, 1e4, 6e4):
        g = bf16(rng.uniform(-big, big, 16).astype(np.float32))
        g[3] = big
        g[4] = -big / 7
        out.append(bf16(g))
    out.append(np.zeros(16, np.float32))
    z = np.zeros(16, np.float32)
    z[::2] = -0.0
    out.append(z)
    # bf16 subnormals and values below the smallest scale's reach.
    out.append(bf16(rng.uniform(-1, 1, 16) * 1e-39))
    out.append(bf16(rng.uniform(-1, 1, 16) * 2.0 ** -12))
    out.append(bf16(rng.uniform(-1, 1, 16) * 2.0 ** -10))
    if nonfinite:
        for bad in (np.inf, -np.inf, np.nan):
            g = bf16(rng.uniform(-3, 3, 16).astype(np.float32))
            g[int(rng.integers(16))] = bad
            out.append(g)
    return out


def main():
    d = sys.argv[1]
    nonfinite = "--nonfinite" in sys.argv[2:]
    rng = np.random.default_rng(29)
    H, D = 2, 128
    per_row = H * D // 16
    gs = groups(rng, nonfinite)
    rows = -(-len(gs) // per_row)
    # Documents that end inside tiles: 1, 17, 129 tokens, then the rest.
    T = max(rows, 160) + 1 + 17 + 129
    q = np.zeros((T, H, D), np.float32)
    k = np.zeros((T, H, D), np.float32)
    flat_q = q.reshape(-1, 16)
    flat_k = k.reshape(-1, 16)
    order = rng.permutation(len(gs))
    for i, gi in enumerate(order):
        flat_q[i] = gs[gi]
        flat_k[len(gs) - 1 - i] = gs[gi]
    # The remaining groups: ordinary values.
    flat_q[len(gs):] = bf16(rng.standard_normal((len(flat_q) - len(gs), 16)))
    flat_k[len(gs):] = bf16(rng.standard_normal((len(flat_k) - len(gs), 16)))
    v = bf16(rng.standard_normal((T, H, D)).astype(np.float32))
    rest = T - 1 - 17 - 129
    cu = np.cumsum([0, 1, 17, 129, rest]).astype(np.int32)
    np.save(f"{d}/q.npy", q)
    np.save(f"{d}/k.npy", k)
    np.save(f"{d}/v.npy", v)
    np.save(f"{d}/cu.npy", cu)
    print(f"T {T}, H {H}, D {D}, {len(gs)} adversarial groups per tensor, "
          f"documents {list(np.diff(cu))}")


main()
