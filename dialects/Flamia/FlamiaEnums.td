//===- FlamiaEnums.td - flamia enums -----------------------*- tablegen -*-===//

#ifndef FLAMIA_ENUMS_TD
#define FLAMIA_ENUMS_TD

include "mlir/IR/EnumAttr.td"

def Flamia_RecipeKind : I32EnumAttr<"RecipeKind", "quantization recipe", [
    I32EnumAttrCase<"mxfp8", 0>,
    I32EnumAttrCase<"nvfp4_mixed", 1, "nvfp4_mixed">,
  ]> {
  let cppNamespace = "::mlir::flamia";
  let genSpecializedAttr = 0;
}

// Where token blocks start. `document`: at each document's first token (from
// cu_seqlens; never straddling documents). `packed`: at multiples of the block
// size in the packed tensor, ignoring documents (leaks across documents; kept
// so that the causality verifier can name it).
def Flamia_ScaleAnchor : I32EnumAttr<"ScaleAnchor", "token-block anchor", [
    I32EnumAttrCase<"document", 0>,
    I32EnumAttrCase<"packed", 1>,
  ]> {
  let cppNamespace = "::mlir::flamia";
  let genSpecializedAttr = 0;
}

// NVFP4's second-level (per-tensor) scale. `one`: fixed 1.0 (the contract).
// `amax`: derived from the tensor's amax, i.e. from every token (leaky).
def Flamia_GlobalScale : I32EnumAttr<"GlobalScale", "per-tensor global scale", [
    I32EnumAttrCase<"one", 0>,
    I32EnumAttrCase<"amax", 1>,
  ]> {
  let cppNamespace = "::mlir::flamia";
  let genSpecializedAttr = 0;
}

def Flamia_Chip : I32EnumAttr<"Chip", "GPU target", [
    I32EnumAttrCase<"sm_90a", 0>,
    I32EnumAttrCase<"sm_100a", 1>,
  ]> {
  let cppNamespace = "::mlir::flamia";
  let genSpecializedAttr = 0;
}

#endif // FLAMIA_ENUMS_TD
