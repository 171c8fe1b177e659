// RUN: flamia-opt %s -split-input-file | flamia-opt -split-input-file | FileCheck %s
// RUN: flamia-opt %s -split-input-file --mlir-print-op-generic | flamia-opt -split-input-file | FileCheck %s
// Every block-level type and op prints in a form that parses back to the
// same IR (custom and generic forms).

// CHECK-LABEL: func.func private @types
// CHECK-SAME: (!flamia.global<?x16x128xbf16>, !flamia.global<1xi32>, !flamia.global<8x?xf32>,
// CHECK-SAME: !flamia.smem<2x128x64xbf16>, !flamia.smem<1x64x128xf8E4M3FN>,
// CHECK-SAME: !flamia.pipeline<3>, !flamia.queue,
// CHECK-SAME: !flamia.frag<64x128xf32>, !flamia.frag<128x64xbf16>, !flamia.rows<64 x f32>)
func.func private @types(!flamia.global<?x16x128xbf16>, !flamia.global<1xi32>,
                         !flamia.global<8x?xf32>,
                         !flamia.smem<2x128x64xbf16>, !flamia.smem<1x64x128xf8E4M3FN>,
                         !flamia.pipeline<3>, !flamia.queue,
                         !flamia.frag<64x128xf32>, !flamia.frag<128x64xbf16>,
                         !flamia.rows<64 x f32>)

// -----

