#!/usr/bin/env bash
# On the GPU machine: recipe nvfp4-mixed's quantizer on adversarial inputs
# (bench/nvfp4-adversarial-inputs.py: every UE4M3 scale code at and next to
# amax = 6 s, elements on and next to every E2M1 rounding boundary, +-0,
# saturation, subnormals; then Inf and NaN groups), every copy bit for bit
# with flamia-run --check; and the Python op's CUDA forward for the recipe
# (python/tests/test_op_cuda.py -k nvfp4). Artifacts: .device/nv-h2d128
# (bench/compile-nvfp4-artifacts.sh); Python kernel sets in
# .device/py-kernels (python -m flamia.precompile --recipe nvfp4-mixed) and
# pytest's wheels in .device/wheels. Logs go to $OUT.
set -uo pipefail
OUT=${OUT:-$PWD/out/h200-nvfp4-adversarial}
mkdir -p "$OUT"
B=${FLAMIA_GPU_BUILD:-$PWD/build-gpu}
nvidia-smi --query-gpu=name,driver_version --format=csv > "$OUT/gpu.txt"
python -c "import torch; print('torch', torch.__version__)" >> "$OUT/gpu.txt"
if [ ! -f $B/build.ninja ]; then
  cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLAMIA_ENABLE_COMPILER=OFF > "$OUT/cmake.log" 2>&1 || { tail -30 "$OUT/cmake.log"; exit 1; }
fi
ninja -C $B flamia-run flamia_reference flamia_runtime flamia-ref > "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
RUN=$B/bin/flamia-run
for kind in finite nonfinite; do
  d=$OUT/inputs-$kind; mkdir -p $d
  python bench/nvfp4-adversarial-inputs.py $d $([ $kind = nonfinite ] && echo --nonfinite) | tee "$OUT/inputs-$kind.txt"
  $RUN --artifacts .device/nv-h2d128 --q $d/q.npy --k $d/k.npy --v $d/v.npy --cu-seqlens $d/cu.npy --check > "$OUT/adversarial-$kind.log" 2>&1
  echo "adversarial-$kind: rc=$?" | tee -a "$OUT/summary.txt"
  grep -E "_pt|_deq|_tb|O vs|LSE vs|checks failed" "$OUT/adversarial-$kind.log"
  rm -rf $d
done
python -m pip install -q --no-index --find-links .device/wheels pytest > "$OUT/pip.log" 2>&1 || tail "$OUT/pip.log"
export FLAMIA_LIBRARY_DIR=$B/lib FLAMIA_TOOLS_DIR=$B/bin FLAMIA_KERNEL_DIR=$PWD/.device/py-kernels
export FLAMIA_CACHE_DIR=$OUT/cache PYTHONPATH=$PWD/python
( cd python && python -m pytest -v -p no:cacheprovider -p no:logging tests/test_op_cuda.py -k nvfp4 ) > "$OUT/pytest-nvfp4.log" 2>&1
echo "pytest-nvfp4: rc=$?" | tee -a "$OUT/summary.txt"
tail -8 "$OUT/pytest-nvfp4.log"
rm -rf "$OUT/cache"
