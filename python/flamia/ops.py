"""FLAMIA attention as PyTorch operators.

Two custom operators (torch.library.custom_op), each with a fake (meta)
implementation for torch.compile and a CPU and a CUDA kernel:
  flamia::varlen_attn_fwd  (q, k, v, cu_seqlens_q, cu_seqlens_k, ...) -> (out, lse)
  flamia::varlen_attn_bwd  (dout, q, k, v, out, lse, ...) -> (dq, dk, dv)
and autograd joining them. The forward saves q, k, v, out and lse (the CUDA
runtime keeps the quantized copies of q, k, v for the backward); lse is not
differentiable, as in flash-attn.

CPU tensors run the CPU reference of the numerics contract (exact, slow);
CUDA tensors run the compiled kernels on the current stream.
"""
from __future__ import annotations

from typing import Optional

import torch
from torch import Tensor

from . import _reference

_DEVICES = ("cpu", "cuda")


# cu_seqlens' values as the last eager call read them, by tensor identity:
# what a call captured in a CUDA graph uses (it cannot read the device).
_host_values: "dict[tuple, list]" = {}


def _host(cu: Tensor, known: bool = False) -> list:
    """cu_seqlens on the host: read (one synchronization on CUDA), or, while
    a CUDA graph is being captured or when `known` (the backward of a
    forward that read this tensor, which autograd kept alive and unchanged:
    its version would differ), as the last eager call read it."""
    if cu.device.type == "cpu":
        return cu.tolist()
    key = (cu.device.index, cu.data_ptr(), cu.numel(), cu._version)
    if known and key in _host_values:
        return _host_values[key]
    if torch.cuda.is_current_stream_capturing():
        if key not in _host_values:
            raise ValueError(
                "cu_seqlens is on the GPU and this call is being captured in "
                "a CUDA graph, where FLAMIA cannot read it: run the same call "
                "(the same cu_seqlens tensor) once before capturing, as "
                "torch.cuda.graph's warm-up does")
        return _host_values[key]
    values = cu.cpu().tolist()
    if len(_host_values) >= 256:
        _host_values.clear()
    _host_values[key] = values
    return values


def _check_documents(c: list, T: int, max_seqlen: int, which: str) -> None:
    """max_seqlen must cover every document; the rest of cu_seqlens' rule
    (starts at 0, non-decreasing, ends at T) is the library's."""
    if len(c) < 2 or c[0] != 0 or c[-1] != T or any(
            b < a for a, b in zip(c, c[1:])):
        return  # the library names the problem
    longest = max(b - a for a, b in zip(c, c[1:]))
    if max_seqlen < longest:
        doc = next(i for i, (a, b) in enumerate(zip(c, c[1:]))
                   if b - a == longest)
        raise ValueError(
            f"max_seqlen_{which} is {max_seqlen} but document {doc} of "
            f"cu_seqlens_{which} has {longest} tokens")


def _given_host(cu: Tensor, host: Tensor) -> list:
    """The caller's host copy of cu_seqlens (flash_attn_varlen_func's
    cu_seqlens_host), checked for what can be checked without reading the
    device: a CPU int32 vector of the same length."""
    if host.device.type != "cpu" or host.dtype != torch.int32 or \
            host.dim() != 1:
        raise ValueError(
            f"cu_seqlens_host must be a 1-D torch.int32 CPU tensor, got "
            f"{host.dtype} of shape {tuple(host.shape)} on {host.device}")
    if host.numel() != cu.numel():
        raise ValueError(
            f"cu_seqlens_host has {host.numel()} entries but cu_seqlens_q "
            f"has {cu.numel()}")
    values = host.tolist()
    if cu.device.type == "cpu" and values != cu.tolist():
        raise ValueError("cu_seqlens_host differs from cu_seqlens_q")
    return values


