// RUN: flamia-opt %s -split-input-file --convert-flamia-to-nvvm | FileCheck %s
// Per-op lowering of the sm_100a tensor-memory and tcgen05 ops (tmem.alloc,
// tmem.dealloc, tmem.load, tmem.store, tmem.fill, umma.scales, umma,
// umma.commit), and of the pipeline hand-offs with their tcgen05 fences on
// sm_100a and without them on sm_90a.

// The allocating warp (warp 4 * by_warpgroup) runs tcgen05.alloc into the
// shared slot and gives up the permit; fence / bar.sync / fence; every thread
// loads the base. The dealloc: fence / named barrier 15 of the role's 128
// threads / fence, then the role's first warp frees the columns.
// CHECK-LABEL: llvm.func @sm_100a_tmem_alloc(
// CHECK: %[[SMEM:.*]] = llvm.mlir.addressof @__flamia_dynamic_smem : !llvm.ptr<3>
// CHECK-NEXT: %[[SLOT:.*]] = llvm.getelementptr %[[SMEM]][0] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK-NEXT: %[[C32:.*]] = llvm.mlir.constant(32 : i32) : i32
// CHECK-NEXT: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK-NEXT: %[[WARP:.*]] = llvm.udiv %[[TID]], %[[C32]] : i32
// CHECK-NEXT: %[[W4:.*]] = llvm.mlir.constant(4 : i32) : i32
// CHECK-NEXT: %[[ISW:.*]] = llvm.icmp "eq" %[[WARP]], %[[W4]] : i32
// CHECK-NEXT: llvm.cond_br %[[ISW]], ^[[ALLOC:bb[0-9]+]], ^[[AFTER:bb[0-9]+]]
// CHECK: ^[[ALLOC]]:
// CHECK-NEXT: %[[COLS:.*]] = llvm.mlir.constant(256 : i32) : i32
// CHECK-NEXT: nvvm.tcgen05.alloc %[[SLOT]], %[[COLS]] : !llvm.ptr<3>, i32
// CHECK-NEXT: nvvm.tcgen05.relinquish_alloc_permit
// CHECK: ^[[AFTER]]:
// CHECK-NEXT: nvvm.tcgen05.fence <before>
// CHECK-NEXT: nvvm.barrier0
// CHECK-NEXT: nvvm.tcgen05.fence <after>
// CHECK-NEXT: %[[BASE:.*]] = llvm.load %[[SLOT]] {alignment = 4 : i64} : !llvm.ptr<3> -> i32
// CHECK: nvvm.setmaxregister  increase 240
// CHECK-NEXT: nvvm.tcgen05.fence <before>
// CHECK-NEXT: %[[N:.*]] = llvm.mlir.constant(128 : i32) : i32
// CHECK-NEXT: %[[ID:.*]] = llvm.mlir.constant(15 : i32) : i32
// CHECK-NEXT: nvvm.barrier id = %[[ID]] number_of_threads = %[[N]]
// CHECK-NEXT: nvvm.tcgen05.fence <after>
// CHECK: %[[WARPD:.*]] = llvm.udiv %{{.*}}, %{{.*}} : i32
// CHECK-NEXT: %[[W4D:.*]] = llvm.mlir.constant(4 : i32) : i32
// CHECK-NEXT: %[[FIRSTWARP:.*]] = llvm.icmp "eq" %[[WARPD]], %[[W4D]] : i32
// CHECK-NEXT: llvm.cond_br %[[FIRSTWARP]], ^[[FREE:bb[0-9]+]]
// CHECK: ^[[FREE]]:
// CHECK-NEXT: %[[DCOLS:.*]] = llvm.mlir.constant(256 : i32) : i32
// CHECK-NEXT: %[[PTR:.*]] = llvm.inttoptr %[[BASE]] : i32 to !llvm.ptr<6>
// CHECK-NEXT: nvvm.tcgen05.dealloc %[[PTR]], %[[DCOLS]] : !llvm.ptr<6>, i32
// CHECK: llvm.return
flamia.kernel @sm_100a_tmem_alloc() attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 256 : i64} {
  %t = flamia.tmem.alloc columns 256 by_warpgroup 1
  flamia.role "softmax" warpgroups[1, 2) registers 240 {
    flamia.tmem.dealloc %t columns 256
  }
  flamia.return
}

// -----

