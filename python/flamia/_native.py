"""ctypes bindings of FLAMIA's C APIs (include/flamia/CAPI/*.h).

Three shared libraries, each optional except the reference:
  libflamia_reference.so  the CPU reference (the op's CPU path)
  libflamia_runtime.so    loads compiled kernels and launches them (CUDA)
  libflamia_compiler.so   compiles an attention spec to kernels (needs LLVM)

They are looked for, in order, in $FLAMIA_LIBRARY_DIR, in the installed
package (flamia/_lib) and, when running from a source checkout, in its
build/lib.
"""
from __future__ import annotations

import ctypes
import os
import pathlib
import threading

_HERE = pathlib.Path(__file__).resolve().parent

# flamia_status (include/flamia/CAPI/Common.h).
STATUS_OK = 0
STATUS_INVALID_ARGUMENT = 1
_STATUS_NAMES = {
    0: "ok", 1: "invalid argument", 2: "CUDA driver not available",
    3: "device not available", 4: "invalid manifest", 5: "invalid artifact",
    6: "CUDA error", 7: "out of memory", 8: "not found", 9: "internal error",
}


class FlamiaError(RuntimeError):
    """A FLAMIA library call failed; `status` is the flamia_status code."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def raise_for(status: int, message: str) -> None:
    """ValueError for the caller's mistakes, FlamiaError for the rest."""
    if status == STATUS_OK:
        return
    if status == STATUS_INVALID_ARGUMENT:
        raise ValueError(message)
    raise FlamiaError(status, f"{message} ({_STATUS_NAMES.get(status, status)})")


def library_dirs() -> list[pathlib.Path]:
    dirs = []
    env = os.environ.get("FLAMIA_LIBRARY_DIR")
    if env:
        dirs += [pathlib.Path(d) for d in env.split(os.pathsep) if d]
    dirs.append(_HERE / "_lib")
    # A source checkout: python/flamia/ next to build/lib.
    dirs.append(_HERE.parent.parent / "build" / "lib")
    return dirs


_lock = threading.Lock()
_loaded: dict[str, ctypes.CDLL] = {}


def find_library(name: str) -> pathlib.Path | None:
    for d in library_dirs():
        p = d / f"lib{name}.so"
        if p.is_file():
            return p
    return None


def load(name: str) -> ctypes.CDLL:
    """The library lib<name>.so, loaded once; a clear error if missing."""
    with _lock:
        if name in _loaded:
            return _loaded[name]
        path = find_library(name)
        if path is None:
            raise FlamiaError(
                5, f"lib{name}.so not found (looked in "
                + ", ".join(str(d) for d in library_dirs())
                + "; set FLAMIA_LIBRARY_DIR to the directory holding it)")
        lib = ctypes.CDLL(str(path))
        _declare[name](lib)
        _loaded[name] = lib
        return lib


# ---- flamia/CAPI/Reference.h ------------------------------------------------
class ReferenceArgs(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("recipe", ctypes.c_char_p),
        ("safe_block", ctypes.c_int64),
        ("causal", ctypes.c_int32),
        ("softmax_scale", ctypes.c_float),
        ("num_tokens", ctypes.c_int64),
        ("num_q_heads", ctypes.c_int32),
        ("num_kv_heads", ctypes.c_int32),
        ("head_dim", ctypes.c_int32),
        ("num_docs", ctypes.c_int32),
        ("cu_seqlens", ctypes.c_void_p),
        ("q", ctypes.c_void_p),
        ("k", ctypes.c_void_p),
        ("v", ctypes.c_void_p),
        ("o", ctypes.c_void_p),
        ("lse", ctypes.c_void_p),
        ("grad_o", ctypes.c_void_p),
        ("dq", ctypes.c_void_p),
        ("dk", ctypes.c_void_p),
        ("dv", ctypes.c_void_p),
    ]


def _declare_reference(lib: ctypes.CDLL) -> None:
    p = ctypes.POINTER(ReferenceArgs)
    lib.flamia_reference_args_init.argtypes = [p]
    lib.flamia_reference_args_init.restype = None
    for f in (lib.flamia_reference_forward, lib.flamia_reference_backward):
        f.argtypes = [p]
        f.restype = ctypes.c_int
    lib.flamia_reference_last_error.restype = ctypes.c_char_p
    lib.flamia_reference_version.restype = ctypes.c_char_p


# ---- flamia/CAPI/Runtime.h ----------------------------------------------------
class AttentionArgs(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("q", ctypes.c_void_p),
        ("k", ctypes.c_void_p),
        ("v", ctypes.c_void_p),
        ("cu_seqlens", ctypes.c_void_p),
        ("o", ctypes.c_void_p),
        ("lse", ctypes.c_void_p),
        ("num_tokens", ctypes.c_int64),
        ("num_q_heads", ctypes.c_int32),
        ("num_kv_heads", ctypes.c_int32),
        ("head_dim", ctypes.c_int32),
        ("num_docs", ctypes.c_int32),
        ("softmax_scale", ctypes.c_float),
        ("grad_o", ctypes.c_void_p),
        ("dq", ctypes.c_void_p),
        ("dk", ctypes.c_void_p),
        ("dv", ctypes.c_void_p),
        ("cu_seqlens_host", ctypes.c_void_p),
    ]


def _declare_runtime(lib: ctypes.CDLL) -> None:
    vp, args = ctypes.c_void_p, ctypes.POINTER(AttentionArgs)
    lib.flamia_runtime_abi_version.restype = ctypes.c_int
    lib.flamia_last_error.restype = ctypes.c_char_p
    lib.flamia_attention_args_init.argtypes = [args]
    lib.flamia_attention_args_init.restype = None
    lib.flamia_runtime_create.argtypes = [
        ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(vp), ctypes.c_char_p,
        ctypes.c_size_t]
    lib.flamia_runtime_create.restype = ctypes.c_int
    lib.flamia_runtime_destroy.argtypes = [vp]
    lib.flamia_runtime_destroy.restype = None
    for f in (lib.flamia_attention_forward, lib.flamia_attention_forward_phase,
              lib.flamia_attention_backward_phase):
        f.argtypes = [vp, args, vp]
        f.restype = ctypes.c_int
    lib.flamia_runtime_target.argtypes = [vp]
    lib.flamia_runtime_target.restype = ctypes.c_char_p


def _declare_compiler(lib: ctypes.CDLL) -> None:
    from . import _compiler_abi
    _compiler_abi.declare(lib)


_declare = {
    "flamia_reference": _declare_reference,
    "flamia_runtime": _declare_runtime,
    "flamia_compiler": _declare_compiler,
}