def _check_values(q, cu_q, cu_k, max_q, max_k, cu_host=None) -> list:
    """cu_seqlens_q's values, after checking them against cu_seqlens_k and
    the max_seqlens. One copy to the host (one synchronization on CUDA) when,
    as usual, cu_seqlens_k is cu_seqlens_q; none when the caller gave the
    values (cu_host) and cu_seqlens_k is cu_seqlens_q."""
    c_q = _host(cu_q) if cu_host is None else _given_host(cu_q, cu_host)
    c_k = c_q if cu_k is cu_q else _host(cu_k)
    if c_k != c_q:
        raise ValueError(
            "cu_seqlens_k must equal cu_seqlens_q: FLAMIA attends within "
            "packed documents (each query to its own document's keys)")
    _check_documents(c_q, q.shape[0], max_q, "q")
    _check_documents(c_k, q.shape[0], max_k, "k")
    return c_q


@torch.library.custom_op("flamia::varlen_attn_fwd", mutates_args=(),
                         device_types=_DEVICES)
def varlen_attn_fwd(q: Tensor, k: Tensor, v: Tensor, cu_seqlens_q: Tensor,
                    cu_seqlens_k: Tensor, max_seqlen_q: int,
                    max_seqlen_k: int, softmax_scale: float, causal: bool,
                    recipe: str, safe_block: int, for_backward: bool,
                    cu_seqlens_host: Optional[Tensor] = None
                    ) -> tuple[Tensor, Tensor]:
    cu_host = _check_values(q, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                            max_seqlen_k, cu_seqlens_host)
    if q.device.type == "cuda":
        from . import _cuda
        return _cuda.forward(q, k, v, cu_seqlens_q, cu_host, softmax_scale,
                             causal, recipe, safe_block, for_backward)
    return _reference.forward(q, k, v, cu_seqlens_q, softmax_scale, causal,
                              recipe, safe_block)


@varlen_attn_fwd.register_fake
def _(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
      softmax_scale, causal, recipe, safe_block, for_backward,
      cu_seqlens_host=None):
    T, Hq, _ = q.shape
    return torch.empty_like(q), q.new_empty((Hq, T), dtype=torch.float32)


@torch.library.custom_op("flamia::varlen_attn_bwd", mutates_args=(),
                         device_types=_DEVICES)
def varlen_attn_bwd(dout: Tensor, q: Tensor, k: Tensor, v: Tensor,
                    out: Tensor, lse: Tensor, cu_seqlens_q: Tensor,
                    cu_seqlens_k: Tensor, max_seqlen_q: int,
                    max_seqlen_k: int, softmax_scale: float, causal: bool,
                    recipe: str, safe_block: int,
                    cu_seqlens_host: Optional[Tensor] = None
                    ) -> tuple[Tensor, Tensor, Tensor]:
    dout = dout.contiguous()
    if q.device.type == "cuda":
        from . import _cuda
        cu_host = (_host(cu_seqlens_q, known=True) if cu_seqlens_host is None
                   else _given_host(cu_seqlens_q, cu_seqlens_host))
        return _cuda.backward(dout, q, k, v, out, lse, cu_seqlens_q, cu_host,
                              softmax_scale, causal, recipe, safe_block)
    return _reference.backward(dout, q, k, v, out, lse, cu_seqlens_q,
                               softmax_scale, causal, recipe, safe_block)


@varlen_attn_bwd.register_fake
def _(dout, q, k, v, out, lse, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
      max_seqlen_k, softmax_scale, causal, recipe, safe_block,
      cu_seqlens_host=None):
    return torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)


def _setup_context(ctx, inputs, output):
    (q, k, v, cu_q, cu_k, max_q, max_k, scale, causal, recipe, safe_block,
     _for_backward, cu_host) = inputs
    out, lse = output
    ctx.save_for_backward(q, k, v, out, lse, cu_q, cu_k, cu_host)
    ctx.params = (max_q, max_k, scale, causal, recipe, safe_block)
    ctx.mark_non_differentiable(lse)


def _backward(ctx, dout, _dlse):
    q, k, v, out, lse, cu_q, cu_k, cu_host = ctx.saved_tensors
    max_q, max_k, scale, causal, recipe, safe_block = ctx.params
    dq, dk, dv = varlen_attn_bwd(dout, q, k, v, out, lse, cu_q, cu_k, max_q,
                                 max_k, scale, causal, recipe, safe_block,
                                 cu_host)
    return (dq, dk, dv) + (None,) * 10


