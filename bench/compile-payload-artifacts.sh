#!/usr/bin/env bash
# On the compiler machine: the kernel sets bench/device-payloads.sh runs
# (issue 16, run 45: the sm_90a quantizers without the payloads no sm_90a
# kernel reads), sm_90a, causal, packed documents, runtime head counts.
# Each set twice: as shipped (no payloads) and with --payloads (suffix -pl):
# forward-only f-d128, f-d64; training steps t-d128, t-d64 (mxfp8); and the
# training steps of the other two recipes, as shipped: nv-d128
# (nvfp4-mixed) and st-d64 (mxfp8-strict).
# Usage: bench/compile-payload-artifacts.sh [BUILD]
set -euo pipefail
C=${1:-build}/bin/flamia-compile
mkdir -p .device
compile() { # name flags...
  local name=$1; shift
  echo "== $name ($*)"
  rm -rf .device/$name
  $C --target sm_90a --varlen --runtime-heads --causal "$@" -o .device/$name
}
for pl in "" "-pl"; do
  flag=; [ -n "$pl" ] && flag=--payloads
  compile f-d128$pl --recipe mxfp8 --head-dim 128 $flag
  compile f-d64$pl --recipe mxfp8 --head-dim 64 $flag
  compile t-d128$pl --recipe mxfp8 --head-dim 128 --backward $flag
  compile t-d64$pl --recipe mxfp8 --head-dim 64 --backward $flag
done
compile nv-d128 --recipe nvfp4-mixed --head-dim 128 --backward
compile st-d64 --recipe mxfp8-strict --head-dim 64 --backward
du -sh .device