// A warp-specialized persistent attention kernel in the shape flamia-tile
// writes (loops left out): a single-thread producer role issues TMA copies,
// two consumer warpgroups run S = Q K^T, the online softmax and O += P V.
flamia.kernel @attention(%q: !flamia.global<?x8x128xbf16> {flamia.param = "q"},
                         %k: !flamia.global<?x2x128xbf16> {flamia.param = "k"},
                         %v: !flamia.global<?x2x128xbf16> {flamia.param = "v"},
                         %o: !flamia.global<?x8x128xbf16> {flamia.param = "o"},
                         %lse: !flamia.global<8x?xf32> {flamia.param = "lse"},
                         %items: !flamia.global<?x8xi32> {flamia.param = "items"},
                         %num_items: i32 {flamia.param = "num_items"},
                         %counter: !flamia.global<1xi32> {flamia.param = "counter"},
                         %scale: f32 {flamia.param = "softmax_scale_log2"},
                         %tokens: i32 {flamia.param = "T"})
    attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64,
                tile = {block_m = 128 : i64, block_n = 128 : i64, stages = 2 : i64}} {
  %qs = flamia.smem.alloc : !flamia.smem<1x128x128xbf16>
  %ks = flamia.smem.alloc : !flamia.smem<2x128x128xbf16>
  %vs = flamia.smem.alloc : !flamia.smem<2x128x128xbf16>
  %qp = flamia.pipeline.create consumers 256 : !flamia.pipeline<1>
  %kvp = flamia.pipeline.create consumers 256 : !flamia.pipeline<2>
  %queue = flamia.queue.create %counter, %num_items receivers 256 : !flamia.global<1xi32>
  flamia.role "producer" warpgroups [0, 1) registers 40 single_thread {
    %c0 = arith.constant 0 : i32
    %c128 = arith.constant 128 : i32
    %index = flamia.queue.next fetch %queue[%c0]
    %q_start, %q_rows, %doc_start, %doc_end, %q_head, %kv_head, %block_base, %q_tile =
        flamia.item.load %items[%index] : !flamia.global<?x8xi32>
    %qst = flamia.pipeline.acquire producer %qp[%c0] : !flamia.pipeline<1>
    flamia.pipeline.expect %qp[%qst] bytes 32768 : !flamia.pipeline<1>
    %qcol = arith.muli %q_head, %c128 : i32
    flamia.tma.load %q[%q_start, %qcol] -> %qs[%qst] on %qp
        : !flamia.global<?x8x128xbf16>, !flamia.smem<1x128x128xbf16>, !flamia.pipeline<1>
    %st = flamia.pipeline.acquire producer %kvp[%c0] : !flamia.pipeline<2>
    flamia.pipeline.expect %kvp[%st] bytes 65536 : !flamia.pipeline<2>
    %kvcol = arith.muli %kv_head, %c128 : i32
    flamia.tma.load %k[%doc_start, %kvcol] -> %ks[%st] on %kvp
        : !flamia.global<?x2x128xbf16>, !flamia.smem<2x128x128xbf16>, !flamia.pipeline<2>
    flamia.tma.load %v[%doc_start, %kvcol] -> %vs[%st] on %kvp
        : !flamia.global<?x2x128xbf16>, !flamia.smem<2x128x128xbf16>, !flamia.pipeline<2>
    flamia.return
  }
  flamia.role "consumer" warpgroups [1, 3) registers 232 {
    %wg = flamia.warpgroup_id
    %c0 = arith.constant 0 : i32
    %c64 = arith.constant 64 : i32
    %index = flamia.queue.next receive %queue[%c0]
    %q_start, %q_rows, %doc_start, %doc_end, %q_head, %kv_head, %block_base, %q_tile =
        flamia.item.load %items[%index] : !flamia.global<?x8xi32>
    %doc_len = arith.subi %doc_end, %doc_start : i32
    %row_base = arith.muli %wg, %c64 : i32
    %qst = flamia.pipeline.acquire consumer %qp[%c0] : !flamia.pipeline<1>
    %st = flamia.pipeline.acquire consumer %kvp[%c0] : !flamia.pipeline<2>
    %m0 = flamia.rows.fill 0xFF800000 : !flamia.rows<64 x f32>
    %l0 = flamia.rows.fill 0.0 : !flamia.rows<64 x f32>
    %o0 = flamia.frag.zero : !flamia.frag<64x128xf32>
    flamia.turn take among 2
    %s = flamia.wg.mma %qs[%qst], %ks[%st]
        : !flamia.smem<1x128x128xbf16>, !flamia.smem<2x128x128xbf16> -> !flamia.frag<64x128xf32>
    flamia.turn give among 2
    flamia.pipeline.release %qp[%qst] : !flamia.pipeline<1>
    %causal = flamia.frag.mask %s query %row_base key %c0 limit %doc_len {causal}
        : !flamia.frag<64x128xf32>
    %masked = flamia.frag.mask %causal query %row_base key %c0 limit %doc_len
        : !flamia.frag<64x128xf32>
    %p, %m1, %l1, %alpha = flamia.softmax.update %masked max %m0 sum %l0 scale %scale
        : !flamia.frag<64x128xf32>, !flamia.rows<64 x f32>
    %true = arith.constant true
    %p8 = flamia.frag.quantize %p quantized %true
        {precision = #flamia.precision<f8E4M3FN, fixed_scale = 8>}
        : !flamia.frag<64x128xf32> -> !flamia.frag<64x128xbf16>
    %p8n = flamia.frag.quantize %p quantized %true
        {nan_via_row_sum, precision = #flamia.precision<f8E4M3FN, fixed_scale = 8>}
        : !flamia.frag<64x128xf32> -> !flamia.frag<64x128xbf16>
    %o1 = flamia.frag.scale_rows %o0 by %alpha : !flamia.frag<64x128xf32>, !flamia.rows<64 x f32>
    %o1s = flamia.frag.scale_rows %o0 by %alpha skip_ones : !flamia.frag<64x128xf32>, !flamia.rows<64 x f32>
    %o2 = flamia.wg.mma %p8, %vs[%st] acc(%o1 : !flamia.frag<64x128xf32>) {b_transposed}
        : !flamia.frag<64x128xbf16>, !flamia.smem<2x128x128xbf16> -> !flamia.frag<64x128xf32>
    %pv = flamia.wg.mma %p8, %vs[%st] {b_transposed}
        : !flamia.frag<64x128xbf16>, !flamia.smem<2x128x128xbf16> -> !flamia.frag<64x128xf32>
    flamia.pipeline.release %kvp[%st] : !flamia.pipeline<2>
    flamia.attn.store %o2 max %m1 sum %l1 to %o, %lse rows(%q_start, %row_base, %q_rows)
        head %q_head tokens %tokens {fixed_scale = 8 : i64}
        : !flamia.frag<64x128xf32>, !flamia.rows<64 x f32>, !flamia.global<?x8x128xbf16>,
          !flamia.global<8x?xf32>
  }
  flamia.return
}

// CHECK-LABEL: flamia.kernel @attention(
// CHECK-SAME: %arg0: !flamia.global<?x8x128xbf16> {flamia.param = "q"}
// CHECK-SAME: %arg6: i32 {flamia.param = "num_items"}, %arg7: !flamia.global<1xi32> {flamia.param = "counter"}, %arg8: f32 {flamia.param = "softmax_scale_log2"}
// CHECK-SAME: attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64, tile = {block_m = 128 : i64, block_n = 128 : i64, stages = 2 : i64}} {
// CHECK-NEXT: %[[QS:.*]] = flamia.smem.alloc : !flamia.smem<1x128x128xbf16>
// CHECK-NEXT: %[[KS:.*]] = flamia.smem.alloc : !flamia.smem<2x128x128xbf16>
// CHECK-NEXT: %[[VS:.*]] = flamia.smem.alloc : !flamia.smem<2x128x128xbf16>
// CHECK-NEXT: %[[QP:.*]] = flamia.pipeline.create consumers 256 : !flamia.pipeline<1>
// CHECK-NEXT: %[[KVP:.*]] = flamia.pipeline.create consumers 256 : !flamia.pipeline<2>
// CHECK-NEXT: %[[QUEUE:.*]] = flamia.queue.create %arg7, %arg6 receivers 256 : !flamia.global<1xi32>

// The producer. The role's implicit flamia.return is not printed.
// CHECK-NEXT: flamia.role "producer" warpgroups[0, 1) registers 40 single_thread {
// CHECK: %[[PINDEX:.*]] = flamia.queue.next fetch %[[QUEUE]][%{{.*}}]{{$}}
// CHECK-NEXT: %[[Q_START:q_start]], %q_rows, %[[DOC_START:doc_start]], %doc_end, %[[Q_HEAD:q_head]], %[[KV_HEAD:kv_head]], %doc_block_base, %q_tile = flamia.item.load %arg5[%[[PINDEX]]] : !flamia.global<?x8xi32>
// CHECK-NEXT: %[[QST:.*]] = flamia.pipeline.acquire producer %[[QP]][%{{.*}}] : !flamia.pipeline<1>
// CHECK-NEXT: flamia.pipeline.expect %[[QP]][%[[QST]]] bytes 32768 : !flamia.pipeline<1>
// CHECK-NEXT: %[[QCOL:.*]] = arith.muli %[[Q_HEAD]]
// CHECK-NEXT: flamia.tma.load %arg0[%[[Q_START]], %[[QCOL]]] -> %[[QS]][%[[QST]]] on %[[QP]] : !flamia.global<?x8x128xbf16>, !flamia.smem<1x128x128xbf16>, !flamia.pipeline<1>
// CHECK-NEXT: %[[ST:.*]] = flamia.pipeline.acquire producer %[[KVP]][%{{.*}}] : !flamia.pipeline<2>
// CHECK-NEXT: flamia.pipeline.expect %[[KVP]][%[[ST]]] bytes 65536 : !flamia.pipeline<2>
// CHECK-NEXT: %[[KVCOL:.*]] = arith.muli %[[KV_HEAD]]
// CHECK-NEXT: flamia.tma.load %arg1[%[[DOC_START]], %[[KVCOL]]] -> %[[KS]][%[[ST]]] on %[[KVP]] : !flamia.global<?x2x128xbf16>, !flamia.smem<2x128x128xbf16>, !flamia.pipeline<2>
// CHECK-NEXT: flamia.tma.load %arg2[%[[DOC_START]], %[[KVCOL]]] -> %[[VS]][%[[ST]]] on %[[KVP]] : !flamia.global<?x2x128xbf16>, !flamia.smem<2x128x128xbf16>, !flamia.pipeline<2>
// CHECK-NEXT: }

// The consumers.
// CHECK-NEXT: flamia.role "consumer" warpgroups[1, 3) registers 232 {
// CHECK-NEXT: %[[WG:.*]] = flamia.warpgroup_id{{$}}
// CHECK: flamia.queue.next receive %[[QUEUE]][%{{.*}}]{{$}}
// CHECK: %[[QST:.*]] = flamia.pipeline.acquire consumer %[[QP]][%{{.*}}] : !flamia.pipeline<1>
// CHECK-NEXT: %[[ST:.*]] = flamia.pipeline.acquire consumer %[[KVP]][%{{.*}}] : !flamia.pipeline<2>
// CHECK-NEXT: %[[M0:.*]] = flamia.rows.fill 0xFF800000 : !flamia.rows<64 x f32>
// CHECK-NEXT: %[[L0:.*]] = flamia.rows.fill 0.000000e+00 : !flamia.rows<64 x f32>
// CHECK-NEXT: %[[O0:.*]] = flamia.frag.zero : !flamia.frag<64x128xf32>
// CHECK-NEXT: flamia.turn take among 2{{$}}
// CHECK-NEXT: %[[S:.*]] = flamia.wg.mma %[[QS]][%[[QST]]], %[[KS]][%[[ST]]] : !flamia.smem<1x128x128xbf16>, !flamia.smem<2x128x128xbf16> -> !flamia.frag<64x128xf32>
// CHECK-NEXT: flamia.turn give among 2{{$}}
// CHECK-NEXT: flamia.pipeline.release %[[QP]][%[[QST]]] : !flamia.pipeline<1>
// CHECK-NEXT: %[[CAUSAL:.*]] = flamia.frag.mask %[[S]] query %{{.*}} key %{{.*}} limit %{{.*}} {causal} : !flamia.frag<64x128xf32>
// CHECK-NEXT: %[[MASKED:.*]] = flamia.frag.mask %[[CAUSAL]] query %{{.*}} key %{{.*}} limit %{{.*}} : !flamia.frag<64x128xf32>
// CHECK-NEXT: %p, %new_max, %new_sum, %alpha = flamia.softmax.update %[[MASKED]] max %[[M0]] sum %[[L0]] scale %arg8 : !flamia.frag<64x128xf32>, !flamia.rows<64 x f32>
// CHECK-NEXT: %[[TRUE:.*]] = arith.constant true
// CHECK-NEXT: %[[P8:.*]] = flamia.frag.quantize %p quantized %[[TRUE]] {precision = #flamia.precision<f8E4M3FN, fixed_scale = 8>} : !flamia.frag<64x128xf32> -> !flamia.frag<64x128xbf16>
// CHECK-NEXT: flamia.frag.quantize %p quantized %[[TRUE]] {nan_via_row_sum, precision = #flamia.precision<f8E4M3FN, fixed_scale = 8>} : !flamia.frag<64x128xf32> -> !flamia.frag<64x128xbf16>
// CHECK-NEXT: %[[O1:.*]] = flamia.frag.scale_rows %[[O0]] by %alpha : !flamia.frag<64x128xf32>, !flamia.rows<64 x f32>
// CHECK-NEXT: flamia.frag.scale_rows %[[O0]] by %alpha skip_ones : !flamia.frag<64x128xf32>, !flamia.rows<64 x f32>
// CHECK-NEXT: %[[O2:.*]] = flamia.wg.mma %[[P8]], %[[VS]][%[[ST]]] acc(%[[O1]] : !flamia.frag<64x128xf32>) {b_transposed} : !flamia.frag<64x128xbf16>, !flamia.smem<2x128x128xbf16> -> !flamia.frag<64x128xf32>
// CHECK-NEXT: flamia.wg.mma %[[P8]], %[[VS]][%[[ST]]] {b_transposed} : !flamia.frag<64x128xbf16>, !flamia.smem<2x128x128xbf16> -> !flamia.frag<64x128xf32>
// CHECK-NEXT: flamia.pipeline.release %[[KVP]][%[[ST]]] : !flamia.pipeline<2>
// CHECK-NEXT: flamia.attn.store %[[O2]] max %new_max sum %new_sum to %arg3, %arg4 rows(%q_start{{.*}}, %{{.*}}, %q_rows{{.*}}) head %q_head{{.*}} tokens %arg9 {fixed_scale = 8 : i64} : !flamia.frag<64x128xf32>, !flamia.rows<64 x f32>, !flamia.global<?x8x128xbf16>, !flamia.global<8x?xf32>
// CHECK-NEXT: }
// CHECK-NEXT: flamia.return
// CHECK-NEXT: }

// -----

// The work loop as flamia-varlen-schedule writes it: `receivers` defaults to
// 0 (only the fetching role reads the queue) and is then not printed.
flamia.kernel @work_loop(%counter: !flamia.global<1xi32>, %n: i32)
    attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  %queue = flamia.queue.create %counter, %n : !flamia.global<1xi32>
  %explicit = flamia.queue.create %counter, %n receivers 0 : !flamia.global<1xi32>
  %c0 = arith.constant 0 : i32
  %index = flamia.queue.next fetch %queue[%c0]
  flamia.return
}

// CHECK-LABEL: flamia.kernel @work_loop(
// CHECK-NEXT: %[[QUEUE:.*]] = flamia.queue.create %arg0, %arg1 : !flamia.global<1xi32>
// CHECK-NEXT: flamia.queue.create %arg0, %arg1 : !flamia.global<1xi32>
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : i32
// CHECK-NEXT: flamia.queue.next fetch %[[QUEUE]][%[[C0]]]{{$}}

// -----

// The fused quantization kernel: one CTA per (token block, head), every
// combination of copies.
flamia.kernel @quantize(%x: !flamia.global<?x4x128xbf16>, %info: !flamia.global<?x2xi32>,
                        %pt: !flamia.global<?x4x128xf8E4M3FN>, %pts: !flamia.global<?x4x4xf8E8M0FNU>,
                        %ptd: !flamia.global<?x4x128xbf16>,
                        %tb: !flamia.global<?x4x128xf8E4M3FN>, %tbs: !flamia.global<?x4x4xf8E8M0FNU>,
                        %tbd: !flamia.global<?x4x128xbf16>)
    attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  %bx = gpu.block_id x
  %b = arith.index_cast %bx : index to i32
  %hy = gpu.block_id y
  %h = arith.index_cast %hy : index to i32
  %start, %length = flamia.block_info.load %info[%b] : !flamia.global<?x2xi32>
  flamia.quantize_block %x rows(%start, %length) block %b head %h per_token(%pt, %pts)
      per_token_dequant(%ptd) token_block(%tb, %tbs) token_block_dequant(%tbd)
      : (!flamia.global<?x4x128xbf16>, i32, i32, i32, i32, !flamia.global<?x4x128xf8E4M3FN>,
         !flamia.global<?x4x4xf8E8M0FNU>, !flamia.global<?x4x128xbf16>,
         !flamia.global<?x4x128xf8E4M3FN>, !flamia.global<?x4x4xf8E8M0FNU>,
         !flamia.global<?x4x128xbf16>) -> ()
  flamia.quantize_block %x rows(%start, %length) block %b head %h per_token(%pt, %pts)
      : (!flamia.global<?x4x128xbf16>, i32, i32, i32, i32, !flamia.global<?x4x128xf8E4M3FN>,
         !flamia.global<?x4x4xf8E8M0FNU>) -> ()
  flamia.quantize_block %x rows(%start, %length) block %b head %h token_block(%tb, %tbs)
      token_block_dequant(%tbd)
      : (!flamia.global<?x4x128xbf16>, i32, i32, i32, i32, !flamia.global<?x4x128xf8E4M3FN>,
         !flamia.global<?x4x4xf8E8M0FNU>, !flamia.global<?x4x128xbf16>) -> ()
  // sm_90a's default: scales and dequantized copies, no payloads.
  flamia.quantize_block %x rows(%start, %length) block %b head %h per_token_scales(%pts)
      per_token_dequant(%ptd) token_block_scales(%tbs) token_block_dequant(%tbd)
      : (!flamia.global<?x4x128xbf16>, i32, i32, i32, i32,
         !flamia.global<?x4x4xf8E8M0FNU>, !flamia.global<?x4x128xbf16>,
         !flamia.global<?x4x4xf8E8M0FNU>, !flamia.global<?x4x128xbf16>) -> ()
  flamia.return
}

