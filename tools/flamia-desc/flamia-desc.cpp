//===- flamia-desc.cpp - Descriptor values from FLAMIA's encoders ---------===//
//
// flamia-desc prints the descriptors and opcodes FLAMIA's encoders
// (lib/Target) produce, and fills them into hand-written PTX:
//
//   flamia-desc DIRECTIVE key=value...      print one value
//   flamia-desc fill INPUT [-o OUTPUT]      replace every {{DIRECTIVE ...}}
//
// Directives:
//   idesc        tcgen05.mma instruction descriptor (hex)
//                  kind=f16|tf32|f8f6f4|i8|mxf8f6f4|mxf4|mxf4nvf4 a= b= [d=]
//                  m= n= [cta=1] [amajor=k|mn] [bmajor=k|mn] [nega=0] [negb=0]
//                  [scale=ue8m0|ue4m3] [vec=1|2|4] [sfa=0] [sfb=0]
//   mma-opcode   the tcgen05.mma opcode for the same keys
//   smem-desc    tcgen05 shared-memory descriptor of an operand tile (hex)
//                  major=k|mn swizzle=none|32|64|128 bits=8|16|32 mn= k=
//                  [order=mn|k] [k0=0] [offset=0]
//   sf-desc      tcgen05.cp 32x128b source descriptor of a scale tile [offset=0]
//   wgmma-desc   wgmma descriptor of an operand tile (keys as smem-desc)
//   wgmma-opcode the wgmma.mma_async opcode: a= b= d= n=
//   tmem         tensor-memory address: lane= col=
//
// `offset` is the tile's start relative to the kernel's shared-memory base;
// the kernel adds (base >> 4) to the start-address field at run time. The
// default atom order follows TMA: MN-fastest for K-major tiles, K-fastest for
// MN-major tiles. Any rule an encoder rejects is an error (exit status 1).
//
//===----------------------------------------------------------------------===//
#include "flamia/Target/Sm100InstrDescriptor.h"
#include "flamia/Target/Sm100SmemDescriptor.h"
#include "flamia/Target/Sm90WgmmaDescriptor.h"
#include "flamia/Target/TmemAddress.h"
#include "flamia/Support/CommandLine.h"
#include "flamia/Support/FileOutput.h"
#include "flamia/Support/Version.h"

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace flamia;

