"""The op on CUDA tensors (the H200 here; skipped without a GPU): against
the CPU op (the contract's reference) on flash-attn-style cases, through
autograd, pools of runtimes, torch.compile and repeated calls. Kernel sets
come from $FLAMIA_KERNEL_DIR or are compiled on first use."""
from __future__ import annotations

import pytest
import torch

import flamia

from conftest import make_batch, rel_l2, requires_cuda

pytestmark = requires_cuda

CASES = [
    # lengths, Hq, Hkv, D, causal
    ([300, 1000, 77, 129, 0, 1], 2, 2, 128, True),
    ([512, 700, 33], 4, 2, 128, True),          # GQA
    ([1000, 256, 7], 4, 2, 64, True),           # D = 64, GQA
    ([1, 1, 1, 5, 0, 0, 200], 2, 1, 64, True),  # tiny and empty documents
    ([600, 129, 64], 2, 2, 128, False),         # not causal
]


def _step(q, k, v, cu, causal, dout, recipe="mxfp8"):
    q, k, v = (t.clone().requires_grad_() for t in (q, k, v))
    m = int((cu[1:] - cu[:-1]).max())
    out, lse = flamia.flash_attn_varlen_func(q, k, v, cu, cu, m, m,
                                             causal=causal, recipe=recipe,
                                             return_lse=True)
    out.backward(dout)
    return out, lse, q.grad, k.grad, v.grad


@pytest.mark.parametrize("lengths,hq,hkv,d,causal", CASES)
def test_matches_the_cpu_reference(lengths, hq, hkv, d, causal):
    """docs/runtime.md's tolerances: O within rel L2 1e-3 of the reference,
    LSE within 1e-3, gradients (bf16) within rel L2 1e-2."""
    q, k, v, cu = make_batch(lengths, hq, hkv, d, seed=sum(lengths))
    dout = torch.randn(q.shape, generator=torch.Generator().manual_seed(1)
                       ).to(torch.bfloat16)
    ref = _step(q, k, v, cu, causal, dout)
    gpu = _step(*(t.cuda() for t in (q, k, v, cu)), causal, dout.cuda())
    out, lse, dq, dk, dv = (t.cpu() for t in gpu)
    assert rel_l2(out, ref[0]) < 1e-3
    assert (lse - ref[1]).abs().max().item() < 1e-3
    for g, r in zip((dq, dk, dv), ref[2:]):
        assert rel_l2(g, r) < 1e-2
        assert torch.isfinite(g.float()).all()


def test_deterministic():
    q, k, v, cu = make_batch([700, 300, 24], 4, 2, 128, seed=3, device="cuda")
    dout = torch.randn_like(q, dtype=torch.float32).to(torch.bfloat16)
    a = _step(q, k, v, cu, True, dout)
    b = _step(q, k, v, cu, True, dout)
    for x, y in zip(a, b):
        assert torch.equal(x, y)


def _two_layers(q, k, v, cu):
    q, k, v = (t.clone().requires_grad_() for t in (q, k, v))
    h = flamia.flash_attn_varlen_func(q, k, v, cu, cu, 700, 700)
    h2 = flamia.flash_attn_varlen_func(h, k, v, cu, cu, 700, 700)
    (h2.float() * torch.linspace(-1, 1, h2.shape[-1], device="cuda")
     ).sum().backward()
    return h2, q.grad, k.grad, v.grad


def test_two_layers_with_one_runtime_recompute_the_forward(monkeypatch):
    """Two pending backwards on one kernel set: with a pool of one runtime the
    first layer's backward runs its forward again; the gradients are the same
    bits as with a runtime per layer."""
    from flamia import _cuda
    q, k, v, cu = make_batch([700, 300], 2, 2, 128, seed=5, device="cuda")
    many = _two_layers(q, k, v, cu)
    _cuda._pools.clear()
    monkeypatch.setenv("FLAMIA_MAX_RUNTIMES", "1")
    one = _two_layers(q, k, v, cu)
    _cuda._pools.clear()
    for x, y in zip(many, one):
        assert torch.equal(x, y)


def _two_graphs_backward_in_forward_order(q, k, v, cu):
    """Two independent attention calls whose backwards run in the order of
    their forwards (the first one's workspace was taken over by the second
    with a pool of one)."""
    a, b = ([t.clone().requires_grad_() for t in (q, k, v)] for _ in "ab")
    out_a = flamia.flash_attn_varlen_func(*a, cu, cu, 700, 700)
    out_b = flamia.flash_attn_varlen_func(*b, cu, cu, 700, 700)
    out_a.float().sum().backward()
    (out_b.float() * 2).sum().backward()
    return [t.grad for t in a + b]


