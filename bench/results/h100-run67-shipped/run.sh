#!/usr/bin/env bash
# device call: the shipped state (run 67 sets) checked against ae65e6e, and a short A/B
set -u
R=$OUT
mkdir -p $R/checks $R/ab
OUT=$R/checks bash bench/device-ab.sh run67 checks > $R/console-checks.txt 2>&1
echo "== checks"; grep -E "FAIL|DIFFER|failed steps|ERROR SUMMARY|RACECHECK SUMMARY" $R/console-checks.txt | sed 's/=== *//' | sort | uniq -c | head -20
echo "identical: $(grep -c ': identical' $R/console-checks.txt)"
tar czf $R/checks-logs.tgz -C $R checks && rm -rf $R/checks
OUT=$R/ab; DIR=.device/run67; source bench/device-common.sh > /dev/null
for round in 1 2; do
  for v in t-d128-old t-d128-r65 t-d128 t-d64-old t-d64-r65 t-d64; do
    for w in fixed2k lognormal1k; do
      echo "== round $round $v $w" >> $OUT/ab.txt
      $RUN --artifacts $DIR/$v --backward --workload $w --tokens 32768 --heads 16 --bench 20 2>&1 | grep -E "kernel flamia|forward|backward|both" >> $OUT/ab.txt
    done
  done
done
python3 bench/ab-summary.py $R/ab/ab.txt > $R/ab/summary-means.txt 2>&1
grep -E "flamia_attention_d|backward" $R/ab/summary-means.txt | awk '{print $1,$2,$3,$4,$NF}'