// A role of two warpgroups (the sm_100a backward's gradient role) frees the
// columns after a named barrier of all its 256 threads, by its first warp
// (warp 8 here) only.
// CHECK-LABEL: llvm.func @sm_100a_tmem_dealloc_two_warpgroups(
// CHECK: nvvm.setmaxregister  increase 176
// CHECK-NEXT: nvvm.tcgen05.fence <before>
// CHECK-NEXT: %[[N:.*]] = llvm.mlir.constant(256 : i32) : i32
// CHECK-NEXT: %[[ID:.*]] = llvm.mlir.constant(15 : i32) : i32
// CHECK-NEXT: nvvm.barrier id = %[[ID]] number_of_threads = %[[N]]
// CHECK-NEXT: nvvm.tcgen05.fence <after>
// CHECK: %[[WARP:.*]] = llvm.udiv %{{.*}}, %{{.*}} : i32
// CHECK-NEXT: %[[W8:.*]] = llvm.mlir.constant(8 : i32) : i32
// CHECK-NEXT: %[[FIRST:.*]] = llvm.icmp "eq" %[[WARP]], %[[W8]] : i32
// CHECK-NEXT: llvm.cond_br %[[FIRST]], ^[[FREE2:bb[0-9]+]]
// CHECK: ^[[FREE2]]:
// CHECK: nvvm.tcgen05.dealloc
// CHECK-NOT: nvvm.tcgen05.dealloc
// CHECK: llvm.return
flamia.kernel @sm_100a_tmem_dealloc_two_warpgroups() attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 512 : i64} {
  %t = flamia.tmem.alloc columns 512 by_warpgroup 2
  flamia.role "grad" warpgroups[2, 4) registers 176 {
    flamia.tmem.dealloc %t columns 512
  }
  flamia.return
}

// -----

// tcgen05.ld.32x32b at lane 32 (warp % 4) << 16 plus the column, at most 32
// columns per load (64 columns: two), then one wait::ld.
// CHECK-LABEL: llvm.func @sm_100a_tmem_load(
// CHECK-SAME: %[[BASE:[a-z0-9]+]]: i32)
// CHECK: %[[C4:.*]] = llvm.mlir.constant(4 : i32) : i32
// CHECK-NEXT: %[[C32:.*]] = llvm.mlir.constant(32 : i32) : i32
// CHECK-NEXT: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK-NEXT: %[[W:.*]] = llvm.udiv %[[TID]], %[[C32]] : i32
// CHECK-NEXT: %[[QUAD:.*]] = llvm.urem %[[W]], %[[C4]] : i32
// CHECK-NEXT: %[[C16:.*]] = llvm.mlir.constant(16 : i32) : i32
// CHECK-NEXT: %[[L32:.*]] = llvm.mlir.constant(32 : i32) : i32
// CHECK-NEXT: %[[LANE:.*]] = llvm.mul %[[QUAD]], %[[L32]] : i32
// CHECK-NEXT: %[[LANEHI:.*]] = llvm.shl %[[LANE]], %[[C16]] : i32
// CHECK-NEXT: %[[COL:.*]] = llvm.mlir.constant(64 : i32) : i32
// CHECK-NEXT: %[[B0:.*]] = llvm.add %[[BASE]], %[[LANEHI]] : i32
// CHECK-NEXT: %[[ADDR:.*]] = llvm.add %[[B0]], %[[COL]] : i32
// CHECK-NEXT: %[[Z:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT: %[[A0:.*]] = llvm.add %[[ADDR]], %[[Z]] : i32
// CHECK-NEXT: %[[P0:.*]] = llvm.inttoptr %[[A0]] : i32 to !llvm.ptr<6>
// CHECK-NEXT: nvvm.tcgen05.ld %[[P0]] {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<32xi32>
// CHECK-NEXT: %[[NEXT:.*]] = llvm.mlir.constant(32 : i32) : i32
// CHECK-NEXT: %[[A1:.*]] = llvm.add %[[ADDR]], %[[NEXT]] : i32
// CHECK-NEXT: %[[P1:.*]] = llvm.inttoptr %[[A1]] : i32 to !llvm.ptr<6>
// CHECK-NEXT: nvvm.tcgen05.ld %[[P1]] {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<32xi32>
// CHECK-NEXT: nvvm.tcgen05.wait <load>
// CHECK-COUNT-64: llvm.bitcast %{{.*}} : i32 to f32
// CHECK: llvm.mlir.undef : !llvm.struct<({{(f32, ){63}f}}32)>
// A narrow load is one tcgen05.ld of its width.
// CHECK: nvvm.tcgen05.ld %{{.*}} {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<8xi32>
// CHECK-NEXT: nvvm.tcgen05.wait <load>
// CHECK-NOT: nvvm.tcgen05.ld
// CHECK: llvm.return
flamia.kernel @sm_100a_tmem_load(%t: i32 {flamia.param = "tmem"}) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 128 : i64} {
  flamia.role "softmax" warpgroups[0, 1) registers 240 {
    %a = flamia.tmem.load %t[64] : !flamia.frag<128x64xf32>
    %b = flamia.tmem.load %t[8] : !flamia.frag<128x8xf32>
  }
  flamia.return
}

