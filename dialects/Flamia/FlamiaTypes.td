//===- FlamiaTypes.td - flamia types -----------------------*- tablegen -*-===//

#ifndef FLAMIA_TYPES_TD
#define FLAMIA_TYPES_TD

include "FlamiaAttrs.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinTypeInterfaces.td"

class Flamia_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Flamia_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def Flamia_QTensorType : Flamia_Type<"QTensor", "qtensor"> {
  let summary = "a microscaled tensor: payload plus block scales";
  let description = [{
    A packed `[T, H, D]` tensor quantized to a low-precision format, with its
    scales in the given layout.

    ```mlir
    !flamia.qtensor<?x16x128xf8E4M3FN, f8E8M0FNU, 1x32>    // MXFP8 per token
    !flamia.qtensor<?x4x128xf8E4M3FN, f8E8M0FNU, 32x32>    // MXFP8 token blocks
    !flamia.qtensor<?x16x128xf4E2M1FN, f8E4M3FN, 1x16>     // NVFP4 (E4M3 scales)
    ```
    Payload formats: `f8E4M3FN`, `f8E5M2` (MX, channel block 32, `f8E8M0FNU`
    scales) and `f4E2M1FN` (MXFP4 with `f8E8M0FNU` scales, channel block 32;
    NVFP4 with unsigned `f8E4M3FN` scales, channel block 16). `H` and `D` are
    static, `D` a multiple of the channel block; `T` may be dynamic.
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape,
                        "::mlir::Type":$elementType,
                        "::mlir::Type":$scaleType,
                        "ScaleLayoutAttr":$layout);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getNumTokens() const { return getShape()[0]; }
    int64_t getNumHeads() const { return getShape()[1]; }
    int64_t getHeadDim() const { return getShape()[2]; }
    /// The payload as a builtin tensor type.
    ::mlir::RankedTensorType getPayloadType() const;
    /// The scales as a builtin tensor type: [NB, H, D / C] (NB dynamic for
    /// token blocks, T for per-token, 1 for per-tensor).
    ::mlir::RankedTensorType getScalesType() const;
  }];
}

#endif // FLAMIA_TYPES_TD
