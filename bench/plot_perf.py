#!/usr/bin/env python3
"""Benchmark results of bench/bench.sh: extract them into one JSON file, plot them.

  bench/plot_perf.py extract OUTDIR -o bench/results/h200-runN.json [--run N] [--note TEXT]
      OUTDIR holds bench/bench.sh's output: bench-<workload>.log (flamia-run
      --bench) and, when the anchors ran, anchors.json and anchors.log
      (bench/anchors_h200.py). Numbers are copied as printed; nothing is
      recomputed except the exact FLOP count from the document lengths.
      Every FLAMIA entry records the log it was read from ("log").
      --log WORKLOAD=PATH  take that workload's FLAMIA numbers from another log
                           (e.g. a variant timed by another bench.sh call of the
                           same device session); repeatable.
      --repeat DIR         another bench.sh output of the same session: its
                           logs of the same artifacts go into "repetitions"
                           (the headline numbers stay the primary log's); repeatable.
      --source TEXT        what to record as "source" instead of OUTDIR (e.g.
                           the tarball the logs were extracted from).
  bench/plot_perf.py plot bench/results/h200-run9.json -o docs/perf-h200.png
      Grouped bars of forward TFLOP/s per workload (FLAMIA forward, FLAMIA
      quantization + forward, each PyTorch baseline) and the measured bf16
      matrix-product ceiling as a line. Needs matplotlib.
"""
import argparse
import json
import os
import re
import sys

WORKLOADS = ["single16k-d128", "fixed2k-d128", "lognormal1k-d128",
             "lognormal1k-d64", "single32k-d128"]


