#!/usr/bin/env bash
# On the GPU machine (issue 19, run 46): the sm_90a dQ kernel at D = 128
# with a two-stage key ring (one form of Q and dO at a time) against the
# one-stage kernel before it (bench/compile-dq-ring-artifacts.sh: t-d128 and
# t-d128-old), in one session, with the baselines. Install FA4 in the same
# command first (../shared/baselines/README.md) so that the anchors include
# it.
#   1. the new sets' gradients against the CPU reference (--check: dO's
#      copies bit for bit), L1/L2 on a varlen batch with documents ending
#      inside a tile, an empty document and a single token (causal and
#      non-causal, GQA), the S-consistency check (--debug-scores set),
#      16 heads; memcheck and racecheck on the new dQ kernel;
#   2. the A/B: every kernel of t-d128-old and t-d128, T = 32768, H = 16,
#      interleaved rounds (ROUNDS, default "1 2"); ncu on both dQ kernels
#      and the dK/dV kernel (fixed2k), the backward's first profile;
#   3. bench/bench.sh on both training sets, and bench/anchors_h200.py
#      (ANCHORS_BWD=1: FA4's backward too): the table against the baselines.
# Usage: bench/device-dq-ring.sh checks|perf (step 1, or steps 2 and 3: two
# device calls that fit the per-call limit; FA4 is installed before perf).
set -uo pipefail
PART=${1:?checks or perf}
OUT=${OUT:-$PWD/out/h200-dq-ring}
source bench/device-common.sh
SMALL=docs:300,1000,77,129,0,1,2048,640
if [ "$PART" = checks ]; then
step check-t-d128 $RUN --artifacts .device/t-d128 --backward --workload $SMALL --heads 4 --kv-heads 2 --check --leakcheck
step check-t-d128-nc $RUN --artifacts .device/t-d128-nc --backward --workload $SMALL --heads 4 --kv-heads 2 --check --leakcheck
step check-t-d128-dbg $RUN --artifacts .device/t-d128-dbg --backward --workload $SMALL --heads 4 --kv-heads 2 --check
step check-nv-d128 $RUN --artifacts .device/nv-d128 --backward --workload $SMALL --heads 4 --kv-heads 2 --check --leakcheck
step check-t-d64 $RUN --artifacts .device/t-d64 --backward --workload $SMALL --heads 4 --kv-heads 4 --check --leakcheck
step check-t-d128-16h $RUN --artifacts .device/t-d128 --backward --workload lognormal1k --tokens 8192 --heads 16 --check
step check-t-d128-fixed2k $RUN --artifacts .device/t-d128 --backward --workload fixed2k --tokens 8192 --heads 4 --check --leakcheck
step check-t-d128-dbg-16h $RUN --artifacts .device/t-d128-dbg --backward --workload lognormal1k --tokens 8192 --heads 16 --check
step memcheck-t-d128 compute-sanitizer --tool memcheck $RUN --artifacts .device/t-d128 --backward --workload docs:300,200,77 --heads 2 --check --sanitize-friendly
step racecheck-t-d128 compute-sanitizer --tool racecheck $RUN --artifacts .device/t-d128 --backward --workload docs:300,200,77 --heads 2 --check --sanitize-friendly
log "failed steps: $fails"
exit 0
fi
for round in ${ROUNDS:-1 2}; do
  for v in t-d128-old t-d128; do
    for w in fixed2k lognormal1k single; do
      echo "== round $round $v $w" | tee -a $OUT/ab.txt
      $RUN --artifacts .device/$v --backward --workload $w --tokens 32768 --heads 16 --bench 20 2>&1 | grep -E "kernel flamia|forward|backward|both" | tee -a $OUT/ab.txt
    done
  done
done
STEP_GREP="Duration|Compute \(SM\) Throughput|Memory Throughput|L1/TEX Hit|L2 Hit Rate|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|Issue Slots Busy|No Eligible|Stall|rc="
for v in t-d128-old t-d128; do
  step ncu-dq-$v ncu --section SpeedOfLight --section Occupancy --section LaunchStats --section SchedulerStats --section WarpStateStats --section ComputeWorkloadAnalysis \
    -k regex:attention_dq -c 1 $RUN --artifacts .device/$v --backward --heads 16 --workload fixed2k --tokens 32768 --bench 1 --warmup 0
done
step ncu-dkdv-t-d128 ncu --section SpeedOfLight --section Occupancy --section LaunchStats --section SchedulerStats --section WarpStateStats --section ComputeWorkloadAnalysis \
  -k regex:attention_dkdv -c 1 $RUN --artifacts .device/t-d128 --backward --heads 16 --workload fixed2k --tokens 32768 --bench 1 --warmup 0
log "training sets, shipped"
OUT=$OUT/train FLAMIA_RUN=$RUN FLAMIA_RUN_ARGS=--backward bash -c 'mkdir -p $OUT; bench/bench.sh .device/t-d128 .device/t-d64' | tee -a "$OUT/summary.txt"
log "training sets, before (D = 64 is unchanged)"
OUT=$OUT/train-old FLAMIA_RUN=$RUN FLAMIA_RUN_ARGS=--backward bash -c 'mkdir -p $OUT; bench/bench.sh .device/t-d128-old .device/t-d64' | tee -a "$OUT/summary.txt"
log "baselines (FA4: $(python3 -c 'import flash_attn.cute' 2>&1 && echo yes))"
ANCHORS_BWD=1 python3 bench/anchors_h200.py > "$OUT/anchors.log" 2>&1
log "anchors rc=$?"
grep -vi "warn" "$OUT/anchors.log" | grep -E "fwd|bwd|ceiling" | tee -a "$OUT/summary.txt"
log "failed steps: $fails"
