//===- FlamiaTcgen05Ops.td - sm_100a block-level operations -*- tablegen -*-===//
//
// The block level of sm_100a: tensor memory (TMEM), the single-thread MMA
// issue of tcgen05, block-scale copies and completion tracking through
// mbarriers. On sm_100a a fragment `!flamia.frag<128xNxT>` is one row per
// thread of a warpgroup (thread t holds row t: TMEM lane t); fragments move
// between registers and TMEM with flamia.tmem.load / flamia.tmem.store, and
// the other fragment ops (frag.mask, softmax.update, frag.quantize,
// frag.scale_rows, attn.store) apply to them unchanged.
//
// TMEM addresses are i32 values (lane << 16 | column, PTX ISA 9.0, 9.7.16.1:
// 128 lanes x 512 columns of 32 bits): flamia.tmem.alloc's base, or a
// column inside the allocation computed from it; ops add their static
// `column` to the address they are given. The columns an op touches must
// lie inside the allocation when its address is flamia.tmem.alloc's result,
// inside the 512 columns otherwise.
//
// tcgen05.mma, .cp and .commit are issued by one thread (flamia.umma,
// flamia.umma.scales, flamia.umma.commit: in a kernel, inside a
// `single_thread` role); tcgen05.ld/st are warp-collective
// (flamia.tmem.load, flamia.tmem.store, flamia.tmem.fill: every thread of a
// warpgroup, never in a `single_thread` role).
//
//===----------------------------------------------------------------------===//

#ifndef FLAMIA_TCGEN05_OPS_TD
#define FLAMIA_TCGEN05_OPS_TD

include "FlamiaTypes.td"
include "mlir/IR/OpBase.td"

def Flamia_TmemAllocOp : Flamia_Op<"tmem.alloc", [HasParent<"KernelOp">]> {
  let summary = "the kernel's tensor memory";
  let description = [{
    `%tmem = flamia.tmem.alloc columns 512 by_warpgroup 2`: every thread of
    the CTA gets the base address of `columns` TMEM columns (all 128 lanes),
    allocated by the first warp of warpgroup `by_warpgroup` before the roles
    start. That warp must free them: a `flamia.tmem.dealloc` in the role
    that starts at that warpgroup, after the last use. `columns` is a power
    of two in [32, 512]; the kernel's allocations together take at most
    512 columns (a CTA that asks for more waits forever).
  }];
  let arguments = (ins I64Attr:$columns, I64Attr:$by_warpgroup);
  let results = (outs I32:$base);
  let assemblyFormat = "`columns` $columns `by_warpgroup` $by_warpgroup attr-dict";
  let hasVerifier = 1;
}

def Flamia_TmemDeallocOp : Flamia_Op<"tmem.dealloc", [HasParent<"RoleOp">]> {
  let summary = "free the kernel's tensor memory";
  let description = [{
    Run by every thread of a role; the first warp of the role frees the
    columns flamia.tmem.alloc allocated. Every MMA that writes them and every
    load from them must have completed. `base` is the flamia.tmem.alloc
    result, `columns` its size, and the role starts at its `by_warpgroup`
    and is not `single_thread`.
  }];
  let arguments = (ins I32:$base, I64Attr:$columns);
  let assemblyFormat = "$base `columns` $columns attr-dict";
  let hasVerifier = 1;
}

def Flamia_TmemLoadOp : Flamia_Op<"tmem.load", [Flamia_WarpgroupWide]> {
  let summary = "a warpgroup reads a 128-row f32 tile from tensor memory";
  let description = [{
    `flamia.tmem.load %tmem[256] : !flamia.frag<128x128xf32>`: thread t of
    the executing warpgroup reads lane t, columns `[column, column + N)`
    (tcgen05.ld.32x32b), and waits for the data. Ordered after the mbarrier
    wait that observed the MMA writing them (tcgen05.fence). The result is
    f32 with 128 rows and a power of two of columns, at most 128.
  }];
  let arguments = (ins I32:$base, I64Attr:$column);
  let results = (outs Flamia_FragmentType:$result);
  let assemblyFormat = "$base `[` $column `]` attr-dict `:` qualified(type($result))";
  let hasVerifier = 1;
}

