#!/usr/bin/env bash
# On the compiler machine: the FLAMIA kernel sets bench/device-profile-fa4.sh
# profiles next to FA4's (recipe mxfp8, sm_90a, causal, packed documents,
# runtime heads: the shipped configurations of runs 45-48).
# Usage: bench/compile-profile-fa4-artifacts.sh [BUILD]
set -euo pipefail
C=${1:-build}/bin/flamia-compile
mkdir -p .device
for cfg in "pf-fwd-d128 --head-dim 128" "pf-fwd-d64 --head-dim 64" "pf-train-d128 --head-dim 128 --backward"; do
  set -- $cfg
  name=$1; shift
  echo "== $name ($*)"
  rm -rf .device/$name
  $C --target sm_90a --recipe mxfp8 --causal --varlen --runtime-heads "$@" -o .device/$name
done
