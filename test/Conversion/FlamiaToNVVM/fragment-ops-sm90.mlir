// RUN: flamia-opt %s -split-input-file --convert-flamia-to-nvvm | FileCheck %s
// Per-op lowering of the fragment ops on sm_90a (the wgmma accumulator
// layout: 64 rows, two rows per thread, a row spread over a quad): frag.zero,
// rows.fill, frag.mask, softmax.update, frag.quantize, frag.scale_rows and
// attn.store, one kernel each (softmax.update with p_scale and a prescaled
// frag.quantize together, attn.store also with sum_prescaled).

// A 64x16 f32 fragment is 8 f32 per thread.
// CHECK-LABEL: llvm.func @sm_90a_frag_zero(
// CHECK: nvvm.setmaxregister  increase 240
// CHECK-COUNT-8: llvm.mlir.constant(0.000000e+00 : f32) : f32
// CHECK-NEXT: llvm.mlir.undef : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
// CHECK-COUNT-8: llvm.insertvalue
// CHECK-NOT: llvm.insertvalue
// CHECK: llvm.return
flamia.kernel @sm_90a_frag_zero() attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  flamia.role "softmax" warpgroups[0, 1) registers 240 {
    %z = flamia.frag.zero : !flamia.frag<64x16xf32>
  }
  flamia.return
}

// -----

// Two row values per thread (rows 16w + l/4 and 16w + l/4 + 8).
// CHECK-LABEL: llvm.func @sm_90a_rows_fill(
// CHECK: %[[V:.*]] = llvm.mlir.constant(0xFF800000 : f32) : f32
// CHECK-NEXT: %[[U:.*]] = llvm.mlir.undef : !llvm.struct<(f32, f32)>
// CHECK-NEXT: %[[R0:.*]] = llvm.insertvalue %[[V]], %[[U]][0]
// CHECK-NEXT: llvm.insertvalue %[[V]], %[[R0]][1]
// CHECK-NOT: llvm.insertvalue
// CHECK: llvm.return
flamia.kernel @sm_90a_rows_fill() attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  flamia.role "softmax" warpgroups[0, 1) registers 240 {
    %r = flamia.rows.fill 0xFF800000 : !flamia.rows<64 x f32>
  }
  flamia.return
}

// -----