def test_backward_of_a_taken_over_forward_then_of_the_taker(monkeypatch):
    from flamia import _cuda
    q, k, v, cu = make_batch([700, 300], 2, 2, 128, seed=6, device="cuda")
    many = _two_graphs_backward_in_forward_order(q, k, v, cu)
    _cuda._pools.clear()
    monkeypatch.setenv("FLAMIA_MAX_RUNTIMES", "1")
    one = _two_graphs_backward_in_forward_order(q, k, v, cu)
    _cuda._pools.clear()
    for x, y in zip(many, one):
        assert torch.equal(x, y)


def test_no_grad_forward_matches_training_forward():
    q, k, v, cu = make_batch([900, 100], 2, 2, 128, seed=7, device="cuda")
    with torch.no_grad():
        a = flamia.flash_attn_varlen_func(q, k, v, cu, cu, 900, 900)
    b = flamia.flash_attn_varlen_func(q.clone().requires_grad_(), k, v, cu,
                                      cu, 900, 900)
    assert torch.equal(a, b.detach())


@pytest.mark.parametrize("lengths,hq,hkv,d,causal", CASES[:4])
def test_nvfp4_mixed_forward_matches_the_cpu_reference(lengths, hq, hkv, d,
                                                       causal):
    """Recipe nvfp4-mixed's forward kernels (no_grad: the forward-only
    set): O and LSE against the CPU op of the same recipe, with
    runtime.md's tolerances."""
    q, k, v, cu = make_batch(lengths, hq, hkv, d, seed=sum(lengths) + 7)
    m = int((cu[1:] - cu[:-1]).max())
    ref = flamia.flash_attn_varlen_func(q, k, v, cu, cu, m, m, causal=causal,
                                        recipe="nvfp4-mixed", return_lse=True)
    mx = flamia.flash_attn_varlen_func(q, k, v, cu, cu, m, m, causal=causal,
                                       return_lse=True)
    gq, gk, gv, gcu = (t.cuda() for t in (q, k, v, cu))
    with torch.no_grad():
        out, lse = flamia.flash_attn_varlen_func(
            gq, gk, gv, gcu, gcu, m, m, causal=causal, recipe="nvfp4-mixed",
            return_lse=True)
    out, lse = out.cpu(), lse.cpu()
    assert rel_l2(out, ref[0]) < 1e-3
    assert (lse - ref[1]).abs().max().item() < 1e-3
    # The recipe is NVFP4's, not mxfp8's, wherever a key is off the safe block.
    if max(lengths) > 128:
        assert rel_l2(out, mx[0]) > 10 * rel_l2(out, ref[0])


@pytest.mark.parametrize("recipe", ["mxfp8-strict", "nvfp4-mixed"])
@pytest.mark.parametrize("lengths,hq,hkv,d,causal", CASES[:4])
def test_second_copy_recipes_train_like_the_cpu_reference(recipe, lengths, hq,
                                                          hkv, d, causal):
    """The training step of the recipes that quantize K, V and dO twice
    (per token where the head dim is contracted, 32x32 token blocks where
    tokens are): O, LSE and the gradients against the CPU op of the same
    recipe, with test_matches_the_cpu_reference's tolerances."""
    q, k, v, cu = make_batch(lengths, hq, hkv, d, seed=sum(lengths) + 11)
    dout = torch.randn(q.shape, generator=torch.Generator().manual_seed(2)
                       ).to(torch.bfloat16)
    ref = _step(q, k, v, cu, causal, dout, recipe)
    gpu = _step(*(t.cuda() for t in (q, k, v, cu)), causal, dout.cuda(),
                recipe)
    out, lse, dq, dk, dv = (t.cpu() for t in gpu)
    assert rel_l2(out, ref[0]) < 1e-3
    assert (lse - ref[1]).abs().max().item() < 1e-3
    for g, r in zip((dq, dk, dv), ref[2:]):
        assert rel_l2(g, r) < 1e-2
        assert torch.isfinite(g.float()).all()
    # nvfp4-mixed's gradients are its own, not mxfp8's, where keys are off
    # the safe block. (mxfp8-strict's per-token E4M3 copies mostly equal
    # the token-block ones: a power-of-two scale moves no normal E4M3
    # value; what tells them apart is L3, below.)
    if recipe == "nvfp4-mixed" and max(lengths) > 256:
        mx = _step(q, k, v, cu, causal, dout)
        assert rel_l2(dq, mx[2]) > 3 * rel_l2(dq, ref[2])


