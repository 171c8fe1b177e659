//===- Checks.cpp - flamia-run's checks against the CPU reference ---------===//

#include "Checks.h"

#include "flamia/Numerics/DocumentLayout.h"
#include "flamia/Numerics/Formats.h"
#include "flamia/Numerics/Quantizer.h"
#include "flamia/Numerics/RecipeConfig.h"
#include "flamia/Numerics/ReferenceAttention.h"
#include "flamia/Support/FileOutput.h"
#include "flamia/Support/Npy.h"
#include "flamia/Target/ScaleFactorLayout.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>

namespace flamia::run {

using runtime::Status;
namespace nm = flamia::numerics;

namespace {

std::string fmt(const char *format, double a) {
  char buf[64];
  snprintf(buf, sizeof buf, format, a);
  return buf;
}

std::string position(int64_t index, int64_t H, int64_t D) {
  return "[t=" + std::to_string(index / (H * D)) +
         ", h=" + std::to_string(index / D % H) +
         ", d=" + std::to_string(index % D) + "]";
}

/// The recipe of the reference for this manifest.
Status referenceRecipe(const runtime::Manifest &m, nm::RecipeConfig &recipe) {
  if (m.recipe.kind != runtime::kRecipeMxfp8)
    return runtime::invalidArgument("the CPU reference implements recipe "
                                    "mxfp8; the manifest's recipe is '" +
                                    m.recipe.kind + "'");
  nm::Status s =
      nm::recipeFromName(m.recipe.strict ? "mxfp8-strict" : "mxfp8", recipe);
  if (!s)
    return runtime::invalidArgument(s.message);
  recipe.safeBlock = m.recipe.safeBlock;
  if (m.schedule.present)
    recipe.tile = m.schedule.blockN;
  s = recipe.validate(m.headDim);
  if (!s)
    return runtime::invalidArgument("reference recipe: " + s.message);
  return Status::success();
}

Status documents(const HostBatch &b, nm::DocumentLayout &docs) {
  nm::Status s = nm::DocumentLayout::fromCuSeqlens(b.cu, b.T, docs);
  if (!s)
    return runtime::invalidArgument(s.message);
  return Status::success();
}

/// The scale-factor tiles the quantizer writes for sm_100a
/// (flamia.quantize_block): slot (b0, h) holds the 128 rows of the four
/// token blocks b0 .. b0 + 3 in the 128x4 tiled layout, scale 1 (127) where
/// a block would lie past the last one. `blocks` gives the token blocks
/// (document order), `scales` the logical scales of `holds.layout`: per
/// token ([T, H, C]; rows past a short block's end hold the scale of zero,
/// 0) or per token block, with rows = tokens (q, k) or, `holds.tileRows`
/// channels, rows = channels and K-blocks = the four blocks (v). Offsets
/// come from include/flamia/Target/ScaleFactorLayout.h, not from the
/// kernel's arithmetic.
CheckRow checkScaleTiles(const std::string &name,
                         const runtime::BufferContents &holds,
                         const nm::QuantizedTensor &blocks,
                         const nm::QuantizedTensor &scales,
                         const std::vector<uint8_t> &gpu) {
  const int64_t NB = blocks.blocks.numBlocks(), H = blocks.numHeads,
                C = blocks.scaleChannels;
  CheckRow row;
  row.check = name + " (scale-factor tiles, 128x4 layout)";
  const size_t expectedBytes = static_cast<size_t>(NB * H) * kSfTileBytes;
  if (gpu.size() != expectedBytes) {
    row.verdict = Verdict::Fail;
    row.detail = "the buffer has " + std::to_string(gpu.size()) +
                 " bytes, expected NB x H x 512 = " +
                 std::to_string(expectedBytes);
    return row;
  }
  int64_t compared = 0, mismatches = 0;
  std::string firstText;
  for (int64_t b0 = 0; b0 < NB; ++b0)
    for (int64_t h = 0; h < H; ++h) {
      const uint8_t *tile = gpu.data() + (b0 * H + h) * kSfTileBytes;
      for (uint32_t j = 0; j < 4; ++j) {
        const int64_t blk = b0 + j;
        for (uint32_t r = 0; r < 32; ++r)
          for (uint32_t c = 0; c < static_cast<uint32_t>(C); ++c) {
            uint8_t expected = 127;
            uint32_t offset;
            if (holds.tileRows == runtime::TileRows::Channels) {
              offset = sfTileOffset(32 * c + r, j);
              if (blk < NB)
                expected = blocks.scales[(blk * H + h) * C + c];
            } else {
              offset = sfTileOffset(32 * j + r, c);
              if (blk < NB && holds.layout == runtime::HeldLayout::TokenBlock) {
                expected = blocks.scales[(blk * H + h) * C + c];
              } else if (blk < NB) {
                const int64_t token = blocks.blocks.begin[blk] + r;
                expected = token < blocks.blocks.end[blk]
                               ? scales.scales[(token * H + h) * C + c]
                               : 0;
              }
            }
            ++compared;
            if (tile[offset] == expected)
              continue;
            if (mismatches++ == 0) {
              char buf[128];
              snprintf(buf, sizeof buf,
                       "first: slot (block %lld, head %lld) byte %u (block "
                       "%lld, row %u, channel block %u): gpu %u, expected %u",
                       static_cast<long long>(b0), static_cast<long long>(h),
                       offset, static_cast<long long>(blk), r, c, tile[offset],
                       expected);
              firstText = buf;
            }
          }
      }
    }
  row.compared = compared;
  row.maxAbsDiff = 0;
  row.verdict = mismatches == 0 ? Verdict::Pass : Verdict::Fail;
  row.detail = mismatches == 0
                   ? "every scale byte of every slot where the MMA reads it"
                   : std::to_string(mismatches) + " bytes differ; " + firstText;
  return row;
}

} // namespace

void checkOutputsWritten(const std::vector<uint16_t> &o,
                         const std::vector<float> &lse, Report &report) {
  int64_t nanO = 0, nanLse = 0;
  for (uint16_t x : o)
    nanO += std::isnan(bf16ToFloat(x));
  for (float x : lse)
    nanLse += std::isnan(x);
  CheckRow row;
  row.check = "outputs written (no NaN)";
  row.compared = static_cast<int64_t>(o.size() + lse.size());
  row.maxAbsDiff = 0;
  row.verdict = nanO + nanLse == 0 ? Verdict::Pass : Verdict::Fail;
  row.detail = nanO + nanLse == 0
                   ? "O and LSE hold no NaN (both were filled with NaN first)"
                   : std::to_string(nanO) + " O and " + std::to_string(nanLse) +
                         " LSE elements are NaN (unwritten, or NaN computed)";
  report.add(row);
}

Status checkQuantizedCopies(Session &session, const RunOptions &options,
                            Report &report) {
  (void)options;
  const HostBatch &b = session.batch();
  const runtime::Manifest &m = session.manifest();
  nm::RecipeConfig recipe;
  Status rs = referenceRecipe(m, recipe);
  if (!rs.ok()) {
    report.add({"quantized copies", 0, 0, Verdict::Skip, rs.message});
    return Status::success();
  }
  nm::DocumentLayout docs;
  FLAMIA_RETURN_IF_ERROR(documents(b, docs));

  // Quantize each (tensor, layout) once, when a copy needs it.
  std::map<std::pair<char, bool>, nm::QuantizedTensor> cache;
  auto quantized = [&](char tensor, bool tokenBlocks,
                       const nm::QuantizedTensor *&out) -> Status {
    auto key = std::make_pair(tensor, tokenBlocks);
    auto it = cache.find(key);
    if (it == cache.end()) {
      const std::vector<uint16_t> &x = tensor == 'q'   ? b.q
                                       : tensor == 'k' ? b.k
                                                       : b.v;
      const int64_t H = tensor == 'q' ? b.Hq : b.Hkv;
      std::vector<float> xf = toFloat(x);
      nm::ScaleLayout layout = tokenBlocks
                                   ? nm::ScaleLayout::documentLocal(32, 32)
                                   : nm::ScaleLayout::perToken(32);
      nm::QuantizedTensor qt;
      nm::Status s = nm::quantize(xf.data(), b.T, H, b.D, docs, layout,
                                  nm::kMXFP8E4M3, qt);
      if (!s)
        return runtime::invalidArgument("numerics quantizer: " + s.message);
      it = cache.emplace(key, std::move(qt)).first;
    }
    out = &it->second;
    return Status::success();
  };

  // Each workspace buffer says what it holds (the manifest's "holds"): which
  // tensor, which scale layout, which part.
  for (const runtime::ManifestBuffer &buffer : m.buffers) {
    if (buffer.role != runtime::BufferRole::Workspace)
      continue;
    const runtime::BufferContents &holds = buffer.holds;
    if (holds.part == runtime::HeldPart::Scratch) {
      report.add({"workspace " + buffer.name, 0, 0, Verdict::Info,
                  "not checked: the kernels' scratch memory"});
      continue;
    }
    const char tensor = runtime::heldTensorLetter(holds.tensor);
    const bool tokenBlocks = holds.layout == runtime::HeldLayout::TokenBlock;
    if (holds.part == runtime::HeldPart::ScaleTiles) {
      // sm_100a's scale-factor tiles: the same scales in the MMA's layout.
      const nm::QuantizedTensor *blocks = nullptr, *scales = nullptr;
      FLAMIA_RETURN_IF_ERROR(quantized(tensor, true, blocks));
      FLAMIA_RETURN_IF_ERROR(quantized(tensor, tokenBlocks, scales));
      std::vector<uint8_t> gpu;
      flamia_buffer_info info;
      FLAMIA_RETURN_IF_ERROR(session.downloadBuffer(buffer.name, gpu, info));
      report.add(checkScaleTiles(buffer.name, holds, *blocks, *scales, gpu));
      continue;
    }
    std::vector<uint8_t> gpu;
    flamia_buffer_info info;
    FLAMIA_RETURN_IF_ERROR(session.downloadBuffer(buffer.name, gpu, info));
    const nm::QuantizedTensor *ref = nullptr;
    FLAMIA_RETURN_IF_ERROR(quantized(tensor, tokenBlocks, ref));
    const int64_t H = ref->numHeads, D = ref->headDim;
    CheckRow row;
    row.check =
        buffer.name +
        (holds.part == runtime::HeldPart::Dequantized
             ? std::string(" (") + (tokenBlocks ? "32x32" : "1x32") +
                   " dequantized, bf16)"
         : holds.part == runtime::HeldPart::Scales
             ? std::string(" (E8M0 scales)")
             : std::string(" (E4M3 payload)"));
    row.verdict = Verdict::Pass;
    int64_t mismatches = 0, first = -1;
    std::string firstText;
    auto sizeMismatch = [&](size_t expected) {
      row.verdict = Verdict::Fail;
      row.detail = "the buffer has " + std::to_string(gpu.size()) +
                   " bytes, the reference " + std::to_string(expected);
      report.add(row);
    };
    if (holds.part == runtime::HeldPart::Payload) {
      if (gpu.size() != ref->codes.size()) {
        sizeMismatch(ref->codes.size());
        continue;
      }
      for (size_t i = 0; i < gpu.size(); ++i) {
        if (gpu[i] == ref->codes[i])
          continue;
        if (first < 0) {
          first = static_cast<int64_t>(i);
          char buf[64];
          snprintf(buf, sizeof buf, " gpu 0x%02X ref 0x%02X", gpu[i],
                   ref->codes[i]);
          firstText = position(first, H, D) + buf;
        }
        ++mismatches;
        double a = nm::e4m3ToFloat(gpu[i]), r = nm::e4m3ToFloat(ref->codes[i]);
        double diff =
            std::isnan(a) || std::isnan(r) ? INFINITY : std::fabs(a - r);
        row.maxAbsDiff = std::max(row.maxAbsDiff, diff);
      }
      row.compared = static_cast<int64_t>(gpu.size());
    } else if (holds.part == runtime::HeldPart::Scales) {
      if (gpu.size() != ref->scales.size()) {
        sizeMismatch(ref->scales.size());
        continue;
      }
      const int64_t channels = ref->scaleChannels;
      for (size_t i = 0; i < gpu.size(); ++i) {
        if (gpu[i] == ref->scales[i])
          continue;
        if (first < 0) {
          first = static_cast<int64_t>(i);
          char buf[96];
          snprintf(buf, sizeof buf,
                   "[block=%lld, h=%lld, c=%lld] gpu 0x%02X ref 0x%02X",
                   static_cast<long long>(i / (H * channels)),
                   static_cast<long long>(i / channels % H),
                   static_cast<long long>(i % channels), gpu[i],
                   ref->scales[i]);
          firstText = buf;
        }
        ++mismatches;
        row.maxAbsDiff = std::max(row.maxAbsDiff,
                                  std::fabs(static_cast<double>(gpu[i]) -
                                            ref->scales[i])); // exponents
      }
      row.compared = static_cast<int64_t>(gpu.size());
    } else {
      const size_t n = ref->codes.size();
      if (gpu.size() != n * 2) {
        sizeMismatch(n * 2);
        continue;
      }
      const uint16_t *g = reinterpret_cast<const uint16_t *>(gpu.data());
      for (size_t i = 0; i < n; ++i) {
        const int64_t t = static_cast<int64_t>(i) / (H * D),
                      h = static_cast<int64_t>(i) / D % H,
                      d = static_cast<int64_t>(i) % D;
        // payload x 2^e, exact in double; bf16 of it (exact unless below
        // bf16's subnormal range).
        const double value = ref->dequantize(t, h, d);
        const uint16_t expected = floatToBf16(static_cast<float>(value));
        const bool bothNan = std::isnan(bf16ToFloat(g[i])) && std::isnan(value);
        if (g[i] == expected || bothNan)
          continue;
        if (first < 0) {
          first = static_cast<int64_t>(i);
          firstText = position(first, H, D) + " gpu " +
                      fmt("%.9g", bf16ToFloat(g[i])) + " ref " +
                      fmt("%.9g", bf16ToFloat(expected));
        }
        ++mismatches;
        double diff = std::fabs(static_cast<double>(bf16ToFloat(g[i])) -
                                bf16ToFloat(expected));
        row.maxAbsDiff =
            std::max(row.maxAbsDiff, std::isnan(diff) ? INFINITY : diff);
      }
      row.compared = static_cast<int64_t>(n);
    }
    if (mismatches) {
      row.verdict = Verdict::Fail;
      row.detail = std::to_string(mismatches) + " differ; first " + firstText;
    } else {
      row.detail = "bit-identical";
    }
    report.add(row);
  }
  return Status::success();
}

namespace {

struct Comparison {
  double relL2 = 0, maxAbs = 0;
  int64_t nan = 0, compared = 0;
  int64_t worst = -1;
};

/// a vs b over the first `heads` heads of [T, H, D] tensors.
Comparison compareO(const std::vector<float> &a, const std::vector<float> &b,
                    int64_t T, int64_t Ha, int64_t Hb, int64_t heads,
                    int64_t D) {
  Comparison c;
  double num = 0, den = 0;
  for (int64_t t = 0; t < T; ++t)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t d = 0; d < D; ++d) {
        const int64_t ia = (t * Ha + h) * D + d, ib = (t * Hb + h) * D + d;
        const double x = a[ia], y = b[ib];
        ++c.compared;
        if (std::isnan(x) || std::isnan(y)) {
          ++c.nan;
          continue;
        }
        num += (x - y) * (x - y);
        den += y * y;
        if (std::fabs(x - y) > c.maxAbs) {
          c.maxAbs = std::fabs(x - y);
          c.worst = ia;
        }
      }
  c.relL2 = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  return c;
}

/// LSE [H, T]: rows h < heads. With `tolerance` ([heads, T]), also the
/// largest |a - b| / tolerance (in relL2, for lack of a better field).
Comparison compareLse(const std::vector<float> &a, const std::vector<float> &b,
                      int64_t T, int64_t heads,
                      const std::vector<double> *tolerance = nullptr) {
  Comparison c;
  for (int64_t i = 0; i < heads * T; ++i) {
    ++c.compared;
    if (std::isnan(a[i]) || std::isnan(b[i])) {
      ++c.nan;
      continue;
    }
    const double diff = std::fabs(static_cast<double>(a[i]) - b[i]);
    if (diff > c.maxAbs)
      c.maxAbs = diff;
    const double ratio = tolerance ? diff / (*tolerance)[i] : diff;
    if (ratio > c.relL2 || c.worst < 0) {
      c.relL2 = ratio;
      c.worst = i;
    }
  }
  return c;
}

/// The LSE tolerance of each row (docs/runtime.md): kMaxAbsLse plus twice
/// the worst-case fp32 accumulation error of any of the row's scores,
/// D * 2^-24 * scale * max_d |q_id| * max_j sum_d |k_jd| over the keys j the
/// row sees (Higham's gamma_D bound; the CPU reference's scores are exact
/// sums rounded once, the GPU's are fp32 sums of exact products).
std::vector<double> lseTolerance(const std::vector<float> &q,
                                 const std::vector<float> &k, int64_t T,
                                 int64_t heads, int64_t kvHeads, int64_t D,
                                 const std::vector<int32_t> &cu, bool causal,
                                 float scale) {
  const int64_t group = heads / kvHeads;
  std::vector<double> kL1(static_cast<size_t>(T * kvHeads), 0.0);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t g = 0; g < kvHeads; ++g) {
      double sum = 0;
      for (int64_t d = 0; d < D; ++d)
        sum += std::fabs(k[(t * kvHeads + g) * D + d]);
      kL1[t * kvHeads + g] = sum;
    }
  // Per document: the largest key L1 norm up to each position (causal) or
  // over the whole document.
  std::vector<double> seen(kL1.size(), 0.0);
  for (size_t doc = 0; doc + 1 < cu.size(); ++doc) {
    for (int64_t g = 0; g < kvHeads; ++g) {
      double running = 0, whole = 0;
      for (int64_t t = cu[doc]; t < cu[doc + 1]; ++t)
        whole = std::max(whole, kL1[t * kvHeads + g]);
      for (int64_t t = cu[doc]; t < cu[doc + 1]; ++t) {
        running = std::max(running, kL1[t * kvHeads + g]);
        seen[t * kvHeads + g] = causal ? running : whole;
      }
    }
  }
  const double gamma = static_cast<double>(D) * std::ldexp(1.0, -24);
  std::vector<double> tol(static_cast<size_t>(heads * T));
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t t = 0; t < T; ++t) {
      double qInf = 0;
      for (int64_t d = 0; d < D; ++d)
        qInf = std::max(
            qInf, static_cast<double>(std::fabs(q[(t * heads + h) * D + d])));
      tol[h * T + t] = kMaxAbsLse + 2.0 * gamma * scale * qInf *
                                        seen[t * kvHeads + h / group];
    }
  return tol;
}

