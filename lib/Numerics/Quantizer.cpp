//===- Quantizer.cpp - The no-clipping block quantizer --------------------===//
#include "flamia/Numerics/Quantizer.h"

#include "flamia/Numerics/ExactSum.h"
#include "flamia/Numerics/Parallel.h"

#include <cfloat>
#include <cmath>
#include <limits>

namespace flamia::numerics {

std::string QuantFormat::name() const {
  if (scale == ScaleFormat::UE4M3)
    return element == ElementFormat::E2M1 ? "nvfp4" : "ue4m3-scaled";
  switch (element) {
  case ElementFormat::E4M3:
    return "mxfp8-e4m3";
  case ElementFormat::E5M2:
    return "mxfp8-e5m2";
  case ElementFormat::E2M1:
    return "mxfp4";
  }
  return "?";
}

bool QuantFormat::fromName(const std::string &name, QuantFormat &out) {
  if (name == "mxfp8-e4m3" || name == "mxfp8")
    out = kMXFP8E4M3;
  else if (name == "mxfp8-e5m2")
    out = kMXFP8E5M2;
  else if (name == "mxfp4")
    out = kMXFP4;
  else if (name == "nvfp4")
    out = kNVFP4;
  else
    return false;
  return true;
}

float elementMax(ElementFormat format) {
  switch (format) {
  case ElementFormat::E4M3:
    return kE4M3Max;
  case ElementFormat::E5M2:
    return kE5M2Max;
  case ElementFormat::E2M1:
    return kE2M1Max;
  }
  return 0;
}

int mxScaleExponent(double amax, double elementMax) {
  if (amax == 0.0)
    return -127;
  // amax = fa 2^ea, m = fm 2^em with fa, fm in [1/2, 1). amax <= m 2^e
  // <=> (fa / fm) 2^(ea - em) <= 2^e, and fa / fm lies in (1/2, 2): the
  // smallest such e is ea - em, plus one when fa > fm. No rounding anywhere.
  int ea, em;
  double fa = std::frexp(amax, &ea);
  double fm = std::frexp(elementMax, &em);
  int e = ea - em + (fa > fm ? 1 : 0);
  if (e < -127)
    e = -127;
  if (e > 127)
    e = 127;
  return e;
}

static uint8_t ue4m3ScaleCode(double amax, double elementMax) {
  if (amax == 0.0)
    return 0;
  // Positive E4M3 codes 0x01..0x7E are increasing in value; 6 s is exact.
  int lo = 1, hi = 0x7e;
  if (amax > elementMax * e4m3ToFloat(0x7e))
    return 0x7e;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (amax <= elementMax * e4m3ToFloat(static_cast<uint8_t>(mid)))
      hi = mid;
    else
      lo = mid + 1;
  }
  return static_cast<uint8_t>(lo);
}

uint8_t nvfp4ScaleCode(double amax) { return ue4m3ScaleCode(amax, kE2M1Max); }

