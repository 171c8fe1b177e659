#!/usr/bin/env bash
# One extra leg of `make test` (scripts/run-tests.sh): configures and builds
# the MLIR-free half of FLAMIA (FLAMIA_ENABLE_COMPILER=OFF: Support, Analysis,
# Numerics, Schedule, Target, Runtime with the fake CUDA driver, CAPI,
# flamia-ref/-desc/-run and their unit tests) in its own tree, runs its unit
# tests and the plain tools' lit tests (test-plain/), and leaves JUnit XML in
# REPORTS, named <leg>-*.xml, for run-tests.sh's summary.
#
#   scripts/sanitizer-leg.sh asan  BUILD REPORTS   # ASan + UBSan, -O1 -g, in BUILD-asan;
#                                                  # also runs the fuzz targets (fuzz/)
#   scripts/sanitizer-leg.sh debug BUILD REPORTS   # -O0 -g (CMAKE_BUILD_TYPE=Debug), in BUILD-debug
#
# Every sanitizer report aborts its process (-fno-sanitize-recover=all), so
# it fails the test that triggered it. A failed configure or build is
# reported as one failed test, "<leg>.build". ccache (if installed) makes a
# rebuild with warm cache take seconds; see docs in fuzz/README.md.
set -uo pipefail
LEG=$1
BUILD=$2
REPORTS=$3
SRC="$(cd "$(dirname "$0")/.." && pwd)"
LIT=/usr/lib/llvm-22/bin/lit
JOBS=${JOBS:-$(nproc)}
# Mutants per fuzz target: a few seconds each under ASan on one core.
FUZZ_RUNS=${FLAMIA_FUZZ_RUNS:-3000}

case "$LEG" in
  asan)
    DIR="$BUILD-asan"
    CMAKE_ARGS=(-DCMAKE_BUILD_TYPE=RelWithDebInfo
                "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g"
                -DFLAMIA_SANITIZE=address,undefined -DFLAMIA_ENABLE_FUZZERS=ON) ;;
  debug)
    DIR="$BUILD-debug"
    CMAKE_ARGS=(-DCMAKE_BUILD_TYPE=Debug -DFLAMIA_SANITIZE= -DFLAMIA_ENABLE_FUZZERS=OFF) ;;
  *) echo "usage: $0 asan|debug BUILD REPORTS" >&2; exit 2 ;;
esac

# One JUnit file holding one test case, for results that are not GoogleTest
# or lit (the build itself, the fuzz targets).
junit_case() { # file classname name failure-message-or-empty
  if [ -n "$4" ]; then
    printf '<testsuites><testsuite name="%s"><testcase classname="%s" name="%s"><failure message="%s"/></testcase></testsuite></testsuites>\n' "$2" "$2" "$3" "$4" > "$1"
  else
    printf '<testsuites><testsuite name="%s"><testcase classname="%s" name="%s"/></testsuite></testsuites>\n' "$2" "$2" "$3" > "$1"
  fi
}

start=$SECONDS
echo "== $LEG leg: configure and build $DIR"
if ! { cmake -S "$SRC" -B "$DIR" -G Ninja -DFLAMIA_ENABLE_COMPILER=OFF "${CMAKE_ARGS[@]}" > "$DIR.configure.log" 2>&1 &&
       ninja -C "$DIR" -j "$JOBS"; }; then
  [ -f "$DIR.configure.log" ] && tail -n 20 "$DIR.configure.log"
  junit_case "$REPORTS/$LEG-build.xml" "$LEG" build "configure or build failed"
  exit 1
fi
junit_case "$REPORTS/$LEG-build.xml" "$LEG" build ""
built=$SECONDS

# Leaks are errors too; a report names its stack. verify_asan_link_order=0:
# test/Runtime/capi-shared-library.test links a plain C program against the
# instrumented libflamia_runtime.so, which then brings the ASan runtime.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:check_initialization_order=1:strict_init_order=1:detect_stack_use_after_return=1:verify_asan_link_order=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
status=0

echo "== $LEG leg: unit tests"
for bin in $(find "$DIR/unittests" -type f -perm -u+x -name '*Tests' | sort); do
  name=$(basename "$bin")
  report="$REPORTS/$LEG-$name.xml"
  "$bin" --gtest_brief=1 --gtest_output="xml:$report" || status=1
  [ -s "$report" ] || { echo "$LEG $name produced no report (crashed?)"; junit_case "$report" "$LEG.$name" "$name" "crashed"; }
done

echo "== $LEG leg: lit tests of the plain tools"
if [ -f "$DIR/test-plain/lit.site.cfg.py" ]; then
  "$LIT" -sv --xunit-xml-output "$REPORTS/$LEG-lit.xml" "$DIR/test-plain" || status=1
else
  junit_case "$REPORTS/$LEG-lit.xml" "$LEG" lit "test-plain not configured (FileCheck missing?)"
  status=1
fi

if [ "$LEG" = asan ]; then
  echo "== $LEG leg: fuzz targets ($FUZZ_RUNS mutants each, seed 1)"
  declare -A CORPUS=(
    [npy]="$SRC/fuzz/corpus/npy $SRC/test/Schedule/Inputs"
    [expression]="$SRC/fuzz/corpus/expression"
    [manifest]="$SRC/fuzz/corpus/manifest $SRC/test/Runtime/Inputs/fake-artifacts/manifest.json"
    [attention-args]="$SRC/fuzz/corpus/attention-args"
  )
  artifacts="$DIR/fuzz-artifacts"; mkdir -p "$artifacts"
  for target in npy expression manifest attention-args; do
    bin="$DIR/bin/fuzz-$target"
    report="$REPORTS/$LEG-fuzz-$target.xml"
    if [ ! -x "$bin" ]; then
      if [ "$target" != npy ] && grep -q '^FLAMIA_ENABLE_RUNTIME:BOOL=OFF' "$DIR/CMakeCache.txt"; then
        # No cuda.h: no runtime to fuzz (counted as skipped, not passed).
        printf '<testsuites><testsuite name="%s"><testcase classname="%s" name="%s"><skipped message="no runtime (cuda.h)"/></testcase></testsuite></testsuites>\n' "$LEG.fuzz" "$LEG.fuzz" "$target" > "$report"
        continue
      fi
      junit_case "$report" "$LEG.fuzz" "$target" "fuzz-$target was not built"; status=1; continue
    fi
    # shellcheck disable=SC2086 # the corpus lists are word lists
    if timeout 600 "$bin" -runs="$FUZZ_RUNS" -seed=1 -timeout=30 \
         -artifact_prefix="$artifacts/$target-" ${CORPUS[$target]}; then
      junit_case "$report" "$LEG.fuzz" "$target" ""
    else
      junit_case "$report" "$LEG.fuzz" "$target" "crash, sanitizer report or hang; input saved under $artifacts"
      status=1
    fi
  done
fi
echo "== $LEG leg: build $((built - start)) s, tests $((SECONDS - built)) s"
exit $status
