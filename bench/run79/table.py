#!/usr/bin/env python3
"""Run 79's table from its console.txt: per step, the rel L2 of O and of the
gradients against the CPU reference (gradients also against it rounded to
bf16, in parentheses) and the verdicts.
Usage: bench/run79/table.py bench/results/h100-run79/console.txt"""
import re
import sys

rows = {}
cur = None
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    m = re.match(r"== (scale\S+): ", line)
    if m and not line.endswith(")"):
        cur = m.group(1)
        rows[cur] = []
        continue
    m = re.match(r"(O|d[QKV]) vs .*rel L2 (\S+)", line)
    if m and cur:
        b = re.search(r"bf16: ([^ ;]+)", line)
        verdict = re.search(r"(PASS|FAIL)", line).group(1)
        rows[cur].append(f"{m.group(1)} {m.group(2)}" +
                         (f" ({b.group(1)})" if b else "") + f" {verdict}")
print("step: rel L2 against the CPU reference (gradients: also against it "
      "rounded to bf16), verdict")
for name, cells in rows.items():
    print(name + ": " + ", ".join(cells))