// CHECK-LABEL: flamia.kernel @quantize(
// CHECK-SAME: attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64}
// CHECK: %[[B:.*]] = arith.index_cast
// CHECK: %[[H:.*]] = arith.index_cast
// CHECK-NEXT: %[[START:.*]], %[[LEN:.*]] = flamia.block_info.load %arg1[%[[B]]] : !flamia.global<?x2xi32>
// CHECK-NEXT: flamia.quantize_block %arg0 rows(%[[START]], %[[LEN]]) block %[[B]] head %[[H]] per_token(%arg2, %arg3) per_token_dequant(%arg4) token_block(%arg5, %arg6) token_block_dequant(%arg7) : (!flamia.global<?x4x128xbf16>, i32, i32, i32, i32, !flamia.global<?x4x128xf8E4M3FN>, !flamia.global<?x4x4xf8E8M0FNU>, !flamia.global<?x4x128xbf16>, !flamia.global<?x4x128xf8E4M3FN>, !flamia.global<?x4x4xf8E8M0FNU>, !flamia.global<?x4x128xbf16>) -> (){{$}}
// CHECK-NEXT: flamia.quantize_block %arg0 rows(%[[START]], %[[LEN]]) block %[[B]] head %[[H]] per_token(%arg2, %arg3) : (!flamia.global<?x4x128xbf16>, i32, i32, i32, i32, !flamia.global<?x4x128xf8E4M3FN>, !flamia.global<?x4x4xf8E8M0FNU>) -> (){{$}}
// CHECK-NEXT: flamia.quantize_block %arg0 rows(%[[START]], %[[LEN]]) block %[[B]] head %[[H]] token_block(%arg5, %arg6) token_block_dequant(%arg7) : (!flamia.global<?x4x128xbf16>, i32, i32, i32, i32, !flamia.global<?x4x128xf8E4M3FN>, !flamia.global<?x4x4xf8E8M0FNU>, !flamia.global<?x4x128xbf16>) -> (){{$}}
// CHECK-NEXT: flamia.quantize_block %arg0 rows(%[[START]], %[[LEN]]) block %[[B]] head %[[H]] per_token_scales(%arg3) per_token_dequant(%arg4) token_block_scales(%arg6) token_block_dequant(%arg7) : (!flamia.global<?x4x128xbf16>, i32, i32, i32, i32, !flamia.global<?x4x4xf8E8M0FNU>, !flamia.global<?x4x128xbf16>, !flamia.global<?x4x4xf8E8M0FNU>, !flamia.global<?x4x128xbf16>) -> (){{$}}
// CHECK-NEXT: flamia.return

