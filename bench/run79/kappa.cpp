// Run 79's scoreRoundingExponent (include/flamia/Validation/Gradients.h, the
// bound the gradient rows of flamia-run --check print above 1/16) for the
// batch flamia-run made there (seed 1, docs 300,1000,77,129,0,1,2048,640:
// T = 4195, Hq 4, Hkv 2, D 128), at each softmax scale of the run; on the CPU.
// Build and run from the checkout, after make build:
//   g++ -std=c++17 -O2 -Iinclude -Ibuild/include bench/run79/kappa.cpp \
//     build/lib/Validation/libFlamiaValidation.a \
//     build/lib/Runtime/libFlamiaRuntime.a build/lib/Runtime/libFlamiaManifest.a \
//     build/lib/Numerics/libFlamiaNumerics.a \
//     build/lib/Schedule/libFlamiaSchedule.a \
//     build/lib/Support/libFlamiaSupport.a -lpthread -o /tmp/kappa && /tmp/kappa
#include "flamia/Numerics/Formats.h"
#include "flamia/Numerics/SyntheticInputs.h"
#include "flamia/Validation/Gradients.h"

#include <cstdio>
#include <vector>

int main() {
  const int64_t T = 4195, Hq = 4, Hkv = 2, D = 128;
  std::vector<uint16_t> q, k, v;
  flamia::numerics::makePackedBf16Inputs(T, Hq, Hkv, D, 1, false, q, k, v);
  auto widen = [](const std::vector<uint16_t> &x) {
    std::vector<float> out(x.size());
    for (size_t i = 0; i < x.size(); ++i)
      out[i] = flamia::numerics::bf16ToFloat(x[i]);
    return out;
  };
  std::vector<float> qf = widen(q), kf = widen(k);
  for (float scale : {0.0883883476f, 20.0f, 200.0f, 2000.0f, 2e4f, 2e5f, 2e6f})
    std::printf("softmax scale %g: scoreRoundingExponent %.3g\n", scale,
                flamia::validation::device::scoreRoundingExponent(
                    qf.data(), T * Hq, kf.data(), T * Hkv, D, scale));
}
