#!/usr/bin/env bash
# On the compiler machine: the artifacts bench/device-validate-backward-tiles.sh
# runs. sm_90a training steps compiled with --scale-tiles, so that the
# quantizers also write every scale-factor tile sm_100a's forward and
# backward kernels read (q_sf, k_sf, v_sf, q_tb_sf_channels, k_sf_channels,
# v_sf_tokens, do_sf, do_sf_channels) and the H200 checks their layout bit
# for bit: recipe nvfp4-mixed (.device/bt-nv-*: NVFP4 per-token tiles of Q,
# K, V, dO, MXFP8 token-block tiles of K, Q, dO) and mxfp8 (.device/bt-mx-*:
# one token-block copy in both orientations). Causal, packed documents.
# Usage: bench/compile-backward-tiles-artifacts.sh [BUILD]
set -euo pipefail
C=${1:-build}/bin/flamia-compile
mkdir -p .device
compile() { # name recipe flags...
  local name=$1 recipe=$2; shift 2
  echo "== $name ($recipe $*)"
  rm -rf .device/$name
  $C --target sm_90a --recipe $recipe --causal --varlen --backward --scale-tiles "$@" -o .device/$name
}
compile bt-nv-h2d128 nvfp4-mixed --heads 2 --head-dim 128
compile bt-nv-h4kv2d128 nvfp4-mixed --heads 4 --kv-heads 2 --head-dim 128
compile bt-nv-h2d64 nvfp4-mixed --heads 2 --head-dim 64
compile bt-mx-h2d128 mxfp8 --heads 2 --head-dim 128
compile bt-mx-h4kv2d64 mxfp8 --heads 4 --kv-heads 2 --head-dim 64
