"""The training study's code (bench/train, docs/training.md) on the CPU: the
leaky recipes' quantizer follows the contract's scale rule and really sees
the future, the safe variants do not, batches cover the data, and one tiny
training run goes end to end through FLAMIA's CPU path."""
from __future__ import annotations

import sys

import numpy as np
import pytest
import torch

from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench" / "train"))
import attention as A  # noqa: E402
import train as TR  # noqa: E402


def test_scale_rule_is_the_contracts():
    amax = torch.tensor([448.0, 449.0, 1.0, 0.0, 6.0, 2.0 ** -140])
    assert A.mx_scale_exponent(amax, "e4m3").tolist() == [0, 1, -8, -127, -6,
                                                          -127]
    # E2M1: the smallest e with amax / 2^e <= 6.
    assert A.mx_scale_exponent(torch.tensor([6.0, 6.5, 1.0]),
                               "e2m1").tolist() == [0, 1, -2]


def test_e2m1_rounds_to_nearest_even():
    x = torch.tensor([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, -0.3, 0.8, 6.0,
                      -5.9, 0.1])
    assert A.round_e2m1(x).tolist() == [0.0, 1.0, 1.0, 2.0, 2.0, 4.0, 4.0,
                                        -0.5, 1.0, 6.0, -6.0, 0.0]


def test_token_blocks_restart_at_each_document():
    cu = torch.tensor([0, 40, 41, 105], dtype=torch.int32)
    block, n = A.token_blocks(cu, 105)
    assert n == 2 + 1 + 2
    assert block[:32].eq(0).all() and block[32:40].eq(1).all()
    assert block[40] == 2 and block[41:73].eq(3).all() and block[73:].eq(4).all()


def _outputs(variant, q, k, v, cu):
    fn, _ = A.make_attention(variant, "cpu")
    return fn(q, k, v, cu, int((cu[1:] - cu[:-1]).max()), cu)


@pytest.mark.parametrize("variant", ["leaky", "leaky-fp4"])
def test_leaky_outputs_see_later_tokens(variant):
    g = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(64, 1, 32, generator=g).bfloat16() for _ in range(3))
    cu = torch.tensor([0, 40, 64], dtype=torch.int32)
    before = _outputs(variant, q, k, v, cu)
    v2 = v.clone()
    v2[20] *= 2.0 ** 20  # token 20 raises its block's scale (tokens 0-31)
    after = _outputs(variant, q, k, v2, cu)
    assert not torch.equal(before[:20], after[:20])  # the past sees it
    assert torch.equal(before[40:], after[40:])  # the next document does not


@pytest.mark.parametrize("variant", ["bf16", "flamia"])
def test_safe_outputs_never_see_later_tokens(variant):
    g = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(64, 1, 32, generator=g).bfloat16() for _ in range(3))
    cu = torch.tensor([0, 64], dtype=torch.int32)
    before = _outputs(variant, q, k, v, cu)
    q2, k2, v2 = q.clone(), k.clone(), v.clone()
    for t in (q2, k2, v2):
        t[20] *= 2.0 ** 20
    after = _outputs(variant, q2, k2, v2, cu)
    assert torch.equal(before[:20], after[:20])
    assert not torch.equal(before[20:], after[20:])


def test_batches_cover_every_token_once_per_epoch():
    bounds = np.array([0, 10, 300, 305, 900, 1000])
    docs = TR.chunk_documents(bounds, 256)
    assert all(e - s <= 256 for s, e in docs)
    assert sorted(docs) == docs and docs[0] == (0, 10) and docs[-1] == (900, 1000)
    covered = sorted(t for s, e in docs for t in range(s, e))
    assert covered == list(range(1000))
    batches = TR.training_batches(bounds, 256, 50, seed=7)
    assert len(batches) == 50
    assert all(sum(e - s for s, e in b) <= 256 for b in batches)
    assert batches == TR.training_batches(bounds, 256, 50, seed=7)
    assert batches != TR.training_batches(bounds, 256, 50, seed=8)
    # The first epoch holds every piece exactly once.
    first, seen = [], 0
    for b in batches:
        first.extend(b)
        seen += sum(e - s for s, e in b)
        if seen >= 1000:
            break
    assert sorted(first) == docs


def _synthetic_data(path, seed=0):
    """Documents of a repeating pattern (learnable) with natural-ish lengths,
    in prepare_data.py's format."""
    rng = np.random.default_rng(seed)
    for split, n in (("train", 40), ("val", 6)):
        ids, bounds = [], [0]
        for _ in range(n):
            length = int(rng.integers(30, 200))
            start = int(rng.integers(1, 50))
            ids.extend([0] + [(start + 3 * i) % 60 + 1 for i in range(length)])
            bounds.append(len(ids))
        np.asarray(ids, np.uint16).tofile(path / f"{split}.bin")
        np.save(path / f"{split}_docs.npy", np.asarray(bounds, np.int64))


def test_tiny_training_run_through_flamia_cpu(tmp_path):
    _synthetic_data(tmp_path)
    log = tmp_path / "log.jsonl"
    summary = TR.main(["--data", str(tmp_path), "--attention", "flamia",
                       "--config", "tiny", "--steps", "8",
                       "--tokens-per-step", "512", "--lr", "3e-3",
                       "--warmup", "2", "--eval-every", "4",
                       "--leak-docs", "3", "--leak-len", "24",
                       "--device", "cpu", "--log", str(log)])
    assert summary["nonfinite_steps"] == 0
    assert summary["implementation"] == "flamia-mxfp8"
    losses = [r["loss"] for r in map(__import__("json").loads,
                                     log.read_text().splitlines())
              if r["kind"] == "train"]
    assert losses[-1] < losses[0] - 0.5  # it learns the pattern
    leak = summary["leak_study"]
    assert leak["tokens"] == 3 * 23
    # Causal: a token's loss is the same with or without what follows.
    assert leak["max_abs_token_difference"] < 1e-4
    assert summary["attention_speed"] is None  # CPU: not measured


@pytest.mark.parametrize("variant", ["mxfp8-forward", "mxfp8-backward"])
def test_hybrids_take_value_and_gradient_from_different_halves(variant):
    g = torch.Generator().manual_seed(5)
    q, k, v = (torch.randn(48, 2, 32, generator=g).bfloat16() for _ in range(3))
    do = torch.randn(48, 2, 32, generator=g).bfloat16()
    cu = torch.tensor([0, 20, 48], dtype=torch.int32)
    results = {}
    for name in ("flamia", "bf16", variant):
        qq, kk, vv = (t.clone().requires_grad_() for t in (q, k, v))
        o = _outputs(name, qq, kk, vv, cu)
        o.backward(do)
        results[name] = (o.detach(), qq.grad, kk.grad, vv.grad)
    value, grad = (("flamia", "bf16") if variant == "mxfp8-forward"
                   else ("bf16", "flamia"))
    assert torch.equal(results[variant][0], results[value][0])
    for mine, theirs, other in zip(results[variant][1:], results[grad][1:],
                                   results[value][1:]):
        assert torch.allclose(mine.float(), theirs.float(), atol=1e-2)
        assert not torch.equal(theirs, other)  # the halves differ
