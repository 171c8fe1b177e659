//===- FlamiaEnums.td - flamia enums -----------------------*- tablegen -*-===//

#ifndef FLAMIA_ENUMS_TD
#define FLAMIA_ENUMS_TD

include "mlir/IR/EnumAttr.td"

def Flamia_RecipeKind : I32EnumAttr<"RecipeKind", "quantization recipe", [
    I32EnumAttrCase<"mxfp8", 0>,
    I32EnumAttrCase<"nvfp4_mixed", 1, "nvfp4_mixed">,
  ]> {
  let cppNamespace = "::flamia";
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
  let cppNamespace = "::flamia";
  let genSpecializedAttr = 0;
}

// NVFP4's second-level (per-tensor) scale. `one`: fixed 1.0 (the contract).
// `amax`: derived from the tensor's amax, i.e. from every token (leaky).
def Flamia_GlobalScale : I32EnumAttr<"GlobalScale", "per-tensor global scale", [
    I32EnumAttrCase<"one", 0>,
    I32EnumAttrCase<"amax", 1>,
  ]> {
  let cppNamespace = "::flamia";
  let genSpecializedAttr = 0;
}

def Flamia_Chip : I32EnumAttr<"Chip", "GPU target", [
    I32EnumAttrCase<"sm_90a", 0>,
    I32EnumAttrCase<"sm_100a", 1>,
  ]> {
  let cppNamespace = "::flamia";
  let genSpecializedAttr = 0;
}

// Block-level op choices. Each is spelled as a bare keyword in the op's
// assembly (`flamia.pipeline.acquire producer %p[%it]`); the kernel's launch
// as `#flamia.launch<persistent>`.

// flamia.kernel: `persistent` (one CTA per multiprocessor taking items from
// the work queue) or `grid` (the grid is the manifest's expressions).
def Flamia_LaunchKind : I32EnumAttr<"LaunchKind", "how a kernel is launched", [
    I32EnumAttrCase<"persistent", 0>,
    I32EnumAttrCase<"grid", 1>,
  ]> {
  let cppNamespace = "::flamia";
  let genSpecializedAttr = 0;
}

// flamia.pipeline.acquire: which barrier of the stage to wait for.
def Flamia_PipelineSideAttr : I32EnumAttr<"PipelineSide", "side of a pipeline", [
    I32EnumAttrCase<"producer", 0>,
    I32EnumAttrCase<"consumer", 1>,
  ]> {
  let cppNamespace = "::flamia";
}

// flamia.queue.next: `fetch` takes an index from the device counter,
// `receive` reads the one the fetching role published.
def Flamia_QueueSideAttr : I32EnumAttr<"QueueSide", "side of the work queue", [
    I32EnumAttrCase<"fetch", 0>,
    I32EnumAttrCase<"receive", 1>,
  ]> {
  let cppNamespace = "::flamia";
}

// flamia.turn: wait for this warpgroup's turn, or hand it on.
def Flamia_TurnActionAttr : I32EnumAttr<"TurnAction", "turn action", [
    I32EnumAttrCase<"take", 0>,
    I32EnumAttrCase<"give", 1>,
  ]> {
  let cppNamespace = "::flamia";
}

// flamia.umma.commit: the stage barrier that receives the arrival.
def Flamia_StageBarrierAttr : I32EnumAttr<"StageBarrier", "barrier of a stage", [
    I32EnumAttrCase<"full", 0>,
    I32EnumAttrCase<"empty", 1>,
  ]> {
  let cppNamespace = "::flamia";
}

// flamia.workspace: a buffer the kernels fill (`workspace`) or one the
// runtime fills from cu_seqlens before the first launch (`schedule`).
def Flamia_WorkspaceKindAttr : I32EnumAttr<"WorkspaceKind", "workspace buffer kind", [
    I32EnumAttrCase<"workspace", 0>,
    I32EnumAttrCase<"schedule", 1>,
  ]> {
  let cppNamespace = "::flamia";
}

#endif // FLAMIA_ENUMS_TD
