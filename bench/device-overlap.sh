#!/usr/bin/env bash
# On the GPU machine (issue 19, run 48): the sm_90a backward as it ships
# after run 47 (bench/compile-overlap-artifacts.sh: X), against run 47's
# async-pair build (X-as) and run 46's kernels (X-rg), in one session.
# Install FA4 first in the same command for the perf part
# (../shared/baselines/README.md).
#   checks: the shipped sets' gradients against the CPU reference (dO's
#     copies and D bit for bit), L1/L2 (L3 for the strict set) on a varlen
#     batch with documents ending inside a tile, an empty document and a
#     single token, causal and not, GQA; the S-consistency check; 16 heads;
#     D with outlier inputs (run 47's one-ulp miss at D = 64), three seeds
#     at each head dim; the gradients of X, X-as and X-rg byte for byte
#     (the same sums in the same order); memcheck and racecheck;
#   perf: the A/B of every kernel, T = 32768, H = 16 (ROUNDS, default 1);
#     bench/bench.sh on the shipped sets and bench/anchors_h200.py with
#     ANCHORS_BWD=1 (FA4's backward too).
# Usage: bench/device-overlap.sh checks|perf
set -uo pipefail
PART=${1:?checks or perf}
OUT=${OUT:-$PWD/out/h200-overlap}
source bench/device-common.sh
SMALL=docs:300,1000,77,129,0,1,2048,640
if [ "$PART" = checks ]; then
step check-t-d128 $RUN --artifacts .device/t-d128 --backward --workload $SMALL --heads 4 --kv-heads 2 --check --leakcheck
step check-t-d128-nc $RUN --artifacts .device/t-d128-nc --backward --workload $SMALL --heads 4 --kv-heads 2 --check --leakcheck
step check-t-d128-dbg $RUN --artifacts .device/t-d128-dbg --backward --workload $SMALL --heads 4 --kv-heads 2 --check
step check-nv-d128 $RUN --artifacts .device/nv-d128 --backward --workload $SMALL --heads 4 --kv-heads 2 --check --leakcheck
step check-st-d64 $RUN --artifacts .device/st-d64 --backward --workload $SMALL --heads 4 --kv-heads 2 --check --leakcheck
step check-t-d64 $RUN --artifacts .device/t-d64 --backward --workload $SMALL --heads 4 --kv-heads 4 --check --leakcheck
step check-t-d128-16h $RUN --artifacts .device/t-d128 --backward --workload lognormal1k --tokens 8192 --heads 16 --check
step check-t-d128-fixed2k $RUN --artifacts .device/t-d128 --backward --workload fixed2k --tokens 8192 --heads 4 --check --leakcheck
for d in 64 128; do
  for seed in 1 2 3; do
    step outliers-t-d$d-s$seed $RUN --artifacts .device/t-d$d --backward --workload $SMALL --heads 4 --kv-heads 2 --outliers --seed $seed --check
  done
done
for d in 128 64; do
  for v in t-d$d t-d$d-as t-d$d-rg; do
    step dump-$v $RUN --artifacts .device/$v --backward --workload $SMALL --heads 4 --kv-heads 2 --check --dump $OUT/dump-$v
  done
  for g in dq dk dv; do
    for v in t-d$d-as t-d$d-rg; do
      if cmp -s $OUT/dump-t-d$d/$g.npy $OUT/dump-$v/$g.npy; then log "bytes $g t-d$d vs $v: identical"; else log "bytes $g t-d$d vs $v: DIFFER or missing"; fails=$((fails + 1)); fi
    done
  done
done
rm -rf $OUT/dump-*/  # the dumped arrays; the steps' logs stay
step memcheck-t-d128 compute-sanitizer --tool memcheck $RUN --artifacts .device/t-d128 --backward --workload docs:300,200,77 --heads 2 --check --sanitize-friendly
step racecheck-t-d128 compute-sanitizer --tool racecheck $RUN --artifacts .device/t-d128 --backward --workload docs:300,200,77 --heads 2 --check --sanitize-friendly
log "failed steps: $fails"
exit 0
fi
for round in ${ROUNDS:-1}; do
  for v in t-d128-rg t-d128-as t-d128 t-d64-rg t-d64-as t-d64; do
    for w in fixed2k lognormal1k single; do
      case $v in t-d64*) [ $w = single ] && continue;; esac
      echo "== round $round $v $w" | tee -a $OUT/ab.txt
      $RUN --artifacts .device/$v --backward --workload $w --tokens 32768 --heads 16 --bench 20 2>&1 | grep -E "kernel flamia|forward|backward|both" | tee -a $OUT/ab.txt
    done
  done
done
log "training sets, shipped"
OUT=$OUT/train FLAMIA_RUN=$RUN FLAMIA_RUN_ARGS=--backward bash -c 'mkdir -p $OUT; bench/bench.sh .device/t-d128 .device/t-d64' | tee -a "$OUT/summary.txt"
log "baselines (FA4: $(python3 -c 'import flash_attn.cute' 2>&1 && echo yes))"
ANCHORS_BWD=1 python3 bench/anchors_h200.py > "$OUT/anchors.log" 2>&1
log "anchors rc=$?"
grep -vi "warn" "$OUT/anchors.log" | grep -E "fwd|bwd|ceiling" | tee -a "$OUT/summary.txt"
log "failed steps: $fails"
