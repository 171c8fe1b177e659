#!/usr/bin/env bash
# On the GPU machine (issue 16, run 41): quantization-kernel variants of
# one forward spec (sm_90a, mxfp8, D = 128, runtime heads), each a kernel
# set under .device/, in one session:
#   1. every variant's copies bit for bit and O against the reference
#      (--check) on a varlen batch with documents ending inside a block and
#      GQA, and the training set's (t-d128) as well;
#   2. quantization and forward times, T = 32768, H = 16, fixed2k /
#      lognormal1k / one document, two interleaved rounds;
#   3. ncu on each variant's quantizer (fixed2k).
# Usage: bench/device-quantizer-ab.sh VARIANT...   (e.g. f-d128-nopf f-d128-pf f-d128)
set -uo pipefail
OUT=${OUT:-$PWD/out/h200-quantizer}
source bench/device-common.sh
SMALL=docs:300,1000,77,129,0,1,2048,640
for v in "$@"; do
  step check-$v $RUN --artifacts .device/$v --workload $SMALL --heads 4 --kv-heads 2 --check
done
step check-train $RUN --artifacts .device/t-d128 --backward --workload $SMALL --heads 4 --kv-heads 2 --check --leakcheck
step memcheck compute-sanitizer --tool memcheck $RUN --artifacts .device/${1} --workload docs:300,200,77 --heads 2 --check --sanitize-friendly
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
