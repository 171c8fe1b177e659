#!/usr/bin/env bash
# On the compiler machine: the kernel sets bench/device-dq-ring.sh runs
# (issue 19, run 46: the sm_90a dQ kernel at D = 128 holds one form of Q and
# dO at a time, so that its key ring has two stages instead of one).
# sm_90a, packed documents, runtime head counts, recipe mxfp8 unless named:
#   t-d128      the training step as it ships now (causal)
#   t-d128-old  the same from the compiler before the change (OLD_COMPILE:
#               a flamia-compile built from the parent commit)
#   t-d128-nc   non-causal (the safe tiles sit in the middle of the key
#               tiles: two form switches per item)
#   t-d128-dbg  causal with --debug-scores (the S-consistency check)
#   nv-d128     nvfp4-mixed (K's second copy: both forms stay, one stage)
#   t-d64       D = 64 (three stages, unchanged)
# Usage: OLD_COMPILE=/path/to/old/flamia-compile bench/compile-dq-ring-artifacts.sh [BUILD]
set -euo pipefail
C=${1:-build}/bin/flamia-compile
OLD=${OLD_COMPILE:?set OLD_COMPILE to the flamia-compile of the parent commit}
mkdir -p .device
compile() { # compiler name flags...
  local cc=$1 name=$2; shift 2
  echo "== $name ($*)"
  rm -rf .device/$name
  $cc --target sm_90a --varlen --runtime-heads "$@" -o .device/$name
}
compile $C t-d128 --causal --recipe mxfp8 --head-dim 128 --backward
compile $OLD t-d128-old --causal --recipe mxfp8 --head-dim 128 --backward
compile $C t-d128-nc --recipe mxfp8 --head-dim 128 --backward
compile $C t-d128-dbg --causal --recipe mxfp8 --head-dim 128 --backward --debug-scores
compile $C nv-d128 --causal --recipe nvfp4-mixed --head-dim 128 --backward
compile $C t-d64 --causal --recipe mxfp8 --head-dim 64 --backward
for s in .device/*/manifest.json; do
  python3 -c "
import json, sys
m = json.load(open('$s'))
for k in m['kernels']:
    if k['name'] == 'flamia_attention_dq':
        print('$s', k['name'], 'smem', k['smem_bytes'], 'spills', k['spill_bytes'])"
done
du -sh .device
