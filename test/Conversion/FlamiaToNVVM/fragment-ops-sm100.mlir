// RUN: flamia-opt %s -split-input-file --convert-flamia-to-nvvm | FileCheck %s
// Per-op lowering of the fragment ops on sm_100a (one row per thread, element
// i in column i): frag.zero, rows.fill, frag.mask, softmax.update,
// frag.quantize (to bf16 and to E4M3 codes), frag.scale_rows and attn.store,
// one kernel each.

// A 128x8 f32 fragment is 8 f32 per thread (its whole row).
// CHECK-LABEL: llvm.func @sm_100a_frag_zero(
// CHECK: nvvm.setmaxregister  increase 240
// CHECK-COUNT-8: llvm.mlir.constant(0.000000e+00 : f32) : f32
// CHECK-NEXT: llvm.mlir.undef : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
// CHECK-COUNT-8: llvm.insertvalue
// CHECK-NOT: llvm.insertvalue
// CHECK: llvm.return
flamia.kernel @sm_100a_frag_zero() attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 128 : i64} {
  flamia.role "softmax" warpgroups[0, 1) registers 240 {
    %z = flamia.frag.zero : !flamia.frag<128x8xf32>
  }
  flamia.return
}

// -----

// One row value per thread.
// CHECK-LABEL: llvm.func @sm_100a_rows_fill(
// CHECK: %[[V:.*]] = llvm.mlir.constant(0xFF800000 : f32) : f32
// CHECK-NEXT: %[[U:.*]] = llvm.mlir.undef : !llvm.struct<(f32)>
// CHECK-NEXT: llvm.insertvalue %[[V]], %[[U]][0] : !llvm.struct<(f32)>
// CHECK-NOT: llvm.insertvalue
// CHECK: llvm.return
flamia.kernel @sm_100a_rows_fill() attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 128 : i64} {
  flamia.role "softmax" warpgroups[0, 1) registers 240 {
    %r = flamia.rows.fill 0xFF800000 : !flamia.rows<128 x f32>
  }
  flamia.return
}

// -----

// Causal: one bound per row, min(query + 1, limit) - key_base, against the
// constant column of each element.
// CHECK-LABEL: llvm.func @sm_100a_frag_mask_causal(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: i32, %[[K:[a-z0-9]+]]: i32, %[[LIM:[a-z0-9]+]]: i32)
// CHECK: nvvm.setmaxregister
// CHECK: %[[C128:.*]] = llvm.mlir.constant(128 : i32) : i32
// CHECK-NEXT: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK-NEXT: %[[ROW:.*]] = llvm.urem %[[TID]], %[[C128]] : i32
// CHECK: %[[NINF:.*]] = llvm.mlir.constant(0xFF800000 : f32) : f32
// CHECK-NEXT: %[[QR:.*]] = llvm.add %[[Q]], %[[ROW]] : i32
// CHECK-NEXT: %[[ONE:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: %[[NEXT:.*]] = llvm.add %[[QR]], %[[ONE]] : i32
// CHECK-NEXT: %[[LT:.*]] = llvm.icmp "slt" %[[NEXT]], %[[LIM]] : i32
// CHECK-NEXT: %[[BOUND:.*]] = llvm.select %[[LT]], %[[NEXT]], %[[LIM]] : i1, i32
// CHECK-NEXT: %[[FIRST:.*]] = llvm.sub %[[BOUND]], %[[K]] : i32
// CHECK-NEXT: %[[C0:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT: %[[M0:.*]] = llvm.icmp "sge" %[[C0]], %[[FIRST]] : i32
// CHECK-NEXT: llvm.select %[[M0]], %[[NINF]], %{{.*}} : i1, f32
// CHECK-NEXT: %[[C1:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: %[[M1:.*]] = llvm.icmp "sge" %[[C1]], %[[FIRST]] : i32
// CHECK-NEXT: llvm.select %[[M1]], %[[NINF]], %{{.*}} : i1, f32
// CHECK-COUNT-5: llvm.icmp "sge" %{{.*}}, %[[FIRST]] : i32
// CHECK-NEXT: llvm.select
// CHECK-NEXT: %[[C7:.*]] = llvm.mlir.constant(7 : i32) : i32
// CHECK-NEXT: %[[M7:.*]] = llvm.icmp "sge" %[[C7]], %[[FIRST]] : i32
// CHECK-NEXT: llvm.select %[[M7]], %[[NINF]], %{{.*}} : i1, f32
// CHECK-NOT: llvm.icmp "sge"
// No per-element key arithmetic, no shuffles.
// CHECK-NOT: llvm.or
// CHECK: llvm.return
flamia.kernel @sm_100a_frag_mask_causal(%q: i32 {flamia.param = "q"}, %k: i32 {flamia.param = "k"}, %lim: i32 {flamia.param = "lim"}) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 128 : i64} {
  flamia.role "softmax" warpgroups[0, 1) registers 240 {
    %z = flamia.frag.zero : !flamia.frag<128x8xf32>
    %m = flamia.frag.mask %z query %q key %k limit %lim {causal} : !flamia.frag<128x8xf32>
  }
  flamia.return
}

