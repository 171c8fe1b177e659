#!/usr/bin/env bash
# On the compiler machine: the sm_90a kernel sets of a same-session A/B,
# for bench/device-ab.sh NAME: this build's sets (X) and, with OLD_COMPILE
# (the flamia-compile of the build before the change), the same sets as
# X-old, all in .device/NAME/. sm_90a, packed documents, runtime head
# counts, causal and mxfp8 unless named: f-d128, f-d64 (forward), t-d128,
# t-d64 (training step), f-d128-nc (forward, non-causal), fst-d64
# (forward, mxfp8-strict); with this build only t-d128-nc (non-causal),
# t-d128-dbg (--debug-scores), nv-d128 and nv-d64 (nvfp4-mixed), st-d64
# (mxfp8-strict).
# OLD_FLAGS: flags for the X-old sets only (e.g. OLD_COMPILE=build/bin/flamia-compile
# OLD_FLAGS=--round-q=false: this build with an option off as the baseline).
# OLD_OLD_COMPILE (the flamia-compile of the build one step further back)
# adds X-old-old sets, so that one A/B times two steps (run 81).
# Usage: [OLD_COMPILE=OLD/bin/flamia-compile [OLD_FLAGS=...]] [OLD_OLD_COMPILE=...] bench/compile-ab-artifacts.sh NAME [BUILD]
set -euo pipefail
NAME=${1:?usage: [OLD_COMPILE=...] $0 NAME [BUILD]}
C=${2:-build}/bin/flamia-compile
DIR=.device/$NAME
mkdir -p "$DIR"
compile() { # compiler name flags...
  local cc=$1 name=$2; shift 2
  echo "== $name ($*)"
  rm -rf "$DIR/$name"
  $cc --target sm_90a --varlen --runtime-heads "$@" -o "$DIR/$name"
}
sets() { # compiler suffix [flags...]
  local cc=$1 sfx=$2; shift 2
  for d in 128 64; do
    compile $cc f-d$d$sfx --causal --recipe mxfp8 --head-dim $d "$@"
    compile $cc t-d$d$sfx --causal --recipe mxfp8 --head-dim $d --backward "$@"
  done
  compile $cc f-d128-nc$sfx --recipe mxfp8 --head-dim 128 "$@"
  compile $cc fst-d64$sfx --causal --recipe mxfp8-strict --head-dim 64 "$@"
}
# shellcheck disable=SC2086 # OLD_FLAGS is a list of flags
if [ -n "${OLD_COMPILE:-}" ]; then sets "$OLD_COMPILE" -old ${OLD_FLAGS:-}; fi
if [ -n "${OLD_OLD_COMPILE:-}" ]; then sets "$OLD_OLD_COMPILE" -old-old; fi
sets "$C" ""
compile "$C" t-d128-nc --recipe mxfp8 --head-dim 128 --backward
compile "$C" t-d128-dbg --causal --recipe mxfp8 --head-dim 128 --backward --debug-scores
compile "$C" nv-d128 --causal --recipe nvfp4-mixed --head-dim 128 --backward
compile "$C" st-d64 --causal --recipe mxfp8-strict --head-dim 64 --backward
compile "$C" nv-d64 --causal --recipe nvfp4-mixed --head-dim 64 --backward
