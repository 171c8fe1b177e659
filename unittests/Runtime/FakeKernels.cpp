//===- FakeKernels.cpp - Host "kernels" for the fake CUDA driver ----------===//
//
// Two kernels the fake driver runs on the host when a launch names them, so
// that flamia-run's checks can be exercised end to end without a GPU
// (test/Runtime/Inputs/fake-artifacts declares them):
//
//   fake_quantize(q, k, v, cu_seqlens, T, Hq, Hkv, D, num_docs,
//                 q_pt, q_pt_scales, q_tb, q_tb_scales, k_tb, k_tb_scales,
//                 v_tb, v_tb_scales, q_deq, k_deq, v_deq)
//       the recipe's copies, with the numerics quantizer;
//   fake_attention_fwd(tma_q_deq, q, k, v, cu_seqlens, o, lse, items,
//                      num_items, counter, softmax_scale, T, Hq, Hkv, D,
//                      num_docs)
//       O and LSE with the CPU reference of recipe $FAKE_CUDA_FWD_RECIPE
//       (default mxfp8).
//
// and, for a training step (test/Runtime/Inputs/fake-training-artifacts):
//
//   fake_quantize_grad(grad_o, o, cu_seqlens, T, Hq, D, num_docs, do_tb,
//                      do_tb_scales, do_deq, delta)
//       grad_o's 32x32 copies (the numerics quantizer) and delta = fl32 of
//       the exact rowsum(dO * O);
//   fake_attention_bwd(q, k, v, grad_o, o, lse, cu_seqlens, kv_items,
//                      num_kv_items, counter, dq, dk, dv, softmax_scale, T,
//                      Hq, Hkv, D, num_docs)
//       dq (f32), dk, dv (bf16) with the CPU reference's backward of recipe
//       $FAKE_CUDA_BWD_RECIPE (default mxfp8) fed the o and lse buffers.
//
// $FAKE_CUDA_CORRUPT=<copy name> flips one byte of that copy after
// quantization (to see flamia-run's bit-for-bit checks fail);
// $FAKE_CUDA_BWD_LEAK=1 adds each document's first key's dK to the previous
// document's last key (a key-tile item reading past its document).
//
//===----------------------------------------------------------------------===//

#include "FakeCuda.h"

#include "flamia/Schedule/DocumentLayout.h"
#include "flamia/Numerics/ExactSum.h"
#include "flamia/Numerics/Formats.h"
#include "flamia/Numerics/Quantizer.h"
#include "flamia/Numerics/RecipeConfig.h"
#include "flamia/Numerics/ReferenceAttention.h"

#include <cuda.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace nm = flamia::numerics;

namespace {

template <typename T> T *devicePointer(void **params, int i) {
  CUdeviceptr p;
  memcpy(&p, params[i], sizeof p);
  return reinterpret_cast<T *>(static_cast<uintptr_t>(p));
}
int32_t i32(void **params, int i) {
  int32_t v;
  memcpy(&v, params[i], sizeof v);
  return v;
}
float f32(void **params, int i) {
  float v;
  memcpy(&v, params[i], sizeof v);
  return v;
}

std::vector<float> bf16ToFloats(const uint16_t *x, size_t n) {
  std::vector<float> out(n);
  for (size_t i = 0; i < n; ++i)
    out[i] = nm::bf16ToFloat(x[i]);
  return out;
}

void quantizeInto(const std::vector<float> &x, int64_t T, int64_t H, int64_t D,
                  const ::flamia::DocumentLayout &docs,
                  const nm::ScaleLayout &layout,
                  uint8_t *codes, uint8_t *scales, uint16_t *deq) {
  nm::QuantizedTensor qt;
  if (!nm::quantize(x.data(), T, H, D, docs, layout, nm::kMXFP8E4M3, qt)) {
    fprintf(stderr, "fake_quantize: quantize failed\n");
    abort();
  }
  if (codes)
    memcpy(codes, qt.codes.data(), qt.codes.size());
  if (scales)
    memcpy(scales, qt.scales.data(), qt.scales.size());
  if (deq)
    for (int64_t t = 0; t < T; ++t)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t d = 0; d < D; ++d)
          deq[(t * H + h) * D + d] =
              nm::floatToBf16(static_cast<float>(qt.dequantize(t, h, d)));
}