@pytest.mark.parametrize("recipe,strict", [("mxfp8-strict", True),
                                           ("nvfp4-mixed", True),
                                           ("mxfp8", False)])
def test_dq_of_earlier_tokens_ignores_a_later_grad_o(recipe, strict):
    """L3 through the op: an outlier in grad_o at token 151 of a 300-token
    document leaves dQ of tokens <= 150 bit-identical under a strict
    recipe; under mxfp8 it moves them (dO's 32x32 block [128, 160) in
    dP = dO V^T against keys < 128, off the safe block)."""
    q, k, v, cu = (t.cuda() for t in make_batch([300], 2, 2, 128, seed=5))
    dout = torch.randn(q.shape, generator=torch.Generator().manual_seed(3)
                       ).to(torch.bfloat16).cuda()
    moved = dout.clone()
    moved[151, 0, 7] = 300.0
    a = _step(q, k, v, cu, True, dout, recipe)[2]
    b = _step(q, k, v, cu, True, moved, recipe)[2]
    assert not torch.equal(a[151:], b[151:])
    assert torch.equal(a[:151], b[:151]) == strict


def test_torch_compile_fullgraph_matches_eager():
    q0, k0, v0, cu = make_batch([400, 112], 4, 2, 64, seed=9, device="cuda")

    def step(q, k, v):
        out = flamia.flash_attn_varlen_func(q, k, v, cu, cu, 400, 400)
        return (out.float() * torch.linspace(-1, 1, 64, device="cuda")).sum()

    res = []
    for fn in (step, torch.compile(step, fullgraph=True)):
        q, k, v = (t.clone().requires_grad_() for t in (q0, k0, v0))
        fn(q, k, v).backward()
        res.append((q.grad, k.grad, v.grad))
    for a, b in zip(*res):
        assert torch.equal(a, b)


def test_flash_attn_func_on_cuda():
    B, S, H, D = 2, 384, 2, 128
    q, k, v, _ = make_batch([B * S], H, H, D, seed=11, device="cuda")
    cu = torch.arange(0, (B + 1) * S, S, dtype=torch.int32, device="cuda")
    packed = flamia.flash_attn_varlen_func(q, k, v, cu, cu, S, S)
    batched = flamia.flash_attn_func(q.view(B, S, H, D), k.view(B, S, H, D),
                                     v.view(B, S, H, D))
    assert torch.equal(batched.reshape(B * S, H, D), packed)


def test_unsupported_head_dim_on_cuda():
    q, k, v, cu = make_batch([64], 2, 2, 96, device="cuda")
    with pytest.raises((ValueError, flamia.FlamiaError), match="96"):
        flamia.flash_attn_varlen_func(q, k, v, cu, cu, 64, 64)


def test_invalid_cu_seqlens_on_cuda():
    q, k, v, _ = make_batch([64], 2, 2, 128, device="cuda")
    cu = torch.tensor([0, 40, 30, 64], dtype=torch.int32, device="cuda")
    with pytest.raises(ValueError, match="cu_seqlens"):
        flamia.flash_attn_varlen_func(q, k, v, cu, cu, 64, 64)


def _warm_up_and_capture(step, leaves):
    """torch.cuda.graph's recipe: warm up on a side stream, then capture."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            for t in leaves:
                t.grad = None
            step()
    torch.cuda.current_stream().wait_stream(s)
    for t in leaves:
        t.grad = None
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = step()
    return g, out


def test_cuda_graph_replays_a_training_step_identically():
    """Forward and backward captured in one CUDA graph; replays with new
    values in the captured inputs give eager mode's bits."""
    lengths = [700, 300, 24]
    q0, k0, v0, cu = make_batch(lengths, 4, 2, 128, seed=31, device="cuda")
    dout = torch.randn_like(q0, dtype=torch.float32).to(torch.bfloat16)
    leaves = [t.clone().requires_grad_() for t in (q0, k0, v0)]

    def step():
        out = flamia.flash_attn_varlen_func(*leaves, cu, cu, 700, 700)
        out.backward(dout)
        return out

    g, static_out = _warm_up_and_capture(step, leaves)
    for seed in (41, 42):
        q, k, v, _ = make_batch(lengths, 4, 2, 128, seed=seed, device="cuda")
        with torch.no_grad():
            for leaf, new in zip(leaves, (q, k, v)):
                leaf.copy_(new)
        g.replay()
        torch.cuda.synchronize()
        eager = _step(q, k, v, cu, True, dout)
        assert torch.equal(static_out, eager[0])
        for leaf, grad in zip(leaves, eager[2:]):
            assert torch.equal(leaf.grad, grad)


