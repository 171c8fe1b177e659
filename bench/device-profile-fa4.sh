#!/usr/bin/env bash
# On the GPU machine, FA4 installed (../shared/baselines/README.md: `source
# .fa4/b/install-fa4.sh install` in the same command): Nsight Compute on
# FlashAttention-4's sm_90 kernels and on FLAMIA's, with the same sections
# and metrics, on the workloads where FLAMIA is behind (issue 16: the forward
# on one 32k document and at D = 64; issue 19: the backward on 16 x 2k
# documents), so that what separates them is measured, not read from source.
# FA4 runs through bench/fa4-profile-driver.py (one call in a profiler
# range, after warm-up); FLAMIA through flamia-run on artifacts compiled on
# the compiler machine (bench/compile-profile-fa4-artifacts.sh). Logs go to
# $OUT. Usage: bench/device-profile-fa4.sh
set -uo pipefail
OUT=${OUT:-$PWD/out/h200-profile-fa4}
source bench/device-common.sh
STEP_GREP=$NCU_GREP
fa4() { # name workload D fwd|bwd [--deterministic]: every kernel of one call
  local name=$1; shift
  step fa4-$name timeout 200 ncu $NCU_SECTIONS $NCU_METRICS --profile-from-start off -c 8 python3 bench/fa4-profile-driver.py "$@"
}
flamia() { # name kernel-regex flamia-run args...
  local name=$1 kernel=$2; shift 2
  step flamia-$name timeout 200 ncu $NCU_SECTIONS $NCU_METRICS -k "regex:$kernel" -c 1 $RUN "$@" --bench 1 --warmup 0
}
python3 -c "import torch, flash_attn.cute; print(torch.__version__, torch.cuda.get_device_name())" | tee -a "$OUT/summary.txt"
fa4 fwd-single-d128 single32k 128 fwd
flamia fwd-single-d128 attention_fwd --artifacts .device/pf-fwd-d128 --heads 16 --workload single --tokens 32768
fa4 fwd-lognormal-d64 lognormal1k 64 fwd
flamia fwd-lognormal-d64 attention_fwd --artifacts .device/pf-fwd-d64 --heads 16 --workload lognormal1k --tokens 32768
fa4 bwd-fixed2k-d128 fixed2k 128 bwd --deterministic
flamia bwd-dq-fixed2k-d128 attention_dq --artifacts .device/pf-train-d128 --heads 16 --workload fixed2k --tokens 32768 --backward
flamia bwd-dkdv-fixed2k-d128 attention_dkdv --artifacts .device/pf-train-d128 --heads 16 --workload fixed2k --tokens 32768 --backward
log "failed steps: $fails"
