#!/usr/bin/env bash
# Runs every lit test and every GoogleTest binary of a configured, built tree
# and ends with one line: "N passed, M failed" (skipped/unsupported lit tests
# are listed separately and count as neither). Exit status 1 if any failed.
set -uo pipefail
BUILD=${1:-build}
SRC="$(cd "$(dirname "$0")/.." && pwd)"
PY="$SRC/.venv/bin/python"
REPORTS="$BUILD/test-reports"
rm -rf "$REPORTS"; mkdir -p "$REPORTS"

status=0
echo "== lit"
/usr/lib/llvm-22/bin/lit -sv --xunit-xml-output "$REPORTS/lit.xml" "$BUILD/test" || status=1

echo "== unit tests"
for bin in $(find "$BUILD/unittests" -type f -perm -u+x -name '*Tests' | sort); do
  name=$(basename "$bin")
  "$bin" --gtest_brief=1 --gtest_output="xml:$REPORTS/$name.xml" || status=1
  [ -s "$REPORTS/$name.xml" ] || { echo "$name produced no report (crashed?)"; echo "<testsuites><testsuite><testcase name=\"$name\"><failure message=\"crashed\"/></testcase></testsuite></testsuites>" > "$REPORTS/$name.xml"; }
done

"$PY" - "$REPORTS" <<'PYEOF'
import glob, sys, xml.etree.ElementTree as ET
passed = failed = skipped = 0
failures = []
for f in sorted(glob.glob(sys.argv[1] + "/*.xml")):
    for case in ET.parse(f).getroot().iter("testcase"):
        name = f"{case.get('classname', '')}.{case.get('name')}"
        if case.find("failure") is not None or case.find("error") is not None:
            failed += 1; failures.append(name)
        elif case.find("skipped") is not None or case.get("result") == "skipped":
            skipped += 1
        else:
            passed += 1
for n in failures:
    print("FAILED:", n)
if skipped:
    print(f"({skipped} skipped: unsupported here)")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
PYEOF
rc=$?
[ $rc -ne 0 ] && status=1
exit $status
