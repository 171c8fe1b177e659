"""The op's CPU path: the CPU reference of the numerics contract
(libflamia_reference.so, include/flamia/CAPI/Reference.h). Slow but exact;
the CUDA kernels are checked against the same definition."""
from __future__ import annotations

import ctypes

import torch

from . import _native


def _args(q, k, v, cu_seqlens, softmax_scale, causal, recipe, safe_block):
    lib = _native.load("flamia_reference")
    a = _native.ReferenceArgs()
    lib.flamia_reference_args_init(ctypes.byref(a))
    a.recipe = recipe.encode()
    a.safe_block = safe_block
    a.causal = 1 if causal else 0
    a.softmax_scale = softmax_scale
    a.num_tokens = q.shape[0]
    a.num_q_heads = q.shape[1]
    a.num_kv_heads = k.shape[1]
    a.head_dim = q.shape[2]
    a.num_docs = cu_seqlens.numel() - 1
    return lib, a


def _f32(t: torch.Tensor) -> torch.Tensor:
    return t.detach().to(torch.float32).contiguous()


def _call(lib, fn, a, keep) -> None:
    # `keep` holds the tensors whose addresses `a` carries.
    status = fn(ctypes.byref(a))
    del keep
    _native.raise_for(status, lib.flamia_reference_last_error().decode())


def forward(q, k, v, cu_seqlens, softmax_scale, causal, recipe, safe_block):
    lib, a = _args(q, k, v, cu_seqlens, softmax_scale, causal, recipe,
                   safe_block)
    cu = cu_seqlens.contiguous()
    qf, kf, vf = _f32(q), _f32(k), _f32(v)
    T, Hq, D = q.shape
    o = torch.empty((T, Hq, D), dtype=torch.float32)
    lse = torch.empty((Hq, T), dtype=torch.float32)
    a.cu_seqlens, a.q, a.k, a.v = (cu.data_ptr(), qf.data_ptr(),
                                   kf.data_ptr(), vf.data_ptr())
    a.o, a.lse = o.data_ptr(), lse.data_ptr()
    _call(lib, lib.flamia_reference_forward, a, (cu, qf, kf, vf, o, lse))
    return o.to(q.dtype), lse


def backward(dout, q, k, v, out, lse, cu_seqlens, softmax_scale, causal,
             recipe, safe_block):
    lib, a = _args(q, k, v, cu_seqlens, softmax_scale, causal, recipe,
                   safe_block)
    cu = cu_seqlens.contiguous()
    qf, kf, vf, of, df = _f32(q), _f32(k), _f32(v), _f32(out), _f32(dout)
    lsef = _f32(lse)
    dq = torch.empty(q.shape, dtype=torch.float32)
    dk = torch.empty(k.shape, dtype=torch.float32)
    dv = torch.empty(v.shape, dtype=torch.float32)
    a.cu_seqlens, a.q, a.k, a.v = (cu.data_ptr(), qf.data_ptr(),
                                   kf.data_ptr(), vf.data_ptr())
    a.o, a.lse, a.grad_o = of.data_ptr(), lsef.data_ptr(), df.data_ptr()
    a.dq, a.dk, a.dv = dq.data_ptr(), dk.data_ptr(), dv.data_ptr()
    _call(lib, lib.flamia_reference_backward, a,
          (cu, qf, kf, vf, of, df, lsef, dq, dk, dv))
    return dq.to(q.dtype), dk.to(k.dtype), dv.to(v.dtype)
