"""The op's CUDA path: compiled kernels launched through libflamia_runtime.so
(include/flamia/CAPI/Runtime.h) on the current stream.

A runtime holds the workspace of its last forward phase (the quantized copies
of Q, K, V and the schedule) until its backward phase reads it. Each kernel
set gets a small pool of runtimes: a forward takes a runtime whose previous
forward needs no backward any more (its output tensor is gone, or its backward
ran), and its backward finds that runtime again by the forward's output
pointers. When the pool is exhausted ($FLAMIA_MAX_RUNTIMES per kernel set,
default 8), the least recently used runtime is taken over, and the backward
of the forward that lost it runs the forward phase again first (the forward
is deterministic, so the result is the same, at the cost of one more forward).

CUDA graphs: the op passes cu_seqlens' host values to the runtime, so a call
reads nothing from the device. A call captured in a graph takes a runtime
whose workspace and schedule an eager call with the same cu_seqlens prepared
(the warm-up before a capture), and keeps it for the graph: that runtime
leaves the pool for the life of the process, so that no later call
overwrites what the graph's replays read.
"""
from __future__ import annotations

import ctypes
import os
import threading
import weakref

import torch

from . import _kernels, _native


def target_of(device: torch.device) -> str:
    major, minor = torch.cuda.get_device_capability(device)
    if (major, minor) == (9, 0):
        return "sm_90a"
    if (major, minor) == (10, 0):
        return "sm_100a"
    raise ValueError(
        f"FLAMIA has kernels for sm_90a (H100/H200) and sm_100a (B200); "
        f"{torch.cuda.get_device_name(device)} is sm_{major}{minor}")


class _Runtime:
    def __init__(self, lib, directory, ordinal):
        handle = ctypes.c_void_p()
        err = ctypes.create_string_buffer(2048)
        status = lib.flamia_runtime_create(
            str(directory).encode(), ordinal, ctypes.byref(handle), err,
            len(err))
        _native.raise_for(status, err.value.decode())
        self.lib, self.handle = lib, handle
        self.lock = threading.Lock()
        self.forward_key = None   # (o ptr, lse ptr) of the last forward
        self.forward_out = None   # weakref to that forward's output
        self.last_use = 0
        self.schedule = None      # (T, cu_seqlens) the device holds

    def pending(self) -> bool:
        return self.forward_out is not None and self.forward_out() is not None

    def __del__(self):
        if getattr(self, "handle", None):
            self.lib.flamia_runtime_destroy(self.handle)


def _max_runtimes() -> int:
    text = os.environ.get("FLAMIA_MAX_RUNTIMES", "8")
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise ValueError(f"FLAMIA_MAX_RUNTIMES must be a positive integer, "
                         f"got {text!r}")
    return n


class _Pool:
    def __init__(self, directory, ordinal):
        self.directory, self.ordinal = directory, ordinal
        self.runtimes: list[_Runtime] = []
        self.captured: list[_Runtime] = []  # kept for CUDA graphs' replays
        self.clock = 0
        self.lock = threading.Lock()

    def _tick(self, rt):
        self.clock += 1
        rt.last_use = self.clock

    def for_forward(self, schedule) -> _Runtime:
        if torch.cuda.is_current_stream_capturing():
            return self._for_capture(schedule)
        with self.lock:
            free = [r for r in self.runtimes if not r.pending()]
            if free:
                rt = free[0]
            elif len(self.runtimes) < _max_runtimes():
                rt = _Runtime(_native.load("flamia_runtime"), self.directory,
                              self.ordinal)
                self.runtimes.append(rt)
            else:
                rt = min(self.runtimes, key=lambda r: r.last_use)
            self._tick(rt)
            return rt

    def _for_capture(self, schedule) -> _Runtime:
        """A runtime prepared for `schedule` by an eager call, taken out of
        the pool for the graph being captured."""
        with self.lock:
            ready = [r for r in self.runtimes if r.schedule == schedule]
            if not ready:
                raise ValueError(
                    "this call is being captured in a CUDA graph, but no "
                    "eager call with the same shapes and cu_seqlens prepared "
                    "a workspace for it: run the same call once before "
                    "capturing, as torch.cuda.graph's warm-up does")
            free = [r for r in ready if not r.pending()]
            rt = (free or ready)[0]
            self.runtimes.remove(rt)
            self.captured.append(rt)
            return rt

    def for_backward(self, key, schedule) -> tuple[_Runtime, bool]:
        """The runtime holding forward `key`, or any (and False)."""
        capturing = torch.cuda.is_current_stream_capturing()
        with self.lock:
            for r in self.runtimes + self.captured:
                if r.forward_key == key:
                    self._tick(r)
                    if capturing and r in self.runtimes:
                        self.runtimes.remove(r)
                        self.captured.append(r)
                    return r, True
        return self.for_forward(schedule), False


