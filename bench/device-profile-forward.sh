#!/usr/bin/env bash
# On the GPU machine: Nsight Compute on the sm_90a forward (issue 16's
# profile): the attention kernel and the quantizer of recipe mxfp8 on the
# standard workloads at T = 32768, H = 16 (D = 128: fixed2k and one 32k
# document; D = 64: lognormal1k), one launch each, with the sections that
# say where time goes (speed of light, compute pipes, warp stalls,
# occupancy, launch). Compile first (on the compiler machine):
#   build/bin/flamia-compile --target sm_90a --recipe mxfp8 --head-dim 128 --runtime-heads --causal --varlen -o .device/fwd-d128
#   ... --head-dim 64 ... -o .device/fwd-d64
# Logs go to $OUT. Usage: bench/device-profile-forward.sh
set -uo pipefail
OUT=${OUT:-$PWD/out/h200-profile}
source bench/device-common.sh
SECTIONS="--section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis"
# The stall reasons and the tensor pipe's activity as numbers (the sections
# chart them), in a second pass so that a metric name this ncu lacks costs
# only that pass.
METRICS="--metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,regex:sm__pipe_tensor_op.*_cycles_active\.avg\.pct_of_peak_sustained_active,sm__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum"
prof() { # name kernel-regex flamia-run args...
  local name=$1 kernel=$2; shift 2
  step $name ncu $SECTIONS -k "regex:$kernel" -c 1 $RUN "$@" --bench 1 --warmup 0
  step $name-stalls ncu $METRICS -k "regex:$kernel" -c 1 $RUN "$@" --bench 1 --warmup 0
}
STEP_GREP="stalled|pipe_tensor|Duration|Compute \(SM\) Throughput|Memory Throughput|Registers Per Thread|Achieved Occupancy|Warp Cycles Per Issued|Issued Warp Per Scheduler|No Eligible|Stall|Executed Ipc|Dynamic Shared|rc="
prof fwd-fixed2k-d128 attention_fwd --artifacts .device/fwd-d128 --heads 16 --workload fixed2k --tokens 32768
prof fwd-single-d128 attention_fwd --artifacts .device/fwd-d128 --heads 16 --workload single --tokens 32768
prof fwd-lognormal-d64 attention_fwd --artifacts .device/fwd-d64 --heads 16 --kv-heads 4 --workload lognormal1k --tokens 32768
prof quant-fixed2k-d128 quantize --artifacts .device/fwd-d128 --heads 16 --workload fixed2k --tokens 32768
log "failed steps: $fails"
