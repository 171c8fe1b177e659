//===- Sm100InstrDescriptor.cpp - tcgen05.mma instruction descriptor ------===//
#include "flamia/Target/Sm100InstrDescriptor.h"

#include <cstdio>

namespace flamia {

namespace {

std::string hex(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

bool isFp8f6f4(Sm100ElementType t) {
  return t == Sm100ElementType::E4M3 || t == Sm100ElementType::E5M2 ||
         t == Sm100ElementType::E2M3 || t == Sm100ElementType::E3M2 ||
         t == Sm100ElementType::E2M1;
}

bool isInt8(Sm100ElementType t) {
  return t == Sm100ElementType::U8 || t == Sm100ElementType::S8;
}

/// The 3-bit type code of `t` under `kind` (Tables 42-44), or -1.
int typeCode(Sm100MmaKind kind, Sm100ElementType t) {
  switch (kind) {
  case Sm100MmaKind::F16:
    return t == Sm100ElementType::F16 ? 0 : t == Sm100ElementType::BF16 ? 1 : -1;
  case Sm100MmaKind::TF32:
    return t == Sm100ElementType::TF32 ? 2 : -1;
  case Sm100MmaKind::F8F6F4:
  case Sm100MmaKind::MXF8F6F4:
    switch (t) {
    case Sm100ElementType::E4M3:
      return 0;
    case Sm100ElementType::E5M2:
      return 1;
    case Sm100ElementType::E2M3:
      return 3;
    case Sm100ElementType::E3M2:
      return 4;
    case Sm100ElementType::E2M1:
      return 5;
    default:
      return -1;
    }
  case Sm100MmaKind::I8:
    return t == Sm100ElementType::U8 ? 0 : t == Sm100ElementType::S8 ? 1 : -1;
  case Sm100MmaKind::MXF4:
  case Sm100MmaKind::MXF4NVF4:
    return t == Sm100ElementType::E2M1 ? 1 : -1;
  }
  return -1;
}

bool typeFromCode(Sm100MmaKind kind, unsigned code, Sm100ElementType &t) {
  for (Sm100ElementType c :
       {Sm100ElementType::F16, Sm100ElementType::BF16, Sm100ElementType::TF32,
        Sm100ElementType::E4M3, Sm100ElementType::E5M2, Sm100ElementType::E2M3,
        Sm100ElementType::E3M2, Sm100ElementType::E2M1, Sm100ElementType::U8,
        Sm100ElementType::S8})
    if (typeCode(kind, c) == int(code)) {
      t = c;
      return true;
    }
  return false;
}

// Reserved bits per layout (plus the fields FLAMIA keeps 0: sparsity selector
// and flag, .ws max shift, the mxf4 K=96 bit).
constexpr uint32_t kReservedTable42 = 0x3u /*0-1 selector*/ | (1u << 2) |
                                      (1u << 6) | (1u << 23) | (1u << 29) |
                                      (0x3u << 30) /*max shift*/;
constexpr uint32_t kReservedTable43 = 0x3u | (1u << 2) | (1u << 3) | (1u << 6) |
                                      (0x7u << 24) | (1u << 31);
constexpr uint32_t kReservedTable44 = 0x3u | (1u << 2) | (1u << 3) | (1u << 6) |
                                      (1u << 12) | (0x7u << 24) |
                                      (1u << 31) /*K=96*/;

uint32_t reservedMask(Sm100MmaKind kind) {
  switch (kind) {
  case Sm100MmaKind::MXF8F6F4:
    return kReservedTable43;
  case Sm100MmaKind::MXF4:
  case Sm100MmaKind::MXF4NVF4:
    return kReservedTable44;
  default:
    return kReservedTable42;
  }
}

bool checkN(const Sm100MmaConfig &c, std::string &error) {
  uint32_t n = c.n;
  uint32_t lo, step;
  const char *rule;
  bool eightBitTransposedB =
      c.bMajor == OperandMajor::MN && sm100ElementBits(c.bType) == 8;
  if (eightBitTransposedB) {
    // Table 50: N for 8-bit transpose B.
    lo = c.ctaGroup == 1 ? 16 : 32;
    step = lo;
    rule = "8-bit MN-major B (PTX ISA Table 50)";
  } else if (c.kind == Sm100MmaKind::I8) {
    // Table 39: cta_group::1 N = {8, 16, 24, 32, 48, ..., 256} (step 16
    // after 32); cta_group::2 N = {32, 64, ..., 256}.
    if (c.ctaGroup == 1) {
      bool ok = n >= 8 && n <= 256 && (n <= 32 ? n % 8 == 0 : n % 16 == 0);
      if (!ok)
        error = "N = " + std::to_string(n) +
                " is not legal for kind::i8 with cta_group::1 (8, 16, 24, 32, "
                "then steps of 16 up to 256; PTX ISA Table 39)";
      return ok;
    }
    lo = 32;
    step = 32;
    rule = "kind::i8 with cta_group::2 (PTX ISA Table 39)";
  } else {
    lo = c.ctaGroup == 1 ? 8 : 16;
    step = lo;
    rule = c.ctaGroup == 1 ? "cta_group::1 (PTX ISA Table 39)"
                           : "cta_group::2 (PTX ISA Table 39)";
  }
  if (n < lo || n > 256 || n % step) {
    error = "N = " + std::to_string(n) + " is not legal for " + rule +
            ": N must be a multiple of " + std::to_string(step) + " in [" +
            std::to_string(lo) + ", 256]";
    return false;
  }
  return true;
}

} // namespace

bool Sm100MmaConfig::operator==(const Sm100MmaConfig &o) const {
  return kind == o.kind && aType == o.aType && bType == o.bType &&
         dType == o.dType && aMajor == o.aMajor && bMajor == o.bMajor &&
         negateA == o.negateA && negateB == o.negateB && m == o.m &&
         n == o.n && ctaGroup == o.ctaGroup && scaleType == o.scaleType &&
         scaleVec == o.scaleVec && aScaleFactorId == o.aScaleFactorId &&
         bScaleFactorId == o.bScaleFactorId && saturate == o.saturate;
}

const char *sm100MmaKindName(Sm100MmaKind kind) {
  switch (kind) {
  case Sm100MmaKind::F16:
    return "f16";
  case Sm100MmaKind::TF32:
    return "tf32";
  case Sm100MmaKind::F8F6F4:
    return "f8f6f4";
  case Sm100MmaKind::I8:
    return "i8";
  case Sm100MmaKind::MXF8F6F4:
    return "mxf8f6f4";
  case Sm100MmaKind::MXF4:
    return "mxf4";
  case Sm100MmaKind::MXF4NVF4:
    return "mxf4nvf4";
  }
  return "?";
}

const char *sm100ElementTypeName(Sm100ElementType type) {
  switch (type) {
  case Sm100ElementType::F16:
    return "f16";
  case Sm100ElementType::BF16:
    return "bf16";
  case Sm100ElementType::TF32:
    return "tf32";
  case Sm100ElementType::E4M3:
    return "e4m3";
  case Sm100ElementType::E5M2:
    return "e5m2";
  case Sm100ElementType::E2M3:
    return "e2m3";
  case Sm100ElementType::E3M2:
    return "e3m2";
  case Sm100ElementType::E2M1:
    return "e2m1";
  case Sm100ElementType::U8:
    return "u8";
  case Sm100ElementType::S8:
    return "s8";
  }
  return "?";
}

bool isSm100BlockScaledKind(Sm100MmaKind kind) {
  return kind == Sm100MmaKind::MXF8F6F4 || kind == Sm100MmaKind::MXF4 ||
         kind == Sm100MmaKind::MXF4NVF4;
}

unsigned sm100ElementBits(Sm100ElementType type) {
  switch (type) {
  case Sm100ElementType::F16:
  case Sm100ElementType::BF16:
    return 16;
  case Sm100ElementType::TF32:
    return 32;
  case Sm100ElementType::E2M3:
  case Sm100ElementType::E3M2:
    return 6;
  case Sm100ElementType::E2M1:
    return 4;
  default:
    return 8;
  }
}

unsigned sm100MmaK(Sm100MmaKind kind) {
  switch (kind) {
  case Sm100MmaKind::F16:
    return 16;
  case Sm100MmaKind::TF32:
    return 8;
  case Sm100MmaKind::MXF4:
  case Sm100MmaKind::MXF4NVF4:
    return 64;
  default:
    return 32;
  }
}

unsigned sm100ScaleBlockSize(Sm100MmaKind kind, Sm100ScaleVec vec) {
  return sm100MmaK(kind) / static_cast<unsigned>(vec);
}

bool validateSm100Mma(const Sm100MmaConfig &c, std::string &error) {
  const std::string kindName = std::string("kind::") + sm100MmaKindName(c.kind);
  if (c.ctaGroup != 1 && c.ctaGroup != 2) {
    error = "cta_group must be 1 or 2, not " + std::to_string(c.ctaGroup);
    return false;
  }
  // Element and accumulator types (Tables 39, 42-44, 55).
  auto badTypes = [&](const char *legal) {
    error = kindName + " does not take " + sm100ElementTypeName(c.aType) +
            " x " + sm100ElementTypeName(c.bType) + " (legal: " + legal +
            "; PTX ISA Table 39)";
    return false;
  };
  auto badAccum = [&](const char *legal) {
    error = kindName + " with " + sm100ElementTypeName(c.aType) +
            " inputs cannot accumulate into " +
            (c.dType == Sm100AccumType::F16   ? "f16"
             : c.dType == Sm100AccumType::F32 ? "f32"
                                              : "s32") +
            " (legal: " + legal + "; PTX ISA Table 39)";
    return false;
  };
  switch (c.kind) {
  case Sm100MmaKind::F16:
    if (typeCode(c.kind, c.aType) < 0 || typeCode(c.kind, c.bType) < 0)
      return badTypes("f16 or bf16");
    if (c.aType != c.bType)
      return badTypes("A and B of the same type; FLAMIA does not mix f16 and "
                      "bf16");
    if (c.dType == Sm100AccumType::S32 ||
        (c.dType == Sm100AccumType::F16 && c.aType != Sm100ElementType::F16))
      return badAccum("f32, or f16 for f16 inputs");
    break;
  case Sm100MmaKind::TF32:
    if (c.aType != Sm100ElementType::TF32 || c.bType != Sm100ElementType::TF32)
      return badTypes("tf32");
    if (c.dType != Sm100AccumType::F32)
      return badAccum("f32");
    break;
  case Sm100MmaKind::F8F6F4:
    if (!isFp8f6f4(c.aType) || !isFp8f6f4(c.bType))
      return badTypes("e4m3, e5m2, e2m3, e3m2, e2m1, mixed freely");
    if (c.dType == Sm100AccumType::S32)
      return badAccum("f32 or f16");
    break;
  case Sm100MmaKind::I8:
    if (!isInt8(c.aType) || !isInt8(c.bType))
      return badTypes("s8, u8");
    if (c.dType != Sm100AccumType::S32)
      return badAccum("s32");
    break;
  case Sm100MmaKind::MXF8F6F4:
    if (!isFp8f6f4(c.aType) || !isFp8f6f4(c.bType))
      return badTypes("e4m3, e5m2, e2m3, e3m2, e2m1, mixed freely");
    if (c.dType != Sm100AccumType::F32)
      return badAccum("f32");
    break;
  case Sm100MmaKind::MXF4:
  case Sm100MmaKind::MXF4NVF4:
    if (c.aType != Sm100ElementType::E2M1 || c.bType != Sm100ElementType::E2M1)
      return badTypes("e2m1");
    if (c.dType != Sm100AccumType::F32)
      return badAccum("f32");
    break;
  }
  // Scale type and vector size (Tables 54, 55).
  if (isSm100BlockScaledKind(c.kind)) {
    bool ok = false;
    const char *legal = "";
    switch (c.kind) {
    case Sm100MmaKind::MXF8F6F4:
      ok = c.scaleType == Sm100ScaleType::UE8M0 && c.scaleVec == Sm100ScaleVec::X1;
      legal = "ue8m0 with scale_vec::1X (block32)";
      break;
    case Sm100MmaKind::MXF4:
      ok = c.scaleType == Sm100ScaleType::UE8M0 && c.scaleVec == Sm100ScaleVec::X2;
      legal = "ue8m0 with scale_vec::2X (block32)";
      break;
    default:
      ok = (c.scaleType == Sm100ScaleType::UE8M0 &&
            (c.scaleVec == Sm100ScaleVec::X2 || c.scaleVec == Sm100ScaleVec::X4)) ||
           (c.scaleType == Sm100ScaleType::UE4M3 && c.scaleVec == Sm100ScaleVec::X4);
      legal = "ue8m0 with scale_vec::2X or 4X, ue4m3 with scale_vec::4X";
      break;
    }
    if (!ok) {
      error = kindName + " does not take " +
              (c.scaleType == Sm100ScaleType::UE8M0 ? "ue8m0" : "ue4m3") +
              " scales with scale_vec::" +
              std::to_string(static_cast<unsigned>(c.scaleVec)) +
              "X (legal: " + legal + "; PTX ISA Tables 54 and 55)";
      return false;
    }
    // Scale-factor IDs (9.7.16.10.7.2 / .3): byte offset 0-3 for 1X, half
    // word 0 or 2 for 2X, 0 for 4X.
    for (int which = 0; which < 2; ++which) {
      unsigned id = which ? c.bScaleFactorId : c.aScaleFactorId;
      bool idOk = c.scaleVec == Sm100ScaleVec::X1   ? id <= 3
                  : c.scaleVec == Sm100ScaleVec::X2 ? (id == 0 || id == 2)
                                                    : id == 0;
      if (!idOk) {
        error = std::string("scale-factor ") + (which ? "B" : "A") + " ID " +
                std::to_string(id) + " is not legal with scale_vec::" +
                std::to_string(static_cast<unsigned>(c.scaleVec)) +
                "X (1X: 0-3, 2X: 0 or 2, 4X: 0; PTX ISA 9.7.16.10.7.2-3)";
        return false;
      }
    }
  } else if (c.aScaleFactorId || c.bScaleFactorId) {
    error = kindName + " is not block-scaled and has no scale-factor IDs";
    return false;
  }
  // M (Table 39; the block-scaled layouts encode M >> 7, Tables 43/44).
  bool mOk;
  const char *mLegal;
  if (isSm100BlockScaledKind(c.kind)) {
    mOk = c.ctaGroup == 1 ? c.m == 128 : (c.m == 128 || c.m == 256);
    mLegal = c.ctaGroup == 1 ? "128" : "128 or 256";
  } else {
    mOk = c.ctaGroup == 1 ? (c.m == 64 || c.m == 128)
                          : (c.m == 128 || c.m == 256);
    mLegal = c.ctaGroup == 1 ? "64 or 128" : "128 or 256";
  }
  if (!mOk) {
    error = "M = " + std::to_string(c.m) + " is not legal for " + kindName +
            " with cta_group::" + std::to_string(c.ctaGroup) + " (legal: " +
            mLegal + "; PTX ISA Table 39)";
    return false;
  }
  // Majors (Tables 49, 52).
  for (int which = 0; which < 2; ++which) {
    OperandMajor major = which ? c.bMajor : c.aMajor;
    Sm100ElementType type = which ? c.bType : c.aType;
    if (major != OperandMajor::MN)
      continue;
    if (c.kind == Sm100MmaKind::MXF4 || c.kind == Sm100MmaKind::MXF4NVF4) {
      error = kindName + " does not support transpose: operand " +
              (which ? "B" : "A") + " must be K-major (PTX ISA Table 49)";
      return false;
    }
    unsigned bits = sm100ElementBits(type);
    if (bits != 8 && bits != 16 && bits != 32) {
      error = std::string("operand ") + (which ? "B" : "A") + " of type " +
              sm100ElementTypeName(type) + " (" + std::to_string(bits) +
              "-bit) cannot be MN-major: only 8-, 16- and 32-bit types can be "
              "transposed (PTX ISA Table 52)";
      return false;
    }
  }
  // Negate (Table 49).
  if (c.kind == Sm100MmaKind::I8 && (c.negateA || c.negateB)) {
    error = "kind::i8 does not support negate (PTX ISA Table 49)";
    return false;
  }
  if (c.saturate && c.kind != Sm100MmaKind::I8) {
    error = "saturate applies to kind::i8 only (PTX ISA Table 42)";
    return false;
  }
  return checkN(c, error);
}

bool encodeSm100InstrDescriptor(const Sm100MmaConfig &c, uint32_t &out,
                                std::string &error) {
  if (!validateSm100Mma(c, error))
    return false;
  uint32_t d = 0;
  d |= uint32_t(typeCode(c.kind, c.aType)) << 7;
  d |= uint32_t(typeCode(c.kind, c.bType)) << 10;
  d |= uint32_t(c.negateA) << 13;
  d |= uint32_t(c.negateB) << 14;
  d |= uint32_t(c.aMajor == OperandMajor::MN) << 15;
  d |= uint32_t(c.bMajor == OperandMajor::MN) << 16;
  d |= (c.n >> 3) << 17;
  if (isSm100BlockScaledKind(c.kind)) {
    d |= uint32_t(c.bScaleFactorId) << 4;
    d |= uint32_t(c.scaleType) << 23;
    d |= (c.m >> 7) << 27;
    d |= uint32_t(c.aScaleFactorId) << 29;
  } else {
    d |= uint32_t(c.saturate) << 3;
    d |= uint32_t(c.dType == Sm100AccumType::F16   ? 0
                  : c.dType == Sm100AccumType::F32 ? 1
                                                   : 2)
         << 4;
    d |= (c.m >> 4) << 24;
  }
  out = d;
  return true;
}

bool verifySm100InstrDescriptorBits(uint32_t idesc, Sm100MmaKind kind,
                                    std::string &error) {
  uint32_t bad = idesc & reservedMask(kind);
  if (bad) {
    error = "instruction descriptor " + hex(idesc) + " for kind::" +
            sm100MmaKindName(kind) + " has reserved, sparsity or .ws bits set (" +
            hex(bad) + ")";
    return false;
  }
  return true;
}

bool decodeSm100InstrDescriptor(uint32_t d, Sm100MmaKind kind,
                                unsigned ctaGroup, Sm100MmaConfig &c,
                                std::string &error) {
  if (!verifySm100InstrDescriptorBits(d, kind, error))
    return false;
  c = Sm100MmaConfig();
  c.kind = kind;
  c.ctaGroup = ctaGroup;
  bool block = isSm100BlockScaledKind(kind);
  unsigned bMask = (kind == Sm100MmaKind::MXF4 || kind == Sm100MmaKind::MXF4NVF4) ? 0x3 : 0x7;
  if (!typeFromCode(kind, (d >> 7) & 0x7, c.aType) ||
      !typeFromCode(kind, (d >> 10) & bMask, c.bType)) {
    error = "instruction descriptor " + hex(d) + " holds a type code that kind::" +
            sm100MmaKindName(kind) + " does not define";
    return false;
  }
  c.negateA = (d >> 13) & 1;
  c.negateB = (d >> 14) & 1;
  c.aMajor = ((d >> 15) & 1) ? OperandMajor::MN : OperandMajor::K;
  c.bMajor = ((d >> 16) & 1) ? OperandMajor::MN : OperandMajor::K;
  c.n = ((d >> 17) & 0x3F) << 3;
  if (block) {
    c.dType = Sm100AccumType::F32;
    c.bScaleFactorId = (d >> 4) & 0x3;
    c.scaleType = static_cast<Sm100ScaleType>((d >> 23) & 1);
    c.m = ((d >> 27) & 0x3) << 7;
    c.aScaleFactorId = (d >> 29) & 0x3;
    // The scale vector is not in the descriptor: it is the opcode's
    // .scale_vec. Recover the only one legal for the kind and scale type
    // (mxf4nvf4 with ue8m0 is ambiguous between 2X and 4X; take 2X, the
    // .block32 reading, unless the IDs rule it out).
    if (kind == Sm100MmaKind::MXF8F6F4)
      c.scaleVec = Sm100ScaleVec::X1;
    else if (kind == Sm100MmaKind::MXF4 || c.scaleType == Sm100ScaleType::UE8M0)
      c.scaleVec = Sm100ScaleVec::X2;
    else
      c.scaleVec = Sm100ScaleVec::X4;
  } else {
    c.saturate = (d >> 3) & 1;
    unsigned dt = (d >> 4) & 0x3;
    if (dt == 3) {
      error = "instruction descriptor " + hex(d) + " holds dtype 3";
      return false;
    }
    c.dType = dt == 0 ? Sm100AccumType::F16
              : dt == 1 ? Sm100AccumType::F32
                        : Sm100AccumType::S32;
    c.m = ((d >> 24) & 0x1F) << 4;
  }
  return true;
}

std::string sm100MmaOpcode(const Sm100MmaConfig &c) {
  std::string op = "tcgen05.mma.cta_group::" + std::to_string(c.ctaGroup) +
                   ".kind::" + sm100MmaKindName(c.kind);
  if (isSm100BlockScaledKind(c.kind))
    op += ".block_scale.scale_vec::" +
          std::to_string(static_cast<unsigned>(c.scaleVec)) + "X";
  return op;
}

} // namespace flamia
