#!/usr/bin/env bash
# device call of run 73: the forward's D = 64 ring at 4 stages, the D = 64 checks and the A/B
# (the D = 128 sets' cubins are byte-identical to -old's, so the device budget went to D = 64 only)
set -u
R=$OUT
mkdir -p $R/checks $R/ab
(OUT=$R/checks; DIR=.device/run73; source bench/device-common.sh > /dev/null
 SMALL=docs:300,1000,77,129,0,1,2048,640
 step check-f-d64 $RUN --artifacts $DIR/f-d64 --workload $SMALL --heads 4 --kv-heads 4 --check --leakcheck
 step check-fst-d64 $RUN --artifacts $DIR/fst-d64 --workload $SMALL --heads 4 --kv-heads 2 --check --leakcheck
 step check-t-d64 $RUN --artifacts $DIR/t-d64 --backward --workload $SMALL --heads 4 --kv-heads 4 --check --leakcheck
 step check-st-d64 $RUN --artifacts $DIR/st-d64 --backward --workload $SMALL --heads 4 --kv-heads 2 --check --leakcheck --l3
 step check-nv-d64 $RUN --artifacts $DIR/nv-d64 --backward --workload $SMALL --heads 4 --kv-heads 2 --check --leakcheck --l3
 step outliers-t-d64 $RUN --artifacts $DIR/t-d64 --backward --workload $SMALL --heads 4 --kv-heads 2 --outliers --check
 compare_dumps $SMALL f-d64 fst-d64 t-d64
 step memcheck-f-d64 compute-sanitizer --tool memcheck $RUN --artifacts $DIR/f-d64 --workload docs:300,200,77 --heads 2 --check --sanitize-friendly
 step racecheck-f-d64 compute-sanitizer --tool racecheck $RUN --artifacts $DIR/f-d64 --workload docs:200,77 --heads 2 --check --sanitize-friendly
 log "failed steps: $fails") > $R/console-checks.txt 2>&1
echo "== checks"; grep -E "FAIL|DIFFER|failed steps|ERROR SUMMARY|RACECHECK SUMMARY" $R/console-checks.txt | sed 's/=== *//' | sort | uniq -c | head -20
echo "identical: $(grep -c ': identical' $R/console-checks.txt)"
tar czf $R/checks-logs.tgz -C $R checks && rm -rf $R/checks
OUT=$R/ab AB_SETS="f-d64-old f-d64 t-d64-old t-d64" AB_WORKLOADS="fixed2k lognormal1k" bash bench/device-ab.sh run73 ab > $R/console-ab.txt 2>&1
python3 bench/ab-summary.py $R/ab/ab.txt > $R/summary-means.txt 2>&1
grep -E "vs " $R/summary-means.txt | awk '{print $1,$2,$3,$4,$5,$NF}'
