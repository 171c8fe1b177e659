#!/usr/bin/env bash
# On the GPU machine (no LLVM there): build the runtime and flamia-run, then
# validate the artifacts compiled on the compiler machine and copied into .device/: self-test,
# reference checks, L1/L2 perturbation checks, compute-sanitizer. Logs go to
# $OUT. Usage: bench/device-validate.sh [quick|full]
set -uo pipefail
MODE=${1:-quick}
OUT=${OUT:-$PWD/out/h200-validate}
mkdir -p "$OUT"
B=${FLAMIA_GPU_BUILD:-$PWD/build-gpu}
log() { echo "== $*" | tee -a "$OUT/summary.txt"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$OUT/gpu.txt"
if [ ! -x $B/bin/flamia-run ]; then
  cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLAMIA_ENABLE_COMPILER=OFF > "$OUT/cmake.log" 2>&1 || { tail -30 "$OUT/cmake.log"; exit 1; }
  ninja -C $B flamia-run > "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
fi
RUN=$B/bin/flamia-run
step() { # name, command...
  local name=$1; shift
  log "$name: $*"
  local t0=$(date +%s%N)
  "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  tail -25 "$OUT/$name.log"
  log "$name: rc=$rc (${ms} ms)"
  return $rc
}
step small-check $RUN --artifacts .device/art-h2d128 --heads 2 --workload docs:300,1000,77,129,0,1 --check
step small-leak $RUN --artifacts .device/art-h2d128 --heads 2 --workload docs:300,1000,77,129 --leakcheck
step gqa-check $RUN --artifacts .device/art-h4kv2d128 --heads 4 --kv-heads 2 --workload docs:512,700,33 --check --outliers
step d64-check $RUN --artifacts .device/art-h2d64 --heads 2 --workload docs:1000,256,7 --check
if [ "$MODE" = full ]; then
  step sanitize-mem compute-sanitizer --tool memcheck $RUN --artifacts .device/art-h2d128 --heads 2 --workload docs:300,200,77 --sanitize-friendly
  step sanitize-race compute-sanitizer --tool racecheck $RUN --artifacts .device/art-h2d128 --heads 2 --workload docs:300,200,77 --sanitize-friendly
  for wl in fixed2k lognormal1k single; do
    step check-h16-$wl $RUN --artifacts .device/art-h16d128 --workload $wl --tokens 8192 --check --leakcheck
  done
fi
cat "$OUT/summary.txt"