// -----

// tcgen05.st.32x32b of one word per column, then wait::st: f32 elements one
// per column, bf16 two and E4M3 four per column; tmem.fill stores its
// constant.
// CHECK-LABEL: llvm.func @sm_100a_tmem_store(
// CHECK-SAME: %[[T:[a-z0-9]+]]: i32)
// f32 128x8: 8 columns at column 16.
// CHECK: llvm.bitcast %{{.*}} : f32 to i32
// CHECK: llvm.mlir.undef : vector<8xi32>
// CHECK-COUNT-8: llvm.insertelement
// CHECK: %[[LANE:.*]] = llvm.shl
// CHECK-NEXT: %[[C16:.*]] = llvm.mlir.constant(16 : i32) : i32
// CHECK-NEXT: %[[A16:.*]] = llvm.add %[[T]], %[[LANE]] : i32
// CHECK-NEXT: llvm.add %[[A16]], %[[C16]] : i32
// CHECK-NEXT: llvm.inttoptr
// CHECK-NEXT: nvvm.tcgen05.st %{{.*}}, %{{.*}} {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<8xi32>
// CHECK-NEXT: nvvm.tcgen05.wait <store>
// bf16 128x16: 8 columns.
// CHECK: nvvm.convert.f32x2.to.bf16x2
// CHECK: llvm.mlir.undef : vector<8xi32>
// CHECK: nvvm.tcgen05.st %{{.*}}, %{{.*}} {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<8xi32>
// CHECK-NEXT: nvvm.tcgen05.wait <store>
// E4M3 128x16: 4 columns.
// CHECK: nvvm.convert.f32x2.to.f8x2
// CHECK: llvm.mlir.undef : vector<4xi32>
// CHECK: nvvm.tcgen05.st %{{.*}}, %{{.*}} {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<4xi32>
// CHECK-NEXT: nvvm.tcgen05.wait <store>
// Fill: the constant in each of 4 columns from 128.
// CHECK: %[[V:.*]] = llvm.mlir.constant(2139062143 : i32) : i32
// CHECK-NEXT: llvm.mlir.undef : vector<4xi32>
// CHECK-COUNT-4: llvm.insertelement %[[V]], %{{.*}}[%{{.*}} : i32] : vector<4xi32>
// CHECK: %[[FLANE:.*]] = llvm.shl
// CHECK-NEXT: %[[C128:.*]] = llvm.mlir.constant(128 : i32) : i32
// CHECK-NEXT: %[[F0:.*]] = llvm.add %[[T]], %[[FLANE]] : i32
// CHECK-NEXT: llvm.add %[[F0]], %[[C128]] : i32
// CHECK-NEXT: llvm.inttoptr
// CHECK-NEXT: nvvm.tcgen05.st %{{.*}}, %{{.*}} {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<4xi32>
// CHECK-NEXT: nvvm.tcgen05.wait <store>
// CHECK-NOT: nvvm.tcgen05.st
// CHECK: llvm.return
flamia.kernel @sm_100a_tmem_store(%t: i32 {flamia.param = "tmem"}) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 128 : i64} {
  flamia.role "softmax" warpgroups[0, 1) registers 240 {
    %f = flamia.frag.zero : !flamia.frag<128x8xf32>
    flamia.tmem.store %f, %t[16] : !flamia.frag<128x8xf32>
    %z = flamia.frag.zero : !flamia.frag<128x16xf32>
    %false = arith.constant false
    %b = flamia.frag.quantize %z quantized %false {precision = #flamia.precision<f8E4M3FN, fixed_scale = 8>} : !flamia.frag<128x16xf32> -> !flamia.frag<128x16xbf16>
    flamia.tmem.store %b, %t[32] : !flamia.frag<128x16xbf16>
    %true = arith.constant true
    %c = flamia.frag.quantize %z quantized %true {precision = #flamia.precision<f8E4M3FN, fixed_scale = 8>} : !flamia.frag<128x16xf32> -> !flamia.frag<128x16xf8E4M3FN>
    flamia.tmem.store %c, %t[48] : !flamia.frag<128x16xf8E4M3FN>
    flamia.tmem.fill %t[128] columns 4 value 2139062143
  }
  flamia.return
}

// -----

// bf16 from shared memory: K = 64 is four kind::f16 MMAs (D address, A and
// B descriptors, the instruction descriptor, enable-D: `accumulate` first,
// then true).
// CHECK-LABEL: llvm.func @sm_100a_umma(
// CHECK-SAME: %[[T:[a-z0-9]+]]: i32, %[[SA:[a-z0-9]+]]: i32, %[[SB:[a-z0-9]+]]: i32)
// CHECK: nvvm.setmaxregister  decrease 104
// CHECK: %[[ACC:.*]] = llvm.mlir.constant(false) : i1
// CHECK: %[[DCOL:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT: %[[DADDR:.*]] = llvm.add %[[T]], %[[DCOL]] : i32
// CHECK-NEXT: %[[D:.*]] = llvm.inttoptr %[[DADDR]] : i32 to !llvm.ptr<6>
// B: stage 1 of 2048-byte tiles.
// CHECK-NEXT: %[[BT:.*]] = llvm.mlir.constant(2048 : i32) : i32
// CHECK-NEXT: %[[BOFF:.*]] = llvm.mul %{{.*}}, %[[BT]] : i32
// CHECK-NEXT: %[[BPTR:.*]] = llvm.ptrtoint %{{.*}} : !llvm.ptr<3> to i32
// CHECK-NEXT: %[[BADDR:.*]] = llvm.add %[[BPTR]], %[[BOFF]] : i32
// CHECK: %[[AADDR:.*]] = llvm.add
// CHECK: llvm.lshr %[[BADDR]]
// CHECK: %[[BDESC:.*]] = llvm.add
// CHECK: llvm.lshr %[[AADDR]]
// CHECK: %[[ADESC:.*]] = llvm.add
// CHECK-NEXT: %[[IDESC:.*]] = llvm.mlir.constant(134481040 : i32) : i32
// CHECK-NEXT: nvvm.tcgen05.mma %[[D]], %[[ADESC]], %[[BDESC]], %[[IDESC]], %[[ACC]] {ctaGroup = #nvvm.cta_group<cta_1>, kind = #nvvm.tcgen05_mma_kind<f16>} : (!llvm.ptr<6>, i64, i64, i32, i1)
// CHECK: %[[ON:.*]] = llvm.mlir.constant(true) : i1
// CHECK-NEXT: llvm.mlir.constant(134481040 : i32) : i32
// CHECK-NEXT: nvvm.tcgen05.mma %[[D]], %{{.*}}, %{{.*}}, %{{.*}}, %[[ON]] {ctaGroup = #nvvm.cta_group<cta_1>, kind = #nvvm.tcgen05_mma_kind<f16>} : (!llvm.ptr<6>, i64, i64, i32, i1)
// CHECK-COUNT-2: nvvm.tcgen05.mma %[[D]], {{.*}} : (!llvm.ptr<6>, i64, i64, i32, i1)
// Scale factors: tcgen05.cp 32x128b.warpx4 to column 200.
// CHECK: %[[SFCOL:.*]] = llvm.mlir.constant(200 : i32) : i32
// CHECK-NEXT: %[[SFADDR:.*]] = llvm.add %[[T]], %[[SFCOL]] : i32
// CHECK-NEXT: %[[SF:.*]] = llvm.inttoptr %[[SFADDR]] : i32 to !llvm.ptr<6>
// CHECK-NEXT: nvvm.tcgen05.cp %[[SF]], %{{.*}} {multicast = #nvvm.tcgen05_cp_multicast<warpx4>, shape = #nvvm.tcgen05_cp_shape<shape_32x128b>}
// f8E4M3FN: block-scaled, K = 64 is two K-32 MMAs, the scale-factor ID (in
// the instruction descriptor) per K-block; scale_a and scale_b in order.
// CHECK: %[[D2ADDR:.*]] = llvm.add %[[T]], %{{.*}} : i32
// CHECK-NEXT: %[[D2:.*]] = llvm.inttoptr %[[D2ADDR]] : i32 to !llvm.ptr<6>
// CHECK: %[[ID0:.*]] = llvm.mlir.constant(142868480 : i32) : i32
// CHECK-DAG: %[[SAP:.*]] = llvm.inttoptr %[[SA]] : i32 to !llvm.ptr<6>
// CHECK-DAG: %[[SBP:.*]] = llvm.inttoptr %[[SB]] : i32 to !llvm.ptr<6>
// CHECK: nvvm.tcgen05.mma.block_scale %[[D2]], %{{.*}}, %{{.*}}, %[[ID0]], %{{.*}}, %[[SAP]], %[[SBP]] {blockScale = #nvvm.tcgen05_mma_block_scale<block32>, ctaGroup = #nvvm.cta_group<cta_1>, kind = #nvvm.block_scale_kind<mxf8f6f4>} : (!llvm.ptr<6>, i64, i64, i32, i1, !llvm.ptr<6>, !llvm.ptr<6>)
// CHECK: %[[ID1:.*]] = llvm.mlir.constant(679739408 : i32) : i32
// CHECK: nvvm.tcgen05.mma.block_scale %[[D2]], %{{.*}}, %{{.*}}, %[[ID1]], {{.*}} : (!llvm.ptr<6>, i64, i64, i32, i1, !llvm.ptr<6>, !llvm.ptr<6>)
// CHECK-NOT: nvvm.tcgen05.mma.block_scale
// A in tensor memory (P V): A is a TMEM address, a_column + 8 per k16 step.
// CHECK: %[[ACOL0:.*]] = llvm.mlir.constant(64 : i32) : i32
// CHECK-NEXT: %[[AT0:.*]] = llvm.add %[[T]], %[[ACOL0]] : i32
// CHECK-NEXT: %[[A0:.*]] = llvm.inttoptr %[[AT0]] : i32 to !llvm.ptr<6>
// CHECK-NEXT: llvm.mlir.constant(134546576 : i32) : i32
// CHECK-NEXT: nvvm.tcgen05.mma %{{.*}}, %[[A0]], %{{.*}} {ctaGroup = #nvvm.cta_group<cta_1>, kind = #nvvm.tcgen05_mma_kind<f16>} : (!llvm.ptr<6>, !llvm.ptr<6>, i64, i32, i1)
// CHECK: %[[ACOL1:.*]] = llvm.mlir.constant(72 : i32) : i32
// CHECK-NEXT: %[[AT1:.*]] = llvm.add %[[T]], %[[ACOL1]] : i32
// CHECK-NEXT: %[[A1:.*]] = llvm.inttoptr %[[AT1]] : i32 to !llvm.ptr<6>
// CHECK: nvvm.tcgen05.mma %{{.*}}, %[[A1]], %{{.*}} : (!llvm.ptr<6>, !llvm.ptr<6>, i64, i32, i1)
// CHECK-NOT: nvvm.tcgen05.mma
// CHECK: llvm.return
flamia.kernel @sm_100a_umma(%t: i32 {flamia.param = "tmem"}, %sa: i32 {flamia.param = "scale_a"}, %sb: i32 {flamia.param = "scale_b"}) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 128 : i64} {
  %q = flamia.smem.alloc : !flamia.smem<1x128x64xbf16>
  %k = flamia.smem.alloc : !flamia.smem<2x16x64xbf16>
  %qf = flamia.smem.alloc : !flamia.smem<1x128x64xf8E4M3FN>
  %kf = flamia.smem.alloc : !flamia.smem<1x16x64xf8E4M3FN>
  %v = flamia.smem.alloc : !flamia.smem<1x32x16xbf16>
  %sf = flamia.smem.alloc : !flamia.smem<1x8x64xi8>
  flamia.role "mma" warpgroups[0, 1) registers 104 single_thread {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %false = arith.constant false
    %true = arith.constant true
    flamia.umma %t[0] a %q[%c0] b %k[%c1] accumulate %false : (i32, !flamia.smem<1x128x64xbf16>, i32, !flamia.smem<2x16x64xbf16>, i32, i1) -> ()
    flamia.umma.scales %sf[%c0] -> %t[200] : !flamia.smem<1x8x64xi8>
    flamia.umma %t[16] a %qf[%c0] b %kf[%c0] accumulate %true scales(%sa, %sb) : (i32, !flamia.smem<1x128x64xf8E4M3FN>, i32, !flamia.smem<1x16x64xf8E4M3FN>, i32, i1, i32, i32) -> ()
    flamia.umma %t[32] b %v[%c0] accumulate %true {a_column = 64 : i64, a_type = bf16, b_transposed} : (i32, !flamia.smem<1x32x16xbf16>, i32, i1) -> ()
  }
  flamia.return
}

// -----

// k_valid (O = P V on a document's last key tile): K = 128 is four block-
// scaled K-32 steps; each step kk takes its own B
// descriptor and instruction descriptor (scale-factor ID kk) while
// kk <= last = max(min(ceil(k_valid / 32), 4) - 1, 0), else the last
// step's (with k_valid <= 0 step 0's, never a "step -1" outside the tile).
// A (P in TMEM) stays the step's own. No branch around the MMAs.
// CHECK-LABEL: llvm.func @sm_100a_umma_k_valid(
// CHECK-SAME: %[[T:[a-z0-9]+]]: i32, %[[SA:[a-z0-9]+]]: i32, %[[SB:[a-z0-9]+]]: i32, %[[KV:[a-z0-9]+]]: i32)
// CHECK: %[[C31:.*]] = llvm.mlir.constant(31 : i32) : i32
// CHECK-NEXT: %[[KV31:.*]] = llvm.add %[[KV]], %[[C31]] : i32
// CHECK-NEXT: %[[N:.*]] = llvm.udiv %[[KV31]], %{{.*}} : i32
// CHECK-NEXT: %[[LAST0:.*]] = llvm.sub %[[N]], %{{.*}} : i32
// CHECK: %[[LAST1:.*]] = llvm.select %{{.*}}, %[[LAST0]], %{{.*}} : i1, i32
// CHECK: %[[POS:.*]] = llvm.icmp "sgt" %[[LAST1]], %{{.*}} : i32
// CHECK-NEXT: %[[LAST:.*]] = llvm.select %[[POS]], %[[LAST1]], %{{.*}} : i1, i32
// The last step's descriptors: + last x 256 (32 rows of 128 bytes, >> 4)
// and + last x (1 << 29 | 1 << 4) (the two scale-factor IDs).
// CHECK: %[[LAST64:.*]] = llvm.zext %[[LAST]] : i32 to i64
// CHECK-NEXT: %[[BOFF:.*]] = llvm.mul %[[LAST64]], %{{.*}} : i64
// CHECK: %[[BLAST:.*]] = llvm.add %{{.*}}, %[[BOFF]] : i64
// CHECK: %[[IOFF:.*]] = llvm.mul %[[LAST]], %{{.*}} : i32
// CHECK: %[[ILAST:.*]] = llvm.add %{{.*}}, %[[IOFF]] : i32
// CHECK: %[[OWN0:.*]] = llvm.icmp "sge" %[[LAST]], %{{.*}} : i32
// CHECK: %[[B0:.*]] = llvm.select %[[OWN0]], %{{.*}}, %[[BLAST]] : i1, i64
// CHECK: %[[I0:.*]] = llvm.select %[[OWN0]], %{{.*}}, %[[ILAST]] : i1, i32
// CHECK: nvvm.tcgen05.mma.block_scale %{{.*}}, %{{.*}}, %[[B0]], %[[I0]],
// CHECK: %[[OWN1:.*]] = llvm.icmp "sge" %[[LAST]], %{{.*}} : i32
// CHECK: %[[B1:.*]] = llvm.select %[[OWN1]], %{{.*}}, %[[BLAST]] : i1, i64
// CHECK: %[[I1:.*]] = llvm.select %[[OWN1]], %{{.*}}, %[[ILAST]] : i1, i32
// CHECK: nvvm.tcgen05.mma.block_scale %{{.*}}, %{{.*}}, %[[B1]], %[[I1]],
// CHECK: %[[OWN2:.*]] = llvm.icmp "sge" %[[LAST]], %{{.*}} : i32
// CHECK: %[[B2:.*]] = llvm.select %[[OWN2]], %{{.*}}, %[[BLAST]] : i1, i64
// CHECK: %[[I2:.*]] = llvm.select %[[OWN2]], %{{.*}}, %[[ILAST]] : i1, i32
// CHECK: nvvm.tcgen05.mma.block_scale %{{.*}}, %{{.*}}, %[[B2]], %[[I2]],
// CHECK: %[[OWN3:.*]] = llvm.icmp "sge" %[[LAST]], %{{.*}} : i32
// CHECK: %[[B3:.*]] = llvm.select %[[OWN3]], %{{.*}}, %[[BLAST]] : i1, i64
// CHECK: %[[I3:.*]] = llvm.select %[[OWN3]], %{{.*}}, %[[ILAST]] : i1, i32
// CHECK: nvvm.tcgen05.mma.block_scale %{{.*}}, %{{.*}}, %[[B3]], %[[I3]],
// CHECK-NOT: nvvm.tcgen05.mma
// CHECK: llvm.return
flamia.kernel @sm_100a_umma_k_valid(%t: i32 {flamia.param = "tmem"}, %sa: i32 {flamia.param = "scale_a"}, %sb: i32 {flamia.param = "scale_b"}, %kv: i32 {flamia.param = "keys"}) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 128 : i64} {
  %v = flamia.smem.alloc : !flamia.smem<1x128x128xf8E4M3FN>
  flamia.role "mma" warpgroups[0, 1) registers 104 single_thread {
    %c0 = arith.constant 0 : i32
    %true = arith.constant true
    flamia.umma %t[256] b %v[%c0] accumulate %true scales(%sa, %sb) k_valid %kv {a_column = 384 : i64, a_type = f8E4M3FN, b_transposed} : (i32, !flamia.smem<1x128x128xf8E4M3FN>, i32, i1, i32, i32, i32) -> ()
  }
  flamia.return
}