std::vector<float> sliceHeads(const std::vector<uint16_t> &x, int64_t T,
                              int64_t H, int64_t heads, int64_t D) {
  std::vector<float> out(static_cast<size_t>(T * heads * D));
  for (int64_t t = 0; t < T; ++t)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t d = 0; d < D; ++d)
        out[(t * heads + h) * D + d] = bf16ToFloat(x[(t * H + h) * D + d]);
  return out;
}

/// A float32 array of `shape` holding `x`, for --dump.
std::pair<std::string, NpyArray> dumpFile(const std::string &dir,
                                          const std::string &name,
                                          const std::vector<float> &x,
                                          std::vector<int64_t> shape) {
  NpyArray a = makeNpyArray(NpyDType::Float32, std::move(shape));
  memcpy(a.bytes.data(), x.data(), x.size() * 4);
  return {dir + "/" + name + ".npy", std::move(a)};
}

} // namespace

Status checkReference(Session &session, const RunOptions &options,
                      const std::vector<uint16_t> &o,
                      const std::vector<float> &lse, Report &report) {
  const HostBatch &b = session.batch();
  const runtime::Manifest &m = session.manifest();
  nm::RecipeConfig recipe, exact;
  Status rs = referenceRecipe(m, recipe);
  if (!rs.ok()) {
    report.add({"O, LSE vs reference", 0, 0, Verdict::Skip, rs.message});
    return Status::success();
  }
  nm::Status ns = nm::recipeFromName("none", exact);
  if (!ns)
    return runtime::invalidArgument(ns.message);
  nm::DocumentLayout docs;
  FLAMIA_RETURN_IF_ERROR(documents(b, docs));

  // Heads compared: whole GQA groups.
  const int64_t group = b.Hq / b.Hkv;
  int64_t heads = b.Hq;
  std::string headNote;
  if (options.refHeads > 0) {
    if (options.refHeads % group != 0 || options.refHeads > b.Hq)
      return runtime::invalidArgument(
          "--ref-heads " + std::to_string(options.refHeads) +
          " must be a multiple of Hq / Hkv = " + std::to_string(group) +
          " and at most Hq = " + std::to_string(b.Hq));
    heads = options.refHeads;
  } else if (options.refHeads < 0) {
    double perHead = 0; // multiply-adds of Q K^T and P V, causal half
    for (int64_t d = 0; d < b.numDocs(); ++d) {
      const double L = static_cast<double>(b.docLength(d));
      perHead += (m.causal ? 1.0 : 2.0) * L * L * static_cast<double>(b.D);
    }
    int64_t groups =
        perHead > 0
            ? static_cast<int64_t>(options.refBudget / (perHead * group))
            : b.Hkv;
    groups = std::max<int64_t>(1, std::min<int64_t>(groups, b.Hkv));
    heads = groups * group;
  }
  if (heads < b.Hq)
    headNote = " (query heads 0.." + std::to_string(heads - 1) + " of " +
               std::to_string(b.Hq) + ")";

  const int64_t kvHeads = heads / group;
  std::vector<float> q = sliceHeads(b.q, b.T, b.Hq, heads, b.D);
  std::vector<float> k = sliceHeads(b.k, b.T, b.Hkv, kvHeads, b.D);
  std::vector<float> v = sliceHeads(b.v, b.T, b.Hkv, kvHeads, b.D);
  nm::AttentionInputs in;
  in.numTokens = b.T;
  in.numHeads = heads;
  in.numKvHeads = kvHeads;
  in.headDim = b.D;
  in.q = q.data();
  in.k = k.data();
  in.v = v.data();
  in.docs = &docs;
  in.causal = m.causal;
  in.softmaxScale = flamia_runtime_softmax_scale(session.runtime());
  nm::ForwardOutputs ref, f64;
  ns = nm::runAttention(in, recipe, nullptr, ref, nullptr);
  if (!ns)
    return runtime::invalidArgument("CPU reference: " + ns.message);
  ns = nm::runAttention(in, exact, nullptr, f64, nullptr);
  if (!ns)
    return runtime::invalidArgument("float64 reference: " + ns.message);

  const std::vector<float> gpuO = toFloat(o);
  Comparison oRef = compareO(gpuO, ref.o, b.T, b.Hq, heads, heads, b.D);
  Comparison oF64 = compareO(gpuO, f64.o, b.T, b.Hq, heads, heads, b.D);
  Comparison refF64 = compareO(ref.o, f64.o, b.T, heads, heads, heads, b.D);
  const std::vector<double> lseTol = lseTolerance(
      q, k, b.T, heads, kvHeads, b.D, b.cu, m.causal, in.softmaxScale);
  double minTol = INFINITY, maxTol = 0;
  for (double t : lseTol) {
    minTol = std::min(minTol, t);
    maxTol = std::max(maxTol, t);
  }
  Comparison lRef = compareLse(lse, ref.lse, b.T, heads, &lseTol);
  Comparison lF64 = compareLse(lse, f64.lse, b.T, heads);

  CheckRow row;
  row.check = "O vs CPU mxfp8 reference";
  row.compared = oRef.compared;
  row.maxAbsDiff = oRef.maxAbs;
  row.verdict =
      oRef.nan == 0 && oRef.relL2 <= kMaxRelL2O ? Verdict::Pass : Verdict::Fail;
  row.detail =
      "rel L2 " + fmt("%.3g", oRef.relL2) + " (<= " + fmt("%g", kMaxRelL2O) +
      ")" + (oRef.nan ? ", " + std::to_string(oRef.nan) + " NaN" : "") +
      (oRef.worst >= 0 ? ", worst at " + position(oRef.worst, b.Hq, b.D) : "") +
      headNote;
  report.add(row);

  row = CheckRow();
  row.check = "LSE vs CPU mxfp8 reference";
  row.compared = lRef.compared;
  row.maxAbsDiff = lRef.maxAbs;
  // lRef.relL2 holds the largest |diff| / tolerance.
  row.verdict =
      lRef.nan == 0 && lRef.relL2 <= 1.0 ? Verdict::Pass : Verdict::Fail;
  row.detail = "|diff| / tolerance <= " + fmt("%.3g", lRef.relL2) +
               " (tolerance " + fmt("%.3g", minTol) +
               (maxTol > minTol * 1.001 ? " .. " + fmt("%.3g", maxTol) : "") +
               ")" +
               (lRef.nan ? ", " + std::to_string(lRef.nan) + " NaN" : "") +
               (lRef.worst >= 0 && lRef.maxAbs > 0
                    ? ", worst at [h=" + std::to_string(lRef.worst / b.T) +
                          ", t=" + std::to_string(lRef.worst % b.T) + "]"
                    : "");
  report.add(row);

  row = CheckRow();
  row.check = "O: GPU vs float64 reference";
  row.compared = oF64.compared;
  row.maxAbsDiff = oF64.maxAbs;
  row.verdict = Verdict::Info;
  row.detail = "rel L2 " + fmt("%.3g", oF64.relL2) + "; LSE max abs " +
               fmt("%.3g", lF64.maxAbs);
  report.add(row);

  row = CheckRow();
  row.check = "O: mxfp8 ref vs float64 ref";
  row.compared = refF64.compared;
  row.maxAbsDiff = refF64.maxAbs;
  row.verdict = Verdict::Info;
  row.detail = "rel L2 " + fmt("%.3g", refF64.relL2) +
               " (the recipe's own error: the scale to compare with)";
  report.add(row);

  row = CheckRow();
  row.check = "O: closer to mxfp8 than to float64";
  row.compared = oRef.compared;
  row.maxAbsDiff = oRef.maxAbs;
  const double ratio = oF64.relL2 > 0 ? oRef.relL2 / oF64.relL2 : 0.0;
  if (refF64.relL2 < kMinQuantizationErrorForRatio) {
    row.verdict = Verdict::Info;
    row.detail = "n/a: the recipe's error " + fmt("%.3g", refF64.relL2) +
                 " is within bf16 rounding (< " +
                 fmt("%.3g", kMinQuantizationErrorForRatio) + "); ratio " +
                 fmt("%.3g", ratio);
  } else {
    row.verdict =
        ratio <= kMaxRatioToQuantizationError ? Verdict::Pass : Verdict::Fail;
    row.detail = "rel L2 to mxfp8 / rel L2 to float64 = " + fmt("%.3g", ratio) +
                 " (<= " + fmt("%g", kMaxRatioToQuantizationError) + ")";
  }
  report.add(row);

  if (!options.dumpDir.empty()) {
    // Every file or none (docs/runtime.md): a failed write is an error.
    const std::string &dir = options.dumpDir;
    std::vector<std::pair<std::string, NpyArray>> files;
    files.push_back(dumpFile(dir, "q", toFloat(b.q), {b.T, b.Hq, b.D}));
    files.push_back(dumpFile(dir, "k", toFloat(b.k), {b.T, b.Hkv, b.D}));
    files.push_back(dumpFile(dir, "v", toFloat(b.v), {b.T, b.Hkv, b.D}));
    files.push_back(dumpFile(dir, "o", gpuO, {b.T, b.Hq, b.D}));
    files.push_back(dumpFile(dir, "lse", lse, {b.Hq, b.T}));
    files.push_back(dumpFile(dir, "o_ref", ref.o, {b.T, heads, b.D}));
    files.push_back(dumpFile(dir, "lse_ref", ref.lse, {heads, b.T}));
    files.push_back(dumpFile(dir, "o_f64", f64.o, {b.T, heads, b.D}));
    files.push_back(dumpFile(dir, "lse_f64", f64.lse, {heads, b.T}));
    NpyArray cu =
        makeNpyArray(NpyDType::Int32, {static_cast<int64_t>(b.cu.size())});
    memcpy(cu.bytes.data(), b.cu.data(), b.cu.size() * 4);
    files.push_back({dir + "/cu_seqlens.npy", std::move(cu)});
    std::string error;
    if (!writeNpyFilesAtomically(files, error))
      return runtime::invalidArgument("--dump: " + error);
  }
  return Status::success();
}

