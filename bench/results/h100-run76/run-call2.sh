#!/usr/bin/env bash
# device call 2 of run 76 (same warm machine, carry .fa4/b and .device/tbl76): FA4 installed,
# the table of the shipping sets (.device/tbl76: run 76 X at D = 128, run 73 = -old at D = 64) against the baselines (ten calls per pair of
# events, bench/anchors_h200.py's default since run 74).
set -u
R=$OUT
source .fa4/b/install-fa4.sh install > $R/install.txt 2>&1; tail -3 $R/install.txt
mkdir -p $R/run76/table
echo "== run 76 table"
OUT=$R/run76/table bash bench/device-ab.sh tbl76 table > $R/run76/console-table.txt 2>&1
grep -E "TFLOP|GB/s" $R/run76/console-table.txt | head -70
tar czf $R/run76/table-logs.tgz -C $R/run76 table/fwd table/train 2>/dev/null && rm -rf $R/run76/table/fwd $R/run76/table/train
