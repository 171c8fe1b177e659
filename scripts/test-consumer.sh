#!/usr/bin/env bash
# One leg of `make test` (scripts/run-tests.sh): the installed CMake package
# (docs/cmake.md) from outside. Installs BUILD into a fresh prefix, configures
# and builds examples/consumer against it (find_package(Flamia) with only
# Flamia_DIR given), runs it and checks what it prints, and leaves JUnit XML
# in REPORTS/consumer.xml for run-tests.sh's summary: one test case per step
# (install, configure, build, compile, runtime, runtime-cxx, dialect).
#
#   scripts/test-consumer.sh BUILD REPORTS
#
# The runtime is pointed at a missing driver (FLAMIA_LIBCUDA), so the outcome
# is the same on every machine: "CUDA driver not available". Measured on 2
# cores: 9-12 s (install and configure 1 s, build 7-9 s, the runs 2 s).
# FLAMIA_KEEP_CONSUMER=1 keeps the temporary directory (kept anyway on failure).
set -uo pipefail
BUILD=$1
REPORTS=$2
SRC="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="$(cd "$BUILD" && pwd)" || { echo "$0: no build tree $1" >&2; exit 2; }
mkdir -p "$REPORTS"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/flamia-consumer-XXXXXX")
PREFIX="$WORK/prefix"
start=$SECONDS

