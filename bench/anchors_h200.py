"""Baselines on an H200: what a user would run instead of FLAMIA, timed in the same session.

Times causal attention over packed documents, forward and forward+backward, for the backends
that ship with PyTorch (cuDNN and flash SDPA on single documents, varlen_attn, FlexAttention with
a document mask) and FlashAttention-4's CuTe-DSL kernels when `flash_attn.cute` imports, plus the
ceilings (bf16 and fp8 8192^3 matrix products, a 2 GiB device-to-device copy). The workloads and
their lognormal document lengths (random.Random(0)) are the ones bench/bench.sh gives FLAMIA.
Prints one table and writes $OUT/anchors.json (OUT defaults to /tmp). Used by bench/bench.sh;
docs/performance.md describes the method. ANCHORS_BWD=1 adds FA4's backward alone;
ANCHORS_BATCH=N times N calls between two events (below).
"""
import json, math, os, sys, time
import torch
import torch.nn.functional as F

torch.backends.cuda.matmul.allow_tf32 = False
dev = "cuda"
OUT = os.environ.get("OUT", "/tmp")
rows = []

MODES = ("fwd", "fwd+bwd")

# Calls timed between one pair of events (ANCHORS_BATCH, default 10). With 1
# (the method of runs up to 73), each call starts on an idle GPU, so the
# Python work before its first kernel is inside the time; with several, that
# work overlaps the previous call's kernels wherever it is shorter than them.
# Run 74 (docs/performance.md) measured one call per pair 3-28% slower than
# ten for FA4 on the packed workloads, and noisier from pass to pass.
# flamia-run launches from C++ and times one call per pair, its host work a
# few microseconds, so ten calls here are the comparable number.
BATCH = max(1, int(os.environ.get("ANCHORS_BATCH", "10")))