def Flamia_TmemStoreOp : Flamia_Op<"tmem.store", [Flamia_WarpgroupWide]> {
  let summary = "a warpgroup writes a 128-row tile to tensor memory";
  let description = [{
    Thread t writes its row of `value` to lane t from column `column`: f32
    one element per column, bf16 two and f8E4M3FN four per 32-bit column,
    the first element in the low bits (the A-operand layout of tcgen05.mma
    with A in tensor memory). Waits until the stores are done. `value` has
    128 rows, and its rows a power of two of 32-bit columns, at most 128.
  }];
  let arguments = (ins Flamia_FragmentType:$value, I32:$base, I64Attr:$column);
  let assemblyFormat = [{
    $value `,` $base `[` $column `]` attr-dict `:` qualified(type($value))
  }];
  let hasVerifier = 1;
}

def Flamia_TmemFillOp : Flamia_Op<"tmem.fill", [Flamia_WarpgroupWide]> {
  let summary = "a warpgroup fills tensor-memory columns with a constant";
  let description = [{
    Every lane of columns `[column, column + columns)` gets the 32-bit
    `value` (e.g. the scale factors of a matrix with a fixed scale).
    `columns` is a power of two, at most 128.
  }];
  let arguments = (ins I32:$base, I64Attr:$column, I64Attr:$columns,
                       I32Attr:$value);
  let assemblyFormat = [{
    $base `[` $column `]` `columns` $columns `value` $value attr-dict
  }];
  let hasVerifier = 1;
}

def Flamia_SmemStoreOp : Flamia_Op<"smem.store", [Flamia_WarpgroupWide]> {
  let summary = "a warpgroup writes a 128-row tile to shared memory as an "
                "MMA operand";
  let description = [{
    `flamia.smem.store %p, %tile[%stage] : !flamia.frag<128x128xf8E4M3FN>,
    !flamia.smem<1x128x128xf8E4M3FN>`: thread t writes its row of `value`
    (the sm_100a row-per-thread layout of flamia.tmem.load) to row t of the
    stage, in the canonical K-major layout a TMA load with the widest
    swizzle leaves (the rows in boxes of up to 128 bytes, 16-byte chunks
    swizzled), so that a flamia.umma reads it as its A operand; then each
    thread fences its writes for the async proxy (fence.proxy.async) before
    it signals the MMA thread. `value` and the tile have the same rows (128),
    columns and element type (f8E4M3FN or bf16). sm_100a only.
  }];
  let arguments = (ins Flamia_FragmentType:$value, Flamia_SmemType:$tile,
                       I32:$stage);
  let assemblyFormat = [{
    $value `,` $tile `[` $stage `]` attr-dict `:` qualified(type($value)) `,`
    qualified(type($tile))
  }];
  let hasVerifier = 1;
}

def Flamia_FragMxQuantizeOp : Flamia_Op<"frag.mx_quantize", [
    Flamia_WarpgroupWide]> {
  let summary = "E4M3 codes of each row's 32-column blocks, scales to a tile";
  let description = [{
    `%codes = flamia.frag.mx_quantize %ds scales %sf[%stage] k_block %kb :
    !flamia.frag<128x64xf32> -> !flamia.frag<128x64xf8E4M3FN>, ...`: the
    backward's online dS quantization for a block-scaled MMA (sm_100a).
    Columns `[32 b, 32 b + 32)` of each row form block b, quantized by the
    contract's scale rule (docs/design.md, "Scale rule", as
    flamia.frag.block_quantize): E8M0 scale 2^e with e the smallest
    integer such that amax / 2^e <= 448, limited to [-127, 127] (-127 for
    an all-zero block), elements x / 2^e rounded to nearest even E4M3 and
    saturated; a block holding a NaN or an infinity gets the NaN scale
    0xFF and NaN codes. The result holds the codes, four per 32-bit word
    (the layout flamia.tmem.store writes for an A operand in tensor
    memory).

    Each block's scale byte goes into stage `stage` of the 512-byte
    scale-factor tile `scales` (the 128x4 layout flamia.umma.scales copies
    to tensor memory: include/flamia/Target/ScaleFactorLayout.h) at the
    block's row and K-block `k_block + b`; the stores are fenced against
    the async proxy, so a later tcgen05.cp of the tile, ordered after the
    writing threads by an mbarrier, reads them. The fragment is 128 rows
    with one row per thread (every block's amax is a thread's own), its
    columns a multiple of 32, and `k_block + columns / 32` at most 4.
  }];
  let arguments = (ins Flamia_FragmentType:$values,
                       Arg<Flamia_SmemType, "", [MemWrite]>:$scales,
                       I32:$stage, I32:$k_block);
  let results = (outs Flamia_FragmentType:$codes);
  let assemblyFormat = [{
    $values `scales` $scales `[` $stage `]` `k_block` $k_block attr-dict `:`
    qualified(type($values)) `,` qualified(type($scales)) `->`
    qualified(type($codes))
  }];
  let hasVerifier = 1;
}

