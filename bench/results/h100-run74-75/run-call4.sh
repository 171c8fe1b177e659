#!/usr/bin/env bash
# device call 4 of run 74 (same warm machine, carry .fa4/b): the anchors once more with one
# call per pair of events and then with ten, to separate the batching from the drift of a
# session (the command as it was passed to the device, one line there).
source .fa4/b/install-fa4.sh install >/dev/null 2>&1
for n in 1 10; do
  mkdir -p $OUT/rep-batch$n
  OUT=$OUT/rep-batch$n ANCHORS_BATCH=$n ANCHORS_BWD=1 python3 bench/anchors_h200.py > $OUT/rep-batch$n/anchors.log 2>&1
  echo "batch $n rc=$?"
  grep fa4 $OUT/rep-batch$n/anchors.log | grep -v -i warn
done
