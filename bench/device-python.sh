#!/usr/bin/env bash
# On the GPU machine: the Python op's CUDA tests (python/tests, the CPU ones
# too) and bench/python-op.py (overhead per call against the raw C API, CUDA
# graph capture). Needs, from the compiler machine: kernel sets in
# .device/py-kernels (python -m flamia.precompile, see docs/python.md) and
# pytest's wheels in .device/wheels (pip download pytest -d .device/wheels).
# Logs go to $OUT.
set -uo pipefail
OUT=${OUT:-$PWD/out/h200-python}
mkdir -p "$OUT"
B=${FLAMIA_GPU_BUILD:-$PWD/build-gpu}
nvidia-smi --query-gpu=name,driver_version --format=csv > "$OUT/gpu.txt"
python -c "import torch; print('torch', torch.__version__)" | tee -a "$OUT/gpu.txt"
if [ ! -f $B/build.ninja ]; then
  cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLAMIA_ENABLE_COMPILER=OFF > "$OUT/cmake.log" 2>&1 || { tail -30 "$OUT/cmake.log"; exit 1; }
fi
ninja -C $B flamia_reference flamia_runtime flamia-ref > "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
python -m pip install -q --no-index --find-links .device/wheels pytest > "$OUT/pip.log" 2>&1 || { tail "$OUT/pip.log"; exit 1; }
export FLAMIA_LIBRARY_DIR=$B/lib FLAMIA_TOOLS_DIR=$B/bin FLAMIA_KERNEL_DIR=$PWD/.device/py-kernels
export FLAMIA_CACHE_DIR=$OUT/cache PYTHONPATH=$PWD/python
( cd python && python -m pytest -v -p no:cacheprovider -p no:logging tests ) > "$OUT/pytest.log" 2>&1
echo "pytest rc=$?" | tee -a "$OUT/summary.txt"
tail -25 "$OUT/pytest.log"
OUT=$OUT python bench/python-op.py 2>&1 | tee "$OUT/python-op.log"
