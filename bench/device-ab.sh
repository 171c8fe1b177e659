#!/usr/bin/env bash
# On the GPU machine: a same-session A/B of this build's sm_90a kernel sets
# (X) against the build before a change (X-old), both compiled by
# bench/compile-ab-artifacts.sh NAME into .device/NAME/ (runs 51 onwards;
# earlier runs had a script each, named in docs/performance.md).
#   checks: O, LSE, the copies and the gradients against the CPU reference,
#     L1/L2 (L3 on the strict and nvfp4-mixed sets), the S-consistency
#     check, on batches with documents ending inside a tile, an empty
#     document and single tokens, GQA, causal and not, outlier inputs; O,
#     LSE, dQ, dK, dV of X and X-old compared byte for byte (normal and
#     outlier inputs); memcheck and racecheck (t-d128, f-d128, f-d64);
#     CHECKS_QUICK=1 leaves out the 16-head check, the byte comparison and
#     the sanitizers (for a call with little device time);
#   scales: the adversarial softmax scales (SCALES, default 2000 2e6; run 78)
#     against the reference: the D = 128 forward of X and X-old (with L1/L2)
#     and the training set t-d128;
#   perf: the A/B of X and X-old, T = 32768, H = 16, two rounds (part ab;
#     AB_SETS names other sets, t-* with --backward, AB_WORKLOADS other
#     workloads than fixed2k lognormal1k single; the single document is
#     never run at D = 64),
#     then bench/bench.sh on X and bench/anchors_h200.py (part table; install
#     FA4 first in the same command, ../shared/baselines/README.md);
#   profile: Nsight Compute on the dQ and dK/dV kernels of X and X-old
#     (t-d128, t-d64; fixed2k, T = 32768, H = 16) with run 50's sections
#     and metrics, one line per kernel in $OUT/table.txt (bench/ncu-summary.py).
#     PROFILE_SETS names other sets (f-* sets: the forward kernel),
#     PROFILE_WORKLOAD another workload;
#   source: Nsight Compute's source counters (stall samples per SASS
#     instruction) of the same kernels and sets, one CSV per kernel
#     (SET-KERNEL-sass.csv.gz) and its summary by bench/ncu-source-stalls.py
#     (SET-KERNEL-stalls.txt); run 59 onwards.
# Usage: bench/device-ab.sh NAME checks|scales|ab|table|perf|profile|source
set -uo pipefail
NAME=${1:?usage: $0 NAME checks|scales|ab|table|perf|profile|source}
PART=${2:?checks, scales, ab, table, perf, profile or source}
DIR=.device/$NAME
OUT=${OUT:-$PWD/out/$NAME}
source bench/device-common.sh
SMALL=docs:300,1000,77,129,0,1,2048,640
if [ "$PART" = checks ]; then
step check-f-d128 $RUN --artifacts $DIR/f-d128 --workload $SMALL --heads 4 --kv-heads 2 --check --leakcheck
step check-f-d64 $RUN --artifacts $DIR/f-d64 --workload $SMALL --heads 4 --kv-heads 4 --check --leakcheck
step check-f-d128-nc $RUN --artifacts $DIR/f-d128-nc --workload $SMALL --heads 4 --kv-heads 2 --check --leakcheck
step check-fst-d64 $RUN --artifacts $DIR/fst-d64 --workload $SMALL --heads 4 --kv-heads 2 --check --leakcheck
step check-t-d128 $RUN --artifacts $DIR/t-d128 --backward --workload $SMALL --heads 4 --kv-heads 2 --check --leakcheck
step check-t-d64 $RUN --artifacts $DIR/t-d64 --backward --workload $SMALL --heads 4 --kv-heads 4 --check --leakcheck
step check-t-d128-nc $RUN --artifacts $DIR/t-d128-nc --backward --workload $SMALL --heads 4 --kv-heads 2 --check --leakcheck
step check-t-d128-dbg $RUN --artifacts $DIR/t-d128-dbg --backward --workload $SMALL --heads 4 --kv-heads 2 --check
step check-nv-d128 $RUN --artifacts $DIR/nv-d128 --backward --workload $SMALL --heads 4 --kv-heads 2 --check --leakcheck --l3
step check-st-d64 $RUN --artifacts $DIR/st-d64 --backward --workload $SMALL --heads 4 --kv-heads 2 --check --leakcheck --l3
[ -z "${CHECKS_QUICK:-}" ] && step check-t-d128-16h $RUN --artifacts $DIR/t-d128 --backward --workload lognormal1k --tokens 8192 --heads 16 --check
for d in 128 64; do
  step outliers-t-d$d $RUN --artifacts $DIR/t-d$d --backward --workload $SMALL --heads 4 --kv-heads 2 --outliers --check
