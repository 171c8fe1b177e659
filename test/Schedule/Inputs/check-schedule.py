"""Independent checks of `flamia-ref schedule` output files, in NumPy.

  check-schedule.py items ITEMS.npy CU.npy HEADS KV_HEADS BF16_WEIGHT SMS
      For causal schedules with block_m = block_n = safe_block = 128 and
      head dim 128, where an item's cost is 1 + t + BF16_WEIGHT for query tile
      t: checks every (document, tile, head) appears once with the right rows,
      KV head and block base, that costs do not increase, and prints the
      greedy persistent-grid makespan and the lower bound, simulated here.
  check-schedule.py metadata META.bin ITEMS.npy
      Checks the serialized buffer's header and sections against ITEMS.npy.
  check-schedule.py lognormal TOKENS
      Prints the lognormal1k cu_seqlens, generated here from the spec.
"""
import heapq
import math
import sys

import numpy as np


def items_check(items_path, cu_path, hq, hkv, w, sms):
    items = np.load(items_path)
    cu = np.load(cu_path).astype(np.int64)
    assert items.dtype == np.int32 and items.shape[1] == 8, items.shape
    expected = set()
    block_base = np.concatenate([[0], np.cumsum((np.diff(cu) + 31) // 32)])
    for d in range(len(cu) - 1):
        for t in range((cu[d + 1] - cu[d] + 127) // 128):
            for h in range(hq):
                expected.add((int(cu[d]), int(cu[d + 1]), t, h))
    seen = set()
    costs = []
    for q_start, q_rows, ds, de, qh, kv, base, t in items.tolist():
        key = (ds, de, t, qh)
        assert key in expected and key not in seen, key
        seen.add(key)
        assert q_start == ds + 128 * t and q_rows == min(128, de - q_start)
        assert kv == qh // (hq // hkv)
        d = int(np.searchsorted(cu, ds, side="right")) - 1
        assert base == block_base[d], (base, block_base[d])
        costs.append(1 + t + w)
    assert seen == expected
    assert all(a >= b for a, b in zip(costs, costs[1:]))
    free = [(0.0, c) for c in range(sms)]
    makespan = 0.0
    for c in costs:
        t0, cta = heapq.heappop(free)
        makespan = max(makespan, t0 + c)
        heapq.heappush(free, (t0 + c, cta))
    bound = max(sum(costs) / sms, max(costs))
    print(f"checked {len(costs)} items")
    print(f"makespan {makespan:g} bound {bound:.3f}")


def metadata_check(meta_path, items_path):
    raw = open(meta_path, "rb").read()
    items = np.load(items_path)
    h = np.frombuffer(raw[:80], dtype="<i4")
    assert raw[:4] == b"FLVS"
    assert h[2] == 80 and h[3] == 32 and h[4] == len(items)
    assert h[18] == len(raw)
    got = np.frombuffer(raw[h[16]:h[16] + 32 * h[4]], dtype="<i4").reshape(-1, 8)
    assert (got == items).all()
    bases = np.frombuffer(raw[h[17]:h[17] + 4 * (h[5] + 1)], dtype="<i4")
    print("header", " ".join(str(int(x)) for x in h))
    print("block bases", " ".join(str(int(x)) for x in bases))


def lognormal(tokens):
    mask = (1 << 64) - 1
    state = 0x464C414D4941

    def next64():
        nonlocal state
        state = (state + 0x9E3779B97F4A7C15) & mask
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        return z ^ (z >> 31)

    def uniform():
        return (next64() >> 11) * 2.0**-53

    cu, at = [0], 0
    while at < tokens:
        u1 = 1.0 - uniform()
        u2 = uniform()
        z = math.sqrt(-2.0 * math.log(u1)) * math.cos(2 * math.pi * u2)
        length = max(64, math.floor(math.exp(math.log(1024.0) + z) + 0.5))
        at = min(tokens, at + length)
        cu.append(at)
    print(" ".join(str(x) for x in cu))


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "items":
        a = sys.argv[2:]
        items_check(a[0], a[1], int(a[2]), int(a[3]), float(a[4]), int(a[5]))
    elif mode == "metadata":
        metadata_check(sys.argv[2], sys.argv[3])
    elif mode == "lognormal":
        lognormal(int(sys.argv[2]))
