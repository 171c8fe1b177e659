#!/usr/bin/env bash
# On the compiler machine: the kernel sets bench/device-ftz.sh runs (run 51):
# the sm_90a kernels with exp2 as ex2.approx.ftz.f32 (this build: X) against
# the build before that change (OLD_COMPILE: X-old, ex2.approx.f32, whose
# subnormal-result handling costs three instructions per exponential).
# sm_90a, causal unless named, packed documents, runtime head counts, mxfp8
# unless named: f-d128, f-d64 (forward), t-d128, t-d64 (training step), and
# with this build only t-d128-nc (non-causal), t-d128-dbg (--debug-scores),
# nv-d128 (nvfp4-mixed), st-d64 (mxfp8-strict).
# Usage: [OLD_COMPILE=...] bench/compile-ftz-artifacts.sh [BUILD] (without
# OLD_COMPILE only this build's sets)
set -euo pipefail
C=${1:-build}/bin/flamia-compile
mkdir -p .device/ftz
compile() { # compiler name flags...
  local cc=$1 name=$2; shift 2
  echo "== $name ($*)"
  rm -rf .device/ftz/$name
  $cc --target sm_90a --varlen --runtime-heads "$@" -o .device/ftz/$name
}
sets() { # compiler suffix
  for d in 128 64; do
    compile $1 f-d$d$2 --causal --recipe mxfp8 --head-dim $d
    compile $1 t-d$d$2 --causal --recipe mxfp8 --head-dim $d --backward
  done
}
if [ -n "${OLD_COMPILE:-}" ]; then sets "$OLD_COMPILE" -old; fi
sets $C ""
compile $C t-d128-nc --recipe mxfp8 --head-dim 128 --backward
compile $C t-d128-dbg --causal --recipe mxfp8 --head-dim 128 --backward --debug-scores
compile $C nv-d128 --causal --recipe nvfp4-mixed --head-dim 128 --backward
compile $C st-d64 --causal --recipe mxfp8-strict --head-dim 64 --backward
