"""One FlashAttention-4 (CuTe DSL) call inside a profiler range, for Nsight Compute.

Runs FA4's varlen forward (or forward then backward) on one of anchors_h200.py's workloads
(the same document lengths), warms up so that the CuTe DSL kernels are compiled and cached
outside the range, then brackets exactly one call with cudaProfilerStart/Stop, so that
`ncu --profile-from-start off` sees FA4's kernels only.
Usage: python3 bench/fa4-profile-driver.py WORKLOAD HEAD_DIM fwd|bwd [--deterministic]
(WORKLOAD: single32k, fixed2k or lognormal1k; H = 16, T = 32768, causal, bf16).
"""
import os, sys
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import anchors_h200 as anchors  # noqa: E402  (its workloads and document lengths)
from flash_attn.cute import flash_attn_varlen_func as fa4  # noqa: E402

kind, d, what = sys.argv[1], int(sys.argv[2]), sys.argv[3]
det = "--deterministic" in sys.argv[4:]
lens = next(l for k, t, h, dd, l in anchors.workloads() if k == kind and dd == d)
total, h = sum(lens), 16
dev = "cuda"
torch.manual_seed(0)
q = torch.randn(total, h, d, device=dev, dtype=torch.bfloat16, requires_grad=True)
k = torch.randn_like(q, requires_grad=True)
v = torch.randn_like(q, requires_grad=True)
do = torch.randn_like(q)
cu = torch.tensor([0] + list(__import__("itertools").accumulate(lens)), device=dev,
                  dtype=torch.int32)
mx = max(lens)


def forward():
    o = fa4(q, k, v, cu_seqlens_q=cu, cu_seqlens_k=cu, max_seqlen_q=mx, max_seqlen_k=mx,
            causal=True, deterministic=det)
    return o[0] if isinstance(o, tuple) else o


for _ in range(3):  # compile and cache every kernel of the call
    o = forward()
    if what == "bwd":
        torch.autograd.grad(o, (q, k, v), do)
torch.cuda.synchronize()
o = forward() if what == "bwd" else None
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStart()
if what == "fwd":
    forward()
else:
    torch.autograd.grad(o, (q, k, v), do)
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStop()
print(f"fa4 {what} {kind} D={d} docs={len(lens)} T={total} H={h} deterministic={det}: profiled")
