#!/usr/bin/env bash
# device call 2 of run 78 (same warm machine, carry .fa4/b and .device/run78): FA4 installed,
# the table of the new shipping sets (.device/run78: X = this build at both head dims) against
# the baselines (ten calls per pair of events, bench/anchors_h200.py's default since run 74).
set -u
R=$OUT
source .fa4/b/install-fa4.sh install > $R/install.txt 2>&1; tail -3 $R/install.txt
mkdir -p $R/run78/table
echo "== run 78 table"
OUT=$R/run78/table bash bench/device-ab.sh run78 table > $R/run78/console-table.txt 2>&1
grep -E "TFLOP|GB/s" $R/run78/console-table.txt | head -70
tar czf $R/run78/table-logs.tgz -C $R/run78 table/fwd table/train 2>/dev/null && rm -rf $R/run78/table/fwd $R/run78/table/train