def bench(fn, warm=3, rep=10):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(rep):
        s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(BATCH):
            fn()
        e.record(); torch.cuda.synchronize()
        ts.append(s.elapsed_time(e) / BATCH)
    ts.sort()
    return ts[len(ts) // 2]

def ceilings():
    n = 8192
    a = torch.randn(n, n, device=dev, dtype=torch.bfloat16); b = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
    ms = bench(lambda: a @ b)
    rows.append(dict(name="ceiling bf16 matmul 8192^3", ms=ms, tflops=2 * n**3 / ms / 1e9))
    try:
        a8 = a.to(torch.float8_e4m3fn); b8 = b.t().contiguous().to(torch.float8_e4m3fn).t()
        one = torch.ones((), device=dev)
        ms = bench(lambda: torch._scaled_mm(a8, b8, one, one, out_dtype=torch.bfloat16))
        rows.append(dict(name="ceiling fp8 e4m3 matmul 8192^3", ms=ms, tflops=2 * n**3 / ms / 1e9))
    except Exception as ex:
        rows.append(dict(name="ceiling fp8 matmul", error=str(ex)[:200]))
    x = torch.empty(2 * 1024**3, dtype=torch.uint8, device=dev); y = torch.empty_like(x)
    ms = bench(lambda: y.copy_(x))
    rows.append(dict(name="ceiling d2d copy 2GiB", ms=ms, tbps=2 * x.numel() / ms / 1e9))

def doc_lengths(kind, total, rng):
    if kind.startswith("single"):
        return [total]
    if kind == "fixed2k":
        return [2048] * (total // 2048)
    if kind == "lognormal1k":   # many short documents, a long tail
        out = []
        while sum(out) < total:
            out.append(max(64, min(total, int(rng.lognormvariate(math.log(1024), 1.0)))))
        out[-1] -= sum(out) - total
        return [l for l in out if l > 0]
    raise ValueError(kind)

def causal_flops(lens, h, d):
    # fwd: 2 matmuls of 2*L*L*d each, half kept by the causal mask
    fwd = sum(4 * l * l * d * h / 2 for l in lens)
    return fwd, 2.5 * fwd

def workloads():
    import random
    rng = random.Random(0)
    for kind, total, h, d in [("single16k", 16384, 16, 128), ("fixed2k", 32768, 16, 128),
                              ("lognormal1k", 32768, 16, 128), ("lognormal1k", 32768, 16, 64),
                              ("single32k", 32768, 16, 128)]:
        yield kind, total, h, d, doc_lengths(kind, total, rng)

def record(name, run, tag, fwd_f, bwd_f):
    for mode in MODES:
        flops = fwd_f if mode == "fwd" else fwd_f + bwd_f
        try:
            ms = bench(lambda: run(mode))
            rows.append(dict(name=f"{name} {mode} | {tag}", ms=ms, tflops=flops / ms / 1e9))
        except Exception as ex:
            rows.append(dict(name=f"{name} {mode} | {tag}", error=str(ex)[:160]))

VARLEN_CAUSAL = {}

def run_attention():
    from torch.nn.attention import sdpa_kernel, SDPBackend
    try:
        from torch.nn.attention.flex_attention import flex_attention, create_block_mask
        flex = torch.compile(flex_attention)
    except Exception as ex:
        flex = None; print("flex unavailable", ex)
    fa4 = None
    try:  # FlashAttention-4 (CuTe DSL), when installed
        from flash_attn.cute import flash_attn_varlen_func as fa4
    except Exception as ex:
        print("fa4 unavailable:", str(ex)[:120])
    varlen = None
    try:
        from torch.nn.attention.varlen import varlen_attn as varlen
        import inspect
        params = inspect.signature(varlen).parameters
        print("varlen_attn", inspect.signature(varlen))
        for name, val in (("is_causal", True), ("causal", True), ("window_size", (-1, 0))):
            if name in params:  # (-1, 0) is causal in the window form
                VARLEN_CAUSAL[name] = val
                break
        if not VARLEN_CAUSAL:
            varlen = None  # no causal switch in this version
    except Exception as ex:
        print("varlen_attn unavailable:", ex)
    for kind, total, h, d, lens in workloads():
        fwd_f, bwd_f = causal_flops(lens, h, d)
        tag = f"{kind} T={total} H={h} D={d} docs={len(lens)}"
        q = torch.randn(total, h, d, device=dev, dtype=torch.bfloat16, requires_grad=True)
        k = torch.randn_like(q, requires_grad=True); v = torch.randn_like(q, requires_grad=True)
        do = torch.randn_like(q)
        cu = torch.tensor([0] + list(__import__("itertools").accumulate(lens)), device=dev, dtype=torch.int32)
        # dense backends: only meaningful when there is a single document
        if len(lens) == 1:
            for be in [SDPBackend.FLASH_ATTENTION, SDPBackend.CUDNN_ATTENTION]:
                def run(mode, be=be):
                    with sdpa_kernel(be):
                        o = F.scaled_dot_product_attention(q.transpose(0, 1)[None], k.transpose(0, 1)[None], v.transpose(0, 1)[None], is_causal=True)
                    if mode == "fwd+bwd":
                        o.backward(do.transpose(0, 1)[None])
                record(f"sdpa-{be.name.lower()} bf16", run, tag, fwd_f, bwd_f)
        if varlen is not None:
            mx = max(lens)
            def run(mode):
                o = varlen(q, k, v, cu, cu, mx, mx, **VARLEN_CAUSAL)
                if mode == "fwd+bwd":
                    o.backward(do)
            record("varlen_attn bf16", run, tag, fwd_f, bwd_f)
        if fa4 is not None:
            mx = max(lens)
            def run(mode):
                o = fa4(q, k, v, cu_seqlens_q=cu, cu_seqlens_k=cu, max_seqlen_q=mx, max_seqlen_k=mx, causal=True)
                o = o[0] if isinstance(o, tuple) else o
                if mode == "fwd+bwd":
                    o.backward(do)
            record("fa4-cute varlen bf16", run, tag, fwd_f, bwd_f)
            if os.environ.get("ANCHORS_BWD"):
                # The backward alone, FA4's default and its deterministic mode
                # (bit-reproducible run to run, as FLAMIA's backward is): one
                # forward outside the timing, the gradients timed.
                for det in (False, True):
                    name = "fa4-cute varlen bf16 bwd" + (" deterministic" if det else "")
                    try:
                        o = fa4(q, k, v, cu_seqlens_q=cu, cu_seqlens_k=cu, max_seqlen_q=mx,
                                max_seqlen_k=mx, causal=True, deterministic=det)
                        o = o[0] if isinstance(o, tuple) else o
                        ms = bench(lambda: torch.autograd.grad(o, (q, k, v), do, retain_graph=True))
                        rows.append(dict(name=f"{name} | {tag}", ms=ms, tflops=bwd_f / ms / 1e9))
                        del o
                    except Exception as ex:
                        rows.append(dict(name=f"{name} | {tag}", error=str(ex)[:160]))
        if flex is not None:
            doc = torch.repeat_interleave(torch.arange(len(lens), device=dev), torch.tensor(lens, device=dev))
            def mask_mod(b, hh, qi, ki):
                return (doc[qi] == doc[ki]) & (qi >= ki)
            bm = create_block_mask(mask_mod, None, None, total, total, device=dev)
            qb, kb, vb, dob = [t.transpose(0, 1)[None] for t in (q, k, v, do)]
            def run(mode):
                o = flex(qb, kb, vb, block_mask=bm)
                if mode == "fwd+bwd":
                    o.backward(dob)
            record("flex_attention bf16", run, tag, fwd_f, bwd_f)
        del q, k, v, do
        torch.cuda.empty_cache()

if __name__ == "__main__":
    print(torch.__version__, torch.cuda.get_device_name(), torch.backends.cudnn.version())
    ceilings()
    run_attention()
    for r in rows:
        if "error" in r:
            print(f"{r['name']:<80} ERROR {r['error']}")
        else:
            extra = f"{r.get('tflops', 0):8.1f} TFLOP/s" if "tflops" in r else f"{r['tbps']:.2f} TB/s"
            print(f"{r['name']:<80} {r['ms']:9.3f} ms {extra}")
    json.dump(rows, open(os.path.join(OUT, "anchors.json"), "w"), indent=1)
