#!/usr/bin/env bash
# On the GPU machine: the sm_90a training-step kernel sets (forward +
# backward) compiled on the compiler machine into .device/bwd-*, checked with
# flamia-run --backward: gradients against the CPU reference, grad_o's
# copies and delta bit for bit, L2 (and NaN documents) on every output, and
# compute-sanitizer. Logs go to $OUT. Usage: bench/device-validate-backward.sh [quick|full|big]
# (big: the sanitizers and the standard workloads at their full size, T = 16k-32k)
# Compile the artifacts first (on the compiler machine):
#   for each configuration below: build/bin/flamia-compile --target sm_90a
#   --varlen --backward <flags> -o .device/bwd-<name>   (see docs/performance.md)
set -uo pipefail
MODE=${1:-quick}
OUT=${OUT:-$PWD/out/h200-backward}
mkdir -p "$OUT"
B=${FLAMIA_GPU_BUILD:-$PWD/build-gpu}
log() { echo "== $*" | tee -a "$OUT/summary.txt"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$OUT/gpu.txt"
# Configure once; build every time (incremental), so that a build kept from an
# earlier call is never run stale.
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
  tail -30 "$OUT/$name.log"
  log "$name: rc=$rc (${ms} ms)"
  return $rc
}
# Documents that end inside a tile, an empty one and a single token.
step small-check $RUN --artifacts .device/bwd-h2d128 --heads 2 --workload docs:300,1000,77,129,0,1 --backward --check
step small-leak $RUN --artifacts .device/bwd-h2d128 --heads 2 --workload docs:300,1000,77,129 --backward --leakcheck
step gqa-check $RUN --artifacts .device/bwd-h4kv2d128 --heads 4 --kv-heads 2 --workload docs:512,700,33 --backward --check --outliers
step d64-check $RUN --artifacts .device/bwd-h2d64 --heads 2 --workload docs:1000,256,7 --backward --check
step noncausal-f32-check $RUN --artifacts .device/bwd-h2d128nc --heads 2 --workload docs:600,129,64 --backward --check
if [ "$MODE" = full ]; then
  step sanitize-mem compute-sanitizer --tool memcheck $RUN --artifacts .device/bwd-h2d128 --heads 2 --workload docs:300,200,77 --backward --sanitize-friendly
  step sanitize-race compute-sanitizer --tool racecheck $RUN --artifacts .device/bwd-h2d128 --heads 2 --workload docs:300,200,77 --backward --sanitize-friendly
  for wl in fixed2k lognormal1k single; do
    step check-h16-$wl $RUN --artifacts .device/bwd-h16d128 --workload $wl --tokens 8192 --backward --check --leakcheck
  done
  step check-h16d64-lognormal $RUN --artifacts .device/bwd-h16d64 --workload lognormal1k --tokens 8192 --backward --check
fi
if [ "$MODE" = big ]; then
  step sanitize-mem compute-sanitizer --tool memcheck $RUN --artifacts .device/bwd-h2d128 --heads 2 --workload docs:300,200,77 --backward --sanitize-friendly
  step sanitize-race compute-sanitizer --tool racecheck $RUN --artifacts .device/bwd-h2d128 --heads 2 --workload docs:300,200,77 --backward --sanitize-friendly
  step big-fixed2k $RUN --artifacts .device/bwd-h16d128 --workload fixed2k --tokens 32768 --backward --check --leakcheck
  step big-lognormal1k $RUN --artifacts .device/bwd-h16d128 --workload lognormal1k --tokens 32768 --backward --check --leakcheck
  step big-d64-lognormal1k $RUN --artifacts .device/bwd-h16d64 --workload lognormal1k --tokens 32768 --backward --check
  step big-single16k $RUN --artifacts .device/bwd-h16d128 --workload single --tokens 16384 --backward --check
fi
cat "$OUT/summary.txt"