varlen_attn_fwd.register_autograd(_backward, setup_context=_setup_context)


# ---- the flash-attn-shaped entry points ------------------------------------
def _check_tensors(q, k, v, cu_q, cu_k):
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got "
                            f"{type(t).__name__}")
        if t.dtype != torch.bfloat16:
            raise ValueError(f"{name} is {t.dtype}; FLAMIA takes bfloat16 "
                             "q, k, v")
        if t.dim() != 3:
            raise ValueError(f"{name} must be [total_tokens, heads, head_dim],"
                             f" got shape {tuple(t.shape)}")
        if t.device != q.device:
            raise ValueError(f"{name} is on {t.device} but q is on {q.device}")
    if q.device.type not in _DEVICES:
        raise ValueError(f"FLAMIA runs on CPU and CUDA tensors, not "
                         f"{q.device.type}")
    if k.shape != v.shape:
        raise ValueError(f"k has shape {tuple(k.shape)} but v has "
                         f"{tuple(v.shape)}")
    if k.shape[0] != q.shape[0] or k.shape[2] != q.shape[2]:
        raise ValueError(
            f"q has shape {tuple(q.shape)} and k {tuple(k.shape)}: FLAMIA "
            "needs the same tokens and head_dim (self-attention over packed "
            "documents)")
    if k.shape[1] < 1 or q.shape[1] % k.shape[1] != 0:
        raise ValueError(f"{q.shape[1]} query heads are not a multiple of "
                         f"{k.shape[1]} key/value heads")
    for name, c in (("cu_seqlens_q", cu_q), ("cu_seqlens_k", cu_k)):
        if not isinstance(c, Tensor):
            raise TypeError(f"{name} must be a torch.Tensor")
        if c.dtype != torch.int32:
            raise ValueError(f"{name} is {c.dtype}; it must be torch.int32")
        if c.dim() != 1 or c.numel() < 2:
            raise ValueError(f"{name} must be 1-D with at least 2 entries "
                             f"(0 and total_tokens), got shape "
                             f"{tuple(c.shape)}")
        if c.device != q.device:
            raise ValueError(f"{name} is on {c.device} but q is on "
                             f"{q.device}")


def _check_not_implemented(dropout_p, window_size, softcap, alibi_slopes,
                           return_attn_probs):
    if dropout_p != 0.0:
        raise ValueError(f"FLAMIA does not implement attention dropout "
                         f"(dropout_p={dropout_p}); use dropout_p=0.0")
    if tuple(window_size) != (-1, -1):
        raise ValueError(f"FLAMIA does not implement sliding-window "
                         f"attention (window_size={tuple(window_size)}); use "
                         f"(-1, -1)")
    if softcap != 0.0:
        raise ValueError(f"FLAMIA does not implement score softcapping "
                         f"(softcap={softcap}); use 0.0")
    if alibi_slopes is not None:
        raise ValueError("FLAMIA does not implement ALiBi (alibi_slopes); "
                         "use None")
    if return_attn_probs:
        raise ValueError("FLAMIA does not return attention probabilities "
                         "(return_attn_probs=True); return_lse=True gives "
                         "the LSE")


