#!/usr/bin/env bash
# device call 2 of run 74 (same warm machine, carry .fa4/b and .device/tbl74): FA4 installed,
# the table of this build's sets (.device/tbl74) against the baselines, whose anchors time one
# call per pair of events (ANCHORS_BATCH=1, every earlier run's method).
set -u
R=$OUT
source .fa4/b/install-fa4.sh install > $R/install.txt 2>&1; cat $R/install.txt
mkdir -p $R/run74/table
echo "== run 74 table"
OUT=$R/run74/table bash bench/device-ab.sh tbl74 table > $R/run74/console-table.txt 2>&1
grep -E "TFLOP|GB/s" $R/run74/console-table.txt | head -60
tar czf $R/run74/table-logs.tgz -C $R/run74 table/fwd table/train 2>/dev/null && rm -rf $R/run74/table/fwd $R/run74/table/train