// -----

// The per-item op flamia-varlen-schedule writes before tiling: sm_90a reads
// dequantized bf16 copies (one operand each), sm_100a payloads and scales;
// without a safe block there are no safe(...) operands.
!items = !flamia.global<?x8xi32>
!b8 = !flamia.global<?x8x128xbf16>
!b2 = !flamia.global<?x2x128xbf16>
flamia.kernel @tile_sm90(%items: !items, %n: i32, %q: !b8, %k: !b2, %v: !b2, %qs: !b8, %ks: !b2,
                         %vs: !b2, %o: !b8, %lse: !flamia.global<8x?xf32>, %scale: f32, %t: i32)
    attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  flamia.attention_tile %items[%n] q(%q) k(%k) v(%v) safe(%qs, %ks, %vs) to %o, %lse scale %scale tokens %t
      {block_m = 128 : i64, block_n = 128 : i64, causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>,
       recipe = #flamia.recipe<mxfp8, safe_block = 128>}
      : (!items, i32, !b8, !b2, !b2, !b8, !b2, !b2, !b8, !flamia.global<8x?xf32>, f32, i32) -> ()
  flamia.return
}

// CHECK-LABEL: flamia.kernel @tile_sm90(
// CHECK: flamia.attention_tile %arg0[%arg1] q(%arg2) k(%arg3) v(%arg4) safe(%arg5, %arg6, %arg7) to %arg8, %arg9 scale %arg10 tokens %arg11 {block_m = 128 : i64, block_n = 128 : i64, causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8, safe_block = 128>} : (!flamia.global<?x8xi32>, i32, !flamia.global<?x8x128xbf16>, !flamia.global<?x2x128xbf16>, !flamia.global<?x2x128xbf16>, !flamia.global<?x8x128xbf16>, !flamia.global<?x2x128xbf16>, !flamia.global<?x2x128xbf16>, !flamia.global<?x8x128xbf16>, !flamia.global<8x?xf32>, f32, i32) -> (){{$}}

