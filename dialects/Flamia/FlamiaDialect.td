//===- FlamiaDialect.td - The flamia dialect ---------------*- tablegen -*-===//
//
// FLAMIA: blocked, microscaled (MXFP8, NVFP4) causal attention over packed
// variable-length documents. docs/dialect.md is the introduction.
//
//===----------------------------------------------------------------------===//

#ifndef FLAMIA_DIALECT_TD
#define FLAMIA_DIALECT_TD

include "mlir/IR/OpBase.td"

def Flamia_Dialect : Dialect {
  let name = "flamia";
  let cppNamespace = "::flamia";
  let summary = "Microscaled, causally safe attention over packed documents";
  let description = [{
    The flamia dialect describes causal attention over packed variable-length
    documents whose operands are microscaled (MXFP8, NVFP4).

    The *graph level* has tensor semantics: `flamia.attention` and
    `flamia.attention_grad` on bf16 tensors with a recipe, `flamia.quantize` /
    `flamia.dequantize` producing and consuming `!flamia.qtensor` values
    (payload + block scales with an explicit scale layout), and
    `flamia.attention_fwd` / `flamia.attention_bwd` whose operands name the
    GEMM each quantized copy feeds.

    Packed tensors are `[T, H, D]` (tokens of all documents back to back,
    heads, head dim); document boundaries come from an i32 `cu_seqlens`
    tensor (`[num_docs + 1]`, starting at 0, non-decreasing, ending at T).
    Without `cu_seqlens` the whole tensor is one document.

    The *block level* is the kernel program: `flamia.kernel` with warp roles
    (`flamia.role`), shared-memory buffers and pipelines of stages filled by
    TMA (`!flamia.smem`, `!flamia.pipeline`), a persistent work queue, and
    warpgroup fragments (`!flamia.frag`, `!flamia.rows`) for the MMAs, the
    online softmax and the epilogue; `flamia.launch` and `flamia.workspace`
    describe the host's launch plan. `flamia-varlen-schedule` and
    `flamia-tile` write it, `convert-flamia-to-nvvm` lowers it.
  }];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  let extraClassDeclaration = [{
    // Defined next to the storage classes (FlamiaAttrs.cpp, FlamiaTypes.cpp).
    void registerAttributes();
    void registerTypes();
  }];
}

#endif // FLAMIA_DIALECT_TD
