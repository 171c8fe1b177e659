#!/usr/bin/env bash
# device call: runs 63-66 checks and A/B (.device/run66s: run66 without PTX)
set -u
R=$OUT
mkdir -p $R/checks $R/ab
OUT=$R/checks bash bench/device-ab.sh run66s checks > $R/console-checks.txt 2>&1
echo "== checks"; grep -E "FAIL|DIFFER|failed steps|ERROR SUMMARY|RACECHECK SUMMARY" $R/console-checks.txt | sed 's/=== *//' | sort | uniq -c | head -20
echo "identical: $(grep -c ': identical' $R/console-checks.txt)"
# The A/B: device-ab.sh's loop and flamia-run lines; single documents for the forward sets only.
OUT=$R/ab; DIR=.device/run66s; source bench/device-common.sh > /dev/null
for round in 1 2; do
  for v in f-d128-old f-d128 f-d64-old f-d64 t-d128-old t-d128-r64 t-d128-r65 t-d128 t-d64-old t-d64-r64 t-d64-r65 t-d64; do
    for w in fixed2k lognormal1k single; do
      case $v in *-d64*|t-*) [ $w = single ] && continue;; esac
      echo "== round $round $v $w" >> $OUT/ab.txt
      case $v in
        t-*) $RUN --artifacts $DIR/$v --backward --workload $w --tokens 32768 --heads 16 --bench 20 2>&1 | grep -E "kernel flamia|forward|backward|both" >> $OUT/ab.txt;;
        *) $RUN --artifacts $DIR/$v --workload $w --tokens 32768 --heads 16 --bench 20 2>&1 | grep -E "kernel flamia|forward" >> $OUT/ab.txt;;
      esac
    done
  done
done
python3 bench/ab-summary.py $R/ab/ab.txt > $R/ab/summary-means.txt 2>&1
grep -E "flamia_attention|forward|backward" $R/ab/summary-means.txt | awk '{print $1,$2,$3,$4}'