!p8 = !flamia.global<?x8x128xf8E4M3FN>
!s8 = !flamia.global<?x8x4xf8E8M0FNU>
!p2 = !flamia.global<?x2x128xf8E4M3FN>
!s2 = !flamia.global<?x2x4xf8E8M0FNU>
flamia.kernel @tile_sm100(%items: !items, %n: i32, %q: !p8, %qsc: !s8, %k: !p2, %ksc: !s2, %v: !p2,
                          %vsc: !s2, %o: !b8, %lse: !flamia.global<8x?xf32>, %scale: f32, %t: i32)
    attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_100a, cta_group = 2>, threads = 128 : i64} {
  flamia.attention_tile %items[%n] q(%q, %qsc) k(%k, %ksc) v(%v, %vsc) safe() to %o, %lse scale %scale tokens %t
      {block_m = 128 : i64, block_n = 128 : i64, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>,
       recipe = #flamia.recipe<mxfp8>}
      : (!items, i32, !p8, !s8, !p2, !s2, !p2, !s2, !b8, !flamia.global<8x?xf32>, f32, i32) -> ()
  flamia.return
}

// CHECK-LABEL: flamia.kernel @tile_sm100(
// CHECK-SAME: target = #flamia.target<sm_100a, cta_group = 2>
// CHECK: flamia.attention_tile %arg0[%arg1] q(%arg2, %arg3) k(%arg4, %arg5) v(%arg6, %arg7) safe() to %arg8, %arg9 scale %arg10 tokens %arg11 {block_m = 128 : i64, block_n = 128 : i64, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8>}

// -----

// The host side: buffers the runtime allocates, scalars it supplies, and
// launches of a flamia.kernel and (after convert-flamia-to-nvvm) of a
// kernel in a gpu.module.
module attributes {gpu.container_module} {
  flamia.kernel @work(%items: !flamia.global<?x8xi32>, %n: i32, %scale: f32)
      attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
    flamia.return
  }
  gpu.module @work_module {
  }
  func.func @plan(%x: !flamia.global<?x4x128xbf16> {flamia.buffer = "x"}) {
    %items = flamia.workspace schedule "items" dims ["NUM_ITEMS", "8"] : !flamia.global<?x8xi32>
    %q8 = flamia.workspace workspace "q_pt" dims ["T", "4", "128"] : !flamia.global<?x4x128xf8E4M3FN>
    %n = flamia.runtime_value "NUM_ITEMS" : i32
    %scale = flamia.runtime_value "softmax_scale_log2" : f32
    flamia.launch @work(%items, %n, %scale) grid ["NUM_SMS", "1", "1"]
        : (!flamia.global<?x8xi32>, i32, f32) -> ()
    flamia.launch @work_module::@work(%items, %n, %scale) grid ["NUM_ITEMS", "1", "1"]
        : (!flamia.global<?x8xi32>, i32, f32) -> ()
    return
  }
}

