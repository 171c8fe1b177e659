#!/usr/bin/env bash
# On the GPU machine (issue 16, runs 41 and 42): quantization-kernel
# variants (forward-only kernel sets under .device/, sm_90a, runtime heads),
# in one session:
#   1. every variant's copies bit for bit and O against the reference
#      (--check) on a varlen batch with documents ending inside a block and
#      GQA, and the training set's (t-d128) as well;
#   2. quantization and forward times, T = 32768, H = 16, fixed2k /
#      lognormal1k / one document, two interleaved rounds;
#   3. ncu on each variant's quantizer (fixed2k).
# Usage: bench/device-quantizer-ab.sh VARIANT...   (e.g. f-d128-nopf f-d128-pf f-d128)
# TRAIN="t-d128 ..." lists training sets to check (--backward --check; the
# first also with --leakcheck; default t-d128), MEMCHECK="f-d128 ..." the
# sets compute-sanitizer memcheck runs on (default: the first variant).
set -uo pipefail
OUT=${OUT:-$PWD/out/h200-quantizer}
source bench/device-common.sh
SMALL=docs:300,1000,77,129,0,1,2048,640
for v in "$@"; do
  step check-$v $RUN --artifacts .device/$v --workload $SMALL --heads 4 --kv-heads 2 --check
done
leak=--leakcheck
for t in ${TRAIN:-t-d128}; do
  step check-$t $RUN --artifacts .device/$t --backward --workload $SMALL --heads 4 --kv-heads 2 --check $leak
  leak=
done
for m in ${MEMCHECK:-$1}; do
  bwd=; [ -f .device/$m/manifest.json ] && grep -q '"phase": "backward"' .device/$m/manifest.json && bwd=--backward
  step memcheck-$m compute-sanitizer --tool memcheck $RUN --artifacts .device/$m $bwd --workload docs:300,200,77 --heads 2 --check --sanitize-friendly
done
for round in 1 2; do
  for v in "$@"; do
    for w in fixed2k lognormal1k single; do
      echo "== round $round $v $w" | tee -a $OUT/bench.txt
      $RUN --artifacts .device/$v --workload $w --tokens 32768 --heads 16 --bench 20 2>&1 | grep -E "quantization|forward:" | tee -a $OUT/bench.txt
    done
  done
done
STEP_GREP="Duration|Memory Throughput|DRAM Throughput|L2 Cache Throughput|L1/TEX Cache Throughput|L2 Hit Rate|Registers Per|Achieved Occupancy|stalled_long|rc="
for v in "$@"; do
  step ncu-quant-$v ncu --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
    --metrics smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio -k regex:quantize -c 1 \
    $RUN --artifacts .device/$v --heads 16 --workload fixed2k --tokens 32768 --bench 1 --warmup 0
done
log "failed steps: $fails"
