"""Checks the training-step parts of a manifest.json written by flamia-compile --backward
against docs/runtime-abi.md ("The backward kernels"): sm_90a's dequantized
copies, or (--target sm_100a) the payloads and 128x4 scale-factor tiles the
tcgen05 kernels read, in both orientations of each token-block copy (recipe
mxfp8: E4M3; nvfp4-mixed: E2M1 per token, E4M3 in token blocks).
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
expect(m["recipe"]["kind"] == a.recipe.replace("-strict", "")
       and m["recipe"]["strict"] == (a.recipe == "mxfp8-strict"), f"recipe {m['recipe']}")
params = {k["name"]: [p["name"] for p in k["params"]] for k in m["kernels"]}
safe = ["q", "k", "v", "grad_o", "lse", "delta"]
tail = ["counter", "softmax_scale_log2", "softmax_scale", "T"] + HEADS
# The per-token copies where the head dim is contracted: MXFP8 1x32, or
# NVFP4 1x16 (nvfp4-mixed), two E2M1 a byte.
nv = a.recipe == "nvfp4-mixed"
pay, scl = ("e2m1", "e4m3") if nv else ("e4m3", "e8m0")
PD, PC = (str(a.head_dim // 2), str(a.head_dim // 16)) if nv else (D, C)
if a.target == "sm_100a":
    # The forward's copies the backward rereads (S is recomputed from the
    # same Q and K payloads), and each token-block copy's scale tile in the
    # second orientation: rows = channels where tokens are contracted
    # (dQ = dS K, dV = P^T dO, dK = dS^T Q_tb), rows = tokens for the
    # operands of S = Q K^T and dP = dO V^T. No dequantized copies.
    # mxfp8: those four are E4M3 with E8M0 per 32 channels (Q per token, K,
    # V and dO in their token-block copies); nvfp4-mixed: per-token NVFP4
    # copies of all four (E2M1, two a byte; UE4M3 per 16 channels) for
    # kind::mxf4nvf4, the token-contracted GEMMs on the E4M3 token blocks.
    expect(a.recipe in ("mxfp8", "nvfp4-mixed"), "sm_100a has mxfp8 and nvfp4-mixed backward kernels only")
    # A scale-factor tile is 128 rows x 4 scale bytes (512); a block of 128
    # rows takes as many as its D/32 (E8M0) or D/16 (UE4M3) scales a row
    # need: one, or two for NVFP4 at D = 128 (1024 bytes).
    def tiles(tensor, layout, rows, fmt="e8m0"):
        return holds("scale_tiles", tensor, layout, fmt) | dict(tile_rows=rows)
    def tile_bytes(per_channels):
        return str(512 * -(-(a.head_dim // per_channels) // 4))
    per_token = [("q", "q", H)] + ([("k", "k", HKV), ("v", "v", HKV), ("do", "grad_o", H)] if nv else [])
    for short, tensor, heads in per_token:
        buf(short + "_pt", "workspace", "u8", ["T", heads, PD], holds("payload", tensor, "per_token", pay))
        buf(short + "_pt_scales", "workspace", "u8", ["T", heads, PC], holds("scales", tensor, "per_token", scl))
    for short, tensor, heads in (("q", "q", H), ("k", "k", HKV), ("v", "v", HKV)):
        buf(short + "_tb", "workspace", "u8", ["T", heads, D], holds("payload", tensor, "token_block", "e4m3"))
    # The operands of S and dP: rows = tokens.
    for name, tensor, heads, mx_layout in (("q_sf", "q", H, "per_token"), ("k_sf", "k", HKV, "token_block"),
                                            ("v_sf_tokens", "v", HKV, "token_block"),
                                            ("do_sf", "grad_o", H, "token_block")):
        if nv:
            buf(name, "workspace", "u8", ["NB", heads, tile_bytes(16)], tiles(tensor, "per_token", "tokens", "e4m3"))
        else:
            buf(name, "workspace", "u8", ["NB", heads, tile_bytes(32)], tiles(tensor, mx_layout, "tokens"))
    # The token-contracted operands (and the forward's V in P V): rows = channels.
    for name, tensor, heads in (("v_sf", "v", HKV), ("q_tb_sf_channels", "q", H),
                                ("k_sf_channels", "k", HKV), ("do_sf_channels", "grad_o", H)):
        buf(name, "workspace", "u8", ["NB", heads, tile_bytes(32)], tiles(tensor, "token_block", "channels"))
    for name in buffers:
        expect(not name.endswith("_deq"), f"sm_100a reads no dequantized copy: {name}")
    if nv:
        # Each operand of S, dP (and S^T, dP^T) with its tile, then the
        # token-contracted GEMMs' B operands: K for dQ = dS K; Q and dO for
        # dK = dS^T Q and dV = P^T dO.
        s_dp = ["q_pt", "q_sf", "k_pt", "k_sf", "v_pt", "v_sf_tokens", "do_pt", "do_sf"]
        dq_reads = s_dp + ["k_tb", "k_sf_channels"]
        dkdv_reads = s_dp + ["q_tb", "q_tb_sf_channels", "do_tb", "do_sf_channels"]
        grad_copies = ["do_pt", "do_pt_scales", "do_tb", "do_tb_scales", "do_sf", "do_sf_channels"]
    else:
        dq_reads = ["q_pt", "q_sf", "k_tb", "k_sf", "k_sf_channels", "v_tb", "v_sf_tokens", "do_tb", "do_sf"]
        dkdv_reads = ["q_pt", "q_sf", "k_tb", "k_sf", "v_tb", "v_sf_tokens", "do_tb", "do_sf", "do_sf_channels",
                      "q_tb", "q_tb_sf_channels"]
        grad_copies = ["do_tb", "do_tb_scales", "do_sf", "do_sf_channels"]
    expect(params["flamia_quantize_grad"] == ["grad_o", "o", "block_info"] + grad_copies + ["delta", "T"] + HEADS,
           f"quantize_grad params {params['flamia_quantize_grad']}")
    expect(params["flamia_attention_dq"] == dq_reads + safe + ["dq", "items", "num_items"] + tail,
           f"dq params {params['flamia_attention_dq']}")
    expect(params["flamia_attention_dkdv"] == dkdv_reads + safe + ["dk", "dv", "kv_items", "num_kv_items"] + tail,
           f"dkdv params {params['flamia_attention_dkdv']}")
    launch = {k["name"]: k for k in m["kernels"]}
    for name in ("flamia_attention_dq", "flamia_attention_dkdv"):
        k = launch[name]
        # Producer, MMA issuer, two gradient warpgroups; within the 227 KiB
        # of shared memory an sm_100a block may opt into.
        expect(k["block"] == [512, 1, 1], f"{name} block {k['block']}")
        expect(0 < k["smem_bytes"] <= 232448, f"{name} smem {k['smem_bytes']}")
    def boxes(kernel, rows, names):
        # Payload tiles by TMA: u8 tensor maps, a box of `rows` tokens by D
        # E4M3 codes, or D/2 bytes of packed E2M1 pairs (nvfp4's *_pt).
        maps = {p["name"]: p for p in launch[kernel]["params"]}
        for name in names:
            cols = a.head_dim // 2 if nv and name.endswith("_pt") else a.head_dim
            p = maps.get(name, {})
            expect(p.get("kind") == "tensormap" and p.get("dtype") == "u8" and p.get("box") == [rows, cols],
                   f"{kernel} {name}: {p or 'no such parameter'}")
    # (kernel, box rows, payloads): the dK/dV kernel's query side in 64-row
    # boxes, its key side and the dQ kernel's tiles in 128.
    if nv:
        wanted = [("flamia_attention_dkdv", 64, ["q_pt", "do_pt", "q_tb", "do_tb"]),
                  ("flamia_attention_dkdv", 128, ["k_pt", "v_pt"]),
                  ("flamia_attention_dq", 128, ["q_pt", "k_pt", "v_pt", "do_pt", "k_tb"])]
    else:
        wanted = [("flamia_attention_dkdv", 64, ["q_pt", "do_tb", "q_tb"]),
                  ("flamia_attention_dkdv", 128, ["k_tb", "v_tb"])]
    for kernel, rows, names in wanted:
        boxes(kernel, rows, names)
    maps = {p["name"]: p for p in launch["flamia_attention_dkdv"]["params"]}
    for name in ("q", "grad_o"):
        expect(maps[name]["box"] == [64, 64], f"dkdv {name} box {maps[name]['box']}")
    for name in ("q_sf", "k_sf", "v_sf_tokens", "do_sf", "do_sf_channels", "q_tb_sf_channels", "lse", "delta"):
        expect(maps.get(name, {}).get("kind") == "ptr", f"dkdv {name} is a pointer")
else:
    buf("q_tb_deq", "workspace", "bf16", ["T", H, D], holds("dequantized", "q", "token_block", "bf16"))
    second = a.recipe != "mxfp8"
    if second:
        # The per-token copies of S = Q K^T (K) and dP = dO V^T (dO, V).
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
