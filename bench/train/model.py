"""A small Llama-style decoder over packed variable-length documents
(docs/training.md): RMSNorm, rotary position embeddings (positions restart
at each document), SwiGLU, grouped-query attention. The attention is a
function from attention.py, so the variants differ in nothing else."""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class Config:
    vocab: int = 8192
    layers: int = 8
    d_model: int = 768
    heads: int = 6
    kv_heads: int = 2
    head_dim: int = 128
    ffn: int = 2048
    rope_base: float = 10000.0


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        xf = x.float()
        xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return (xf * self.weight).to(x.dtype)


def positions_in_documents(cu: torch.Tensor, total: int) -> torch.Tensor:
    t = torch.arange(total, device=cu.device)
    doc = torch.searchsorted(cu[1:].long(), t, right=True)
    return t - cu[doc]


def rope(x: torch.Tensor, pos: torch.Tensor, base: float) -> torch.Tensor:
    """Rotary embedding of x [T, H, D] at positions pos [T] (half split)."""
    d = x.shape[-1]
    inv = base ** (-torch.arange(0, d, 2, device=x.device).float() / d)
    ang = pos.float()[:, None] * inv[None]                 # [T, D/2]
    cos, sin = ang.cos()[:, None], ang.sin()[:, None]
    x1, x2 = x.float()[..., : d // 2], x.float()[..., d // 2:]
    out = torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], -1)
    return out.to(x.dtype)


class Block(nn.Module):
    def __init__(self, c: Config, attention):
        super().__init__()
        self.c, self.attention = c, attention
        self.norm1, self.norm2 = RMSNorm(c.d_model), RMSNorm(c.d_model)
        self.wq = nn.Linear(c.d_model, c.heads * c.head_dim, bias=False)
        self.wk = nn.Linear(c.d_model, c.kv_heads * c.head_dim, bias=False)
        self.wv = nn.Linear(c.d_model, c.kv_heads * c.head_dim, bias=False)
        self.wo = nn.Linear(c.heads * c.head_dim, c.d_model, bias=False)
        self.w_gate = nn.Linear(c.d_model, c.ffn, bias=False)
        self.w_up = nn.Linear(c.d_model, c.ffn, bias=False)
        self.w_down = nn.Linear(c.ffn, c.d_model, bias=False)

    def forward(self, x, pos, cu, max_len, cu_host):
        c, T = self.c, x.shape[0]
        h = self.norm1(x)
        q = rope(self.wq(h).view(T, c.heads, c.head_dim), pos, c.rope_base)
        k = rope(self.wk(h).view(T, c.kv_heads, c.head_dim), pos, c.rope_base)
        v = self.wv(h).view(T, c.kv_heads, c.head_dim)
        o = self.attention(q.bfloat16().contiguous(), k.bfloat16().contiguous(),
                           v.bfloat16().contiguous(), cu, max_len, cu_host)
        x = x + self.wo(o.to(x.dtype).reshape(T, -1))
        h = self.norm2(x)
        return x + self.w_down(F.silu(self.w_gate(h)) * self.w_up(h))


class Decoder(nn.Module):
    def __init__(self, c: Config, attention):
        super().__init__()
        self.c = c
        self.embed = nn.Embedding(c.vocab, c.d_model)
        self.blocks = nn.ModuleList(Block(c, attention) for _ in range(c.layers))
        self.norm = RMSNorm(c.d_model)
        self.head = nn.Linear(c.d_model, c.vocab, bias=False)
        self.apply(self._init)
        for b in self.blocks:  # scaled residual projections (GPT-2)
            for w in (b.wo.weight, b.w_down.weight):
                nn.init.normal_(w, std=0.02 / (2 * c.layers) ** 0.5)

    @staticmethod
    def _init(m):
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, std=0.02)

    def forward(self, tokens: torch.Tensor, cu: torch.Tensor, max_len: int,
                cu_host: torch.Tensor):
        """Logits [T, vocab] of packed tokens [T] with documents cu (int32
        on tokens' device; cu_host: the same on the CPU)."""
        pos = positions_in_documents(cu, tokens.shape[0])
        x = self.embed(tokens)
        for b in self.blocks:
            x = b(x, pos, cu, max_len, cu_host)
        return self.head(self.norm(x))


def document_loss(logits, tokens, cu, reduction="mean"):
    """Next-token cross entropy within documents: the last token of each
    document predicts nothing."""
    T = tokens.shape[0]
    target = torch.roll(tokens, -1)
    valid = torch.ones(T, dtype=torch.bool, device=tokens.device)
    valid[(cu[1:] - 1).long()] = False
    loss = F.cross_entropy(logits.float(), target, reduction="none")
    if reduction == "none":
        return loss, valid
    return loss[valid].mean()