namespace {

using Args = std::map<std::string, std::string>;

bool parseArgs(const std::vector<std::string> &words, Args &args,
               std::string &error) {
  for (const std::string &w : words) {
    size_t eq = w.find('=');
    if (eq == std::string::npos || eq == 0) {
      error = "expected key=value, got '" + w + "'";
      return false;
    }
    args[w.substr(0, eq)] = w.substr(eq + 1);
  }
  return true;
}

/// Takes `key` out of `args` (so leftovers can be reported).
bool take(Args &args, const char *key, std::string &value, const char *dflt,
          std::string &error) {
  auto it = args.find(key);
  if (it == args.end()) {
    if (!dflt) {
      error = std::string("missing ") + key + "=";
      return false;
    }
    value = dflt;
    return true;
  }
  value = it->second;
  args.erase(it);
  return true;
}

bool takeUInt(Args &args, const char *key, uint32_t &value, const char *dflt,
              std::string &error) {
  std::string s;
  if (!take(args, key, s, dflt, error))
    return false;
  // Digits only (decimal, or hex with 0x): strtoul alone would also take
  // leading spaces, '+' and '-' (and wrap "-1" around).
  char *end = nullptr;
  errno = 0;
  unsigned long long v =
      !s.empty() && s[0] >= '0' && s[0] <= '9' ? std::strtoull(s.c_str(), &end, 0)
                                               : 0;
  if (s.empty() || !end || *end || errno == ERANGE || v > 0xFFFFFFFFull) {
    error = std::string(key) + "=" + s + " is not an unsigned integer";
    return false;
  }
  value = static_cast<uint32_t>(v);
  return true;
}

bool noLeftovers(const Args &args, std::string &error) {
  if (args.empty())
    return true;
  error = "unknown key " + args.begin()->first + "=";
  return false;
}

bool parseMajor(const std::string &s, OperandMajor &m, std::string &error) {
  if (s == "k")
    m = OperandMajor::K;
  else if (s == "mn")
    m = OperandMajor::MN;
  else {
    error = "major must be k or mn, not " + s;
    return false;
  }
  return true;
}

bool parseSm100Config(Args &args, Sm100MmaConfig &c, std::string &error) {
  std::string kind, a, b, d, amajor, bmajor, scale;
  uint32_t nega, negb, vec, sfa, sfb, cta;
  if (!take(args, "kind", kind, nullptr, error) ||
      !take(args, "a", a, nullptr, error) || !take(args, "b", b, nullptr, error) ||
      !take(args, "d", d, "", error) ||
      !takeUInt(args, "m", c.m, nullptr, error) ||
      !takeUInt(args, "n", c.n, nullptr, error) ||
      !takeUInt(args, "cta", cta, "1", error) ||
      !take(args, "amajor", amajor, "k", error) ||
      !take(args, "bmajor", bmajor, "k", error) ||
      !takeUInt(args, "nega", nega, "0", error) ||
      !takeUInt(args, "negb", negb, "0", error) ||
      !take(args, "scale", scale, "ue8m0", error) ||
      !takeUInt(args, "vec", vec, "0", error) ||
      !takeUInt(args, "sfa", sfa, "0", error) ||
      !takeUInt(args, "sfb", sfb, "0", error))
    return false;
  const Sm100MmaKind kinds[] = {Sm100MmaKind::F16,      Sm100MmaKind::TF32,
                                Sm100MmaKind::F8F6F4,   Sm100MmaKind::I8,
                                Sm100MmaKind::MXF8F6F4, Sm100MmaKind::MXF4,
                                Sm100MmaKind::MXF4NVF4};
  bool found = false;
  for (Sm100MmaKind k : kinds)
    if (kind == sm100MmaKindName(k)) {
      c.kind = k;
      found = true;
    }
  if (!found) {
    error = "unknown kind " + kind;
    return false;
  }
  auto parseType = [&](const std::string &s, Sm100ElementType &t) {
    for (int i = 0; i <= static_cast<int>(Sm100ElementType::S8); ++i)
      if (s == sm100ElementTypeName(static_cast<Sm100ElementType>(i))) {
        t = static_cast<Sm100ElementType>(i);
        return true;
      }
    error = "unknown element type " + s;
    return false;
  };
  if (!parseType(a, c.aType) || !parseType(b, c.bType))
    return false;
  if (d.empty())
    d = c.kind == Sm100MmaKind::I8 ? "s32" : "f32";
  if (d == "f16")
    c.dType = Sm100AccumType::F16;
  else if (d == "f32")
    c.dType = Sm100AccumType::F32;
  else if (d == "s32")
    c.dType = Sm100AccumType::S32;
  else {
    error = "d must be f16, f32 or s32, not " + d;
    return false;
  }
  if (!parseMajor(amajor, c.aMajor, error) || !parseMajor(bmajor, c.bMajor, error))
    return false;
  c.ctaGroup = cta;
  c.negateA = nega;
  c.negateB = negb;
  if (scale == "ue8m0")
    c.scaleType = Sm100ScaleType::UE8M0;
  else if (scale == "ue4m3")
    c.scaleType = Sm100ScaleType::UE4M3;
  else {
    error = "scale must be ue8m0 or ue4m3, not " + scale;
    return false;
  }
  if (vec == 0) // the kind's default: 1X, 2X, or 4X for ue4m3
    vec = c.kind == Sm100MmaKind::MXF8F6F4 ? 1
          : (c.kind == Sm100MmaKind::MXF4NVF4 && c.scaleType == Sm100ScaleType::UE4M3) ? 4
                                                                                         : 2;
  if (vec != 1 && vec != 2 && vec != 4) {
    error = "vec must be 1, 2 or 4";
    return false;
  }
  c.scaleVec = static_cast<Sm100ScaleVec>(vec);
  c.aScaleFactorId = static_cast<uint8_t>(sfa);
  c.bScaleFactorId = static_cast<uint8_t>(sfb);
  return noLeftovers(args, error);
}

bool parseTile(Args &args, SmemOperandTile &t, uint32_t &k0, uint32_t &offset,
               std::string &error) {
  std::string major, swizzle, order;
  if (!take(args, "major", major, nullptr, error) ||
      !take(args, "swizzle", swizzle, nullptr, error) ||
      !takeUInt(args, "bits", t.elementBits, nullptr, error) ||
      !takeUInt(args, "mn", t.mnExtent, nullptr, error) ||
      !takeUInt(args, "k", t.kExtent, nullptr, error) ||
      !take(args, "order", order, "", error) ||
      !takeUInt(args, "k0", k0, "0", error) ||
      !takeUInt(args, "offset", offset, "0", error))
    return false;
  if (!parseMajor(major, t.major, error))
    return false;
  if (swizzle == "none")
    t.swizzle = SmemSwizzle::None;
  else if (swizzle == "32")
    t.swizzle = SmemSwizzle::B32;
  else if (swizzle == "64")
    t.swizzle = SmemSwizzle::B64;
  else if (swizzle == "128")
    t.swizzle = SmemSwizzle::B128;
  else {
    error = "swizzle must be none, 32, 64 or 128, not " + swizzle;
    return false;
  }
  if (order.empty())
    order = t.major == OperandMajor::K ? "mn" : "k";
  if (order == "mn")
    t.order = AtomOrder::MNFastest;
  else if (order == "k")
    t.order = AtomOrder::KFastest;
  else {
    error = "order must be mn or k, not " + order;
    return false;
  }
  return noLeftovers(args, error);
}

std::string hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08" PRIx32, v);
  return buf;
}
std::string hex64(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016" PRIx64, v);
  return buf;
}

