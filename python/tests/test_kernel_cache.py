"""The kernel cache: compiled on first use into $FLAMIA_CACHE_DIR, reused
after, safe when processes race, and FLAMIA_KERNEL_DIR searched first."""
from __future__ import annotations

import json
import multiprocessing
import os
import shutil

import pytest

from flamia import _kernels

SPEC = _kernels.KernelSpec(target="sm_90a", head_dim=64, backward=True)

needs_ptxas = pytest.mark.skipif(
    not (shutil.which("ptxas") or os.path.exists("/usr/local/cuda/bin/ptxas")
         or os.environ.get("FLAMIA_PTXAS"))
    or not _kernels.compiler_available(),
    reason="needs the compiler and CUDA's ptxas")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FLAMIA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("FLAMIA_KERNEL_DIR", raising=False)
    return tmp_path / "cache"


@needs_ptxas
def test_compiled_on_first_use_then_reused(cache):
    d = _kernels.get(SPEC)
    assert d == cache / SPEC.key()
    m = json.loads((d / "manifest.json").read_text())
    names = [k["name"] for k in m["kernels"]]
    assert names == ["flamia_quantize", "flamia_attention_fwd",
                     "flamia_quantize_grad", "flamia_attention_dq",
                     "flamia_attention_dkdv"]
    assert all((d / f"{n}.cubin").is_file() for n in names)
    # One set for every head count: the manifest's shapes name Hq and Hkv.
    assert "heads" not in m and "kv_heads" not in m
    shapes = {b["name"]: b["shape"] for b in m["buffers"]}
    assert shapes["q"] == ["T", "Hq", "64"] and shapes["k"] == ["T", "Hkv", "64"]
    stamp = (d / "manifest.json").stat().st_mtime_ns
    assert _kernels.get(SPEC) == d
    assert (d / "manifest.json").stat().st_mtime_ns == stamp
    # Nothing but the set is left in the cache (no temporary directories).
    assert [p.name for p in cache.iterdir()] == [SPEC.key()]


def _get_in_process(cache_dir, queue):
    os.environ["FLAMIA_CACHE_DIR"] = cache_dir
    queue.put(str(_kernels.get(SPEC)))


