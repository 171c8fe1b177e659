#!/usr/bin/env bash
# On the GPU machine: large batches (past 2^31 elements per [T, H, D] tensor)
# and the cost of 64-bit addressing, with the kernels compiled here.
#   bench/device-sizes.sh STAGE
# STAGE a: build flamia-run; the small checks (bench/device-validate.sh
#          quick); the batch that faulted before the 64-bit offsets
#          (512 x 2048 + 64 tokens, H = 16, D = 128) with --check --leakcheck
#          (ran past its 240 s limit in run 16); 2M tokens with --check (its
#          host memory is refused up front); the faulting batch on the
#          kernels before the 64-bit offsets (old-*), to show the fault.
# STAGE b: 4M tokens (run 16: ran past its 60 s limit making the inputs; now refused by the runtime's limit), 2M and 3.5M
#          tokens at D = 128, 2M at D = 64: every output written, no NaN, no
#          fault; quantization + forward timed for the kernels before (old-*)
#          and after the 64-bit offsets on three standard workloads.
# STAGE c: the faulting batch against the CPU reference (one query head,
#          every document) and every quantized copy bit for bit; one token
#          past the validated limit, refused before the driver.
# STAGE d: L1/L2 bit for bit (--leakcheck) on the batch that faulted.
# Artifacts: .device/art-<config> and .device/old-<config> (flamia-compile
# --target sm_90a --causal --varlen, configs as named). Logs go to $LOGS,
# and a summary plus a tarball of them to $OUT.
set -uo pipefail
STAGE=${1:-a}
OUT=${OUT:-$PWD/out/h200-sizes}
LOGS=${LOGS:-$PWD/out/h200-sizes-logs-$STAGE}
mkdir -p "$OUT" "$LOGS"
B=${FLAMIA_GPU_BUILD:-$PWD/build-gpu}
log() { echo "== $*" | tee -a "$LOGS/summary-$STAGE.txt"; }
# Configured once, rebuilt every time (a warm machine keeps $B: run 16's
# stage c ran the stage-b binary, whose limit was still 2^33 elements).
if [ ! -f "$B/build.ninja" ]; then
  cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLAMIA_ENABLE_COMPILER=OFF > "$LOGS/cmake.log" 2>&1 || { tail -30 "$LOGS/cmake.log"; exit 1; }
fi
ninja -C "$B" flamia-run > "$LOGS/build.log" 2>&1 || { tail -40 "$LOGS/build.log"; exit 1; }
RUN=$B/bin/flamia-run
step() { # name, timeout (s), command...
  local name=$1 limit=$2; shift 2
  log "$name: $*"
  local t0=$(date +%s%N)
  timeout "$limit" "$@" > "$LOGS/$name.log" 2>&1
  local rc=$?
  local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  grep -E "PASS|FAIL|error|NaN|rel|TFLOP|TB/s|GB/s|median|tokens" "$LOGS/$name.log" | head -30
  log "$name: rc=$rc (${ms} ms)"
}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$LOGS/gpu.txt"
if [ "$STAGE" = a ]; then
  FLAMIA_GPU_BUILD=$B OUT=$LOGS/validate bash bench/device-validate.sh quick > "$LOGS/validate-quick.log" 2>&1
  grep "rc=" "$LOGS/validate-quick.log" | tee -a "$LOGS/summary-$STAGE.txt"
  step fixed2k-1M64-d128 240 $RUN --artifacts .device/art-h16d128 --workload fixed2k --tokens 1048640 --check --leakcheck
  step lognormal1k-2M-d128 200 $RUN --artifacts .device/art-h16d128 --workload lognormal1k --tokens 2097152 --check
  # The same batch on the kernels before the 64-bit offsets (expected to fault).
  step old-fixed2k-1M64-d128 60 $RUN --artifacts .device/old-h16d128 --workload fixed2k --tokens 1048640 --check
elif [ "$STAGE" = b ]; then
  # Past 2^31 elements a full --check needs more host memory than the
  # machine has (flamia-run says so); these runs check that every output is
  # written and no NaN remains, and that nothing faults.
  step fixed2k-4M-d128 60 $RUN --artifacts .device/art-h16d128 --workload fixed2k --tokens 4194304
  step lognormal1k-2M-d128 90 $RUN --artifacts .device/art-h16d128 --workload lognormal1k --tokens 2097152
  step fixed2k-3.5M-d128 150 $RUN --artifacts .device/art-h16d128 --workload fixed2k --tokens 3670016
  step fixed2k-2M-d64 90 $RUN --artifacts .device/art-h16d64 --workload fixed2k --tokens 2097152
  for k in old art; do
    step bench-$k-fixed2k 40 $RUN --artifacts .device/$k-h16d128 --workload fixed2k --tokens 32768 --bench 20
    step bench-$k-single16k 40 $RUN --artifacts .device/$k-h16d128 --workload single --tokens 16384 --bench 20
    step bench-$k-fixed2k-d64 40 $RUN --artifacts .device/$k-h16d64 --workload fixed2k --tokens 32768 --bench 20
  done
elif [ "$STAGE" = d ]; then
  # L1/L2 bit for bit on the batch that faulted (perturbed documents, every
  # head), without the reference.
  step fixed2k-1M64-d128-leak 480 $RUN --artifacts .device/art-h16d128 --workload fixed2k --tokens 1048640 --leakcheck
else
  # The batch that faulted, against the CPU reference on one query head
  # (every document) and the quantized copies bit for bit.
  step fixed2k-1M64-d128-check 400 $RUN --artifacts .device/art-h16d128 --workload fixed2k --tokens 1048640 --check --ref-heads 1
  # One token past the validated limit (7 x 2^30 elements): refused up front.
  step fixed2k-limit-plus-1 30 $RUN --artifacts .device/art-h16d128 --workload fixed2k --tokens 3670017
fi
cp "$LOGS/summary-$STAGE.txt" "$OUT/"
tar czf "$OUT/sizes-$STAGE-logs.tar.gz" -C "$(dirname "$LOGS")" "$(basename "$LOGS")"
cat "$LOGS/summary-$STAGE.txt"
