//===- FlamiaOps.td - flamia graph-level operations --------*- tablegen -*-===//

#ifndef FLAMIA_OPS_TD
#define FLAMIA_OPS_TD

include "FlamiaTypes.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class Flamia_Op<string mnemonic, list<Trait> traits = []>
    : Op<Flamia_Dialect, mnemonic, traits>;

// Ops that need every thread of a warpgroup: they work on warpgroup-wide
// fragments, synchronize warpgroups, split a block over 128 threads, or move
// a warpgroup's 128 lanes of tensor memory. A `single_thread` role holds none
// (flamia.role's verifier), and the lowering runs them on whole warpgroups.
def Flamia_WarpgroupWide : NativeOpTrait<"WarpgroupWide"> {
  let cppNamespace = "::flamia::OpTrait";
}

def Flamia_LaunchKindAttr
    : EnumAttr<Flamia_Dialect, Flamia_LaunchKind, "launch"> {
  let assemblyFormat = "`<` $value `>`";
}

def Flamia_GlobalScaleAttr
    : EnumAttr<Flamia_Dialect, Flamia_GlobalScale, "global_scale"> {
  let assemblyFormat = "`<` $value `>`";
}

//===----------------------------------------------------------------------===//
// Operand type constraints
//===----------------------------------------------------------------------===//

def Flamia_BF16Tensor : RankedTensorOf<[BF16]>;
def Flamia_FloatTensor : RankedTensorOf<[BF16, F32]>;
def Flamia_F32Tensor : RankedTensorOf<[F32]>;
def Flamia_CuSeqlens : RankedTensorOf<[I32]>;
// An operand of a GEMM: a quantized copy or the bf16 tensor itself.
def Flamia_GemmOperand : AnyTypeOf<[Flamia_QTensorType, Flamia_BF16Tensor],
    "a !flamia.qtensor or a bf16 tensor">;

defvar Flamia_AttentionAttrs = (ins UnitAttr:$causal,
                                  OptionalAttr<F32Attr>:$softmax_scale,
                                  Flamia_RecipeAttr:$recipe);

//===----------------------------------------------------------------------===//
// Graph level: bf16 attention
//===----------------------------------------------------------------------===//

