#!/usr/bin/env bash
# device call 1 of runs 71/72: stage FA4 part 1, then run 71 (the D = 64 rings at 3, 4, 5 stages)
set -u
bash .fa4/a/install-fa4.sh stage | tee $OUT/stage.txt
R=$OUT
mkdir -p $R/checks $R/ab
(OUT=$R/checks; DIR=.device/run71; source bench/device-common.sh > /dev/null
 SMALL=docs:300,1000,77,129,0,1,2048,640
 for n in s4 s5; do
   step check-t-d64-$n $RUN --artifacts $DIR/t-d64-$n --backward --workload $SMALL --heads 4 --kv-heads 2 --check --leakcheck
   step check-f-d64-$n $RUN --artifacts $DIR/f-d64-$n --workload $SMALL --heads 4 --kv-heads 4 --check --leakcheck
   step outliers-t-d64-$n $RUN --artifacts $DIR/t-d64-$n --backward --workload $SMALL --heads 4 --kv-heads 2 --outliers --check
   for k in t f; do cp -r $DIR/$k-d64-old $DIR/$k-d64-$n-old; done
   compare_dumps $SMALL t-d64-$n f-d64-$n
 done
 step racecheck-t-d64-s5 compute-sanitizer --tool racecheck $RUN --artifacts $DIR/t-d64-s5 --backward --workload docs:200,77 --heads 2 --check --sanitize-friendly
 step racecheck-f-d64-s5 compute-sanitizer --tool racecheck $RUN --artifacts $DIR/f-d64-s5 --workload docs:200,77 --heads 2 --check --sanitize-friendly
 step memcheck-t-d64-s5 compute-sanitizer --tool memcheck $RUN --artifacts $DIR/t-d64-s5 --backward --workload docs:300,200,77 --heads 2 --check --sanitize-friendly
 log "failed steps: $fails") > $R/console-checks.txt 2>&1
echo "== checks"; grep -E "FAIL|DIFFER|failed steps|ERROR SUMMARY|RACECHECK SUMMARY" $R/console-checks.txt | sed 's/=== *//' | sort | uniq -c | head -20
echo "identical: $(grep -c ': identical' $R/console-checks.txt)"
tar czf $R/checks-logs.tgz -C $R checks && rm -rf $R/checks
OUT=$R/ab AB_SETS="f-d64-old f-d64-s4 f-d64-s5 t-d64-old t-d64-s4 t-d64-s5" AB_WORKLOADS="fixed2k lognormal1k" bash bench/device-ab.sh run71 ab > $R/console-ab.txt 2>&1
python3 bench/ab-summary.py $R/ab/ab.txt > $R/summary-means.txt 2>&1
grep -E "flamia_attention|backward  |forward  " $R/summary-means.txt | awk '{print $1,$2,$3,$4,$NF}'
