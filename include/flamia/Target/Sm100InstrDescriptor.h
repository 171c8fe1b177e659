//===- Sm100InstrDescriptor.h - tcgen05.mma instruction descriptor -*- C++ -*-===//
//
// The 32-bit instruction descriptor (idesc) of tcgen05.mma, and the rules for
// which (kind, M, N, K, types, majors, scale vector) combinations are legal.
// PTX ISA 9.0:
//   9.7.16.4.2 "Instruction descriptor", Tables 42 (.kind::tf32/f16/f8f6f4/i8),
//     43 (.kind::mxf8f6f4), 44 (.kind::mxf4, .kind::mxf4nvf4);
//   9.7.16.2.1 "Matrix Shape", Table 39 (M, N, K per kind and cta_group);
//   9.7.16.10.1 Table 49 (transpose/negate per kind), Table 50 (N for 8-bit
//     transposed B); 9.7.16.10.3 Table 52 (which type sizes may be MN-major);
//   9.7.16.10.7.1 Tables 54/55 (scale vector size per kind and scale type);
//   9.7.16.10.7.2/.3 (scale-factor A/B IDs: 0-3 for 1X, 0 or 2 for 2X, 0 for 4X).
//
// Layout, LSB first (bits shared by every kind, then the kind-specific ones):
//
//   bits   f16/tf32/f8f6f4/i8 (Table 42)      mxf8f6f4 (43) | mxf4, mxf4nvf4 (44)
//   0-1    sparsity selector                  reserved
//   2      sparsity (FLAMIA: dense, 0)        sparsity
//   3      saturate (i8 only)                 reserved
//   4-5    dtype: F16=0 F32=1 S32=2           scale-factor B ID
//   6      reserved                           reserved
//   7-9    atype                              atype
//   10-12  btype                              btype | btype in 10-11, 12 reserved
//   13,14  negate A, negate B                 negate A, negate B
//   15,16  transpose A, B (1 = MN-major)      transpose A, B (0 for mxf4*)
//   17-22  N >> 3                             N >> 3
//   23     reserved                           scale type: UE4M3=0 UE8M0=1
//   24-28  M >> 4                             24-26 reserved, 27-28 M >> 7
//   29     reserved                           29-30 scale-factor A ID
//   30-31  .ws max shift (FLAMIA: 0)          31 reserved | 31 K: 0 dense K=64
//
// Type codes: f16: F16=0 BF16=1; tf32: TF32=2; f8f6f4 and mxf8f6f4: E4M3=0
// E5M2=1 E2M3=3 E3M2=4 E2M1=5; i8: U8=0 S8=1; mxf4/mxf4nvf4: E2M1=1.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_TARGET_SM100INSTRDESCRIPTOR_H
#define FLAMIA_TARGET_SM100INSTRDESCRIPTOR_H

#include "flamia/Target/SmemMatrixLayout.h"

#include <cstdint>
#include <string>