// Causal mask: element i's key is key_base + 2 (lane % 4) + 8 (i / 4) + i % 2,
// masked where key >= limit or key > query_base + row((i / 2) % 2), i.e. where
// its constant offset 8 (i / 4) + i % 2 >= min(limit, query + 1) - key_base -
// 2 (lane % 4): one bound per row slot, then one compare and one select per
// element.
// CHECK-LABEL: llvm.func @sm_90a_frag_mask_causal(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: i32, %[[K:[a-z0-9]+]]: i32, %[[LIM:[a-z0-9]+]]: i32)
// CHECK: nvvm.setmaxregister
// The thread's position: row = 16 (warp % 4) + lane / 4, quad = lane % 4.
// CHECK: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK-NEXT: %[[C32:.*]] = llvm.mlir.constant(32 : i32) : i32
// CHECK-NEXT: %[[LANE:.*]] = llvm.urem %[[TID]], %[[C32]] : i32
// CHECK: %[[WARP:.*]] = llvm.udiv %[[TID]], %{{.*}} : i32
// CHECK-NEXT: %[[WG_WARP:.*]] = llvm.urem %[[WARP]], %{{.*}} : i32
// CHECK: %[[LQ:.*]] = llvm.udiv %[[LANE]], %{{.*}} : i32
// CHECK: %[[C16:.*]] = llvm.mlir.constant(16 : i32) : i32
// CHECK-NEXT: %[[W16:.*]] = llvm.mul %[[WG_WARP]], %[[C16]] : i32
// CHECK-NEXT: %[[ROW:.*]] = llvm.add %[[W16]], %[[LQ]] : i32
// CHECK: %[[QUAD:.*]] = llvm.urem %[[LANE]], %{{.*}} : i32
// CHECK: %[[NINF:.*]] = llvm.mlir.constant(0xFF800000 : f32) : f32
// The thread's first column, 2 quad + 0.
// CHECK-NEXT: %[[OFF0:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT: %[[C2:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK-NEXT: %[[Q2:.*]] = llvm.mul %[[QUAD]], %[[C2]] : i32
// CHECK-NEXT: %[[COL0:.*]] = llvm.add %[[Q2]], %[[OFF0]] : i32
// Row slot 0: min(limit, query + 1) - key_base - column(0).
// CHECK-NEXT: %[[QROW0:.*]] = llvm.add %[[Q]], %[[ROW]] : i32
// CHECK-NEXT: %[[ONE:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: %[[NEXT0:.*]] = llvm.add %[[QROW0]], %[[ONE]] : i32
// CHECK-NEXT: %[[LT0:.*]] = llvm.icmp "slt" %[[NEXT0]], %[[LIM]] : i32
// CHECK-NEXT: %[[MIN0:.*]] = llvm.select %[[LT0]], %[[NEXT0]], %[[LIM]] : i1, i32
// CHECK-NEXT: %[[REL0:.*]] = llvm.sub %[[MIN0]], %[[K]] : i32
// CHECK-NEXT: %[[B0:.*]] = llvm.sub %[[REL0]], %[[COL0]] : i32
// Row slot 1: the same for row + 8.
// CHECK: %[[C8:.*]] = llvm.mlir.constant(8 : i32) : i32
// CHECK-NEXT: %[[ROW8:.*]] = llvm.add %[[ROW]], %[[C8]] : i32
// CHECK-NEXT: %[[QROW1:.*]] = llvm.add %[[Q]], %[[ROW8]] : i32
// CHECK-NEXT: %[[ONE1:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: %[[NEXT1:.*]] = llvm.add %[[QROW1]], %[[ONE1]] : i32
// CHECK-NEXT: %[[LT1:.*]] = llvm.icmp "slt" %[[NEXT1]], %[[LIM]] : i32
// CHECK-NEXT: %[[MIN1:.*]] = llvm.select %[[LT1]], %[[NEXT1]], %[[LIM]] : i1, i32
// CHECK-NEXT: %[[REL1:.*]] = llvm.sub %[[MIN1]], %[[K]] : i32
// CHECK-NEXT: %[[B1:.*]] = llvm.sub %[[REL1]], %[[COL0]] : i32
// Elements 0, 1 (offsets 0, 1, row slot 0), 2, 3 (row slot 1), 4, 5 (offsets
// 8, 9, row slot 0), 6, 7 (row slot 1).
// CHECK-NEXT: %[[E0:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT: %[[M0:.*]] = llvm.icmp "sge" %[[E0]], %[[B0]] : i32
// CHECK-NEXT: llvm.select %[[M0]], %[[NINF]], %{{.*}} : i1, f32
// CHECK-NEXT: %[[E1:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: %[[M1:.*]] = llvm.icmp "sge" %[[E1]], %[[B0]] : i32
// CHECK-NEXT: llvm.select %[[M1]], %[[NINF]], %{{.*}} : i1, f32
// CHECK-NEXT: llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT: llvm.icmp "sge" %{{.*}}, %[[B1]] : i32
// CHECK-NEXT: llvm.select
// CHECK-NEXT: llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: llvm.icmp "sge" %{{.*}}, %[[B1]] : i32
// CHECK-NEXT: llvm.select
// CHECK-NEXT: llvm.mlir.constant(8 : i32) : i32
// CHECK-NEXT: llvm.icmp "sge" %{{.*}}, %[[B0]] : i32
// CHECK-NEXT: llvm.select
// CHECK-NEXT: llvm.mlir.constant(9 : i32) : i32
// CHECK-NEXT: llvm.icmp "sge" %{{.*}}, %[[B0]] : i32
// CHECK-NEXT: llvm.select
// CHECK-NEXT: llvm.mlir.constant(8 : i32) : i32
// CHECK-NEXT: llvm.icmp "sge" %{{.*}}, %[[B1]] : i32
// CHECK-NEXT: llvm.select
// CHECK-NEXT: llvm.mlir.constant(9 : i32) : i32
// CHECK-NEXT: llvm.icmp "sge" %{{.*}}, %[[B1]] : i32
// CHECK-NEXT: llvm.select
// CHECK-NOT: llvm.select
// CHECK-NOT: llvm.or
// CHECK: llvm.return
flamia.kernel @sm_90a_frag_mask_causal(%q: i32 {flamia.param = "q"}, %k: i32 {flamia.param = "k"}, %lim: i32 {flamia.param = "lim"}) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  flamia.role "softmax" warpgroups[0, 1) registers 240 {
    %z = flamia.frag.zero : !flamia.frag<64x16xf32>
    %m = flamia.frag.mask %z query %q key %k limit %lim {causal} : !flamia.frag<64x16xf32>
  }
  flamia.return
}

// -----

// Transposed (the dK/dV kernel: rows are keys, columns queries): each
// element's query index, query_base + 2 (lane % 4) + its offset, masked where
// query >= limit or key_base + row(slot) > query. (The bounds-per-row form of
// the untransposed mask made the dK/dV kernels spill more, so it is not used
// here.)
// CHECK-LABEL: llvm.func @sm_90a_frag_mask_transposed(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: i32, %[[K:[a-z0-9]+]]: i32, %[[LIM:[a-z0-9]+]]: i32)
// CHECK: %[[NINF:.*]] = llvm.mlir.constant(0xFF800000 : f32) : f32
// CHECK-NEXT: %[[KEY0:.*]] = llvm.add %[[K]], %{{.*}} : i32
// CHECK: %[[COL0:.*]] = llvm.add
// CHECK-NEXT: %[[QUERY0:.*]] = llvm.add %[[Q]], %[[COL0]] : i32
// CHECK-NEXT: %[[PAST0:.*]] = llvm.icmp "sge" %[[QUERY0]], %[[LIM]] : i32
// CHECK-NEXT: %[[BEFORE0:.*]] = llvm.icmp "sgt" %[[KEY0]], %[[QUERY0]] : i32
// CHECK-NEXT: %[[M0:.*]] = llvm.or %[[PAST0]], %[[BEFORE0]] : i1
// CHECK-NEXT: llvm.select %[[M0]], %[[NINF]], %{{.*}} : i1, f32
// CHECK-COUNT-7: llvm.select %{{.*}}, %[[NINF]], %{{.*}} : i1, f32
// CHECK-NOT: llvm.select
// CHECK: llvm.return
flamia.kernel @sm_90a_frag_mask_transposed(%q: i32 {flamia.param = "q"}, %k: i32 {flamia.param = "k"}, %lim: i32 {flamia.param = "lim"}) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  flamia.role "softmax" warpgroups[0, 1) registers 240 {
    %z = flamia.frag.zero : !flamia.frag<64x16xf32>
    %m = flamia.frag.mask %z query %q key %k limit %lim {causal, transposed} : !flamia.frag<64x16xf32>
  }
  flamia.return
}

