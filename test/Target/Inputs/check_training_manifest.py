"""Checks the training-step parts of a manifest.json written by flamia-compile --backward
against docs/runtime-abi.md ("The backward kernels"): sm_90a's dequantized
copies, or (--target sm_100a) the E4M3 payloads and 128x4 scale-factor tiles
the tcgen05 kernels read, in both orientations of each token-block copy.
With --recipe mxfp8-strict or nvfp4-mixed: the second copies those recipes need
(K, V and dO per token where the head dim is contracted, in 32x32 token blocks
where tokens are)."""
import argparse
import json
import sys

ap = argparse.ArgumentParser()
ap.add_argument("manifest")
# Either static head counts or --runtime-heads (the Hq and Hkv symbols, and
# Hq/Hkv parameters on every kernel: one kernel set for every head count).
ap.add_argument("--heads", type=int)
ap.add_argument("--kv-heads", type=int)
ap.add_argument("--runtime-heads", action="store_true")
ap.add_argument("--head-dim", type=int, required=True)
ap.add_argument("--grad-dtype", default="bf16")
ap.add_argument("--recipe", default="mxfp8",
                choices=["mxfp8", "mxfp8-strict", "nvfp4-mixed"])
# sm_90a writes the payloads (no kernel of it reads them) only when
# compiled with --payloads; by default scales and dequantized copies.
ap.add_argument("--payloads", action="store_true")
ap.add_argument("--target", default="sm_90a", choices=["sm_90a", "sm_100a"])
a = ap.parse_args()
m = json.load(open(a.manifest))
errors = []
def expect(cond, what):
    if not cond:
        errors.append(what)

if a.runtime_heads == (a.heads is not None or a.kv_heads is not None):
    sys.exit("give --heads and --kv-heads, or --runtime-heads")
if a.runtime_heads:
    H, HKV = "Hq", "Hkv"
    expect("heads" not in m and "kv_heads" not in m,
           "a runtime-heads manifest states no head counts")
else:
    H, HKV = str(a.heads), str(a.kv_heads)
    expect(m.get("heads") == a.heads and m.get("kv_heads") == a.kv_heads,
           f"heads {m.get('heads')}/{m.get('kv_heads')}")
