"""On the GPU machine: where the eager op's host time goes (cProfile over
200 training steps and 200 forwards at T=4096, H=16, D=128, documents of
1024, with cu_seqlens_host; the GPU is synchronized after each step, as in
bench/python-op.py). Prints the functions with the most own time.

  FLAMIA_LIBRARY_DIR=build-gpu/lib FLAMIA_KERNEL_DIR=.device/py-kernels \
  PYTHONPATH=python python bench/python-op-profile.py
"""
import cProfile, pstats

import torch

import flamia

dev = "cuda"
T, H, D, doc = 4096, 16, 128, 1024
g = torch.Generator(device=dev).manual_seed(0)
q, k, v = (torch.randn(T, H, D, device=dev, generator=g).to(torch.bfloat16)
           .requires_grad_() for _ in range(3))
cu = torch.arange(0, T + 1, doc, dtype=torch.int32, device=dev)
host = cu.cpu()
dout = torch.randn_like(q)


def step():
    out = flamia.flash_attn_varlen_func(q, k, v, cu, cu, doc, doc,
                                        cu_seqlens_host=host)
    out.backward(dout)
    torch.cuda.synchronize()


def forward():
    with torch.no_grad():
        flamia.flash_attn_varlen_func(q, k, v, cu, cu, doc, doc,
                                      cu_seqlens_host=host)
    torch.cuda.synchronize()


for name, fn in (("training step", step), ("forward", forward)):
    for _ in range(10):
        fn()
    p = cProfile.Profile()
    p.enable()
    for _ in range(200):
        fn()
    p.disable()
    print(f"== {name}: 200 calls")
    pstats.Stats(p).sort_stats("tottime").print_stats(18)