@needs_ptxas
def test_concurrent_processes_share_one_set(cache):
    ctx = multiprocessing.get_context("spawn")
    q = ctx.Queue()
    procs = [ctx.Process(target=_get_in_process, args=(str(cache), q))
             for _ in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(300)
        assert p.exitcode == 0
    results = {q.get(timeout=5) for _ in procs}
    assert results == {str(cache / SPEC.key())}
    assert [p.name for p in cache.iterdir()] == [SPEC.key()]
    json.loads((cache / SPEC.key() / "manifest.json").read_text())


def test_kernel_dir_is_searched_first(cache, tmp_path, monkeypatch):
    elsewhere = tmp_path / "prebuilt"
    (elsewhere / SPEC.key()).mkdir(parents=True)
    (elsewhere / SPEC.key() / "manifest.json").write_text("{}")
    monkeypatch.setenv("FLAMIA_KERNEL_DIR", str(elsewhere))
    assert _kernels.get(SPEC) == elsewhere / SPEC.key()
    assert not cache.exists()


@pytest.mark.skipif(not _kernels.compiler_available(),
                    reason="needs the compiler")
def test_unsupported_head_dim_is_a_compile_error(cache):
    bad = _kernels.KernelSpec(target="sm_90a", head_dim=96)
    with pytest.raises(ValueError, match="96"):
        _kernels.get(bad)
    assert not (cache / bad.key()).exists()


def test_keys_name_every_specialization():
    a = SPEC.key()
    assert a == "v0.1.0-sm_90a-mxfp8-d64-anyh-causal-sb128-train-bf16"
    assert _kernels.KernelSpec(target="sm_90a", head_dim=64,
                               causal=False).key() == \
        "v0.1.0-sm_90a-mxfp8-d64-anyh-full-sb128-fwd"


@needs_ptxas
def test_training_on_sm100a_nvfp4_set(cache):
    """sm_100a has nvfp4-mixed training kernels: the set holds the five
    kernels, the E2M1 per-token payloads (two codes a byte) the tcgen05
    kernels read with their UE4M3 scale-factor tiles, and no dequantized
    copy (those are sm_90a's)."""
    spec = _kernels.KernelSpec(target="sm_100a", head_dim=64, backward=True,
                               recipe="nvfp4-mixed")
    d = _kernels.get(spec)
    assert d == cache / spec.key()
    m = json.loads((d / "manifest.json").read_text())
    assert m["target"] == "sm_100a"
    assert m["recipe"]["kind"] == "nvfp4-mixed"
    assert [k["name"] for k in m["kernels"]] == [
        "flamia_quantize", "flamia_attention_fwd", "flamia_quantize_grad",
        "flamia_attention_dq", "flamia_attention_dkdv"]
    buffers = {b["name"]: b for b in m["buffers"]}
    for name in ("q_pt", "k_pt", "v_pt", "do_pt"):
        assert buffers[name]["shape"][2] == "32"
        assert buffers[name]["holds"]["format"] == "e2m1"
    assert buffers["k_sf"]["holds"]["format"] == "e4m3"
    assert not [n for n in buffers if n.endswith("_deq")]
    params = {k["name"]: [p["name"] for p in k["params"]]
              for k in m["kernels"]}
    assert params["flamia_attention_dq"][:2] == ["q_pt", "q_sf"]
    assert "do_pt" in params["flamia_attention_dkdv"]


@needs_ptxas
def test_nvfp4_mixed_forward_set(cache):
    """Recipe nvfp4-mixed has sm_90a forward kernels: NVFP4 per-token Q and K
    (E4M3 scales per 16 channels, and the bf16 dequantized copies the
    kernels read; no E2M1 payloads, which no sm_90a kernel reads)."""
    spec = _kernels.KernelSpec(target="sm_90a", head_dim=128,
                               recipe="nvfp4-mixed")
    d = _kernels.get(spec)
    m = json.loads((d / "manifest.json").read_text())
    assert m["recipe"]["kind"] == "nvfp4-mixed"
    assert [k["name"] for k in m["kernels"]] == ["flamia_quantize",
                                                 "flamia_attention_fwd"]
    buffers = {b["name"]: b for b in m["buffers"]}
    assert "k_pt" not in buffers
    assert buffers["k_deq"]["holds"]["layout"] == "per_token"
    assert buffers["k_pt_scales"]["shape"] == ["T", "Hkv", "8"]
    assert buffers["k_pt_scales"]["holds"]["format"] == "e4m3"


@needs_ptxas
@pytest.mark.parametrize("recipe,strict,per_token_scales", [
    ("nvfp4-mixed", False, "e4m3"), ("mxfp8-strict", True, "e8m0")])
def test_second_copy_training_sets(cache, recipe, strict, per_token_scales):
    """The training sets of nvfp4-mixed and mxfp8-strict: K, V and dO per
    token for S = Q K^T and dP = dO V^T, and in 32x32 token blocks for the
    token-contracted GEMMs; the backward kernels read both copies."""
    spec = _kernels.KernelSpec(target="sm_90a", head_dim=128, recipe=recipe,
                               backward=True)
    d = _kernels.get(spec)
    m = json.loads((d / "manifest.json").read_text())
    assert m["recipe"]["kind"] == recipe.replace("-strict", "")
    assert m["recipe"]["strict"] is strict
    assert len(m["kernels"]) == 5
    buffers = {b["name"]: b for b in m["buffers"]}
    for name in ("k_pt_scales", "v_pt_scales", "do_pt_scales"):
        assert buffers[name]["holds"]["layout"] == "per_token"
        assert buffers[name]["holds"]["format"] == per_token_scales
    for name in ("k_tb_deq", "do_tb_deq"):
        assert buffers[name]["holds"]["layout"] == "token_block"
    params = {k["name"]: [p["name"] for p in k["params"]]
              for k in m["kernels"]}
    assert "k_tb_deq" in params["flamia_attention_dq"]
    assert "do_tb_deq" in params["flamia_attention_dkdv"]


@pytest.mark.skipif(not _kernels.compiler_available(),
                    reason="needs the compiler")
def test_strict_on_sm100a_is_an_error(cache):
    """Strict mode has sm_90a kernels only: sm_100a's quantize K in 32x32
    token blocks, and the compiler says so."""
    spec = _kernels.KernelSpec(target="sm_100a", head_dim=128,
                               recipe="mxfp8-strict")
    with pytest.raises(ValueError, match="no sm_100a kernels implement strict "
                       "mxfp8"):
        _kernels.get(spec)
    assert not (cache / spec.key()).exists()


@needs_ptxas
def test_precompile_writes_one_set_for_every_head_count(tmp_path, capsys):
    """python -m flamia.precompile: the set it writes has no head counts;
    --heads from older scripts is accepted with a note, not baked in."""
    from flamia import precompile
    out = tmp_path / "kernels"
    assert precompile.main(["--out", str(out), "--target", "sm_90a",
                            "--head-dim", "64", "--heads", "8"]) == 0
    spec = _kernels.KernelSpec(target="sm_90a", head_dim=64)
    assert [p.name for p in out.iterdir()] == [spec.key()]
    m = json.loads((out / spec.key() / "manifest.json").read_text())
    assert "heads" not in m
    assert "serves every query and key/value head count" in capsys.readouterr().err
