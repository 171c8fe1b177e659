"""Checks a manifest.json written by flamia-compile against docs/runtime-abi.md."""
import argparse
import json
import os
import sys

ap = argparse.ArgumentParser()
ap.add_argument("manifest")
# Static head counts, or --runtime-heads (the Hq and Hkv symbols).
ap.add_argument("--heads", type=int)
ap.add_argument("--kv-heads", type=int)
ap.add_argument("--runtime-heads", action="store_true")
ap.add_argument("--head-dim", type=int, required=True)
ap.add_argument("--target", required=True)
# nvfp4-mixed: Q and K per token in NVFP4 (E2M1 two a byte, E4M3 scales per
# 16 channels), V in MXFP8 token blocks.
ap.add_argument("--recipe", default="mxfp8", choices=("mxfp8", "nvfp4-mixed"))
# The quantizer's payloads: sm_100a's MMAs read them; sm_90a writes them
# only when compiled with --payloads (its kernels read the bf16 copies).
ap.add_argument("--payloads", action="store_true")
# flamia-compile --round-q=false: sm_90a's quantizer writes Q's copy again.
ap.add_argument("--no-round-q", action="store_true")
a = ap.parse_args()
m = json.load(open(a.manifest))
d = os.path.dirname(a.manifest)
errors = []
def expect(cond, what):
    if not cond:
        errors.append(what)

expect(m["flamia_manifest_version"] == 2, "version")
expect(m["target"] == a.target, "target")
if a.runtime_heads == (a.heads is not None or a.kv_heads is not None):
    sys.exit("give --heads and --kv-heads, or --runtime-heads")
expect(m["head_dim"] == a.head_dim and m.get("heads") == a.heads and m.get("kv_heads") == a.kv_heads, "shape")
NVFP4 = a.recipe == "nvfp4-mixed"
expect(m["recipe"] == {"kind": a.recipe, "safe_block": 128, "strict": False}, "recipe")
expect(m["schedule"]["block_m"] == 128 and m["schedule"]["cost_model"] == a.target, "schedule")
# The work order: sm_90a's default is l2-sections with 16 MiB sections
# (performance.md run 39); sm_100a keeps LPT, written by leaving it out.
if a.target == "sm_90a":
    expect(m["schedule"].get("order") == "l2-sections"
           and m["schedule"].get("l2_section_bytes") == 16 << 20, "schedule order")
else:
    expect("order" not in m["schedule"], "schedule order (lpt: absent)")
