"""ctypes bindings of flamia/CAPI/Compiler.h (libflamia_compiler.so): the
bundled compiler the kernel cache compiles with."""
from __future__ import annotations

import ctypes
import pathlib

from . import _native


class CompileSpec(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("target", ctypes.c_char_p),
        ("recipe", ctypes.c_char_p),
        ("head_dim", ctypes.c_int64),
        ("heads", ctypes.c_int64),
        ("kv_heads", ctypes.c_int64),
        ("causal", ctypes.c_int32),
        ("varlen", ctypes.c_int32),
        ("safe_block", ctypes.c_int64),
        ("softmax_scale", ctypes.c_double),
        ("backward", ctypes.c_int32),
        ("grad_dtype", ctypes.c_char_p),
        ("overlap_softmax", ctypes.c_int32),
        ("scale_tiles", ctypes.c_int32),
        ("ptxas", ctypes.c_char_p),
        ("assemble", ctypes.c_int32),
        ("require_cubin", ctypes.c_int32),
        ("write_ir", ctypes.c_int32),
    ]


def declare(lib: ctypes.CDLL) -> None:
    lib.flamia_compiler_abi_version.restype = ctypes.c_int
    lib.flamia_compiler_version.restype = ctypes.c_char_p
    lib.flamia_compiler_last_error.restype = ctypes.c_char_p
    lib.flamia_compile_spec_init.argtypes = [ctypes.POINTER(CompileSpec)]
    lib.flamia_compile_spec_init.restype = None
    lib.flamia_compile_attention.argtypes = [
        ctypes.POINTER(CompileSpec), ctypes.c_char_p, ctypes.c_char_p,
        ctypes.c_size_t]
    lib.flamia_compile_attention.restype = ctypes.c_int


def compile_spec(lib: ctypes.CDLL, spec, out: pathlib.Path) -> None:
    """Compiles a _kernels.KernelSpec into directory `out`; ValueError (the
    compiler's message) for what the kernels do not implement."""
    s = CompileSpec()
    lib.flamia_compile_spec_init(ctypes.byref(s))
    # The strings must outlive the call: keep the bytes objects here.
    target, recipe, grad = (spec.target.encode(), spec.recipe.encode(),
                            spec.grad_dtype.encode())
    s.target, s.recipe, s.grad_dtype = target, recipe, grad
    # heads = kv_heads = 0: runtime head counts (one set for every Hq, Hkv).
    s.head_dim, s.heads, s.kv_heads = spec.head_dim, 0, 0
    s.causal = 1 if spec.causal else 0
    s.varlen = 1
    s.safe_block = spec.safe_block
    s.backward = 1 if spec.backward else 0
    err = ctypes.create_string_buffer(4096)
    status = lib.flamia_compile_attention(ctypes.byref(s), str(out).encode(),
                                          err, len(err))
    if status != _native.STATUS_OK:
        msg = f"cannot compile kernels for {spec.key()}: {err.value.decode()}"
        _native.raise_for(status, msg)
