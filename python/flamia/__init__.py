"""FLAMIA: microscaled (MXFP8) attention over packed documents for PyTorch.

    import flamia
    out = flamia.flash_attn_varlen_func(q, k, v, cu_seqlens, cu_seqlens,
                                        max_seqlen, max_seqlen, causal=True)

See docs/python.md.
"""
from ._kernels import VERSION as __version__, KernelSpec
from ._native import FlamiaError
from .ops import flash_attn_func, flash_attn_varlen_func

__all__ = ["flash_attn_varlen_func", "flash_attn_func", "FlamiaError",
           "KernelSpec", "__version__"]
