#!/usr/bin/env bash
# device call of run 70: rotation and turns at D = 64 (run70 sets)
set -u
R=$OUT
mkdir -p $R/checks $R/ab
(OUT=$R/checks; DIR=.device/run70; source bench/device-common.sh > /dev/null
 SMALL=docs:300,1000,77,129,0,1,2048,640
 for v in t-d64 t-d64-pp; do
   step check-$v $RUN --artifacts $DIR/$v --backward --workload $SMALL --heads 4 --kv-heads 4 --check --leakcheck
 done
 step check-t-d64-gqa $RUN --artifacts $DIR/t-d64 --backward --workload $SMALL --heads 4 --kv-heads 2 --check --leakcheck
 step check-st-d64 $RUN --artifacts $DIR/st-d64 --backward --workload $SMALL --heads 4 --kv-heads 2 --check --leakcheck --l3
 step outliers-t-d64 $RUN --artifacts $DIR/t-d64 --backward --workload $SMALL --heads 4 --kv-heads 2 --outliers --check
 compare_dumps $SMALL t-d64
 step racecheck-t-d64 compute-sanitizer --tool racecheck $RUN --artifacts $DIR/t-d64 --backward --workload docs:200,77 --heads 2 --check --sanitize-friendly
 log "failed steps: $fails") > $R/console-checks.txt 2>&1
echo "== checks"; grep -E "FAIL|DIFFER|failed steps|ERROR SUMMARY|RACECHECK SUMMARY" $R/console-checks.txt | sed 's/=== *//' | sort | uniq -c | head -20
echo "identical: $(grep -c ': identical' $R/console-checks.txt)"
tar czf $R/checks-logs.tgz -C $R checks && rm -rf $R/checks
OUT=$R/ab AB_SETS="t-d64-old t-d64-rot t-d64-pp t-d64" AB_WORKLOADS="fixed2k lognormal1k" bash bench/device-ab.sh run70 ab > $R/console-ab.txt 2>&1
python3 bench/ab-summary.py $R/ab/ab.txt > $R/summary-means.txt 2>&1
grep -E "flamia_attention_d|backward" $R/summary-means.txt | awk '{print $1,$2,$3,$4,$NF}'