// -----

// Without `causal` the bound is limit - key_base.
// CHECK-LABEL: llvm.func @sm_100a_frag_mask(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: i32, %[[K:[a-z0-9]+]]: i32, %[[LIM:[a-z0-9]+]]: i32)
// CHECK: %[[NINF:.*]] = llvm.mlir.constant(0xFF800000 : f32) : f32
// CHECK-NEXT: %[[FIRST:.*]] = llvm.sub %[[LIM]], %[[K]] : i32
// CHECK-NOT: llvm.icmp "slt"
// CHECK-COUNT-8: llvm.icmp "sge" %{{.*}}, %[[FIRST]] : i32
// CHECK-NOT: llvm.icmp
// CHECK: llvm.return
flamia.kernel @sm_100a_frag_mask(%q: i32 {flamia.param = "q"}, %k: i32 {flamia.param = "k"}, %lim: i32 {flamia.param = "lim"}) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 128 : i64} {
  flamia.role "softmax" warpgroups[0, 1) registers 240 {
    %z = flamia.frag.zero : !flamia.frag<128x8xf32>
    %m = flamia.frag.mask %z query %q key %k limit %lim : !flamia.frag<128x8xf32>
  }
  flamia.return
}

// -----

// The thread holds the whole row: no shuffles; the new sum goes through the
// side-effecting `mov.b32` (pinned before the tensor-memory work).
// The maximum is of the raw scores, scaled once rounded up (mul.rp); each
// exponent is one FMA with -m'.
// CHECK-LABEL: llvm.func @sm_100a_softmax_update(
// CHECK-SAME: %[[SCALE:[a-z0-9]+]]: f32)
// CHECK-NOT: llvm.fmul
// CHECK: llvm.extractvalue %{{.*}}[7] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
// CHECK-NOT: llvm.fmul
// CHECK-NEXT: %[[NINF:.*]] = llvm.mlir.constant(0xFF800000 : f32) : f32
// CHECK-NEXT: llvm.intr.maxnum(%[[NINF]], %{{.*}})
// CHECK-COUNT-6: llvm.intr.maxnum
// CHECK-NEXT: %[[ROWMAX:.*]] = llvm.intr.maxnum
// CHECK: %[[OLDMAX:.*]] = llvm.extractvalue %{{.*}}[0] : !llvm.struct<(f32)>
// CHECK-NEXT: %[[OLDSUM:.*]] = llvm.extractvalue %{{.*}}[0] : !llvm.struct<(f32)>
// CHECK-NEXT: llvm.mlir.constant(0.000000e+00 : f32) : f32
// CHECK-NEXT: %[[UP:.*]] = llvm.call_intrinsic "llvm.nvvm.mul.rp.f"(%[[ROWMAX]], %[[SCALE]]) : (f32, f32) -> f32
// CHECK-NEXT: %[[NEWMAX:.*]] = llvm.intr.maxnum(%[[OLDMAX]], %[[UP]])
// CHECK-NEXT: %[[NEG:.*]] = llvm.fneg %[[NEWMAX]] : f32
// CHECK-NEXT: %[[D:.*]] = llvm.fsub %[[OLDMAX]], %[[NEWMAX]] : f32
// CHECK-NEXT: %[[ALPHA:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"(%[[D]])
// CHECK-COUNT-8: llvm.intr.fma(%{{.*}}, %[[SCALE]], %[[NEG]]) : (f32, f32, f32) -> f32{{[[:space:]]+}}{{.*}}llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"{{.*}}{{[[:space:]]+}}{{.*}}llvm.fadd
// CHECK-NEXT: %[[SCALED:.*]] = llvm.fmul %[[OLDSUM]], %[[ALPHA]] : f32
// CHECK-NEXT: %[[SUM:.*]] = llvm.fadd %[[SCALED]], %{{.*}} : f32
// CHECK-NEXT: llvm.inline_asm has_side_effects asm_dialect = att "mov.b32 $0, $1;", "=f,f" %[[SUM]] : (f32) -> f32
// CHECK-NOT: nvvm.shfl.sync
// CHECK-NOT: llvm.inline_asm
// CHECK: llvm.return
flamia.kernel @sm_100a_softmax_update(%scale: f32 {flamia.param = "scale"}) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 128 : i64} {
  flamia.role "softmax" warpgroups[0, 1) registers 240 {
    %s = flamia.frag.zero : !flamia.frag<128x8xf32>
    %m = flamia.rows.fill 0xFF800000 : !flamia.rows<128 x f32>
    %l = flamia.rows.fill 0.0 : !flamia.rows<128 x f32>
    %p, %m1, %l1, %a = flamia.softmax.update %s max %m sum %l scale %scale : !flamia.frag<128x8xf32>, !flamia.rows<128 x f32>
  }
  flamia.return
}