// -----

// Without `causal` only the document end masks: one bound for both row slots,
// limit - key_base - column(0), and no compare with the query.
// CHECK-LABEL: llvm.func @sm_90a_frag_mask(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: i32, %[[K:[a-z0-9]+]]: i32, %[[LIM:[a-z0-9]+]]: i32)
// CHECK: %[[NINF:.*]] = llvm.mlir.constant(0xFF800000 : f32) : f32
// CHECK: %[[COL0:.*]] = llvm.add
// CHECK-NEXT: %[[REL:.*]] = llvm.sub %[[LIM]], %[[K]] : i32
// CHECK-NEXT: %[[B:.*]] = llvm.sub %[[REL]], %[[COL0]] : i32
// CHECK-COUNT-8: llvm.icmp "sge" %{{.*}}, %{{.*}} : i32{{[[:space:]]+}}{{.*}}llvm.select %{{.*}}, %[[NINF]], %{{.*}} : i1, f32
// CHECK-NOT: llvm.icmp "slt"
// CHECK-NOT: llvm.or
// CHECK-NOT: llvm.select
// CHECK: llvm.return
flamia.kernel @sm_90a_frag_mask(%q: i32 {flamia.param = "q"}, %k: i32 {flamia.param = "k"}, %lim: i32 {flamia.param = "lim"}) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  flamia.role "softmax" warpgroups[0, 1) registers 240 {
    %z = flamia.frag.zero : !flamia.frag<64x16xf32>
    %m = flamia.frag.mask %z query %q key %k limit %lim : !flamia.frag<64x16xf32>
  }
  flamia.return
}

// -----