void fakeQuantize(const FakeLaunch *, void **p) {
  const uint16_t *q = devicePointer<uint16_t>(p, 0);
  const uint16_t *k = devicePointer<uint16_t>(p, 1);
  const uint16_t *v = devicePointer<uint16_t>(p, 2);
  const int32_t *cu = devicePointer<int32_t>(p, 3);
  const int64_t T = i32(p, 4), Hq = i32(p, 5), Hkv = i32(p, 6), D = i32(p, 7),
                numDocs = i32(p, 8);
  ::flamia::DocumentLayout docs;
  if (!::flamia::DocumentLayout::fromCuSeqlens(cu, numDocs + 1, T, docs))
    abort();
  const std::vector<float> qf = bf16ToFloats(q, T * Hq * D),
                           kf = bf16ToFloats(k, T * Hkv * D),
                           vf = bf16ToFloats(v, T * Hkv * D);
  const nm::ScaleLayout pt = nm::ScaleLayout::perToken(32),
                        tb = nm::ScaleLayout::documentLocal(32, 32);
  quantizeInto(qf, T, Hq, D, docs, pt, devicePointer<uint8_t>(p, 9),
               devicePointer<uint8_t>(p, 10), devicePointer<uint16_t>(p, 17));
  quantizeInto(qf, T, Hq, D, docs, tb, devicePointer<uint8_t>(p, 11),
               devicePointer<uint8_t>(p, 12), nullptr);
  quantizeInto(kf, T, Hkv, D, docs, tb, devicePointer<uint8_t>(p, 13),
               devicePointer<uint8_t>(p, 14), devicePointer<uint16_t>(p, 18));
  quantizeInto(vf, T, Hkv, D, docs, tb, devicePointer<uint8_t>(p, 15),
               devicePointer<uint8_t>(p, 16), devicePointer<uint16_t>(p, 19));
  if (const char *corrupt = getenv("FAKE_CUDA_CORRUPT")) {
    static const char *names[] = {"q_pt",  "q_pt_scales", "q_tb", "q_tb_scales",
                                  "k_tb",  "k_tb_scales", "v_tb", "v_tb_scales",
                                  "q_deq", "k_deq",       "v_deq"};
    for (int i = 0; i < 11; ++i)
      if (!strcmp(corrupt, names[i]) && T > 0)
        devicePointer<uint8_t>(p, 9 + i)[0] ^= 1;
  }
}

void fakeAttentionForward(const FakeLaunch *, void **p) {
  const uint16_t *q = devicePointer<uint16_t>(p, 1);
  const uint16_t *k = devicePointer<uint16_t>(p, 2);
  const uint16_t *v = devicePointer<uint16_t>(p, 3);
  const int32_t *cu = devicePointer<int32_t>(p, 4);
  uint16_t *o = devicePointer<uint16_t>(p, 5);
  float *lse = devicePointer<float>(p, 6);
  const float scale = f32(p, 10);
  const int64_t T = i32(p, 11), Hq = i32(p, 12), Hkv = i32(p, 13),
                D = i32(p, 14), numDocs = i32(p, 15);
  ::flamia::DocumentLayout docs;
  if (!::flamia::DocumentLayout::fromCuSeqlens(cu, numDocs + 1, T, docs))
    abort();
  const char *recipeName = getenv("FAKE_CUDA_FWD_RECIPE");
  nm::RecipeConfig recipe;
  if (!nm::recipeFromName(recipeName ? recipeName : "mxfp8", recipe))
    abort();
  const std::vector<float> qf = bf16ToFloats(q, T * Hq * D),
                           kf = bf16ToFloats(k, T * Hkv * D),
                           vf = bf16ToFloats(v, T * Hkv * D);
  nm::AttentionInputs in;
  in.numTokens = T;
  in.numHeads = Hq;
  in.numKvHeads = Hkv;
  in.headDim = D;
  in.q = qf.data();
  in.k = kf.data();
  in.v = vf.data();
  in.docs = &docs;
  in.causal = true;
  in.softmaxScale = scale;
  nm::ForwardOutputs out;
  if (!nm::runAttention(in, recipe, nullptr, out, nullptr))
    abort();
  for (size_t i = 0; i < out.o.size(); ++i)
    o[i] = nm::floatToBf16(out.o[i]);
  memcpy(lse, out.lse.data(), out.lse.size() * sizeof(float));
}

