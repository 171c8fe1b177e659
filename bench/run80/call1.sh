#!/usr/bin/env bash
# device call 1 of run 80 (carry .fa4/a and .device/run80): FA4's first part staged for the
# next call (skipped with FA4_STAGE=0, carrying .device/run80 only, when no table will follow),
# then run 80: P x 2^8 computed by the softmax itself (the exponent's addend
# 8 - m, one subtraction per row) instead of a multiply per score before P's
# rounding (X) against the shipped sets (X-old, run 78's X): every check of
# bench/device-ab.sh checks against the new reference (its byte comparison with
# X-old must differ in the forward's O and LSE and what follows from them), the
# adversarial softmax scales 2000 and 2e6 on X and X-old, then the A/B of the
# forward and training sets.
set -u
R=$OUT
if [ "${FA4_STAGE:-1}" != 0 ]; then
  bash .fa4/a/install-fa4.sh stage > $R/stage.txt 2>&1; tail -2 $R/stage.txt
fi
mkdir -p $R/run80/checks $R/run80/ab
OUT=$R/run80/checks bash bench/device-ab.sh run80 checks > $R/run80/console-checks.txt 2>&1
(OUT=$R/run80/checks; DIR=.device/run80; source bench/device-common.sh > /dev/null
 SMALL=docs:300,1000,77,129,0,1,2048,640
 for sc in 2000 2e6; do
   for v in f-d128 f-d128-old; do
     step scale$sc-$v $RUN --artifacts $DIR/$v --workload $SMALL --heads 4 --kv-heads 2 --softmax-scale $sc --check --leakcheck
   done
   step scale$sc-t-d128 $RUN --artifacts $DIR/t-d128 --backward --workload $SMALL --heads 4 --kv-heads 2 --softmax-scale $sc --check
 done
 log "failed steps: $fails") > $R/run80/console-adversarial.txt 2>&1
echo "== run 80 checks"; grep -E "FAIL|failed steps|ERROR SUMMARY|RACECHECK SUMMARY" $R/run80/console-checks.txt | sed 's/=== *//' | sort | uniq -c | head -20
echo "identical: $(grep -c ': identical' $R/run80/console-checks.txt) differ: $(grep -c 'DIFFER' $R/run80/console-checks.txt)"
grep -hE "O vs" $R/run80/console-checks.txt | head -4
echo "== adversarial"; grep -E "scale|O vs|LSE vs|FAIL|PASS|rc=" $R/run80/console-adversarial.txt | head -60
tar czf $R/run80/checks-logs.tgz -C $R/run80 checks && rm -rf $R/run80/checks
OUT=$R/run80/ab AB_SETS="f-d128-old f-d128 f-d64-old f-d64 t-d128-old t-d128 t-d64-old t-d64" AB_WORKLOADS="fixed2k lognormal1k" bash bench/device-ab.sh run80 ab > $R/run80/console-ab.txt 2>&1
rm -f $R/run80/ab/summary.txt
python3 bench/ab-summary.py $R/run80/ab/ab.txt > $R/run80/summary-means.txt 2>&1
grep -E "vs " $R/run80/summary-means.txt | awk '{print $1,$2,$3,$4,$5,$NF}'