// Each row's max (of the raw scores: no multiply before it) and sum: the
// thread's four values, then the quad through two butterfly shuffles
// (offsets 1 and 2).
// CHECK-LABEL: llvm.func @sm_90a_softmax_update(
// CHECK-SAME: %[[SCALE:[a-z0-9]+]]: f32)
// CHECK-NOT: llvm.fmul
// CHECK: %[[S0:.*]] = llvm.extractvalue %{{.*}}[0] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
// CHECK-NOT: llvm.fmul
// CHECK-COUNT-8: llvm.intr.maxnum
// Row slot 0: max over the quad (offsets 1, 2), alpha = exp2(m - m').
// CHECK: %[[OFFa1:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: llvm.mlir.constant(-1 : i32) : i32
// CHECK-NEXT: %[[SHa1:.*]] = nvvm.shfl.sync  bfly %{{.*}}, %[[Xa1:.*]], %[[OFFa1]], %{{.*}} : f32 -> f32
// CHECK-NEXT: llvm.intr.maxnum(%[[Xa1]], %[[SHa1]]
// CHECK: %[[OFFa2:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK-NEXT: llvm.mlir.constant(-1 : i32) : i32
// CHECK-NEXT: %[[SHa2:.*]] = nvvm.shfl.sync  bfly %{{.*}}, %[[Xa2:.*]], %[[OFFa2]], %{{.*}} : f32 -> f32
// CHECK-NEXT: %[[RMa:.*]] = llvm.intr.maxnum(%[[Xa2]], %[[SHa2]]
// m' = max(m, max s * scale rounded up), -m' for the exponents' FMAs.
// CHECK-NEXT: %[[UPa:.*]] = llvm.call_intrinsic "llvm.nvvm.mul.rp.f"(%[[RMa]], %[[SCALE]])
// CHECK-NEXT: %[[Ma:.*]] = llvm.intr.maxnum(%{{.*}}, %[[UPa]])
// CHECK-NEXT: %[[NEGa:.*]] = llvm.fneg %[[Ma]] : f32
// CHECK-NEXT: llvm.fsub %{{.*}}, %[[Ma]] : f32
// CHECK-NEXT: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// Row slot 1: the same.
// CHECK: %[[OFFb1:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: llvm.mlir.constant(-1 : i32) : i32
// CHECK-NEXT: %[[SHb1:.*]] = nvvm.shfl.sync  bfly %{{.*}}, %[[Xb1:.*]], %[[OFFb1]], %{{.*}} : f32 -> f32
// CHECK-NEXT: llvm.intr.maxnum(%[[Xb1]], %[[SHb1]]
// CHECK: %[[OFFb2:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK-NEXT: llvm.mlir.constant(-1 : i32) : i32
// CHECK-NEXT: %[[SHb2:.*]] = nvvm.shfl.sync  bfly %{{.*}}, %[[Xb2:.*]], %[[OFFb2]], %{{.*}} : f32 -> f32
// CHECK-NEXT: %[[RMb:.*]] = llvm.intr.maxnum(%[[Xb2]], %[[SHb2]]
// CHECK-NEXT: %[[UPb:.*]] = llvm.call_intrinsic "llvm.nvvm.mul.rp.f"(%[[RMb]], %[[SCALE]])
// CHECK-NEXT: %[[Mb:.*]] = llvm.intr.maxnum(%{{.*}}, %[[UPb]])
// CHECK-NEXT: %[[NEGb:.*]] = llvm.fneg %[[Mb]] : f32
// CHECK-NEXT: llvm.fsub %{{.*}}, %[[Mb]] : f32
// CHECK-NEXT: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// p = exp2(fma(s, scale, -m')) for the 8 elements (element 0 in row slot 0,
// element 2 in slot 1), summed per row slot.
// CHECK-NEXT: %[[E0:.*]] = llvm.intr.fma(%[[S0]], %[[SCALE]], %[[NEGa]]) : (f32, f32, f32) -> f32
// CHECK-NEXT: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"(%[[E0]])
// CHECK-NEXT: llvm.fadd
// CHECK-NEXT: llvm.intr.fma(%{{.*}}, %[[SCALE]], %[[NEGa]])
// CHECK-NEXT: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// CHECK-NEXT: llvm.fadd
// CHECK-NEXT: llvm.intr.fma(%{{.*}}, %[[SCALE]], %[[NEGb]])
// CHECK-COUNT-5: llvm.intr.fma(%{{.*}}, %[[SCALE]], {{.*}}{{[[:space:]]+}}{{.*}}llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"{{.*}}{{[[:space:]]+}}{{.*}}llvm.fadd
// CHECK-NOT: llvm.intr.fma
// The two row sums over the quad: l' = l alpha + sum.
// CHECK: %[[OFFc1:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: llvm.mlir.constant(-1 : i32) : i32
// CHECK-NEXT: %[[SHc1:.*]] = nvvm.shfl.sync  bfly %{{.*}}, %[[Xc1:.*]], %[[OFFc1]], %{{.*}} : f32 -> f32
// CHECK-NEXT: llvm.fadd %[[Xc1]], %[[SHc1]]
// CHECK: %[[OFFc2:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK-NEXT: llvm.mlir.constant(-1 : i32) : i32
// CHECK-NEXT: %[[SHc2:.*]] = nvvm.shfl.sync  bfly %{{.*}}, %[[Xc2:.*]], %[[OFFc2]], %{{.*}} : f32 -> f32
// CHECK-NEXT: llvm.fadd %[[Xc2]], %[[SHc2]]
// CHECK-NEXT: llvm.fmul
// CHECK-NEXT: llvm.fadd
// CHECK: %[[OFFd1:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: llvm.mlir.constant(-1 : i32) : i32
// CHECK-NEXT: %[[SHd1:.*]] = nvvm.shfl.sync  bfly %{{.*}}, %[[Xd1:.*]], %[[OFFd1]], %{{.*}} : f32 -> f32
// CHECK-NEXT: llvm.fadd %[[Xd1]], %[[SHd1]]
// CHECK: %[[OFFd2:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK-NEXT: llvm.mlir.constant(-1 : i32) : i32
// CHECK-NEXT: %[[SHd2:.*]] = nvvm.shfl.sync  bfly %{{.*}}, %[[Xd2:.*]], %[[OFFd2]], %{{.*}} : f32 -> f32
// CHECK-NEXT: llvm.fadd %[[Xd2]], %[[SHd2]]
// CHECK-NEXT: llvm.fmul
// CHECK-NEXT: llvm.fadd
// CHECK-NOT: nvvm.shfl.sync
// No pinning move: the sum needs the shuffles anyway.
// CHECK-NOT: llvm.inline_asm
// CHECK: llvm.return
flamia.kernel @sm_90a_softmax_update(%scale: f32 {flamia.param = "scale"}) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  flamia.role "softmax" warpgroups[0, 1) registers 240 {
    %s = flamia.frag.zero : !flamia.frag<64x16xf32>
    %m = flamia.rows.fill 0xFF800000 : !flamia.rows<64 x f32>
    %l = flamia.rows.fill 0.0 : !flamia.rows<64 x f32>
    %p, %m1, %l1, %a = flamia.softmax.update %s max %m sum %l scale %scale : !flamia.frag<64x16xf32>, !flamia.rows<64 x f32>
  }
  flamia.return
}

// -----