// -----

// To bf16 (the safe block and the quantized path in one MMA type): as on
// sm_90a, a branch on `quantized`, E4M3 and back, or bf16 directly.
// CHECK-LABEL: llvm.func @sm_100a_frag_quantize_bf16(
// CHECK: %[[Q:.*]] = llvm.icmp "ne"
// CHECK: %[[F:.*]] = llvm.mlir.constant(2.560000e+02 : f32) : f32
// CHECK-COUNT-8: llvm.fmul %{{.*}}, %[[F]] : f32
// CHECK-NEXT: llvm.cond_br %[[Q]], ^[[E4M3:bb[0-9]+]], ^[[BF16:bb[0-9]+]]
// CHECK: ^[[E4M3]]:
// CHECK-COUNT-4: nvvm.convert.f32x2.to.f8x2 {{.*}}{{[[:space:]]+}}{{.*}}nvvm.convert.f8x2.to.f16x2
// CHECK: nvvm.convert.f32x2.to.bf16x2
// CHECK-NEXT: llvm.bitcast %{{.*}} : vector<2xbf16> to i32
// CHECK-NEXT: llvm.mlir.undef : !llvm.struct<(i32, i32, i32, i32)>
// CHECK: ^[[BF16]]:
// CHECK-NOT: nvvm.convert.f32x2.to.f8x2
// CHECK-COUNT-4: nvvm.convert.f32x2.to.bf16x2
// CHECK-NEXT: llvm.bitcast
// CHECK-NEXT: llvm.mlir.undef : !llvm.struct<(i32, i32, i32, i32)>
// CHECK: llvm.return
flamia.kernel @sm_100a_frag_quantize_bf16(%flag: i32 {flamia.param = "flag"}) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 128 : i64} {
  flamia.role "softmax" warpgroups[0, 1) registers 240 {
    %p = flamia.frag.zero : !flamia.frag<128x8xf32>
    %c0 = arith.constant 0 : i32
    %q = arith.cmpi ne, %flag, %c0 : i32
    %b = flamia.frag.quantize %p quantized %q {precision = #flamia.precision<f8E4M3FN, fixed_scale = 8>} : !flamia.frag<128x8xf32> -> !flamia.frag<128x8xbf16>
  }
  flamia.return
}

// -----

// To E4M3 codes, four per register, the lower column in the low bits; no
// branch and no bf16.
// CHECK-LABEL: llvm.func @sm_100a_frag_quantize_e4m3(
// CHECK: %[[F:.*]] = llvm.mlir.constant(2.560000e+02 : f32) : f32
// CHECK-NEXT: %[[P0:.*]] = llvm.fmul %{{.*}}, %[[F]] : f32
// CHECK-NEXT: %[[P1:.*]] = llvm.fmul %{{.*}}, %[[F]] : f32
// CHECK-NEXT: %[[P2:.*]] = llvm.fmul %{{.*}}, %[[F]] : f32
// CHECK-NEXT: %[[P3:.*]] = llvm.fmul %{{.*}}, %[[F]] : f32
// CHECK-COUNT-4: llvm.fmul %{{.*}}, %[[F]] : f32
// CHECK-NEXT: %[[LO8:.*]] = nvvm.convert.f32x2.to.f8x2 %[[P1]], %[[P0]] {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : vector<2xi8>(f8E4M3FN)
// CHECK-NEXT: %[[LO16:.*]] = llvm.bitcast %[[LO8]] : vector<2xi8> to i16
// CHECK-NEXT: %[[LO:.*]] = llvm.zext %[[LO16]] : i16 to i32
// CHECK-NEXT: %[[HI8:.*]] = nvvm.convert.f32x2.to.f8x2 %[[P3]], %[[P2]]
// CHECK-NEXT: %[[HI16:.*]] = llvm.bitcast %[[HI8]] : vector<2xi8> to i16
// CHECK-NEXT: %[[HI:.*]] = llvm.zext %[[HI16]] : i16 to i32
// CHECK-NEXT: %[[C16:.*]] = llvm.mlir.constant(16 : i32) : i32
// CHECK-NEXT: %[[HISH:.*]] = llvm.shl %[[HI]], %[[C16]] : i32
// CHECK-NEXT: llvm.or %[[LO]], %[[HISH]] : i32
// CHECK-COUNT-2: nvvm.convert.f32x2.to.f8x2
// CHECK: llvm.or
// CHECK-NEXT: llvm.mlir.undef : !llvm.struct<(i32, i32)>
// CHECK-NOT: nvvm.convert
// CHECK-NOT: llvm.cond_br
// CHECK: llvm.return
flamia.kernel @sm_100a_frag_quantize_e4m3() attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 128 : i64} {
  flamia.role "softmax" warpgroups[0, 1) registers 240 {
    %p = flamia.frag.zero : !flamia.frag<128x8xf32>
    %true = arith.constant true
    %c = flamia.frag.quantize %p quantized %true {precision = #flamia.precision<f8E4M3FN, fixed_scale = 8>} : !flamia.frag<128x8xf32> -> !flamia.frag<128x8xf8E4M3FN>
  }
  flamia.return
}

// -----

// Every element of the row times the row's one factor.
// CHECK-LABEL: llvm.func @sm_100a_frag_scale_rows(
// CHECK: %[[F:.*]] = llvm.extractvalue %{{.*}}[0] : !llvm.struct<(f32)>
// CHECK-COUNT-8: llvm.fmul %{{.*}}, %[[F]] : f32
// CHECK-NEXT: llvm.mlir.undef : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
// CHECK-NOT: llvm.fmul
// CHECK: llvm.return
flamia.kernel @sm_100a_frag_scale_rows() attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 128 : i64} {
  flamia.role "softmax" warpgroups[0, 1) registers 240 {
    %acc = flamia.frag.zero : !flamia.frag<128x8xf32>
    %r = flamia.rows.fill 5.000000e-01 : !flamia.rows<128 x f32>
    %s = flamia.frag.scale_rows %acc by %r : !flamia.frag<128x8xf32>, !flamia.rows<128 x f32>
  }
  flamia.return
}

