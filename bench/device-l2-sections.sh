#!/usr/bin/env bash
# On the GPU machine (issue 16, run 39): the L2-section work order against
# LPT on one kernel set, in one session with the baselines.
#   1. correctness under l2-sections: the training step of .device/t-d128-sec
#      (its manifest asks for 1 MiB sections, so small batches span several)
#      against the CPU reference with L1/L2 checks; the same batch with
#      --schedule-order lpt dumps O, LSE, dQ, dK, dV, which must be the same
#      bytes (every order computes the same result);
#   2. the standard workloads (bench/bench.sh) with --schedule-order lpt and
#      l2-sections, forward-only and training sets, the forward twice each,
#      interleaved;
#   3. the baselines (bench/anchors_h200.py; FA4 when it imports);
#   4. ncu memory sections of the fixed2k D = 128 forward in both orders.
# Compile first: bench/compile-l2-artifacts.sh. Usage:
#   bench/device-l2-sections.sh [check|bench|anchors|profile]...  (default all)
set -uo pipefail
OUT=${OUT:-$PWD/out/h200-l2}
source bench/device-common.sh
parts=${*:-check bench anchors profile}
SMALL=docs:300,1000,77,129,0,1,2048,640
has() { [[ " $parts " == *" $1 "* ]]; }

if has check; then
  step check-sec $RUN --artifacts .device/t-d128-sec --backward --workload $SMALL --heads 4 --kv-heads 2 --check --leakcheck --dump $OUT/dump-sec
  step check-lpt $RUN --artifacts .device/t-d128-sec --backward --workload $SMALL --heads 4 --kv-heads 2 --check --schedule-order lpt --dump $OUT/dump-lpt
  same=0
  for f in o lse dq dk dv; do
    if [ -f $OUT/dump-sec/$f.npy ] && cmp -s $OUT/dump-sec/$f.npy $OUT/dump-lpt/$f.npy; then
      log "$f.npy: same bytes under both orders"
    else
      log "$f.npy: DIFFERS (or missing) between the orders"; same=1
    fi
  done
  [ $same = 0 ] || fails=$((fails + 1))
  rm -rf $OUT/dump-sec $OUT/dump-lpt
  step check-fixed2k $RUN --artifacts .device/t-d128-sec --backward --workload fixed2k --tokens 8192 --heads 16 --check
  step check-d64 $RUN --artifacts .device/f-d64 --workload lognormal1k --tokens 8192 --heads 8 --kv-heads 2 --check --leakcheck --schedule-order l2-sections
fi

if has bench; then
  for round in 1 2; do
    for order in lpt l2-sections; do
      log "forward-only, $order, round $round"
      OUT=$OUT/fwd-$order-$round FLAMIA_RUN=$RUN FLAMIA_RUN_ARGS="--schedule-order $order" \
        bash -c 'mkdir -p $OUT; bench/bench.sh .device/f-d128 .device/f-d64' | tee -a "$OUT/summary.txt"
    done
  done
  for order in lpt l2-sections; do
    log "training step, $order"
    OUT=$OUT/train-$order FLAMIA_RUN=$RUN FLAMIA_RUN_ARGS="--backward --schedule-order $order" \
      bash -c 'mkdir -p $OUT; bench/bench.sh .device/t-d128 .device/t-d64' | tee -a "$OUT/summary.txt"
  done
fi

if has anchors; then
  log "baselines (FA4: $(python3 -c 'import flash_attn.cute' 2>&1 && echo yes))"
  ANCHORS_BWD=1 python3 bench/anchors_h200.py > "$OUT/anchors.log" 2>&1
  log "anchors rc=$?"
  grep -vi "warn" "$OUT/anchors.log" | tail -40 | tee -a "$OUT/summary.txt"
fi

if has profile; then
  STEP_GREP="Duration|Memory Throughput|DRAM Throughput|L2 Hit Rate|L1/TEX Hit|Compute \(SM\) Throughput|rc="
  for order in lpt l2-sections; do
    step ncu-fixed2k-$order ncu --section SpeedOfLight --section MemoryWorkloadAnalysis -k regex:attention_fwd -c 1 \
      $RUN --artifacts .device/f-d128 --heads 16 --workload fixed2k --tokens 32768 --schedule-order $order --bench 1 --warmup 0
  done
fi
log "failed steps: $fails"
