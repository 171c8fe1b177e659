#!/usr/bin/env bash
# On the GPU machine (run 43): the shipped sm_90a kernel sets checked and
# timed against the baselines in one session. Compile first
# (bench/compile-l2-artifacts.sh, plus .device/nv-d128 and .device/st-d64:
# flamia-compile --target sm_90a --varlen --runtime-heads --causal
# --backward --recipe nvfp4-mixed --head-dim 128 / --recipe mxfp8-strict
# --head-dim 64), and install FA4 in the same command
# (../shared/baselines/README.md) so that the anchors include it.
#   1. every set's copies and outputs against the reference (--check), L1/L2
#      (and for the strict set L3) on a varlen batch with documents ending
#      inside a tile, an empty document and a single token; memcheck and
#      racecheck on small batches;
#   2. bench/bench.sh on the forward sets and on the training sets;
#   3. the baselines (bench/anchors_h200.py, FA4's backward too).
set -uo pipefail
OUT=${OUT:-$PWD/out/h200-table}
source bench/device-common.sh
SMALL=docs:300,1000,77,129,0,1,2048,640
step check-f-d128 $RUN --artifacts .device/f-d128 --workload $SMALL --heads 4 --kv-heads 2 --check --leakcheck
step check-f-d64 $RUN --artifacts .device/f-d64 --workload $SMALL --heads 8 --kv-heads 2 --check --leakcheck
step check-t-d128 $RUN --artifacts .device/t-d128 --backward --workload $SMALL --heads 4 --kv-heads 2 --check --leakcheck
step check-t-d64 $RUN --artifacts .device/t-d64 --backward --workload $SMALL --heads 4 --kv-heads 4 --check --leakcheck
step check-nv-d128 $RUN --artifacts .device/nv-d128 --backward --workload $SMALL --heads 4 --kv-heads 2 --check --leakcheck
step check-st-d64 $RUN --artifacts .device/st-d64 --backward --workload $SMALL --heads 4 --kv-heads 2 --check --leakcheck
step check-t-d128-16h $RUN --artifacts .device/t-d128 --backward --workload lognormal1k --tokens 8192 --heads 16 --check
step memcheck-f-d64 compute-sanitizer --tool memcheck $RUN --artifacts .device/f-d64 --workload docs:300,200,77 --heads 2 --check --sanitize-friendly
step memcheck-t-d128 compute-sanitizer --tool memcheck $RUN --artifacts .device/t-d128 --backward --workload docs:300,200,77 --heads 2 --check --sanitize-friendly
step racecheck-t-d128 compute-sanitizer --tool racecheck $RUN --artifacts .device/t-d128 --backward --workload docs:300,200,77 --heads 2 --sanitize-friendly
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