// CHECK-LABEL: flamia.kernel @work(
// CHECK-NEXT: flamia.return
// CHECK-LABEL: func.func @plan(
// CHECK-NEXT: %[[ITEMS:.*]] = flamia.workspace schedule "items" dims ["NUM_ITEMS", "8"] : !flamia.global<?x8xi32>
// CHECK-NEXT: flamia.workspace workspace "q_pt" dims ["T", "4", "128"] : !flamia.global<?x4x128xf8E4M3FN>
// CHECK-NEXT: %[[N:.*]] = flamia.runtime_value "NUM_ITEMS" : i32
// CHECK-NEXT: %[[SCALE:.*]] = flamia.runtime_value "softmax_scale_log2" : f32
// CHECK-NEXT: flamia.launch @work(%[[ITEMS]], %[[N]], %[[SCALE]]) grid ["NUM_SMS", "1", "1"] : (!flamia.global<?x8xi32>, i32, f32) -> ()
// CHECK-NEXT: flamia.launch @work_module::@work(%[[ITEMS]], %[[N]], %[[SCALE]]) grid ["NUM_ITEMS", "1", "1"] : (!flamia.global<?x8xi32>, i32, f32) -> ()

// -----
// Asynchronous MMAs and the wait that returns their results.
!qt = !flamia.smem<1x128x128xbf16>
!kt = !flamia.smem<2x128x128xbf16>
func.func @overlap(%q: !qt, %k: !kt, %v: !kt, %s: i32, %p: !flamia.frag<64x128xbf16>,
                   %o: !flamia.frag<64x128xf32>) -> (!flamia.frag<64x128xf32>, !flamia.frag<64x128xf32>) {
  %sp = flamia.wg.mma %q[%s], %k[%s] {async} : !qt, !kt -> !flamia.frag<64x128xf32>
  %op = flamia.wg.mma %p, %v[%s] acc(%o : !flamia.frag<64x128xf32>) {async, b_transposed}
      : !flamia.frag<64x128xbf16>, !kt -> !flamia.frag<64x128xf32>
  %s1 = flamia.wg.wait %sp pending 1 : !flamia.frag<64x128xf32>
  %o1 = flamia.wg.wait %op pending 0 : !flamia.frag<64x128xf32>
  return %s1, %o1 : !flamia.frag<64x128xf32>, !flamia.frag<64x128xf32>
}

