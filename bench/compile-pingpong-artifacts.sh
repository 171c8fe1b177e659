#!/usr/bin/env bash
# On the compiler machine: the kernel sets bench/device-pingpong.sh runs
# (issue 19, run 47: the sm_90a backward's consumer warpgroups take turns
# issuing each pair of MMAs, flamia-tile{backward-ping-pong}).
# sm_90a, causal unless named, packed documents, runtime head counts, mxfp8
# unless named; three compilers:
#   C (this build):  X     ping-pong (the default): turns, MMA pairs async
#   ASYNC_COMPILE:   X-as  the same MMA pairs issued asynchronously, no turns
#                          (a build with backward-ping-pong defaulting to false)
#   RING_COMPILE:    X-rg  before: every MMA waited for on its own (run 46's
#                          shipped compiler, the parent commit)
# for X in t-d128 and t-d64; and with C only: t-d128-nc (non-causal),
# t-d128-dbg (--debug-scores), nv-d128 (nvfp4-mixed), st-d64 (mxfp8-strict).
# Usage: ASYNC_COMPILE=... RING_COMPILE=... bench/compile-pingpong-artifacts.sh [BUILD]
set -euo pipefail
C=${1:-build}/bin/flamia-compile
AS=${ASYNC_COMPILE:?set ASYNC_COMPILE}
RG=${RING_COMPILE:?set RING_COMPILE}
mkdir -p .device
compile() { # compiler name flags...
  local cc=$1 name=$2; shift 2
  echo "== $name ($*)"
  rm -rf .device/$name
  $cc --target sm_90a --varlen --runtime-heads "$@" -o .device/$name
}
for d in 128 64; do
  compile $C t-d$d --causal --recipe mxfp8 --head-dim $d --backward
  compile $AS t-d$d-as --causal --recipe mxfp8 --head-dim $d --backward
  compile $RG t-d$d-rg --causal --recipe mxfp8 --head-dim $d --backward
done
compile $C t-d128-nc --recipe mxfp8 --head-dim 128 --backward
compile $C t-d128-dbg --causal --recipe mxfp8 --head-dim 128 --backward --debug-scores
compile $C nv-d128 --causal --recipe nvfp4-mixed --head-dim 128 --backward
compile $C st-d64 --causal --recipe mxfp8-strict --head-dim 64 --backward
du -sh .device