buffers = {b["name"]: b for b in m["buffers"]}
H, HKV = ("Hq", "Hkv") if a.runtime_heads else (str(a.heads), str(a.kv_heads))
D, C = str(a.head_dim), str(a.head_dim // 32)
# NVFP4 payloads are bytes of two codes: [T, H, D / 2]; scales [T, H, D / 16].
D2, C16 = str(a.head_dim // 2), str(a.head_dim // 16)
HEAD_VALUES = ("Hq", "Hkv") if a.runtime_heads else ()
expect(buffers["q"]["shape"] == ["T", H, D] and buffers["q"]["role"] == "input", "q buffer")
expect(buffers["k"]["shape"] == ["T", HKV, D], "k buffer")
expect(buffers["cu_seqlens"]["shape"] == ["NUM_DOCS + 1"] and buffers["cu_seqlens"]["dtype"] == "i32", "cu_seqlens")
expect(buffers["o"]["role"] == "output" and buffers["lse"]["shape"] == [H, "T"], "outputs")
PAYLOADS = a.target == "sm_100a" or a.payloads
# sm_90a's MXFP8 forward rounds Q itself (flamia-varlen-schedule round-q):
# no copy of Q in the workspace, and the quantizer runs over the K/V heads.
ROUND_Q = a.target == "sm_90a" and not NVFP4 and not a.payloads and not a.no_round_q
if NVFP4 and PAYLOADS:
    expect(buffers["q_pt"]["shape"] == ["T", H, D2] and buffers["q_pt"]["dtype"] == "u8", "NVFP4 q payload")
    expect(buffers["k_pt"]["shape"] == ["T", HKV, D2], "NVFP4 k payload")
if NVFP4:
    expect(buffers["q_pt_scales"]["shape"] == ["T", H, C16], "NVFP4 q scales")
    expect(buffers["k_pt_scales"]["shape"] == ["T", HKV, C16], "NVFP4 k scales")
    expect(buffers["v_tb_scales"]["shape"] == ["NB", HKV, C], "token-block scales")
else:
    if ROUND_Q:
        expect("q_pt_scales" not in buffers and "q_deq" not in buffers, "no copy of Q (round-q)")
    else:
        expect(buffers["q_pt_scales"]["shape"] == ["T", H, C], "per-token scales")
    expect(buffers["k_tb_scales"]["shape"] == ["NB", HKV, C], "token-block scales")
expect(buffers["items"]["role"] == "schedule" and buffers["items"]["shape"] == ["NUM_ITEMS", "8"], "items")
# Every workspace buffer says what it holds; the copies of the forward.
def holds(part, tensor, layout, fmt, **extra):
    return dict(part=part, tensor=tensor, layout=layout, format=fmt, **extra)
expected_holds = {
    "q_pt": holds("payload", "q", "per_token", "e4m3"),
    "q_pt_scales": holds("scales", "q", "per_token", "e8m0"),
    "q_tb": holds("payload", "q", "token_block", "e4m3"),
    "q_tb_scales": holds("scales", "q", "token_block", "e8m0"),
    "k_tb": holds("payload", "k", "token_block", "e4m3"),
    "k_tb_scales": holds("scales", "k", "token_block", "e8m0"),
    "v_tb": holds("payload", "v", "token_block", "e4m3"),
    "v_tb_scales": holds("scales", "v", "token_block", "e8m0"),
}
if NVFP4:
    del expected_holds["k_tb"], expected_holds["k_tb_scales"]
    expected_holds.update({
        "q_pt": holds("payload", "q", "per_token", "e2m1"),
        "q_pt_scales": holds("scales", "q", "per_token", "e4m3"),
        "k_pt": holds("payload", "k", "per_token", "e2m1"),
        "k_pt_scales": holds("scales", "k", "per_token", "e4m3"),
    })
if a.target == "sm_100a":
    # (NVFP4: Q's and K's tiles hold the per-token unsigned-E4M3 scales.)
    expected_holds.update({
        "q_sf": holds("scale_tiles", "q", "per_token", "e4m3" if NVFP4 else "e8m0", tile_rows="tokens"),
        "k_sf": holds("scale_tiles", "k", "per_token" if NVFP4 else "token_block",
                      "e4m3" if NVFP4 else "e8m0", tile_rows="tokens"),
        "v_sf": holds("scale_tiles", "v", "token_block", "e8m0", tile_rows="channels"),
    })
else:
    expected_holds.update({
        "q_deq": holds("dequantized", "q", "per_token", "bf16"),
        "k_deq": holds("dequantized", "k", "per_token" if NVFP4 else "token_block", "bf16"),
        "v_deq": holds("dequantized", "v", "token_block", "bf16"),
    })
if not PAYLOADS:
    # Scales and dequantized copies only; a forward alone has no 32x32
    # copy of Q at all.
    for name in [n for n, h in expected_holds.items() if h["part"] == "payload"] + ["q_tb_scales"]:
        del expected_holds[name]
if ROUND_Q:
    del expected_holds["q_pt_scales"], expected_holds["q_deq"]
workspace = {n: b.get("holds") for n, b in buffers.items() if b["role"] == "workspace"}
expect(workspace == expected_holds, "workspace holds: %s" % workspace)
expect(all("holds" not in b for b in buffers.values() if b["role"] != "workspace"), "holds only on workspace buffers")
kernels = m["kernels"]
expect([k["name"] for k in kernels] == ["flamia_quantize", "flamia_attention_fwd"], "launch order")
for k in kernels:
    expect(os.path.getsize(os.path.join(d, k["cubin"])) > 0, k["name"] + " cubin")
    expect(k["spill_bytes"] == 0, k["name"] + " spills")
    for p in k["params"]:
        if p["kind"] in ("ptr", "tensormap"):
            expect(p["buffer"] in buffers, "unknown buffer " + p["buffer"])
        else:
            expect(p["value"] in ("T", "NUM_ITEMS", "softmax_scale_log2") + HEAD_VALUES, "value " + p["value"])
    # With runtime heads every kernel takes both counts, last.
    if a.runtime_heads:
        expect([p["name"] for p in k["params"][-2:]] == ["Hq", "Hkv"], k["name"] + " head parameters")
q, fwd = kernels
expect(q["grid"] == ["NB", "Hkv" if ROUND_Q else "Hq", "1"] and q["block"] == [128, 1, 1], "quantize launch")
expect(any(p.get("buffer") == "q" for p in q["params"]) != ROUND_Q, "the quantizer reads Q unless round-q")
expect(fwd["grid"] == ["NUM_SMS", "1", "1"] and fwd["block"] == [384, 1, 1] and fwd["launch"] == "persistent", "fwd launch")
expect(0 < fwd["smem_bytes"] <= 232448, "fwd shared memory within the 227 KiB opt-in limit")
maps = [p for p in fwd["params"] if p["kind"] == "tensormap"]
# (round-q: Q once, the original, instead of q_deq and q.)
expect(len(maps) == (5 if ROUND_Q else 6), "tensor maps")
ELEM_BYTES = {"bf16": 2, "u8": 1}
for p in maps:
    heads = H if p["buffer"] in ("q", "q_deq", "q_pt") else HKV
    # The NVFP4 payloads go through u8 maps of their bytes (D / 2 a row).
    row = a.head_dim // 2 if NVFP4 and p["buffer"] in ("q_pt", "k_pt") else a.head_dim
    row_bytes = row * ELEM_BYTES[p["dtype"]]
    # One TMA box is 128 rows of at most one 128-byte swizzle atom per row.
    atom = min(row_bytes, 128)
    cols = f"{heads} * {row}" if a.runtime_heads else str(int(heads) * row)
    expect(p["dims"] == ["T", cols]
           and p["box"] == [128, atom // ELEM_BYTES[p["dtype"]]]
           and p["swizzle"] == atom, "map " + p["name"])
if a.target == "sm_100a":
    # Blackwell: the MMA reads fp8 payloads (per-token Q, token-block K and V)
    # through TMA and their scales from the 128x4 tiled scale-factor buffers,
    # which it copies into tensor memory; S, O and P live in all 512 columns.
    expect(fwd["tmem_columns"] == 512 and q["tmem_columns"] == 0, "tensor memory columns")
    k_copy = "k_pt" if NVFP4 else "k_tb"
    expect(sorted(p["buffer"] for p in maps) == sorted(["k", k_copy, "q", "q_pt", "v", "v_tb"]), "sm_100a maps")
    # A 512-byte tile per slot, NVFP4's one per 64 channels.
    qk_tile = str(512 * ((a.head_dim + 63) // 64)) if NVFP4 else "512"
    for sf, heads, tile in (("q_sf", H, qk_tile), ("k_sf", HKV, qk_tile), ("v_sf", HKV, "512")):
        expect(buffers[sf]["shape"] == ["NB", heads, tile] and buffers[sf]["dtype"] == "u8", sf + " tile buffer")
        expect(any(p["buffer"] == sf for p in q["params"]), "quantizer writes " + sf)
        expect(any(p["buffer"] == sf for p in fwd["params"]), "forward reads " + sf)
else:
    expect(fwd["tmem_columns"] == 0, "no tensor memory on sm_90a")
if errors:
    print("manifest check FAILED:", errors)
    sys.exit(1)
print("manifest ok:", len(kernels), "kernels,", len(buffers), "buffers")