done
if [ -z "${CHECKS_QUICK:-}" ]; then
# Byte for byte against the old build: O and LSE of the forward sets, and
# every output of the training sets, on normal and outlier inputs.
compare_dumps $SMALL f-d128 f-d64 f-d128-nc fst-d64 t-d128 t-d64
step memcheck-t-d128 compute-sanitizer --tool memcheck $RUN --artifacts $DIR/t-d128 --backward --workload docs:300,200,77 --heads 2 --check --sanitize-friendly
step racecheck-t-d128 compute-sanitizer --tool racecheck $RUN --artifacts $DIR/t-d128 --backward --workload docs:200,77 --heads 2 --check --sanitize-friendly
for set in f-d128 f-d64; do
  step memcheck-$set compute-sanitizer --tool memcheck $RUN --artifacts $DIR/$set --workload docs:300,200,77 --heads 2 --check --sanitize-friendly
  step racecheck-$set compute-sanitizer --tool racecheck $RUN --artifacts $DIR/$set --workload docs:200,77 --heads 2 --check --sanitize-friendly
done
fi
log "failed steps: $fails"
exit 0
fi
if [ "$PART" = scales ]; then
for sc in ${SCALES:-2000 2e6}; do
  for v in f-d128 f-d128-old; do
    step scale$sc-$v $RUN --artifacts $DIR/$v --workload $SMALL --heads 4 --kv-heads 2 --softmax-scale $sc --check --leakcheck
  done
  step scale$sc-t-d128 $RUN --artifacts $DIR/t-d128 --backward --workload $SMALL --heads 4 --kv-heads 2 --softmax-scale $sc --check
done
log "failed steps: $fails"
exit 0
fi
if [ "$PART" = profile ]; then
STEP_GREP=$NCU_GREP
for v in ${PROFILE_SETS:-t-d128-old t-d128 t-d64-old t-d64}; do
  case $v in
    f-*) bw=; kernels=fwd;;
    *) bw=--backward; kernels="dq dkdv";;
  esac
  for k in $kernels; do
    step flamia-$k-$v timeout 120 ncu $NCU_SECTIONS $NCU_METRICS -k "regex:attention_$k" -c 1 $RUN --artifacts $DIR/$v $bw --workload ${PROFILE_WORKLOAD:-fixed2k} --tokens 32768 --heads 16 --bench 1 --warmup 0
  done
done
python3 bench/ncu-summary.py "$OUT" > "$OUT/table.txt" 2>&1
cat "$OUT/table.txt"
log "failed steps: $fails"
exit 0
fi
if [ "$PART" = source ]; then
for v in ${PROFILE_SETS:-t-d128-old t-d128 t-d64-old t-d64}; do
  case $v in
    f-*) bw=; kernels=fwd;;
    *) bw=--backward; kernels="dkdv dq";;
  esac
  for k in $kernels; do
    step source-$v-$k timeout 180 ncu --section SourceCounters --section WarpStateStats -k "regex:attention_$k" -c 1 -f -o $OUT/$v-$k $RUN --artifacts $DIR/$v $bw --workload ${PROFILE_WORKLOAD:-fixed2k} --tokens 32768 --heads 16 --bench 1 --warmup 0
    ncu --import $OUT/$v-$k.ncu-rep --page source --csv --print-source sass | gzip -9 > $OUT/$v-$k-sass.csv.gz
    python3 bench/ncu-source-stalls.py $OUT/$v-$k-sass.csv.gz > $OUT/$v-$k-stalls.txt 2>&1
    head -4 $OUT/$v-$k-stalls.txt | tee -a "$OUT/summary.txt"
    rm -f $OUT/$v-$k.ncu-rep
  done
done
log "failed steps: $fails"
exit 0
fi
if [ "$PART" = perf ] || [ "$PART" = ab ]; then
for round in 1 2; do
  for v in ${AB_SETS:-f-d128-old f-d128 f-d64-old f-d64 t-d128-old t-d128 t-d64-old t-d64}; do
    for w in ${AB_WORKLOADS:-fixed2k lognormal1k single}; do
      case $v in *-d64*) [ $w = single ] && continue;; esac
      echo "== round $round $v $w" | tee -a $OUT/ab.txt
      case $v in
        t-*) $RUN --artifacts $DIR/$v --backward --workload $w --tokens 32768 --heads 16 --bench 20 2>&1 | grep -E "kernel flamia|forward|backward|both" | tee -a $OUT/ab.txt;;
        *) $RUN --artifacts $DIR/$v --workload $w --tokens 32768 --heads 16 --bench 20 2>&1 | grep -E "kernel flamia|forward" | tee -a $OUT/ab.txt;;
      esac
    done
  done
done
fi
[ "$PART" = ab ] && { log "failed steps: $fails"; exit 0; }
log "forward and training sets, this build"
DIR=$DIR OUT=$OUT/fwd FLAMIA_RUN=$RUN bash -c 'mkdir -p $OUT; bench/bench.sh $DIR/f-d128 $DIR/f-d64' | tee -a "$OUT/summary.txt"
DIR=$DIR OUT=$OUT/train FLAMIA_RUN=$RUN FLAMIA_RUN_ARGS=--backward bash -c 'mkdir -p $OUT; bench/bench.sh $DIR/t-d128 $DIR/t-d64' | tee -a "$OUT/summary.txt"
log "baselines (FA4: $(python3 -c 'import flash_attn.cute' 2>&1 && echo yes))"
ANCHORS_BWD=1 python3 bench/anchors_h200.py > "$OUT/anchors.log" 2>&1
log "anchors rc=$?"
grep -vi "warn" "$OUT/anchors.log" | grep -E "fwd|bwd|ceiling" | tee -a "$OUT/summary.txt"
log "failed steps: $fails"
