#!/usr/bin/env bash
# Installs everything FLAMIA's build and tests need. Idempotent: a second run
# changes nothing and takes about a second.
#
#   apt:  LLVM/MLIR 22 (Debian's packages), lit/FileCheck, ninja, GoogleTest, ccache
#   pip:  numpy and ml_dtypes in .venv/ (independent numerics checks in the tests)
#   CUDA: only checked. ptxas comes from the CUDA toolkit, never from apt; it is
#         looked for in $FLAMIA_PTXAS, /usr/local/cuda/bin and $PATH.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
              cmake ninja-build g++ libgtest-dev ccache python3-venv)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || { echo "install-deps: need root (or sudo) to apt-get install ${missing[*]}" >&2; exit 1; }
    SUDO=sudo
  fi
  export DEBIAN_FRONTEND=noninteractive
  if ! $SUDO apt-get install -y --no-install-recommends "${missing[@]}"; then
    $SUDO apt-get update
    $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
  fi
fi

for tool in /usr/lib/llvm-22/bin/lit /usr/lib/llvm-22/bin/FileCheck /usr/lib/llvm-22/bin/mlir-tblgen \
            /usr/lib/llvm-22/lib/cmake/mlir/MLIRConfig.cmake; do
  [ -e "$tool" ] || { echo "install-deps: $tool is missing after installing LLVM/MLIR 22" >&2; exit 1; }
done

# Python with numpy + ml_dtypes for the independent checks (tests/*.py).
PY=${FLAMIA_PYTHON:-python3}
if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c "import numpy, ml_dtypes" 2>/dev/null; then
  echo "install-deps: creating .venv with numpy and ml_dtypes"
  rm -rf .venv
  "$PY" -m venv .venv
  .venv/bin/python -m pip install --quiet --disable-pip-version-check numpy ml_dtypes
fi

# ptxas: required only for the PTX/cubin tests and `make demo`'s last step.
ptxas="$(scripts/find-ptxas.sh || true)"
if [ -n "$ptxas" ]; then
  echo "install-deps: ptxas: $ptxas ($("$ptxas" --version | tail -n 1))"
else
  echo "install-deps: WARNING: CUDA's ptxas was not found (looked in \$FLAMIA_PTXAS, /usr/local/cuda/bin, \$PATH)." >&2
  echo "install-deps: tests marked REQUIRES: ptxas will be skipped; install the CUDA 13 toolkit or set FLAMIA_PTXAS." >&2
fi
echo "install-deps: ok"
