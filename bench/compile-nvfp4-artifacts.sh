#!/usr/bin/env bash
# On the compiler machine: the artifacts bench/device-validate-nvfp4.sh runs,
# recipe nvfp4-mixed (.device/nv-*) and mxfp8 (.device/mx-*), sm_90a,
# causal, packed documents. Usage: bench/compile-nvfp4-artifacts.sh [BUILD]
set -euo pipefail
C=${1:-build}/bin/flamia-compile
mkdir -p .device
compile() { # name recipe flags...
  local name=$1 recipe=$2; shift 2
  echo "== $name ($recipe $*)"
  rm -rf .device/$name
  $C --target sm_90a --recipe $recipe --causal --varlen "$@" -o .device/$name
}
compile nv-h2d128 nvfp4-mixed --heads 2 --head-dim 128
compile nv-h4kv2d128 nvfp4-mixed --heads 4 --kv-heads 2 --head-dim 128
compile nv-h2d64 nvfp4-mixed --heads 2 --head-dim 64
compile nv-h16d128 nvfp4-mixed --heads 16 --head-dim 128
compile nv-h16d64 nvfp4-mixed --heads 16 --head-dim 64
compile mx-h16d128 mxfp8 --heads 16 --head-dim 128
compile mx-h16d64 mxfp8 --heads 16 --head-dim 64
# With sm_100a's scale-factor tiles (bench/device-validate-nvfp4-tiles.sh).
compile nv-sf-h2d128 nvfp4-mixed --heads 2 --head-dim 128 --scale-tiles
compile nv-sf-h4kv2d128 nvfp4-mixed --heads 4 --kv-heads 2 --head-dim 128 --scale-tiles
compile nv-sf-h2d64 nvfp4-mixed --heads 2 --head-dim 64 --scale-tiles