// With p_scale = 8 (the forward), each row's addend is fl32(8 - m'), one
// subtraction instead of the negation, and the exponents' FMAs take it: p
// and the sums are those of P x 2^8. A prescaled frag.quantize then rounds
// p as it is: no multiply before the conversions.
// CHECK-LABEL: llvm.func @sm_90a_softmax_update_p_scale(
// CHECK-SAME: %[[SCALE:[a-z0-9]+]]: f32)
// CHECK: %[[UPa:.*]] = llvm.call_intrinsic "llvm.nvvm.mul.rp.f"(%{{.*}}, %[[SCALE]])
// CHECK-NEXT: %[[Ma:.*]] = llvm.intr.maxnum(%{{.*}}, %[[UPa]])
// CHECK-NEXT: %[[Ka:.*]] = llvm.mlir.constant(8.000000e+00 : f32) : f32
// CHECK-NEXT: %[[ADDa:.*]] = llvm.fsub %[[Ka]], %[[Ma]] : f32
// CHECK-NEXT: llvm.fsub %{{.*}}, %[[Ma]] : f32
// CHECK: %[[UPb:.*]] = llvm.call_intrinsic "llvm.nvvm.mul.rp.f"(%{{.*}}, %[[SCALE]])
// CHECK-NEXT: %[[Mb:.*]] = llvm.intr.maxnum(%{{.*}}, %[[UPb]])
// CHECK-NEXT: %[[Kb:.*]] = llvm.mlir.constant(8.000000e+00 : f32) : f32
// CHECK-NEXT: %[[ADDb:.*]] = llvm.fsub %[[Kb]], %[[Mb]] : f32
// CHECK-NOT: llvm.fneg
// CHECK: llvm.intr.fma(%{{.*}}, %[[SCALE]], %[[ADDa]])
// CHECK: llvm.intr.fma(%{{.*}}, %[[SCALE]], %[[ADDa]])
// CHECK: llvm.intr.fma(%{{.*}}, %[[SCALE]], %[[ADDb]])
// The row sums' rescale (l alpha, two multiplies), then no other multiply
// before the E4M3 conversions.
// CHECK-COUNT-2: llvm.fmul
// CHECK-NOT: llvm.fmul
// CHECK: llvm.cond_br
// CHECK-NOT: llvm.fmul
// CHECK: nvvm.convert.f32x2.to.f8x2
// CHECK: llvm.return
flamia.kernel @sm_90a_softmax_update_p_scale(%scale: f32 {flamia.param = "scale"}) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  flamia.role "softmax" warpgroups[0, 1) registers 240 {
    %s = flamia.frag.zero : !flamia.frag<64x16xf32>
    %m = flamia.rows.fill 0xFF800000 : !flamia.rows<64 x f32>
    %l = flamia.rows.fill 0.0 : !flamia.rows<64 x f32>
    %p, %m1, %l1, %a = flamia.softmax.update %s max %m sum %l scale %scale {p_scale = 8} : !flamia.frag<64x16xf32>, !flamia.rows<64 x f32>
    %true = arith.constant true
    %b = flamia.frag.quantize %p quantized %true {precision = #flamia.precision<f8E4M3FN, fixed_scale = 8>, prescaled} : !flamia.frag<64x16xf32> -> !flamia.frag<64x16xbf16>
  }
  flamia.return
}

// -----

// P * 2^8, then per pair: E4M3 and back (quantized) or bf16 directly, four
// packed bf16x2 registers either way.
// CHECK-LABEL: llvm.func @sm_90a_frag_quantize(
// CHECK: %[[Q:.*]] = llvm.icmp "ne"
// CHECK: %[[F:.*]] = llvm.mlir.constant(2.560000e+02 : f32) : f32
// CHECK-NEXT: %[[P0:.*]] = llvm.fmul %{{.*}}, %[[F]] : f32
// CHECK-NEXT: %[[P1:.*]] = llvm.fmul %{{.*}}, %[[F]] : f32
// CHECK-COUNT-6: llvm.fmul %{{.*}}, %[[F]] : f32
// CHECK-NEXT: llvm.cond_br %[[Q]], ^[[E4M3:bb[0-9]+]], ^[[BF16:bb[0-9]+]]
// The first pair: (hi, lo) to E4M3x2, exactly back to f32, then to bf16x2.
// CHECK: ^[[E4M3]]:
// CHECK-NEXT: %[[E:.*]] = nvvm.convert.f32x2.to.f8x2 %[[P1]], %[[P0]] {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : vector<2xi8>(f8E4M3FN)
// CHECK-NEXT: %[[H:.*]] = nvvm.convert.f8x2.to.f16x2 %[[E]] : vector<2xi8>(f8E4M3FN) -> vector<2xf16>
// CHECK-NEXT: %[[X:.*]] = llvm.fpext %[[H]] : vector<2xf16> to vector<2xf32>
// CHECK: %[[LO:.*]] = llvm.extractelement %[[X]]
// CHECK: %[[HI:.*]] = llvm.extractelement %[[X]]
// CHECK-NEXT: nvvm.convert.f32x2.to.bf16x2 %[[HI]], %[[LO]]
// CHECK-NEXT: llvm.bitcast %{{.*}} : vector<2xbf16> to i32
// CHECK-COUNT-3: nvvm.convert.f8x2.to.f16x2
// CHECK: nvvm.convert.f32x2.to.bf16x2
// CHECK-NEXT: llvm.bitcast %{{.*}} : vector<2xbf16> to i32
// CHECK-NEXT: llvm.mlir.undef : !llvm.struct<(i32, i32, i32, i32)>
// CHECK: ^[[BF16]]:
// CHECK-NOT: nvvm.convert.f32x2.to.f8x2
// CHECK-COUNT-4: nvvm.convert.f32x2.to.bf16x2 {{.*}}{{[[:space:]]+}}{{.*}}llvm.bitcast
// CHECK-NEXT: llvm.mlir.undef : !llvm.struct<(i32, i32, i32, i32)>
// CHECK: llvm.return
flamia.kernel @sm_90a_frag_quantize(%flag: i32 {flamia.param = "flag"}) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  flamia.role "softmax" warpgroups[0, 1) registers 240 {
    %p = flamia.frag.zero : !flamia.frag<64x16xf32>
    %c0 = arith.constant 0 : i32
    %q = arith.cmpi ne, %flag, %c0 : i32
    %b = flamia.frag.quantize %p quantized %q {precision = #flamia.precision<f8E4M3FN, fixed_scale = 8>} : !flamia.frag<64x16xf32> -> !flamia.frag<64x16xbf16>
  }
  flamia.return
}