void fakeQuantizeGrad(const FakeLaunch *, void **p) {
  const uint16_t *dO = devicePointer<uint16_t>(p, 0);
  const uint16_t *o = devicePointer<uint16_t>(p, 1);
  const int32_t *cu = devicePointer<int32_t>(p, 2);
  const int64_t T = i32(p, 3), Hq = i32(p, 4), D = i32(p, 5),
                numDocs = i32(p, 6);
  ::flamia::DocumentLayout docs;
  if (!::flamia::DocumentLayout::fromCuSeqlens(cu, numDocs + 1, T, docs))
    abort();
  quantizeInto(bf16ToFloats(dO, T * Hq * D), T, Hq, D, docs,
               nm::ScaleLayout::documentLocal(32, 32),
               devicePointer<uint8_t>(p, 7), devicePointer<uint8_t>(p, 8),
               devicePointer<uint16_t>(p, 9));
  float *delta = devicePointer<float>(p, 10);
  std::vector<double> a(static_cast<size_t>(D)), b(static_cast<size_t>(D));
  for (int64_t t = 0; t < T; ++t)
    for (int64_t h = 0; h < Hq; ++h) {
      for (int64_t d = 0; d < D; ++d) {
        a[d] = nm::bf16ToFloat(dO[(t * Hq + h) * D + d]);
        b[d] = nm::bf16ToFloat(o[(t * Hq + h) * D + d]);
      }
      delta[h * T + t] = nm::exactDot(
          a.data(), b.data(), D,
          nm::normUpperBound(a.data(), D) * nm::normUpperBound(b.data(), D));
    }
  if (const char *corrupt = getenv("FAKE_CUDA_CORRUPT")) {
    static const char *names[] = {"do_tb", "do_tb_scales", "do_deq", "delta"};
    for (int i = 0; i < 4; ++i)
      if (!strcmp(corrupt, names[i]) && T > 0)
        devicePointer<uint8_t>(p, 7 + i)[0] ^= 1;
  }
}

