//===- FlamiaAttrs.td - flamia attributes ------------------*- tablegen -*-===//

#ifndef FLAMIA_ATTRS_TD
#define FLAMIA_ATTRS_TD

include "FlamiaDialect.td"
include "FlamiaEnums.td"
include "mlir/IR/AttrTypeBase.td"

class Flamia_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Flamia_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Flamia_ScaleLayoutAttr : Flamia_Attr<"ScaleLayout", "scale_layout"> {
  let summary = "block shape of a microscaled tensor's scales";
  let description = [{
    `(token_block x channel_block)`: one scale per `token_block` consecutive
    tokens of a document and `channel_block` consecutive head-dim channels.

    ```mlir
    #flamia.scale_layout<1x32>           // per token: standard MX along D
    #flamia.scale_layout<32x32>          // 2-D token blocks, document-local
    #flamia.scale_layout<32x32, packed>  // token blocks aligned to the packed
                                         // tensor, ignoring documents (leaky)
    #flamia.scale_layout<tensor>         // one scale per head for the whole
                                         // tensor (per-tensor FP8; leaky)
    ```

    Token blocks are document-local unless marked `packed`: they start at each
    document's first token and the last block of a document may be partial.
    For a `[T, H, D]` tensor the scales are `[NB, H, D / channel_block]` with
    `NB` the sum over documents of `ceil(L / token_block)`, in document order.
    A `tensor` layout has scales `[1, H, 1]`.
  }];
  let parameters = (ins "int64_t":$tokenBlock, "int64_t":$channelBlock,
                        "ScaleAnchor":$anchor);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// One scale for the whole tensor (per head).
    bool isPerTensor() const { return getTokenBlock() == 0; }
    /// One scale per token and channel block (standard MX along D).
    bool isPerToken() const { return getTokenBlock() == 1; }
    /// Scales shared by several tokens (token_block > 1).
    bool isTokenBlock() const { return getTokenBlock() > 1; }
    bool isDocumentLocal() const { return getAnchor() == ScaleAnchor::document; }

    /// Parses/prints the body shared with !flamia.qtensor: `32x32`,
    /// `32x32, packed`, `tensor`.
    static ScaleLayoutAttr parseBody(::mlir::AsmParser &parser);
    void printBody(::mlir::AsmPrinter &printer) const;
  }];
}

def Flamia_RecipeAttr : Flamia_Attr<"Recipe", "recipe"> {
  let summary = "quantization recipe with its causal safeguards";
  let description = [{
    ```mlir
    #flamia.recipe<mxfp8, safe_block = 128>
    #flamia.recipe<mxfp8, safe_block = 128, strict>
    #flamia.recipe<mxfp8>                 // no safe block (leaky on the diagonal)
    ```
    `safe_block` (a positive multiple of 32): for keys in the query's
    document-local block of `safe_block` tokens, S and P.V use the original
    bf16 operands. Absent means none. `strict` asks for L3 backward causality
    (head-dim-contracted GEMMs on per-token copies).
  }];
  let parameters = (ins "RecipeKind":$kind,
                        DefaultValuedParameter<"int64_t", "0">:$safeBlock,
                        DefaultValuedParameter<"bool", "false">:$strict);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    bool hasSafeBlock() const { return getSafeBlock() > 0; }
  }];
}

def Flamia_PrecisionAttr : Flamia_Attr<"Precision", "precision"> {
  let summary = "precision of an operand produced inside the kernel (P, dS)";
  let description = [{
    ```mlir
    #flamia.precision<bf16>                         // not quantized
    #flamia.precision<f8E4M3FN, fixed_scale = 8>    // x * 2^8 rounded to E4M3
    #flamia.precision<f8E4M3FN, online = 32>        // E8M0 scale per 32 along
                                                    // the contraction axis
    ```
    A fixed scale is only valid for values in [0, 1] (P): `2^fixed_scale`
    must not exceed the format's maximum. Online blocks run along the
    contraction axis of each GEMM the operand feeds (dS: along keys for
    dQ = dS K, along queries for dK = dS^T Q); masked entries are zeroed
    before the block amax.
  }];
  let parameters = (ins "::mlir::Type":$elementType,
                        OptionalParameter<"std::optional<int64_t>">:$fixedScale,
                        OptionalParameter<"std::optional<int64_t>">:$onlineBlock);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    bool isQuantized() const { return !getElementType().isBF16(); }
  }];
}

def Flamia_TargetAttr : Flamia_Attr<"Target", "target"> {
  let summary = "GPU target of the block-level program and its lowering";
  let description = [{
    ```mlir
    #flamia.target<sm_100a>                 // Blackwell, tcgen05, cta_group::1
    #flamia.target<sm_100a, cta_group = 2>  // CTA pairs (one kernel-wide choice)
    #flamia.target<sm_90a>                  // Hopper, wgmma
    ```
    The CTA group is a kernel-level property: ptxas refuses kernels that mix
    `cta_group::1` and `cta_group::2`. Only sm_100a has CTA pairs.
  }];
  let parameters = (ins "Chip":$chip,
                        DefaultValuedParameter<"int64_t", "1">:$ctaGroup);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

#endif // FLAMIA_ATTRS_TD
