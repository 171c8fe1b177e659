#!/usr/bin/env bash
# On the GPU machine: recipe nvfp4-mixed compiled with --scale-tiles, so the
# quantizer also writes the NVFP4 scale-factor tiles sm_100a's
# kind::mxf4nvf4.block_scale.scale_vec::4X MMA would read (q_sf, k_sf: a
# 512-byte 128x4 tile per 64 channels); flamia-run --check compares every
# byte the MMA reads with tiles built from the CPU quantizer's scales, next
# to every other copy, O and LSE. Artifacts .device/nv-sf-*
# (bench/compile-nvfp4-artifacts.sh). Logs go to $OUT.
set -uo pipefail
OUT=${OUT:-$PWD/out/h200-nvfp4-tiles}
mkdir -p "$OUT"
B=${FLAMIA_GPU_BUILD:-$PWD/build-gpu}
log() { echo "== $*" | tee -a "$OUT/summary.txt"; }
nvidia-smi --query-gpu=name,driver_version --format=csv > "$OUT/gpu.txt"
if [ ! -f $B/build.ninja ]; then
  cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLAMIA_ENABLE_COMPILER=OFF > "$OUT/cmake.log" 2>&1 || { tail -30 "$OUT/cmake.log"; exit 1; }
fi
ninja -C $B flamia-run > "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
RUN=$B/bin/flamia-run
step() { # name, command...
  local name=$1; shift
  log "$name: $*"
  "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  grep -E "_sf|FAIL|checks failed|O vs" "$OUT/$name.log" | head -8
  log "$name: rc=$rc"
}
step sf-small $RUN --artifacts .device/nv-sf-h2d128 --heads 2 --workload docs:300,1000,77,129,0,1 --check
step sf-edges-d128 $RUN --artifacts .device/nv-sf-h2d128 --heads 2 --workload docs:1,1,15,17,31,33,0,127,129,1,0,255 --check --leakcheck
step sf-gqa $RUN --artifacts .device/nv-sf-h4kv2d128 --heads 4 --kv-heads 2 --workload docs:512,700,33 --check --outliers
step sf-d64 $RUN --artifacts .device/nv-sf-h2d64 --heads 2 --workload docs:1000,256,7,1,0,40 --check
step sf-edges-d64 $RUN --artifacts .device/nv-sf-h2d64 --heads 2 --workload docs:1,1,15,17,31,33,0,127,129,1,0,255 --check
step sf-sanitize compute-sanitizer --tool memcheck $RUN --artifacts .device/nv-sf-h2d128 --heads 2 --workload docs:300,200,77,1 --sanitize-friendly
cat "$OUT/summary.txt"
