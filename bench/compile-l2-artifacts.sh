#!/usr/bin/env bash
# On the compiler machine: the kernel sets bench/device-l2-sections.sh runs
# (issue 16, the L2-section work order), sm_90a, recipe mxfp8, causal,
# packed documents, runtime head counts: forward-only (.device/f-d128,
# .device/f-d64) and training steps (.device/t-d128, .device/t-d64); and
# .device/t-d128-sec, the D = 128 training step whose manifest asks for the
# l2-sections order with 1 MiB sections, so that the small correctness
# batches are cut into several sections and the manifest path is the one
# exercised.
# Usage: bench/compile-l2-artifacts.sh [BUILD]
set -euo pipefail
C=${1:-build}/bin/flamia-compile
mkdir -p .device
compile() { # name flags...
  local name=$1; shift
  echo "== $name ($*)"
  rm -rf .device/$name
  $C --target sm_90a --recipe mxfp8 --varlen --runtime-heads --causal "$@" -o .device/$name
}
compile f-d128 --head-dim 128
compile f-d64 --head-dim 64
compile t-d128 --head-dim 128 --backward
compile t-d64 --head-dim 64 --backward
rm -rf .device/t-d128-sec
cp -r .device/t-d128 .device/t-d128-sec
python3 - .device/t-d128-sec/manifest.json <<'PY'
import json, sys
path = sys.argv[1]
m = json.load(open(path))
m["schedule"]["order"] = "l2-sections"
m["schedule"]["l2_section_bytes"] = 1 << 20
json.dump(m, open(path, "w"), indent=2)
PY
grep -n '"order"' .device/t-d128-sec/manifest.json