cases=""
failed=0
# Records one step: name, then a failure message (empty: passed).
record() {
  if [ -n "$2" ]; then
    echo "consumer: $1: FAILED: $2"
    local msg=${2//&/&amp;}; msg=${msg//</&lt;}; msg=${msg//>/&gt;}; msg=${msg//\"/&quot;}
    cases+="<testcase classname=\"consumer\" name=\"$1\"><failure message=\"$msg\"/></testcase>"
    failed=1
  else
    echo "consumer: $1: ok (at $((SECONDS - start)) s)"
    cases+="<testcase classname=\"consumer\" name=\"$1\"/>"
  fi
}
finish() {
  printf '<testsuites><testsuite name="consumer">%s</testsuite></testsuites>\n' "$cases" > "$REPORTS/consumer.xml"
  echo "== consumer: $((SECONDS - start)) s"
  if [ $failed = 0 ] && [ "${FLAMIA_KEEP_CONSUMER:-0}" != 1 ]; then
    rm -rf "$WORK"
  else
    echo "consumer: logs and build in $WORK"
  fi
  exit $failed
}
# Not run: the steps after a failed one.
skip_rest() {
  for name in "$@"; do
    cases+="<testcase classname=\"consumer\" name=\"$name\"><failure message=\"not run: an earlier step failed\"/></testcase>"
  done
  finish
}

# The example needs the compiler and the runtime: without them, skipped.
for option in FLAMIA_ENABLE_COMPILER FLAMIA_ENABLE_RUNTIME; do
  if grep -q "^$option:BOOL=OFF" "$BUILD/CMakeCache.txt" 2>/dev/null; then
    echo "== consumer: skipped ($option is OFF in $BUILD)"
    printf '<testsuites><testsuite name="consumer"><testcase classname="consumer" name="consumer"><skipped message="%s is OFF"/></testcase></testsuite></testsuites>\n' "$option" > "$REPORTS/consumer.xml"
    rm -rf "$WORK"
    exit 0
  fi
done

echo "== consumer: install $BUILD into $PREFIX, build examples/consumer against it"
if cmake --install "$BUILD" --prefix "$PREFIX" > "$WORK/install.log" 2>&1 &&
   [ -f "$PREFIX/lib/cmake/Flamia/FlamiaConfig.cmake" ] &&
   [ -f "$PREFIX/lib/cmake/Flamia/FlamiaConfigVersion.cmake" ] &&
   [ -f "$PREFIX/include/flamia/Support/Version.h" ] &&
   [ -f "$PREFIX/include/flamia/CAPI/Compiler.h" ] &&
   "$PREFIX/bin/flamia-compile" --version > "$WORK/version.txt" 2>&1; then
  record install ""
else
  tail -n 20 "$WORK/install.log"
  record install "cmake --install failed or left out the package, a header or a tool"
  skip_rest configure build compile runtime runtime-cxx dialect
fi

# Only Flamia_DIR: the package finds MLIR (and cuda.h) itself. MLIR_DIR from
# the environment, if set, overrides the MLIR it was built with.
extra=()
[ -n "${MLIR_DIR:-}" ] && extra+=("-DMLIR_DIR=$MLIR_DIR")
generator=()
command -v ninja > /dev/null && generator=(-G Ninja)
if cmake -S "$SRC/examples/consumer" -B "$WORK/build" "${generator[@]}" \
     -DCMAKE_BUILD_TYPE=Release -DFlamia_DIR="$PREFIX/lib/cmake/Flamia" \
     "${extra[@]}" > "$WORK/configure.log" 2>&1; then
  record configure ""
else
  tail -n 20 "$WORK/configure.log"
  record configure "find_package(Flamia) failed (configure.log)"
  skip_rest build compile runtime runtime-cxx dialect
fi

if cmake --build "$WORK/build" -j "${JOBS:-$(nproc)}" > "$WORK/build.log" 2>&1; then
  record build ""
else
  tail -n 30 "$WORK/build.log"
  record build "examples/consumer did not build against the installed package (build.log)"
  skip_rest compile runtime runtime-cxx dialect
fi

version=$(sed -n 's/^#define FLAMIA_VERSION_STRING "\(.*\)"$/\1/p' "$PREFIX/include/flamia/Support/Version.h")
FLAMIA_LIBCUDA=/nonexistent/libcuda.so.1 "$WORK/build/flamia-consumer" "$WORK/out" > "$WORK/run.txt" 2>&1
rc=$?
cat "$WORK/run.txt"
# Cubins when ptxas is there (what the compiler would find), PTX alone else.
if { [ -n "${FLAMIA_PTXAS:-}" ] && [ -x "$FLAMIA_PTXAS" ]; } || [ -x /usr/local/cuda/bin/ptxas ] || command -v ptxas > /dev/null; then
  kind=cubin
else
  kind="PTX only"
fi
problem=""
grep -q "^c++ compile: 2 kernels for sm_90a ($kind) in " "$WORK/run.txt" || problem="no 'c++ compile: 2 kernels for sm_90a ($kind)'"
grep -q "^c compile: flamia $version wrote .* (reference $version)$" "$WORK/run.txt" || problem="$problem; no 'c compile: flamia $version'"
grep -q "^c compile, head dim 96: status 1: head dim 96 is not implemented by the kernels" "$WORK/run.txt" || problem="$problem; the bad head dim was not named"
cmp -s "$WORK/out/c/manifest.json" "$WORK/out/cxx/manifest.json" || problem="$problem; the C and C++ APIs wrote different manifests"
record compile "${problem#; }"

if [ "$kind" = cubin ]; then
  want="^runtime: status 2: CUDA driver not available: cannot load /nonexistent/libcuda.so.1"
else
  want="^runtime: skipped: no ptxas"
fi
if [ $rc = 0 ] && grep -q "$want" "$WORK/run.txt"; then
  record runtime ""
else
  record runtime "flamia-consumer exited $rc; expected a line matching '$want'"
fi

# The C++ runtime (cuda.h found by the package) reads the same artifacts.
if [ "$kind" = cubin ]; then
  FLAMIA_LIBCUDA=/nonexistent/libcuda.so.1 "$WORK/build/flamia-consumer-runtime" "$WORK/out/cxx" > "$WORK/runtime.txt" 2>&1
  rc=$?
  cat "$WORK/runtime.txt"
  if [ $rc = 0 ] && grep -q "^runtime c++: manifest for sm_90a, 2 kernels$" "$WORK/runtime.txt" &&
     grep -q "^runtime c++: driver: CUDA driver not available: cannot load /nonexistent/libcuda.so.1" "$WORK/runtime.txt"; then
    record runtime-cxx ""
  else
    record runtime-cxx "flamia-consumer-runtime exited $rc or did not read the manifest / name the missing driver"
  fi
else
  echo "consumer: runtime-cxx: skipped (no ptxas: no cubins to read)"
  cases+="<testcase classname=\"consumer\" name=\"runtime-cxx\"><skipped message=\"no ptxas\"/></testcase>"
fi

if "$WORK/build/flamia-consumer-dialect" > "$WORK/dialect.txt" 2>&1 &&
   grep -q "^dialect: flamia with [1-9][0-9]* ops$" "$WORK/dialect.txt"; then
  record dialect ""
else
  cat "$WORK/dialect.txt"
  record dialect "flamia-consumer-dialect did not load the dialect"
fi
finish
