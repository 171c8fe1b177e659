#!/usr/bin/env bash
# device call 1 of run 76 (carry .fa4/a and .device/run76): FA4's first part staged for the
# next call, then run 76: the forward's P converted from E4M3 to bf16 by a shift and a bf16x2
# multiply (X) against run 73's sets (X-old): every check of bench/device-ab.sh checks plus
# nv-d64 with L3, then the A/B of the forward and training sets.
set -u
R=$OUT
bash .fa4/a/install-fa4.sh stage > $R/stage.txt 2>&1; tail -2 $R/stage.txt
mkdir -p $R/run76/checks $R/run76/ab
OUT=$R/run76/checks bash bench/device-ab.sh run76 checks > $R/run76/console-checks.txt 2>&1
(OUT=$R/run76/checks; DIR=.device/run76; source bench/device-common.sh > /dev/null
 step check-nv-d64 $RUN --artifacts $DIR/nv-d64 --backward --workload docs:300,1000,77,129,0,1,2048,640 --heads 4 --kv-heads 2 --check --leakcheck --l3) >> $R/run76/console-checks.txt 2>&1
echo "== run 76 checks"; grep -E "FAIL|DIFFER|failed steps|ERROR SUMMARY|RACECHECK SUMMARY" $R/run76/console-checks.txt | sed 's/=== *//' | sort | uniq -c | head -20
echo "identical: $(grep -c ': identical' $R/run76/console-checks.txt)"
tar czf $R/run76/checks-logs.tgz -C $R/run76 checks && rm -rf $R/run76/checks
OUT=$R/run76/ab bash bench/device-ab.sh run76 ab > $R/run76/console-ab.txt 2>&1
python3 bench/ab-summary.py $R/run76/ab/ab.txt > $R/run76/summary-means.txt 2>&1
grep -E "vs " $R/run76/summary-means.txt | awk '{print $1,$2,$3,$4,$5,$NF}'
