//===- FlamiaKernelOps.td - flamia block-level operations --*- tablegen -*-===//
//
// The block level spells out a kernel program: a persistent work loop over
// scheduled items, warp roles, pipelines of shared-memory stages filled by
// TMA, warpgroup MMAs on fragments, the online softmax and the epilogue.
// Loops and index arithmetic are upstream scf and arith; these ops are the
// parts that need a GPU. convert-flamia-to-nvvm lowers them for sm_90a
// (wgmma, registers) and sm_100a (tcgen05, tensor memory).
//
//===----------------------------------------------------------------------===//

#ifndef FLAMIA_KERNEL_OPS_TD
#define FLAMIA_KERNEL_OPS_TD

include "FlamiaTypes.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/FunctionInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Kernels and roles
//===----------------------------------------------------------------------===//

def Flamia_KernelOp : Flamia_Op<"kernel", [
    AutomaticAllocationScope, FunctionOpInterface, IsolatedFromAbove]> {
  let summary = "a GPU kernel program";
  let description = [{
    A kernel: its parameters are the block arguments, its body the program
    every CTA runs. `target` selects the lowering; `launch` is `persistent`
    (one CTA per multiprocessor taking items from a work queue) or `grid`
    (`grid` gives the grid as the manifest's expressions); `threads` is the
    CTA size, whole warpgroups up to 1024. Other attributes describe the
    kernel to the runtime manifest (tile sizes, schedule). Its roles cover
    disjoint warpgroup ranges inside the CTA and together ask for at most
    the 65536 registers of a multiprocessor.

    ```mlir
    flamia.kernel @flamia_attention_fwd(%q: !flamia.global<?x16x128xbf16>, ...)
        attributes {target = #flamia.target<sm_90a>,
                    launch = #flamia.launch<persistent>,
                    threads = 384 : i64} {
      ...
      flamia.return
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<FunctionType>:$function_type,
                       OptionalAttr<DictArrayAttr>:$arg_attrs,
                       OptionalAttr<DictArrayAttr>:$res_attrs,
                       Flamia_TargetAttr:$target,
                       Flamia_LaunchKindAttr:$launch,
                       I64Attr:$threads);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::Region *getCallableRegion() { return &getBody(); }
    ArrayRef<Type> getArgumentTypes() { return getFunctionType().getInputs(); }
    ArrayRef<Type> getResultTypes() { return getFunctionType().getResults(); }
    /// Warpgroups (of 128 threads) of the CTA.
    int64_t getNumWarpgroups() { return getThreads() / 128; }
  }];
}

def Flamia_ReturnOp : Flamia_Op<"return", [Pure, Terminator,
    ParentOneOf<["KernelOp", "RoleOp"]>]> {
  let summary = "end of a kernel or role body";
  let assemblyFormat = "attr-dict";
}

def Flamia_RoleOp : Flamia_Op<"role", [
    SingleBlockImplicitTerminator<"ReturnOp">, HasParent<"KernelOp">]> {
  let summary = "warp specialization: what a range of warpgroups runs";
  let description = [{
    `flamia.role "consumer" warpgroups [1, 3) registers 240 { ... }`: the
    warpgroups `first .. end-1` of the CTA run the body; the others skip it.
    `registers` is the per-thread register budget the role asks for
    (`setmaxnreg` on sm_90a/sm_100a). Roles of a kernel cover disjoint
    warpgroups; values defined before the roles are shared. With
    `single_thread`, one thread of the role runs the body (a producer that
    only issues TMA copies and takes work items): such a role has one
    warpgroup and holds no warpgroup-wide op (MMAs, fragments, turns,
    `flamia.quantize_block`, tensor-memory loads, stores and fills).
  }];
  let arguments = (ins StrAttr:$role_name, I64Attr:$first_warpgroup,
                       I64Attr:$end_warpgroup, I64Attr:$registers,
                       UnitAttr:$single_thread);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $role_name `warpgroups` `[` $first_warpgroup `,` $end_warpgroup `)`
    `registers` $registers (`single_thread` $single_thread^)? $body attr-dict
  }];
  let hasVerifier = 1;
}

def Flamia_WarpgroupIdOp : Flamia_Op<"warpgroup_id", [Pure,
    HasParent<"RoleOp">]> {
  let summary = "index of the executing warpgroup within its role";
  let results = (outs I32:$result);
  let assemblyFormat = "attr-dict";
}

def Flamia_TurnOp : Flamia_Op<"turn", [Flamia_WarpgroupWide]> {
  let summary = "warpgroups of a role take turns issuing their MMAs";
  let description = [{
    `flamia.turn take among 2`: wait until it is this warpgroup's turn;
    `flamia.turn give among 2`: hand the turn to the next warpgroup of the
    role (in a ring of `warpgroups`). Bracketing each MMA with take/give makes
    the consumer warpgroups alternate on the tensor cores, so that one
    warpgroup's softmax overlaps the other's MMAs ("ping-pong"). The first
    turn belongs to warpgroup 0: the last warpgroup gives once before its
    loop. A turn is taken inside a `flamia.role` among all of its
    warpgroups (2 to 7: one named barrier each).
  }];
  let arguments = (ins Flamia_TurnActionAttr:$action, I64Attr:$warpgroups);
  let assemblyFormat = "$action `among` $warpgroups attr-dict";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Shared memory, pipelines, work queue
//===----------------------------------------------------------------------===//

def Flamia_SmemAllocOp : Flamia_Op<"smem.alloc", [HasParent<"KernelOp">]> {
  let summary = "a shared-memory buffer of the kernel";
  let results = (outs Flamia_SmemType:$buffer);
  let assemblyFormat = "attr-dict `:` qualified(type($buffer))";
}

def Flamia_PipelineCreateOp : Flamia_Op<"pipeline.create", [
    HasParent<"KernelOp">]> {
  let summary = "full/empty mbarriers for a ring of stages";
  let description = [{
    `consumers` is the number of arrivals (consumer threads, or one
    flamia.umma.commit) that free a stage: at least one, at most the
    kernel's threads. The full barrier of a stage completes with
    `producers` arrivals (default 1: the TMA producer's arrive.expect_tx,
    or a commit; at least one, at most the kernel's threads) plus the bytes
    its TMA copies deliver.
  }];
  let arguments = (ins I64Attr:$consumers,
                       DefaultValuedAttr<I64Attr, "1">:$producers);
  let results = (outs Flamia_PipelineType:$pipeline);
  let assemblyFormat = [{
    `consumers` $consumers (`producers` $producers^)? attr-dict `:`
    qualified(type($pipeline))
  }];
  let hasVerifier = 1;
}

def Flamia_PipelineAcquireOp : Flamia_Op<"pipeline.acquire"> {
  let summary = "wait until a stage may be written (producer) or read (consumer)";
  let description = [{
    For iteration `it` of the pipeline: stage `it % S`. The producer waits
    for the stage's empty barrier (phase `(it / S + 1) % 2`; the first lap
    passes at once); a consumer waits for its full barrier (phase
    `(it / S) % 2`). Returns the stage index.
  }];
  let arguments = (ins Flamia_PipelineType:$pipeline, I32:$iteration,
                       Flamia_PipelineSideAttr:$side);
  let results = (outs I32:$stage);
  let assemblyFormat = [{
    $side $pipeline `[` $iteration `]` attr-dict `:` qualified(type($pipeline))
  }];
}

def Flamia_PipelineExpectOp : Flamia_Op<"pipeline.expect"> {
  let summary = "producer: arm a stage's full barrier for the bytes TMA will write";
  let description = [{
    `bytes` is the transaction count of the stage's TMA copies, in
    `[1, 2^20)` (the mbarrier's range). A constant `stage`, or one that
    `flamia.pipeline.acquire` returned, must belong to `pipeline`.
  }];
  let arguments = (ins Flamia_PipelineType:$pipeline, I32:$stage, I64Attr:$bytes);
  let assemblyFormat = [{
    $pipeline `[` $stage `]` `bytes` $bytes attr-dict `:` qualified(type($pipeline))
  }];
  let hasVerifier = 1;
}

def Flamia_PipelineReleaseOp : Flamia_Op<"pipeline.release"> {
  let summary = "consumer: this warpgroup is done with the stage";
  let description = [{
    Every consumer thread arrives on the stage's empty barrier. A constant
    `stage`, or one that `flamia.pipeline.acquire` returned, must belong to
    `pipeline`.
  }];
  let arguments = (ins Flamia_PipelineType:$pipeline, I32:$stage);
  let assemblyFormat = [{
    $pipeline `[` $stage `]` attr-dict `:` qualified(type($pipeline))
  }];
  let hasVerifier = 1;
}

def Flamia_TmaLoadOp : Flamia_Op<"tma.load"> {
  let summary = "TMA copy of a tile of a packed tensor into a stage";
  let description = [{
    Copies rows `[row, row + R)` and columns `[col, col + C)` of `source`
    viewed as the 2-D matrix `[T, H * D]` into stage `stage` of `dest`
    (`R x C` its tile shape), completing on the stage's full barrier of
    `pipeline`. Rows past the end of the tensor read as zeros; rows past the
    end of the document are loaded and must be masked by the consumer.
    `source` and `dest` have the same element type, `dest` and `pipeline`
    the same number of stages; a tile has at most 256 rows (a TMA box) and
    at most `H * D` columns.
  }];
  let arguments = (ins Arg<Flamia_GlobalType, "", [MemRead]>:$source,
                       I32:$row, I32:$col,
                       Arg<Flamia_SmemType, "", [MemWrite]>:$dest, I32:$stage,
                       Arg<Flamia_PipelineType, "", [MemWrite]>:$pipeline);
  let assemblyFormat = [{
    $source `[` $row `,` $col `]` `->` $dest `[` $stage `]` `on` $pipeline
    attr-dict `:` qualified(type($source)) `,` qualified(type($dest)) `,`
    qualified(type($pipeline))
  }];
  let hasVerifier = 1;
}

def Flamia_QueueCreateOp : Flamia_Op<"queue.create", [HasParent<"KernelOp">]> {
  let summary = "the work queue of a persistent kernel";
  let description = [{
    `receivers` is the number of threads of the receiving roles: a published
    index slot is reused once all of them have read it (at most the kernel's
    threads). `counter` is the one-element i32 device counter the runtime
    zeroes; the kernel is `persistent`.
  }];
  let arguments = (ins Flamia_GlobalType:$counter, I32:$num_items,
                       DefaultValuedAttr<I64Attr, "0">:$receivers);
  let results = (outs Flamia_QueueType:$queue);
  let assemblyFormat = [{
    $counter `,` $num_items (`receivers` $receivers^)? attr-dict `:`
    qualified(type($counter))
  }];
  let hasVerifier = 1;
}

def Flamia_QueueNextOp : Flamia_Op<"queue.next"> {
  let summary = "the next item index (num_items when the queue is empty)";
  let description = [{
    `fetch` (one role, the producer): atomically takes the next index from
    the device counter and publishes it in slot `iteration % 2`; `receive`
    (every other role): reads the index the producer published for this
    iteration. Every role sees the same sequence of indices.
  }];
  let arguments = (ins Flamia_QueueType:$queue, I32:$iteration,
                       Flamia_QueueSideAttr:$side);
  let results = (outs I32:$index);
  let assemblyFormat = "$side $queue `[` $iteration `]` attr-dict";
}

def Flamia_ItemLoadOp : Flamia_Op<"item.load", [Pure]> {
  let summary = "the fields of a scheduled work item";
  let description = [{
    Reads item `index` of the `[num_items, 8]` int32 item array
    (include/flamia/Schedule/ScheduleMetadata.h); `items` has that type.
  }];
  let arguments = (ins Flamia_GlobalType:$items, I32:$index);
  let results = (outs I32:$q_start, I32:$q_rows, I32:$doc_start, I32:$doc_end,
                      I32:$q_head, I32:$kv_head, I32:$doc_block_base,
                      I32:$q_tile);
  let assemblyFormat = "$items `[` $index `]` attr-dict `:` qualified(type($items))";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Fragments: MMA, masking, online softmax, epilogue
//===----------------------------------------------------------------------===//

def Flamia_FragZeroOp : Flamia_Op<"frag.zero", [Pure, Flamia_WarpgroupWide]> {
  let summary = "a zero fragment";
  let results = (outs Flamia_FragmentType:$result);
  let assemblyFormat = "attr-dict `:` qualified(type($result))";
}

def Flamia_RowsFillOp : Flamia_Op<"rows.fill", [Pure, Flamia_WarpgroupWide]> {
  let summary = "per-row values all equal to `value`";
  let arguments = (ins F32Attr:$value);
  let results = (outs Flamia_RowsType:$result);
  let assemblyFormat = "$value attr-dict `:` qualified(type($result))";
}

def Flamia_WarpgroupMmaOp : Flamia_Op<"wg.mma", [AttrSizedOperandSegments,
    Flamia_WarpgroupWide]> {
  let summary = "warpgroup matrix multiply-accumulate";
  let description = [{
    `acc + A B`: `A` is this warpgroup's rows of a shared-memory tile (`a`
    at stage `a_stage`, rows `[64 * warpgroup, +M)` of the tile) or a bf16
    fragment; `B` is `b` at stage `b_stage`, read as `N x K` (keys x head dim:
    S = Q K^T) or, with `b_transposed`, as `K x N` (keys x head dim: O = P V).
    Without `acc` the accumulator starts at zero. The result is complete
    (the MMA has been waited for) when the op returns, unless `async` is
    set: then the op issues the MMA as one group and returns at once, and
    the result may only be used by `flamia.wg.wait`, which returns it
    complete. That lets a warpgroup compute (softmax) while its tensor
    cores work; a register A operand stays live until that wait.

    The verifier checks the shapes: the result is an f32 `M x N` fragment
    (N at most 256), A provides `M` rows (a fragment) or tiles of a multiple
    of `M` rows, enough for every warpgroup of the enclosing role; A and B
    agree on the element type and on K, a multiple of 16; constant stages
    and stages from `flamia.pipeline.acquire` fit the buffers.
  }];
  let arguments = (ins AnyTypeOf<[Flamia_SmemType, Flamia_FragmentType]>:$a,
                       Optional<I32>:$a_stage,
                       Flamia_SmemType:$b, I32:$b_stage,
                       Optional<Flamia_FragmentType>:$acc,
                       UnitAttr:$b_transposed, UnitAttr:$async);
  let results = (outs Flamia_FragmentType:$result);
  let assemblyFormat = [{
    $a (`[` $a_stage^ `]`)? `,` $b `[` $b_stage `]`
    (`acc` `(` $acc^ `:` qualified(type($acc)) `)`)?
    attr-dict `:` qualified(type($a)) `,` qualified(type($b)) `->`
    qualified(type($result))
  }];
  let hasVerifier = 1;
}

def Flamia_SmemZeroRowsOp : Flamia_Op<"smem.zero_rows"> {
  let summary = "zero a stage's rows from a row on (role-wide, then a barrier)";
  let description = [{
    Writes zeros to rows `[from, to)` of stage `stage` of `tile` (every
    column; `to` defaults to R, the tile's rows), split among the threads of
    the enclosing role, makes them visible to the matrix units
    (`fence.proxy.async`) and waits for all of the role's threads (a named
    barrier; none in a `single_thread` role, whose one thread writes every
    row), so that an MMA issued after it reads the zeros. Every thread of the
    role executes it with the same operands.

    Why: the last key tile of a document also loads the first rows of the
    next document. Masking makes their P exactly 0, but 0 x Inf and 0 x NaN
    are NaN, so a non-finite value in the next document would reach this
    one's output through P V. Zeroing those V rows keeps documents isolated
    (L2) for every input, finite or not. `from` and `to` are in `[0, R]`;
    tiles have rows of a multiple of 128 bytes, or of 64 (each row then lies
    in whole 128-byte swizzle atoms, or is one 64-byte atom, so the zeroed
    rows are contiguous per atom).
  }];
  let arguments = (ins Flamia_SmemType:$tile, I32:$stage, I32:$from,
                       Optional<I32>:$to);
  let assemblyFormat = [{
    $tile `[` $stage `]` `from` $from (`to` $to^)? attr-dict `:` qualified(type($tile))
  }];
  let hasVerifier = 1;
}

def Flamia_SmemMxRoundOp : Flamia_Op<"smem.mx_round", [Flamia_WarpgroupWide]> {
  let summary = "round a warpgroup's 64 rows of a bf16 tile to MXFP8 in place of "
                "the quantizer (per-token scales)";
  let description = [{
    The executing warpgroup reads rows `[row, row + 64)` of stage
    `source_stage` of the bf16 tile `source`, splits each row into blocks of
    32 columns, quantizes each block by the contract's scale rule (the same
    per-token MXFP8 copy as `flamia.quantize_block`: E8M0 scale 2^e with e
    the smallest integer such that amax / 2^e <= 448, limited to
    [-127, 127]; elements x / 2^e rounded to nearest even E4M3 and
    saturated; a block holding a NaN or an infinity becomes all NaN) and
    writes the dequantized values (code x 2^e, exact in bf16) to the same
    rows of stage `dest_stage` of `dest`. Then it fences the writes against
    the matrix units' reads (`fence.proxy.async`) and waits for the
    warpgroup's 128 threads (a named barrier of its own), so that an MMA
    issued after it reads the rounded rows. Every thread of the warpgroup
    executes it with the same operands.

    Why: on sm_90a the forward reads Q once per work item. Rounding it in
    the kernel, from the bf16 original that the safe block loads anyway,
    saves the quantizer Q's read and its dequantized copy's write (a third
    of the forward quantizer's bytes), for a few instructions an element
    once per work item.

    Both tiles are `stages x R x D` bf16 with D a multiple of 64 (whole
    128-byte swizzle atoms of two blocks each); `row` is a multiple of 64
    below R.
  }];
  let arguments = (ins Flamia_SmemType:$source, I32:$source_stage,
                       Flamia_SmemType:$dest, I32:$dest_stage, I32:$row);
  let assemblyFormat = [{
    $source `[` $source_stage `]` `to` $dest `[` $dest_stage `]` `rows`
    $row attr-dict `:` qualified(type($source)) `,` qualified(type($dest))
  }];
  let hasVerifier = 1;
}

def Flamia_WarpgroupWaitOp : Flamia_Op<"wg.wait",
    [AllTypesMatch<["fragments", "results"]>]> {
  let summary = "wait for asynchronous warpgroup MMAs";
  let description = [{
    Waits until at most `pending` of this warpgroup's asynchronous
    `flamia.wg.mma` groups are still running, then returns `fragments`
    complete. Groups finish in the order they were issued, so a fragment is
    complete when at least `pending` asynchronous MMAs were issued after it;
    the verifier checks that for every operand (each one an `async` MMA's
    result in the same block).

    ```mlir
    %s = flamia.wg.mma %q[%qs], %k[%st] {async} : ...
    %o = flamia.wg.mma %p, %v[%prev] acc(%acc : ...) {async, b_transposed} : ...
    %s1 = flamia.wg.wait %s pending 1 : !flamia.frag<64x128xf32>
    ```
  }];
  let arguments = (ins Variadic<Flamia_FragmentType>:$fragments,
                       I64Attr:$pending);
  let results = (outs Variadic<Flamia_FragmentType>:$results);
  let assemblyFormat = [{
    $fragments `pending` $pending attr-dict `:` qualified(type($fragments))
  }];
  let builders = [
    OpBuilder<(ins "ValueRange":$fragments, "int64_t":$pending), [{
      build($_builder, $_state, fragments.getTypes(), fragments,
            $_builder.getI64IntegerAttr(pending));
    }]>
  ];
  let hasVerifier = 1;
}

def Flamia_FragMaskOp : Flamia_Op<"frag.mask", [Pure, Flamia_WarpgroupWide,
    AllTypesMatch<["scores", "result"]>]> {
  let summary = "causal and document masking of a score tile";
  let description = [{
    Sets entry (r, c) to -inf where key `key_base + c` is at or past
    `key_limit` (the document's end, document-local) or, when `causal`,
    after query `query_base + r`. Positions are document-local; `query_base`
    already includes this warpgroup's row offset. Scores are f32.

    With `transposed` the tile is S^T (the backward's dK/dV program): entry
    (r, c) is key `key_base + r` (with the warpgroup's row offset) and
    query `query_base + c`; it becomes -inf where the query is at or past
    `key_limit` (the limit always bounds the column positions) or, when
    `causal`, before the key.
  }];
  let arguments = (ins Flamia_FragmentType:$scores, I32:$query_base,
                       I32:$key_base, I32:$key_limit, UnitAttr:$causal,
                       UnitAttr:$transposed);
  let results = (outs Flamia_FragmentType:$result);
  let assemblyFormat = [{
    $scores `query` $query_base `key` $key_base `limit` $key_limit attr-dict
    `:` qualified(type($scores))
  }];
  let hasVerifier = 1;
}

def Flamia_SoftmaxUpdateOp : Flamia_Op<"softmax.update", [Pure, Flamia_WarpgroupWide,
    AllTypesMatch<["scores", "p"]>,
    AllTypesMatch<["max", "sum", "new_max", "new_sum", "alpha"]>]> {
  let summary = "one step of the online softmax";
  let description = [{
    In the log2 domain, with c = scale_log2 (> 0):
    m' = max(m, (rowmax scores) * c rounded toward +inf),
    p = exp2(fma(scores, c, -m')), alpha = exp2(m - m'),
    l' = l * alpha + rowsum p. The fma rounds the exact scores * c - m'
    once, and rounding m' up makes every exact exponent <= 0, so p <= 1.
    Returns (p, m', l', alpha). Scores are f32 with as many rows as `max`.

    With `p_scale` = k > 0, p and the sums are those of P x 2^k, the scale
    P is rounded with for the P V MMA (`flamia.frag.quantize` with
    `prescaled`): p = exp2(fma(scores, c, fl32(k - m'))). The factor costs
    one subtraction per row instead of a multiply per score. The fma then
    rounds at the exponent of the shifted argument, so p moves by up to
    2^-22 relative against exp2(fma(scores, c, -m')) x 2^k (the contract
    computes this form: docs/numerics.md, section 4).
  }];
  let arguments = (ins Flamia_FragmentType:$scores, Flamia_RowsType:$max,
                       Flamia_RowsType:$sum, F32:$scale_log2,
                       DefaultValuedAttr<I64Attr, "0">:$p_scale);
  let results = (outs Flamia_FragmentType:$p, Flamia_RowsType:$new_max,
                      Flamia_RowsType:$new_sum, Flamia_RowsType:$alpha);
  let assemblyFormat = [{
    $scores `max` $max `sum` $sum `scale` $scale_log2 attr-dict `:`
    qualified(type($scores)) `,` qualified(type($max))
  }];
  let hasVerifier = 1;
}

def Flamia_FragQuantizeOp : Flamia_Op<"frag.quantize", [Pure,
    Flamia_WarpgroupWide]> {
  let summary = "round P for the P V MMA";
  let description = [{
    Rounds `p * 2^fixed_scale` to the precision `precision` where
    `quantized` is true (E4M3 for the block-scaled path) and to bf16
    otherwise (the safe block). With a bf16 result (sm_90a) both roundings
    are held as bf16 in the A-operand layout: both are exact in bf16, so one
    MMA accumulates both, scaled by 2^fixed_scale (undone by
    flamia.attn.store). With an f8E4M3FN result (sm_100a, where the E4M3
    codes feed a block-scaled MMA directly) `quantized` must be true.

    `nan_via_row_sum` (bf16 result only) says that every NaN of P also
    enters the row sum that normalizes what the MMA accumulates, as in the
    forward's online softmax, so the output is NaN whatever a NaN of P
    rounds to. The lowering may then turn the E4M3 codes into bf16 with an
    integer shift and one bf16 multiply (exact for P >= 0) instead of
    through f32; a NaN of P becomes a finite value there. The backward's
    P, which dV sums without a row sum, must not set it.

    `prescaled` says that `p` already holds P x 2^fixed_scale (from
    `flamia.softmax.update` with `p_scale` = fixed_scale), so nothing is
    multiplied here.
  }];
  let arguments = (ins Flamia_FragmentType:$p, I1:$quantized,
                       Flamia_PrecisionAttr:$precision,
                       UnitAttr:$nan_via_row_sum, UnitAttr:$prescaled);
  let results = (outs Flamia_FragmentType:$result);
  let assemblyFormat = [{
    $p `quantized` $quantized attr-dict `:` qualified(type($p)) `->`
    qualified(type($result))
  }];
  let hasVerifier = 1;
}

def Flamia_FragScaleRowsOp : Flamia_Op<"frag.scale_rows", [Pure, Flamia_WarpgroupWide,
    AllTypesMatch<["frag", "result"]>]> {
  let summary = "multiply every row by its factor";
  let description = [{
    `frag` is an f32 fragment with as many rows as `factors`.

    With `skip_ones`, a warp whose rows all have the factor 1.0 leaves its
    part of the fragment as it is instead of multiplying: the result is the
    same bit for bit (x * 1.0 = x), and in the online softmax's rescale of
    O (alpha = 1 wherever a key tile does not raise the row maximum) it
    saves one multiply per accumulator entry at the cost of a vote and a
    warp-uniform branch.
  }];
  let arguments = (ins Flamia_FragmentType:$frag, Flamia_RowsType:$factors,
                       UnitAttr:$skip_ones);
  let results = (outs Flamia_FragmentType:$result);
  let assemblyFormat = [{
    $frag `by` $factors (`skip_ones` $skip_ones^)? attr-dict `:`
    qualified(type($frag)) `,` qualified(type($factors))
  }];
  let hasVerifier = 1;
}

def Flamia_AttnStoreOp : Flamia_Op<"attn.store", [Flamia_WarpgroupWide,
    AllTypesMatch<["max", "sum"]>]> {
  let summary = "normalize O and write O and LSE";
  let description = [{
    O = acc / (2^fixed_scale * sum) rounded to bf16 is written to rows
    `[q_start + row_base, +rows)` (only rows below `q_rows`) of head `head`
    of `o`; LSE = (max + log2 sum) * ln 2 to `lse[head, row]`. `acc` is an
    f32 fragment with as many rows as `max` and `D` columns; `o` is a bf16
    `[T, H, D]` tensor, `lse` an f32 `[H, T]` one. `heads` is `H` when it
    is a runtime value (`o` of type `?x?xD`), and absent when it is static.

    With `sum_prescaled`, `sum` carries the factor 2^fixed_scale as `acc`
    does (from `flamia.softmax.update` with `p_scale`): O = acc / sum, and
    LSE = (max + log2(sum * 2^-fixed_scale)) * ln 2, the same bits as the
    unscaled sum's (the scaling is exact).
  }];
  let arguments = (ins Flamia_FragmentType:$acc, Flamia_RowsType:$max,
                       Flamia_RowsType:$sum,
                       Arg<Flamia_GlobalType, "", [MemWrite]>:$o,
                       Arg<Flamia_GlobalType, "", [MemWrite]>:$lse,
                       I32:$q_start, I32:$row_base,
                       I32:$q_rows, I32:$head, I32:$num_tokens,
                       Optional<I32>:$heads, I64Attr:$fixed_scale,
                       UnitAttr:$sum_prescaled);
  let assemblyFormat = [{
    $acc `max` $max `sum` $sum `to` $o `,` $lse `rows` `(` $q_start `,`
    $row_base `,` $q_rows `)` `head` $head `tokens` $num_tokens
    (`heads` $heads^)? attr-dict `:`
    qualified(type($acc)) `,` qualified(type($max)) `,` qualified(type($o))
    `,` qualified(type($lse))
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Fused quantization
//===----------------------------------------------------------------------===//

def Flamia_QuantizeBlockOp : Flamia_Op<"quantize_block", [AttrSizedOperandSegments,
    Flamia_WarpgroupWide]> {
  let summary = "quantize one document-local token block of one head";
  let description = [{
    The CTA reads rows `[start, start + length)` of head `head` of `source`
    (bf16, `[T, H, D]`, `length <= 32`) once and writes each copy its
    results name: `per_token` (E4M3 payload `[T, H, D]` and E8M0 scales
    `[T, H, D/32]`, one per token and 32 channels), `token_block` (payload
    and scales `[NB, H, D/32]` at block `block`, one per 32x32 block), and
    optionally the dequantized bf16 values of either (`payload * 2^e`, exact)
    for targets without block-scaled MMAs. Unused outputs are absent. The
    verifier checks every output against `source`: payloads `f8E4M3FN`, scales
    `f8E8M0FNU` over `D/32` channel blocks, dequantized copies bf16, all with
    the source's `H` and `D`.

    The per-token copy may instead be NVFP4 (recipe `nvfp4-mixed`), as its
    payload's type `f4E2M1FN` says: scales `f8E4M3FN` read as unsigned E4M3,
    `[T, H, D/16]`, one per token and 16 channels, global scale 1; the payload
    holds two E2M1 codes per byte (element `2i` in the low nibble), so its
    `[T, H, D]` buffer takes `T * H * D / 2` bytes; the dequantized copy is
    `e2m1 * s`, exact in bf16. Its scale-factor tiles (`per_token_tiles`)
    are those of `kind::mxf4nvf4.block_scale.scale_vec::4X`: the same 128x4
    layout with one scale per 16 channels, a 512-byte tile per 64 channels
    in each slot, `[NB, H, 512 * ceil(D/64)]` i8, UE4M3 1.0 (0x38) past the
    last block.

    For block-scaled MMAs (sm_100a) the scales are also written as the
    512-byte scale-factor tiles tcgen05 reads (the 128x4 layout,
    include/flamia/Target/ScaleFactorLayout.h), in `[NB, H, 512]` i8
    buffers: the tile of the 128 rows starting at token block `b0` (4
    consecutive blocks) is slot `(b0, head)`, and block `block` writes its
    part of the four tiles that hold it (`b0 = block - 3 .. block`), so a
    key or query tile starting at any document-local block finds its tile
    at slot `(first block, head)`. `per_token_tiles`: rows are tokens,
    K-blocks channel blocks (operand A of S = Q K^T). `token_block_tiles`
    with `token_block_tile_rows = "tokens"`: the same for the token-block
    scales (operand B of S = Q K^T); with `"channels"`: rows are channels and
    K-blocks the 4 key blocks (operand B of O = P V). The CTA of the last
    block also fills the tile positions past the last block with scale 1.
    A tile holds at most 128 channels: tiles need `D <= 128`.
    `transposed_tiles` (with `token_block_tiles`) writes the same scales a
    second time in the other orientation (channels where
    `token_block_tile_rows` says tokens, and the reverse): the backward on
    sm_100a reads K, V, dO and Q's token blocks both as K-major operands
    (rows are tokens: S = Q K^T, dP = dO V^T) and as MN-major ones (rows
    are channels: dQ = dS K, dV = P^T dO, dK = dS^T Q).

    A copy's payload may be left out, its scales and dequantized copy
    kept: `per_token_scales(...)` and `token_block_scales(...)` instead of
    `per_token(payload, scales)` and `token_block(payload, scales)`. sm_90a
    does that by default, because its kernels read only the bf16
    dequantized copies (flamia-varlen-schedule{payloads}): the codes are
    still determined (a code is its dequantized value divided by its
    block's scale, exactly) without writing them. The copy's
    format is then its scales' type's: E8M0 for MXFP8, E4M3 for NVFP4.

    `heads` is the source's `H` when it is a runtime value (every tensor
    of type `?x?x...`: one kernel serves every head count) and absent when
    it is static.
  }];
  let arguments = (ins Flamia_GlobalType:$source, I32:$start, I32:$length,
                       I32:$block, I32:$head, Optional<I32>:$heads,
                       Optional<Flamia_GlobalType>:$per_token_data,
                       Optional<Flamia_GlobalType>:$per_token_scales,
                       Optional<Flamia_GlobalType>:$per_token_dequant,
                       Optional<Flamia_GlobalType>:$token_block_data,
                       Optional<Flamia_GlobalType>:$token_block_scales,
                       Optional<Flamia_GlobalType>:$token_block_dequant,
                       Optional<Flamia_GlobalType>:$per_token_tiles,
                       Optional<Flamia_GlobalType>:$token_block_tiles,
                       Optional<Flamia_GlobalType>:$token_block_transposed_tiles,
                       OptionalAttr<StrAttr>:$token_block_tile_rows);
  let assemblyFormat = [{
    $source `rows` `(` $start `,` $length `)` `block` $block `head` $head
    (`heads` $heads^)?
    custom<QuantizedCopies>($per_token_data, $per_token_scales,
                            $per_token_dequant, $token_block_data,
                            $token_block_scales, $token_block_dequant)
    (`per_token_tiles` `(` $per_token_tiles^ `)`)?
    (`token_block_tiles` `(` $token_block_tiles^ `)`)?
    (`transposed_tiles` `(` $token_block_transposed_tiles^ `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Per-item work before tiling (flamia-varlen-schedule -> flamia-tile)
//===----------------------------------------------------------------------===//

def Flamia_AttentionTileOp : Flamia_Op<"attention_tile", [AttrSizedOperandSegments]> {
  let summary = "the forward of one scheduled item, before tiling";
  let description = [{
    Computes O and LSE of the query tile of item `index` (rows
    `[q_start, q_start + q_rows)` of query head `q_head`, keys of its
    document) from the quantized operands `q`, `k`, `v` and, inside each
    query's safe block, the bf16 originals `q_safe`, `k_safe`, `v_safe`.
    `flamia-tile` expands it, with the work loop around it, into a
    pipelined, warp-specialized program for the kernel's target. `safe`
    holds the three bf16 originals exactly when the recipe has a safe block;
    `p` has a fixed scale; `o` is `[T, H, D]` with `q`'s `H` and `D` and
    `lse` is `[H, T]`. `heads(Hq, Hkv)` are the head counts when they are
    runtime values (`q` of type `?x?xD`: one kernel for every head count),
    absent when they are static. `debug_scores` (a debug build, f32
    `[T, H, block_n]`): the raw scores S = Q K^T of each query row against
    the first key tile of its document, as the MMA returned them, for
    checking that the backward recomputes the forward's S bit for bit.
    `round_q` (sm_90a, MXFP8 per-token Q): `q` is the bf16 original, not
    its dequantized copy, and the kernel rounds each query tile itself
    (`flamia.smem.mx_round`); with a safe block, `q` and `q_safe` are then
    the same tensor.
  }];
  let arguments = (ins Flamia_GlobalType:$items, I32:$index,
                       Variadic<Flamia_GlobalType>:$q, Variadic<Flamia_GlobalType>:$k,
                       Variadic<Flamia_GlobalType>:$v,
                       Variadic<Flamia_GlobalType>:$safe,
                       Flamia_GlobalType:$o, Flamia_GlobalType:$lse,
                       F32:$scale_log2, I32:$num_tokens,
                       Optional<I32>:$q_heads, Optional<I32>:$kv_heads,
                       Optional<Flamia_GlobalType>:$debug_scores,
                       UnitAttr:$causal, Flamia_RecipeAttr:$recipe,
                       Flamia_PrecisionAttr:$p, I64Attr:$block_m,
                       I64Attr:$block_n, UnitAttr:$round_q);
  let assemblyFormat = [{
    $items `[` $index `]` `q` `(` $q `)` `k` `(` $k `)` `v` `(` $v `)`
    `safe` `(` $safe `)` `to` $o `,` $lse `scale` $scale_log2 `tokens`
    $num_tokens (`heads` `(` $q_heads^ `,` $kv_heads `)`)?
    (`debug_scores` `(` $debug_scores^ `)`)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Host side: the launch plan of a compiled program
//===----------------------------------------------------------------------===//

def Flamia_WorkspaceOp : Flamia_Op<"workspace", [Pure]> {
  let summary = "a device buffer the runtime allocates";
  let description = [{
    `%q8 = flamia.workspace workspace "q_pt" dims ["T", "16", "128"] :
    !flamia.global<?x16x128xf8E4M3FN>`: a
    buffer named in the manifest (docs/runtime-abi.md); `dims` are its shape
    as manifest expressions (T, NB, ... known at run time). Kind `schedule`
    buffers (`items`, `block_info`, `counter`) are filled by the runtime
    from `cu_seqlens` before the first launch.
  }];
  let arguments = (ins StrAttr:$buffer_name, Flamia_WorkspaceKindAttr:$kind,
                       StrArrayAttr:$dims);
  let results = (outs Flamia_GlobalType:$buffer);
  let assemblyFormat = [{
    $kind $buffer_name `dims` $dims attr-dict `:` qualified(type($buffer))
  }];
  let hasVerifier = 1;
}

def Flamia_RuntimeValueOp : Flamia_Op<"runtime_value", [Pure]> {
  let summary = "a scalar the runtime supplies at launch";
  let description = [{
    `%n = flamia.runtime_value "NUM_ITEMS" : i32`: an integer symbol of the
    manifest (T, Hq, Hkv, D, NUM_DOCS, NB, NUM_ITEMS, NUM_KV_ITEMS, NUM_SMS)
    or the f32
    values `softmax_scale` and `softmax_scale_log2`.
  }];
  let arguments = (ins StrAttr:$value_name);
  let results = (outs AnyTypeOf<[I32, F32]>:$value);
  let assemblyFormat = "$value_name attr-dict `:` type($value)";
  let hasVerifier = 1;
}

def Flamia_PrefetchRowsOp : Flamia_Op<"prefetch_rows"> {
  let summary = "ask the L2 cache for rows a later op of the kernel reads";
  let description = [{
    Thread `t < length` of the CTA asks the L2 cache to fetch row
    `start + t` of head `head` of `source` (`[T, H, D]`, one contiguous row
    of `D` elements), with `cp.async.bulk.prefetch.L2` (sm_90 and later). A
    hint: it returns nothing, waits for nothing and changes no value, so a
    later load of the same bytes by this CTA finds them in L2 rather than
    waiting on DRAM. The quantization kernel issues it for K and V before it
    quantizes Q, so that the three tensors' reads overlap. `length <= 128`
    (the kernel's threads); a row's bytes are a multiple of 16, as the bulk
    copy requires. `heads` as for `flamia.quantize_block`.
  }];
  let arguments = (ins Flamia_GlobalType:$source, I32:$start, I32:$length,
                       I32:$head, Optional<I32>:$heads);
  let assemblyFormat = [{
    $source `rows` `(` $start `,` $length `)` `head` $head
    (`heads` $heads^)? attr-dict `:` qualified(type($source)) (`,` type($heads)^)?
  }];
  let hasVerifier = 1;
}

def Flamia_BlockInfoLoadOp : Flamia_Op<"block_info.load", [Pure]> {
  let summary = "start token and length of a document-local token block";
  let description = [{
    Reads row `block` of the `[NB, 2]` int32 block list the runtime builds
    from `cu_seqlens`; `block_info` has that type.
  }];
  let arguments = (ins Flamia_GlobalType:$block_info, I32:$block);
  let results = (outs I32:$start, I32:$length);
  let assemblyFormat = "$block_info `[` $block `]` attr-dict `:` qualified(type($block_info))";
  let hasVerifier = 1;
}

def Flamia_LaunchOp : Flamia_Op<"launch", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "launch a flamia.kernel";
  let description = [{
    Launches kernel `kernel` with `args` (buffers and scalars). Launches run
    in order on one stream. `grid` is the grid as manifest expressions (a
    persistent kernel uses `NUM_SMS`). Before lowering `kernel` names a
    `flamia.kernel`; convert-flamia-to-nvvm retargets it to the kernel's
    function in its `gpu.module` (`@name_module::@name`).
  }];
  let arguments = (ins SymbolRefAttr:$kernel, Variadic<AnyType>:$args,
                       StrArrayAttr:$grid);
  let assemblyFormat = [{
    $kernel `(` $args `)` `grid` $grid attr-dict `:` functional-type($args, results)
  }];
}

//===----------------------------------------------------------------------===//
// Backward fragments: recomputed P and dS, dS quantization, gradient stores
//===----------------------------------------------------------------------===//

def Flamia_SoftmaxGradOp : Flamia_Op<"softmax.grad", [Flamia_WarpgroupWide,
    AllTypesMatch<["scores", "dp", "p", "ds"]>, AllTypesMatch<["lse", "delta"]>]> {
  let summary = "recomputed P and dS = P (dP - D) of a score tile";
  let description = [{
    Entry (r, c) belongs to query `query_base + r` (or, with `transposed`,
    `query_base + c`: rows are keys), document-local, of head `head`. With
    the query's lse and delta read from the `[H, T]` f32 tensors `lse`
    (natural log, as the forward wrote it) and `delta` at token
    `doc_start + query`:

      P = exp2(fma(scores, scale_log2, -fl32(lse * log2(e)))),
      dS = P * (dp - delta),

    the fma rounding the exact product minus lse2 once, as the forward.

    Where the scores are -inf (masked by flamia.frag.mask) or the query is
    at or past `query_limit` (the document's length), P and dS are exactly
    0, whatever dp holds: masked entries contribute nothing, not 0 x NaN.
    Nothing is read for those queries.

    With `unmasked`, the program states that the tile needs no mask: every
    query of the tile is below `query_limit` and no entry is masked (the
    tile is wholly inside the document and, if causal, no key of it comes
    after a query of it). Every entry is then computed by the formula alone, as
    the reference computes an unmasked entry, without a test per entry,
    and the per-query values are read at constant offsets from one address
    per thread. The program that sets it is responsible for the claim;
    flamia-tile sets it on the branch of its tiles' mask condition that
    skips flamia.frag.mask.

    With `lse2`, the values fl32(lse * log2(e)) were loaded before, by
    flamia.frag.load_lse2 on the same queries, and `lse` is not read:
    issued ahead of the wait for the MMAs that produce `scores`, those
    loads run while the MMAs do instead of after them.
  }];
  let arguments = (ins Flamia_FragmentType:$scores, Flamia_FragmentType:$dp,
                       Arg<Flamia_GlobalType, "", [MemRead]>:$lse,
                       Arg<Flamia_GlobalType, "", [MemRead]>:$delta,
                       I32:$head, I32:$doc_start, I32:$query_base,
                       I32:$query_limit, I32:$num_tokens, F32:$scale_log2,
                       Optional<Flamia_FragmentType>:$lse2,
                       UnitAttr:$transposed, UnitAttr:$unmasked);
  let results = (outs Flamia_FragmentType:$p, Flamia_FragmentType:$ds);
  let assemblyFormat = [{
    $scores `,` $dp `lse` $lse `delta` $delta `head` $head `queries` `(`
    $doc_start `,` $query_base `,` $query_limit `)` `tokens` $num_tokens
    `scale` $scale_log2 (`preloaded` $lse2^ `:` qualified(type($lse2)))?
    attr-dict `:`
    qualified(type($scores)) `,` qualified(type($lse))
  }];
  let hasVerifier = 1;
}

def Flamia_FragLoadLse2Op : Flamia_Op<"frag.load_lse2", [Flamia_WarpgroupWide]> {
  let summary = "a score tile's per-query fl32(lse * log2(e)), loaded ahead";
  let description = [{
    Entry (r, c) of the result is fl32(lse[head, doc_start + q] * log2(e))
    of its query q = `query_base + r` (with `transposed`, `query_base + c`),
    the value flamia.softmax.grad subtracts from the log2-domain score,
    read with the same addresses as softmax.grad would: a query at or past
    `query_limit` reads the document's first token instead (its entries are
    zeroed by softmax.grad, whatever the value), and with `unmasked` every
    query of the tile is below `query_limit` and the values are read at
    constant offsets from one address per thread. The result has the
    shape of the scores it is for, and is passed to softmax.grad as
    `preloaded`; the op exists so that a program can issue the loads
    before it waits for the MMAs of the scores. Layouts with a whole row
    per thread (sm_100a) are not supported.
  }];
  let arguments = (ins Arg<Flamia_GlobalType, "", [MemRead]>:$lse,
                       I32:$head, I32:$doc_start, I32:$query_base,
                       I32:$query_limit, I32:$num_tokens,
                       UnitAttr:$transposed, UnitAttr:$unmasked);
  let results = (outs Flamia_FragmentType:$result);
  let assemblyFormat = [{
    $lse `head` $head `queries` `(` $doc_start `,` $query_base `,`
    $query_limit `)` `tokens` $num_tokens attr-dict `:` qualified(type($lse))
    `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def Flamia_FragBlockQuantizeOp : Flamia_Op<"frag.block_quantize", [Pure,
    Flamia_WarpgroupWide]> {
  let summary = "quantize each row in blocks of 32 columns (dS)";
  let description = [{
    Where `quantized` is true, columns `[32 b, 32 b + 32)` of each row form
    a block quantized by the contract's scale rule (docs/design.md, "Scale
    rule"): amax over the block, E8M0 scale 2^e with e the smallest integer
    such that amax / 2^e <= 448 (limited to [-127, 127], e = -127 for an
    all-zero block), elements x / 2^e rounded to nearest even E4M3 and
    saturated; a block holding a NaN or an infinity becomes all NaN. The
    result holds the dequantized values (code x 2^e) as bf16, in the
    A-operand layout, for a bf16 MMA (sm_90a). Where `quantized` is false
    (the safe block) every value is rounded to bf16. Blocks start at column
    0: the fragment's first column must be a 32-aligned document-local
    position along the contraction axis of the MMA that reads the result.
  }];
  let arguments = (ins Flamia_FragmentType:$values, I1:$quantized);
  let results = (outs Flamia_FragmentType:$result);
  let assemblyFormat = [{
    $values `quantized` $quantized attr-dict `:` qualified(type($values))
    `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def Flamia_GradStoreOp : Flamia_Op<"grad.store", [Flamia_WarpgroupWide,
    AttrSizedOperandSegments]> {
  let summary = "scale a gradient tile and write it";
  let description = [{
    Writes `acc * factor` (f32, rounded to the element type of `out`, bf16
    or f32) to rows `[row_start + row_base, +rows)` of head `head` of the
    `[T, H, D]` tensor `out`, only the rows below `valid_rows` (relative to
    `row_start`). `acc` is f32 with `D` columns, or, with `columns`, holds
    the columns `[columns, columns + N)` of the rows (N its columns, a
    multiple of 8; two warpgroups of sm_100a each write half of a
    tensor-memory accumulator). `heads` is `H` when it is a runtime value
    (`out` of type `?x?xD`), absent when it is static.
  }];
  let arguments = (ins Flamia_FragmentType:$acc,
                       Arg<Flamia_GlobalType, "", [MemWrite]>:$out,
                       I32:$row_start, I32:$row_base, I32:$valid_rows,
                       I32:$head, F32:$factor, Optional<I32>:$heads,
                       Optional<I32>:$columns);
  let assemblyFormat = [{
    $acc `times` $factor `to` $out `rows` `(` $row_start `,` $row_base `,`
    $valid_rows `)` `head` $head (`heads` $heads^)?
    (`columns` $columns^)? attr-dict `:`
    qualified(type($acc)) `,`
    qualified(type($out))
  }];
  let hasVerifier = 1;
}

def Flamia_RowDotOp : Flamia_Op<"row_dot", [Flamia_WarpgroupWide]> {
  let summary = "per-row dot products of two tensors (D = rowsum(dO * O))";
  let description = [{
    For rows `t` in `[start, start + length)` (`length <= 32`) of head
    `head`: `out[head, t] = fl32(sum_d a[t, head, d] * b[t, head, d])`,
    the exact f64 products of the bf16 inputs summed as TwoSum pairs and
    rounded once to f32 through round-to-odd: fl32 of the exact sum
    unless the terms span more than about 2^80. `a`, `b` are bf16
    `[T, H, D]`, `out` f32 `[H, T]`. The CTA's threads share the rows; the summation order is fixed. `heads` is `H`
    when it is a runtime value (`a` of type `?x?xD`), absent when static.
  }];
  let arguments = (ins Arg<Flamia_GlobalType, "", [MemRead]>:$a,
                       Arg<Flamia_GlobalType, "", [MemRead]>:$b,
                       Arg<Flamia_GlobalType, "", [MemWrite]>:$out,
                       I32:$start, I32:$length, I32:$head,
                       I32:$num_tokens, Optional<I32>:$heads);
  let assemblyFormat = [{
    $a `,` $b `rows` `(` $start `,` $length `)` `head` $head `to` $out
    `tokens` $num_tokens (`heads` $heads^)?
    attr-dict `:` qualified(type($a)) `,` qualified(type($b)) `,`
    qualified(type($out))
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Backward per-item work before tiling (flamia-varlen-schedule -> flamia-tile)
//===----------------------------------------------------------------------===//

def Flamia_AttentionDqTileOp : Flamia_Op<"attention_dq_tile",
    [AttrSizedOperandSegments]> {
  let summary = "dQ of one scheduled query tile, before tiling";
  let description = [{
    For the query tile of item `index` of the forward's schedule (rows
    `[q_start, q_start + q_rows)` of query head `q_head`, the keys of its
    document, at or before the query when causal): recomputes S = Q K^T
    from the forward's operands `q`, `k`, P = exp2(S log2(e) - LSE) from
    the forward's `lse`, dP = dO V^T from `grad_o`, `v`, dS = P (dP - delta)
    quantized in 32-key blocks, and writes dQ = softmax_scale * dS K to
    `dq`. Inside each query's safe block every GEMM reads the bf16
    originals `safe` (q, k, v, grad_o) and dS is rounded to bf16.
    `flamia-tile` expands it, with the work loop around it, into the
    program of the kernel's target. `heads(Hq, Hkv)` and `debug_scores` (the
    recomputed S of the first key tile) as for `flamia.attention_tile`.
    `k_tb`, when present, is K's copy for dQ = dS K where it differs from
    the scores' `k`: a recipe that quantizes K per token for S = Q K^T
    (`mxfp8-strict`, `nvfp4-mixed`) reads K's 32x32 token-block copy there.
    Absent, `k` serves both GEMMs.
  }];
  let arguments = (ins Flamia_GlobalType:$items, I32:$index,
                       Variadic<Flamia_GlobalType>:$q,
                       Variadic<Flamia_GlobalType>:$k,
                       Variadic<Flamia_GlobalType>:$v,
                       Variadic<Flamia_GlobalType>:$grad_o,
                       Variadic<Flamia_GlobalType>:$k_tb,
                       Variadic<Flamia_GlobalType>:$safe,
                       Flamia_GlobalType:$lse, Flamia_GlobalType:$delta,
                       Arg<Flamia_GlobalType, "", [MemWrite]>:$dq,
                       F32:$scale_log2, F32:$softmax_scale, I32:$num_tokens,
                       Optional<I32>:$q_heads, Optional<I32>:$kv_heads,
                       Optional<Flamia_GlobalType>:$debug_scores,
                       UnitAttr:$causal, Flamia_RecipeAttr:$recipe,
                       I64Attr:$block_m, I64Attr:$block_n);
  let assemblyFormat = [{
    $items `[` $index `]` `q` `(` $q `)` `k` `(` $k `)` `v` `(` $v `)`
    `grad_o` `(` $grad_o `)` (`k_tb` `(` $k_tb^ `)`)? `safe` `(` $safe `)`
    `lse` $lse `delta` $delta `to` $dq `scale` $scale_log2 `,` $softmax_scale `tokens` $num_tokens
    (`heads` `(` $q_heads^ `,` $kv_heads `)`)?
    (`debug_scores` `(` $debug_scores^ `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Flamia_AttentionDkdvTileOp : Flamia_Op<"attention_dkdv_tile",
    [AttrSizedOperandSegments]> {
  let summary = "dK and dV of one scheduled key tile, before tiling";
  let description = [{
    For the key tile of item `index` of the key-tile schedule (keys
    `[q_start, q_start + q_rows)` of key/value head `kv_head`: the fields
    of a query item, read as a key tile), summed over the query heads of
    its group and the queries of its document (at or after the key when
    causal), in query tiles of `block_m`: recomputes S^T = K Q^T from the
    forward's `k`, `q`, P^T from `lse`, dP^T = V dO^T from `v`, `grad_o`,
    dS^T = P^T (dP^T - delta) quantized in 32-query blocks; writes
    dV = P^T dO (P quantized with the fixed scale of `p`, dO from
    `grad_o`) to `dv` and dK = softmax_scale * dS^T Q from the token-block
    copy `q_tb` to `dk`. Inside each query's safe block every GEMM reads
    the bf16 originals `safe` (q, k, v, grad_o), P and dS are rounded to
    bf16. `heads(Hq, Hkv)` as for `flamia.attention_tile`; with runtime
    head counts the group (`Hq / Hkv` query heads) is a runtime loop bound.
    `grad_o_tb`, when present, is dO's copy for dV = P^T dO where it differs
    from dP's `grad_o`: a recipe that quantizes dO per token for
    dP = dO V^T (`mxfp8-strict`, `nvfp4-mixed`) reads dO's 32x32
    token-block copy there. Absent, `grad_o` serves both GEMMs.
  }];
  let arguments = (ins Flamia_GlobalType:$items, I32:$index,
                       Variadic<Flamia_GlobalType>:$q,
                       Variadic<Flamia_GlobalType>:$k,
                       Variadic<Flamia_GlobalType>:$v,
                       Variadic<Flamia_GlobalType>:$grad_o,
                       Variadic<Flamia_GlobalType>:$q_tb,
                       Variadic<Flamia_GlobalType>:$grad_o_tb,
                       Variadic<Flamia_GlobalType>:$safe,
                       Flamia_GlobalType:$lse, Flamia_GlobalType:$delta,
                       Arg<Flamia_GlobalType, "", [MemWrite]>:$dk,
                       Arg<Flamia_GlobalType, "", [MemWrite]>:$dv,
                       F32:$scale_log2, F32:$softmax_scale, I32:$num_tokens,
                       Optional<I32>:$q_heads, Optional<I32>:$kv_heads,
                       UnitAttr:$causal, Flamia_RecipeAttr:$recipe,
                       Flamia_PrecisionAttr:$p, I64Attr:$block_m,
                       I64Attr:$block_n);
  let assemblyFormat = [{
    $items `[` $index `]` `q` `(` $q `)` `k` `(` $k `)` `v` `(` $v `)`
    `grad_o` `(` $grad_o `)` `q_tb` `(` $q_tb `)`
    (`grad_o_tb` `(` $grad_o_tb^ `)`)? `safe` `(` $safe `)`
    `lse` $lse `delta` $delta `to` $dk `,` $dv `scale` $scale_log2 `,`
    $softmax_scale `tokens` $num_tokens
    (`heads` `(` $q_heads^ `,` $kv_heads `)`)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // FLAMIA_KERNEL_OPS_TD
