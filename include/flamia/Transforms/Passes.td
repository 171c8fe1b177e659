//===- Passes.td - flamia graph-level passes ---------------*- tablegen -*-===//

#ifndef FLAMIA_TRANSFORMS_PASSES_TD
#define FLAMIA_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def FlamiaQuantizeAttention : Pass<"flamia-quantize-attention"> {
  let summary = "Rewrite bf16 attention into quantization plus attention on "
                "quantized operands";
  let description = [{
    Rewrites `flamia.attention` into `flamia.quantize` ops and
    `flamia.attention_fwd`, and `flamia.attention_grad` into quantize ops and
    `flamia.attention_bwd`, with exactly the layouts of the recipe's
    numerics contract (docs/numerics.md): recipe `mxfp8` quantizes Q per
    token (1x32) for S = Q K^T, and K, V, dO and the backward's second Q copy
    in document-local 32x32 token blocks; `strict` adds per-token copies for
    the head-dim-contracted GEMMs. Recipe `nvfp4_mixed` quantizes Q, K in
    S = Q K^T and dO, V in dP = dO V^T to NVFP4 per token (f4E2M1FN with
    f8E4M3FN scales over 16 channels) and the token-contracted uses like
    `mxfp8`. Every GEMM use gets its own quantize op
    (the backward quantizes on its own); `flamia-reuse-scale-layouts` and
    `flamia-fwd-bwd-consistency` then share them.
  }];
  let dependentDialects = ["::flamia::FlamiaDialect"];
  let options = [
    Option<"recipe", "recipe", "std::string", /*default=*/"\"\"",
           "Only rewrite ops of this recipe (mxfp8, nvfp4_mixed); an op with "
           "another recipe is an error. Empty: every op.">
  ];
}

def FlamiaReuseScaleLayouts : Pass<"flamia-reuse-scale-layouts"> {
  let summary = "One quantized copy per tensor across GEMM orientations";
  let description = [{
    For each tensor quantized several times (per GEMM use, in the forward and
    the backward), chooses one layout that serves every use where the recipe
    allows it (32x32 document-local token blocks serve both the
    head-dim-contracted and the token-contracted GEMMs, given a safe block
    at least as large as the token block and no strict mode; Q in the
    forward S = Q K^T stays per token), and merges duplicate quantizations.
    Emits a remark on each function with the number of quantizations and
    bytes saved (payload plus scales, per token and head).
  }];
  let dependentDialects = ["::flamia::FlamiaDialect"];
}

def FlamiaCausalSafeScales : Pass<"flamia-causal-safe-scales"> {
  let summary = "Make every scale block causally safe";
  let description = [{
    Makes every token block document-local when the op has `cu_seqlens`,
    keeps per-token scales where token blocks would leak (Q in the forward
    S = Q K^T; in strict mode every head-dim-contracted operand), and sets
    the safe block on the diagonal: a recipe without one, or with one that
    does not cover whole token blocks, gets `safe-block` (default 128,
    raised to a multiple of the largest token block) and the bf16 originals
    as `safe(...)` operands.
  }];
  let dependentDialects = ["::flamia::FlamiaDialect",
                           "::mlir::arith::ArithDialect"];
  let options = [
    Option<"safeBlock", "safe-block", "int64_t", /*default=*/"128",
           "Safe block to use where one is missing or too small (a positive "
           "multiple of 32)">
  ];
}

def FlamiaVerifyCausality : Pass<"flamia-verify-causality"> {
  let summary = "Prove L1/L2 (and L3 in strict mode) or name the leak";
  let description = [{
    A static analysis of every `flamia.attention_fwd` and
    `flamia.attention_bwd`. It proves forward causality (L1: O_i and LSE_i
    do not depend on positions after i), document isolation (L2: no output
    of a document depends on another document) and, for strict recipes,
    backward causality (L3: dQ_i only on positions <= i, dK_j and dV_j only
    on positions >= j). Otherwise it emits an error on the offending op that
    names the operand, the GEMM, the block shape and one concrete pair of
    positions through which information leaks.
  }];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "Emit a remark on each op saying what was proven">
  ];
}