// CHECK-LABEL: func.func @overlap(
// CHECK-NEXT: %[[SP:.*]] = flamia.wg.mma %arg0[%arg3], %arg1[%arg3] {async} : !flamia.smem<1x128x128xbf16>, !flamia.smem<2x128x128xbf16> -> !flamia.frag<64x128xf32>
// CHECK-NEXT: %[[OP:.*]] = flamia.wg.mma %arg4, %arg2[%arg3] acc(%arg5 : !flamia.frag<64x128xf32>) {async, b_transposed} : !flamia.frag<64x128xbf16>, !flamia.smem<2x128x128xbf16> -> !flamia.frag<64x128xf32>
// CHECK-NEXT: %[[S1:.*]] = flamia.wg.wait %[[SP]] pending 1 : !flamia.frag<64x128xf32>
// CHECK-NEXT: %[[O1:.*]] = flamia.wg.wait %[[OP]] pending 0 : !flamia.frag<64x128xf32>
// CHECK-NEXT: return %[[S1]], %[[O1]]

// -----
flamia.kernel @zero(%from: i32) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  %v = flamia.smem.alloc : !flamia.smem<2x128x128xbf16>
  flamia.role "consumer" warpgroups [1, 3) registers 232 {
    %c1 = arith.constant 1 : i32
    flamia.smem.zero_rows %v[%c1] from %from : !flamia.smem<2x128x128xbf16>
  }
  flamia.return
}

