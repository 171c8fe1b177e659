"""Checks a manifest.json written by flamia-compile against docs/runtime-abi.md."""
import argparse
import json
import os
import sys

ap = argparse.ArgumentParser()
ap.add_argument("manifest")
ap.add_argument("--heads", type=int, required=True)
ap.add_argument("--kv-heads", type=int, required=True)
ap.add_argument("--head-dim", type=int, required=True)
ap.add_argument("--target", required=True)
a = ap.parse_args()
m = json.load(open(a.manifest))
d = os.path.dirname(a.manifest)
errors = []
def expect(cond, what):
    if not cond:
        errors.append(what)

expect(m["flamia_manifest_version"] == 1, "version")
expect(m["target"] == a.target, "target")
expect(m["head_dim"] == a.head_dim and m["heads"] == a.heads and m["kv_heads"] == a.kv_heads, "shape")
expect(m["recipe"] == {"kind": "mxfp8", "safe_block": 128, "strict": False}, "recipe")
expect(m["schedule"]["block_m"] == 128 and m["schedule"]["cost_model"] == a.target, "schedule")
buffers = {b["name"]: b for b in m["buffers"]}
H, HKV, D, C = str(a.heads), str(a.kv_heads), str(a.head_dim), str(a.head_dim // 32)
expect(buffers["q"]["shape"] == ["T", H, D] and buffers["q"]["role"] == "input", "q buffer")
expect(buffers["k"]["shape"] == ["T", HKV, D], "k buffer")
expect(buffers["cu_seqlens"]["shape"] == ["NUM_DOCS + 1"] and buffers["cu_seqlens"]["dtype"] == "i32", "cu_seqlens")
expect(buffers["o"]["role"] == "output" and buffers["lse"]["shape"] == [H, "T"], "outputs")
expect(buffers["q_pt_scales"]["shape"] == ["T", H, C], "per-token scales")
expect(buffers["k_tb_scales"]["shape"] == ["NB", HKV, C], "token-block scales")
expect(buffers["items"]["role"] == "schedule" and buffers["items"]["shape"] == ["NUM_ITEMS", "8"], "items")
kernels = m["kernels"]
expect([k["name"] for k in kernels] == ["flamia_quantize", "flamia_attention_fwd"], "launch order")
for k in kernels:
    expect(os.path.getsize(os.path.join(d, k["cubin"])) > 0, k["name"] + " cubin")
    expect(k["spill_bytes"] == 0, k["name"] + " spills")
    for p in k["params"]:
        if p["kind"] in ("ptr", "tensormap"):
            expect(p["buffer"] in buffers, "unknown buffer " + p["buffer"])
        else:
            expect(p["value"] in ("T", "NUM_ITEMS", "softmax_scale_log2"), "value " + p["value"])
q, fwd = kernels
expect(q["grid"] == ["NB", "Hq", "1"] and q["block"] == [128, 1, 1], "quantize launch")
expect(fwd["grid"] == ["NUM_SMS", "1", "1"] and fwd["block"] == [384, 1, 1] and fwd["launch"] == "persistent", "fwd launch")
maps = [p for p in fwd["params"] if p["kind"] == "tensormap"]
expect(len(maps) == 6, "six tensor maps")
for p in maps:
    heads = H if p["buffer"] in ("q", "q_deq") else HKV
    expect(p["dims"] == ["T", str(int(heads) * a.head_dim)] and p["box"] == [128, 64] and p["swizzle"] == 128, "map " + p["name"])
if errors:
    print("manifest check FAILED:", errors)
    sys.exit(1)
print("manifest ok:", len(kernels), "kernels,", len(buffers), "buffers")