/// Evaluates one directive; the value is the text to substitute.
bool evaluate(const std::string &name, const std::vector<std::string> &words,
              std::string &value, std::string &error) {
  Args args;
  if (!parseArgs(words, args, error))
    return false;
  if (name == "idesc" || name == "mma-opcode") {
    Sm100MmaConfig c;
    if (!parseSm100Config(args, c, error))
      return false;
    uint32_t d = 0;
    if (!encodeSm100InstrDescriptor(c, d, error))
      return false;
    value = name == "idesc" ? hex32(d) : sm100MmaOpcode(c);
    return true;
  }
  if (name == "smem-desc" || name == "wgmma-desc") {
    SmemOperandTile t;
    uint32_t k0 = 0, offset = 0;
    if (!parseTile(args, t, k0, offset, error))
      return false;
    uint64_t d = 0;
    bool ok = name == "smem-desc"
                  ? makeSm100OperandDescriptor(t, offset, k0, d, error)
                  : makeSm90OperandDescriptor(t, offset, k0, d, error);
    if (!ok)
      return false;
    value = hex64(d);
    return true;
  }
  if (name == "sf-desc") {
    uint32_t offset = 0;
    if (!takeUInt(args, "offset", offset, "0", error) || !noLeftovers(args, error))
      return false;
    uint64_t d = 0;
    if (!makeSm100ScaleFactorCopyDescriptor(offset, d, error))
      return false;
    value = hex64(d);
    return true;
  }
  if (name == "wgmma-opcode") {
    std::string a, b, d;
    Sm90WgmmaConfig c;
    if (!take(args, "a", a, nullptr, error) || !take(args, "b", b, nullptr, error) ||
        !take(args, "d", d, "f32", error) ||
        !takeUInt(args, "n", c.n, nullptr, error) || !noLeftovers(args, error))
      return false;
    auto parseType = [&](const std::string &s, Sm90WgmmaType &t) {
      for (int i = 0; i <= static_cast<int>(Sm90WgmmaType::B1); ++i)
        if (s == sm90WgmmaTypeName(static_cast<Sm90WgmmaType>(i))) {
          t = static_cast<Sm90WgmmaType>(i);
          return true;
        }
      error = "unknown wgmma type " + s;
      return false;
    };
    if (!parseType(a, c.aType) || !parseType(b, c.bType))
      return false;
    c.dType = d == "f16" ? Sm90AccumType::F16
              : d == "s32" ? Sm90AccumType::S32
                           : Sm90AccumType::F32;
    if (!validateSm90Wgmma(c, error))
      return false;
    value = sm90WgmmaOpcode(c);
    return true;
  }
  if (name == "tmem") {
    uint32_t lane = 0, col = 0;
    if (!takeUInt(args, "lane", lane, nullptr, error) ||
        !takeUInt(args, "col", col, nullptr, error) || !noLeftovers(args, error) ||
        !validateTmemCell(lane, col, error))
      return false;
    value = hex32(encodeTmemAddress(lane, col));
    return true;
  }
  error = "unknown directive '" + name + "'";
  return false;
}