D, C = str(a.head_dim), str(a.head_dim // 32)
# The runtime head counts come last in every kernel's parameters.
HEADS = ["Hq", "Hkv"] if a.runtime_heads else []
kernels = [(k["name"], k["phase"], k["grid"], k["launch"]) for k in m["kernels"]]
expect(kernels == [
    ("flamia_quantize", "forward", ["NB", "Hq", "1"], "grid"),
    ("flamia_attention_fwd", "forward", ["NUM_SMS", "1", "1"], "persistent"),
    ("flamia_quantize_grad", "backward", ["NB", "Hq", "1"], "grid"),
    ("flamia_attention_dq", "backward", ["NUM_SMS", "1", "1"], "persistent"),
    ("flamia_attention_dkdv", "backward", ["NUM_SMS", "1", "1"], "persistent"),
], f"kernels: {kernels}")
buffers = {b["name"]: b for b in m["buffers"]}
def buf(name, role, dtype, shape, holds=None):
    if holds is not None and holds["part"] == "payload" and not a.payloads and a.target == "sm_90a":
        expect(name not in buffers, f"a payload without --payloads: {name}")
        return
    b = buffers.get(name)
    expect(b is not None, f"no buffer {name}")
    if b is None:
        return
    got = (b["role"], b["dtype"], b["shape"], b.get("holds"))
    expect(got == (role, dtype, shape, holds), f"{name}: {got}")
def holds(part, tensor, layout, fmt):
    return dict(part=part, tensor=tensor, layout=layout, format=fmt)
buf("q", "input", "bf16", ["T", H, D])
buf("k", "input", "bf16", ["T", HKV, D])
buf("lse", "output", "f32", [H, "T"])
buf("k_tb_scales", "workspace", "u8", ["NB", HKV, C], holds("scales", "k", "token_block", "e8m0"))
buf("grad_o", "input", "bf16", ["T", H, D])
for name, heads in (("dq", H), ("dk", HKV), ("dv", HKV)):
    buf(name, "output", a.grad_dtype, ["T", heads, D])
# dO's 32x32 copy (its payload on sm_100a or with --payloads), D, the key-tile items.
buf("do_tb", "workspace", "u8", ["T", H, D], holds("payload", "grad_o", "token_block", "e4m3"))
buf("do_tb_scales", "workspace", "u8", ["NB", H, C], holds("scales", "grad_o", "token_block", "e8m0"))
buf("delta", "workspace", "f32", [H, "T"], holds("delta", "grad_o", "per_token", "f32"))
buf("kv_items", "schedule", "i32", ["NUM_KV_ITEMS", "8"])
if a.target == "sm_100a":
    # The forward's copies the backward rereads (S is recomputed from the
    # same Q and K payloads), and each token-block copy's scale tile in the
    # second orientation: rows = channels where tokens are contracted
    # (dQ = dS K, dV = P^T dO, dK = dS^T Q_tb), rows = tokens for V in
    # dP = dO V^T. No dequantized copies.
    expect(a.recipe == "mxfp8", "sm_100a has mxfp8 backward kernels only")
    def tiles(tensor, layout, rows):
        return holds("scale_tiles", tensor, layout, "e8m0") | dict(tile_rows=rows)
    buf("q_pt", "workspace", "u8", ["T", H, D], holds("payload", "q", "per_token", "e4m3"))
    buf("q_tb", "workspace", "u8", ["T", H, D], holds("payload", "q", "token_block", "e4m3"))
    buf("k_tb", "workspace", "u8", ["T", HKV, D], holds("payload", "k", "token_block", "e4m3"))
    buf("v_tb", "workspace", "u8", ["T", HKV, D], holds("payload", "v", "token_block", "e4m3"))
    for name, tensor, layout, rows, heads in (
            ("q_sf", "q", "per_token", "tokens", H),
            ("k_sf", "k", "token_block", "tokens", HKV),
            ("v_sf", "v", "token_block", "channels", HKV),
            ("q_tb_sf_channels", "q", "token_block", "channels", H),
            ("k_sf_channels", "k", "token_block", "channels", HKV),
            ("v_sf_tokens", "v", "token_block", "tokens", HKV),
            ("do_sf", "grad_o", "token_block", "tokens", H),
            ("do_sf_channels", "grad_o", "token_block", "channels", H)):
        buf(name, "workspace", "u8", ["NB", heads, "512"], tiles(tensor, layout, rows))
    for name in buffers:
        expect(not name.endswith("_deq"), f"sm_100a reads no dequantized copy: {name}")
    params = {k["name"]: [p["name"] for p in k["params"]] for k in m["kernels"]}
    expect(params["flamia_quantize_grad"] == ["grad_o", "o", "block_info", "do_tb", "do_tb_scales",
                                              "do_sf", "do_sf_channels", "delta", "T"] + HEADS,
           f"quantize_grad params {params['flamia_quantize_grad']}")
    safe = ["q", "k", "v", "grad_o", "lse", "delta"]
    tail = ["counter", "softmax_scale_log2", "softmax_scale", "T"] + HEADS
    expect(params["flamia_attention_dq"] ==
           ["q_pt", "q_sf", "k_tb", "k_sf", "k_sf_channels", "v_tb", "v_sf_tokens", "do_tb", "do_sf"]
           + safe + ["dq", "items", "num_items"] + tail, f"dq params {params['flamia_attention_dq']}")
    expect(params["flamia_attention_dkdv"] ==
           ["q_pt", "q_sf", "k_tb", "k_sf", "v_tb", "v_sf_tokens", "do_tb", "do_sf", "do_sf_channels",
            "q_tb", "q_tb_sf_channels"] + safe + ["dk", "dv", "kv_items", "num_kv_items"] + tail,
           f"dkdv params {params['flamia_attention_dkdv']}")
    launch = {k["name"]: k for k in m["kernels"]}
    for name in ("flamia_attention_dq", "flamia_attention_dkdv"):
        k = launch[name]
        # Producer, MMA issuer, two gradient warpgroups; within the 227 KiB
        # of shared memory an sm_100a block may opt into.
        expect(k["block"] == [512, 1, 1], f"{name} block {k['block']}")
        expect(0 < k["smem_bytes"] <= 232448, f"{name} smem {k['smem_bytes']}")
    maps = {p["name"]: p for p in launch["flamia_attention_dkdv"]["params"]}
    # The dK/dV kernel's query side in 64-row boxes, the key side in 128.
    for name in ("q_pt", "do_tb", "q_tb"):
        expect(maps[name]["kind"] == "tensormap" and maps[name]["box"] == [64, int(D)]
               and maps[name]["dtype"] == "u8", f"dkdv {name} {maps[name]}")
    for name in ("q", "grad_o"):
        expect(maps[name]["box"] == [64, 64], f"dkdv {name} box {maps[name]['box']}")
    for name in ("k_tb", "v_tb"):
        expect(maps[name]["box"] == [128, int(D)], f"dkdv {name} box {maps[name]['box']}")
    for name in ("q_sf", "k_sf", "v_sf_tokens", "do_sf", "do_sf_channels", "q_tb_sf_channels", "lse", "delta"):
        expect(maps[name]["kind"] == "ptr", f"dkdv {name} is a pointer")
else:
    buf("q_tb_deq", "workspace", "bf16", ["T", H, D], holds("dequantized", "q", "token_block", "bf16"))
    second = a.recipe != "mxfp8"
    expect(m["recipe"]["kind"] == a.recipe.replace("-strict", "")
           and m["recipe"]["strict"] == (a.recipe == "mxfp8-strict"), f"recipe {m['recipe']}")
    if second:
        # The per-token copies of S = Q K^T (K) and dP = dO V^T (dO, V): MXFP8
        # 1x32 (strict) or NVFP4 1x16, two E2M1 a byte (nvfp4-mixed).
        nv = a.recipe == "nvfp4-mixed"
        pay, scl = ("e2m1", "e4m3") if nv else ("e4m3", "e8m0")
        PD, PC = (str(a.head_dim // 2), str(a.head_dim // 16)) if nv else (D, C)
        for name, tensor, heads in (("k_pt", "k", HKV), ("v_pt", "v", HKV), ("do_pt", "grad_o", H)):
            buf(name, "workspace", "u8", ["T", heads, PD], holds("payload", tensor, "per_token", pay))
            buf(name + "_scales", "workspace", "u8", ["T", heads, PC], holds("scales", tensor, "per_token", scl))
        buf("k_tb", "workspace", "u8", ["T", HKV, D], holds("payload", "k", "token_block", "e4m3"))
        buf("k_deq", "workspace", "bf16", ["T", HKV, D], holds("dequantized", "k", "per_token", "bf16"))
        buf("k_tb_deq", "workspace", "bf16", ["T", HKV, D], holds("dequantized", "k", "token_block", "bf16"))
        buf("v_deq", "workspace", "bf16", ["T", HKV, D], holds("dequantized", "v", "token_block", "bf16"))
        buf("v_pt_deq", "workspace", "bf16", ["T", HKV, D], holds("dequantized", "v", "per_token", "bf16"))
        buf("do_deq", "workspace", "bf16", ["T", H, D], holds("dequantized", "grad_o", "per_token", "bf16"))
        buf("do_tb_deq", "workspace", "bf16", ["T", H, D], holds("dequantized", "grad_o", "token_block", "bf16"))
    else:
        buf("do_deq", "workspace", "bf16", ["T", H, D], holds("dequantized", "grad_o", "token_block", "bf16"))
        for name in ("k_pt", "v_pt", "do_pt", "k_tb_deq", "v_pt_deq", "do_tb_deq"):
            expect(name not in buffers, f"mxfp8 has one copy of K, V, dO: no {name}")
    params = {k["name"]: [p["name"] for p in k["params"]] for k in m["kernels"]}
    grad_copies = (["do_pt", "do_pt_scales", "do_tb", "do_tb_scales", "do_deq", "do_tb_deq"] if second
                   else ["do_tb", "do_tb_scales", "do_deq"])
    if not a.payloads:
        grad_copies = [n for n in grad_copies if n not in ("do_pt", "do_tb")]
    expect(params["flamia_quantize_grad"] == ["grad_o", "o", "block_info"] + grad_copies + ["delta", "T"] + HEADS,
           f"quantize_grad params {params['flamia_quantize_grad']}")
    # dP = dO V^T reads V's per-token copy where there is one; dQ = dS K K's
    # token-block copy, dV = P^T dO dO's.
    common = ["q_deq", "k_deq", "v_pt_deq" if second else "v_deq", "do_deq"]
    dq_extra = ["k_tb_deq"] if second else []
    dkdv_extra = ["q_tb_deq"] + (["do_tb_deq"] if second else [])
    safe = ["q", "k", "v", "grad_o", "lse", "delta"]
    tail = ["counter", "softmax_scale_log2", "softmax_scale", "T"] + HEADS
    expect(params["flamia_attention_dq"] == common + dq_extra + safe + ["dq", "items", "num_items"] + tail,
           f"dq params {params['flamia_attention_dq']}")
    expect(params["flamia_attention_dkdv"] == common + dkdv_extra + safe + ["dk", "dv", "kv_items", "num_kv_items"] + tail,
           f"dkdv params {params['flamia_attention_dkdv']}")
    # Tensor maps: the dK/dV kernel reads its query-side tiles in 64-row boxes.
    maps = {p["name"]: p for k in m["kernels"] if k["name"] == "flamia_attention_dkdv" for p in k["params"]}
    expect(maps["q_deq"]["kind"] == "tensormap" and maps["q_deq"]["box"][0] == 64, f"dkdv q_deq {maps['q_deq']}")
    expect(maps["k_deq"]["kind"] == "tensormap" and maps["k_deq"]["box"][0] == 128, f"dkdv k_deq {maps['k_deq']}")
    expect(maps["lse"]["kind"] == "ptr" and maps["delta"]["kind"] == "ptr", "lse/delta are pointers")
    # The tensor maps' 2-D view [T, H * D] of each packed tensor.
    for name, heads in (("q_deq", H), ("k_deq", HKV), ("grad_o", H)):
        want = ["T", f"{heads} * {D}" if a.runtime_heads else str(int(heads) * int(D))]
        expect(maps[name]["dims"] == want, f"dkdv {name} dims {maps[name]['dims']}")
for k in m["kernels"]:
    ints = {p["name"]: p.get("value") for p in k["params"] if p["kind"] == "i32"}
    for h in HEADS:
        expect(ints.get(h) == h, f"{k['name']}: parameter {h} = {ints.get(h)}")
if errors:
    print("\n".join(errors))
    sys.exit(1)
print("training manifest ok")