// -----

// Row tid % 128, when below q_rows: 16-byte stores of four bf16x2 words (8
// columns each), then the LSE by the same thread (no second branch).
// CHECK-LABEL: llvm.func @sm_100a_attn_store(
// CHECK-SAME: %[[O:[a-z0-9]+]]: !llvm.ptr<1>, %[[LSE:[a-z0-9]+]]: !llvm.ptr<1>, %{{.*}}: i32, %[[RB:[a-z0-9]+]]: i32, %[[QR:[a-z0-9]+]]: i32, %{{.*}}: i32, %{{.*}}: i32)
// CHECK: %[[OG:.*]] = llvm.addrspacecast %[[O]] : !llvm.ptr<1> to !llvm.ptr
// CHECK-NEXT: %[[LG:.*]] = llvm.addrspacecast %[[LSE]] : !llvm.ptr<1> to !llvm.ptr
// CHECK: nvvm.setmaxregister
// CHECK: %[[C128:.*]] = llvm.mlir.constant(128 : i32) : i32
// CHECK-NEXT: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK-NEXT: %[[ROW:.*]] = llvm.urem %[[TID]], %[[C128]] : i32
// CHECK-NEXT: llvm.mlir.constant(2.560000e+02 : f32) : f32
// CHECK-NEXT: %[[R:.*]] = llvm.add %[[RB]], %[[ROW]] : i32
// CHECK-NEXT: %[[V:.*]] = llvm.icmp "slt" %[[R]], %[[QR]] : i32
// CHECK: llvm.cond_br %[[V]], ^[[STORE:bb[0-9]+]], ^[[DONE:bb[0-9]+]]
// CHECK: ^[[STORE]]:
// CHECK: %[[ROWPTR:.*]] = llvm.getelementptr %[[OG]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK-NEXT: llvm.mlir.undef : vector<4xi32>
// CHECK-COUNT-4: nvvm.convert.f32x2.to.bf16x2{{.*}}{{[[:space:]]+}}{{.*}}llvm.bitcast{{.*}}{{[[:space:]]+}}{{.*}}llvm.insertelement
// CHECK-NEXT: %[[P0:.*]] = llvm.getelementptr %[[ROWPTR]][0] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK-NEXT: llvm.store %{{.*}}, %[[P0]] {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr
// CHECK-COUNT-4: llvm.insertelement
// CHECK-NEXT: %[[P1:.*]] = llvm.getelementptr %[[ROWPTR]][16] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK-NEXT: llvm.store %{{.*}}, %[[P1]] {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr
// CHECK-NEXT: llvm.mlir.constant(0.693147182 : f32) : f32
// CHECK-NEXT: llvm.call_intrinsic "llvm.nvvm.lg2.approx.f"
// CHECK: llvm.getelementptr %[[LG]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK-NEXT: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr
// CHECK-NEXT: llvm.br ^[[DONE]]
// CHECK-NOT: llvm.store
// CHECK: llvm.return
flamia.kernel @sm_100a_attn_store(%o: !flamia.global<?x2x16xbf16> {flamia.param = "o"}, %lse: !flamia.global<2x?xf32> {flamia.param = "lse"}, %qs: i32 {flamia.param = "q_start"}, %rb: i32 {flamia.param = "row_base"}, %qr: i32 {flamia.param = "q_rows"}, %h: i32 {flamia.param = "head"}, %t: i32 {flamia.param = "T"}) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 128 : i64} {
  flamia.role "softmax" warpgroups[0, 1) registers 240 {
    %acc = flamia.frag.zero : !flamia.frag<128x16xf32>
    %m = flamia.rows.fill 0xFF800000 : !flamia.rows<128 x f32>
    %l = flamia.rows.fill 1.0 : !flamia.rows<128 x f32>
    flamia.attn.store %acc max %m sum %l to %o, %lse rows(%qs, %rb, %qr) head %h tokens %t {fixed_scale = 8 : i64} : !flamia.frag<128x16xf32>, !flamia.rows<128 x f32>, !flamia.global<?x2x16xbf16>, !flamia.global<2x?xf32>
  }
  flamia.return
}