def FlamiaFwdBwdConsistency : Pass<"flamia-fwd-bwd-consistency"> {
  let summary = "The backward recomputes S from the forward's exact operands";
  let description = [{
    Links each `flamia.attention_bwd` to its `flamia.attention_fwd` (through
    the forward's O or LSE, or through quantizations of the same tensors)
    and rewrites the backward to consume exactly the forward's quantized
    operands for S = Q K^T (so that recomputed P is bit-identical), the
    forward's V copy where the backward quantized V the same way on its
    own, the forward's safe-block originals, O and LSE. Forward and backward
    recipes that disagree are an error naming both ops.
  }];
}

def FlamiaVarlenSchedule : Pass<"flamia-varlen-schedule", "::mlir::ModuleOp"> {
  let summary = "Graph-level attention to scheduled block-level kernels";
  let description = [{
    Turns each function holding a graph-level `flamia.attention_fwd` (with
    its quantizations) into kernels and a launch plan:

    - `flamia.kernel @<fn>_quantize`: a grid over (document-local 32-token
      block, query head) that reads bf16 Q, K, V once and writes every copy
      the kernels read: on sm_100a the payloads and scales (Q per token, Q,
      K, V in 32x32 token blocks) and the MMA's scale-factor tiles; on
      sm_90a the scales and the dequantized bf16 operands of the Hopper
      MMAs (the payloads too with `payloads`), except, with `round-q`, Q's
      per-token copy of a forward-only set, which the forward rounds
      itself;
    - `flamia.kernel @<fn>_attention_fwd`: a persistent kernel whose work
      loop takes items (document, query head, query tile) in
      longest-processing-time order from a device counter and runs
      `flamia.attention_tile` on each; the item list and its cost model are
      described by the kernel's `schedule` attribute and built by the host
      (lib/Schedule) at run time, without repacking the documents;
    - the function itself becomes the launch plan: its tensors become
      `!flamia.global` buffers (inputs, then outputs), workspaces and
      schedule buffers are `flamia.workspace` ops, and the kernels are
      `flamia.launch`ed in order.
  }];
  let dependentDialects = ["::flamia::FlamiaDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::gpu::GPUDialect"];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"sm_100a\"",
           "Target whose operand forms and cost model to use (sm_90a, sm_100a)">,
    Option<"blockM", "block-m", "int64_t", /*default=*/"128", "Query tile rows">,
    Option<"blockN", "block-n", "int64_t", /*default=*/"128", "Key tile columns">,
    Option<"order", "order", "std::string", /*default=*/"\"\"",
           "The order the host hands out the work items in (the schedule "
           "attribute's `order`, the manifest's schedule.order): lpt or "
           "l2-sections; empty: the target's default (l2-sections on "
           "sm_90a, lpt on sm_100a)">,
    Option<"prefetchKv", "prefetch-kv", "bool", /*default=*/"true",
           "The quantization kernel asks L2 for its K and V rows "
           "(flamia.prefetch_rows) before it quantizes Q, so that the three "
           "tensors' reads overlap (without Q, under round-q: V's rows "
           "before it quantizes K)">,
    Option<"payloads", "payloads", "bool", /*default=*/"false",
           "On sm_90a too, let the quantizers write the E4M3 (E2M1) payloads "
           "of every copy (q_pt, q_tb, k_tb, v_tb, do_tb, ...), and Q's "
           "token-block copy of a forward-only set. No sm_90a kernel reads "
           "them: by default only the scales and the bf16 dequantized copies "
           "the kernels read are written. sm_100a's MMAs read the payloads, "
           "which it always writes">,
    Option<"scaleTiles", "scale-tiles", "bool", /*default=*/"false",
           "On sm_90a too, let the quantizer write the scale-factor tiles "
           "sm_100a's MMA reads (q_sf, k_sf, v_sf; with a backward also those "
           "of sm_100a's backward kernels: q_tb_sf_channels, k_sf_channels, "
           "v_sf_tokens, do_sf, do_sf_channels), so that their layout can "
           "be checked on a Hopper GPU">,
    Option<"roundQ", "round-q", "bool", /*default=*/"true",
           "sm_90a, forward-only sets whose Q copy is MXFP8 per token "
           "(mxfp8, mxfp8-strict): the forward kernel rounds each query "
           "tile itself from the bf16 Q it loads (flamia.smem.mx_round), so "
           "the quantizer neither reads Q nor writes q_pt_scales and q_deq, "
           "and its grid covers the key/value heads only. Off (or with "
           "payloads or scale-tiles, or a backward, whose kernels read Q's "
           "copies) the quantizer writes Q's copy as before">,
    Option<"debugScores", "debug-scores", "bool", /*default=*/"false",
           "A debug build of a training step on sm_90a: the forward and the "
           "dQ kernel each write S = Q K^T of every query row against the "
           "first key tile of its document (workspaces s_fwd, s_dq), so "
           "that flamia-run can check the backward recomputes the "
           "forward's S bit for bit">
  ];
}

