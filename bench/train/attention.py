"""The attention variants of the training study (docs/training.md).

Every variant is a function (q, k, v, cu_seqlens, max_seqlen) -> out on
packed [T, H, D] bfloat16 tensors, causal within each document, GQA when k
and v have fewer heads than q:

  bf16    FlashAttention-4 (flash_attn.cute) when it imports, else PyTorch's
          varlen_attn (FlashAttention-2); on the CPU, float32 SDPA per
          document. The baseline.
  flamia  FLAMIA's `mxfp8` recipe (flamia.flash_attn_varlen_func): MXFP8
          forward and backward with the causal safeguards (per-token Q
          scales, document-local token blocks, the bf16 safe block).
  leaky   A deliberately leaky recipe, for the leak study only: q, k and v
          are quantized to E4M3 with one E8M0 scale per 32x32 token block
          (32 consecutive tokens of a document x 32 channels, the contract's
          scale rule), with no safe block, then attention runs in bf16 as
          `bf16`. A token's scale is the maximum over up to 31 *later*
          tokens of its block, so its output depends on the future. Gradients
          pass straight through the rounding (as the FLAMIA backward, which
          does not differentiate scales either).
  leaky-fp4  The same with E2M1 elements (MXFP4). With E4M3, a power-of-two
          scale changes only how values 2^15 below the block's maximum
          round (E4M3's normal range spans 2^-6..448), so the future reaches
          the past through the subnormals only; E2M1 spans 0.5..6, so a
          later token's large value coarsens or flushes its block-mates.
  mxfp8-forward, mxfp8-backward  For attributing flamia's loss: the value
          of FLAMIA's mxfp8 forward with the gradient of bf16 attention at
          the same operands, and the reverse (both computed every call).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

BLOCK = 32          # token-block and channel-block size of the leaky recipes
# Element formats of the leaky recipes: (largest value m, frexp of m).
FORMATS = {"e4m3": (448.0, 0.875, 9), "e2m1": (6.0, 0.75, 3)}
E2M1_VALUES = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)


def _expand_kv(k, v, hq):
    r = hq // k.shape[1]
    if r == 1:
        return k, v
    return k.repeat_interleave(r, dim=1), v.repeat_interleave(r, dim=1)


def _sdpa_per_document(q, k, v, cu):
    """float32 causal attention, one SDPA call per document (CPU path)."""
    k, v = _expand_kv(k, v, q.shape[1])
    out = torch.empty_like(q)
    bounds = cu.tolist()
    for s, e in zip(bounds[:-1], bounds[1:]):
        if e == s:
            continue
        qd, kd, vd = (t[s:e].transpose(0, 1).float() for t in (q, k, v))
        o = F.scaled_dot_product_attention(qd, kd, vd, is_causal=True)
        out[s:e] = o.transpose(0, 1).to(q.dtype)
    return out


def errors_vs_float32(attention, q, k, v, do, cu, max_len, cu_host=None):
    """Relative L2 error of `attention`'s O, dQ, dK, dV against float32
    causal attention per document, at operands q, k, v and output gradient
    do."""
    results = []
    for exact in (False, True):
        qq, kk, vv = (t.float().requires_grad_() if exact else
                      t.clone().requires_grad_() for t in (q, k, v))
        o = (_sdpa_per_document(qq, kk, vv, cu) if exact else
             attention(qq, kk, vv, cu, max_len, cu_host))
        o.backward(do.to(o.dtype))
        results.append([t.detach().double() for t in (o, qq.grad, kk.grad,
                                                        vv.grad)])
    return {n: ((x - r).norm() / r.norm()).item()
            for n, x, r in zip(("O", "dQ", "dK", "dV"), *results)}


def _bf16_cuda():
    try:
        from flash_attn.cute import flash_attn_varlen_func as fa4

        def run(q, k, v, cu, max_len, cu_host=None):
            o = fa4(q, k, v, cu_seqlens_q=cu, cu_seqlens_k=cu,
                    max_seqlen_q=max_len, max_seqlen_k=max_len, causal=True)
            return o[0] if isinstance(o, tuple) else o
        return run, "fa4-cute"
    except Exception:  # noqa: BLE001 - any import failure means no FA4
        pass
    from torch.nn.attention.varlen import varlen_attn

    def run(q, k, v, cu, max_len, cu_host=None):
        k, v = _expand_kv(k, v, q.shape[1])
        return varlen_attn(q, k, v, cu, cu, max_len, max_len,
                           window_size=(-1, 0))  # causal
    return run, "torch-varlen_attn"


def bf16_attention(device: str):
    """(function, name) of the bf16 baseline on `device`."""
    if device == "cuda":
        return _bf16_cuda()
    return (lambda q, k, v, cu, max_len, cu_host=None:
            _sdpa_per_document(q, k, v, cu),
            "sdpa-float32-per-document")


def token_blocks(cu: torch.Tensor, total: int,
                 cu_host: torch.Tensor | None = None):
    """Index of each token's 32-token document-local block, and the number
    of blocks: blocks start at each document's first token. cu_host (cu on
    the CPU, when the caller has it) spares a device read."""
    lens = cu[1:] - cu[:-1]
    nblocks = (lens + BLOCK - 1) // BLOCK
    base = torch.cumsum(nblocks, 0) - nblocks
    t = torch.arange(total, device=cu.device)
    doc = torch.searchsorted(cu[1:].long(), t, right=True)
    host = cu_host if cu_host is not None else cu.cpu()
    count = int(((host[1:] - host[:-1] + BLOCK - 1) // BLOCK).sum())
    return base[doc] + (t - cu[doc]) // BLOCK, count


def mx_scale_exponent(amax: torch.Tensor, fmt: str = "e4m3") -> torch.Tensor:
    """The contract's no-clipping E8M0 rule (docs/numerics.md section 2):
    the smallest e with amax / 2^e <= m (448 for E4M3, 6 for E2M1),
    exactly (frexp, no log2), clamped to [-127, 127]; amax = 0 gives
    -127."""
    fa, ea = torch.frexp(amax.float())
    _, fm, em = FORMATS[fmt]                # m = fm * 2^em
    e = ea - em + (fa > fm).to(ea.dtype)
    e = torch.where(amax > 0, e, torch.full_like(e, -127))
    return e.clamp(-127, 127)


def round_e2m1(x: torch.Tensor) -> torch.Tensor:
    """x (|x| <= 6) to the nearest E2M1 value, ties to even mantissa."""
    grid = torch.tensor(E2M1_VALUES, device=x.device)
    mids = (grid[1:] + grid[:-1]) / 2
    a = x.abs()
    idx = torch.bucketize(a, mids)          # a == mid: the lower value
    # Ties whose lower value has an odd mantissa (0.5, 1.5, 3) go up.
    odd = torch.tensor([False, True, False, True, False, True, False, True],
                       device=x.device)
    tie = (idx < len(mids)) & (a == mids[idx.clamp(max=len(mids) - 1)])
    idx = idx + (tie & odd[idx]).long()
    return torch.copysign(grid[idx], x)


def quantize_token_blocks(x: torch.Tensor, block: torch.Tensor,
                          nblocks: int, fmt: str = "e4m3") -> torch.Tensor:
    """x [T, H, D] quantized to `fmt` (E4M3 or E2M1) with one E8M0 scale per
    (32-token block, head, 32 channels), returned dequantized in x's
    dtype."""
    T, H, D = x.shape
    g = x.float().reshape(T, H, D // BLOCK, BLOCK)
    amax_tok = g.abs().amax(-1)                             # [T, H, G]
    amax = torch.zeros(nblocks, H, D // BLOCK, device=x.device)
    amax.index_reduce_(0, block, amax_tok, "amax", include_self=True)
    e = mx_scale_exponent(amax, fmt)[block].unsqueeze(-1)   # [T, H, G, 1]
    scaled = torch.ldexp(g, -e.float())
    elems = (scaled.to(torch.float8_e4m3fn).float() if fmt == "e4m3"
             else round_e2m1(scaled))
    return torch.ldexp(elems, e.float()).reshape(T, H, D).to(x.dtype)


def straight_through(x: torch.Tensor, xq: torch.Tensor) -> torch.Tensor:
    return x + (xq - x).detach()


def make_attention(name: str, device: str):
    """(function, description) of variant `name` on `device`."""
    if name == "bf16":
        return bf16_attention(device)
    if name == "flamia":
        import flamia

        def run(q, k, v, cu, max_len, cu_host=None):
            return flamia.flash_attn_varlen_func(
                q, k, v, cu, cu, max_len, max_len, causal=True,
                recipe="mxfp8", safe_block=128, cu_seqlens_host=cu_host)
        return run, "flamia-mxfp8"
    if name in HYBRID:
        # The value of one and the gradient of the other (the
        # straight-through sum a.detach() + b - b.detach()): which half of
        # the recipe costs the quality.
        flamia_fn, _ = make_attention("flamia", device)
        base, base_name = bf16_attention(device)
        value_from_flamia = name == "mxfp8-forward"

        def run(q, k, v, cu, max_len, cu_host=None):
            a = flamia_fn(q, k, v, cu, max_len, cu_host)
            b = base(q, k, v, cu, max_len)
            if value_from_flamia:
                return a.detach() + (b - b.detach())
            return b.detach() + (a - a.detach())
        return run, (f"{name}: value of "
                     f"{'flamia-mxfp8' if value_from_flamia else base_name}, "
                     f"gradient of "
                     f"{base_name if value_from_flamia else 'flamia-mxfp8'}")
    if name in LEAKY:
        base, base_name = bf16_attention(device)
        fmt = LEAKY[name]

        def run(q, k, v, cu, max_len, cu_host=None):
            block, nblocks = token_blocks(cu, q.shape[0], cu_host)
            q, k, v = (straight_through(t, quantize_token_blocks(
                t, block, nblocks, fmt)) for t in (q, k, v))
            return base(q, k, v, cu, max_len)
        return run, f"{name}-token-blocks-{fmt}+{base_name}"
    raise ValueError(f"unknown attention variant '{name}' "
                     f"({', '.join(VARIANTS)})")


LEAKY = {"leaky": "e4m3", "leaky-fp4": "e2m1"}
HYBRID = ("mxfp8-forward", "mxfp8-backward")
VARIANTS = ("bf16", "flamia", *LEAKY, *HYBRID)