def parse_bench_log(path):
    text = open(path).read()
    r = {}

    def grab(pattern, *names, conv=float):
        m = re.search(pattern, text, re.M)
        if not m:
            raise ValueError(f"{path}: no match for {pattern!r}")
        for n, g in zip(names, m.groups()):
            r[n] = conv(g)

    m = re.search(r"^flamia-run: (.*)$", text, re.M)
    r["device"] = m.group(1) if m else None
    m = re.search(r"artifacts (\S+): target (\S+), recipe (\S+), head_dim (\d+)", text)
    r["artifacts"], r["target"], r["recipe"], r["head_dim"] = \
        m.group(1), m.group(2).rstrip(","), m.group(3).rstrip(","), int(m.group(4))
    m = re.search(r"batch: (\S+), T (\d+), (\d+) documents .*?Hq (\d+), Hkv (\d+)", text)
    batch, r["tokens"], r["docs"], r["heads"], r["kv_heads"] = \
        m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4)), int(m.group(5))
    if batch.startswith("docs:"):
        lens = [int(x) for x in batch[5:].rstrip(",").split(",") if x]
    elif batch == "single":
        lens = [r["tokens"]]
    elif batch == "fixed2k":
        lens = [2048] * (r["tokens"] // 2048)
    else:
        raise ValueError(f"{path}: unknown batch {batch}")
    assert sum(lens) == r["tokens"] and len(lens) == r["docs"], path
    r["doc_lengths"] = lens
    grab(r"benchmark: (\d+) iterations \(median\), (\d+) warm-up",
         "iterations", "warmup", conv=int)
    grab(r"FLOPs \(causal forward.*\): (\S+)$", "flops_printed")
    # Exact count, the formula flamia-run and anchors_h200.py both use.
    r["flops"] = sum(2 * l * l * r["head_dim"] * r["heads"] for l in lens)
    grab(r"host prepare .*: ([\d.]+) ms", "host_prepare_ms")
    grab(r"quantization \(1 kernel\): ([\d.]+) ms, (\S+) bytes, ([\d.]+) GB/s",
         "quant_ms", "quant_bytes", "quant_gbps")
    grab(r"^  forward: ([\d.]+) ms, ([\d.]+) TFLOP/s", "fwd_ms", "fwd_tflops")
    grab(r"quantization \+ forward: ([\d.]+) ms, ([\d.]+) TFLOP/s",
         "total_ms", "total_tflops")
    r["checks_passed"] = "PASS: 0 checks failed" in text
    return r


def baseline_key(name):
    # "varlen_attn bf16 fwd | lognormal1k T=32768 H=16 D=64 docs=17"
    m = re.match(r"(\S+) bf16 (fwd|fwd\+bwd) \| (\S+) T=(\d+) H=(\d+) D=(\d+) docs=(\d+)", name)
    if not m:
        return None
    impl, mode, kind, t, h, d, docs = m.groups()
    return impl, mode, f"{kind}-d{d}", int(t), int(h), int(docs)


def extract(outdir, run, note=None, logs=None, repeats=(), source=None):
    res = {"run": run, "source": source or outdir, "note": note, "workloads": {}}
    logs = dict(logs or {})
    unknown = set(logs) - set(WORKLOADS)
    if unknown:
        raise ValueError(f"--log: unknown workload(s) {sorted(unknown)}")
    for w in WORKLOADS:
        p = logs.get(w, os.path.join(outdir, f"bench-{w}.log"))
        if os.path.exists(p):
            f = parse_bench_log(p)
            f["log"] = p
            reps = []
            for d in repeats:
                q = os.path.join(d, f"bench-{w}.log")
                if not os.path.exists(q) or os.path.samefile(q, p):
                    continue
                r = parse_bench_log(q)
                if r["artifacts"] != f["artifacts"]:
                    continue  # another variant, not a repetition
                reps.append({k: r[k] for k in ("quant_ms", "fwd_ms", "fwd_tflops",
                                                "total_ms", "total_tflops")} | {"log": q})
            if reps:
                f["repetitions"] = reps
            res["workloads"][w] = {"flamia": f, "baselines": {}}
        elif w in logs:
            raise FileNotFoundError(p)
    aj = os.path.join(outdir, "anchors.json")
    if os.path.exists(aj):
        first = open(os.path.join(outdir, "anchors.log")).readline().split()
        res["anchors_env"] = {"torch": first[0], "device": " ".join(first[1:-1]),
                              "cudnn": first[-1]}
        res["ceilings"] = {}
        for row in json.load(open(aj)):
            n = row["name"]
            if n.startswith("ceiling bf16"):
                res["ceilings"]["bf16_matmul"] = {"ms": row["ms"], "tflops": row["tflops"]}
            elif n.startswith("ceiling fp8"):
                res["ceilings"]["fp8_e4m3_matmul"] = {"ms": row["ms"], "tflops": row["tflops"]}
            elif n.startswith("ceiling d2d copy"):
                res["ceilings"]["d2d_copy_2GiB"] = {"ms": row["ms"], "tbps": row["tbps"]}
            else:
                k = baseline_key(n)
                if not k:
                    continue
                impl, mode, w, t, h, docs = k
                slot = res["workloads"].setdefault(w, {"baselines": {}})["baselines"]
                if "error" in row:
                    slot.setdefault(impl, {})[mode] = {"error": row["error"]}
                else:
                    slot.setdefault(impl, {})[mode] = {"ms": row["ms"], "tflops": row["tflops"]}
                slot[impl]["docs"] = docs
    return res


LABELS = {"flamia_fwd": "FLAMIA forward (MXFP8 recipe)",
          "flamia_total": "FLAMIA quantization + forward",
          "sdpa-cudnn_attention": "cuDNN SDPA (bf16)",
          "sdpa-flash_attention": "flash SDPA (bf16)",
          "varlen_attn": "varlen_attn (bf16)",
          "flex_attention": "FlexAttention (bf16)"}
COLORS = {"flamia_fwd": "#c0392b", "flamia_total": "#e6a09a",
          "sdpa-cudnn_attention": "#1f4e79", "sdpa-flash_attention": "#5b9bd5",
          "varlen_attn": "#548235", "flex_attention": "#a9d18e"}
XLABELS = {"single16k-d128": "single 16k\nD=128", "fixed2k-d128": "16 x 2k\nD=128",
           "lognormal1k-d128": "lognormal 32k\n(24 docs) D=128",
           "lognormal1k-d64": "lognormal 32k\n(17 docs) D=64",
           "single32k-d128": "single 32k\nD=128"}


def plot(data, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series = list(LABELS)
    ws = [w for w in WORKLOADS if w in data["workloads"]]

    def value(w, s):
        wd = data["workloads"][w]
        if s == "flamia_fwd":
            return wd["flamia"]["fwd_tflops"]
        if s == "flamia_total":
            return wd["flamia"]["total_tflops"]
        return wd["baselines"].get(s, {}).get("fwd", {}).get("tflops")

    fig, ax = plt.subplots(figsize=(10, 4.6), dpi=100)
    width = 0.8 / len(series)
    seen = set()
    for i, w in enumerate(ws):
        # Only the series measured on this workload, side by side (the dense
        # SDPA backends run on single documents only).
        present = [s for s in series if value(w, s) is not None]
        x0 = i - width * len(present) / 2
        for j, s in enumerate(present):
            y = value(w, s)
            x = x0 + (j + 0.5) * width
            ax.bar(x, y, width, color=COLORS[s],
                   label=None if s in seen else LABELS[s])
            seen.add(s)
            ax.text(x, y + 6, f"{y:.0f}", ha="center", va="bottom", fontsize=6.5,
                    rotation=90)
    ceil = data["ceilings"]["bf16_matmul"]["tflops"]
    ax.axhline(ceil, color="black", ls="--", lw=1)
    ax.text(len(ws) - 0.5, ceil + 8, f"bf16 matmul ceiling (cuBLAS 8192^3, same run): {ceil:.0f}",
            ha="right", va="bottom", fontsize=8)
    ax.set_xticks(range(len(ws)))
    ax.set_xticklabels([XLABELS.get(w, w) for w in ws], fontsize=8.5)
    ax.set_ylabel("forward TFLOP/s (causal, 2 L^2 D H per document)", fontsize=8.5)
    ax.set_ylim(0, ceil * 1.12)
    env = data.get("anchors_env", {})
    ax.set_title(f"H200 (sm_90a), H=16 heads, causal; run {data['run']}: FLAMIA and "
                 f"PyTorch {env.get('torch', '?')} baselines in one device session",
                 fontsize=9.5)
    handles, labels = ax.get_legend_handles_labels()
    order = [labels.index(LABELS[s]) for s in series if LABELS[s] in labels]
    ax.legend([handles[k] for k in order], [labels[k] for k in order], fontsize=7.5,
              ncol=3, loc="upper left", frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    fig.savefig(out, dpi=100)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("extract")
    e.add_argument("outdir")
    e.add_argument("-o", "--output", required=True)
    e.add_argument("--run", type=int, default=None)
    e.add_argument("--note", default=None, help="what was built (the logs do not say)")
    e.add_argument("--log", action="append", default=[], metavar="WORKLOAD=PATH",
                   help="FLAMIA log of WORKLOAD from another path (repeatable)")
    e.add_argument("--repeat", action="append", default=[], metavar="DIR",
                   help="bench.sh output of another call in the same session (repeatable)")
    e.add_argument("--source", default=None, help="recorded as the source instead of OUTDIR")
    p = sub.add_parser("plot")
    p.add_argument("data")
    p.add_argument("-o", "--output", required=True)
    a = ap.parse_args()
    if a.cmd == "extract":
        logs = dict(x.split("=", 1) for x in a.log)
        res = extract(a.outdir, a.run, a.note, logs, a.repeat, a.source)
        with open(a.output, "w") as f:
            json.dump(res, f, indent=1)
            f.write("\n")
    else:
        plot(json.load(open(a.data)), a.output)


if __name__ == "__main__":
    sys.exit(main())