// -----

// With nan_via_row_sum (the forward), the E4M3 codes of a pair become bf16
// without f32: their f16 pair shifted right by three bits reads as bf16
// times 2^-112, and one bf16x2 multiply by 2^112 (0x7780 a half) restores
// the values. The safe-block branch is unchanged.
// CHECK-LABEL: llvm.func @sm_90a_frag_quantize_nan_via_row_sum(
// CHECK: %[[Q:.*]] = llvm.icmp "ne"
// CHECK: llvm.cond_br %[[Q]], ^[[E4M3:bb[0-9]+]], ^[[BF16:bb[0-9]+]]
// CHECK: ^[[E4M3]]:
// CHECK-NEXT: %[[E:.*]] = nvvm.convert.f32x2.to.f8x2 %{{.*}}, %{{.*}} {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : vector<2xi8>(f8E4M3FN)
// CHECK-NEXT: %[[H:.*]] = nvvm.convert.f8x2.to.f16x2 %[[E]] : vector<2xi8>(f8E4M3FN) -> vector<2xf16>
// CHECK-NEXT: %[[THREE:.*]] = llvm.mlir.constant(3 : i32) : i32
// CHECK-NEXT: %[[W:.*]] = llvm.bitcast %[[H]] : vector<2xf16> to i32
// CHECK-NEXT: %[[S:.*]] = llvm.lshr %[[W]], %[[THREE]] : i32
// CHECK-NEXT: %[[C:.*]] = llvm.mlir.constant(dense<5.192300e+33> : vector<2xbf16>) : vector<2xbf16>
// CHECK-NEXT: %[[B:.*]] = llvm.bitcast %[[S]] : i32 to vector<2xbf16>
// CHECK-NEXT: %[[M:.*]] = llvm.fmul %[[B]], %[[C]] : vector<2xbf16>
// CHECK-NEXT: llvm.bitcast %[[M]] : vector<2xbf16> to i32
// CHECK-NOT: llvm.fpext
// CHECK-NOT: nvvm.convert.f32x2.to.bf16x2
// CHECK-COUNT-3: llvm.fmul %{{.*}}, %[[C2:.*]] : vector<2xbf16>
// CHECK: llvm.mlir.undef : !llvm.struct<(i32, i32, i32, i32)>
// CHECK: ^[[BF16]]:
// CHECK-NOT: nvvm.convert.f32x2.to.f8x2
// CHECK-COUNT-4: nvvm.convert.f32x2.to.bf16x2 {{.*}}{{[[:space:]]+}}{{.*}}llvm.bitcast
// CHECK: llvm.return
flamia.kernel @sm_90a_frag_quantize_nan_via_row_sum(%flag: i32 {flamia.param = "flag"}) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  flamia.role "softmax" warpgroups[0, 1) registers 240 {
    %p = flamia.frag.zero : !flamia.frag<64x16xf32>
    %c0 = arith.constant 0 : i32
    %q = arith.cmpi ne, %flag, %c0 : i32
    %b = flamia.frag.quantize %p quantized %q {nan_via_row_sum, precision = #flamia.precision<f8E4M3FN, fixed_scale = 8>} : !flamia.frag<64x16xf32> -> !flamia.frag<64x16xbf16>
  }
  flamia.return
}

// -----

// Element i is multiplied by the factor of row slot (i / 2) % 2.
// CHECK-LABEL: llvm.func @sm_90a_frag_scale_rows(
// CHECK: %[[A0:.*]] = llvm.extractvalue %[[ACC:.*]][0] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
// CHECK: %[[A7:.*]] = llvm.extractvalue %[[ACC]][7]
// CHECK-NEXT: %[[F0:.*]] = llvm.extractvalue %[[R:.*]][0] : !llvm.struct<(f32, f32)>
// CHECK-NEXT: %[[F1:.*]] = llvm.extractvalue %[[R]][1] : !llvm.struct<(f32, f32)>
// CHECK-NEXT: llvm.fmul %[[A0]], %[[F0]] : f32
// CHECK-NEXT: llvm.fmul %{{.*}}, %[[F0]] : f32
// CHECK-NEXT: llvm.fmul %{{.*}}, %[[F1]] : f32
// CHECK-NEXT: llvm.fmul %{{.*}}, %[[F1]] : f32
// CHECK-NEXT: llvm.fmul %{{.*}}, %[[F0]] : f32
// CHECK-NEXT: llvm.fmul %{{.*}}, %[[F0]] : f32
// CHECK-NEXT: llvm.fmul %{{.*}}, %[[F1]] : f32
// CHECK-NEXT: llvm.fmul %[[A7]], %[[F1]] : f32
// CHECK-NEXT: llvm.mlir.undef : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
flamia.kernel @sm_90a_frag_scale_rows() attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  flamia.role "softmax" warpgroups[0, 1) registers 240 {
    %acc = flamia.frag.zero : !flamia.frag<64x16xf32>
    %r = flamia.rows.fill 5.000000e-01 : !flamia.rows<64 x f32>
    %s = flamia.frag.scale_rows %acc by %r : !flamia.frag<64x16xf32>, !flamia.rows<64 x f32>
  }
  flamia.return
}

