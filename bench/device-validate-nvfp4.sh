#!/usr/bin/env bash
# On the GPU machine: recipe nvfp4-mixed's sm_90a forward kernels (NVFP4
# per-token Q and K, dequantized to bf16 for wgmma; MXFP8 token-block V),
# checked with flamia-run: every workspace copy bit for bit against the CPU
# quantizer (packed E2M1 payloads, unsigned-E4M3 scales, bf16 dequantized
# copies), O and LSE against the CPU nvfp4-mixed reference, L1/L2 (and NaN
# documents) bit for bit, compute-sanitizer; then the mxfp8 kernels on the
# same batches (the quality next to NVFP4's) and both timed.
# Compile the artifacts first (on the compiler machine):
#   bench/compile-nvfp4-artifacts.sh   (writes .device/nv-* and .device/mx-*)
# Logs go to $OUT. Usage: bench/device-validate-nvfp4.sh
set -uo pipefail
OUT=${OUT:-$PWD/out/h200-nvfp4}
mkdir -p "$OUT"
B=${FLAMIA_GPU_BUILD:-$PWD/build-gpu}
log() { echo "== $*" | tee -a "$OUT/summary.txt"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$OUT/gpu.txt"
if [ ! -f $B/build.ninja ]; then
  cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLAMIA_ENABLE_COMPILER=OFF > "$OUT/cmake.log" 2>&1 || { tail -30 "$OUT/cmake.log"; exit 1; }
fi
ninja -C $B flamia-run > "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
RUN=$B/bin/flamia-run
step() { # name, command...
  local name=$1; shift
  log "$name: $*"
  local t0=$(date +%s%N)
  "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  grep -E "FAIL|^PASS|checks failed|ERROR SUMMARY|RACECHECK SUMMARY|O vs|LSE vs|O: " "$OUT/$name.log" | head -12
  log "$name: rc=$rc (${ms} ms)"
  return $rc
}
# Documents that end inside a tile, an empty one and a single token.
step nv-small-check $RUN --artifacts .device/nv-h2d128 --heads 2 --workload docs:300,1000,77,129,0,1 --check
step nv-small-leak $RUN --artifacts .device/nv-h2d128 --heads 2 --workload docs:300,1000,77,129 --leakcheck
step nv-gqa-check $RUN --artifacts .device/nv-h4kv2d128 --heads 4 --kv-heads 2 --workload docs:512,700,33 --check --outliers
step nv-gqa-leak $RUN --artifacts .device/nv-h4kv2d128 --heads 4 --kv-heads 2 --workload docs:512,700,33 --leakcheck
step nv-d64-check $RUN --artifacts .device/nv-h2d64 --heads 2 --workload docs:1000,256,7 --check
# Tiny documents: 1-token ones, tiles ending 1 past / before 16, 32 and 128.
step nv-edges-d128 $RUN --artifacts .device/nv-h2d128 --heads 2 --workload docs:1,1,15,17,31,33,0,127,129,1,0,255 --check --leakcheck
step nv-edges-d64 $RUN --artifacts .device/nv-h2d64 --heads 2 --workload docs:1,1,15,17,31,33,0,127,129,1,0,255 --check --leakcheck
step nv-edges-outliers $RUN --artifacts .device/nv-h2d64 --heads 2 --workload docs:1,33,0,160,63 --check --outliers
# The standard workloads at 16 heads (T = 8192; the reference checks the
# heads that fit its budget).
for wl in fixed2k lognormal1k single; do
  step nv-h16d128-$wl $RUN --artifacts .device/nv-h16d128 --workload $wl --tokens 8192 --check --leakcheck
  step mx-h16d128-$wl $RUN --artifacts .device/mx-h16d128 --workload $wl --tokens 8192 --check
done
step nv-h16d64-lognormal1k $RUN --artifacts .device/nv-h16d64 --workload lognormal1k --tokens 8192 --check --leakcheck
step mx-h16d64-lognormal1k $RUN --artifacts .device/mx-h16d64 --workload lognormal1k --tokens 8192 --check
step nv-h16d128-outliers $RUN --artifacts .device/nv-h16d128 --workload lognormal1k --tokens 8192 --check --outliers
step mx-h16d128-outliers $RUN --artifacts .device/mx-h16d128 --workload lognormal1k --tokens 8192 --check --outliers
# compute-sanitizer on the new quantization code (and the forward behind it).
step nv-sanitize-mem compute-sanitizer --tool memcheck $RUN --artifacts .device/nv-h2d128 --heads 2 --workload docs:300,200,77,1 --sanitize-friendly
step nv-sanitize-race compute-sanitizer --tool racecheck $RUN --artifacts .device/nv-h2d128 --heads 2 --workload docs:300,200,77,1 --sanitize-friendly
step nv-sanitize-mem-d64 compute-sanitizer --tool memcheck $RUN --artifacts .device/nv-h2d64 --heads 2 --workload docs:300,200,77,1 --sanitize-friendly
# Quantization + forward timed, nvfp4-mixed next to mxfp8 (same kernels but
# the quantizer); T = 32768, 16 heads.
for a in nv mx; do
  step $a-bench-d128-fixed2k $RUN --artifacts .device/$a-h16d128 --workload fixed2k --tokens 32768 --bench 20
  step $a-bench-d128-single $RUN --artifacts .device/$a-h16d128 --workload single --tokens 32768 --bench 20
  grep -iE "median|quantiz|TFLOP" "$OUT/$a-bench-d128-fixed2k.log" "$OUT/$a-bench-d128-single.log" | head -12
done
cat "$OUT/summary.txt"