// -----

// tcgen05.commit on the stage's full barrier (index stage) or empty barrier
// (index stages + stage), 8 bytes each. The role reads the shared-memory
// base itself (after its setmaxnreg, by an asm statement LLVM neither
// merges nor hoists) and rebuilds the pipeline's address from it: a base
// computed before the roles is a value ptxas would keep, or spill, across
// every role's setmaxnreg.
// CHECK-LABEL: llvm.func @sm_100a_umma_commit(
// CHECK-SAME: %[[S:[a-z0-9]+]]: i32)
// CHECK: nvvm.barrier0
// CHECK: nvvm.setmaxregister  decrease 104
// CHECK-NEXT: %[[ASM:.*]] = llvm.inline_asm has_side_effects asm_dialect = att "mov.u64 $0, __flamia_dynamic_smem; // role 0", "=l"  : () -> i64
// CHECK-NEXT: %[[BASE:.*]] = llvm.inttoptr %[[ASM]] : i64 to !llvm.ptr<3>
// CHECK-NEXT: %[[PIPE:.*]] = llvm.getelementptr %[[BASE]][0] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK-NOT: llvm.mlir.addressof
// CHECK: %[[C8:.*]] = llvm.mlir.constant(8 : i32) : i32
// CHECK-NEXT: %[[FOFF:.*]] = llvm.mul %[[S]], %[[C8]] : i32
// CHECK-NEXT: %[[FULL:.*]] = llvm.getelementptr %[[PIPE]][%[[FOFF]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK-NEXT: nvvm.tcgen05.commit %[[FULL]] : !llvm.ptr<3>
// CHECK-NEXT: %[[STAGES:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK-NEXT: %[[EIDX:.*]] = llvm.add %[[S]], %[[STAGES]] : i32
// CHECK-NEXT: %[[C8B:.*]] = llvm.mlir.constant(8 : i32) : i32
// CHECK-NEXT: %[[EOFF:.*]] = llvm.mul %[[EIDX]], %[[C8B]] : i32
// CHECK-NEXT: %[[EMPTY:.*]] = llvm.getelementptr %[[PIPE]][%[[EOFF]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK-NEXT: nvvm.tcgen05.commit %[[EMPTY]] : !llvm.ptr<3>
// CHECK-NOT: nvvm.tcgen05.commit
// CHECK: llvm.return
flamia.kernel @sm_100a_umma_commit(%s: i32 {flamia.param = "stage"}) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 128 : i64} {
  %pipe = flamia.pipeline.create consumers 1 : !flamia.pipeline<2>
  flamia.role "mma" warpgroups[0, 1) registers 104 single_thread {
    flamia.umma.commit full %pipe[%s] : !flamia.pipeline<2>
    flamia.umma.commit empty %pipe[%s] : !flamia.pipeline<2>
  }
  flamia.return
}