//===----------------------------------------------------------------------===//
// L1 / L2 by perturbation
//===----------------------------------------------------------------------===//

namespace {

/// Compares O rows and LSE columns of tokens outside [begin, end) bit for bit;
/// counts tokens inside that changed.
struct LeakComparison {
  int64_t compared = 0, differing = 0, changedInside = 0;
  double maxAbs = 0;
  std::string first;
};

LeakComparison
compareOutside(const HostBatch &b, const std::vector<uint16_t> &o0,
               const std::vector<float> &l0, const std::vector<uint16_t> &o1,
               const std::vector<float> &l1, int64_t begin, int64_t end) {
  LeakComparison c;
  const int64_t row = b.Hq * b.D;
  for (int64_t t = 0; t < b.T; ++t) {
    const bool inside = t >= begin && t < end;
    bool changed = false;
    const bool sameRow =
        memcmp(&o0[t * row], &o1[t * row], static_cast<size_t>(row) * 2) == 0;
    for (int64_t i = t * row; !sameRow && i < (t + 1) * row; ++i) {
      if (o0[i] == o1[i])
        continue;
      changed = true;
      if (inside)
        break;
      ++c.differing;
      double d = std::fabs(static_cast<double>(bf16ToFloat(o0[i])) -
                           bf16ToFloat(o1[i]));
      c.maxAbs = std::max(c.maxAbs, std::isnan(d) ? INFINITY : d);
      if (c.first.empty())
        c.first = "O" + position(i, b.Hq, b.D);
    }
    for (int64_t h = 0; h < b.Hq; ++h) {
      const int64_t i = h * b.T + t;
      uint32_t x, y;
      memcpy(&x, &l0[i], 4);
      memcpy(&y, &l1[i], 4);
      if (x == y)
        continue;
      changed = true;
      if (inside)
        continue;
      ++c.differing;
      double d = std::fabs(static_cast<double>(l0[i]) - l1[i]);
      c.maxAbs = std::max(c.maxAbs, std::isnan(d) ? INFINITY : d);
      if (c.first.empty())
        c.first =
            "LSE[h=" + std::to_string(h) + ", t=" + std::to_string(t) + "]";
    }
    if (inside)
      c.changedInside += changed;
    else
      c.compared += row + b.Hq;
  }
  return c;
}

struct SavedTokens {
  std::vector<uint16_t> q, k, v;
};

SavedTokens save(const HostBatch &b, int64_t begin, int64_t end) {
  SavedTokens s;
  const int64_t qr = b.Hq * b.D, kr = b.Hkv * b.D;
  s.q.assign(b.q.begin() + begin * qr, b.q.begin() + end * qr);
  s.k.assign(b.k.begin() + begin * kr, b.k.begin() + end * kr);
  s.v.assign(b.v.begin() + begin * kr, b.v.begin() + end * kr);
  return s;
}

void restore(HostBatch &b, const SavedTokens &s, int64_t begin) {
  const int64_t qr = b.Hq * b.D, kr = b.Hkv * b.D;
  std::copy(s.q.begin(), s.q.end(), b.q.begin() + begin * qr);
  std::copy(s.k.begin(), s.k.end(), b.k.begin() + begin * kr);
  std::copy(s.v.begin(), s.v.end(), b.v.begin() + begin * kr);
}

/// Perturbs tokens [begin, end) of Q, K and V (fresh values, an outlier at
/// `begin`), runs, compares everything outside [begin, end), restores.
Status perturbAndCompare(Session &session, HostBatch &b, uint64_t seed,
                         int64_t begin, int64_t end,
                         const std::vector<uint16_t> &o0,
                         const std::vector<float> &l0, LeakComparison &out,
                         bool withNaN = false) {
  SavedTokens saved = save(b, begin, end);
  if (withNaN) {
    // Every element of the tokens' Q, K and V a quiet NaN (bf16 0x7FC0).
    auto fill = [&](std::vector<uint16_t> &x, int64_t H) {
      std::fill(x.begin() + begin * H * b.D, x.begin() + end * H * b.D,
                uint16_t(0x7FC0));
    };
    fill(b.q, b.Hq);
    fill(b.k, b.Hkv);
    fill(b.v, b.Hkv);
  } else {
    perturbTokens(b.q, b.Hq, b.D, begin, end, seed ^ 0x51, true);
    perturbTokens(b.k, b.Hkv, b.D, begin, end, seed ^ 0x4B, true);
    perturbTokens(b.v, b.Hkv, b.D, begin, end, seed ^ 0x56, true);
  }
  FLAMIA_RETURN_IF_ERROR(session.uploadTokens(begin, end));
  Status s = session.forward();
  std::vector<uint16_t> o1;
  std::vector<float> l1;
  if (s.ok())
    s = session.downloadOutputs(o1, l1);
  restore(b, saved, begin);
  FLAMIA_RETURN_IF_ERROR(session.uploadTokens(begin, end));
  FLAMIA_RETURN_IF_ERROR(s);
  out = compareOutside(b, o0, l0, o1, l1, begin, end);
  return Status::success();
}

/// The verdict of an L2 row: no output outside the changed document moved,
/// and the change did move some of its own rows (else the check is vacuous).
/// `cause` and `rows` name the change in the detail text.
void judgeIsolation(CheckRow &row, const LeakComparison &c, int64_t docLength,
                    const std::string &cause, const std::string &rows) {
  row.compared = c.compared;
  row.maxAbsDiff = c.maxAbs;
  if (c.differing) {
    row.verdict = Verdict::Fail;
    row.detail = std::to_string(c.differing) +
                 " outputs of other documents changed, first " + c.first;
  } else if (c.changedInside == 0) {
    row.verdict = Verdict::Fail;
    row.detail = cause + " changed nothing (vacuous check)";
  } else {
    row.verdict = Verdict::Pass;
    row.detail = "other documents bit-identical; " +
                 std::to_string(c.changedInside) + " of " +
                 std::to_string(docLength) + " " + rows + " changed";
  }
}

} // namespace

