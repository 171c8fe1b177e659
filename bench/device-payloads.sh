#!/usr/bin/env bash
# On the GPU machine (issue 16, run 45): the sm_90a quantizers without the
# payloads no sm_90a kernel reads, against the same sets with them
# (bench/compile-payload-artifacts.sh; X and X-pl), in one session, with the
# baselines. Install FA4 in the same command first
# (../shared/baselines/README.md) so that the anchors include it.
#   1. every shipped set's copies and outputs against the reference
#      (--check: scales and dequantized copies bit for bit), L1/L2 (L3 for
#      the strict set) on a varlen batch with documents ending inside a
#      tile, an empty document and a single token; the -pl sets' payloads
#      too; memcheck on the new quantizers;
#   2. the A/B: quantization and forward (forward sets) or every kernel
#      (training sets) of X and X-pl, T = 32768, H = 16, two interleaved
#      rounds (ROUNDS overrides); ncu on the forward quantizers (fixed2k);
#   3. bench/bench.sh on the shipped sets and bench/anchors_h200.py (FA4's
#      backward too): the table against the baselines.
set -uo pipefail
OUT=${OUT:-$PWD/out/h200-payloads}
source bench/device-common.sh
SMALL=docs:300,1000,77,129,0,1,2048,640
step check-f-d128 $RUN --artifacts .device/f-d128 --workload $SMALL --heads 4 --kv-heads 2 --check --leakcheck
step check-f-d64 $RUN --artifacts .device/f-d64 --workload $SMALL --heads 8 --kv-heads 2 --check --leakcheck
step check-t-d128 $RUN --artifacts .device/t-d128 --backward --workload $SMALL --heads 4 --kv-heads 2 --check --leakcheck
step check-t-d64 $RUN --artifacts .device/t-d64 --backward --workload $SMALL --heads 4 --kv-heads 4 --check --leakcheck
step check-nv-d128 $RUN --artifacts .device/nv-d128 --backward --workload $SMALL --heads 4 --kv-heads 2 --check --leakcheck
step check-st-d64 $RUN --artifacts .device/st-d64 --backward --workload $SMALL --heads 4 --kv-heads 2 --check --leakcheck
step check-f-d128-pl $RUN --artifacts .device/f-d128-pl --workload $SMALL --heads 4 --kv-heads 2 --check
step check-t-d64-pl $RUN --artifacts .device/t-d64-pl --backward --workload $SMALL --heads 4 --kv-heads 2 --check
step check-t-d128-16h $RUN --artifacts .device/t-d128 --backward --workload lognormal1k --tokens 8192 --heads 16 --check
step memcheck-f-d128 compute-sanitizer --tool memcheck $RUN --artifacts .device/f-d128 --workload docs:300,200,77 --heads 2 --check --sanitize-friendly
step memcheck-t-d64 compute-sanitizer --tool memcheck $RUN --artifacts .device/t-d64 --backward --workload docs:300,200,77 --heads 2 --check --sanitize-friendly
for round in ${ROUNDS:-1 2}; do
  for v in f-d128 f-d128-pl f-d64 f-d64-pl; do
    for w in fixed2k lognormal1k single; do
      echo "== round $round $v $w" | tee -a $OUT/ab.txt
      $RUN --artifacts .device/$v --workload $w --tokens 32768 --heads 16 --bench 20 2>&1 | grep -E "quantization|forward:" | tee -a $OUT/ab.txt
    done
  done
  for v in t-d128 t-d128-pl t-d64 t-d64-pl; do
    echo "== round $round $v fixed2k" | tee -a $OUT/ab.txt
    $RUN --artifacts .device/$v --backward --workload fixed2k --tokens 32768 --heads 16 --bench 20 2>&1 | grep -E "kernel flamia_quantize|forward|backward|both" | tee -a $OUT/ab.txt
  done
done
STEP_GREP="Duration|Memory Throughput|DRAM Throughput|L2 Cache Throughput|L2 Hit Rate|Registers Per|Achieved Occupancy|rc="
for v in f-d128 f-d128-pl f-d64 f-d64-pl; do
  step ncu-quant-$v ncu --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
    -k regex:quantize -c 1 $RUN --artifacts .device/$v --heads 16 --workload fixed2k --tokens 32768 --bench 1 --warmup 0
done
log "forward sets"
OUT=$OUT/fwd FLAMIA_RUN=$RUN bash -c 'mkdir -p $OUT; bench/bench.sh .device/f-d128 .device/f-d64' | tee -a "$OUT/summary.txt"
log "training sets"
OUT=$OUT/train FLAMIA_RUN=$RUN FLAMIA_RUN_ARGS=--backward bash -c 'mkdir -p $OUT; bench/bench.sh .device/t-d128 .device/t-d64' | tee -a "$OUT/summary.txt"
log "nvfp4-mixed training set, fixed2k"
$RUN --artifacts .device/nv-d128 --backward --workload fixed2k --tokens 32768 --heads 16 --bench 20 > $OUT/bench-nv-fixed2k.log 2>&1
grep -E "kernel |both" $OUT/bench-nv-fixed2k.log | tee -a "$OUT/summary.txt"
log "baselines (FA4: $(python3 -c 'import flash_attn.cute' 2>&1 && echo yes))"
ANCHORS_BWD=1 python3 bench/anchors_h200.py > "$OUT/anchors.log" 2>&1
log "anchors rc=$?"
grep -vi "warn" "$OUT/anchors.log" | grep -E "fwd|bwd|ceiling" | tee -a "$OUT/summary.txt"
log "failed steps: $fails"