std::vector<std::string> split(const std::string &s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  std::string w;
  while (in >> w)
    out.push_back(w);
  return out;
}

int fill(const std::string &input, const std::string &output) {
  std::ifstream in(input);
  if (!in) {
    std::fprintf(stderr, "flamia-desc: cannot read %s\n", input.c_str());
    return 2;
  }
  std::ostringstream result;
  std::string line;
  unsigned lineNo = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    std::string out;
    size_t pos = 0;
    while (true) {
      size_t open = line.find("{{", pos);
      if (open == std::string::npos) {
        out += line.substr(pos);
        break;
      }
      size_t close = line.find("}}", open);
      if (close == std::string::npos) {
        std::fprintf(stderr, "%s:%u: unterminated {{\n", input.c_str(), lineNo);
        return 1;
      }
      out += line.substr(pos, open - pos);
      std::vector<std::string> words = split(line.substr(open + 2, close - open - 2));
      if (words.empty()) {
        std::fprintf(stderr, "%s:%u: empty directive\n", input.c_str(), lineNo);
        return 1;
      }
      std::string name = words.front(), value, error;
      words.erase(words.begin());
      if (!evaluate(name, words, value, error)) {
        std::fprintf(stderr, "%s:%u: %s: %s\n", input.c_str(), lineNo,
                     name.c_str(), error.c_str());
        return 1;
      }
      out += value;
      pos = close + 2;
    }
    result << out << '\n';
  }
  if (output.empty() || output == "-") {
    std::fputs(result.str().c_str(), stdout);
    return 0;
  }
  const std::string text = result.str();
  std::string error;
  if (!writeFileAtomically(output, text.data(), text.size(), error)) {
    std::fprintf(stderr, "flamia-desc: %s\n", error.c_str());
    return 2;
  }
  return 0;
}

void usage(FILE *to) {
  std::fputs("usage: flamia-desc DIRECTIVE key=value...\n"
             "       flamia-desc fill INPUT [-o OUTPUT]\n"
             "       flamia-desc --version\n"
             "directives: idesc mma-opcode smem-desc sf-desc wgmma-desc "
             "wgmma-opcode tmem\n"
             "(see the comment at the top of tools/flamia-desc/flamia-desc.cpp)\n",
             to);
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  std::string cmd = argv[1];
  if (cmd == "-h" || cmd == "--help" || cmd == "help") {
    usage(stdout);
    return 0;
  }
  if (cmd == "--version") {
    std::printf("flamia-desc %s\n", versionBanner());
    return 0;
  }
  if (cmd == "fill") {
    cli::CommandLine cl;
    cl.addString("-o", "OUTPUT");
    std::string error;
    if (!cl.parse(argc, argv, 2, error) || cl.positional().size() != 1) {
      if (error.empty())
        error = cl.positional().empty() ? "missing INPUT"
                                        : "expected one INPUT, got " +
                                              std::to_string(cl.positional().size());
      std::fprintf(stderr, "flamia-desc: fill: %s\n", error.c_str());
      usage(stderr);
      return 2;
    }
    return fill(cl.positional().front(), cl.value("-o").value_or(""));
  }
  std::vector<std::string> words(argv + 2, argv + argc);
  std::string value, error;
  if (!evaluate(cmd, words, value, error)) {
    std::fprintf(stderr, "flamia-desc: %s: %s\n", cmd.c_str(), error.c_str());
    return 1;
  }
  std::printf("%s\n", value.c_str());
  return 0;
}