def Flamia_AttentionOp : Flamia_Op<"attention", [Pure]> {
  let summary = "attention over packed documents on bf16 inputs";
  let description = [{
    `O, LSE = softmax(Q K^T * softmax_scale [+ causal mask]) V` per document
    and head, computed as the recipe prescribes (`flamia-quantize-attention`
    rewrites it into quantize ops and `flamia.attention_fwd`).

    Q is `[T, Hq, D]`, K and V `[T, Hkv, D]` with `Hq` a multiple of `Hkv`
    (GQA: query head `h` reads key/value head `h / (Hq / Hkv)`). O is
    `[T, Hq, D]` bf16, LSE `[Hq, T]` f32 (natural log). `softmax_scale`
    defaults to `1/sqrt(D)`.

    ```mlir
    %o, %lse = flamia.attention %q, %k, %v cu_seqlens(%cu)
        {causal, recipe = #flamia.recipe<mxfp8, safe_block = 128>}
        : (tensor<?x16x128xbf16>, tensor<?x4x128xbf16>, tensor<?x4x128xbf16>,
           tensor<?xi32>) -> (tensor<?x16x128xbf16>, tensor<16x?xf32>)
    ```
  }];
  let arguments = !con((ins Flamia_BF16Tensor:$q, Flamia_BF16Tensor:$k,
                            Flamia_BF16Tensor:$v,
                            Optional<Flamia_CuSeqlens>:$cu_seqlens),
                       Flamia_AttentionAttrs);
  let results = (outs Flamia_BF16Tensor:$o, Flamia_F32Tensor:$lse);
  let assemblyFormat = [{
    $q `,` $k `,` $v (`cu_seqlens` `(` $cu_seqlens^ `)`)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Flamia_AttentionGradOp : Flamia_Op<"attention_grad", [Pure]> {
  let summary = "gradients of flamia.attention";
  let description = [{
    dQ, dK, dV of `flamia.attention` given its inputs, its outputs O and LSE,
    and the output gradient dO (`grad_o`). Computed as the recipe
    prescribes: the backward recomputes S and P from the same quantized
    operands as the forward (straight-through estimator for every
    quantizer). dQ/dK/dV are bf16 or f32 tensors shaped like Q/K/V.

    ```mlir
    %dq, %dk, %dv = flamia.attention_grad %q, %k, %v, %o, %lse, %do
        cu_seqlens(%cu) {causal, recipe = #flamia.recipe<mxfp8, safe_block = 128>}
        : (...) -> (tensor<?x16x128xf32>, tensor<?x4x128xf32>, tensor<?x4x128xf32>)
    ```
  }];
  let arguments = !con((ins Flamia_BF16Tensor:$q, Flamia_BF16Tensor:$k,
                            Flamia_BF16Tensor:$v, Flamia_BF16Tensor:$o,
                            Flamia_F32Tensor:$lse, Flamia_BF16Tensor:$grad_o,
                            Optional<Flamia_CuSeqlens>:$cu_seqlens),
                       Flamia_AttentionAttrs);
  let results = (outs Flamia_FloatTensor:$grad_q, Flamia_FloatTensor:$grad_k,
                      Flamia_FloatTensor:$grad_v);
  let assemblyFormat = [{
    $q `,` $k `,` $v `,` $o `,` $lse `,` $grad_o
    (`cu_seqlens` `(` $cu_seqlens^ `)`)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Graph level: quantization
//===----------------------------------------------------------------------===//

def Flamia_QuantizeOp : Flamia_Op<"quantize", [Pure]> {
  let summary = "quantize a packed tensor to a microscaled format";
  let description = [{
    Quantizes `[T, H, D]` bf16 (or f32) `input` to the result's format and
    scale layout by the contract's scale rule (no clipping, RNE elements).
    Document-local token blocks need `cu_seqlens` unless the tensor is one
    document. `global_scale = #flamia.global_scale<amax>` asks for NVFP4's
    data-dependent per-tensor scale (leaky; for comparisons only).

    ```mlir
    %k8 = flamia.quantize %k cu_seqlens(%cu)
        : (tensor<?x4x128xbf16>, tensor<?xi32>)
        -> !flamia.qtensor<?x4x128xf8E4M3FN, f8E8M0FNU, 32x32>
    ```
  }];
  let arguments = (ins Flamia_FloatTensor:$input,
                       Optional<Flamia_CuSeqlens>:$cu_seqlens,
                       DefaultValuedAttr<Flamia_GlobalScaleAttr,
                                         "GlobalScale::one">:$global_scale);
  let results = (outs Flamia_QTensorType:$result);
  let assemblyFormat = [{
    $input (`cu_seqlens` `(` $cu_seqlens^ `)`)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Flamia_DequantizeOp : Flamia_Op<"dequantize", [Pure]> {
  let summary = "expand a microscaled tensor back to bf16 or f32";
  let description = [{
    `payload * scale` per element; exact in f32 (and in bf16 for E4M3/E5M2/E2M1
    payloads whose scaled values are in bf16's range).
  }];
  let arguments = (ins Flamia_QTensorType:$input,
                       Optional<Flamia_CuSeqlens>:$cu_seqlens);
  let results = (outs Flamia_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`cu_seqlens` `(` $cu_seqlens^ `)`)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Flamia_QTensorCreateOp : Flamia_Op<"qtensor.create", [Pure]> {
  let summary = "assemble a microscaled tensor from payload and scales";
  let description = [{
    For operands quantized elsewhere (e.g. by a training framework): the
    payload is `[T, H, D]` in the result's element type and the scales
    `[NB, H, D / channel_block]` in its scale type, in the logical layout.
  }];
  let arguments = (ins AnyRankedTensor:$payload, AnyRankedTensor:$scales);
  let results = (outs Flamia_QTensorType:$result);
  let assemblyFormat = [{
    $payload `,` $scales attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Flamia_QTensorPayloadOp : Flamia_Op<"qtensor.payload", [Pure]> {
  let summary = "the payload of a microscaled tensor";
  let arguments = (ins Flamia_QTensorType:$input);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input)) `->` type($result)";
  let hasVerifier = 1;
}

def Flamia_QTensorScalesOp : Flamia_Op<"qtensor.scales", [Pure]> {
  let summary = "the scales of a microscaled tensor, in the logical layout";
  let arguments = (ins Flamia_QTensorType:$input);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input)) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Graph level: attention on quantized operands
//===----------------------------------------------------------------------===//

def Flamia_AttentionFwdOp : Flamia_Op<"attention_fwd",
    [Pure, AttrSizedOperandSegments]> {
  let summary = "attention forward on quantized operands";
  let description = [{
    The forward of the recipe, with each operand named by the GEMM it feeds:
    `qk(Q, K)` for `S = Q K^T` (contracted over the head dim) and `pv(V)` for
    `O = P V` (contracted over keys). A bf16 tensor operand is not quantized.
    `safe(Q, K, V)` are the original bf16 tensors the safe-block path uses
    (required when the recipe has a safe block). `p` is P's precision in
    `P V`.

    ```mlir
    %o, %lse = flamia.attention_fwd qk(%q8, %k8) pv(%v8) safe(%q, %k, %v)
        cu_seqlens(%cu) {causal, recipe = #flamia.recipe<mxfp8, safe_block = 128>,
                         p = #flamia.precision<f8E4M3FN, fixed_scale = 8>}
        : (...) -> (tensor<?x16x128xbf16>, tensor<16x?xf32>)
    ```
  }];
  let arguments = !con((ins Flamia_GemmOperand:$q, Flamia_GemmOperand:$k,
                            Flamia_GemmOperand:$v,
                            Variadic<Flamia_BF16Tensor>:$safe,
                            Optional<Flamia_CuSeqlens>:$cu_seqlens),
                       Flamia_AttentionAttrs,
                       (ins Flamia_PrecisionAttr:$p));
  let results = (outs Flamia_BF16Tensor:$o, Flamia_F32Tensor:$lse);
  let assemblyFormat = [{
    `qk` `(` $q `,` $k `)` `pv` `(` $v `)` (`safe` `(` $safe^ `)`)?
    (`cu_seqlens` `(` $cu_seqlens^ `)`)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Flamia_AttentionBwdOp : Flamia_Op<"attention_bwd",
    [Pure, AttrSizedOperandSegments]> {
  let summary = "attention backward on quantized operands";
  let description = [{
    The backward of the recipe, each operand named by the GEMM it feeds:
    `qk(Q, K)` recomputes `S = Q K^T` (must be the forward's operands, so that
    P is bit-identical), `dov(dO, V)` for `dP = dO V^T`, `dsk(K)` for
    `dQ = dS K`, `dsq(Q)` for `dK = dS^T Q`, `pdo(dO)` for `dV = P^T dO`.
    `safe(Q, K, V, dO)` are the bf16 originals of the safe-block path. `o` and
    `lse` are the forward's outputs. `p` is P's precision in `P^T dO`, `ds`
    dS's precision in the dS GEMMs.
  }];
  let arguments = !con((ins Flamia_GemmOperand:$q, Flamia_GemmOperand:$k,
                            Flamia_GemmOperand:$dov_grad_o,
                            Flamia_GemmOperand:$dov_v,
                            Flamia_GemmOperand:$dsk_k,
                            Flamia_GemmOperand:$dsq_q,
                            Flamia_GemmOperand:$pdo_grad_o,
                            Variadic<Flamia_BF16Tensor>:$safe,
                            Flamia_BF16Tensor:$o, Flamia_F32Tensor:$lse,
                            Optional<Flamia_CuSeqlens>:$cu_seqlens),
                       Flamia_AttentionAttrs,
                       (ins Flamia_PrecisionAttr:$p, Flamia_PrecisionAttr:$ds));
  let results = (outs Flamia_FloatTensor:$grad_q, Flamia_FloatTensor:$grad_k,
                      Flamia_FloatTensor:$grad_v);
  let assemblyFormat = [{
    `qk` `(` $q `,` $k `)` `dov` `(` $dov_grad_o `,` $dov_v `)`
    `dsk` `(` $dsk_k `)` `dsq` `(` $dsq_q `)` `pdo` `(` $pdo_grad_o `)`
    (`safe` `(` $safe^ `)`)? `o` `(` $o `)` `lse` `(` $lse `)`
    (`cu_seqlens` `(` $cu_seqlens^ `)`)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

include "FlamiaKernelOps.td"
include "FlamiaTcgen05Ops.td"

#endif // FLAMIA_OPS_TD