Status checkLeaks(Session &session, HostBatch &b, const RunOptions &options,
                  const std::vector<uint16_t> &o0, const std::vector<float> &l0,
                  Report &report) {
  const runtime::Manifest &m = session.manifest();
  // Documents to perturb: the longest, the first and the last non-empty one.
  std::vector<int64_t> chosen;
  int64_t longest = -1, firstDoc = -1, lastDoc = -1, nonEmpty = 0;
  for (int64_t d = 0; d < b.numDocs(); ++d) {
    if (b.docLength(d) == 0)
      continue;
    ++nonEmpty;
    if (firstDoc < 0)
      firstDoc = d;
    lastDoc = d;
    if (longest < 0 || b.docLength(d) > b.docLength(longest))
      longest = d;
  }
  for (int64_t d : {longest, firstDoc, lastDoc})
    if (d >= 0 && std::find(chosen.begin(), chosen.end(), d) == chosen.end())
      chosen.push_back(d);
  if (chosen.empty()) {
    report.add({"L1/L2 leak checks", 0, 0, Verdict::Skip, "no tokens"});
    return Status::success();
  }

  // L1: positions <= cut of a document keep their outputs when later
  // positions of the document change (and, in the same runs, every other
  // document keeps its outputs).
  for (int64_t d : chosen) {
    const int64_t L = b.docLength(d), start = b.cu[d], end = b.cu[d + 1];
    CheckRow row;
    row.check = "L1 causality, doc " + std::to_string(d) +
                " (L=" + std::to_string(L) + ")";
    if (!m.causal) {
      row.verdict = Verdict::Skip;
      row.detail = "the kernels are not causal";
      report.add(row);
      continue;
    }
    std::set<int64_t> cuts;
    for (int64_t c :
         {int64_t(0), int64_t(31), int64_t(32), int64_t(45), int64_t(127),
          int64_t(128), int64_t(129), int64_t(150), int64_t(200), int64_t(255),
          int64_t(256), int64_t(1000), L / 2, L - 2})
      if (c >= 0 && c + 1 < L)
        cuts.insert(c);
    if (cuts.empty()) {
      row.verdict = Verdict::Skip;
      row.detail = "document shorter than 2 tokens";
      report.add(row);
      continue;
    }
    row.verdict = Verdict::Pass;
    int64_t minChanged = INT64_MAX;
    for (int64_t cut : cuts) {
      LeakComparison c;
      FLAMIA_RETURN_IF_ERROR(perturbAndCompare(
          session, b, options.seed * 1000003 + static_cast<uint64_t>(cut),
          start + cut + 1, end, o0, l0, c));
      row.compared += c.compared;
      row.maxAbsDiff = std::max(row.maxAbsDiff, c.maxAbs);
      minChanged = std::min(minChanged, c.changedInside);
      if (c.differing && row.verdict == Verdict::Pass) {
        row.verdict = Verdict::Fail;
        row.detail = "cut " + std::to_string(cut) + ": " +
                     std::to_string(c.differing) + " outputs changed, first " +
                     c.first;
      }
      if (c.changedInside == 0 && row.verdict == Verdict::Pass) {
        row.verdict = Verdict::Fail;
        row.detail = "cut " + std::to_string(cut) +
                     ": the perturbation changed nothing (vacuous check)";
      }
    }
    if (row.verdict == Verdict::Pass)
      row.detail = std::to_string(cuts.size()) +
                   " cuts, bit-identical before each cut and outside the "
                   "document; >= " +
                   std::to_string(minChanged) + " perturbed rows changed";
    report.add(row);
  }

  // L2: a document's perturbation changes no other document's outputs.
  for (int64_t d : chosen) {
    CheckRow row;
    row.check = "L2 isolation, doc " + std::to_string(d) + " perturbed";
    if (nonEmpty < 2) {
      row.verdict = Verdict::Skip;
      row.detail = "a single non-empty document";
      report.add(row);
      continue;
    }
    LeakComparison c;
    FLAMIA_RETURN_IF_ERROR(perturbAndCompare(
        session, b, options.seed * 7919 + static_cast<uint64_t>(d), b.cu[d],
        b.cu[d + 1], o0, l0, c));
    judgeIsolation(row, c, b.docLength(d), "the perturbation",
                   "perturbed rows");
    report.add(row);
  }

  // L2 with non-finite inputs: a document of NaNs leaves every other
  // document's outputs bit-identical. The last key tile of the document
  // before it loads some of its rows (masked: P = 0), and 0 x NaN would be
  // NaN if those rows reached the P V product.
  for (int64_t d : chosen) {
    if (d == firstDoc || nonEmpty < 2)
      continue;
    CheckRow row;
    row.check = "L2 isolation, doc " + std::to_string(d) + " all NaN";
    LeakComparison c;
    FLAMIA_RETURN_IF_ERROR(perturbAndCompare(session, b, 0, b.cu[d],
                                             b.cu[d + 1], o0, l0, c,
                                             /*withNaN=*/true));
    judgeIsolation(row, c, b.docLength(d), "the NaNs", "rows");
    report.add(row);
  }
  return Status::success();
}

} // namespace flamia::run