// -----

// With skip_ones: the two row factors of the thread are compared with 1.0
// (`une`: NaN multiplies too), one vote.any per warp decides, and the warp
// multiplies in the branch or keeps the fragment as it is.
// CHECK-LABEL: llvm.func @sm_90a_frag_scale_rows_skip_ones(
// CHECK: %[[F0:.*]] = llvm.extractvalue %[[R:.*]][0] : !llvm.struct<(f32, f32)>
// CHECK-NEXT: %[[F1:.*]] = llvm.extractvalue %[[R]][1] : !llvm.struct<(f32, f32)>
// CHECK-NEXT: %[[ONE:.*]] = llvm.mlir.constant(1.000000e+00 : f32) : f32
// CHECK-NEXT: %[[N0:.*]] = llvm.fcmp "une" %[[F0]], %[[ONE]] : f32
// CHECK-NEXT: %[[O0:.*]] = llvm.or %{{.*}}, %[[N0]] : i1
// CHECK: %[[N1:.*]] = llvm.fcmp "une" %[[F1]], %{{.*}} : f32
// CHECK-NEXT: %[[O1:.*]] = llvm.or %[[O0]], %[[N1]] : i1
// CHECK-NEXT: %[[ALL:.*]] = llvm.mlir.constant(-1 : i32) : i32
// CHECK-NEXT: %[[ANY:.*]] = nvvm.vote.sync any %[[ALL]], %[[O1]] -> i1
// CHECK-NEXT: llvm.cond_br %[[ANY]], ^[[MUL:bb[0-9]+]], ^[[KEEP:bb[0-9]+]]
// CHECK-NEXT: ^[[MUL]]:
// CHECK-COUNT-8: llvm.fmul
// CHECK: llvm.br ^[[JOIN:bb[0-9]+]](%{{.*}} : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>)
// CHECK-NEXT: ^[[KEEP]]:
// CHECK-NEXT: llvm.br ^[[JOIN]](%[[ACC:.*]] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>)
// CHECK-NOT: llvm.fmul
// CHECK: llvm.return
flamia.kernel @sm_90a_frag_scale_rows_skip_ones() attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  flamia.role "softmax" warpgroups[0, 1) registers 240 {
    %acc = flamia.frag.zero : !flamia.frag<64x16xf32>
    %r = flamia.rows.fill 1.000000e+00 : !flamia.rows<64 x f32>
    %s = flamia.frag.scale_rows %acc by %r skip_ones : !flamia.frag<64x16xf32>, !flamia.rows<64 x f32>
  }
  flamia.return
}

// -----

