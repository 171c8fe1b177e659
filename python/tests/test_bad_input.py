"""Bad input to the op gets an error that names the problem."""
from __future__ import annotations

import pytest
import torch

import flamia

from conftest import make_batch


def call(q, k, v, cu, cu_k=None, max_q=64, max_k=64, **kw):
    return flamia.flash_attn_varlen_func(
        q, k, v, cu, cu if cu_k is None else cu_k, max_q, max_k, **kw)


@pytest.fixture
def batch():
    return make_batch([40, 24], 4, 2, 64)


def test_float16_inputs(batch):
    q, k, v, cu = batch
    with pytest.raises(ValueError, match=r"q is torch.float16; FLAMIA takes "
                                         r"bfloat16"):
        call(q.half(), k, v, cu)


def test_two_dimensional_q(batch):
    q, k, v, cu = batch
    with pytest.raises(ValueError, match=r"q must be \[total_tokens, heads, "
                                         r"head_dim\], got shape \(64, 256\)"):
        call(q.reshape(64, 256), k, v, cu)


def test_heads_not_a_multiple(batch):
    q, k, v, cu = batch
    with pytest.raises(ValueError, match="4 query heads are not a multiple "
                                         "of 3 key/value heads"):
        call(q, k.repeat(1, 2, 1)[:, :3], v.repeat(1, 2, 1)[:, :3], cu)


def test_k_and_v_shapes_differ(batch):
    q, k, v, cu = batch
    with pytest.raises(ValueError, match="k has shape .* but v has"):
        call(q, k, v[:, :1], cu)


def test_cu_seqlens_int64(batch):
    q, k, v, cu = batch
    with pytest.raises(ValueError, match="cu_seqlens_q is torch.int64; it "
                                         "must be torch.int32"):
        call(q, k, v, cu.long())


def test_cu_seqlens_not_ending_at_total_tokens(batch):
    q, k, v, _ = batch
    cu = torch.tensor([0, 40, 60], dtype=torch.int32)
    with pytest.raises(ValueError, match="cu_seqlens"):
        call(q, k, v, cu)


def test_cu_seqlens_decreasing(batch):
    q, k, v, _ = batch
    cu = torch.tensor([0, 50, 40, 64], dtype=torch.int32)
    with pytest.raises(ValueError, match="cu_seqlens"):
        call(q, k, v, cu)


def test_cu_seqlens_not_starting_at_zero(batch):
    q, k, v, _ = batch
    cu = torch.tensor([4, 40, 64], dtype=torch.int32)
    with pytest.raises(ValueError, match="cu_seqlens"):
        call(q, k, v, cu)


def test_max_seqlen_smaller_than_a_document(batch):
    q, k, v, cu = batch
    with pytest.raises(ValueError, match="max_seqlen_q is 30 but document 0 "
                                         "of cu_seqlens_q has 40 tokens"):
        call(q, k, v, cu, max_q=30)


def test_cu_seqlens_k_differs(batch):
    q, k, v, cu = batch
    other = torch.tensor([0, 32, 64], dtype=torch.int32)
    with pytest.raises(ValueError, match="cu_seqlens_k must equal "
                                         "cu_seqlens_q"):
        call(q, k, v, cu, cu_k=other)


def test_head_dim_not_a_multiple_of_32():
    q, k, v, cu = make_batch([64], 2, 2, 48)
    with pytest.raises(ValueError, match="48"):
        call(q, k, v, cu)


def test_unknown_recipe(batch):
    q, k, v, cu = batch
    with pytest.raises(ValueError, match="fp4ever.*mxfp8"):
        call(q, k, v, cu, recipe="fp4ever")


def test_bad_safe_block(batch):
    q, k, v, cu = batch
    with pytest.raises(ValueError, match="safe_block .* got 100"):
        call(q, k, v, cu, safe_block=100)


def test_negative_softmax_scale(batch):
    q, k, v, cu = batch
    with pytest.raises(ValueError, match="softmax_scale must be finite and "
                                         "> 0, got -1.0"):
        call(q, k, v, cu, softmax_scale=-1.0)


def test_cu_seqlens_on_another_device(batch):
    q, k, v, cu = batch
    with pytest.raises(ValueError, match="cu_seqlens_q is on meta but q is "
                                         "on cpu"):
        call(q, k, v, cu.to("meta"))


def test_cu_seqlens_host_differs(batch):
    q, k, v, cu = batch
    with pytest.raises(ValueError, match="cu_seqlens_host differs from "
                                         "cu_seqlens_q"):
        call(q, k, v, cu, cu_seqlens_host=torch.tensor([0, 30, 64],
                                                       dtype=torch.int32))


def test_cu_seqlens_host_of_another_length(batch):
    q, k, v, cu = batch
    with pytest.raises(ValueError, match="cu_seqlens_host has 2 entries but "
                                         "cu_seqlens_q has 3"):
        call(q, k, v, cu, cu_seqlens_host=torch.tensor([0, 64],
                                                       dtype=torch.int32))


def test_cu_seqlens_host_not_int32(batch):
    q, k, v, cu = batch
    with pytest.raises(ValueError, match="cu_seqlens_host must be a 1-D "
                                         "torch.int32 CPU tensor, got "
                                         "torch.int64"):
        call(q, k, v, cu, cu_seqlens_host=cu.long())


@pytest.mark.parametrize("option,message", [
    ({"dropout_p": 0.1}, r"does not implement attention dropout "
                         r"\(dropout_p=0.1\)"),
    ({"window_size": (128, 0)}, r"sliding-window attention "
                                r"\(window_size=\(128, 0\)\)"),
    ({"softcap": 30.0}, r"score softcapping \(softcap=30.0\)"),
    ({"alibi_slopes": torch.ones(4)}, r"does not implement ALiBi"),
    ({"return_attn_probs": True}, r"does not return attention probabilities"),
])
def test_flash_attn_options_that_are_not_implemented(batch, option, message):
    q, k, v, cu = batch
    with pytest.raises(ValueError, match=message):
        call(q, k, v, cu, **option)
    with pytest.raises(ValueError, match=message):
        flamia.flash_attn_func(q.view(1, 64, 4, 64), k.view(1, 64, 2, 64),
                               v.view(1, 64, 2, 64), **option)


def test_flash_attn_defaults_are_accepted(batch):
    q, k, v, cu = batch
    a = call(q, k, v, cu)
    b = call(q, k, v, cu, dropout_p=0.0, window_size=(-1, -1), softcap=0.0,
             alibi_slopes=None, return_attn_probs=False)
    assert torch.equal(a, b)
