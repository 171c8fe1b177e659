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

//===----------------------------------------------------------------------===//
// Block level: what a kernel program manipulates
//===----------------------------------------------------------------------===//

#ifndef FLAMIA_KERNEL_TYPES_TD
#define FLAMIA_KERNEL_TYPES_TD

def Flamia_GlobalType : Flamia_Type<"Global", "global"> {
  let summary = "a packed tensor in global memory, as a kernel parameter";
  let description = [{
    `!flamia.global<?x16x128xbf16>`: a row-major tensor in device memory. A
    kernel reads it through TMA (the lowering passes a tensor map) or through
    plain loads and stores (a pointer), as its uses require. It has rank 1 or
    more (dimensions may be dynamic, `?`) and integer or float elements.
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape,
                        "::mlir::Type":$elementType);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

def Flamia_SmemType : Flamia_Type<"Smem", "smem"> {
  let summary = "a shared-memory buffer of tiles";
  let description = [{
    `!flamia.smem<2x128x128xbf16>`: `stages x rows x cols`. Tiles are stored
    in the swizzled K-major layout that TMA writes and the matrix units
    read: each tile is split along its columns into atoms of 128 bytes per
    row (64 bf16 or 128 FP8 columns), each atom `rows x 128` bytes with the
    16-byte chunks of row r XOR-ed by r % 8. Rows of 32 or 64 bytes (D = 64
    in FP8 on sm_100a) use the 32- and 64-byte swizzles instead. Hence: at
    least one stage, a multiple of 8 rows and rows of 32, 64 or a multiple
    of 128 bytes, all static.
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape,
                        "::mlir::Type":$elementType);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getStages() const { return getShape()[0]; }
    int64_t getRows() const { return getShape()[1]; }
    int64_t getCols() const { return getShape()[2]; }
    /// Bytes of one row (packed 4-bit elements: two a byte).
    int64_t getRowBytes() const;
    /// Bytes of one stage (one tile).
    int64_t getTileBytes() const;
  }];
}

def Flamia_PipelineType : Flamia_Type<"Pipeline", "pipeline"> {
  let summary = "a ring of pipeline stages guarded by full/empty barriers";
  let description = [{
    `!flamia.pipeline<2>`: two stages. A producer acquires an empty stage,
    fills it (TMA loads completing on the stage's full barrier); consumers
    wait for the full barrier and release the stage. Phases are derived from
    an explicit iteration counter: stage `it % S`, phase `(it / S) % 2`.
    A pipeline has at least one stage; the shared-memory buffers it guards
    have as many (`flamia.tma.load` checks it).
  }];
  let parameters = (ins "int64_t":$stages);
  let assemblyFormat = "`<` $stages `>`";
  let genVerifyDecl = 1;
}

def Flamia_QueueType : Flamia_Type<"Queue", "queue"> {
  let summary = "the persistent grid's work queue";
  let description = [{
    The scheduled items of a persistent kernel, taken in order through a
    device atomic counter by the producer role and broadcast to the others.
  }];
}

def Flamia_FragmentType : Flamia_Type<"Fragment", "frag"> {
  let summary = "a tile distributed over a warpgroup";
  let description = [{
    `!flamia.frag<64x128xf32>`: a matrix tile held collectively by the 128
    threads of a warpgroup in registers. On sm_90a it is 64 rows in wgmma's
    accumulator layout, and a bf16 fragment is in the A-operand layout of
    the same shape (the accumulator layout reused). On sm_100a it is 128
    rows, thread t holding row t (the rows of TMEM lane t, moved with
    flamia.tmem.load / flamia.tmem.store); an f8E4M3FN fragment holds E4M3
    codes. A fragment is `rows x cols` (static), rows a multiple of 64 (the
    rows of a warpgroup's MMA), cols a multiple of 8, its elements `f32`
    (accumulators, scores), `bf16` (MMA A operands) or `f8E4M3FN` (P for a
    block-scaled MMA).
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape,
                        "::mlir::Type":$elementType);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getRows() const { return getShape()[0]; }
    int64_t getCols() const { return getShape()[1]; }
  }];
}

def Flamia_RowsType : Flamia_Type<"Rows", "rows"> {
  let summary = "one value per row of a fragment";
  let description = [{
    `!flamia.rows<64 x f32>`: per-row values (running max, row sum) held
    like the rows of a fragment of the same height (a multiple of 64), in
    `f32`.
  }];
  let parameters = (ins "int64_t":$rows, "::mlir::Type":$elementType);
  let assemblyFormat = "`<` $rows `x` $elementType `>`";
  let genVerifyDecl = 1;
}

#endif // FLAMIA_KERNEL_TYPES_TD
