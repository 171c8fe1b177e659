#!/usr/bin/env bash
# On the GPU machine: kernel sets with runtime head counts (flamia-compile
# --runtime-heads, one set for every Hq and Hkv) checked on the H200 with
# flamia-run --backward: many head counts and GQA ratios through the same
# set (quantized copies, delta bit for bit; O/LSE and dQ/dK/dV against the
# CPU reference; L1/L2 perturbation checks), its outputs bit for bit against
# a set compiled for fixed heads, compute-sanitizer, the speed of both (A/B),
# then the Python op's CUDA tests on kernel sets without head counts.
# Compile on the compiler machine first (docs/python.md, docs/performance.md):
#   build/bin/flamia-compile --target sm_90a --varlen --backward <flags> -o .device/rh/<name>
#     rh-d128:   --head-dim 128 --runtime-heads --causal
#     rh-d64:    --head-dim 64 --runtime-heads --causal
#     rh-d128nc: --head-dim 128 --runtime-heads --grad-dtype f32
#     st-h6kv2:  --head-dim 128 --heads 6 --kv-heads 2 --causal
#     st-h16kv4: --head-dim 128 --heads 16 --kv-heads 4 --causal
#   python -m flamia.precompile --out .device/py-kernels --target sm_90a --head-dim {128,64} [--no-causal] --both
#   pip download pytest -d .device/wheels
# Logs go to $OUT. Usage: bench/device-runtime-heads.sh
set -uo pipefail
OUT=${OUT:-$PWD/out/h200-runtime-heads}
mkdir -p "$OUT"
B=${FLAMIA_GPU_BUILD:-$PWD/build-gpu}
A=.device/rh
log() { echo "== $*" | tee -a "$OUT/summary.txt"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$OUT/gpu.txt"
if [ ! -f $B/build.ninja ]; then
  cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLAMIA_ENABLE_COMPILER=OFF > "$OUT/cmake.log" 2>&1 || { tail -30 "$OUT/cmake.log"; exit 1; }
fi
ninja -C $B flamia-run flamia_reference flamia_runtime flamia-ref > "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
RUN=$B/bin/flamia-run
fails=0
step() { # name, command...
  local name=$1; shift
  log "$name: $*"
  local t0=$(date +%s%N)
  "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  tail -12 "$OUT/$name.log"
  log "$name: rc=$rc (${ms} ms)"
  [ $rc = 0 ] || fails=$((fails + 1))
  return $rc
}
# One set (rh-d128), many head counts: documents ending inside a tile, empty
# and single-token ones; GQA 1:1 to 8:1; outlier inputs.
step h2kv2-edges $RUN --artifacts $A/rh-d128 --heads 2 --kv-heads 2 --workload docs:300,1000,77,129,0,1 --backward --check
step h6kv2-outliers $RUN --artifacts $A/rh-d128 --heads 6 --kv-heads 2 --workload docs:512,700,33 --backward --check --outliers
step h8kv1 $RUN --artifacts $A/rh-d128 --heads 8 --kv-heads 1 --workload docs:1,640,129,255 --backward --check
step h3kv3 $RUN --artifacts $A/rh-d128 --heads 3 --kv-heads 3 --workload docs:900,31,0,400 --backward --check
step h12kv3-leak $RUN --artifacts $A/rh-d128 --heads 12 --kv-heads 3 --workload docs:300,1000,77,129 --backward --check --leakcheck
step h16kv4-lognormal $RUN --artifacts $A/rh-d128 --heads 16 --kv-heads 4 --workload lognormal1k --tokens 4096 --backward --check --leakcheck
step h1kv1-single $RUN --artifacts $A/rh-d128 --heads 1 --kv-heads 1 --workload single --tokens 2048 --backward --check
step d64-h6kv2 $RUN --artifacts $A/rh-d64 --heads 6 --kv-heads 2 --workload docs:1000,256,7 --backward --check
step d64-h16kv16 $RUN --artifacts $A/rh-d64 --heads 16 --kv-heads 16 --workload lognormal1k --tokens 4096 --backward --check --leakcheck
step nc-f32-h4kv2 $RUN --artifacts $A/rh-d128nc --heads 4 --kv-heads 2 --workload docs:600,129,64 --backward --check
step nc-f32-h5kv1 $RUN --artifacts $A/rh-d128nc --heads 5 --kv-heads 1 --workload docs:77,300 --backward --check
# The same call through the runtime-heads set and the fixed-heads set: the
# same bits (only address arithmetic differs).
for s in rh-d128 st-h6kv2; do
  step dump-$s $RUN --artifacts $A/$s --heads 6 --kv-heads 2 --workload docs:512,700,33,1 --seed 7 --backward --check --dump "$OUT/dump-$s"
done
for f in o lse dq dk dv; do
  if cmp -s "$OUT/dump-rh-d128/$f.npy" "$OUT/dump-st-h6kv2/$f.npy"; then log "same bits: $f"; else log "DIFFERENT: $f"; fails=$((fails + 1)); fi
done
step sanitize-mem compute-sanitizer --tool memcheck $RUN --artifacts $A/rh-d128 --heads 6 --kv-heads 2 --workload docs:300,200,77 --backward --sanitize-friendly
# Speed A/B (medians of CUDA-event timings): the runtime-heads set against
# sets compiled for the call's heads, forward and training step.
for cfg in "st-h6kv2 6 2" "rh-d128 6 2" "st-h16kv4 16 4" "rh-d128 16 4"; do
  set -- $cfg
  step bench-$1-h$2kv$3 $RUN --artifacts $A/$1 --heads $2 --kv-heads $3 --workload lognormal1k --tokens 32768 --backward --bench 20
done
log "flamia-run steps failed: $fails"
# The Python op: its CUDA tests (random varlen batches, GQA 1:1 to 4:1, D 64
# and 128, CUDA graphs) on kernel sets that do not name head counts.
python -m pip install -q --no-index --find-links .device/wheels pytest > "$OUT/pip.log" 2>&1 || { tail "$OUT/pip.log"; }
export FLAMIA_LIBRARY_DIR=$B/lib FLAMIA_TOOLS_DIR=$B/bin FLAMIA_KERNEL_DIR=$PWD/.device/py-kernels
export FLAMIA_CACHE_DIR=$OUT/cache PYTHONPATH=$PWD/python
( cd python && timeout 300 python -m pytest -q -p no:cacheprovider -p no:logging tests ) > "$OUT/pytest.log" 2>&1
log "pytest rc=$?"
tail -6 "$OUT/pytest.log"
cat "$OUT/summary.txt"