def FlamiaTile : Pass<"flamia-tile", "::mlir::ModuleOp"> {
  let summary = "Tile sizes, pipeline depth and warp specialization";
  let description = [{
    Expands each persistent kernel's work loop around `flamia.attention_tile`
    into the target's pipelined, warp-specialized program. Both targets have
    a producer role (warpgroup 0, one thread) that takes items and issues
    TMA copies into a ring of 128-key K/V tiles.
    sm_90a: a 2-stage ring at D = 128, 4 at D = 64; two consumer warpgroups
    (64 query rows each) run the wgmma MMAs, the masking, the online
    softmax, the rounding of P and the epilogue.
    sm_100a: a 3-stage ring at D = 128 with a safe block, else 4; an "mma"
    role (warpgroup 1, one thread) issues tcgen05.mma into tensor memory and
    a "softmax" role (warpgroup 2, one query row per thread) masks, runs the
    online softmax, rounds P and writes the epilogue (docs/passes.md,
    docs/lowering.md).
  }];
  let dependentDialects = ["::flamia::FlamiaDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"\"",
           "If set, the target every kernel must have (sm_90a, sm_100a)">,
    Option<"pingPong", "ping-pong", "bool", /*default=*/"false",
           "Consumer warpgroups take turns issuing MMAs (flamia.turn). Off "
           "by default: measured slower on the H200 (docs/performance.md)">,
    Option<"backwardPingPong", "backward-ping-pong", "bool",
           /*default=*/"false",
           "sm_90a backward (dQ and dK/dV): the two consumer warpgroups take "
           "turns issuing each pair of MMAs (S and dP, dV and dK), so that "
           "one's softmax gradient and quantization run while the other's "
           "MMAs execute. Off by default: measured slower on the H200 "
           "(docs/performance.md, run 47) and again on an H100 after the "
           "unmasked softmax gradient (run 53)">,
    Option<"backwardRotate", "backward-rotate", "bool", /*default=*/"false",
           "sm_90a backward, D = 64: rotate both kernels' loops so that "
           "each tile's dQ (dV and dK) MMAs and the next tile's S and dP "
           "(S^T and dP^T) issue as one group with one wait. Off by "
           "default: measured slower on the H200 (docs/performance.md, run "
           "69), and with backward-ping-pong on an H100 (run 70). Ignored "
           "at D = 128, where ptxas serializes the rotated dQ kernel's MMAs "
           "for lack of registers">,
    Option<"overlapSoftmax", "overlap-softmax", "bool", /*default=*/"true",
           "sm_90a, D = 128: issue the next S = Q K^T and the previous P V "
           "without waiting and run the softmax while they execute "
           "(FlashAttention-3's intra-warpgroup pipelining; K and V get "
           "rings of their own). Ignored with ping-pong and at D = 64, "
           "where it measured slower (docs/performance.md)">,
    Option<"pInSmem", "p-in-smem", "bool", /*default=*/"false",
           "sm_100a forward: the softmax writes the E4M3 P to shared memory "
           "(flamia.smem.store) and P V reads it there, instead of from "
           "tensor memory: the block-scaled MMA form CUTLASS wraps, for a "
           "Blackwell bring-up's A/B against the default (bench/"
           "blackwell-bringup.sh). Costs 16 KiB, one K/V stage at D = 128">
  ];
}

#endif // FLAMIA_TRANSFORMS_PASSES_TD