void fakeAttentionBackward(const FakeLaunch *, void **p) {
  const int64_t T = i32(p, 14), Hq = i32(p, 15), Hkv = i32(p, 16),
                D = i32(p, 17), numDocs = i32(p, 18);
  const int32_t *cu = devicePointer<int32_t>(p, 6);
  ::flamia::DocumentLayout docs;
  if (!::flamia::DocumentLayout::fromCuSeqlens(cu, numDocs + 1, T, docs))
    abort();
  // The key-tile list the runtime uploaded: one item per (document, kv head,
  // key tile of 128), or the fake refuses to run.
  int64_t expected = 0;
  for (int d = 0; d < docs.numDocuments(); ++d)
    expected += (docs.length(d) + 127) / 128 * Hkv;
  if (i32(p, 8) != expected) {
    fprintf(stderr, "fake_attention_bwd: num_kv_items %d, expected %lld\n",
            i32(p, 8), static_cast<long long>(expected));
    abort();
  }
  const char *recipeName = getenv("FAKE_CUDA_BWD_RECIPE");
  nm::RecipeConfig recipe;
  if (!nm::recipeFromName(recipeName ? recipeName : "mxfp8", recipe))
    abort();
  const std::vector<float> qf = bf16ToFloats(devicePointer<uint16_t>(p, 0), T * Hq * D),
                           kf = bf16ToFloats(devicePointer<uint16_t>(p, 1), T * Hkv * D),
                           vf = bf16ToFloats(devicePointer<uint16_t>(p, 2), T * Hkv * D),
                           dO = bf16ToFloats(devicePointer<uint16_t>(p, 3), T * Hq * D),
                           of = bf16ToFloats(devicePointer<uint16_t>(p, 4), T * Hq * D);
  nm::AttentionInputs in;
  in.numTokens = T;
  in.numHeads = Hq;
  in.numKvHeads = Hkv;
  in.headDim = D;
  in.q = qf.data();
  in.k = kf.data();
  in.v = vf.data();
  in.docs = &docs;
  in.causal = true;
  in.softmaxScale = f32(p, 13);
  nm::BackwardOutputs out;
  if (!nm::referenceBackward(in, recipe, dO.data(), of.data(),
                             devicePointer<float>(p, 5), out))
    abort();
  if (const char *leak = getenv("FAKE_CUDA_BWD_LEAK"); leak && *leak == '1')
    for (int d = 1; d < docs.numDocuments(); ++d) {
      const int64_t first = docs.begin(d);
      if (docs.length(d) == 0 || first == 0)
        continue;
      for (int64_t i = 0; i < Hkv * D; ++i)
        out.dk[(first - 1) * Hkv * D + i] += out.dk[first * Hkv * D + i];
    }
  memcpy(devicePointer<float>(p, 10), out.dq.data(), out.dq.size() * 4);
  uint16_t *dk = devicePointer<uint16_t>(p, 11), *dv = devicePointer<uint16_t>(p, 12);
  for (size_t i = 0; i < out.dk.size(); ++i) {
    dk[i] = nm::floatToBf16(out.dk[i]);
    dv[i] = nm::floatToBf16(out.dv[i]);
  }
}

/// flamia-run --selftest's kernel (tools/flamia-run/flamia_echo.ptx), on the
/// host: the same bytes at the same offsets.
void fakeEcho(const FakeLaunch *launch, void **p) {
  uint8_t *echo = devicePointer<uint8_t>(p, 3);
  uint32_t *counter = devicePointer<uint32_t>(p, 2);
  const uint32_t cluster =
      launch->cluster[0] * launch->cluster[1] * launch->cluster[2];
  for (uint32_t cta = 0; cta < launch->grid[0]; ++cta) {
    const uint32_t old = (*counter)++;
    const uint32_t word = 0x5EED0000u + cta;
    memcpy(echo + 192 + 4 * cta, &old, 4);
    memcpy(echo + 200 + 4 * cta, &cluster, 4);
    memcpy(echo + 208 + 4 * cta, &launch->sharedMemBytes, 4);
    memcpy(echo + 216 + 4 * cta, &word, 4);
  }
  memcpy(echo, p[0], 128);
  memcpy(echo + 128, p[1], 8);
  memcpy(echo + 136, p[2], 8);
  memcpy(echo + 144, p[3], 8);
  memcpy(echo + 152, p[4], 4);
  memcpy(echo + 156, p[5], 4);
  memcpy(echo + 160, devicePointer<uint8_t>(p, 1), 32);
}

} // namespace

/// The built-in host kernel for a kernel name, or null.
extern "C" FakeKernelImpl fake_cuda_builtin_kernel(const char *name) {
  if (!strcmp(name, "fake_quantize"))
    return fakeQuantize;
  if (!strcmp(name, "fake_attention_fwd"))
    return fakeAttentionForward;
  if (!strcmp(name, "flamia_echo"))
    return fakeEcho;
  if (!strcmp(name, "fake_quantize_grad"))
    return fakeQuantizeGrad;
  if (!strcmp(name, "fake_attention_bwd"))
    return fakeAttentionBackward;
  return nullptr;
}
