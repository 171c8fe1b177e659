#!/usr/bin/env bash
# On the compiler machine: the training-step artifacts that
# bench/device-validate-strict.sh runs, sm_90a, causal, packed documents,
# runtime head counts (one kernel set for every Hq, Hkv): recipe
# mxfp8-strict (.device/st-*), nvfp4-mixed (.device/nv-*) and mxfp8
# (.device/mx-*, the non-strict control), each at D = 128 and 64, and debug
# builds (--debug-scores) for the S-consistency check.
# Usage: bench/compile-strict-artifacts.sh [BUILD]
set -euo pipefail
C=${1:-build}/bin/flamia-compile
mkdir -p .device
compile() { # name recipe flags...
  local name=$1 recipe=$2; shift 2
  echo "== $name ($recipe $*)"
  rm -rf .device/$name
  $C --target sm_90a --recipe $recipe --varlen --runtime-heads --backward "$@" -o .device/$name
}
for r in st:mxfp8-strict nv:nvfp4-mixed mx:mxfp8; do
  p=${r%%:*}; recipe=${r#*:}
  compile $p-d128 $recipe --head-dim 128 --causal
  compile $p-d64 $recipe --head-dim 64 --causal
done
compile st-d128-dbg mxfp8-strict --head-dim 128 --causal --debug-scores
compile nv-d128-dbg nvfp4-mixed --head-dim 128 --causal --debug-scores
compile nv-d128-nc nvfp4-mixed --head-dim 128
compile st-d128-nc mxfp8-strict --head-dim 128
