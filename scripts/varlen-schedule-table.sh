#!/usr/bin/env bash
# Prints the "Varlen schedule (simulated)" table of docs/performance.md:
# makespan against the lower bound max(total work / SMs, largest item) of the
# LPT schedule, and of the document-order baseline, for the standard
# workloads. Usage: scripts/varlen-schedule-table.sh [BUILD_DIR] [extra
# flamia-ref schedule options, e.g. --heads 4 --sms 148]
set -euo pipefail
BUILD=${1:-build}
shift || true
REF="$BUILD/bin/flamia-ref"
[ -x "$REF" ] || { echo "missing $REF: build it first (ninja -C $BUILD flamia-ref)" >&2; exit 1; }

field() { sed -n "s/^$1: //p"; }

echo "| target | workload | docs | items | total work | largest item | lower bound | LPT makespan | LPT ratio | doc-order makespan | doc-order ratio |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for target in sm_90a sm_100a; do
  for workload in lognormal1k fixed2k single32k tiny34; do
    args=(schedule --workload "$workload" --heads 16 --head-dim 128 --sms 132 --causal --target "$target" "$@")
    lpt=$("$REF" "${args[@]}")
    doc=$("$REF" "${args[@]}" --order document)
    docs=$(echo "$lpt" | field documents | cut -d' ' -f1)
    printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n" \
      "$target" "$workload" "$docs" "$(echo "$lpt" | field items)" \
      "$(echo "$lpt" | field 'total work')" "$(echo "$lpt" | field 'largest item')" \
      "$(echo "$lpt" | field 'lower bound')" "$(echo "$lpt" | field makespan)" \
      "$(echo "$lpt" | field ratio)" "$(echo "$doc" | field makespan)" \
      "$(echo "$doc" | field ratio)"
  done
done