uint8_t roundToE2M1Saturating(double x) {
  static const double kValues[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  uint8_t sign = std::signbit(x) ? 0x8 : 0x0;
  if (std::isnan(x))
    return sign;
  double a = std::fabs(x);
  if (a >= 6.0)
    return sign | 0x7;
  int k = 0;
  while (k < 7 && kValues[k + 1] <= a)
    ++k;
  double mid = 0.5 * (kValues[k] + kValues[k + 1]);
  if (a > mid || (a == mid && (k & 1)))
    ++k; // ties go to the even code (even mantissa bit)
  return sign | static_cast<uint8_t>(k);
}

uint8_t nanBlockElementCode(ElementFormat format) {
  return format == ElementFormat::E2M1 ? 0x0 : 0x7f;
}

double decodeScale(uint8_t code, ScaleFormat format) {
  if (format == ScaleFormat::UE4M3)
    return ue4m3ToFloat(code);
  if (code == kE8M0NaN)
    return std::numeric_limits<double>::quiet_NaN();
  return pow2(e8m0Exponent(code));
}

uint8_t quantizeBlock(const float *values, int64_t n, QuantFormat format,
                      uint8_t *codes) {
  float amax = 0.0f;
  bool nonFinite = false;
  for (int64_t k = 0; k < n; ++k) {
    float a = std::fabs(values[k]);
    if (!(a <= FLT_MAX))
      nonFinite = true;
    else if (a > amax)
      amax = a;
  }
  if (nonFinite) {
    uint8_t nanCode = nanBlockElementCode(format.element);
    for (int64_t k = 0; k < n; ++k)
      codes[k] = nanCode;
    return 0xff;
  }
  const double m = elementMax(format.element);
  if (format.scale == ScaleFormat::E8M0) {
    int e = mxScaleExponent(amax, m);
    const double inverse = pow2(-e); // x * 2^-e is exact
    for (int64_t k = 0; k < n; ++k)
      codes[k] = encodeElementSaturating(static_cast<double>(values[k]) * inverse,
                                         format.element);
    return e8m0FromExponent(e);
  }
  uint8_t scaleCode = ue4m3ScaleCode(amax, m);
  double s = e4m3ToFloat(scaleCode);
  for (int64_t k = 0; k < n; ++k) {
    double x = values[k];
    // Scale byte 0 only when amax = 0: every element is a (signed) zero.
    codes[k] = encodeElementSaturating(s == 0.0 ? x : x / s, format.element);
  }
  return scaleCode;
}

double QuantizedTensor::dequantize(int64_t t, int64_t h, int64_t d) const {
  uint8_t code = codes[(t * numHeads + h) * headDim + d];
  return static_cast<double>(decodeElement(code, format.element)) *
         decodeScale(scaleCode(t, h, d), format.scale);
}

std::vector<double> QuantizedTensor::dequantizeAll() const {
  std::vector<double> out(static_cast<size_t>(numTokens * numHeads * headDim));
  double scaleValues[256];
  for (int c = 0; c < 256; ++c)
    scaleValues[c] = decodeScale(static_cast<uint8_t>(c), format.scale);
  double elementValues[256];
  for (int c = 0; c < 256; ++c)
    elementValues[c] = decodeElement(static_cast<uint8_t>(c), format.element);
  for (int64_t t = 0; t < numTokens; ++t)
    for (int64_t h = 0; h < numHeads; ++h) {
      const uint8_t *sc =
          &scales[(static_cast<int64_t>(blocks.blockOfToken[t]) * numHeads +
                   h) * scaleChannels];
      int64_t base = (t * numHeads + h) * headDim;
      for (int64_t d = 0; d < headDim; ++d)
        out[base + d] = elementValues[codes[base + d]] *
                        scaleValues[sc[d / channelsPerScale]];
    }
  return out;
}

Status quantize(const float *x, int64_t numTokens, int64_t numHeads,
                int64_t headDim, const DocumentLayout &docs,
                const ScaleLayout &layout, QuantFormat format,
                QuantizedTensor &out) {
  if (Status s = layout.validate(headDim); !s)
    return s;
  if (docs.numTokens() != numTokens)
    return Status::error("the document layout covers " +
                         std::to_string(docs.numTokens()) +
                         " tokens, the tensor has " +
                         std::to_string(numTokens));
  QuantizedTensor q;
  q.numTokens = numTokens;
  q.numHeads = numHeads;
  q.headDim = headDim;
  q.format = format;
  q.layout = layout;
  q.blocks = makeTokenBlocks(docs, layout);
  q.scaleChannels = layout.scaleChannels(headDim);
  q.channelsPerScale = layout.channelsPerScale(headDim);
  q.codes.assign(static_cast<size_t>(numTokens * numHeads * headDim), 0);
  const int64_t NB = q.blocks.numBlocks();
  q.scales.assign(static_cast<size_t>(NB * numHeads * q.scaleChannels), 0);
  const int64_t C = q.channelsPerScale;
  parallelFor(NB * numHeads, [&](int64_t item) {
    int64_t block = item / numHeads, h = item % numHeads;
    int64_t t0 = q.blocks.begin[block], t1 = q.blocks.end[block];
    std::vector<float> values(static_cast<size_t>((t1 - t0) * C));
    std::vector<uint8_t> codes(values.size());
    for (int64_t c = 0; c < q.scaleChannels; ++c) {
      for (int64_t t = t0; t < t1; ++t)
        for (int64_t k = 0; k < C; ++k)
          values[(t - t0) * C + k] = x[(t * numHeads + h) * headDim + c * C + k];
      q.scales[(block * numHeads + h) * q.scaleChannels + c] =
          quantizeBlock(values.data(), static_cast<int64_t>(values.size()),
                        format, codes.data());
      for (int64_t t = t0; t < t1; ++t)
        for (int64_t k = 0; k < C; ++k)
          q.codes[(t * numHeads + h) * headDim + c * C + k] =
              codes[(t - t0) * C + k];
    }
  });
  out = std::move(q);
  return Status::success();
}

} // namespace flamia::numerics
