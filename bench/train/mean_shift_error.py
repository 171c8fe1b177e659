"""Why the trained model's attention gradients are less accurate under
`mxfp8` than random inputs suggest (docs/training.md): the relative L2 error
of FLAMIA's O, dQ, dK, dV (the CPU path, the contract) against float32
attention, on N(0, 1) inputs and on the same inputs with a common offset
added to every token of K and/or Q (a per-channel mean, as trained models'
projections have). One document of T = 1024 tokens, D = 128, causal.

  FLAMIA_LIBRARY_DIR=build/lib PYTHONPATH=python:bench/train \\
      python bench/train/mean_shift_error.py
"""
import torch

import flamia
from attention import errors_vs_float32

T, H, D = 1024, 1, 128


def errors(k_mean: float, q_mean: float, seed: int = 0) -> dict:
    g = torch.Generator().manual_seed(seed)
    q = (torch.randn(T, H, D, generator=g) + q_mean).bfloat16()
    k = (torch.randn(T, H, D, generator=g) + k_mean).bfloat16()
    v = torch.randn(T, H, D, generator=g).bfloat16()
    do = torch.randn(T, H, D, generator=g).bfloat16()
    cu = torch.tensor([0, T], dtype=torch.int32)
    return errors_vs_float32(
        lambda q, k, v, cu, m, h: flamia.flash_attn_varlen_func(
            q, k, v, cu, cu, m, m), q, k, v, do, cu, T)

if __name__ == "__main__":
    print("| K offset | Q offset | O rel L2 | dQ rel L2 | dK rel L2 | dV rel L2 |")
    print("|---|---|---|---|---|---|")
    for km, qm in ((0, 0), (1, 0), (3, 0), (0, 3), (3, 3)):
        e = errors(km, qm)
        print(f"| {km} | {qm} | " + " | ".join(f"{e[n]:.4f}" for n in
                                              ("O", "dQ", "dK", "dV")) + " |")
