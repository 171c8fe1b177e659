"""On the GPU machine: what the Python op costs on top of the C API, and
whether its calls can be captured in a CUDA graph.

  FLAMIA_LIBRARY_DIR=build-gpu/lib FLAMIA_KERNEL_DIR=.device/py-kernels \
  PYTHONPATH=python python bench/python-op.py

For each size: the median wall time per call (of 100) of (a) the raw C API
calls on one runtime with cu_seqlens' host values (ctypes, no validation, no
synchronization), (b) flamia's op (flash_attn_varlen_func, forward under
no_grad; forward + backward in training) and (c) the op given
cu_seqlens_host, each synchronizing at the end of each call, so that the
differences are host work; then the CUDA-graph capture attempt
of the forward and of a training step, with its outcome. Prints a table;
writes $OUT/python-op.json.
"""
import ctypes, json, os, statistics, time

import torch

import flamia
from flamia import _cuda, _kernels, _native

OUT = os.environ.get("OUT", "/tmp")
dev = "cuda"


def batch(T, H, D, doc):
    g = torch.Generator(device=dev).manual_seed(0)
    q = torch.randn(T, H, D, device=dev, generator=g).to(torch.bfloat16)
    k = torch.randn(T, H, D, device=dev, generator=g).to(torch.bfloat16)
    v = torch.randn(T, H, D, device=dev, generator=g).to(torch.bfloat16)
    cu = torch.arange(0, T + 1, doc, dtype=torch.int32, device=dev)
    return q, k, v, cu


def wall(fn, rep=100):
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(rep):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        ts.append((time.perf_counter() - t0) * 1e6)
    return statistics.median(ts)


def raw_forward(q, k, v, cu, train):
    spec = _cuda._spec(q, k, True, "mxfp8", 128, train)
    rt = _cuda._Runtime(_native.load("flamia_runtime"), _kernels.get(spec), 0)
    o = torch.empty_like(q)
    lse = torch.empty(q.shape[1], q.shape[0], dtype=torch.float32, device=dev)
    a = _cuda._args(rt.lib, q, k, v, cu, cu.tolist(), o, lse, 0.0)
    dout = torch.randn_like(q)
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    stream = _cuda._stream(q.device)

    def fwd():
        rt.lib.flamia_attention_forward(rt.handle, ctypes.byref(a), stream)

    def step():
        rt.lib.flamia_attention_forward_phase(rt.handle, ctypes.byref(a),
                                              stream)
        a.grad_o, a.dq, a.dk, a.dv = (dout.data_ptr(), dq.data_ptr(),
                                      dk.data_ptr(), dv.data_ptr())
        rt.lib.flamia_attention_backward_phase(rt.handle, ctypes.byref(a),
                                               stream)
    return (step if train else fwd), rt


def op_forward(q, k, v, cu, doc, host=None):
    def fwd():
        with torch.no_grad():
            flamia.flash_attn_varlen_func(q, k, v, cu, cu, doc, doc,
                                          cu_seqlens_host=host)
    return fwd


def op_step(q, k, v, cu, doc, host=None):
    qg, kg, vg = (t.clone().requires_grad_() for t in (q, k, v))
    dout = torch.randn_like(q)

    def step():
        out = flamia.flash_attn_varlen_func(qg, kg, vg, cu, cu, doc, doc,
                                            cu_seqlens_host=host)
        out.backward(dout)
    return step


def capture(step, inputs):
    """Warm-up on a side stream, capture `step` in a CUDA graph, replay it:
    (outcome, replay wall time per call in us or None)."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            for t in inputs:
                t.grad = None
            step()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    for t in inputs:
        t.grad = None
    g = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(g):
            step()
        g.replay()
        torch.cuda.synchronize()
    except Exception as e:  # the outcome is the measurement
        torch.cuda.synchronize()
        return f"{type(e).__name__}: {str(e).splitlines()[0][:200]}", None
    return "captured and replayed", wall(g.replay)


rows = []
for T, H, D, doc in [(4096, 16, 128, 1024), (16384, 16, 128, 2048)]:
    q, k, v, cu = batch(T, H, D, doc)
    for mode in ("fwd", "fwd+bwd"):
        train = mode == "fwd+bwd"
        raw, rt = raw_forward(q, k, v, cu, train)
        make = op_step if train else op_forward
        op, op_host = make(q, k, v, cu, doc), make(q, k, v, cu, doc, cu.cpu())
        r_us, o_us, h_us = wall(raw), wall(op), wall(op_host)
        rows.append(dict(T=T, H=H, D=D, doc=doc, mode=mode, raw_capi_us=r_us,
                         op_us=o_us, op_host_cu_us=h_us,
                         overhead_us=o_us - r_us))
        print(f"T={T:6d} H={H} D={D} doc={doc:5d} {mode:8s} raw C API "
              f"{r_us:9.1f} us  op {o_us:9.1f} us  op with cu_seqlens_host "
              f"{h_us:9.1f} us", flush=True)
        del rt

q, k, v, cu = batch(4096, 16, 128, 1024)
graphs = {}
fwd = op_forward(q, k, v, cu, 1024)
graphs["fwd"] = capture(fwd, [])
qg, kg, vg = (t.clone().requires_grad_() for t in (q, k, v))
dout = torch.randn_like(q)


def train_step():
    flamia.flash_attn_varlen_func(qg, kg, vg, cu, cu, 1024, 1024).backward(
        dout)


graphs["fwd+bwd"] = capture(train_step, [qg, kg, vg])
for mode, (outcome, replay_us) in graphs.items():
    line = f"CUDA graph capture, T=4096 H=16 D=128 doc=1024, {mode}: {outcome}"
    if replay_us is not None:
        line += f"; replay {replay_us:.1f} us per call"
    print(line)
json.dump(dict(rows=rows, graphs=graphs, torch=torch.__version__,
               gpu=torch.cuda.get_device_name()),
          open(os.path.join(OUT, "python-op.json"), "w"), indent=1)
