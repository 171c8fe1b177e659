#!/usr/bin/env python3
"""Writes the binary seeds of fuzz/corpus/ (npy, attention-args); the text
seeds (manifest, expression) are written by hand. Run from anywhere:
  python3 fuzz/make-corpus.py
Only the standard library, so that the seeds do not depend on NumPy's
version; the .npy files are what np.save writes (format 1.0 and 2.0)."""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def npy(descr, shape, payload, version=1):
    dims = "".join(f"{d}, " for d in shape)
    dims = dims[:-2] if len(shape) > 1 else dims[:-1] if shape else ""
    header = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': ({dims}), }}"
    prefix = 10 if version == 1 else 12
    header += " " * ((64 - (prefix + len(header) + 1) % 64) % 64) + "\n"
    size = struct.pack("<H", len(header)) if version == 1 else struct.pack("<I", len(header))
    return b"\x93NUMPY" + bytes([version, 0]) + size + header.encode() + payload


def write(sub, name, data):
    with open(os.path.join(HERE, "corpus", sub, name), "wb") as f:
        f.write(data)


write("npy", "f4-2x3.npy", npy("<f4", [2, 3], struct.pack("<6f", *range(6))))
write("npy", "i4-cu-seqlens.npy", npy("<i4", [4], struct.pack("<4i", 0, 5, 5, 70)))
write("npy", "u1-scalar.npy", npy("|u1", [], b"\x07"))
write("npy", "f8-empty.npy", npy("<f8", [0, 4], b""))
write("npy", "u2-v2-header.npy", npy("<u2", [3], struct.pack("<3H", 1, 2, 65535), version=2))
write("npy", "i8-3d.npy", npy("<i8", [1, 2, 1], struct.pack("<2q", -1, 2**62)))

# attention-args (AttentionArgsFuzzer.cpp): flags, T, Hq, Hkv, D, num_docs,
# softmax_scale, six byte offsets, then cu_seqlens.
def args(flags, T, hq, hkv, d, docs, scale, offsets, cu):
    return (struct.pack("<BqiiiifIIIIII", flags, T, hq, hkv, d, docs, scale, *offsets)
            + struct.pack(f"<{len(cu)}i", *cu))


q, kv = 256 * 4 * 64 * 2, 256 * 2 * 64 * 2
valid = [0, q, q + kv, q + 2 * kv, q + 2 * kv + 16, 2 * q + 2 * kv + 16]
write("attention-args", "valid-two-docs", args(0, 256, 4, 2, 64, 2, 0.0, valid, [0, 100, 256]))
write("attention-args", "valid-checking", args(0x40, 256, 4, 2, 64, 3, 0.125, valid, [0, 0, 129, 256]))
write("attention-args", "empty-batch", args(0, 0, 1, 1, 64, 1, 0.0, [0] * 6, [0, 0]))
write("attention-args", "decreasing", args(0, 256, 4, 2, 64, 2, 0.0, valid, [0, 200, 100]))
write("attention-args", "overlap", args(0, 256, 4, 2, 64, 2, 0.0, valid[:4] + [0, valid[5]], [0, 256]))
write("attention-args", "huge-tokens", args(0, 2**31 - 1, 16, 16, 64, 1, 0.0, valid, [0, 2**31 - 1]))
