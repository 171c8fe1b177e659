#!/usr/bin/env bash
# On the GPU machine: the backward recomputes exactly the forward's S
# (issue 19's consistency check). Debug builds of the sm_90a training step
# (flamia-compile --debug-scores) write S of every query row against its
# document's first key tile from the forward (s_fwd) and from the dQ kernel
# (s_dq); flamia-run --backward --check fills both with NaN, runs the step
# again and compares them bit for bit, next to its usual checks. Compile on
# the compiler machine first:
#   F="--runtime-heads --varlen --backward --debug-scores"
#   build/bin/flamia-compile --target sm_90a --head-dim 128 --causal $F -o .device/dbg/dbg-d128
#   ... --head-dim 128 --causal --overlap-softmax=false $F -o .device/dbg/dbg-d128-serial
#   ... --head-dim 64 --causal $F -o .device/dbg/dbg-d64
#   ... --head-dim 128 $F -o .device/dbg/dbg-d128nc
# Logs go to $OUT. Usage: bench/device-recompute-check.sh
set -uo pipefail
OUT=${OUT:-$PWD/out/h200-recompute}
mkdir -p "$OUT"
B=${FLAMIA_GPU_BUILD:-$PWD/build-gpu}
A=.device/dbg
log() { echo "== $*" | tee -a "$OUT/summary.txt"; }
nvidia-smi --query-gpu=name,driver_version --format=csv | tee "$OUT/gpu.txt"
if [ ! -f $B/build.ninja ]; then
  cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLAMIA_ENABLE_COMPILER=OFF > "$OUT/cmake.log" 2>&1 || { tail -30 "$OUT/cmake.log"; exit 1; }
fi
ninja -C $B flamia-run > "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
RUN=$B/bin/flamia-run
fails=0
step() { # name, command...
  local name=$1; shift
  log "$name: $*"
  "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  grep -E "S recomputed|FAIL" "$OUT/$name.log" | tee -a "$OUT/summary.txt"
  log "$name: rc=$rc"
  [ $rc = 0 ] || fails=$((fails + 1))
}
step edges-h2 $RUN --artifacts $A/dbg-d128 --heads 2 --workload docs:300,1000,77,129,0,1 --backward --check
step gqa-outliers $RUN --artifacts $A/dbg-d128 --heads 6 --kv-heads 2 --workload docs:512,700,33 --backward --check --outliers
step serial-edges $RUN --artifacts $A/dbg-d128-serial --heads 4 --kv-heads 2 --workload docs:300,1000,77,129,0,1 --backward --check
step d64-edges $RUN --artifacts $A/dbg-d64 --heads 4 --kv-heads 1 --workload docs:1000,256,7,1,0 --backward --check
step noncausal $RUN --artifacts $A/dbg-d128nc --heads 4 --kv-heads 2 --workload docs:600,129,64,1 --backward --check
# The standard workloads (DESIGN.md section 6) at 8192 tokens, H = 16.
for wl in fixed2k lognormal1k single tiny34; do
  step std-$wl $RUN --artifacts $A/dbg-d128 --heads 16 --kv-heads 16 --workload $wl --tokens 8192 --backward --check
done
step std-d64-lognormal1k $RUN --artifacts $A/dbg-d64 --heads 16 --kv-heads 4 --workload lognormal1k --tokens 8192 --backward --check
log "failed steps: $fails"
cat "$OUT/summary.txt"
