#!/usr/bin/env python3
"""Packs a filled device check (.cu) into one shell command of < 2000
characters: comments and spaces stripped, LZMA-compressed, base64-encoded,
then decoded, built for sm_90a and run on the device machine. Used because
the device tool ships only the session's main checkout, not this worktree.

  build/bin/flamia-desc fill test/Target/device/wgmma-descriptor-check.cu.in -o w.cu
  test/Target/device/pack-command.py w.cu > cmd.txt
"""
import base64
import lzma
import re
import sys

lines = []
for line in open(sys.argv[1]).read().splitlines():
    s = line.strip()
    if not s or s.startswith("//"):
        continue
    if not s.startswith("#"):
        parts = s.split('"')  # leave string literals alone
        for i in range(0, len(parts), 2):
            parts[i] = re.sub(r"\s*([=+\-*/%<>,;(){}?:&|\[\]])\s*", r"\1", parts[i])
        s = '"'.join(parts)
    lines.append(s)
packed = lzma.compress(("\n".join(lines) + "\n").encode(),
                       format=lzma.FORMAT_ALONE, preset=9 | lzma.PRESET_EXTREME)
cmd = ("cd /tmp;echo " + base64.b64encode(packed).decode() +
       "|base64 -d|xz -dFlzma>w.cu;"
       "nvcc -gencode arch=compute_90a,code=sm_90a -o w w.cu;./w")
if len(cmd) > 2000:
    sys.exit(f"command is {len(cmd)} characters, over the 2000 limit")
print(cmd)
