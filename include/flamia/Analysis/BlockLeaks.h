//===- BlockLeaks.h - Where a scale block lets information leak -*- C++ -*-===//
//
// The combinatorial core of flamia-verify-causality, free of MLIR so that it
// can be unit-tested exhaustively.
//
// Positions are document-local token indices. A GEMM pairs an output
// position o with partner positions: for outputs indexed by queries (O, LSE,
// dQ) the partners are keys j <= o; for outputs indexed by keys (dK, dV) the
// partners are queries i >= o. A pair in the same safe block (the
// document-local block of `safeBlock` tokens; 0 = none) takes the bf16
// path; every other pair reads the quantized operand, whose scale is shared
// by a token block of `tokenBlock` positions (document-local, aligned at the
// document start; 1 = per token).
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_ANALYSIS_BLOCKLEAKS_H
#define FLAMIA_ANALYSIS_BLOCKLEAKS_H

#include <cstdint>
#include <optional>

namespace flamia {

/// Which positions an output must not depend on.
enum class LeakDirection {
  Future, ///< output o must not see positions > o (L1, L3 for dQ)
  Past,   ///< output o must not see positions < o (L3 for dK, dV)
};

/// Whose row of the operand a pair (output o, partner x) reads.
enum class IndexedBy {
  Output,  ///< the operand row of o itself (Q in S for O_o; dO in dP for dQ_o)
  Partner, ///< the operand row of the partner (K in S for O_o; Q in dK_o)
};

/// A concrete leak: output position `output` reads the quantized operand at
/// position `reader` (o itself or its partner) for the pair (output,
/// partner), and that row's scale block [blockBegin, blockEnd) also covers
/// `source`, which the output must not see.
struct LeakWitness {
  int64_t output, partner, reader, source, blockBegin, blockEnd;
};

/// Finds the leak with the smallest output position, or std::nullopt if the
/// layout is safe for every document length. Token blocks and safe blocks are
/// periodic from the document start, so a document of a few periods decides
/// it; partial blocks at the document end only shrink blocks.
std::optional<LeakWitness> findBlockLeak(int64_t tokenBlock, int64_t safeBlock,
                                         LeakDirection direction,
                                         IndexedBy indexedBy);

} // namespace flamia

#endif // FLAMIA_ANALYSIS_BLOCKLEAKS_H