def flash_attn_varlen_func(q: Tensor, k: Tensor, v: Tensor,
                           cu_seqlens_q: Tensor, cu_seqlens_k: Tensor,
                           max_seqlen_q: int, max_seqlen_k: int,
                           softmax_scale: Optional[float] = None,
                           causal: bool = True, recipe: str = "mxfp8",
                           safe_block: int = 128, deterministic: bool = True,
                           return_lse: bool = False,
                           cu_seqlens_host: Optional[Tensor] = None, *,
                           dropout_p: float = 0.0,
                           window_size: tuple = (-1, -1),
                           softcap: float = 0.0,
                           alibi_slopes: Optional[Tensor] = None,
                           return_attn_probs: bool = False):
    """Attention over packed documents, shaped like flash-attn's.

    q: [total_tokens, Hq, D], k and v: [total_tokens, Hkv, D], bfloat16 (Hq
    a multiple of Hkv: GQA/MQA). cu_seqlens_q = cu_seqlens_k: int32
    [num_docs + 1] on q's device. Returns out [total_tokens, Hq, D] bfloat16
    and, with return_lse, lse [Hq, total_tokens] float32 (natural log, not
    differentiable). Every recipe's kernels are deterministic, so
    `deterministic` changes nothing.

    dropout_p, window_size, softcap, alibi_slopes and return_attn_probs are
    flash-attn's, accepted by keyword so that a call written for flash-attn
    runs unchanged; anything but their defaults is an error (not
    implemented).

    cu_seqlens_host: optionally cu_seqlens' values as an int32 CPU tensor
    (what a data loader built before moving it to the GPU). The CUDA path
    then never reads cu_seqlens from the device: no synchronization (pass
    the same tensor as cu_seqlens_q and cu_seqlens_k). The values must equal
    the device tensor's; a difference gives wrong documents, never an
    access out of bounds.
    """
    del deterministic  # always deterministic
    _check_not_implemented(dropout_p, window_size, softcap, alibi_slopes,
                           return_attn_probs)
    _check_tensors(q, k, v, cu_seqlens_q, cu_seqlens_k)
    if softmax_scale is None:
        softmax_scale = 0.0  # the library's default, fl32(1 / sqrt(D))
    elif not softmax_scale > 0 or softmax_scale == float("inf"):
        raise ValueError(f"softmax_scale must be finite and > 0, got "
                         f"{softmax_scale}")
    for_backward = torch.is_grad_enabled() and (
        q.requires_grad or k.requires_grad or v.requires_grad)
    if not q.is_contiguous():
        q = q.contiguous()
    if not k.is_contiguous():
        k = k.contiguous()
    if not v.is_contiguous():
        v = v.contiguous()
    out, lse = varlen_attn_fwd(q, k, v, cu_seqlens_q, cu_seqlens_k,
                               int(max_seqlen_q), int(max_seqlen_k),
                               float(softmax_scale), bool(causal), str(recipe),
                               int(safe_block), bool(for_backward),
                               cu_seqlens_host)
    return (out, lse) if return_lse else out


def flash_attn_func(q: Tensor, k: Tensor, v: Tensor,
                    softmax_scale: Optional[float] = None, causal: bool = True,
                    recipe: str = "mxfp8", safe_block: int = 128,
                    deterministic: bool = True, return_lse: bool = False,
                    **flash_attn_options):
    """Batched attention on [B, S, H, D] tensors (each row of the batch one
    document): flash_attn_varlen_func on the packed [B * S, H, D] view.
    With return_lse, lse is [B, Hq, S]. flash_attn_options: the keyword
    arguments flash_attn_varlen_func takes for flash-attn's sake."""
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, Tensor) or t.dim() != 4:
            raise ValueError(f"{name} must be a [batch, seqlen, heads, "
                             f"head_dim] tensor")
    B, S, Hq, D = q.shape
    if k.shape[0] != B or k.shape[1] != S:
        raise ValueError(f"q has shape {tuple(q.shape)} and k "
                         f"{tuple(k.shape)}: FLAMIA needs the same batch and "
                         "seqlen")
    cu = torch.arange(0, (B + 1) * S, S, dtype=torch.int32, device=q.device)
    r = flash_attn_varlen_func(
        q.reshape(B * S, Hq, D), k.reshape(B * S, k.shape[2], k.shape[3]),
        v.reshape(B * S, v.shape[2], v.shape[3]), cu, cu, S, S,
        softmax_scale=softmax_scale, causal=causal, recipe=recipe,
        safe_block=safe_block, deterministic=deterministic,
        return_lse=return_lse, **flash_attn_options)
    if return_lse:
        out, lse = r
        return out.reshape(B, S, Hq, D), lse.reshape(Hq, B, S).transpose(0, 1)
    return r.reshape(B, S, Hq, D)