def Flamia_UmmaScalesOp : Flamia_Op<"umma.scales"> {
  let summary = "copy a block-scale tile from shared to tensor memory";
  let description = [{
    Stage `stage` of `source` holds one 512-byte scale-factor tile (128 rows
    x 4 K-blocks of E8M0 in the 128x4 tiled layout,
    include/flamia/Target/ScaleFactorLayout.h), or several (an NVFP4 copy's
    slot: a tile per 64 channels); tile `part` (default 0) is copied to
    columns `[column, column + 4)` of every lane quadrant
    (tcgen05.cp.cta_group::1.32x128b.warpx4), where a block-scaled
    flamia.umma reads it. Asynchronous; ordered before the MMAs this thread
    issues next, and tracked by flamia.umma.commit. `column` is a multiple
    of 4; a constant `stage`, or one that flamia.pipeline.acquire returned,
    belongs to `source`.
  }];
  let arguments = (ins Flamia_SmemType:$source, I32:$stage, I32:$base,
                       I64Attr:$column,
                       DefaultValuedAttr<I64Attr, "0">:$part);
  let assemblyFormat = [{
    $source `[` $stage `]` `->` $base `[` $column `]` attr-dict `:`
    qualified(type($source))
  }];
  let hasVerifier = 1;
}

def Flamia_UmmaOp : Flamia_Op<"umma", [AttrSizedOperandSegments]> {
  let summary = "one thread issues D = A B (+ D) on the tensor cores";
  let description = [{
    D is the 128 x N f32 tile in TMEM columns `[d_column, d_column + N)`.
    A is 128 x K: stage `a_stage` of the shared-memory tile `a` (K-major),
    or, without `a`, TMEM columns from `a_column` holding elements of
    `a_type` (flamia.tmem.store's layout). B is stage `b_stage` of `b`, read
    as N x K (rows x columns of the tile: S = Q K^T) or, with
    `b_transposed`, as K x N (O = P V). With `accumulate` false D is
    overwritten. bf16 operands use kind::f16; f8E4M3FN operands are block
    scaled (kind::mxf8f6f4, one E8M0 scale per 32 K): their scale factors
    are in the 4-column chunks at the TMEM addresses `scale_a` and
    `scale_b`, and K-block j of the MMA reads byte j of each 32-bit cell.
    f4E2M1FN operands (NVFP4, recipe nvfp4-mixed: two E2M1 a byte, both in
    shared memory, both K-major) are block scaled by
    kind::mxf4nvf4.block_scale.scale_vec::4X: one unsigned-E4M3 scale per 16
    K, the four of a K = 64 step in one 32-bit cell, so step j reads the
    4-column chunk at `scale_a + 4 j` (and `scale_b + 4 j`): a tile per 64
    channels.
    `tmem` is a TMEM address (the allocation's base, or a column inside it);
    D and A's columns count from it. Asynchronous: flamia.umma.commit tracks
    completion.

    `b_k_block` (optional, block-scaled only) is the K-block of B's scale
    factors the MMA's first K step reads: step j reads byte `b_k_block + j`
    of B's cells instead of byte j. A scale-factor tile holds 4 K-blocks
    (128 elements along K); an MMA whose K covers part of them (the
    backward's 64-query tiles, whose scales along the queries sit in the
    128-token tile that holds them) starts at the part's first block.
    `b_k_block + K / 32` is at most 4.

    `k_valid` (optional, at least 1) is how many of the K elements hold
    data. A K step (32 elements for f8E4M3FN, 16 for bf16) that starts at
    or past it reads B's rows and scale factors of the last step that
    starts before it; its A must be zero there (with `k_valid` <= 0, a value
    no schedule produces, every step reads step 0's). Nothing of B past that step
    is read. O = P V passes the keys left in the document: P is 0 past the
    end, and the V rows past the end inside the last step are zeroed first
    (flamia.smem.zero_rows). So the last key tile of a document never
    multiplies a zero P by the next document's V or V scale factors
    (0 x NaN is NaN). The steps are still issued, chosen by selects, not
    branches: control flow around the MMAs made ptxas spill the MMA
    thread.

    The verifier checks: A is exactly one of `a` with `a_stage` or
    `a_column` with `a_type`; A and B have one element type, bf16 (no
    scales), f8E4M3FN or f4E2M1FN (both scales); N is a multiple of 16 in
    [16, 256], K a multiple of 16 (bf16), 32 (f8E4M3FN, at most 128: one
    scale chunk) or 64 (f4E2M1FN, at most 128, A in shared memory, B not
    transposed, no `b_k_block` or `k_valid`), a shared-memory A is 128 x K;
    D's and A's columns fit; constant stages, and stages from
    flamia.pipeline.acquire, fit the tiles.
  }];
  let arguments = (ins I32:$tmem, I64Attr:$d_column,
                       Optional<Flamia_SmemType>:$a, Optional<I32>:$a_stage,
                       OptionalAttr<I64Attr>:$a_column,
                       OptionalAttr<TypeAttr>:$a_type,
                       Flamia_SmemType:$b, I32:$b_stage,
                       UnitAttr:$b_transposed, I1:$accumulate,
                       Optional<I32>:$scale_a, Optional<I32>:$scale_b,
                       Optional<I32>:$b_k_block, Optional<I32>:$k_valid);
  let assemblyFormat = [{
    $tmem `[` $d_column `]` (`a` $a^ `[` $a_stage `]`)? `b` $b `[` $b_stage `]`
    `accumulate` $accumulate (`scales` `(` $scale_a^ `,` $scale_b `)`)?
    (`b_k_block` $b_k_block^)? (`k_valid` $k_valid^)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The element type of A (the smem tile's, or `a_type`).
    Type getAElementType();
    /// N and K of the MMA (from B's tile and `b_transposed`).
    int64_t getN();
    int64_t getK();
  }];
}

def Flamia_UmmaCommitOp : Flamia_Op<"umma.commit"> {
  let summary = "arrive on a pipeline barrier when this thread's MMAs are done";
  let description = [{
    tcgen05.commit: the `full` or `empty` barrier of stage `stage` of
    `pipeline` receives one arrival once every flamia.umma and
    flamia.umma.scales the executing thread issued before has completed.
    `full` publishes a result in TMEM; `empty` frees the shared-memory
    (or TMEM) inputs of the stage. A constant `stage`, or one that
    flamia.pipeline.acquire returned, belongs to `pipeline`.
  }];
  let arguments = (ins Flamia_PipelineType:$pipeline, I32:$stage,
                       Flamia_StageBarrierAttr:$barrier);
  let assemblyFormat = [{
    $barrier $pipeline `[` $stage `]` attr-dict `:` qualified(type($pipeline))
  }];
  let hasVerifier = 1;
}

def Flamia_PipelineArriveOp : Flamia_Op<"pipeline.arrive"> {
  let summary = "a producer without TMA publishes a stage";
  let description = [{
    One arrival per executing thread on the full barrier of stage `stage`
    (the pipeline's `producers` count them), after the thread's tensor-memory
    stores (tcgen05.fence::before_thread_sync on sm_100a). A constant
    `stage`, or one that flamia.pipeline.acquire returned, belongs to
    `pipeline`.
  }];
  let arguments = (ins Flamia_PipelineType:$pipeline, I32:$stage);
  let assemblyFormat = [{
    $pipeline `[` $stage `]` attr-dict `:` qualified(type($pipeline))
  }];
  let hasVerifier = 1;
}

def Flamia_BulkLoadOp : Flamia_Op<"bulk.load"> {
  let summary = "a bulk copy of one contiguous tile into a stage";
  let description = [{
    Copies the `T` bytes of chunk `chunk` of `source` (bytes
    `[chunk * T, (chunk + 1) * T)`, `T` the destination tile size) into
    stage `stage` of `dest` (cp.async.bulk), completing on the stage's full
    barrier of `pipeline`. Used for scale-factor tiles, which the quantizer
    writes in the MMA's layout. The source's dimensions after the first are
    static and a row of them is a whole number of tiles; `dest` and
    `pipeline` have the same number of stages, and a constant `stage`, or
    one that flamia.pipeline.acquire returned, fits them.
  }];
  let arguments = (ins Arg<Flamia_GlobalType, "", [MemRead]>:$source,
                       I32:$chunk,
                       Arg<Flamia_SmemType, "", [MemWrite]>:$dest, I32:$stage,
                       Arg<Flamia_PipelineType, "", [MemWrite]>:$pipeline);
  let assemblyFormat = [{
    $source `[` $chunk `]` `->` $dest `[` $stage `]` `on` $pipeline attr-dict
    `:` qualified(type($source)) `,` qualified(type($dest)) `,`
    qualified(type($pipeline))
  }];
  let hasVerifier = 1;
}

#endif // FLAMIA_TCGEN05_OPS_TD