// CHECK-LABEL: flamia.kernel @zero(
// CHECK: flamia.smem.zero_rows %{{.*}}[%{{.*}}] from %arg0 : !flamia.smem<2x128x128xbf16>

// -----
// A bounded range in a single-thread role (sm_100a's MMA thread), on a tile
// of 64-byte rows (E4M3, D = 64).
flamia.kernel @zero_range(%from: i32, %to: i32) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 384 : i64} {
  %v = flamia.smem.alloc : !flamia.smem<2x128x64xf8E4M3FN>
  flamia.role "mma" warpgroups [1, 2) registers 104 single_thread {
    %c1 = arith.constant 1 : i32
    flamia.smem.zero_rows %v[%c1] from %from to %to : !flamia.smem<2x128x64xf8E4M3FN>
  }
  flamia.return
}

// CHECK-LABEL: flamia.kernel @zero_range(
// CHECK: flamia.smem.zero_rows %{{.*}}[%{{.*}}] from %arg0 to %arg1 : !flamia.smem<2x128x64xf8E4M3FN>

// -----
// The spellings before the enums still read: a quoted launch or side becomes
// the enum (and prints as one).
flamia.kernel @quoted(%c: !flamia.global<1xi32>, %n: i32, %it: i32) attributes {launch = "persistent", target = #flamia.target<sm_90a>, threads = 256 : i64} {
  %q = flamia.queue.create %c, %n : !flamia.global<1xi32>
  %p = flamia.pipeline.create consumers 128 : !flamia.pipeline<2>
  flamia.role "producer" warpgroups [0, 1) registers 40 {
    %i = flamia.queue.next "fetch" %q[%it]
    %s = flamia.pipeline.acquire "producer" %p[%it] : !flamia.pipeline<2>
  }
  flamia.role "consumer" warpgroups [1, 2) registers 232 {
    %i = flamia.queue.next "receive" %q[%it]
    %s = flamia.pipeline.acquire "consumer" %p[%it] : !flamia.pipeline<2>
  }
  flamia.return
}

// CHECK-LABEL: flamia.kernel @quoted(
// CHECK-SAME: launch = #flamia.launch<persistent>
// CHECK: flamia.queue.next fetch
// CHECK: flamia.pipeline.acquire producer
// CHECK: flamia.queue.next receive
// CHECK: flamia.pipeline.acquire consumer

// -----

// L2 prefetch of the rows a later op reads (the quantization kernel's K
// and V), with a static and a runtime head count.
flamia.kernel @prefetch(%k: !flamia.global<?x4x128xbf16> {flamia.param = "k"}, %v: !flamia.global<?x?x64xbf16> {flamia.param = "v"}, %hkv: i32 {flamia.param = "Hkv"}) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  %c0 = arith.constant 0 : i32
  %c32 = arith.constant 32 : i32
  flamia.prefetch_rows %k rows(%c0, %c32) head %c0 : !flamia.global<?x4x128xbf16>
  flamia.prefetch_rows %v rows(%c0, %c32) head %c0 heads %hkv : !flamia.global<?x?x64xbf16>, i32
  flamia.return
}
// CHECK-LABEL: flamia.kernel @prefetch(
// CHECK: flamia.prefetch_rows %arg0 rows(%{{.*}}, %{{.*}}) head %{{.*}} : !flamia.global<?x4x128xbf16>{{$}}
// CHECK: flamia.prefetch_rows %arg1 rows(%{{.*}}, %{{.*}}) head %{{.*}} heads %arg2 : !flamia.global<?x?x64xbf16>, i32{{$}}