def test_cuda_graph_replays_a_forward_identically():
    q, k, v, cu = make_batch([900, 124], 2, 2, 128, seed=43, device="cuda")
    static_q = q.clone()

    def step():
        with torch.no_grad():
            return flamia.flash_attn_varlen_func(static_q, k, v, cu, cu, 900,
                                                 900)

    g, static_out = _warm_up_and_capture(step, [])
    q2, _, _, _ = make_batch([900, 124], 2, 2, 128, seed=44, device="cuda")
    static_q.copy_(q2)
    g.replay()
    torch.cuda.synchronize()
    with torch.no_grad():
        eager = flamia.flash_attn_varlen_func(q2, k, v, cu, cu, 900, 900)
    assert torch.equal(static_out, eager)


def test_capturing_without_a_warm_up_is_a_clear_error():
    q, k, v, _ = make_batch([512], 2, 2, 128, seed=45, device="cuda")
    cu = torch.tensor([0, 200, 512], dtype=torch.int32, device="cuda")
    g = torch.cuda.CUDAGraph()
    with pytest.raises(ValueError, match="run the same call .* once before "
                                         "capturing"):
        with torch.cuda.graph(g):
            with torch.no_grad():
                flamia.flash_attn_varlen_func(q, k, v, cu, cu, 312, 312)


def test_cu_seqlens_host_skips_every_synchronization():
    """With cu_seqlens_host, a training step makes no synchronizing CUDA call
    that PyTorch sees (set_sync_debug_mode raises on one), and gives the
    bits of the call without it. (The runtime's own driver calls are checked
    by CaptureOnFakeDriver in the unit tests.)"""
    lengths = [300, 1000, 77, 129, 0, 1]
    q, k, v, cu = make_batch(lengths, 2, 2, 128, seed=51, device="cuda")
    cu_cpu = cu.cpu()
    dout = torch.randn_like(q, dtype=torch.float32).to(torch.bfloat16)
    ref = _step(q, k, v, cu, True, dout)
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        out = flamia.flash_attn_varlen_func(*leaves, cu, cu, 1000, 1000,
                                            cu_seqlens_host=cu_cpu)
        out.backward(dout)
    finally:
        torch.cuda.set_sync_debug_mode("default")
    assert torch.equal(out, ref[0])
    for leaf, g in zip(leaves, ref[2:]):
        assert torch.equal(leaf.grad, g)


# (Hq, Hkv, D) of the random batches: kernel sets that bench/device-python.sh's
# FLAMIA_KERNEL_DIR holds (docs/python.md, "Kernels").
RANDOM_HEADS = [(2, 2, 128), (4, 2, 128), (4, 1, 128), (4, 2, 64), (2, 1, 64),
                (8, 2, 64)]


@pytest.mark.parametrize("seed", range(8))
def test_random_varlen_batches_match_the_cpu_reference(seed):
    """flash-attn's style of test: random document lengths (empty and
    1-token documents included), GQA ratios 1-4, D = 64 and 128, causal and
    not, against the CPU op with the tolerances of
    test_matches_the_cpu_reference."""
    g = torch.Generator().manual_seed(1000 + seed)
    n = int(torch.randint(1, 9, (1,), generator=g))
    lengths = torch.randint(0, 700, (n,), generator=g)
    lengths[torch.rand(n, generator=g) < 0.2] = 0
    lengths[torch.rand(n, generator=g) < 0.2] = 1
    lengths = [int(x) for x in lengths]
    if sum(lengths) == 0:
        lengths[0] = 129
    # Seeds 0-5: every head configuration, causal; 6-7: not causal (the
    # non-causal set has 2 heads, D = 128).
    causal = seed < len(RANDOM_HEADS)
    hq, hkv, d = RANDOM_HEADS[seed] if causal else (2, 2, 128)
    q, k, v, cu = make_batch(lengths, hq, hkv, d, seed=seed)
    dout = torch.randn(q.shape, generator=g).to(torch.bfloat16)
    ref = _step(q, k, v, cu, causal, dout)
    gpu = [t.cpu() for t in _step(*(t.cuda() for t in (q, k, v, cu)), causal,
                                  dout.cuda())]
    assert rel_l2(gpu[0], ref[0]) < 1e-3, lengths
    assert (gpu[1] - ref[1]).abs().max().item() < 1e-3, lengths
    for x, r in zip(gpu[2:], ref[2:]):
        assert rel_l2(x, r) < 1e-2, lengths
