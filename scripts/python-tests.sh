#!/usr/bin/env bash
# The Python package's leg of `make test` (docs/python.md): builds the wheel
# with pip (scikit-build-core over the project's CMake, without the compiler,
# which keeps it to about a minute on 2 cores), installs it into .venv next
# to PyTorch and pytest (installed from PyPI when missing: about 3 minutes
# the first time), and runs python/tests against the installed package (the
# CPU tests; the CUDA ones skip without a GPU). JUnit XML to REPORTS/python.xml.
#   scripts/python-tests.sh BUILD REPORTS
set -uo pipefail
BUILD=$(cd "${1:-build}" && pwd)
REPORTS=$(cd "${2:-$BUILD/test-reports}" && pwd)
SRC="$(cd "$(dirname "$0")/.." && pwd)"
PY="$SRC/.venv/bin/python"
echo "== python (wheel, then python/tests on the installed package)"
fail() { # message: a failing test case in the report, so the summary counts it
  echo "python-tests: $1" >&2
  printf '<testsuites><testsuite name="python"><testcase classname="python" name="%s"><failure message="%s"/></testcase></testsuite></testsuites>\n' \
    "${2:-setup}" "$1" > "$REPORTS/python.xml"
  exit 1
}
if ! "$PY" -c "import torch, pytest, numpy" 2>/dev/null; then
  echo "python-tests: installing torch, pytest and numpy into .venv"
  "$PY" -m pip install --quiet --disable-pip-version-check torch pytest numpy ||
    fail "pip install torch pytest numpy failed"
fi
WHEELS="$BUILD/python-wheel"
rm -rf "$WHEELS/dist"; mkdir -p "$WHEELS"
t0=$(date +%s)
"$PY" -m pip wheel --quiet --disable-pip-version-check --no-deps "$SRC" \
  -w "$WHEELS/dist" -Cbuild-dir="$WHEELS/build" \
  -Ccmake.define.FLAMIA_ENABLE_COMPILER=OFF > "$WHEELS/build.log" 2>&1 ||
  { tail -30 "$WHEELS/build.log"; fail "pip wheel failed (log: $WHEELS/build.log)" wheel; }
"$PY" -m pip install --quiet --disable-pip-version-check --no-deps \
  --force-reinstall "$WHEELS"/dist/flamia-*.whl || fail "pip install of the wheel failed" install
echo "python-tests: wheel built and installed in $(( $(date +%s) - t0 )) s"
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
# From outside the checkout, so that `import flamia` is the installed one.
cd "$cache" && env -u FLAMIA_LIBRARY_DIR -u FLAMIA_KERNEL_DIR \
  FLAMIA_CACHE_DIR="$cache/kernels" FLAMIA_TOOLS_DIR="$BUILD/bin" \
  FLAMIA_COMPILE="$BUILD/bin/flamia-compile" FLAMIA_EXPECT_INSTALLED=1 \
  "$PY" -m pytest -q -p no:cacheprovider --junitxml="$REPORTS/python.xml" \
  "$SRC/python/tests"