// Per row slot: rows below q_rows store O = acc / (2^8 l) as 4-byte bf16x2
// pairs at columns 2 quad (+ 8); then the quad's first thread (a second
// branch) writes the LSE.
// CHECK-LABEL: llvm.func @sm_90a_attn_store(
// CHECK-SAME: %[[O:[a-z0-9]+]]: !llvm.ptr<1>, %[[LSE:[a-z0-9]+]]: !llvm.ptr<1>, %{{.*}}: i32, %[[RB:[a-z0-9]+]]: i32, %[[QR:[a-z0-9]+]]: i32, %{{.*}}: i32, %{{.*}}: i32)
// CHECK: %[[OG:.*]] = llvm.addrspacecast %[[O]] : !llvm.ptr<1> to !llvm.ptr
// CHECK-NEXT: %[[LG:.*]] = llvm.addrspacecast %[[LSE]] : !llvm.ptr<1> to !llvm.ptr
// CHECK: %[[ROW:.*]] = llvm.add %{{.*}}, %{{.*}} : i32
// CHECK: %[[QUAD:.*]] = llvm.urem %{{.*}}, %{{.*}} : i32
// CHECK: %[[FS:.*]] = llvm.mlir.constant(2.560000e+02 : f32) : f32
// Row slot 0.
// CHECK-NEXT: %[[R0:.*]] = llvm.add %[[RB]], %[[ROW]] : i32
// CHECK-NEXT: %[[V0:.*]] = llvm.icmp "slt" %[[R0]], %[[QR]] : i32
// CHECK: llvm.fmul %{{.*}}, %[[FS]] : f32
// CHECK-NEXT: llvm.mlir.constant(1.000000e+00 : f32) : f32
// CHECK-NEXT: %[[INV0:.*]] = llvm.fdiv
// CHECK-NEXT: llvm.cond_br %[[V0]], ^[[STORE0:bb[0-9]+]], ^[[NEXT0:bb[0-9]+]]
// CHECK: ^[[STORE0]]:
// CHECK: llvm.fmul %{{.*}}, %[[INV0]] : f32
// CHECK: nvvm.convert.f32x2.to.bf16x2
// CHECK: %[[C2:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK-NEXT: llvm.mul %[[QUAD]], %[[C2]] : i32
// CHECK: llvm.getelementptr %[[OG]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK-NEXT: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : i32, !llvm.ptr
// CHECK: %[[OFF8:.*]] = llvm.mlir.constant(8 : i32) : i32
// CHECK-NEXT: llvm.mlir.constant(2 : i32) : i32
// CHECK-NEXT: %[[Q2:.*]] = llvm.mul %[[QUAD]], %{{.*}} : i32
// CHECK-NEXT: llvm.add %[[Q2]], %[[OFF8]] : i32
// CHECK: llvm.getelementptr %[[OG]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK-NEXT: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : i32, !llvm.ptr
// CHECK-NEXT: %[[Z:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT: %[[FIRST:.*]] = llvm.icmp "eq" %[[QUAD]], %[[Z]] : i32
// CHECK-NEXT: llvm.cond_br %[[FIRST]], ^[[LSE0:bb[0-9]+]], ^{{bb[0-9]+}}
// CHECK: ^[[LSE0]]:
// CHECK: llvm.call_intrinsic "llvm.nvvm.lg2.approx.f"
// CHECK: llvm.getelementptr %[[LG]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK-NEXT: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr
// Row slot 1: row + 8, the same stores.
// CHECK: ^[[NEXT0]]:
// CHECK-NEXT: %[[C8:.*]] = llvm.mlir.constant(8 : i32) : i32
// CHECK-NEXT: %[[ROW8:.*]] = llvm.add %[[ROW]], %[[C8]] : i32
// CHECK-NEXT: %[[R1:.*]] = llvm.add %[[RB]], %[[ROW8]] : i32
// CHECK-NEXT: %[[V1:.*]] = llvm.icmp "slt" %[[R1]], %[[QR]] : i32
// CHECK: llvm.cond_br %[[V1]]
// CHECK-COUNT-2: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : i32, !llvm.ptr
// CHECK: llvm.icmp "eq" %[[QUAD]]
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr
// CHECK-NOT: llvm.store
// CHECK: llvm.return
flamia.kernel @sm_90a_attn_store(%o: !flamia.global<?x2x16xbf16> {flamia.param = "o"}, %lse: !flamia.global<2x?xf32> {flamia.param = "lse"}, %qs: i32 {flamia.param = "q_start"}, %rb: i32 {flamia.param = "row_base"}, %qr: i32 {flamia.param = "q_rows"}, %h: i32 {flamia.param = "head"}, %t: i32 {flamia.param = "T"}) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  flamia.role "softmax" warpgroups[0, 1) registers 240 {
    %acc = flamia.frag.zero : !flamia.frag<64x16xf32>
    %m = flamia.rows.fill 0xFF800000 : !flamia.rows<64 x f32>
    %l = flamia.rows.fill 1.0 : !flamia.rows<64 x f32>
    flamia.attn.store %acc max %m sum %l to %o, %lse rows(%qs, %rb, %qr) head %h tokens %t {fixed_scale = 8 : i64} : !flamia.frag<64x16xf32>, !flamia.rows<64 x f32>, !flamia.global<?x2x16xbf16>, !flamia.global<2x?xf32>
  }
  flamia.return
}

// -----

// With sum_prescaled the sum carries 2^8 as acc does: O = acc / l with no
// multiply before the division, and the LSE's log2 takes l x 2^-8 (exact).
// CHECK-LABEL: llvm.func @sm_90a_attn_store_sum_prescaled(
// CHECK: %[[UN:.*]] = llvm.mlir.constant(3.906250e-03 : f32) : f32
// CHECK-NOT: llvm.mlir.constant(2.560000e+02 : f32)
// CHECK: %[[V0:.*]] = llvm.icmp "slt"
// CHECK-NEXT: llvm.extractvalue
// CHECK-NEXT: %[[L0:.*]] = llvm.extractvalue
// CHECK-NEXT: %[[ONE:.*]] = llvm.mlir.constant(1.000000e+00 : f32) : f32
// CHECK-NEXT: llvm.fdiv %[[ONE]], %[[L0]] : f32
// CHECK: %[[LU:.*]] = llvm.fmul %[[L0]], %[[UN]] : f32
// CHECK-NEXT: llvm.mlir.constant(0.693147182 : f32) : f32
// CHECK-NEXT: llvm.call_intrinsic "llvm.nvvm.lg2.approx.f"(%[[LU]])
// CHECK: llvm.return
flamia.kernel @sm_90a_attn_store_sum_prescaled(%o: !flamia.global<?x2x16xbf16> {flamia.param = "o"}, %lse: !flamia.global<2x?xf32> {flamia.param = "lse"}, %qs: i32 {flamia.param = "q_start"}, %rb: i32 {flamia.param = "row_base"}, %qr: i32 {flamia.param = "q_rows"}, %h: i32 {flamia.param = "head"}, %t: i32 {flamia.param = "T"}) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  flamia.role "softmax" warpgroups[0, 1) registers 240 {
    %acc = flamia.frag.zero : !flamia.frag<64x16xf32>
    %m = flamia.rows.fill 0xFF800000 : !flamia.rows<64 x f32>
    %l = flamia.rows.fill 256.0 : !flamia.rows<64 x f32>
    flamia.attn.store %acc max %m sum %l to %o, %lse rows(%qs, %rb, %qr) head %h tokens %t {fixed_scale = 8 : i64, sum_prescaled} : !flamia.frag<64x16xf32>, !flamia.rows<64 x f32>, !flamia.global<?x2x16xbf16>, !flamia.global<2x?xf32>
  }
  flamia.return
}