namespace flamia {

/// The `.kind` of tcgen05.mma.
enum class Sm100MmaKind : uint8_t {
  F16,      ///< f16/bf16 inputs
  TF32,
  F8F6F4,   ///< fp8/fp6/fp4 inputs without block scaling
  I8,
  MXF8F6F4, ///< block-scaled fp8/fp6/fp4, UE8M0 scales per 32 K
  MXF4,     ///< block-scaled E2M1, UE8M0 scales per 32 K
  MXF4NVF4, ///< block-scaled E2M1, UE8M0 per 32 K or UE4M3/UE8M0 per 16 K
};

enum class Sm100ElementType : uint8_t {
  F16, BF16, TF32, E4M3, E5M2, E2M3, E3M2, E2M1, U8, S8,
};

enum class Sm100AccumType : uint8_t { F16, F32, S32 };

/// Scale-factor element type (bit 23 of the block-scaled layouts).
enum class Sm100ScaleType : uint8_t { UE4M3 = 0, UE8M0 = 1 };

/// `.scale_vec::NX`: N scale factors per row of A (column of B) per MMA, i.e.
/// K / N elements share one scale. `.block32` is 1X for mxf8f6f4 and 2X for
/// mxf4/mxf4nvf4; `.block16` is 4X (PTX ISA 9.0, 9.7.16.10.9.1).
enum class Sm100ScaleVec : uint8_t { X1 = 1, X2 = 2, X4 = 4 };

/// Everything the instruction descriptor and the opcode of one dense
/// tcgen05.mma (no .ws, no sparsity) depend on.
struct Sm100MmaConfig {
  Sm100MmaKind kind = Sm100MmaKind::F16;
  Sm100ElementType aType = Sm100ElementType::BF16;
  Sm100ElementType bType = Sm100ElementType::BF16;
  Sm100AccumType dType = Sm100AccumType::F32;
  OperandMajor aMajor = OperandMajor::K;
  OperandMajor bMajor = OperandMajor::K;
  bool negateA = false;
  bool negateB = false;
  uint32_t m = 128;
  uint32_t n = 128;
  /// 1 or 2 (not in the descriptor; it selects the legal M and N).
  unsigned ctaGroup = 1;
  /// Block-scaled kinds only.
  Sm100ScaleType scaleType = Sm100ScaleType::UE8M0;
  Sm100ScaleVec scaleVec = Sm100ScaleVec::X1;
  uint8_t aScaleFactorId = 0;
  uint8_t bScaleFactorId = 0;
  /// kind::i8 only.
  bool saturate = false;

  bool operator==(const Sm100MmaConfig &o) const;
};

/// "f16", "tf32", "f8f6f4", "i8", "mxf8f6f4", "mxf4", "mxf4nvf4".
const char *sm100MmaKindName(Sm100MmaKind kind);
/// "f16", "bf16", "tf32", "e4m3", ... as PTX spells them.
const char *sm100ElementTypeName(Sm100ElementType type);
bool isSm100BlockScaledKind(Sm100MmaKind kind);
/// Bits of one element in shared memory (4, 6, 8, 16, 32).
unsigned sm100ElementBits(Sm100ElementType type);
/// The K of one dense MMA: f16 16, tf32 8, f8f6f4/i8/mxf8f6f4 32,
/// mxf4/mxf4nvf4 64 (PTX ISA 9.0, Table 39; K = 96 is sm_103a-only and not
/// supported).
unsigned sm100MmaK(Sm100MmaKind kind);
/// K elements that share one scale factor: K / scale_vec (32 or 16).
unsigned sm100ScaleBlockSize(Sm100MmaKind kind, Sm100ScaleVec vec);

/// Checks the configuration against the ISA's tables; on failure `error`
/// names the rule and the table.
bool validateSm100Mma(const Sm100MmaConfig &config, std::string &error);

/// Validates, then encodes.
bool encodeSm100InstrDescriptor(const Sm100MmaConfig &config, uint32_t &idesc,
                                std::string &error);

/// Decodes an instruction descriptor of `kind` (the layout depends on it; the
/// CTA group is not encoded and is taken from `ctaGroup`). Fails on reserved
/// bits, sparse or .ws fields, and type codes the kind does not define.
bool decodeSm100InstrDescriptor(uint32_t idesc, Sm100MmaKind kind,
                                unsigned ctaGroup, Sm100MmaConfig &config,
                                std::string &error);

/// The reserved bits of `kind`'s layout (plus the sparsity and .ws fields
/// FLAMIA never sets) are zero.
bool verifySm100InstrDescriptorBits(uint32_t idesc, Sm100MmaKind kind,
                                    std::string &error);

/// The PTX opcode, e.g. "tcgen05.mma.cta_group::1.kind::f16" or
/// "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X".
std::string sm100MmaOpcode(const Sm100MmaConfig &config);

} // namespace flamia

#endif // FLAMIA_TARGET_SM100INSTRDESCRIPTOR_H
