"""Shared helpers of the Python op's tests (python/tests, run by
scripts/python-tests.sh in `make test`)."""
from __future__ import annotations

import os
import pathlib

import pytest
import torch

ROOT = pathlib.Path(__file__).resolve().parents[2]


def tools_dir() -> pathlib.Path:
    """Where flamia-ref and flamia-compile are ($FLAMIA_TOOLS_DIR, or the
    checkout's build/bin)."""
    return pathlib.Path(os.environ.get("FLAMIA_TOOLS_DIR",
                                       ROOT / "build" / "bin"))


def make_batch(lengths, hq, hkv, d, seed=0, device="cpu", scale=1.0):
    """Packed bf16 q, k, v and int32 cu_seqlens for documents `lengths`."""
    g = torch.Generator().manual_seed(seed)
    T = sum(lengths)
    q = (torch.randn(T, hq, d, generator=g) * scale).to(torch.bfloat16)
    k = (torch.randn(T, hkv, d, generator=g) * scale).to(torch.bfloat16)
    v = torch.randn(T, hkv, d, generator=g).to(torch.bfloat16)
    cu = torch.tensor([0] + list(torch.tensor(lengths).cumsum(0).tolist()),
                      dtype=torch.int32)
    return q.to(device), k.to(device), v.to(device), cu.to(device)


def sdpa_float64(q, k, v, cu, causal, softmax_scale=None):
    """Exact attention in float64 with torch's SDPA (an independent
    definition): each query attends to its own document's keys (and only to
    earlier ones when causal)."""
    T, hq, d = q.shape
    hkv = k.shape[1]
    doc = torch.repeat_interleave(
        torch.arange(cu.numel() - 1), (cu[1:] - cu[:-1]).long())
    mask = doc[:, None] == doc[None, :]
    if causal:
        mask &= torch.ones(T, T, dtype=torch.bool).tril()
    rep = hq // hkv
    qd = q.double().transpose(0, 1)                          # [Hq, T, D]
    kd = k.double().repeat_interleave(rep, 1).transpose(0, 1)
    vd = v.double().repeat_interleave(rep, 1).transpose(0, 1)
    out = torch.nn.functional.scaled_dot_product_attention(
        qd, kd, vd, attn_mask=mask, scale=softmax_scale)
    return out.transpose(0, 1)                               # [T, Hq, D]


def rel_l2(a, b) -> float:
    a, b = a.double(), b.double()
    return ((a - b).norm() / b.norm().clamp_min(1e-300)).item()


requires_cuda = pytest.mark.skipif(not torch.cuda.is_available(),
                                   reason="needs a CUDA GPU")