_pools: dict[tuple[str, int], _Pool] = {}
_pools_lock = threading.Lock()


def _pool(spec: _kernels.KernelSpec, device: torch.device) -> _Pool:
    ordinal = device.index if device.index is not None else \
        torch.cuda.current_device()
    with _pools_lock:
        key = (spec.key(), ordinal)
        if key not in _pools:
            _pools[key] = _Pool(_kernels.get(spec), ordinal)
        return _pools[key]


def _spec(q, k, causal, recipe, safe_block, backward):
    return _kernels.KernelSpec(
        target=target_of(q.device), head_dim=q.shape[2], causal=causal,
        recipe=recipe,
        safe_block=safe_block, backward=backward)


def _args(lib, q, k, v, cu, cu_host, o, lse, softmax_scale):
    a = _native.AttentionArgs()
    lib.flamia_attention_args_init(ctypes.byref(a))
    a.q, a.k, a.v = q.data_ptr(), k.data_ptr(), v.data_ptr()
    a.cu_seqlens, a.o, a.lse = cu.data_ptr(), o.data_ptr(), lse.data_ptr()
    a.num_tokens = q.shape[0]
    a.num_q_heads, a.num_kv_heads = q.shape[1], k.shape[1]
    a.head_dim = q.shape[2]
    a.num_docs = cu.numel() - 1
    a.softmax_scale = softmax_scale
    # The host values (the runtime then reads nothing from the device); the
    # array lives as long as `a` (ctypes keeps it in a._objects).
    host = (ctypes.c_int32 * len(cu_host))(*cu_host)
    a._host_cu = host
    a.cu_seqlens_host = ctypes.addressof(host)
    return a


def _check(lib, status):
    _native.raise_for(status, lib.flamia_last_error().decode())


def _stream(device) -> ctypes.c_void_p:
    return ctypes.c_void_p(torch.cuda.current_stream(device).cuda_stream)


def forward(q, k, v, cu, cu_host, softmax_scale, causal, recipe, safe_block,
            for_backward):
    T, Hq, D = q.shape
    o = torch.empty_like(q)
    lse = torch.empty((Hq, T), dtype=torch.float32, device=q.device)
    if T == 0:
        return o, lse
    pool = _pool(_spec(q, k, causal, recipe, safe_block, for_backward),
                 q.device)
    schedule = (T, tuple(cu_host))
    rt = pool.for_forward(schedule)
    with rt.lock, torch.cuda.device(q.device):
        # Whatever forward rt held is gone from here on (its backward, if
        # still pending, will run it again), whether this call succeeds or not.
        rt.forward_key, rt.forward_out = None, None
        a = _args(rt.lib, q, k, v, cu, cu_host, o, lse, softmax_scale)
        fn = (rt.lib.flamia_attention_forward_phase if for_backward
              else rt.lib.flamia_attention_forward)
        _check(rt.lib, fn(rt.handle, ctypes.byref(a), _stream(q.device)))
        rt.schedule = schedule
        if for_backward:
            rt.forward_key = (o.data_ptr(), lse.data_ptr())
            rt.forward_out = weakref.ref(o)
    return o, lse


def backward(dout, q, k, v, out, lse, cu, cu_host, softmax_scale, causal,
             recipe, safe_block):
    dq, dk, dv = (torch.empty_like(q), torch.empty_like(k),
                  torch.empty_like(v))
    if q.shape[0] == 0:
        return dq, dk, dv
    pool = _pool(_spec(q, k, causal, recipe, safe_block, True), q.device)
    schedule = (q.shape[0], tuple(cu_host))
    rt, current = pool.for_backward((out.data_ptr(), lse.data_ptr()),
                                    schedule)
    stream = _stream(q.device)
    with rt.lock, torch.cuda.device(q.device):
        if not current:
            # The workspace was taken over: run this forward again (into
            # scratch O and LSE, which come out identical). rt's own pending
            # forward, if any, loses its workspace here.
            rt.forward_key, rt.forward_out = None, None
            out, lse = torch.empty_like(out), torch.empty_like(lse)
            a = _args(rt.lib, q, k, v, cu, cu_host, out, lse, softmax_scale)
            _check(rt.lib, rt.lib.flamia_attention_forward_phase(
                rt.handle, ctypes.byref(a), stream))
            rt.schedule = schedule
        a = _args(rt.lib, q, k, v, cu, cu_host, out, lse, softmax_scale)
        a.grad_o, a.dq, a.dk, a.dv = (dout.data_ptr(), dq.data_ptr(),
                                      dk.data_ptr(), dv.data_ptr())
        _check(rt.lib, rt.lib.flamia_attention_backward_phase(
            rt.handle, ctypes.byref(a), stream))
        if not torch.cuda.is_current_stream_capturing():
            rt.forward_key, rt.forward_out = None, None
    return dq, dk, dv
