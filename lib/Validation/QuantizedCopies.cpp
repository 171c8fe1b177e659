//===- QuantizedCopies.cpp - Workspace copies vs the CPU quantizer --------===//

#include "flamia/Validation/QuantizedCopies.h"

#include "Text.h"

#include "flamia/Validation/Gradients.h"

#include "flamia/Numerics/Formats.h"
#include "flamia/Target/ScaleFactorLayout.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace flamia::validation::device {

namespace nm = flamia::numerics;
using detail::fmt;
using detail::position;
using runtime::Status;

Status QuantizedReference::get(runtime::HeldTensor tensor,
                               runtime::HeldLayout layout,
                               const nm::QuantizedTensor *&out, bool nvfp4) {
  if (nvfp4 && layout != runtime::HeldLayout::PerToken)
    return runtime::invalidArgument(
        std::string("an NVFP4 copy of ") + runtime::heldTensorName(tensor) +
        " in layout " + runtime::heldLayoutName(layout) +
        " is to be checked; NVFP4 copies are per token (1x16)");
  auto key = std::make_tuple(tensor, layout, nvfp4);
  auto it = cache_.find(key);
  if (it == cache_.end()) {
    const BatchView &b = batch_;
    const uint16_t *x = nullptr;
    switch (tensor) {
    case runtime::HeldTensor::Q:
      x = b.q;
      break;
    case runtime::HeldTensor::K:
      x = b.k;
      break;
    case runtime::HeldTensor::V:
      x = b.v;
      break;
    case runtime::HeldTensor::GradO:
      x = b.gradO;
      break;
    }
    // (An empty batch's arrays may be null.)
    if (!x && b.T > 0)
      return runtime::invalidArgument(
          std::string("a workspace copy of ") +
          runtime::heldTensorName(tensor) +
          " is to be checked but the batch has no " +
          runtime::heldTensorName(tensor));
    // q and grad_o have the query heads.
    const int64_t H = tensor == runtime::HeldTensor::Q ||
                              tensor == runtime::HeldTensor::GradO
                          ? b.Hq
                          : b.Hkv;
    std::vector<float> xf =
        detail::toFloat(x, static_cast<size_t>(b.T * H * b.D));
    nm::ScaleLayout scales = layout == runtime::HeldLayout::TokenBlock
                                 ? nm::ScaleLayout::documentLocal(32, 32)
                             : nvfp4 ? nm::ScaleLayout::perToken(16)
                                     : nm::ScaleLayout::perToken(32);
    nm::QuantizedTensor qt;
    nm::Status s = nm::quantize(xf.data(), b.T, H, b.D, docs_, scales,
                                nvfp4 ? nm::kNVFP4 : nm::kMXFP8E4M3, qt);
    if (!s)
      return runtime::invalidArgument("numerics quantizer: " + s.message);
    it = cache_.emplace(key, std::move(qt)).first;
  }
  out = &it->second;
  return Status::success();
}

std::string copyCheckName(const std::string &buffer,
                          const runtime::BufferContents &holds, bool nvfp4) {
  switch (holds.part) {
  case runtime::HeldPart::Dequantized:
    return buffer + " (" +
           (holds.layout == runtime::HeldLayout::TokenBlock ? "32x32"
            : nvfp4                                         ? "1x16"
                                                            : "1x32") +
           " dequantized, bf16)";
  case runtime::HeldPart::Scales:
    return buffer + (nvfp4 ? " (UE4M3 scales)" : " (E8M0 scales)");
  case runtime::HeldPart::ScaleTiles:
    return buffer + (nvfp4 ? " (UE4M3 scale-factor tiles, 128x4 layout)"
                           : " (scale-factor tiles, 128x4 layout)");
  case runtime::HeldPart::Delta:
    return buffer + " (delta = rowsum(dO * O), f32)";
  default:
    return buffer + (nvfp4 ? " (E2M1 payload, 2 a byte)" : " (E4M3 payload)");
  }
}

