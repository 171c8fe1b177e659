//===- QuantizeCommand.cpp - flamia-ref quantize -----------------*- C++ -*-===//
//
// flamia-ref quantize --format {mxfp8-e4m3,mxfp8-e5m2,mxfp4,nvfp4}
//                     --block TxC|tensor [--packed] [--cu-seqlens CU.npy]
//                     IN.npy -o PREFIX
//
//===----------------------------------------------------------------------===//
#include "ArrayFiles.h"
#include "CommandLine.h"

#include "flamia/Numerics/Quantizer.h"
#include "flamia/Support/Validation.h"

#include <cstdio>
#include <cstring>

namespace flamia::ref {

using namespace numerics;

static const char *kQuantizeUsage =
    "usage: flamia-ref quantize --format FORMAT --block TxC [--packed]\n"
    "                           [--cu-seqlens CU.npy] IN.npy -o PREFIX\n"
    "\n"
    "Quantizes IN.npy (float32 [T, H, D]) with the no-clipping scale rule of\n"
    "docs/numerics.md and writes\n"
    "  PREFIX.data.npy    uint8 [T, H, D], element bit codes (FP4: one code per\n"
    "                     byte, in the low nibble)\n"
    "  PREFIX.scales.npy  uint8 [NB, H, D/C], scale bit codes (E8M0, or E4M3\n"
    "                     for nvfp4), token blocks numbered in document order\n"
    "\n"
    "  --format       mxfp8-e4m3 | mxfp8-e5m2 | mxfp4 | nvfp4\n"
    "  --block TxC    token block x channel block, or 'tensor' (one scale per\n"
    "                 head; MX formats only). C is 32 for the MX formats, 16\n"
    "                 for nvfp4; T is 1 or a multiple of 16 (1x32, 32x32,\n"
    "                 1x16, 16x16, ...)\n"
    "  --packed       token blocks aligned to the packed tensor instead of to\n"
    "                 each document's first token (leaks across documents;\n"
    "                 for demonstrations only)\n"
    "  --cu-seqlens   int32 [num_docs + 1] document boundaries (default: one\n"
    "                 document)\n";

/// validation::validateFormatBlock for a QuantFormat and ScaleLayout;
/// headDim < 1: not known yet.
static bool checkFormatBlock(const QuantFormat &format,
                             const ScaleLayout &layout, int64_t headDim,
                             std::string &error) {
  using namespace validation;
  const ElementEncoding element =
      format.element == ElementFormat::E4M3   ? ElementEncoding::E4M3
      : format.element == ElementFormat::E5M2 ? ElementEncoding::E5M2
                                              : ElementEncoding::E2M1;
  const ScaleEncoding scale = format.scale == ScaleFormat::E8M0
                                  ? ScaleEncoding::E8M0
                                  : ScaleEncoding::UE4M3;
  return validateFormatBlock(
      element, scale, layout.blocking == TokenBlocking::PerTensor,
      layout.tokenBlock, layout.channelBlock, headDim, format.name(), error);
}

static bool parseBlock(const std::string &text, ScaleLayout &layout) {
  if (text == "tensor") {
    layout = ScaleLayout::perTensor();
    return true;
  }
  size_t x = text.find('x');
  if (x == std::string::npos)
    return false;
  int64_t t, c;
  if (!parseInt(text.substr(0, x), t) || !parseInt(text.substr(x + 1), c) ||
      t < 1 || c < 1 || t > validation::kMaxTokens || c > (1 << 20))
    return false;
  layout = ScaleLayout::documentLocal(t, c);
  return true;
}

int runQuantizeCommand(int argc, char **argv) {
  const char *cmd = "quantize";
  CommandLine cl;
  cl.addString("--format", "FORMAT")
      .addString("--block", "TxC")
      .addString("--cu-seqlens", "CU.npy")
      .addString("-o", "PREFIX")
      .addFlag("--packed")
      .addFlag({"-h", "--help"});
  std::string error;
  if (!cl.parse(argc, argv, 1, error))
    return badInput(cmd, error + "\n" + kQuantizeUsage);
  if (cl.flag("--help")) {
    std::fputs(kQuantizeUsage, stdout);
    return 0;
  }
  auto formatName = cl.value("--format");
  auto blockText = cl.value("--block");
  auto prefix = cl.value("-o");
  if (!formatName)
    return badInput(cmd, "missing --format (mxfp8-e4m3, mxfp8-e5m2, mxfp4 or "
                         "nvfp4)");
  QuantFormat format;
  if (!QuantFormat::fromName(*formatName, format))
    return badInput(cmd, "unknown format '" + *formatName +
                             "' (expected mxfp8-e4m3, mxfp8-e5m2, mxfp4 or "
                             "nvfp4)");
  if (!blockText)
    return badInput(cmd, "missing --block TxC (for example 1x32 or 32x32)");
  ScaleLayout layout;
  if (!parseBlock(*blockText, layout))
    return badInput(cmd, "malformed --block '" + *blockText +
                             "' (expected TxC with positive integers, for "
                             "example 32x32, or 'tensor')");
  if (cl.flag("--packed")) {
    if (layout.blocking == TokenBlocking::PerTensor)
      return badInput(cmd, "--packed does not apply to --block tensor");
    layout.blocking = TokenBlocking::Packed;
  }
  if (!checkFormatBlock(format, layout, -1, error))
    return badInput(cmd, "--format " + *formatName + " --block " +
                             *blockText + ": " + error);
  if (!prefix)
    return badInput(cmd, "missing -o PREFIX");
  if (cl.positional().size() != 1)
    return badInput(cmd, "expected exactly one input file IN.npy, got " +
                             std::to_string(cl.positional().size()));

  NpyArray input;
  if (!loadArray(cl.positional()[0], "input", NpyDType::Float32, 3,
                 "[T, H, D]", input, error) ||
      !checkTokenTensor(input, "input", error))
    return badInput(cmd, error);
  const int64_t T = input.shape[0], H = input.shape[1], D = input.shape[2];
  if (!checkFormatBlock(format, layout, D, error))
    return badInput(cmd, "input (" + cl.positional()[0] + "): " + error);
  if (Status s = layout.validate(D); !s)
    return badInput(cmd, "input (" + cl.positional()[0] + "): " + s.message);
  DocumentLayout docs = DocumentLayout::singleDocument(T);
  if (auto cu = cl.value("--cu-seqlens"))
    if (!loadCuSeqlens(*cu, T, docs, error))
      return badInput(cmd, error);

  QuantizedTensor q;
  if (Status s = quantize(input.data<float>(), T, H, D, docs, layout, format, q);
      !s)
    return badInput(cmd, s.message);
  NpyArray data = makeNpyArray(NpyDType::UInt8, {T, H, D});
  std::memcpy(data.bytes.data(), q.codes.data(), q.codes.size());
  NpyArray scales =
      makeNpyArray(NpyDType::UInt8, {q.blocks.numBlocks(), H, q.scaleChannels});
  std::memcpy(scales.bytes.data(), q.scales.data(), q.scales.size());
  if (!writeAll({{*prefix + ".data.npy", data}, {*prefix + ".scales.npy", scales}},
                error))
    return badInput(cmd, error);
  return 0;
}

} // namespace flamia::ref
