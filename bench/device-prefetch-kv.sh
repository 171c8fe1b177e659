#!/usr/bin/env bash
# On the GPU machine (issue 16, run 40): the quantization kernel with and
# without its L2 prefetch of K and V (flamia.prefetch_rows), one kernel set
# each, in one session. Compile first: bench/compile-l2-artifacts.sh (the
# default, with the prefetch) and, for the control,
#   build/bin/flamia-compile --target sm_90a --recipe mxfp8 --varlen --runtime-heads --causal \
#     --head-dim 128 --prefetch-kv=false -o .device/f-d128-nopf   (and --head-dim 64: f-d64-nopf)
#   1. the prefetching quantizer's copies bit for bit (--check) on a varlen
#      batch with documents ending inside a block, GQA and D = 64, and
#      compute-sanitizer memcheck on it;
#   2. quantization and forward times, both builds, T = 32768, H = 16,
#      fixed2k / lognormal1k / one document, two interleaved rounds;
#   3. ncu on both quantizers (fixed2k, D = 128).
set -uo pipefail
OUT=${OUT:-$PWD/out/h200-prefetch}
source bench/device-common.sh
SMALL=docs:300,1000,77,129,0,1,2048,640
step check-d128 $RUN --artifacts .device/f-d128 --workload $SMALL --heads 4 --kv-heads 2 --check --leakcheck
step check-d64 $RUN --artifacts .device/f-d64 --workload $SMALL --heads 8 --kv-heads 2 --check
step check-train $RUN --artifacts .device/t-d128 --backward --workload $SMALL --heads 4 --kv-heads 2 --check
step memcheck compute-sanitizer --tool memcheck $RUN --artifacts .device/f-d128 --workload docs:300,200,77 --heads 2 --check --sanitize-friendly
for round in 1 2; do
  for v in f-d128 f-d128-nopf; do
    for w in fixed2k lognormal1k single; do
      echo "== round $round $v $w" | tee -a $OUT/bench.txt
      $RUN --artifacts .device/$v --workload $w --tokens 32768 --heads 16 --bench 20 2>&1 | grep -E "quantization|forward:" | tee -a $OUT/bench.txt
    done
    echo "== round $round ${v/d128/d64} lognormal1k" | tee -a $OUT/bench.txt
    $RUN --artifacts .device/${v/d128/d64} --workload lognormal1k --tokens 32768 --heads 16 --bench 20 2>&1 | grep -E "quantization|forward:" | tee -a $OUT/bench.txt
  done
done
STEP_GREP="Duration|Memory Throughput|DRAM Throughput|L2 Hit Rate|Registers Per|Achieved Occupancy|stalled_long|rc="
for v in f-d128 f-d128-nopf; do
  step ncu-quant-$v ncu --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
    --metrics smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio -k regex:quantize -c 1 \
    $RUN --artifacts .device/$v --heads 16 --workload fixed2k --tokens 32768 --bench 1 --warmup 0
done
log "failed steps: $fails"