Check checkQuantizedCopy(const std::string &buffer,
                         const runtime::BufferContents &holds,
                         const nm::QuantizedTensor &ref, const uint8_t *gpu,
                         size_t bytes) {
  const int64_t H = ref.numHeads, D = ref.headDim;
  const bool nvfp4 = ref.format.scale == nm::ScaleFormat::UE4M3;
  Check row;
  row.name = copyCheckName(buffer, holds, nvfp4);
  row.verdict = Verdict::Pass;
  int64_t mismatches = 0, first = -1;
  std::string firstText;
  auto sizeMismatch = [&](size_t expected) {
    row.verdict = Verdict::Fail;
    row.detail = "the buffer has " + std::to_string(bytes) +
                 " bytes, the reference " + std::to_string(expected);
    return row;
  };
  if (holds.part == runtime::HeldPart::Payload &&
      ref.format.element == nm::ElementFormat::E2M1) {
    // Two codes a byte: element 2i in the low nibble, 2i + 1 in the high.
    const size_t n = ref.codes.size();
    if (n % 2 != 0 || bytes != n / 2)
      return sizeMismatch(n / 2);
    for (size_t j = 0; j < bytes; ++j)
      for (size_t half = 0; half < 2; ++half) {
        const uint8_t g = (gpu[j] >> (4 * half)) & 0xF,
                      r = ref.codes[2 * j + half] & 0xF;
        if (g == r)
          continue;
        if (first < 0) {
          first = static_cast<int64_t>(2 * j + half);
          char buf[64];
          snprintf(buf, sizeof buf, " gpu 0x%X ref 0x%X", g, r);
          firstText = position(first, H, D) + buf;
        }
        ++mismatches;
        row.maxAbsDiff = std::max(
            row.maxAbsDiff, std::fabs(static_cast<double>(nm::e2m1ToFloat(g)) -
                                      nm::e2m1ToFloat(r)));
      }
    row.compared = static_cast<int64_t>(n);
  } else if (holds.part == runtime::HeldPart::Payload) {
    if (bytes != ref.codes.size())
      return sizeMismatch(ref.codes.size());
    for (size_t i = 0; i < bytes; ++i) {
      if (gpu[i] == ref.codes[i])
        continue;
      if (first < 0) {
        first = static_cast<int64_t>(i);
        char buf[64];
        snprintf(buf, sizeof buf, " gpu 0x%02X ref 0x%02X", gpu[i],
                 ref.codes[i]);
        firstText = position(first, H, D) + buf;
      }
      ++mismatches;
      double a = nm::e4m3ToFloat(gpu[i]), r = nm::e4m3ToFloat(ref.codes[i]);
      double diff = std::isnan(a) || std::isnan(r) ? INFINITY : std::fabs(a - r);
      row.maxAbsDiff = std::max(row.maxAbsDiff, diff);
    }
    row.compared = static_cast<int64_t>(bytes);
  } else if (holds.part == runtime::HeldPart::Scales) {
    if (bytes != ref.scales.size())
      return sizeMismatch(ref.scales.size());
    const int64_t channels = ref.scaleChannels;
    for (size_t i = 0; i < bytes; ++i) {
      if (gpu[i] == ref.scales[i])
        continue;
      if (first < 0) {
        first = static_cast<int64_t>(i);
        char buf[96];
        snprintf(buf, sizeof buf,
                 "[block=%lld, h=%lld, c=%lld] gpu 0x%02X ref 0x%02X",
                 static_cast<long long>(i / (H * channels)),
                 static_cast<long long>(i / channels % H),
                 static_cast<long long>(i % channels), gpu[i], ref.scales[i]);
        firstText = buf;
      }
      ++mismatches;
      // E8M0: exponents; UE4M3: scale values (a NaN byte counts as inf).
      double diff = std::fabs(static_cast<double>(gpu[i]) - ref.scales[i]);
      if (nvfp4) {
        double a = nm::decodeScale(gpu[i], nm::ScaleFormat::UE4M3),
               r = nm::decodeScale(ref.scales[i], nm::ScaleFormat::UE4M3);
        diff = std::isnan(a) || std::isnan(r) ? INFINITY : std::fabs(a - r);
      }
      row.maxAbsDiff = std::max(row.maxAbsDiff, diff);
    }
    row.compared = static_cast<int64_t>(bytes);
  } else {
    const size_t n = ref.codes.size();
    if (bytes != n * 2)
      return sizeMismatch(n * 2);
    for (size_t i = 0; i < n; ++i) {
      uint16_t g;
      memcpy(&g, gpu + 2 * i, 2);
      const int64_t t = static_cast<int64_t>(i) / (H * D),
                    h = static_cast<int64_t>(i) / D % H,
                    d = static_cast<int64_t>(i) % D;
      // payload x scale, exact in double; bf16 of it (MXFP8: exact unless
      // below bf16's subnormal range; NVFP4: E2M1 x UE4M3 has at most 6
      // significant bits and lies in [2^-10, 2688], always exact).
      const double value = ref.dequantize(t, h, d);
      const uint16_t expected = nm::floatToBf16(static_cast<float>(value));
      const bool bothNan = std::isnan(nm::bf16ToFloat(g)) && std::isnan(value);
      if (g == expected || bothNan)
        continue;
      if (first < 0) {
        first = static_cast<int64_t>(i);
        firstText = position(first, H, D) + " gpu " +
                    fmt("%.9g", nm::bf16ToFloat(g)) + " ref " +
                    fmt("%.9g", nm::bf16ToFloat(expected));
      }
      ++mismatches;
      double diff = std::fabs(static_cast<double>(nm::bf16ToFloat(g)) -
                              nm::bf16ToFloat(expected));
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
  return row;
}

Check checkScaleTiles(const std::string &buffer,
                      const runtime::BufferContents &holds,
                      const nm::QuantizedTensor &blocks,
                      const nm::QuantizedTensor &scales, const uint8_t *gpu,
                      size_t bytes) {
  // NVFP4 (per token): one scale per 16 channels, a 512-byte tile per 4 of
  // them (64 channels) in each slot, 1.0 = 0x38 past the last block.
  const bool nvfp4 = scales.format.scale == nm::ScaleFormat::UE4M3;
  const int64_t NB = blocks.blocks.numBlocks(), H = blocks.numHeads,
                C = scales.scaleChannels;
  const int64_t tilesPerSlot = nvfp4 ? (C + 3) / 4 : 1;
  const uint8_t past = nvfp4 ? 0x38 : 127;
  Check row;
  row.name = copyCheckName(buffer, holds, nvfp4);
  const size_t slotBytes = static_cast<size_t>(tilesPerSlot) * kSfTileBytes;
  const size_t expectedBytes = static_cast<size_t>(NB * H) * slotBytes;
  if (bytes != expectedBytes) {
    row.verdict = Verdict::Fail;
    row.detail = "the buffer has " + std::to_string(bytes) +
                 " bytes, expected NB x H x " + std::to_string(slotBytes) +
                 " = " + std::to_string(expectedBytes);
    return row;
  }
  int64_t compared = 0, mismatches = 0;
  std::string firstText;
  for (int64_t b0 = 0; b0 < NB; ++b0)
    for (int64_t h = 0; h < H; ++h) {
      const uint8_t *slot = gpu + (b0 * H + h) * slotBytes;
      for (uint32_t j = 0; j < 4; ++j) {
        const int64_t blk = b0 + j;
        for (uint32_t r = 0; r < 32; ++r)
          for (uint32_t c = 0; c < static_cast<uint32_t>(C); ++c) {
            uint8_t expected = past;
            const uint8_t *tile = slot + (c / 4) * kSfTileBytes;
            uint32_t offset;
            if (holds.tileRows == runtime::TileRows::Channels) {
              offset = sfTileOffset(32 * c + r, j);
              if (blk < NB)
                expected = blocks.scales[(blk * H + h) * C + c];
            } else {
              offset = sfTileOffset(32 * j + r, c % 4);
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
              char buf[192];
              snprintf(buf, sizeof buf,
                       "first: slot (block %lld, head %lld) byte %u (block "
                       "%lld, row %u, channel block %u): gpu %u, expected %u",
                       static_cast<long long>(b0), static_cast<long long>(h),
                       static_cast<unsigned>((c / 4) * kSfTileBytes + offset),
                       static_cast<long long>(blk), r, c, tile[offset],
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

namespace {
/// The input tensor an operand use reads.
runtime::HeldTensor tensorOfUse(nm::OperandUse use) {
  switch (use) {
  case nm::OperandUse::QInQK:
  case nm::OperandUse::QInDSQ:
    return runtime::HeldTensor::Q;
  case nm::OperandUse::KInQK:
  case nm::OperandUse::KInDSK:
    return runtime::HeldTensor::K;
  case nm::OperandUse::VInPV:
  case nm::OperandUse::VInDOV:
    return runtime::HeldTensor::V;
  case nm::OperandUse::DOInDOV:
  case nm::OperandUse::DOInPDO:
    return runtime::HeldTensor::GradO;
  }
  return runtime::HeldTensor::Q;
}
} // namespace

Status checkQuantizedCopies(const BatchView &b, const runtime::Manifest &m,
                            const FetchBuffer &fetch, std::vector<Check> &out,
                            const uint16_t *o) {
  nm::RecipeConfig recipe;
  Status rs = referenceRecipe(m, recipe);
  if (!rs.ok()) {
    out.push_back({"quantized copies", 0, 0, Verdict::Skip, rs.message});
    return Status::success();
  }
  // Which (tensor, layout) copies are NVFP4: by their payload's or scales'
  // format, else (a dequantized copy alone) by the recipe.
  auto ownNvfp4 = [](const runtime::BufferContents &h) {
    return (h.part == runtime::HeldPart::Payload &&
            h.format == runtime::HeldFormat::E2M1) ||
           ((h.part == runtime::HeldPart::Scales ||
             h.part == runtime::HeldPart::ScaleTiles) &&
            h.format == runtime::HeldFormat::E4M3);
  };
  std::map<std::pair<runtime::HeldTensor, runtime::HeldLayout>, bool> format;
  for (const runtime::ManifestBuffer &buffer : m.buffers) {
    const runtime::BufferContents &h = buffer.holds;
    if (buffer.role == runtime::BufferRole::Workspace &&
        (h.part == runtime::HeldPart::Payload ||
         h.part == runtime::HeldPart::Scales))
      format[{h.tensor, h.layout}] |= ownNvfp4(h);
  }
  auto recipeNvfp4 = [&](runtime::HeldTensor tensor) {
    for (int u = 0; u < nm::kNumOperandUses; ++u) {
      const nm::OperandQuantization &op = recipe.operands[u];
      if (op.quantized && op.scale == nm::ScaleFormat::UE4M3 &&
          tensorOfUse(static_cast<nm::OperandUse>(u)) == tensor)
        return true;
    }
    return false;
  };
  auto isNvfp4 = [&](const runtime::BufferContents &h) {
    if (h.part != runtime::HeldPart::Dequantized)
      return ownNvfp4(h);
    if (h.layout != runtime::HeldLayout::PerToken)
      return false;
    auto it = format.find({h.tensor, h.layout});
    return it != format.end() ? it->second : recipeNvfp4(h.tensor);
  };
  DocumentLayout docs;
  FLAMIA_RETURN_IF_ERROR(documentsOf(b, docs));
  QuantizedReference reference(b, docs);

  // Each workspace buffer says what it holds (the manifest's "holds"): which
  // tensor, which scale layout, which part.
  for (const runtime::ManifestBuffer &buffer : m.buffers) {
    if (buffer.role != runtime::BufferRole::Workspace)
      continue;
    const runtime::BufferContents &holds = buffer.holds;
    if (holds.part == runtime::HeldPart::Scratch) {
      out.push_back({"workspace " + buffer.name, 0, 0, Verdict::Info,
                     "not checked: the kernels' scratch memory"});
      continue;
    }
    std::vector<uint8_t> gpu;
    if (holds.part == runtime::HeldPart::Delta) {
      // rowsum(dO * O) of the run's own O: exact in the reference.
      if (!o || !b.gradO) {
        out.push_back({copyCheckName(buffer.name, holds), 0, 0, Verdict::Skip,
                       "needs grad_o and the run's O"});
        continue;
      }
      FLAMIA_RETURN_IF_ERROR(fetch(buffer.name, gpu));
      out.push_back(checkDelta(buffer.name,
                               referenceDelta(b.gradO, o, b.T, b.Hq, b.D),
                               gpu.data(), gpu.size(), b.T, b.Hq));
      continue;
    }
    if (holds.part == runtime::HeldPart::ScaleTiles) {
      // sm_100a's scale-factor tiles: the same scales in the MMA's layout.
      const nm::QuantizedTensor *blocks = nullptr, *scales = nullptr;
      FLAMIA_RETURN_IF_ERROR(reference.get(
          holds.tensor, runtime::HeldLayout::TokenBlock, blocks));
      FLAMIA_RETURN_IF_ERROR(
          reference.get(holds.tensor, holds.layout, scales, isNvfp4(holds)));
      FLAMIA_RETURN_IF_ERROR(fetch(buffer.name, gpu));
      out.push_back(checkScaleTiles(buffer.name, holds, *blocks, *scales,
                                    gpu.data(), gpu.size()));
      continue;
    }
    FLAMIA_RETURN_IF_ERROR(fetch(buffer.name, gpu));
    const nm::QuantizedTensor *ref = nullptr;
    FLAMIA_RETURN_IF_ERROR(
        reference.get(holds.tensor, holds.layout, ref, isNvfp4(holds)));
    out.push_back(
        checkQuantizedCopy(buffer.name, holds, *ref, gpu.data(), gpu.size()));
  }
  return Status::success();
}

} // namespace flamia::validation::device