// -----

// sm_100a: an acquire (mbarrier wait) is followed by
// tcgen05.fence::after_thread_sync, a release or arrive preceded by
// tcgen05.fence::before_thread_sync. A consumer waits on full[it % S] with
// parity (it / S) & 1; a producer on empty[S + it % S] with the parity
// flipped.
// CHECK-LABEL: llvm.func @sm_100a_pipeline(
// CHECK-SAME: %[[IT:[a-z0-9]+]]: i32)
// CHECK: nvvm.setmaxregister
// CHECK-NEXT: llvm.inline_asm has_side_effects {{.*}}"mov.u64 $0, __flamia_dynamic_smem; // role 0"
// CHECK-NEXT: llvm.inttoptr
// CHECK-NEXT: llvm.getelementptr
// CHECK-NEXT: llvm.getelementptr
// CHECK-NEXT: %[[S2:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK-NEXT: %[[STAGE:.*]] = llvm.urem %[[IT]], %[[S2]] : i32
// CHECK-NEXT: %[[ONE:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: %[[LAP:.*]] = llvm.udiv %[[IT]], %[[S2]] : i32
// CHECK-NEXT: %[[PAR:.*]] = llvm.and %[[LAP]], %[[ONE]] : i32
// CHECK-NEXT: %[[C8:.*]] = llvm.mlir.constant(8 : i32) : i32
// CHECK-NEXT: %[[OFF:.*]] = llvm.mul %[[STAGE]], %[[C8]] : i32
// CHECK-NEXT: %[[FULL:.*]] = llvm.getelementptr %{{.*}}[%[[OFF]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK-NEXT: llvm.mlir.constant(10000000 : i32) : i32
// CHECK-NEXT: nvvm.mbarrier.try_wait.parity %[[FULL]], %[[PAR]], %{{.*}} : !llvm.ptr<3>, i32, i32
// CHECK-NEXT: nvvm.tcgen05.fence <after>
// Release: one arrival on empty[S + stage].
// CHECK-NEXT: nvvm.tcgen05.fence <before>
// CHECK-NEXT: %[[S2B:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK-NEXT: %[[EIDX:.*]] = llvm.add %[[STAGE]], %[[S2B]] : i32
// CHECK: nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<3> -> i64
// Producer acquire: parity ^ 1, then the fence.
// CHECK: %[[PPAR:.*]] = llvm.xor %{{.*}}, %{{.*}} : i32
// CHECK-NEXT: llvm.mlir.constant(10000000 : i32) : i32
// CHECK-NEXT: nvvm.mbarrier.try_wait.parity %{{.*}}, %[[PPAR]], %{{.*}} : !llvm.ptr<3>, i32, i32
// CHECK-NEXT: nvvm.tcgen05.fence <after>
// Arrive (a producer without TMA): the fence, then full[stage].
// CHECK-NEXT: nvvm.tcgen05.fence <before>
// CHECK: nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<3> -> i64
// CHECK-NOT: nvvm.tcgen05.fence
// CHECK: llvm.return
flamia.kernel @sm_100a_pipeline(%it: i32 {flamia.param = "it"}) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 128 : i64} {
  %pipe = flamia.pipeline.create consumers 128 : !flamia.pipeline<2>
  %pp = flamia.pipeline.create consumers 1 producers 128 : !flamia.pipeline<1>
  flamia.role "softmax" warpgroups[0, 1) registers 240 {
    %s = flamia.pipeline.acquire consumer %pipe[%it] : !flamia.pipeline<2>
    flamia.pipeline.release %pipe[%s] : !flamia.pipeline<2>
    %t = flamia.pipeline.acquire producer %pp[%it] : !flamia.pipeline<1>
    flamia.pipeline.arrive %pp[%t] : !flamia.pipeline<1>
  }
  flamia.return
}

// -----

// sm_90a: the same hand-offs without tcgen05 fences.
// CHECK-LABEL: llvm.func @sm_90a_pipeline(
// CHECK-NOT: nvvm.tcgen05
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-NOT: nvvm.tcgen05.fence
// CHECK: nvvm.mbarrier.arrive
// CHECK-NOT: nvvm.tcgen05.fence
// CHECK: llvm.xor
// CHECK-NEXT: llvm.mlir.constant(10000000 : i32) : i32
// CHECK-NEXT: nvvm.mbarrier.try_wait.parity
// CHECK-NOT: nvvm.tcgen05.fence
// CHECK: nvvm.mbarrier.arrive
// CHECK-NOT: nvvm.tcgen05
// CHECK: llvm.return
flamia.kernel @sm_90a_pipeline(%it: i32 {flamia.param = "it"}) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  %pipe = flamia.pipeline.create consumers 128 : !flamia.pipeline<2>
  %pp = flamia.pipeline.create consumers 1 producers 128 : !flamia.pipeline<1>
  flamia.role "softmax" warpgroups[0, 1) registers 240 {
    %s = flamia.pipeline.acquire consumer %pipe[%it] : !flamia.pipeline<2>
    flamia.pipeline.release %pipe[%s] : !flamia.pipeline<2>
    %t = flamia.pipeline.acquire producer %pp[%it] : !flamia.pipeline<1>
    flamia.pipeline.arrive %pp[%t] : !flamia.pipeline<1>
  }
  flamia.return
}
